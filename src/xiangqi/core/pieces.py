"""Colours, pieces, squares and moves: the vocabulary of the rules, below :class:`~xiangqi.core.board.Board`.

Coordinates follow ICCS/UCCI (RULES.md §1, FORMATS.md §1): files ``a``–``i`` from
Red's left (0–8), ranks ``0``–``9`` from Red's side. A square is the integer
``rank * 9 + file`` (0–89); ``a0`` is 0, ``i9`` is 89.

Pieces are stored as signed integers: positive for Red, negative for Black,
``abs`` giving the piece type (:data:`KING` … :data:`PAWN`). The precomputed move
tables (:data:`RAYS`, :data:`KING_MOVES` …) are the geometry the board's move
generator, the notation readers and the referee's classifier share.

This module imports nothing of the package but :mod:`xiangqi.core.errors`, so the
modules that work on a board (notation, SAN, the referee, the classifier) take their
vocabulary from here and the board from their caller: :mod:`xiangqi.core.board`, whose
:class:`~xiangqi.core.board.Board` offers them as methods (``parse_move``, ``move_text``,
``outcome``), sits above them (tests/test_layers.py, issue 30). Every name here is also
importable from :mod:`xiangqi.core.board`, as it was before the split. No third-party imports.
"""

from __future__ import annotations

import dataclasses
import re

from xiangqi.core.errors import InvalidMoveError, XiangqiError

Color = bool
RED: Color = True
BLACK: Color = False
COLOR_NAMES = {RED: "red", BLACK: "black"}

KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, PAWN = range(1, 8)
PIECE_TYPES = (KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, PAWN)
PIECE_SYMBOLS = " kabnrcp"  # FEN letters, index = piece type
#: Chinese names, index = piece type: (Red, Black).
PIECE_NAMES_ZH = {
    KING: ("帅", "将"),
    ADVISOR: ("仕", "士"),
    ELEPHANT: ("相", "象"),
    HORSE: ("马", "马"),
    ROOK: ("车", "车"),
    CANNON: ("炮", "炮"),
    PAWN: ("兵", "卒"),
}
#: Piece counts of the full set per side (RULES.md §1).
MAX_PIECE_COUNT = {KING: 1, ADVISOR: 2, ELEPHANT: 2, HORSE: 2, ROOK: 2, CANNON: 2, PAWN: 5}

FILE_NAMES = "abcdefghi"
RANK_NAMES = "0123456789"
SQUARES = range(90)
SQUARE_NAMES = [f + r for r in RANK_NAMES for f in FILE_NAMES]

STARTING_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
STARTING_BOARD_FEN = STARTING_FEN.split()[0]

# FEN letters accepted on input: the xqbase set plus H/E for horse/elephant (R12, R16).
_FEN_LETTERS = {
    "k": KING,
    "a": ADVISOR,
    "b": ELEPHANT,
    "e": ELEPHANT,
    "n": HORSE,
    "h": HORSE,
    "r": ROOK,
    "c": CANNON,
    "p": PAWN,
}


def square(file_index: int, rank_index: int) -> int:
    """Square number of ``file_index`` (0–8, a–i) and ``rank_index`` (0–9)."""
    return rank_index * 9 + file_index


def square_file(sq: int) -> int:
    """File 0–8 (a–i) of a square."""
    return sq % 9


def square_rank(sq: int) -> int:
    """Rank 0–9 of a square (0 is Red's back rank)."""
    return sq // 9


def square_name(sq: int) -> str:
    """ICCS name of a square, e.g. ``square_name(0) == "a0"``."""
    return SQUARE_NAMES[sq]


def parse_square(name: str) -> int:
    """Square number of an ICCS square name such as ``"e0"`` (case-insensitive).

    Raises :class:`InvalidMoveError` when the name is not a square.
    """
    if len(name) != 2 or name[0].lower() not in FILE_NAMES or name[1] not in RANK_NAMES:
        raise InvalidMoveError(f"not a square: {name!r} (expected a file a-i and a rank 0-9)")
    return square(FILE_NAMES.index(name[0].lower()), int(name[1]))


def in_palace(sq: int, color: Color) -> bool:
    """True if ``sq`` is inside ``color``'s palace (files d–f, ranks 0–2 or 7–9)."""
    f, r = sq % 9, sq // 9
    return 3 <= f <= 5 and (r <= 2 if color else r >= 7)


def own_half(sq: int, color: Color) -> bool:
    """True if ``sq`` is on ``color``'s side of the river (Red: ranks 0–4)."""
    return (sq // 9 <= 4) if color else (sq // 9 >= 5)


def grid_board_fen(grid: list[str | None]) -> str:
    """The FEN board field of ``grid``: 90 FEN letters or None, indexed by square
    (``rank * 9 + file``), e.g. as read from an XQF or DhtmlXQ piece table."""
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(9):
            p = grid[r * 9 + f]
            if p is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += p
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def board_fen_grid(board_fen: str) -> list[str | None]:
    """The inverse of :func:`grid_board_fen`: the 90 squares (``rank * 9 + file``) of a FEN board
    field, each its FEN letter or None. The field is taken as written (no check of its shape:
    :class:`Board` validates positions)."""
    grid: list[str | None] = [None] * 90
    for row, text in enumerate(board_fen.split("/")):
        rank, f = 9 - row, 0
        for ch in text:
            if ch.isdigit():
                f += int(ch)
            else:
                grid[rank * 9 + f] = ch
                f += 1
    return grid


@dataclasses.dataclass(frozen=True, slots=True)
class Piece:
    """A piece: ``piece_type`` (:data:`KING` … :data:`PAWN`) and ``color``."""

    piece_type: int
    color: Color

    def symbol(self) -> str:
        """FEN letter: upper case for Red, e.g. ``"R"``, ``"c"``."""
        s = PIECE_SYMBOLS[self.piece_type]
        return s.upper() if self.color else s

    def chinese(self) -> str:
        """Chinese name as on the piece: 帅仕相马车炮兵 / 将士象马车炮卒."""
        return PIECE_NAMES_ZH[self.piece_type][0 if self.color else 1]

    @classmethod
    def from_symbol(cls, symbol: str) -> Piece:
        """Piece from a FEN letter (``H``/``E`` accepted for horse/elephant).

        Raises :class:`~xiangqi.core.errors.XiangqiError` (a ``ValueError``) for any other text.
        """
        t = _FEN_LETTERS.get(symbol.lower())
        if t is None or len(symbol) != 1:
            raise XiangqiError(f"not a piece letter: {symbol!r} (expected KABNRCP, H or E, any case)")
        return cls(t, symbol.isupper())

    @property
    def code(self) -> int:
        """Signed integer code used on the board array (Red positive)."""
        return self.piece_type if self.color else -self.piece_type

    def __str__(self) -> str:
        return self.symbol()


_ICCS_RE = re.compile(r"^\s*([a-iA-I])([0-9])-?([a-iA-I])([0-9])\s*$")


@dataclasses.dataclass(frozen=True, slots=True)
class Move:
    """A move from one square to another, written in ICCS as ``h2e2``.

    >>> Move.from_iccs("H2-E2")
    Move.from_iccs('h2e2')
    """

    from_square: int
    to_square: int

    @classmethod
    def from_iccs(cls, text: str) -> Move:
        """Parse ICCS: ``h2e2`` or ``H2-E2`` (case-insensitive, optional dash).

        Raises :class:`InvalidMoveError` naming the text when it is not ICCS.
        This checks the syntax only; legality is :meth:`Board.push`'s job.
        """
        m = _ICCS_RE.match(text)
        if not m:
            raise InvalidMoveError(f"not an ICCS move: {text!r} (expected e.g. h2e2 or H2-E2)")
        ff, fr, tf, tr = m.groups()
        frm = square(FILE_NAMES.index(ff.lower()), int(fr))
        to = square(FILE_NAMES.index(tf.lower()), int(tr))
        if frm == to:
            raise InvalidMoveError(f"not a move: {text!r} starts and ends on the same square")
        if cls is Move:
            return _move(frm, to)
        return cls(frm, to)

    from_uci = from_iccs

    def iccs(self) -> str:
        """Lower-case 4-character ICCS/UCCI text, e.g. ``"h2e2"``."""
        return SQUARE_NAMES[self.from_square] + SQUARE_NAMES[self.to_square]

    uci = iccs

    def iccs_dash(self) -> str:
        """xqbase PGN form ``"H2-E2"``."""
        a, b = SQUARE_NAMES[self.from_square], SQUARE_NAMES[self.to_square]
        return f"{a.upper()}-{b.upper()}"

    def __str__(self) -> str:
        return self.iccs()

    def __repr__(self) -> str:
        return f"Move.from_iccs({self.iccs()!r})"


# ---------------------------------------------------------------------------
# Precomputed geometry
# ---------------------------------------------------------------------------


def _on_board(f: int, r: int) -> bool:
    return 0 <= f < 9 and 0 <= r < 10


def _build_tables():
    rays: list[list[list[int]]] = []
    king_moves: list[list[int]] = []
    advisor_moves: list[list[int]] = []
    elephant_moves: list[list[tuple[int, int]]] = []
    horse_moves: list[list[tuple[int, int]]] = []
    horse_attackers: list[list[tuple[int, int]]] = []
    for sq in SQUARES:
        f, r = sq % 9, sq // 9
        sq_rays = []
        for df, dr in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            ray = []
            nf, nr = f + df, r + dr
            while _on_board(nf, nr):
                ray.append(square(nf, nr))
                nf, nr = nf + df, nr + dr
            sq_rays.append(ray)
        rays.append(sq_rays)
        color = RED if r <= 4 else BLACK
        for table, steps in ((king_moves, ((0, 1), (0, -1), (1, 0), (-1, 0))),
                             (advisor_moves, ((1, 1), (1, -1), (-1, 1), (-1, -1)))):
            table.append([square(f + df, r + dr) for df, dr in steps
                          if _on_board(f + df, r + dr) and in_palace(sq, color)
                          and in_palace(square(f + df, r + dr), color)])
        em = []
        for df, dr in ((2, 2), (2, -2), (-2, 2), (-2, -2)):
            nf, nr = f + df, r + dr
            if _on_board(nf, nr) and own_half(square(nf, nr), color):
                em.append((square(nf, nr), square(f + df // 2, r + dr // 2)))
        elephant_moves.append(em)
        hm = []
        ha = []
        for df, dr in ((1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (2, -1), (-2, 1), (-2, -1)):
            nf, nr = f + df, r + dr
            if not _on_board(nf, nr):
                continue
            # Leg for a horse on sq going to (nf, nr): one step along the long direction.
            leg = square(f + (df // 2 if abs(df) == 2 else 0), r + (dr // 2 if abs(dr) == 2 else 0))
            hm.append((square(nf, nr), leg))
            # Horse on (nf, nr) attacking sq: its leg is next to (nf, nr) toward sq.
            leg2 = square(nf - (df // 2 if abs(df) == 2 else 0), nr - (dr // 2 if abs(dr) == 2 else 0))
            ha.append((square(nf, nr), leg2))
        horse_moves.append(hm)
        horse_attackers.append(ha)
    return rays, king_moves, advisor_moves, elephant_moves, horse_moves, horse_attackers


RAYS, KING_MOVES, ADVISOR_MOVES, ELEPHANT_MOVES, HORSE_MOVES, HORSE_ATTACKERS = _build_tables()


def _pawn_targets(sq: int, color: Color) -> list[int]:
    f, r = sq % 9, sq // 9
    out = []
    fr = r + 1 if color else r - 1
    if 0 <= fr <= 9:
        out.append(square(f, fr))
    if not own_half(sq, color):
        if f > 0:
            out.append(sq - 1)
        if f < 8:
            out.append(sq + 1)
    return out


PAWN_MOVES = {c: [_pawn_targets(s, c) for s in SQUARES] for c in (RED, BLACK)}


#: The :class:`Move` of each (from, to) pair, ``_MOVES[from * 90 + to]``, made on first use and shared
#: from then on (a Move is frozen: one instance serves every board). The boards' move stacks, the legal
#: move generators and :meth:`Move.from_iccs` hand out these, so a game's history holds no Move objects
#: of its own for the garbage collector to track and scan (DESIGN.md, "Load on a quiet machine").
_MOVES: list[Move | None] = [None] * 8100


def _move(frm: int, to: int) -> Move:
    """The shared :class:`Move` from ``frm`` to ``to`` (both 0-89)."""
    i = frm * 90 + to
    m = _MOVES[i]
    if m is None:
        m = _MOVES[i] = Move(frm, to)
    return m


def _move_text(move: Move) -> str:
    """ICCS of ``move`` for messages; the raw square numbers when one is off the board."""
    if 0 <= move.from_square < 90 and 0 <= move.to_square < 90:
        return move.iccs()
    return f"Move({move.from_square}, {move.to_square})"


_TYPE_NAMES = {
    KING: "king",
    ADVISOR: "advisor",
    ELEPHANT: "elephant",
    HORSE: "horse",
    ROOK: "rook",
    CANNON: "cannon",
    PAWN: "pawn",
}
TYPE_NAMES = _TYPE_NAMES
