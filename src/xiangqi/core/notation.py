"""Move notation: Chinese (中文纵线 / 四字记谱法), WXF and ICCS, move ⇄ text.

Conventions (FORMATS.md §3–§5, RULES.md):

* Files are counted 1–9 from the mover's own right: Red's file n is column
  ``9 - n`` (a = 九 … i = 一), Black's file n is column ``n - 1`` (a = 1 … i = 9).
* Chinese: piece, from-file, direction (进 forward, 退 back, 平 sideways), then the
  target file (平, and 进/退 of the diagonal movers 马 相 仕) or the number of steps
  (进/退 of 车 炮 兵 帅). Red numbers are Chinese numerals 一…九, Black numbers are
  digits (ASCII by default, full-width １…９ as 象棋巫师 writes them on request).
* Two pieces of one kind on a file (tandem): 前/后 replace the file and go first
  (前炮退二); advisors and elephants never take 前/后 because the direction tells
  them apart (R8).
* Tandem pawns (xqbase 规范, World Xiangqi Rules 2018): on one file only, 2 → 前/后,
  3 → 前/中/后, 4–5 → 前/二/三/四/五, followed by the piece name (中兵进一). When two or more
  files each hold ≥2 pawns we write the position and the file and drop the piece name
  (前七进一, 后三平四, 二7平6; R7's "old" form, documented in python-chinese-chess). Reading
  also accepts xqbase's "new" form, which numbers all stacked pawns right to left, front first
  (三兵进一 = the third of them, R7), 一 for 前, 后 for the last of 4–5, and 前兵七进一.
* WXF: letters K A E H R C P, file digit 1–9 for both sides, ``+`` forward, ``-``
  backward, ``.`` sideways (``=`` or nothing also read). Tandems replace the file by
  ``+``/``-`` (``R+.3``). Pawns: 2 on one file → ``P+``/``P-``; 3 or more on a file,
  or ≥2 on two files → the numbered form ``<index><file>`` counted from the front
  (``15=6``, ``26.5``; Fairy-Stockfish issue 395, World Xiangqi Rules 2018; R3, R4).
  Reading also accepts the WXF page's forms (``++`` ``P+`` ``P3`` ``P-`` ``--``,
  file-first ``3+.4``), sign-first ``+P+1``, FEN letters B/N and the letters G/M,
  and full-width text (NFKC-normalised).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xiangqi.core.errors import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, XiangqiError, excerpt
from xiangqi.core.pieces import (
    ADVISOR,
    CANNON,
    COLOR_NAMES,
    ELEPHANT,
    HORSE,
    KING,
    PAWN,
    RED,
    ROOK,
    TYPE_NAMES,
    Color,
    Move,
    _move_text,
)
from xiangqi.core.san import move_to_san

if TYPE_CHECKING:
    # The functions work on the board they are given; the board module imports this one.
    from xiangqi.core.board import Board

__all__ = [
    "move_to_chinese",
    "move_to_wxf",
    "move_to_text",
    "moves_to_chinese",
    "parse_move",
    "parse_chinese",
    "parse_wxf",
    "parse_iccs",
    "file_number",
]

_CN_NUMERALS = "一二三四五六七八九"
_FULLWIDTH_DIGITS = "１２３４５６７８９"

# Output glyphs: piece type -> (red, black), simplified and traditional (xqbase ChineseInit).
_PIECE_SIMPLIFIED = {KING: ("帅", "将"), ADVISOR: ("仕", "士"), ELEPHANT: ("相", "象"), HORSE: ("马", "马"),
                     ROOK: ("车", "车"), CANNON: ("炮", "炮"), PAWN: ("兵", "卒")}
_PIECE_TRADITIONAL = {KING: ("帥", "將"), ADVISOR: ("仕", "士"), ELEPHANT: ("相", "象"), HORSE: ("傌", "馬"),
                      ROOK: ("俥", "車"), CANNON: ("炮", "砲"), PAWN: ("兵", "卒")}
_DIRECTIONS = {"simplified": ("进", "退", "平"), "traditional": ("進", "退", "平")}
_QUALIFIERS = {"simplified": ("前", "中", "后"), "traditional": ("前", "中", "後")}

# Input glyphs (FORMATS.md §4: 帥 將 傌 馬 俥 車 硨 砲 包 後 進, 上/下 of old books).
_CN_PIECES = {
    "帅": KING, "帥": KING, "将": KING, "將": KING, "王": KING,
    "仕": ADVISOR, "士": ADVISOR,
    "相": ELEPHANT, "象": ELEPHANT,
    "马": HORSE, "馬": HORSE, "傌": HORSE, "駒": HORSE,
    "车": ROOK, "車": ROOK, "俥": ROOK, "硨": ROOK, "伡": ROOK,
    "炮": CANNON, "砲": CANNON, "包": CANNON, "炰": CANNON,
    "兵": PAWN, "卒": PAWN,
}
_CN_DIRECTIONS = {"进": "+", "進": "+", "上": "+", "退": "-", "下": "-", "平": "."}
_CN_QUALIFIERS = {"前": "front", "中": "middle", "后": "rear", "後": "rear"}
_CN_NUMBERS = {c: i + 1 for i, c in enumerate(_CN_NUMERALS)} | {str(i): i for i in range(1, 10)}

_WXF_LETTERS = {"K": KING, "A": ADVISOR, "G": ADVISOR, "E": ELEPHANT, "B": ELEPHANT, "M": ELEPHANT,
                "H": HORSE, "N": HORSE, "R": ROOK, "C": CANNON, "P": PAWN}
_WXF_OUT = {KING: "K", ADVISOR: "A", ELEPHANT: "E", HORSE: "H", ROOK: "R", CANNON: "C", PAWN: "P"}
_DIAGONAL = (HORSE, ELEPHANT, ADVISOR)

_ICCS_RE = re.compile(r"^([a-iA-I])([0-9])-?([a-iA-I])([0-9])$")
_WXF_SIGN_FIRST = re.compile(r"^([+\-])([A-Z])([+\-.=])([1-9])$")
_WXF_LETTER = re.compile(r"^([A-Z])([1-9+\-])([+\-.=]?)([1-9])$")
_WXF_NUMBERED = re.compile(r"^([1-9+\-])([1-9+\-])([+\-.=]?)([1-9])$")


# ---------------------------------------------------------------------------
# Geometry helpers
# ---------------------------------------------------------------------------

def file_number(column: int, color: Color) -> int:
    """Traditional file number 1–9 of board ``column`` (0–8, a–i) counted from ``color``'s right."""
    return 9 - column if color == RED else column + 1


def _column(number: int, color: Color) -> int:
    return 9 - number if color == RED else number - 1


def _stack(board: Board, code: int, column: int) -> list[int]:
    """Squares of piece ``code`` on ``column``, front (most advanced) first."""
    sqs = [r * 9 + column for r in range(10) if board.squares[r * 9 + column] == code]
    return sqs[::-1] if code > 0 else sqs  # Red advances to higher ranks


def _stacked_columns(board: Board, code: int) -> list[int]:
    return [c for c in range(9) if sum(1 for r in range(10) if board.squares[r * 9 + c] == code) >= 2]


@dataclass(frozen=True, slots=True)
class _MoveParts:
    """A move described the way both Chinese and WXF describe it."""

    piece_type: int
    color: Color
    file: int  # from-file number (1-9, mover's view)
    direction: str  # "+", "-", "."
    target: int  # file number or steps
    index: int  # position in its file's stack, 0 = front
    count: int  # pieces of its kind on its file
    stacked_files: int  # files holding >= 2 of its kind (pawns matter)
    global_index: int  # 2+ stacked files: place among their pieces, files right to left, front first


def _global_index(board: Board, code: int, color: Color, square: int) -> int:
    columns = sorted(_stacked_columns(board, code), key=lambda c: file_number(c, color))
    order = [sq for c in columns for sq in _stack(board, code, c)]
    return order.index(square) if square in order else -1


def _parts(board: Board, move: Move) -> _MoveParts:
    code = board.squares[move.from_square]
    color = code > 0
    ptype = abs(code)
    fc, fr = move.from_square % 9, move.from_square // 9
    tc, tr = move.to_square % 9, move.to_square // 9
    if tr == fr:
        direction = "."
    else:
        forward = (tr > fr) == (color == RED)
        direction = "+" if forward else "-"
    if direction == "." or ptype in _DIAGONAL:
        target = file_number(tc, color)
    else:
        target = abs(tr - fr)
    stack = _stack(board, code, fc)
    stacked = len(_stacked_columns(board, code)) if ptype == PAWN else (1 if len(stack) >= 2 else 0)
    index = stack.index(move.from_square)
    gi = _global_index(board, code, color, move.from_square) if stacked >= 2 else index
    return _MoveParts(ptype, color, file_number(fc, color), direction, target, index, len(stack), stacked, gi)


def _check_legal(board: Board, move: Move) -> None:
    if not board.is_legal(move):
        reason = board.illegal_reason(move) or "illegal"
        raise IllegalMoveError(f"illegal move {_move_text(move)} in {board.fen()}: {reason}")


# ---------------------------------------------------------------------------
# Move -> text
# ---------------------------------------------------------------------------

def move_to_chinese(board: Board, move: Move, *, traditional: bool = False,
                    fullwidth_black: bool = False) -> str:
    """Chinese four-character notation of ``move`` played from ``board`` (the position BEFORE it).

    ``"炮二平五"``, ``"马8进7"``, ``"前炮退二"``, ``"中兵进一"``, ``"前七进一"``. Red numbers
    are 一…九; Black's are ASCII digits, or full-width １…９ with ``fullwidth_black``.
    ``traditional`` writes 帥 傌 俥 將 馬 車 砲 進 後 (xqbase's Big5 set). Tandem rules:
    see the module docstring. Raises :class:`IllegalMoveError` if the move is not legal.
    """
    _check_legal(board, move)
    p = _parts(board, move)
    style = "traditional" if traditional else "simplified"
    name = (_PIECE_TRADITIONAL if traditional else _PIECE_SIMPLIFIED)[p.piece_type][0 if p.color else 1]
    front, middle, rear = _QUALIFIERS[style]

    def num(n: int) -> str:
        if p.color == RED:
            return _CN_NUMERALS[n - 1]
        return _FULLWIDTH_DIGITS[n - 1] if fullwidth_black else str(n)

    direction = dict(zip("+-.", _DIRECTIONS[style], strict=True))[p.direction]
    tail = direction + num(p.target)
    if p.count < 2 or p.piece_type in (ADVISOR, ELEPHANT, KING):
        return name + num(p.file) + tail
    if p.count == 2:
        qual = front if p.index == 0 else rear
    elif p.count == 3:
        qual = (front, middle, rear)[p.index]
    else:  # 4-5 pawns on a file: 前 二 三 四 五
        qual = front if p.index == 0 else _CN_NUMERALS[p.index]
    if p.piece_type == PAWN and p.stacked_files >= 2:
        return qual + num(p.file) + tail
    return qual + name + tail


def move_to_wxf(board: Board, move: Move, *, traverse: str = ".") -> str:
    """WXF notation of ``move`` played from ``board`` (the position BEFORE it), e.g. ``"C2.5"``, ``"H8+7"``.

    ``traverse`` is the sideways sign: ``"."`` (WXF page, default) or ``"="`` (AXF, Fairy-Stockfish).
    Tandem pieces ``R+.3``/``C-+1``; pawns per the module docstring (``P+.5``, ``15.6``, ``26.5``).
    No check or mate marks (R5). Raises :class:`IllegalMoveError` if the move is not legal.
    """
    if traverse not in (".", "="):
        raise ValueError(f"traverse must be '.' or '=', got {traverse!r}")
    _check_legal(board, move)
    p = _parts(board, move)
    direction = traverse if p.direction == "." else p.direction
    tail = f"{direction}{p.target}"
    letter = _WXF_OUT[p.piece_type]
    if p.count < 2 or p.piece_type in (ADVISOR, ELEPHANT, KING):
        return f"{letter}{p.file}{tail}"
    if p.piece_type == PAWN and (p.count >= 3 or p.stacked_files >= 2):
        return f"{p.index + 1}{p.file}{tail}"
    return f"{letter}{'+' if p.index == 0 else '-'}{tail}"


def move_to_text(board: Board, move: Move, notation: str = "chinese", **options: object) -> str:
    """``move`` as text in ``notation``: ``"chinese"``, ``"wxf"``, ``"iccs"`` (``h2e2``), ``"iccs-dash"`` or
    ``"san"`` (Fairy-Stockfish's SAN, :mod:`xiangqi.core.san`).

    Extra keyword ``options`` go to :func:`move_to_chinese` / :func:`move_to_wxf`.
    Raises :class:`IllegalMoveError` if the move is not legal, :class:`XiangqiError` (a ``ValueError``)
    for an unknown notation.
    """
    key = notation.lower()
    if key == "chinese":
        return move_to_chinese(board, move, **options)  # type: ignore[arg-type]
    if key == "wxf":
        return move_to_wxf(board, move, **options)  # type: ignore[arg-type]
    if key in ("iccs", "uci", "ucci", "iccs-dash"):
        _check_legal(board, move)
        return move.iccs_dash() if key == "iccs-dash" else move.iccs()
    if key == "san":
        _check_legal(board, move)
        return move_to_san(board, move, **options)  # type: ignore[arg-type]
    raise XiangqiError(f"unknown notation {notation!r} (expected chinese, wxf, iccs or san)")


def moves_to_chinese(board: Board, moves: Iterable[Move], **options: object) -> list[str]:
    """Chinese text of each of ``moves`` played in turn from ``board``'s position (on a copy).

    ``options`` as for :func:`move_to_chinese`. Raises :class:`IllegalMoveError` at the first
    illegal move (naming it); ``board`` is never changed.
    """
    b = board.copy(stack=False)
    out = []
    for m in moves:
        out.append(move_to_chinese(b, m, **options))  # type: ignore[arg-type]
        b.push(m, validate=False)
    return out


# ---------------------------------------------------------------------------
# Text -> move
# ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Query:
    """What a move text says; ``None`` fields are unconstrained."""

    piece_type: int | None
    file: int | None
    # "front" "middle" "rear" "first" "last" "plus" "minus"; int = index in the file (0 = front);
    # ("ordinal", k) = k-th (0-based) of the stacked pawns, counted over all stacked files (xqbase 三兵进一)
    qualifier: str | int | tuple[str, int] | None
    direction: str
    target: int


def _qualifier_ok(q: str | int | tuple[str, int] | None, index: int, count: int, global_index: int) -> bool:
    if q is None:
        return True
    if count < 2:
        return False
    if isinstance(q, tuple):
        return global_index == q[1]
    if isinstance(q, int):
        return index == q
    if q == "front":
        return index == 0
    if q == "rear":
        return index == count - 1
    if q == "middle":
        return count == 3 and index == 1
    if q == "plus":  # WXF '+': front of 2-3, second of 4-5
        return index == (1 if count >= 4 else 0)
    if q == "minus":  # WXF '-': rear of 2-3, second to last of 4-5
        return index == (count - 2 if count >= 4 else count - 1)
    if q == "first":
        return count >= 4 and index == 0
    if q == "last":
        return count >= 4 and index == count - 1
    return False


def _matches(board: Board, move: Move, q: _Query) -> bool:
    """The qualifier test (front/rear/…) for a move :func:`_candidates` already matched."""
    if q.qualifier is None:
        return True
    p = _parts(board, move)
    return _qualifier_ok(q.qualifier, p.index, p.count, p.global_index)


def _describe(q: _Query, color: Color) -> str:
    side = COLOR_NAMES[color]
    what = TYPE_NAMES[q.piece_type] if q.piece_type else "piece"
    qual = ""
    if q.qualifier is not None:
        ordinals = ("1st", "2nd", "3rd", "4th", "5th")
        if isinstance(q.qualifier, str):
            qual = {"front": "front ", "rear": "rear ", "middle": "middle ", "plus": "front ",
                    "minus": "rear ", "first": "first ", "last": "last "}.get(q.qualifier, "")
        elif isinstance(q.qualifier, tuple):
            qual = f"{ordinals[q.qualifier[1]]} stacked "
        else:
            qual = f"{ordinals[q.qualifier]} " if 0 <= q.qualifier < 5 else ""
    where = f" on file {q.file}" if q.file is not None else ""
    if q.direction == ".":
        verb = f"move sideways to file {q.target}"
    elif q.piece_type in _DIAGONAL:
        verb = f"move {'forward' if q.direction == '+' else 'back'} to file {q.target}"
    elif q.piece_type is None:
        verb = f"move {'forward' if q.direction == '+' else 'back'} {q.target}"
    else:
        verb = f"move {'forward' if q.direction == '+' else 'back'} {q.target} point(s)"
    return f"no {side} {qual}{what}{where} can {verb}"


def _candidates(board: Board, q: _Query) -> list[Move]:
    """Pseudo-legal moves fitting the query's piece type, from-file, direction and target."""
    turn = board.turn
    squares = board.squares
    targets = board._pseudo_targets  # core-internal: the per-square generator behind legal_moves
    out = []
    if q.piece_type is not None:
        want = q.piece_type if turn else -q.piece_type
        if q.file is not None:
            column = _column(q.file, turn)
            if not 0 <= column <= 8:
                return out
            froms = [sq for sq in range(column, 90, 9) if squares[sq] == want]
        else:
            froms = [sq for sq, code in enumerate(squares) if code == want]
    else:
        froms = [sq for sq, code in enumerate(squares) if code and (code > 0) == turn
                 and (q.file is None or file_number(sq % 9, turn) == q.file)]
    for sq in froms:
        ptype = abs(squares[sq])
        fr = sq // 9
        diagonal = ptype in _DIAGONAL
        for to in targets(sq):
            tr = to // 9
            if tr == fr:
                if q.direction != ".":
                    continue
                target = file_number(to % 9, turn)
            else:
                if q.direction != ("+" if (tr > fr) == turn else "-"):
                    continue
                target = file_number(to % 9, turn) if diagonal else abs(tr - fr)
            if target == q.target:
                out.append(Move(sq, to))
    return out


def _select(board: Board, text: str, queries: list[_Query]) -> Move:
    """The one legal move the first matching query describes; clear errors otherwise."""
    for q in queries:
        found = [m for m in _candidates(board, q)
                 if _matches(board, m, q) and board._leaves_king_safe(m.from_square, m.to_square)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            # WXF page: the middle of three pawns on a file keeps the plain form (P3.4).
            if q.qualifier is None and q.piece_type == PAWN:
                mids = [m for m in found if (pp := _parts(board, m)).count == 3 and pp.index == 1]
                if len(mids) == 1 and len({m.from_square % 9 for m in found}) == 1:
                    return mids[0]
            cands = ", ".join(m.iccs() for m in found)
            raise AmbiguousMoveError(f"{text!r} is ambiguous in {board.fen()}: it fits {cands}")
    q = queries[0]
    unsafe = [m for m in _candidates(board, q) if _matches(board, m, q)]
    if unsafe:
        side = COLOR_NAMES[board.turn]
        raise IllegalMoveError(f"{text}: {unsafe[0].iccs()} would leave the {side} king in "
                               f"check or facing the other king ({board.fen()})")
    raise IllegalMoveError(f"{text}: {_describe(q, board.turn)} ({board.fen()})")


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def parse_iccs(board: Board, text: str) -> Move:
    """Parse ICCS ``h2e2`` / ``H2-E2`` and check it is legal in ``board``.

    Raises :class:`InvalidMoveError` (syntax) or :class:`IllegalMoveError` (with the reason).
    """
    move = Move.from_iccs(_normalise(text))
    _check_legal(board, move)
    return move


def parse_chinese(board: Board, text: str) -> Move:
    """Parse Chinese notation (simplified or traditional, ASCII or full-width digits) in ``board``.

    Accepted shapes (FORMATS.md §4): piece-file-direction-target (炮二平五, 马８进７, 傌八進七);
    前/中/后 + piece (前炮退二, 後車平四); 前/中/后 or 一…五 + file for pawns on several files
    (前七进一, 二7平6, R7); ordinal + piece (二兵平四, 三兵进一); old forms 前兵七进一 and
    piece + 前/后 (炮前退二). Raises :class:`InvalidMoveError` when the text is not Chinese
    notation, :class:`IllegalMoveError` naming the problem ("马8进7: no black horse on file 8
    can move forward to file 7") and :class:`AmbiguousMoveError` when it fits several moves.
    """
    return _select(board, text.strip(), _chinese_queries(text))


@functools.lru_cache(maxsize=8192)
def _chinese_queries(text: str) -> tuple[_Query, ...]:
    """The queries a Chinese move text stands for (independent of the board, hence cached)."""
    raw = text
    s = re.sub(r"\s+", "", _normalise(text))
    if len(s) not in (4, 5):
        raise InvalidMoveError(f"not a Chinese move: {raw!r} (expected four characters such as 炮二平五)")
    kinds = []
    for ch in s:
        if ch in _CN_PIECES:
            kinds.append("P")
        elif ch in _CN_QUALIFIERS:
            kinds.append("Q")
        elif ch in _CN_NUMBERS:
            kinds.append("N")
        elif ch in _CN_DIRECTIONS:
            kinds.append("D")
        else:
            raise InvalidMoveError(f"not a Chinese move: {raw!r} (unknown character {ch!r})")
    shape = "".join(kinds)
    if shape[-2:] != "DN":
        raise InvalidMoveError(f"not a Chinese move: {raw!r} "
                               "(expected a direction 进/退/平 and a number at the end)")
    direction = _CN_DIRECTIONS[s[-2]]
    target = _CN_NUMBERS[s[-1]]
    head, hs = s[:-2], shape[:-2]
    queries: list[_Query] = []
    if hs == "PN":  # 炮二平五
        queries.append(_Query(_CN_PIECES[head[0]], _CN_NUMBERS[head[1]], None, direction, target))
    elif hs == "QP":  # 前炮退二
        queries.append(_Query(_CN_PIECES[head[1]], None, _CN_QUALIFIERS[head[0]], direction, target))
    elif hs == "PQ":  # 炮前退二 (old)
        queries.append(_Query(_CN_PIECES[head[0]], None, _CN_QUALIFIERS[head[1]], direction, target))
    elif hs == "QN":  # 前七进一
        queries.append(_Query(None, _CN_NUMBERS[head[1]], _CN_QUALIFIERS[head[0]], direction, target))
    elif hs == "NP":  # 二兵平四 (ordinal) or 七兵进一 (file first)
        n = _CN_NUMBERS[head[0]]
        if n <= 5:
            queries.append(_Query(_CN_PIECES[head[1]], None, ("ordinal", n - 1), direction, target))
        queries.append(_Query(_CN_PIECES[head[1]], n, None, direction, target))
    elif hs == "NN":  # 二7平6: ordinal + file
        n = _CN_NUMBERS[head[0]]
        if n > 5:
            raise InvalidMoveError(f"not a Chinese move: {raw!r} (position {head[0]} must be 一-五)")
        queries.append(_Query(None, _CN_NUMBERS[head[1]], n - 1, direction, target))
    elif hs == "QPN":  # 前兵七进一
        queries.append(_Query(_CN_PIECES[head[1]], _CN_NUMBERS[head[2]], _CN_QUALIFIERS[head[0]], direction,
                              target))
    elif hs == "NPN":  # 二兵七进一
        n = _CN_NUMBERS[head[0]]
        queries.append(_Query(_CN_PIECES[head[1]], _CN_NUMBERS[head[2]], n - 1 if n <= 5 else -1, direction,
                              target))
    else:
        raise InvalidMoveError(f"not a Chinese move: {raw!r} (cannot read {head!r} as piece and file)")
    return tuple(queries)


def parse_wxf(board: Board, text: str) -> Move:
    """Parse WXF notation (``C2.5``, ``C2=5``, ``C25``, ``R+.3``, ``+P+1``, ``15=6``, ``3+.4``, ``++.4``).

    Case-insensitive; full-width input is NFKC-normalised; B/N and G/M are read as E/H and A/E.
    Raises :class:`InvalidMoveError` for text that is not WXF, :class:`IllegalMoveError` naming the
    problem, :class:`AmbiguousMoveError` when the text fits several moves.
    """
    raw = text
    s = _normalise(text).upper().replace(" ", "")
    queries: list[_Query] = []

    def dir_of(ch: str) -> str:
        return {"+": "+", "-": "-", ".": ".", "=": ".", "": "."}[ch]

    if m := _WXF_SIGN_FIRST.match(s):
        sign, letter, d, t = m.groups()
        ptype = _letter(letter, raw)
        queries.append(_Query(ptype, None, "plus" if sign == "+" else "minus", dir_of(d), int(t)))
    elif m := _WXF_LETTER.match(s):
        letter, f, d, t = m.groups()
        ptype = _letter(letter, raw)
        if f.isdigit():
            queries.append(_Query(ptype, int(f), None, dir_of(d), int(t)))
        else:
            queries.append(_Query(ptype, None, "plus" if f == "+" else "minus", dir_of(d), int(t)))
    elif m := _WXF_NUMBERED.match(s):
        a, b, d, t = m.groups()
        direction, target = dir_of(d), int(t)
        if a.isdigit() and b.isdigit():
            if int(a) <= 5:  # numbered: index then file (R3, R4)
                queries.append(_Query(PAWN, int(b), int(a) - 1, direction, target))
            queries.append(_Query(PAWN, int(a), None, direction, target))  # file then middle (WXF page)
        elif a.isdigit():  # 3+.4: file then front/rear
            queries.append(_Query(PAWN, int(a), "plus" if b == "+" else "minus", direction, target))
        elif a == b:  # ++ / --: first / last of 4-5
            queries.append(_Query(PAWN, None, "first" if a == "+" else "last", direction, target))
        else:
            raise InvalidMoveError(f"not a WXF move: {raw!r}")
    else:
        raise InvalidMoveError(f"not a WXF move: {raw!r} (expected e.g. C2.5, H8+7, R+.3 or 15=6)")
    return _select(board, raw.strip(), queries)


def _letter(letter: str, raw: str) -> int:
    try:
        return _WXF_LETTERS[letter]
    except KeyError:
        raise InvalidMoveError(f"not a WXF move: {raw!r} (unknown piece letter {letter!r}; "
                               "expected K A E H R C P)") from None


@functools.lru_cache(maxsize=8192)
def detect_notation(text: str) -> str:
    """Which notation ``text`` is written in: ``"iccs"``, ``"chinese"`` or ``"wxf"``.

    Raises :class:`InvalidMoveError` when it looks like none of them.
    """
    s = _normalise(text)
    if _ICCS_RE.match(s):
        return "iccs"
    if any("\u4e00" <= ch <= "\u9fff" for ch in s):
        return "chinese"
    u = s.upper().replace(" ", "")
    if _WXF_SIGN_FIRST.match(u) or _WXF_LETTER.match(u) or _WXF_NUMBERED.match(u):
        return "wxf"
    raise InvalidMoveError(f"not a move in ICCS, Chinese or WXF notation: {excerpt(text)}")


def parse_move(board: Board, text: str) -> Move:
    """Parse ``text`` in any notation (ICCS, Chinese or WXF, detected) and check it against ``board``.

    Returns the legal :class:`Move`. Raises :class:`InvalidMoveError` when the text is in no known
    notation, :class:`IllegalMoveError` (naming the problem) or :class:`AmbiguousMoveError`.
    """
    kind = detect_notation(text)
    if kind == "iccs":
        return parse_iccs(board, text)
    if kind == "chinese":
        return parse_chinese(board, text)
    return parse_wxf(board, text)


def parse_text(board: Board, text: str, notation: str | None = None) -> Move:
    """Parse ``text`` in ``notation`` (``"chinese"``, ``"wxf"``, ``"iccs"``; ``None`` = detect)."""
    if notation is None:
        return parse_move(board, text)
    key = notation.lower()
    if key == "chinese":
        return parse_chinese(board, text)
    if key == "wxf":
        return parse_wxf(board, text)
    if key in ("iccs", "uci", "ucci"):
        return parse_iccs(board, text)
    raise XiangqiError(f"unknown notation {notation!r} (expected chinese, wxf or iccs)")

