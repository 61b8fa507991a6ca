"""The importer's fast path: a plain PGN game read, checked and indexed in one compiled pass.

Most games of a corpus are plain PGN: tags, move numbers, moves in Chinese notation (炮二平五, 前马退八)
or ICCS (h2e2), a few comments, a result. For those, :func:`fast_row` gives the ``games`` row and its
position-index rows without the general reader: the move texts are turned into small queries in
Python (cached per text, they do not depend on the position), then one Numba kernel (:func:`_replay`)
plays the whole main line, choosing the piece each query names, checking each move against the rules
with the engine's move generator (:mod:`xiangqi.engine.movegen`: ``gen_moves``, ``is_legal_move``,
``king_attacked``; no copy of the rules here) and writing the 64-bit key, the material signature and the
packed pieces of every position. What stays here is making the move and updating the key: the index
uses the database's stable Zobrist numbers (:mod:`xiangqi.db.keys`, fixed forever because stored keys
depend on them), not the engine's search table (``engine.tt.ZOB``, drawn from numpy's generator), and
the engine's make-move (``engine.search``) also updates the evaluation, which the import does not need.
The index data leaves as numpy arrays (:func:`index_arrays`), cheap to send from a worker process.

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
from xiangqi.db.columns import ECCO_RE, computed_ecco
from xiangqi.db.dates import normalise_date
from xiangqi.db.names import search_key
from xiangqi.engine._numba import njit
from xiangqi.engine.movegen import MAX_MOVES, gen_moves, is_legal_move, king_attacked

__all__ = ["fast_row", "replay_index", "index_arrays", "IX_FIELDS", "WIDTH", "ICCS_MOVES"]

KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, PAWN = range(1, 8)
_OP_PLAIN, _OP_QUALIFIED, _OP_ICCS = 0, 1, 2
_QUALIFIERS = {"front": 0, "middle": 1, "rear": 2}
_DIRECTIONS = {"+": 0, "-": 1, ".": 2}
_WIDTH = 40  # packed bytes per position (a legal position has at most 32 pieces)


def _tables():
    zob = np.zeros((15, 90), np.uint64)
    for code in _keys.PIECE_ORDER:
        zob[code + 7] = np.array(_keys.zobrist[code], dtype=np.uint64)
    group = np.full(15, -1, np.int64)  # piece code + 7 -> its place in keys.PIECE_ORDER
    for i, c in enumerate(_keys.PIECE_ORDER):
        group[c + 7] = i
    cap = np.array([_keys._MAX[abs(c) - 1] for c in _keys.PIECE_ORDER], np.int64)
    weight = np.array([_keys._WEIGHTS[c] for c in _keys.PIECE_ORDER], np.int64)
    return zob, group, cap, weight


_ZOB, _GROUP, _CAP, _WEIGHT = _tables()
_SIDE = np.uint64(_keys.BLACK_TO_MOVE)


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
def _replay(squares, red, ops, frm_out, to_out, keys, sigs, packed, counts_out, zob, side, group, cap,
            weight):
    """Play ``ops`` from ``squares`` (int8[90], changed in place) with ``red`` to move.

    ``ops[i]`` = (kind, a, b, c, d): kind 0 a plain Chinese move (piece type, file 1-9, direction
    0 forward / 1 back / 2 sideways, target), 1 a 前/中/后 move (piece type, qualifier 0 front /
    1 middle / 2 rear, direction, target), 2 an ICCS move (from, to). Fills the from/to squares of each
    move and, for every position 0..n, its key (uint64), material signature, packed pieces and piece
    count. Returns the number of moves played: less than ``len(ops)`` when move i fits no legal move
    or several (the reader then decides), -1 for a position the tables cannot pack.

    The rules are the engine's (:mod:`xiangqi.engine.movegen`, checked by perft against the core):
    each position's pseudo-legal moves are generated once and stamped into ``mark``, a candidate move
    is one of them and does not leave the mover's king attacked or facing the other king
    (``is_legal_move``). Making a move and updating the key stay here: the index's keys use the
    database's own stable Zobrist numbers (:mod:`xiangqi.db.keys`), not the engine's search table.
    """
    b = squares
    ks = np.full(2, -1, np.int64)  # king squares, Red then Black (the engine's layout)
    counts = np.zeros(14, np.int64)
    start = np.zeros(14, np.int64)
    buf = np.zeros(MAX_MOVES, np.int64)
    mark = np.zeros(90 * 128, np.int64)  # mark[frm << 7 | to] == ply + 1: pseudo-legal in this position
    k = np.uint64(0)
    for sq in range(90):
        c = b[sq]
        if c != 0:
            k ^= zob[c + 7, sq]
            counts[group[c + 7]] += 1
            if c == KING:
                ks[0] = sq
            elif c == -KING:
                ks[1] = sq
    if not red:
        k ^= side
    if ks[0] < 0 or ks[1] < 0:
        return 0  # no king: the reader reports it
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
        # the legal moves of this position, as marks
        us = 0 if red else 1
        stamp = ply + 1
        for i in range(gen_moves(b, us, buf, False)):
            mark[buf[i]] = stamp
        in_check = king_attacked(b, ks[us], us)
        # resolve move `ply`
        op = ops[ply, 0]
        found_frm = -1
        found_to = -1
        several = False
        if op == 2:
            frm = ops[ply, 1]
            to = ops[ply, 2]
            if mark[(frm << 7) | to] == stamp and is_legal_move(b, ks, us, (frm << 7) | to, in_check):
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
                    m = (frm << 7) | to
                    if mark[m] != stamp or not is_legal_move(b, ks, us, m, in_check):
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
            ks[0] = to
        elif c == -KING:
            ks[1] = to
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
    played = _replay(squares, board.turn, ops, frm, to, keys, sigs, packed, counts, _ZOB, _SIDE, _GROUP,
                     _CAP, _WEIGHT)
    return played, frm, to, keys.view(np.int64), sigs, packed, counts


def index_arrays(keys: np.ndarray, frm: np.ndarray, to: np.ndarray, sigs: np.ndarray, packed: np.ndarray,
                 counts: np.ndarray) -> tuple:
    """A game's position-index data as the importer's writer takes it (:data:`IX_FIELDS`), from the
    arrays of :func:`replay_index`: every ply's key and next move (``from * 90 + to``, -1 after the last),
    and one board per distinct position, at its first ply (material, key, packed pieces as rows of
    :data:`WIDTH` bytes of which the first ``count`` hold the squares). Numpy arrays, so that a game
    crosses from a worker process to the writer as a few buffers, not as a list of tuples per ply."""
    moves = np.empty(len(keys), np.int16)
    first = _first_plies(keys, frm, to, moves)  # a position repeated in the game is one board: its first ply
    return keys, moves, sigs[first], keys[first], packed[first], counts[first].astype(np.uint8)


@njit
def _first_plies(keys, frm, to, moves):
    """The plies (ascending) at which each distinct key of ``keys`` first occurs, and ``moves`` filled with
    each ply's next move (``from * 90 + to``, -1 after the last): what ``np.unique(…, return_index=True)``
    and a sort gave, without their fixed cost per game (a game has about 80 positions)."""
    n = keys.shape[0]
    out = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        k = keys[i]
        new = True
        for j in range(i):
            if keys[j] == k:
                new = False
                break
        if new:
            out[m] = i
            m += 1
    for i in range(n - 1):
        moves[i] = np.int16(frm[i] * 90 + to[i])
    moves[n - 1] = -1
    return out[:m]


#: The parts of :func:`index_arrays`' tuple.
IX_FIELDS = ("keys", "moves", "board_material", "board_keys", "board_pieces", "board_counts")
#: Bytes per packed position in the index arrays (a legal position has at most 32 pieces).
WIDTH = _WIDTH


# -- the Python side: tokens to queries, the row ------------------------------------------------------

_NUMBER_RE = re.compile(r"\d+\.+\Z")
_ICCS_RE = re.compile(r"[a-i][0-9][a-i][0-9]\Z")
_COMMENT_RE = re.compile(r"(\{[^}]*\}?)")
_AWKWARD_RE = re.compile(r"[()\[\];$}]")  # variations, NAGs, ; comments, stray brackets: the reader's
_NUMBER, _RESULT = b"", "r"  # a move number adds no op
_RESULT_TOKENS = frozenset((*RESULTS, "½-½"))
_TOKENS: dict[str, object] = {}
#: ICCS of a move code ``from * 90 + to``; ``ICCS_MOVES[-1]`` (the code -1: no next move) is None.
ICCS_MOVES: list[str | None] = [_board.SQUARE_NAMES[a] + _board.SQUARE_NAMES[b] for a in range(90)
                                for b in range(90)] + [None]
_ICCS_MOVES = ICCS_MOVES
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
    """``(ops, comments, result token or None, last token kind)`` of a plain move text, or None.

    ``ops``: the kernel's rows of the moves as bytes (:func:`_op`, joined). A move number's kind is
    ``b""`` (:data:`_NUMBER`), so the ops of a stretch of move text are the join of its tokens' kinds,
    looked up in the cache at C speed; only a stretch that holds a result token is walked token by token.
    """
    chunks: list[bytes] = []
    comments: list[str] = []
    result = None
    last = ""
    get = _TOKENS.get
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
        toks = part.split()
        if not _RESULT_TOKENS.isdisjoint(toks):
            for j, tok in enumerate(toks):
                if tok in _RESULT_TOKENS:
                    result = _token(tok)[1]
                    toks = toks[:j]
                    break
            if not toks:
                continue
        kinds = list(map(get, toks))
        if None in kinds:
            kinds = [_token(t) for t in toks]
            if None in kinds:
                return None
        chunks.append(b"".join(kinds))
        last = "move" if kinds[-1] else "number"
    return b"".join(chunks), comments, result, last


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


def fast_row(text: str, source: str, index: int, collection: str, last: bool, start) -> dict | None:
    """The ``games`` row of one PGN game text, with ``_pos`` and ``_boards`` (the index rows), or None
    when the reader must read it (see the module text).

    ``last``: the text ends its file (a text that stops without its result is then cut, the reader's
    rule); ``start``: :func:`xiangqi.db.importer._start` (the start board of a FEN tag, cached).
    """
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
    n_ops = len(ops) // 20  # five int32 a move
    played, frm, to, keys, sigs, packed, counts = replay_index(board, np.frombuffer(ops, np.int32)
                                                               .reshape(-1, 5))
    if played != n_ops:
        return None
    fl, tl = frm.tolist(), to.tolist()
    iccs = " ".join(map(_ICCS_MOVES.__getitem__, (frm.astype(np.int32) * 90 + to).tolist()))
    custom = start_fen != STARTING_BOARD_FEN or not board.turn
    res = h.get("Result", "*").strip()
    ecco = h.get("ECCO", "").strip()
    date_raw = h.get("Date", "").strip()
    event, black_name = h.get("Event", "").strip(), h.get("Black", "").strip()
    red_name = h.get("Red", "").strip() or h.get("White", "").strip()
    opening = h.get("Opening", "").strip()
    if h.get("Variation", "").strip():
        opening = f"{opening} {h['Variation'].strip()}".strip()
    ix = index_arrays(keys, frm, to, sigs, packed, counts)
    return {
        "hash": hashlib.sha1(f"{start_fen} {'w' if board.turn else 'b'}|{iccs}".encode()).hexdigest(),
        "collection": collection,
        "event": event,
        "site": h.get("Site", "").strip(),
        "round": h.get("Round", "").strip(),
        "date": normalise_date(date_raw),
        "date_raw": date_raw,
        "red": red_name,
        "black": black_name,
        "red_key": search_key(red_name),
        "black_key": search_key(black_name),
        "event_key": search_key(event),
        "result": res if res in RESULTS else ("1/2-1/2" if res == "½-½" else "*"),
        "ecco": ecco.upper() if ECCO_RE.match(ecco) else None,
        "ecco_computed": None if custom else _ecco(frm, to, fl, tl),
        "opening": opening,
        "headers": json.dumps(h, ensure_ascii=False),
        "fen": full_fen if custom else None,
        "moves": iccs,
        "plies": n_ops,
        "comments": "\n".join(comments),
        "source": source,
        "source_index": index,
        "_ix": ix,
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


@njit
def _keys_many(squares, red, frm, to, lens, keys, mkeys, zob, side, mirror_sq):
    m = 0  # first move of the game
    p = 0  # first position of the game
    for g in range(lens.shape[0]):
        n = lens[g]
        _keys_both(squares.copy(), red, frm[m:m + n], to[m:m + n], keys[p:p + n + 1], mkeys[p:p + n + 1], zob,
                   side, mirror_sq)
        m += n
        p += n + 1


def games_keys(board: Board, frm: np.ndarray, to: np.ndarray,
               lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`game_keys` of many games from the same start ``board`` in one kernel call: ``frm``/``to``
    hold their moves one game after the other, ``lens`` (int64) their lengths; the keys come the same way,
    ``lens[i] + 1`` positions per game."""
    total = int(lens.sum()) + len(lens)
    keys = np.zeros(total, np.uint64)
    mkeys = np.zeros(total, np.uint64)
    _keys_many(np.array(board.squares, np.int8), board.turn, frm, to, lens, keys, mkeys, _ZOB, _SIDE,
               _MIRROR_SQ)
    return keys.view(np.int64), mkeys.view(np.int64)
