"""Board and FEN: the pure-Python reference implementation of the rules.

:class:`Board` is a position with its move history: FEN in and out, legal moves,
``push``/``pop``, check and mate, and as methods the notation (:meth:`Board.parse_move`,
:meth:`Board.move_text`, :mod:`xiangqi.core.notation`) and the result
(:meth:`Board.outcome`, :mod:`xiangqi.core.referee`). Its vocabulary (colours, pieces,
squares, :class:`Move`, the move tables) lives one module down in :mod:`xiangqi.core.pieces`
and is importable from here too; :class:`~xiangqi.core.outcome.Termination` likewise from
:mod:`xiangqi.core.outcome`. The modules a board's methods call work on the board they are
given and never import this one (tests/test_layers.py). This module has no third-party
imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from xiangqi.core import notation as _notation
from xiangqi.core.errors import FenError, IllegalMoveError, excerpt
from xiangqi.core.outcome import Outcome, Termination
from xiangqi.core.pieces import (
    _FEN_LETTERS,
    _MOVES,
    _TYPE_NAMES,
    ADVISOR,
    ADVISOR_MOVES,
    BLACK,
    CANNON,
    COLOR_NAMES,
    ELEPHANT,
    ELEPHANT_MOVES,
    FILE_NAMES,
    HORSE,
    HORSE_ATTACKERS,
    HORSE_MOVES,
    KING,
    KING_MOVES,
    MAX_PIECE_COUNT,
    PAWN,
    PAWN_MOVES,
    PIECE_NAMES_ZH,
    PIECE_SYMBOLS,
    PIECE_TYPES,
    RANK_NAMES,
    RAYS,
    RED,
    ROOK,
    SQUARE_NAMES,
    SQUARES,
    STARTING_BOARD_FEN,
    STARTING_FEN,
    TYPE_NAMES,
    Color,
    Move,
    Piece,
    _move,
    _move_text,
    board_fen_grid,
    grid_board_fen,
    in_palace,
    own_half,
    parse_square,
    square,
    square_file,
    square_name,
    square_rank,
)

__all__ = ["ADVISOR", "ADVISOR_MOVES", "BLACK", "Board", "CANNON", "COLOR_NAMES", "Color", "ELEPHANT",
           "ELEPHANT_MOVES", "FILE_NAMES", "HORSE", "HORSE_ATTACKERS", "HORSE_MOVES", "KING", "KING_MOVES",
           "LegalMoveGenerator", "MAX_PIECE_COUNT", "Move", "PAWN", "PAWN_MOVES", "PIECE_NAMES_ZH",
           "PIECE_SYMBOLS", "PIECE_TYPES", "Piece", "RANK_NAMES", "RAYS", "RED", "ROOK", "SQUARES",
           "SQUARE_NAMES", "STARTING_BOARD_FEN", "STARTING_FEN", "TYPE_NAMES", "Termination",
           "board_fen_grid", "grid_board_fen", "in_palace", "own_half", "parse_square", "square",
           "square_file", "square_name", "square_rank"]


def _king_lines() -> tuple[list[frozenset[int]], list[frozenset[int]]]:
    """For a king on each square: the squares of its file and rank (filling one may make a cannon
    screen), and those plus the four diagonal neighbours (emptying one may open a line or a horse's
    leg): :meth:`Board.generate_legal_moves`'s test of which moves need the king-safety check."""
    lines, exposers = [], []
    for k in range(90):
        f, r = k % 9, k // 9
        line = {s for s in range(90) if s != k and (s % 9 == f or s // 9 == r)}
        diag = {(r + dr) * 9 + f + df for dr in (-1, 1) for df in (-1, 1)
                if 0 <= r + dr <= 9 and 0 <= f + df <= 8}
        lines.append(frozenset(line))
        exposers.append(frozenset(line | diag))
    return lines, exposers


_KING_LINES, _KING_EXPOSERS = _king_lines()


# The undo record of each ply in ``Board._stack``: one int, ``halfmove_clock << 4 | captured + 8``
# (the captured code -7..7, 0 for none, and the halfmove clock before the move; the move itself is
# ``move_stack``'s). An int is no object the garbage collector tracks, where a record object per ply
# was one more to scan in every full collection.
def _undo_captured(undo: int) -> int:
    """The code of the piece a ply captured (0: none) from its undo record."""
    return (undo & 15) - 8


#: FEN text of one rank (its nine square codes, file a first): :meth:`Board.board_fen`'s memo.
_FEN_ROWS: dict[tuple[int, ...], str] = {}


def _fen_row(cells: tuple[int, ...]) -> str:
    row = ""
    empty = 0
    for code in cells:
        if code == 0:
            empty += 1
            continue
        if empty:
            row += str(empty)
            empty = 0
        s = PIECE_SYMBOLS[abs(code)]
        row += s.upper() if code > 0 else s
    if empty:
        row += str(empty)
    return row


class LegalMoveGenerator:
    """Lazy, sized, ``in``-testable view of a board's legal moves."""

    def __init__(self, board: Board) -> None:
        self._board = board

    def __iter__(self) -> Iterator[Move]:
        return self._board.generate_legal_moves()

    def __len__(self) -> int:
        return sum(1 for _ in self._board.generate_legal_moves())

    def __bool__(self) -> bool:
        return any(True for _ in self._board.generate_legal_moves())

    def __contains__(self, move: object) -> bool:
        return isinstance(move, Move) and self._board.is_legal(move)

    def __repr__(self) -> str:
        return f"<LegalMoveGenerator ({', '.join(m.iccs() for m in self)})>"


class Board:
    """A xiangqi position with its move history.

    ``Board()`` is the start position; ``Board(fen)`` any position given as FEN
    (see :meth:`set_fen` for the accepted forms); ``Board(None)`` an empty board to fill
    with :meth:`set_piece_at` (no kings: not a playable position until both are placed).
    ``push``/``pop`` play and take back moves; ``legal_moves`` lists the legal moves
    (RULES.md §2).

    Raises :class:`~xiangqi.core.errors.FenError` for a malformed FEN.
    """

    def __init__(self, fen: str | None = STARTING_FEN) -> None:
        self.squares: list[int] = [0] * 90
        self.turn: Color = RED
        self.halfmove_clock = 0
        self.fullmove_number = 1
        self.move_stack: list[Move] = []
        self._stack: list[int] = []  # the undo record of each ply (see _undo_captured)
        self._kings = {RED: -1, BLACK: -1}
        self._start_fen = ""
        if fen is not None:
            self.set_fen(fen)
        else:
            self._start_fen = self.fen()

    # -- FEN -------------------------------------------------------------

    def set_fen(self, fen: str) -> None:
        """Set the position from FEN and clear the move history.

        Accepts the standard six fields; the short forms ``board`` and
        ``board side`` (missing fields default to ``- - 0 1``, R11); ``w`` or
        ``r`` for Red and ``b`` for Black; ``H``/``E`` letters (R12); the
        two-number tail ``board side halfmove fullmove`` (R16).

        Raises :class:`FenError` naming the field and position of the problem
        (fields are checked in order: board, side, counters): the board must have
        10 ranks of 9 points (ASCII digits), known letters, at most the full set of
        each piece and exactly one king per side inside its palace. Raises
        :class:`TypeError` when ``fen`` is not a str.
        """
        if not isinstance(fen, str):
            raise TypeError(f"a FEN is a str, got {type(fen).__name__} {fen!r:.60}")
        parts = fen.split()
        if not parts:
            raise FenError("empty FEN", field="board", position=0)
        board_part = parts[0]
        rest = parts[1:]
        # Character index of every field, so that errors point at the right one.
        starts = [m.start() for m in re.finditer(r"\S+", fen)]
        squares = [0] * 90
        ranks = board_part.split("/")
        if len(ranks) != 10:
            raise FenError(f"board must have 10 ranks separated by '/', got {len(ranks)}",
                           field="board", position=0)
        pos = starts[0]
        counts: dict[int, int] = {}
        for i, rank_text in enumerate(ranks):
            r = 9 - i
            f = 0
            for ch in rank_text:
                if "0" <= ch <= "9":
                    f += int(ch)
                    if int(ch) == 0:
                        raise FenError(f"empty-run digit 0 in FEN row {i + 1} (rank {r})", field="board",
                                       position=pos)
                else:
                    t = _FEN_LETTERS.get(ch.lower())
                    if t is None:
                        raise FenError(f"unknown piece letter {ch!r} in FEN row {i + 1} (rank {r})",
                                       field="board", position=pos)
                    if f > 8:
                        raise FenError(f"FEN row {i + 1}, rank {r} ({excerpt(rank_text)}) has more than 9 "
                                       "points", field="board", position=pos)
                    code = t if ch.isupper() else -t
                    squares[square(f, r)] = code
                    counts[code] = counts.get(code, 0) + 1
                    f += 1
                pos += 1
            pos += 1
            if f != 9:
                raise FenError(f"FEN row {i + 1}, rank {r} ({excerpt(rank_text)}) has {f} points, "
                               "expected 9", field="board", position=pos - 1 - len(rank_text))
        kings = {RED: -1, BLACK: -1}
        for color in (RED, BLACK):
            name = COLOR_NAMES[color]
            for t, mx in MAX_PIECE_COUNT.items():
                n = counts.get(t if color else -t, 0)
                if n > mx:
                    raise FenError(f"{name} has {n} {_TYPE_NAMES[t]}s, at most {mx} allowed",
                                   field="board", position=0)
            code = KING if color else -KING
            if counts.get(code, 0) != 1:
                raise FenError(f"{name} must have exactly one king, found {counts.get(code, 0)}",
                               field="board", position=0)
            ksq = squares.index(code)
            if not in_palace(ksq, color):
                raise FenError(f"{name} king on {SQUARE_NAMES[ksq]} is outside its palace",
                               field="board", position=0)
            kings[color] = ksq
        # The side and the counters are checked after the board, so that errors come in field order.
        side = rest[0] if rest else "w"
        if side.lower() in ("w", "r"):
            turn = RED
        elif side.lower() == "b":
            turn = BLACK
        else:
            raise FenError(f"side to move must be w, r or b, got {excerpt(side)}", field="side",
                           position=starts[1])
        half, full = 0, 1
        if rest:
            tail = rest[1:]
            first = 2
            # Drop castling / en passant placeholders, keep the numbers.
            while tail and tail[0] == "-":
                tail = tail[1:]
                first += 1
            if len(tail) > 2:
                raise FenError(f"too many fields after the side to move: {excerpt(' '.join(rest[1:]))}",
                               field="counters", position=starts[first + 2])
            for i, (name, t) in enumerate(zip(("halfmove clock", "fullmove number"), tail, strict=False)):
                # ASCII digits only: str.isdigit() is also true for '²' or '٣', which int() rejects.
                if not (t.isascii() and t.isdigit()):
                    raise FenError(f"{name} must be a non-negative integer, got {excerpt(t)}",
                                   field="counters", position=starts[first + i])
                if i == 0:
                    half = int(t)
                else:
                    full = int(t)
            if full < 1:
                full = 1
        self.squares = squares
        self.turn = turn
        self.halfmove_clock = half
        self.fullmove_number = full
        self.move_stack = []
        self._stack = []
        self._kings = kings
        self._start_fen = self.fen()

    def board_fen(self) -> str:
        """The board field of the FEN (standard letters ``KABNRCP``)."""
        sq = self.squares
        rows = []
        for r in range(9, -1, -1):
            cells = tuple(sq[r * 9:r * 9 + 9])
            row = _FEN_ROWS.get(cells)
            if row is None:
                row = _fen_row(cells)
                if len(_FEN_ROWS) < 100_000:  # (a game has a few hundred distinct ranks)
                    _FEN_ROWS[cells] = row
            rows.append(row)
        return "/".join(rows)

    def fen(self) -> str:
        """Full six-field FEN, e.g. ``rnbakabnr/.../RNBAKABNR w - - 0 1``."""
        side = "w" if self.turn else "b"
        return f"{self.board_fen()} {side} - - {self.halfmove_clock} {self.fullmove_number}"

    def starting_fen(self) -> str:
        """FEN of the position before the first move of :attr:`move_stack`."""
        return self._start_fen

    def root(self) -> Board:
        """A new board at the position before the first move of the history."""
        return Board(self._start_fen)

    def copy(self, *, stack: bool = True) -> Board:
        """A copy of the board; with ``stack=False`` the history is dropped."""
        b = Board.__new__(Board)
        b.squares = self.squares.copy()
        b.turn = self.turn
        b.halfmove_clock = self.halfmove_clock
        b.fullmove_number = self.fullmove_number
        b._kings = dict(self._kings)
        if stack:
            b.move_stack = self.move_stack.copy()
            b._stack = self._stack.copy()
            b._start_fen = self._start_fen
        else:
            b.move_stack = []
            b._stack = []
            b._start_fen = b.fen()
        return b

    def __copy__(self) -> Board:
        return self.copy()

    # -- pieces ----------------------------------------------------------

    def piece_at(self, sq: int) -> Piece | None:
        """The piece on ``sq`` (0–89), or None."""
        code = self.squares[sq]
        if code == 0:
            return None
        return Piece(abs(code), code > 0)

    def set_piece_at(self, sq: int, piece: Piece | None) -> None:
        """Put ``piece`` on ``sq`` (None empties it). No legality checks."""
        old = self.squares[sq]
        if abs(old) == KING and self._kings.get(old > 0) == sq:
            self._kings[old > 0] = -1
        self.squares[sq] = 0 if piece is None else piece.code
        if piece is not None and piece.piece_type == KING:
            self._kings[piece.color] = sq

    def king(self, color: Color) -> int:
        """Square of ``color``'s king (-1 if none)."""
        return self._kings[color]

    def pieces(self, piece_type: int, color: Color) -> list[int]:
        """Squares holding ``color``'s pieces of ``piece_type``, in square order."""
        code = piece_type if color else -piece_type
        return [s for s in SQUARES if self.squares[s] == code]

    # -- attacks ---------------------------------------------------------

    def is_attacked_by(self, color: Color, sq: int) -> bool:
        """True if a piece of ``color`` attacks ``sq`` (the king counts only for
        the flying-general rule along an open file)."""
        b = self.squares
        sign = 1 if color else -1
        rook, cannon, king = ROOK * sign, CANNON * sign, KING * sign
        for ray in RAYS[sq]:
            screened = False
            for t in ray:
                p = b[t]
                if p == 0:
                    continue
                if not screened:
                    if p == rook:
                        return True
                    if p == king and t % 9 == sq % 9:
                        return True
                    screened = True
                else:
                    if p == cannon:
                        return True
                    break
        horse = HORSE * sign
        for frm, leg in HORSE_ATTACKERS[sq]:
            if b[frm] == horse and b[leg] == 0:
                return True
        pawn = PAWN * sign
        # A pawn of ``color`` attacks sq from behind sq (from its own side) or from beside it once crossed.
        back = sq - 9 if color else sq + 9
        if 0 <= back < 90 and b[back] == pawn:
            return True
        f = sq % 9
        if not own_half(sq, color):
            if f > 0 and b[sq - 1] == pawn:
                return True
            if f < 8 and b[sq + 1] == pawn:
                return True
        advisor = ADVISOR * sign
        for t in ADVISOR_MOVES[sq]:
            if b[t] == advisor:
                return True
        elephant = ELEPHANT * sign
        for t, eye in ELEPHANT_MOVES[sq]:
            if b[t] == elephant and b[eye] == 0:
                return True
        for t in KING_MOVES[sq]:
            if b[t] == king:
                return True
        return False

    def _king_attacked(self, color: Color) -> bool:
        """Fast test whether ``color``'s king is attacked (or faces the other king)."""
        k = self._kings[color]
        b = self.squares
        sign = -1 if color else 1  # enemy sign
        rook, cannon, eking = ROOK * sign, CANNON * sign, KING * sign
        for ray in RAYS[k]:
            screened = False
            for t in ray:
                p = b[t]
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
        for frm, leg in HORSE_ATTACKERS[k]:
            if b[frm] == horse and b[leg] == 0:
                return True
        pawn = PAWN * sign
        front = k + 9 if color else k - 9
        if 0 <= front < 90 and b[front] == pawn:
            return True
        f = k % 9
        if f > 0 and b[k - 1] == pawn:
            return True
        if f < 8 and b[k + 1] == pawn:
            return True
        return False

    def is_check(self) -> bool:
        """True if the side to move is in check (将)."""
        return self._king_attacked(self.turn)

    def checkers(self) -> list[int]:
        """Squares of the enemy pieces giving check to the side to move."""
        k = self._kings[self.turn]
        out = []
        for sq in SQUARES:
            code = self.squares[sq]
            if code and (code > 0) != self.turn and abs(code) != KING:
                if k in self._pseudo_targets(sq):
                    out.append(sq)
        return out

    # -- move generation -------------------------------------------------

    def _pseudo_targets(self, sq: int) -> list[int]:
        """Destinations of the piece on ``sq`` ignoring king safety."""
        b = self.squares
        code = b[sq]
        color = code > 0
        t = abs(code)
        out: list[int] = []
        if t == ROOK:
            for ray in RAYS[sq]:
                for x in ray:
                    p = b[x]
                    if p == 0:
                        out.append(x)
                    else:
                        if (p > 0) != color:
                            out.append(x)
                        break
        elif t == CANNON:
            for ray in RAYS[sq]:
                screened = False
                for x in ray:
                    p = b[x]
                    if not screened:
                        if p == 0:
                            out.append(x)
                        else:
                            screened = True
                    elif p != 0:
                        if (p > 0) != color:
                            out.append(x)
                        break
        elif t == HORSE:
            for x, leg in HORSE_MOVES[sq]:
                if b[leg] == 0:
                    p = b[x]
                    if p == 0 or (p > 0) != color:
                        out.append(x)
        elif t == PAWN:
            for x in PAWN_MOVES[color][sq]:
                p = b[x]
                if p == 0 or (p > 0) != color:
                    out.append(x)
        elif t == ELEPHANT:
            for x, eye in ELEPHANT_MOVES[sq]:
                if b[eye] == 0:
                    p = b[x]
                    if p == 0 or (p > 0) != color:
                        out.append(x)
        elif t == ADVISOR:
            for x in ADVISOR_MOVES[sq]:
                p = b[x]
                if p == 0 or (p > 0) != color:
                    out.append(x)
        elif t == KING:
            for x in KING_MOVES[sq]:
                p = b[x]
                if p == 0 or (p > 0) != color:
                    out.append(x)
        return out

    def generate_pseudo_legal_moves(self) -> Iterator[Move]:
        """Moves by the piece rules alone, ignoring whether the own king is left attacked."""
        b = self.squares
        turn = self.turn
        moves = _MOVES
        for sq in SQUARES:
            code = b[sq]
            if code and (code > 0) == turn:
                base = sq * 90
                for to in self._pseudo_targets(sq):
                    m = moves[base + to]
                    yield m if m is not None else _move(sq, to)

    def _leaves_king_safe(self, frm: int, to: int) -> bool:
        b = self.squares
        code = b[frm]
        captured = b[to]
        b[to] = code
        b[frm] = 0
        color = code > 0
        moved_king = abs(code) == KING
        if moved_king:
            self._kings[color] = to
        safe = not self._king_attacked(color)
        if moved_king:
            self._kings[color] = frm
        b[frm] = code
        b[to] = captured
        return safe

    def generate_legal_moves(self) -> Iterator[Move]:
        """Legal moves of the side to move (RULES.md §2), generated lazily.

        Each pseudo-legal move is tried on the board for the safety of the own king, except where
        it cannot matter: when that king is not in check now, a move of another piece can expose
        it only by emptying a square on the king's file or rank (a rook, cannon or the other king
        behind; a cannon's screen), by emptying a horse's leg (the squares diagonally next to the
        king) or by filling a square on the king's file or rank (a new cannon screen); pawns
        attack from next to the king whatever moves elsewhere. The other moves (most of them)
        are legal without the test. Same moves, same order as testing them all."""
        b = self.squares
        turn = self.turn
        k = self._kings[turn]
        moves = _MOVES
        if k < 0 or self._king_attacked(turn):  # no king (an edited position) or in check: test all
            for sq in SQUARES:
                code = b[sq]
                if code and (code > 0) == turn:
                    base = sq * 90
                    for to in self._pseudo_targets(sq):
                        if self._leaves_king_safe(sq, to):
                            m = moves[base + to]
                            yield m if m is not None else _move(sq, to)
            return
        near = _KING_LINES[k]
        king = KING if turn else -KING
        for sq in SQUARES:
            code = b[sq]
            if code and (code > 0) == turn:
                base = sq * 90
                if code == king or sq in _KING_EXPOSERS[k]:
                    for to in self._pseudo_targets(sq):
                        if self._leaves_king_safe(sq, to):
                            m = moves[base + to]
                            yield m if m is not None else _move(sq, to)
                else:
                    for to in self._pseudo_targets(sq):
                        if to not in near or self._leaves_king_safe(sq, to):
                            m = moves[base + to]
                            yield m if m is not None else _move(sq, to)

    def legal_destinations(self) -> list[tuple[int, list[int]]]:
        """The legal moves of the side to move as ``[(from-square, [to-squares])]``, pieces with a
        legal move only, in :meth:`generate_legal_moves`'s order (the same shortcut; no
        :class:`Move` objects: the page's list of legal moves is built from this on every move)."""
        b = self.squares
        turn = self.turn
        k = self._kings[turn]
        safe = self._leaves_king_safe
        out: list[tuple[int, list[int]]] = []
        test_all = k < 0 or self._king_attacked(turn)
        near = _KING_LINES[k] if not test_all else frozenset()
        exposers = _KING_EXPOSERS[k] if not test_all else frozenset()
        king = KING if turn else -KING
        for sq in SQUARES:
            code = b[sq]
            if code and (code > 0) == turn:
                if test_all or code == king or sq in exposers:
                    tos = [to for to in self._pseudo_targets(sq) if safe(sq, to)]
                else:
                    tos = [to for to in self._pseudo_targets(sq) if to not in near or safe(sq, to)]
                if tos:
                    out.append((sq, tos))
        return out

    @property
    def legal_moves(self) -> LegalMoveGenerator:
        """Legal moves as a lazy view supporting ``iter``, ``len`` and ``in``."""
        return LegalMoveGenerator(self)

    def is_pseudo_legal(self, move: Move) -> bool:
        """True if ``move`` follows the piece rules for the side to move."""
        if not (0 <= move.from_square < 90 and 0 <= move.to_square < 90):
            return False
        code = self.squares[move.from_square]
        if code == 0 or (code > 0) != self.turn:
            return False
        return move.to_square in self._pseudo_targets(move.from_square)

    def is_legal(self, move: Move) -> bool:
        """True if ``move`` is legal in this position."""
        return self.is_pseudo_legal(move) and self._leaves_king_safe(move.from_square, move.to_square)

    def illegal_reason(self, move: Move) -> str | None:
        """Why ``move`` is illegal here, in words; None when it is legal."""
        frm, to = move.from_square, move.to_square
        if not (0 <= frm < 90 and 0 <= to < 90):
            return "square out of range (squares are 0-89)"
        code = self.squares[frm]
        side = COLOR_NAMES[self.turn]
        if code == 0:
            return f"no piece on {SQUARE_NAMES[frm]}"
        if (code > 0) != self.turn:
            return f"the piece on {SQUARE_NAMES[frm]} is not {side}'s ({side} to move)"
        if to not in self._pseudo_targets(frm):
            target = self.squares[to]
            if target and (target > 0) == self.turn:
                return f"{SQUARE_NAMES[to]} is occupied by {side}'s own piece"
            return (f"the {_TYPE_NAMES[abs(code)]} on {SQUARE_NAMES[frm]} cannot move to "
                    f"{SQUARE_NAMES[to]}")
        if not self._leaves_king_safe(frm, to):
            return f"it would leave the {side} king in check or facing the other king"
        return None

    def is_capture(self, move: Move) -> bool:
        """True if ``move`` captures a piece."""
        return self.squares[move.to_square] != 0

    def gives_check(self, move: Move) -> bool:
        """True if the (legal) ``move`` checks the opponent."""
        self.push(move, validate=False)
        try:
            return self.is_check()
        finally:
            self.pop()

    # -- make / unmake ---------------------------------------------------

    def push(self, move: Move, *, validate: bool = True) -> None:
        """Play ``move``.

        Raises :class:`IllegalMoveError` (naming the move, the position and the
        reason) when the move is not legal; the board is then unchanged.
        ``validate=False`` skips the check for callers that already know. Raises
        :class:`TypeError` when ``move`` is not a :class:`Move` (text goes to :meth:`push_iccs`).
        """
        if validate and not isinstance(move, Move):
            raise TypeError(f"push() takes a Move, got {type(move).__name__} {move!r}: "
                            "use Move.from_iccs(text) or board.push_iccs(text) for ICCS text")
        if validate and not self.is_legal(move):
            reason = self.illegal_reason(move) or "illegal"
            raise IllegalMoveError(f"illegal move {_move_text(move)} in {self.fen()}: {reason}")
        b = self.squares
        code = b[move.from_square]
        captured = b[move.to_square]
        self._stack.append(self.halfmove_clock << 4 | captured + 8)
        self.move_stack.append(move)
        b[move.to_square] = code
        b[move.from_square] = 0
        if abs(code) == KING:
            self._kings[code > 0] = move.to_square
        self.halfmove_clock = 0 if captured else self.halfmove_clock + 1
        if not self.turn:
            self.fullmove_number += 1
        self.turn = not self.turn

    def push_iccs(self, text: str) -> Move:
        """Parse ICCS ``text``, check and play it; returns the move."""
        move = Move.from_iccs(text)
        self.push(move)
        return move

    def parse_move(self, text: str) -> Move:
        """The legal move written ``text`` in ICCS, Chinese or WXF notation (detected).

        Raises :class:`InvalidMoveError`, :class:`IllegalMoveError` or
        :class:`AmbiguousMoveError` naming the problem (see :mod:`xiangqi.core.notation`).
        """
        return _notation.parse_move(self, text)

    def push_text(self, text: str) -> Move:
        """Parse ``text`` (ICCS, Chinese or WXF), play it and return the move."""
        move = self.parse_move(text)
        self.push(move)
        return move

    def move_text(self, move: Move, notation: str = "chinese") -> str:
        """``move`` written in ``notation`` (``chinese``, ``wxf`` or ``iccs``) for this position,
        e.g. ``炮二平五``. Raises :class:`IllegalMoveError` if the move is not legal here."""
        return _notation.move_to_text(self, move, notation)

    def pop(self) -> Move:
        """Take back the last move and return it. Raises IndexError if none."""
        undo = self._stack.pop()
        move = self.move_stack.pop()
        b = self.squares
        code = b[move.to_square]
        b[move.from_square] = code
        b[move.to_square] = (undo & 15) - 8
        if abs(code) == KING:
            self._kings[code > 0] = move.from_square
        self.halfmove_clock = undo >> 4
        self.turn = not self.turn
        if not self.turn:
            self.fullmove_number -= 1
        return move

    def peek(self) -> Move:
        """The last move played. Raises IndexError if none."""
        return self.move_stack[-1]

    def captured_piece(self, ply: int = -1) -> Piece | None:
        """The piece captured by the move at ``ply`` of the history (default: last)."""
        code = _undo_captured(self._stack[ply])
        return None if code == 0 else Piece(abs(code), code > 0)

    # -- game end --------------------------------------------------------

    def is_checkmate(self) -> bool:
        """In check and no legal move (将死): the side to move loses."""
        return self.is_check() and not any(True for _ in self.generate_legal_moves())

    def is_stalemate(self) -> bool:
        """Not in check and no legal move (困毙): the side to move loses (RULES.md §3)."""
        return not self.is_check() and not any(True for _ in self.generate_legal_moves())

    def is_insufficient_material(self) -> bool:
        """Neither side has a rook, horse, cannon or pawn (RULES.md §6)."""
        return not any(abs(c) in (ROOK, HORSE, CANNON, PAWN) for c in self.squares)

    def position_key(self) -> tuple[str, bool]:
        """Hashable key of the position for repetition: board and side to move."""
        return (self.board_fen(), self.turn)

    def outcome(self, rules: object | None = None) -> Outcome | None:
        """The result if the game is over, else None.

        Checks mate and stalemate (the side to move loses), then the repetition
        rulings, the move limit and insufficient material through the referee
        (:mod:`xiangqi.core.referee`) with ``rules`` (default: CXA).
        """
        # Imported on first use, not with this module: the referee and its classifier are about
        # 2,300 lines that ``import xiangqi`` (and every board user) need not load. Either way the
        # import runs one way: the referee works on the board it is given and never imports this
        # module (tests/test_layers.py counts this import too).
        from xiangqi.core.referee import outcome_of

        return outcome_of(self, rules)

    def is_game_over(self) -> bool:
        """True if :meth:`outcome` gives a result."""
        return self.outcome() is not None

    # -- perft -----------------------------------------------------------

    def perft(self, depth: int) -> int:
        """Number of leaf nodes of the legal move tree to ``depth`` plies."""
        if depth <= 0:
            return 1
        moves = list(self.generate_legal_moves())
        if depth == 1:
            return len(moves)
        n = 0
        for m in moves:
            self.push(m, validate=False)
            n += self.perft(depth - 1)
            self.pop()
        return n

    # -- display ---------------------------------------------------------

    def __str__(self) -> str:
        lines = []
        for r in range(9, -1, -1):
            row = []
            for f in range(9):
                code = self.squares[square(f, r)]
                if code == 0:
                    row.append(".")
                else:
                    s = PIECE_SYMBOLS[abs(code)]
                    row.append(s.upper() if code > 0 else s)
            lines.append(f"{r} " + " ".join(row))
        lines.append("  a b c d e f g h i")
        return "\n".join(lines)

    def unicode(self) -> str:
        """The board drawn with Chinese piece names (Red 帅…, Black 将…)."""
        lines = []
        for r in range(9, -1, -1):
            row = []
            for f in range(9):
                p = self.piece_at(square(f, r))
                row.append("＋" if p is None else p.chinese())
            lines.append(f"{r} " + "".join(row))
        lines.append("  ａｂｃｄｅｆｇｈｉ")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Board({self.fen()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self.squares == other.squares and self.turn == other.turn

    __hash__ = None  # type: ignore[assignment]
