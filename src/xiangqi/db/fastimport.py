"""The importer's fast path: a plain PGN game read, checked and indexed in one compiled pass.

Most games of a corpus are plain PGN: tags, move numbers, moves in Chinese notation (炮二平五, 前马退八)
or ICCS (h2e2), a few comments, a result. For those, :func:`fast_row` gives the ``games`` row and its
position-index rows without the general reader: the move texts are turned into small queries in
Python (cached per text, they do not depend on the position), then one Numba kernel (:func:`_replay`)
plays the whole main line, choosing the piece each query names, checking each move against the rules
(the piece's move, the king not left in check, kings not facing) and writing the 64-bit key, the
material signature and the packed pieces of every position.

Exactness: the fast path gives a game only when it gets the same answer as the reader
(:func:`xiangqi.core.pgn._parse_game_text` + :func:`xiangqi.db.importer.game_row`), and returns None
for everything else, which then goes through the reader: variations, NAGs and glyphs, a ``;`` comment,
an unterminated comment, a tag line the reader complains about, SAN, WXF, a move text that fits no
piece or two pieces, an illegal move, a text cut short. The kernel's piece choice is the reader's fast
rule (:func:`xiangqi.core.pgn._fast_chinese`: the one piece of that kind on that file whose move is
legal) and, for 前/中/后, the reader's ``_select`` with one query (the one legal move of the front,
middle or rear piece of a file holding two or three). A test compares both paths row by row
(``tests/db/test_fastimport.py``); on the whole corpus the import stores the same counts as the
reader alone did (28,230 games, 2,461,498 positions).

Cost: about 0.1 ms a game in Python around one kernel call, instead of about 2 ms through the reader;
the kernel compiles once (cached on disk with the engine's kernels, :mod:`xiangqi.engine._numba`).
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np

from xiangqi.core import board as _board
from xiangqi.core.board import STARTING_BOARD_FEN, Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import RESULTS, split_headers
from xiangqi.db import keys as _keys
from xiangqi.engine._numba import njit

__all__ = ["fast_row", "replay_index"]

KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, PAWN = range(1, 8)
_OP_PLAIN, _OP_QUALIFIED, _OP_ICCS = 0, 1, 2
_QUALIFIERS = {"front": 0, "middle": 1, "rear": 2}
_DIRECTIONS = {"+": 0, "-": 1, ".": 2}
_WIDTH = 40  # packed bytes per position (a legal position has at most 32 pieces)


def _tables():
    horse_leg = np.full((90, 90), -1, np.int16)
    eye = np.full((90, 90), -1, np.int16)
    advisor = np.zeros((90, 90), np.bool_)
    king = np.zeros((90, 90), np.bool_)
    pawn = np.zeros((2, 90, 90), np.bool_)
    rays = np.full((90, 4, 9), -1, np.int16)
    raylen = np.zeros((90, 4), np.int16)
    hatt = np.full((90, 8, 2), -1, np.int16)
    hattn = np.zeros(90, np.int16)
    for sq in range(90):
        for to, leg in _board.HORSE_MOVES[sq]:
            horse_leg[sq, to] = leg
        for to, e in _board.ELEPHANT_MOVES[sq]:
            eye[sq, to] = e
        for to in _board.ADVISOR_MOVES[sq]:
            advisor[sq, to] = True
        for to in _board.KING_MOVES[sq]:
            king[sq, to] = True
        for color in (True, False):
            for to in _board.PAWN_MOVES[color][sq]:
                pawn[1 if color else 0, sq, to] = True
        for d, ray in enumerate(_board.RAYS[sq]):
            raylen[sq, d] = len(ray)
            for i, x in enumerate(ray):
                rays[sq, d, i] = x
        for i, (frm, leg) in enumerate(_board.HORSE_ATTACKERS[sq]):
            hatt[sq, i, 0] = frm
            hatt[sq, i, 1] = leg
        hattn[sq] = len(_board.HORSE_ATTACKERS[sq])
    zob = np.zeros((15, 90), np.uint64)
    for code in _keys.PIECE_ORDER:
        zob[code + 7] = np.array(_keys.zobrist[code], dtype=np.uint64)
    order = np.array([c + 7 for c in _keys.PIECE_ORDER], np.int64)  # group index -> code + 7
    group = np.full(15, -1, np.int64)
    for i, c in enumerate(_keys.PIECE_ORDER):
        group[c + 7] = i
    cap = np.array([_keys._MAX[abs(c) - 1] for c in _keys.PIECE_ORDER], np.int64)
    weight = np.array([_keys._WEIGHTS[c] for c in _keys.PIECE_ORDER], np.int64)
    return horse_leg, eye, advisor, king, pawn, rays, raylen, hatt, hattn, zob, order, group, cap, weight


(_HORSE_LEG, _EYE, _ADVISOR_OK, _KING_OK, _PAWN_OK, _RAYS, _RAYLEN, _HATT, _HATTN, _ZOB, _ORDER, _GROUP,
 _CAP, _WEIGHT) = _tables()
_SIDE = np.uint64(_keys.BLACK_TO_MOVE)


@njit
def _pseudo_ok(b, frm, to, kind, red, horse_leg, eye, advisor, king, pawn):
    """The piece rules of one move (king safety aside): :func:`xiangqi.core.pgn._pseudo_ok`."""
    p = b[to]
    if p != 0 and (p > 0) == red:
        return False
    if kind == ROOK or kind == CANNON:
        if frm // 9 == to // 9:
            step = 1 if to > frm else -1
        elif frm % 9 == to % 9:
            step = 9 if to > frm else -9
        else:
            return False
        between = 0
        x = frm + step
        while x != to:
            if b[x] != 0:
                between += 1
            x += step
        if kind == ROOK:
            return between == 0
        return between == (1 if p != 0 else 0)
    if kind == HORSE:
        leg = horse_leg[frm, to]
        return leg >= 0 and b[leg] == 0
    if kind == ELEPHANT:
        e = eye[frm, to]
        return e >= 0 and b[e] == 0
    if kind == ADVISOR:
        return advisor[frm, to]
    if kind == KING:
        return king[frm, to]
    return pawn[1 if red else 0, frm, to]


@njit
def _attacked(b, k, red, rays, raylen, hatt, hattn):
    """True when the king of ``red``'s side on ``k`` is attacked or faces the other king
    (:meth:`xiangqi.core.board.Board._king_attacked`)."""
    sign = -1 if red else 1
    rook = ROOK * sign
    cannon = CANNON * sign
    eking = KING * sign
    for d in range(4):
        screened = False
        for i in range(raylen[k, d]):
            p = b[rays[k, d, i]]
            if p == 0:
                continue
            if not screened:
                if p == rook or p == eking:
                    return True
                screened = True
            else:
                if p == cannon:
                    return True
                break
    horse = HORSE * sign
    for i in range(hattn[k]):
        if b[hatt[k, i, 0]] == horse and b[hatt[k, i, 1]] == 0:
            return True
    pawn = PAWN * sign
    front = k + 9 if red else k - 9
    if 0 <= front < 90 and b[front] == pawn:
        return True
    f = k % 9
    if f > 0 and b[k - 1] == pawn:
        return True
    if f < 8 and b[k + 1] == pawn:
        return True
    return False


@njit
def _safe(b, frm, to, red, kings, rays, raylen, hatt, hattn):
    """True when playing ``frm`` -> ``to`` does not leave the mover's king attacked."""
    code = b[frm]
    captured = b[to]
    b[to] = code
    b[frm] = 0
    k = to if abs(code) == KING else kings[1 if red else 0]
    ok = not _attacked(b, k, red, rays, raylen, hatt, hattn)
    b[frm] = code
    b[to] = captured
    return ok


@njit
def _target(frm, kind, column, direction, target, red):
    """The square a piece of ``kind`` on ``frm`` reaches by ``direction``/``target`` (-1: none), the
    geometry of :func:`xiangqi.core.pgn._fast_chinese`."""
    rank = frm // 9
    diagonal = kind == HORSE or kind == ELEPHANT or kind == ADVISOR
    if direction == 2:  # sideways
        if diagonal:
            return -1
        return rank * 9 + (9 - target if red else target - 1)
    up = (direction == 0) == red
    if diagonal:
        tcol = 9 - target if red else target - 1
        dx = abs(tcol - column)
        if dx == 0 or dx > 2:
            return -1
        if kind == ELEPHANT and dx != 2:
            return -1
        if kind == ADVISOR and dx != 1:
            return -1
        dy = 3 - dx if kind == HORSE else (2 if kind == ELEPHANT else 1)
        trank = rank + dy if up else rank - dy
        if trank < 0 or trank > 9:
            return -1
        return trank * 9 + tcol
    trank = rank + target if up else rank - target
    if trank < 0 or trank > 9:
        return -1
    return trank * 9 + column


@njit
def _replay(squares, red, ops, frm_out, to_out, keys, sigs, packed, counts_out,
            horse_leg, eye, advisor, king, pawn, rays, raylen, hatt, hattn, zob, side, order, group, cap,
            weight):
    """Play ``ops`` from ``squares`` (int8[90], changed in place) with ``red`` to move.

    ``ops[i]`` = (kind, a, b, c, d): kind 0 a plain Chinese move (piece type, file 1-9, direction
    0 forward / 1 back / 2 sideways, target), 1 a 前/中/后 move (piece type, qualifier 0 front /
    1 middle / 2 rear, direction, target), 2 an ICCS move (from, to). Fills the from/to squares of each
    move and, for every position 0..n, its key (uint64), material signature, packed pieces and piece
    count. Returns the number of moves played: less than ``len(ops)`` when move i fits no legal move
    or several (the reader then decides), -1 for a position the tables cannot pack.
    """
    b = squares
    kings = np.full(2, -1, np.int64)
    counts = np.zeros(14, np.int64)
    start = np.zeros(14, np.int64)
    k = np.uint64(0)
    for sq in range(90):
        c = b[sq]
        if c != 0:
            k ^= zob[c + 7, sq]
            counts[group[c + 7]] += 1
            if c == KING:
                kings[1] = sq
            elif c == -KING:
                kings[0] = sq
    if not red:
        k ^= side
    n = ops.shape[0]
    ply = 0
    while True:
        # the position before move `ply`: key, signature, packed pieces
        keys[ply] = k
        sig = 0
        total = 0
        for g in range(14):
            m = counts[g]
            total += m
            sig += (m if m < cap[g] else cap[g]) * weight[g]
        sigs[ply] = sig * 2 + (1 if red else 0)
        if total > packed.shape[1]:
            return -1
        counts_out[ply] = total
        acc = 0
        for g in range(14):
            start[g] = acc
            acc += counts[g]
        for sq in range(90):
            c = b[sq]
            if c != 0:
                g = group[c + 7]
                packed[ply, start[g]] = sq
                start[g] += 1
        if ply == n:
            return n
        # resolve move `ply`
        op = ops[ply, 0]
        found_frm = -1
        found_to = -1
        several = False
        if op == 2:
            frm = ops[ply, 1]
            to = ops[ply, 2]
            c = b[frm]
            if c != 0 and (c > 0) == red and _pseudo_ok(b, frm, to, abs(c), red, horse_leg, eye, advisor,
                                                      king, pawn) \
                    and _safe(b, frm, to, red, kings, rays, raylen, hatt, hattn):
                found_frm = frm
                found_to = to
        else:
            kind = ops[ply, 1]
            want = kind if red else -kind
            direction = ops[ply, 3]
            target = ops[ply, 4]
            if op == 0:
                column = 9 - ops[ply, 2] if red else ops[ply, 2] - 1
                lo = column
                hi = column + 1
            else:
                lo = 0
                hi = 9
            for col in range(lo, hi):
                stack = 0
                if op == 1:
                    for r in range(10):
                        if b[r * 9 + col] == want:
                            stack += 1
                    if stack < 2 or (ops[ply, 2] == 1 and stack != 3):
                        continue
                index = 0  # place in the file's stack, front (most advanced) first
                for i in range(10):
                    r = 9 - i if red else i
                    frm = r * 9 + col
                    if b[frm] != want:
                        continue
                    here = index
                    index += 1
                    if op == 1:
                        q = ops[ply, 2]
                        if (q == 0 and here != 0) or (q == 1 and here != 1) or (q == 2 and here != stack - 1):
                            continue
                    to = _target(frm, kind, col, direction, target, red)
                    if to < 0 or to == frm:
                        continue
                    if not _pseudo_ok(b, frm, to, kind, red, horse_leg, eye, advisor, king, pawn):
                        continue
                    if not _safe(b, frm, to, red, kings, rays, raylen, hatt, hattn):
                        continue
                    if found_frm >= 0:
                        several = True
                    found_frm = frm
                    found_to = to
        if found_frm < 0 or several:
            return ply
        frm = found_frm
        to = found_to
        c = b[frm]
        cp = b[to]
        k ^= zob[c + 7, frm] ^ zob[c + 7, to] ^ side
        if cp != 0:
            k ^= zob[cp + 7, to]
            counts[group[cp + 7]] -= 1
        b[to] = c
        b[frm] = 0
        if c == KING:
            kings[1] = to
        elif c == -KING:
            kings[0] = to
        frm_out[ply] = frm
        to_out[ply] = to
        red = not red
        ply += 1


def replay_index(board: Board, ops: np.ndarray):
    """Run the kernel on ``ops`` (int32[n, 5], see :func:`_replay`) from ``board`` (not changed).

    Returns ``(played, frm, to, keys, sigs, packed, counts)``: numpy arrays as :func:`_replay` fills
    them (``keys`` as signed int64, the form the database stores).
    """
    n = len(ops)
    squares = np.array(board.squares, np.int8)
    frm = np.zeros(n, np.int16)
    to = np.zeros(n, np.int16)
    keys = np.zeros(n + 1, np.uint64)
    sigs = np.zeros(n + 1, np.int64)
    packed = np.zeros((n + 1, _WIDTH), np.uint8)
    counts = np.zeros(n + 1, np.int16)
    played = _replay(squares, board.turn, ops, frm, to, keys, sigs, packed, counts, _HORSE_LEG, _EYE,
                     _ADVISOR_OK, _KING_OK, _PAWN_OK, _RAYS, _RAYLEN, _HATT, _HATTN, _ZOB, _SIDE, _ORDER,
                     _GROUP, _CAP, _WEIGHT)
    return played, frm, to, keys.view(np.int64), sigs, packed, counts


# -- the Python side: tokens to queries, the row ------------------------------------------------------

_NUMBER_RE = re.compile(r"\d+\.+\Z")
_ICCS_RE = re.compile(r"[a-i][0-9][a-i][0-9]\Z")
_COMMENT_RE = re.compile(r"(\{[^}]*\}?)")
_AWKWARD_RE = re.compile(r"[()\[\];$}]")  # variations, NAGs, ; comments, stray brackets: the reader's
_NUMBER, _RESULT = "n", "r"
_TOKENS: dict[str, object] = {}
_ICCS_MOVES = [_board.SQUARE_NAMES[a] + _board.SQUARE_NAMES[b] for a in range(90) for b in range(90)]
_MOVES: dict[int, Move] = {}


def _move(frm: int, to: int) -> Move:
    m = _MOVES.get(frm * 90 + to)
    if m is None:
        m = _MOVES[frm * 90 + to] = Move(frm, to)
    return m


def _op(*fields: int) -> bytes:
    """One row of the kernel's ``ops`` table as the bytes of five int32 (the rows of a game are joined)."""
    return np.array(fields, np.int32).tobytes()


def _classify(tok: str) -> object:
    """What a move-text token is: ``_NUMBER``, ``(_RESULT, result)``, an op (:func:`_op` bytes), or None
    (the reader's)."""
    if _NUMBER_RE.match(tok):
        return _NUMBER
    if tok in RESULTS or tok == "½-½":
        return (_RESULT, "1/2-1/2" if tok == "½-½" else tok)
    if _ICCS_RE.match(tok):
        from xiangqi.core.notation import detect_notation

        try:
            if detect_notation(tok) != "iccs":
                return None
        except XiangqiError:
            return None
        a, b = Move.from_iccs(tok).from_square, Move.from_iccs(tok).to_square
        return _op(_OP_ICCS, a, b, 0, 0)
    if tok[:1] > "\u2e7f":
        from xiangqi.core.notation import _chinese_queries

        try:
            queries = _chinese_queries(tok)
        except XiangqiError:
            return None
        if len(queries) != 1:
            return None
        q = queries[0]
        if q.piece_type is None or q.direction not in _DIRECTIONS:
            return None
        if q.qualifier is None and q.file is not None and 1 <= q.file <= 9:
            return _op(_OP_PLAIN, q.piece_type, q.file, _DIRECTIONS[q.direction], q.target)
        if q.file is None and q.qualifier in _QUALIFIERS:
            return _op(_OP_QUALIFIED, q.piece_type, _QUALIFIERS[q.qualifier], _DIRECTIONS[q.direction],
                       q.target)
    return None


def _token(tok: str) -> object:
    try:
        return _TOKENS[tok]
    except KeyError:
        kind = _classify(tok)
        if len(_TOKENS) < 200_000:
            _TOKENS[tok] = kind
        return kind


def _scan(movetext: str):
    """``(ops, comments, result token or None, last token kind)`` of a plain move text, or None."""
    ops: list[bytes] = []
    comments: list[str] = []
    result = None
    last = ""
    for i, part in enumerate(_COMMENT_RE.split(movetext)):
        if i % 2:  # a comment
            if not part.endswith("}"):
                return None  # unterminated: the reader reports it
            c = part[1:-1].strip()
            if c:
                comments.append(c)
            continue
        if result is not None or not part or part.isspace():
            continue  # after the result the reader keeps comments only
        if _AWKWARD_RE.search(part):
            return None
        for tok in part.split():
            kind = _token(tok)
            if kind is None:
                return None
            if kind.__class__ is bytes:
                ops.append(kind)
                last = "move"
            elif kind is _NUMBER:
                last = "number"
            else:
                result = kind[1]
                break
    return ops, comments, result, last


_ECCO_CACHE: dict[bytes, str | None] = {}


def _ecco(frm: np.ndarray, to: np.ndarray, fl: list[int], tl: list[int]) -> str | None:
    """The computed ECCO code of a main line from the standard start, cached by its first
    :data:`xiangqi.study.ecco.WINDOW` moves (all the classifier reads)."""
    from xiangqi.study.ecco import WINDOW

    key = frm[:WINDOW].tobytes() + to[:WINDOW].tobytes()
    try:
        return _ECCO_CACHE[key]
    except KeyError:
        pass
    code = computed_ecco([_move(a, b) for a, b in zip(fl[:WINDOW], tl[:WINDOW], strict=True)])
    if len(_ECCO_CACHE) < 100_000:
        _ECCO_CACHE[key] = code
    return code


def _importer():
    global _ECCO_RE, computed_ecco, normalise_date
    from xiangqi.db.importer import _ECCO_RE, computed_ecco, normalise_date


_ECCO_RE = computed_ecco = normalise_date = None  # from xiangqi.db.importer on first use (it imports us)


def fast_row(text: str, source: str, index: int, collection: str, last: bool, start) -> dict | None:
    """The ``games`` row of one PGN game text, with ``_pos`` and ``_boards`` (the index rows), or None
    when the reader must read it (see the module text).

    ``last``: the text ends its file (a text that stops without its result is then cut, the reader's
    rule); ``start``: :func:`xiangqi.db.importer._start` (the start board of a FEN tag, cached).
    """
    if _ECCO_RE is None:
        _importer()
    headers, at, errors = split_headers(text)
    if errors:
        return None
    fmt = headers.get("Format", "").strip().lower()
    if fmt not in ("", "chinese", "iccs") or headers.get("Variant", "").strip():
        return None
    movetext = text[at:]
    if "\r" in movetext:
        movetext = movetext.replace("\r\n", "\n").replace("\r", "\n")
    scanned = _scan(movetext)
    if scanned is None:
        return None
    ops, comments, result, last_kind = scanned
    if not ops:
        return None
    h = {"Game": "Chinese Chess"} if "Game" not in headers else {}
    h.update(headers)
    if result is None:
        if last_kind == "number":
            return None  # cut on a move number: the reader reports it
        if last and h.get("Result", "*") in RESULTS[:3]:
            return None  # cut before the result the tag gives
    elif h.get("Result", "*") in ("", "*"):
        h["Result"] = result
    for tag in ("Event", "Date", "Red", "Black"):
        h.setdefault(tag, "")
    h.setdefault("Result", "*")
    try:
        board, start_fen, full_fen = start(h.get("FEN", "").strip())
    except XiangqiError:
        return None
    played, frm, to, keys, sigs, packed, counts = replay_index(board, np.frombuffer(b"".join(ops), np.int32)
                                                               .reshape(-1, 5))
    if played != len(ops):
        return None
    fl, tl = frm.tolist(), to.tolist()
    iccs_list = list(map(_ICCS_MOVES.__getitem__, (frm.astype(np.int32) * 90 + to).tolist()))
    iccs = " ".join(iccs_list)
    custom = start_fen != STARTING_BOARD_FEN or not board.turn
    res = h.get("Result", "*").strip()
    ecco = h.get("ECCO", "").strip()
    date_raw = h.get("Date", "").strip()
    opening = h.get("Opening", "").strip()
    if h.get("Variation", "").strip():
        opening = f"{opening} {h['Variation'].strip()}".strip()
    key_list = keys.tolist()
    iccs_list.append(None)
    pos = list(zip(key_list, range(len(key_list)), iccs_list, strict=True))
    first: dict[int, int] = {}
    for i, k in enumerate(key_list):
        first.setdefault(k, i)  # a position repeated in the game is one board
    sig_list = sigs.tolist()
    count_list = counts.tolist()
    blob = packed.tobytes()
    w = _WIDTH
    brd = [(sig_list[i], k, blob[i * w:i * w + count_list[i]]) for k, i in first.items()]
    return {
        "hash": hashlib.sha1(f"{start_fen} {'w' if board.turn else 'b'}|{iccs}".encode()).hexdigest(),
        "collection": collection,
        "event": h.get("Event", "").strip(),
        "site": h.get("Site", "").strip(),
        "round": h.get("Round", "").strip(),
        "date": normalise_date(date_raw),
        "date_raw": date_raw,
        "red": h.get("Red", "").strip() or h.get("White", "").strip(),
        "black": h.get("Black", "").strip(),
        "result": res if res in RESULTS else ("1/2-1/2" if res == "½-½" else "*"),
        "ecco": ecco.upper() if _ECCO_RE.match(ecco) else None,
        "ecco_computed": None if custom else _ecco(frm, to, fl, tl),
        "opening": opening,
        "headers": json.dumps(h, ensure_ascii=False),
        "fen": full_fen if custom else None,
        "moves": iccs,
        "plies": len(ops),
        "comments": "\n".join(comments),
        "source": source,
        "source_index": index,
        "_pos": pos,
        "_boards": brd,
    }


# -- the keys of a stored game and of its mirror, for the explorer's aggregates (xiangqi.db.aggregate) --

_MIRROR_SQ = np.array([(s // 9) * 9 + 8 - s % 9 for s in range(90)], np.int64)


@njit
def _keys_both(squares, red, frm, to, keys, mkeys, zob, side, mirror_sq):
    b = squares
    k = np.uint64(0)
    mk = np.uint64(0)
    for sq in range(90):
        c = b[sq]
        if c != 0:
            k ^= zob[c + 7, sq]
            mk ^= zob[c + 7, mirror_sq[sq]]
    if not red:
        k ^= side
        mk ^= side
    keys[0] = k
    mkeys[0] = mk
    for i in range(frm.shape[0]):
        f = frm[i]
        t = to[i]
        c = b[f]
        cp = b[t]
        k ^= zob[c + 7, f] ^ zob[c + 7, t] ^ side
        mk ^= zob[c + 7, mirror_sq[f]] ^ zob[c + 7, mirror_sq[t]] ^ side
        if cp != 0:
            k ^= zob[cp + 7, t]
            mk ^= zob[cp + 7, mirror_sq[t]]
        b[t] = c
        b[f] = 0
        keys[i + 1] = k
        mkeys[i + 1] = mk


def game_keys(board: Board, frm: np.ndarray, to: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, mirror keys)`` (signed int64, plies 0..n) of the game ``frm``/``to`` (int16 squares of
    moves known legal) from ``board``: the position index's keys and those of the mirrored positions."""
    n = len(frm)
    keys = np.zeros(n + 1, np.uint64)
    mkeys = np.zeros(n + 1, np.uint64)
    _keys_both(np.array(board.squares, np.int8), board.turn, frm, to, keys, mkeys, _ZOB, _SIDE, _MIRROR_SQ)
    return keys.view(np.int64), mkeys.view(np.int64)
