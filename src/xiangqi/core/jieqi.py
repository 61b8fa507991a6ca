"""揭棋 (Jieqi, "uncovering" xiangqi): the rules, its FEN extension and its move tokens.

The rule set (docs/JIEQI.md gives it in full, with its sources):

* Every piece but the two kings starts face down (暗子) on the standard starting squares, the 15
  pieces of each side shuffled over that side's 15 squares.
* A hidden piece moves as the piece whose starting square it stands on (the hidden piece on b0
  moves as a horse, the one on d0 as an advisor: to e1 only). It is turned face up (揭) by its
  first move and from then on moves as what it is.
* Revealed advisors and elephants are not bound to the palace or their own half: an advisor steps
  one point diagonally anywhere, an elephant two points diagonally anywhere (its eye still blocks).
  Kings stay in the palace; a pawn steps forward, and sideways once it stands across the river,
  wherever it was revealed.
* A hidden piece may capture and be captured. Who learns the identity of a hidden piece that is
  captured is a setting of the game (:data:`CAPTURE_REVEAL_MODES`): the capturer only (天天象棋's
  rule, the default) or both players. The record keeps the truth either way.
* Check, checkmate and stalemate (困毙, a loss) as in xiangqi, kings may not face each other. A
  position repeated three times ends the game: a side that gave check with every one of its moves
  since the first time loses (长将), otherwise it is a draw; 120 plies without a capture or a reveal
  are a draw, as are two bare kings.

Squares are ``rank * 9 + file`` (file 0-8 = a-i from Red's left, rank 0-9 from Red's side), as in
:mod:`xiangqi.core.board`. A piece on the board is a letter: ``KABNRCP`` Red, ``kabnrcp`` Black
(king, advisor, elephant/bishop, horse/knight, rook, cannon, pawn), ``X``/``x`` a hidden piece of
Red/Black.

**FEN extension** (the convention of JieqiBox's records): hidden pieces are ``X``/``x`` in the board
field, and a second field lists the identities still face down as letters with counts (Red upper
case, Black lower case; ``-`` when none), then the usual side to move, ``- -``, the plies since a
capture or a reveal, and the move number::

    xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX A2B2N2R2C2P5a2b2n2r2c2p5 w - - 0 1

The pool of a referee's position holds exactly the identities of the hidden pieces on the board; a
player's view (:meth:`JieqiBoard.view`) may hold more (a hidden piece of its own that the opponent
captured and saw, it did not): a reveal is drawn from the pool, each identity with the chance of
its count.

**Move tokens**: a move is written in ICCS (``h2e2``), then ``=L`` when the moving piece was hidden
and turned up as ``L``, then ``xL`` when it took a hidden piece that was an ``L`` (letters upper
case for both sides: the mover's reveal and the captured piece's identity)::

    h2e2=R      the hidden piece on h2 moved as a cannon to e2 and is a rook
    b2b9xN      a revealed piece on b2 took the hidden piece on b9, a horse
    b0c2=PxN    both at once
"""

from __future__ import annotations

import dataclasses
import random as _random
import re
from collections import Counter
from collections.abc import Iterable, Iterator

from xiangqi.core.board import BLACK, RED, Color, Termination, board_fen_grid
from xiangqi.core.outcome import Outcome, draw, win

__all__ = [
    "START_FEN",
    "START_KIND",
    "PIECE_COUNTS",
    "CAPTURE_REVEAL_MODES",
    "JieqiBoard",
    "JieqiMove",
    "JieqiError",
    "parse_token",
    "deal",
    "JieqiRecord",
    "write_pgn",
    "read_pgn",
    "square_name",
    "parse_square",
    "kind_of",
    "NAMES_ZH",
]

FILES = "abcdefghi"
#: The standard xiangqi start: what moves where while the pieces are face down.
_STANDARD = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR"
#: The 揭棋 start position in the FEN extension.
START_FEN = "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX A2B2N2R2C2P5a2b2n2r2c2p5 w - - 0 1"
#: The hidden pieces of one side at the start, by identity.
PIECE_COUNTS: dict[str, int] = {"A": 2, "B": 2, "N": 2, "R": 2, "C": 2, "P": 5}
#: Who sees the identity of a hidden piece when it is captured: ``capturer`` (天天象棋) or ``both``.
CAPTURE_REVEAL_MODES = ("capturer", "both")
#: Plies without a capture or a reveal that end the game in a draw.
MOVE_LIMIT_PLIES = 120
NAMES_ZH = {
    "K": ("帅", "将"),
    "A": ("仕", "士"),
    "B": ("相", "象"),
    "N": ("马", "马"),
    "R": ("车", "车"),
    "C": ("炮", "炮"),
    "P": ("兵", "卒"),
}
_CN = "一二三四五六七八九"
_FW = "１２３４５６７８９"
_TOKEN = re.compile(r"^([a-i][0-9])-?([a-i][0-9])(?:=([ABNRCP]))?(?:x([ABNRCP]))?$")


class JieqiError(ValueError):
    """A 揭棋 position, move or token that is not valid (the message says why)."""


def square_name(sq: int) -> str:
    """``0`` -> ``a0``, ``89`` -> ``i9``."""
    return FILES[sq % 9] + str(sq // 9)


def parse_square(name: str) -> int:
    """``a0`` -> 0; raises :class:`JieqiError` for anything else."""
    if len(name) != 2 or name[0] not in FILES or not name[1].isdigit():
        raise JieqiError(f"not a square: {name!r}")
    return int(name[1]) * 9 + FILES.index(name[0])


def _standard_grid() -> list[str | None]:
    return board_fen_grid(_STANDARD)


#: ``START_KIND[sq]``: the piece (upper case) a hidden piece on ``sq`` moves as, or None where no
#: piece starts (the kings' squares included: kings are never hidden).
START_KIND: tuple[str | None, ...] = tuple(
    None if ch is None or ch in "Kk" else ch.upper() for ch in _standard_grid()
)
#: Which side's piece starts on a square (True Red), None for an empty start square.
_START_SIDE: tuple[Color | None, ...] = tuple(None if ch is None else ch.isupper() for ch in _standard_grid())


def kind_of(ch: str, sq: int) -> str:
    """How the piece letter ``ch`` on ``sq`` moves: its upper-case letter, a hidden piece's being
    :data:`START_KIND` of ``sq``."""
    if ch in "Xx":
        k = START_KIND[sq]
        if k is None:
            raise JieqiError(f"a hidden piece on {square_name(sq)}, where no piece starts")
        return k
    return ch.upper()


# -- move tables -----------------------------------------------------------------------------------


def _on(f: int, r: int) -> bool:
    return 0 <= f < 9 and 0 <= r < 10


def _in_palace(f: int, r: int, red: bool) -> bool:
    return 3 <= f <= 5 and (0 <= r <= 2 if red else 7 <= r <= 9)


_ORTH = ((1, 0), (-1, 0), (0, 1), (0, -1))
_DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))
RAYS: list[tuple[tuple[int, ...], ...]] = []
HORSE: list[tuple[tuple[int, int], ...]] = []  # (to, leg)
HORSE_FROM: list[tuple[tuple[int, int], ...]] = []  # (from, leg) of horses that attack the square
ELEPHANT: list[tuple[tuple[int, int], ...]] = []  # (to, eye), anywhere
ADVISOR: list[tuple[int, ...]] = []  # anywhere
ADVISOR_PALACE: dict[bool, list[tuple[int, ...]]] = {RED: [], BLACK: []}
KING_STEPS: dict[bool, list[tuple[int, ...]]] = {RED: [], BLACK: []}
for _sq in range(90):
    _f, _r = _sq % 9, _sq // 9
    rays = []
    for df, dr in _ORTH:
        ray, f, r = [], _f + df, _r + dr
        while _on(f, r):
            ray.append(r * 9 + f)
            f, r = f + df, r + dr
        rays.append(tuple(ray))
    RAYS.append(tuple(rays))
    hs = []
    for df, dr in _ORTH:
        for sf, sr in ((dr, df), (-dr, -df)):
            tf, tr = _f + 2 * df + sf, _r + 2 * dr + sr
            if _on(tf, tr):
                hs.append((tr * 9 + tf, (_r + dr) * 9 + _f + df))
    HORSE.append(tuple(hs))
    ELEPHANT.append(
        tuple(
            ((_r + 2 * dr) * 9 + _f + 2 * df, (_r + dr) * 9 + _f + df)
            for df, dr in _DIAG
            if _on(_f + 2 * df, _r + 2 * dr)
        )
    )
    ADVISOR.append(tuple((_r + dr) * 9 + _f + df for df, dr in _DIAG if _on(_f + df, _r + dr)))
    for side in (RED, BLACK):
        ADVISOR_PALACE[side].append(
            tuple(
                (_r + dr) * 9 + _f + df
                for df, dr in _DIAG
                if _in_palace(_f + df, _r + dr, side) and _in_palace(_f, _r, side)
            )
        )
        KING_STEPS[side].append(
            tuple((_r + dr) * 9 + _f + df for df, dr in _ORTH if _in_palace(_f + df, _r + dr, side))
        )
for _sq in range(90):
    HORSE_FROM.append(tuple((frm, leg) for frm in range(90) for to, leg in HORSE[frm] if to == _sq))
del _sq, _f, _r


@dataclasses.dataclass(frozen=True, slots=True)
class JieqiMove:
    """A move: ``frm``/``to`` squares, ``reveal`` the identity the moving hidden piece turned up as
    (upper case) and ``captured`` that of a hidden piece it took (upper case; None when the piece
    taken was revealed, when nothing was taken, or when the identity is unknown to a view)."""

    frm: int
    to: int
    reveal: str | None = None
    captured: str | None = None

    @property
    def iccs(self) -> str:
        """The squares only: ``h2e2``."""
        return square_name(self.frm) + square_name(self.to)

    def token(self) -> str:
        """The record's token: ``h2e2``, ``h2e2=R``, ``b2b9xN``, ``b0c2=PxN`` (module text)."""
        return (
            self.iccs
            + (f"={self.reveal}" if self.reveal else "")
            + (f"x{self.captured}" if self.captured else "")
        )

    def __str__(self) -> str:
        return self.token()


def parse_token(text: str) -> JieqiMove:
    """A move token (module text) as a :class:`JieqiMove`; raises :class:`JieqiError`."""
    m = _TOKEN.match(text.strip())
    if not m:
        raise JieqiError(
            f"not a 揭棋 move: {text!r} (ICCS, then =L for a reveal, xL for a hidden piece taken)"
        )
    return JieqiMove(parse_square(m.group(1)), parse_square(m.group(2)), m.group(3), m.group(4))


@dataclasses.dataclass(slots=True)
class _Undo:
    move: JieqiMove
    piece: str
    target: str | None
    pool_captured: bool
    halfmove: int
    gave_check: bool


def _parse_pool(text: str) -> dict[Color, Counter]:
    pool: dict[Color, Counter] = {RED: Counter(), BLACK: Counter()}
    if text == "-":
        return pool
    if not re.fullmatch(r"(?:[ABNRCPabnrcp][0-9]*)+", text):
        raise JieqiError(
            f"not a hidden-piece pool: {text!r} (letters with counts, e.g. A2B2N2R2C2P5a2b2n2r2c2p5)"
        )
    for letter, count in re.findall(r"([A-Za-z])([0-9]*)", text):
        pool[letter.isupper()][letter.upper()] += int(count) if count else 1
    return pool


def _pool_text(pool: dict[Color, Counter]) -> str:
    out = "".join(f"{k}{pool[RED][k]}" for k in "ABNRCP" if pool[RED][k] > 0)
    out += "".join(f"{k.lower()}{pool[BLACK][k]}" for k in "ABNRCP" if pool[BLACK][k] > 0)
    return out or "-"


class JieqiBoard:
    """A 揭棋 position with its move stack (``push``/``pop``), in the style of
    :class:`~xiangqi.core.board.Board`.

    ``squares`` is a list of 90 letters or None (module text); ``pool[RED]``/``pool[BLACK]`` count
    the identities still face down (see the module text: exact for the referee's board, possibly
    larger in a player's view); ``turn`` is :data:`RED` or :data:`BLACK`. Raises
    :class:`JieqiError` for a FEN that is not a 揭棋 position (a hidden piece off its side's start
    squares, a pool smaller than the hidden pieces, a missing king).
    """

    def __init__(self, fen: str = START_FEN) -> None:
        self.set_fen(fen)

    # -- FEN ----------------------------------------------------------------------------------------
    def set_fen(self, fen: str) -> None:
        """Set the position from the FEN extension (module text). A plain xiangqi FEN (no pool
        field) is taken with an empty pool unless it has hidden pieces: then the pool is the full
        set less the revealed pieces of that side on the board."""
        parts = fen.split()
        if not parts:
            raise JieqiError("empty FEN")
        rows = parts[0].split("/")
        if len(rows) != 10:
            raise JieqiError(f"a FEN board has 10 ranks, got {len(rows)}: {parts[0]!r}")
        squares: list[str | None] = [None] * 90
        for i, row in enumerate(rows):
            rank, f = 9 - i, 0
            for ch in row:
                if ch.isdigit():
                    f += int(ch)
                elif ch in "KABNRCPXkabnrcpx":
                    if f > 8:
                        raise JieqiError(f"rank {rank} of the FEN has more than 9 files")
                    squares[rank * 9 + f] = ch
                    f += 1
                else:
                    raise JieqiError(f"not a 揭棋 piece letter: {ch!r}")
            if f != 9:
                raise JieqiError(f"rank {rank} of the FEN has {f} files, not 9")
        rest = parts[1:]
        if rest and rest[0] not in ("w", "b", "r"):
            pool = _parse_pool(rest[0])
            rest = rest[1:]
        else:
            pool = None
        turn = (rest[0] if rest else "w") != "b"
        halfmove = int(rest[3]) if len(rest) > 3 and rest[3].isdigit() else 0
        fullmove = int(rest[4]) if len(rest) > 4 and rest[4].isdigit() else 1
        for sq, ch in enumerate(squares):
            if ch is not None and ch in "Xx":
                if START_KIND[sq] is None or _START_SIDE[sq] != (ch == "X"):
                    raise JieqiError(
                        f"a hidden {'Red' if ch == 'X' else 'Black'} piece on {square_name(sq)}, "
                        "which is not one of that side's starting squares"
                    )
        for side, king in ((RED, "K"), (BLACK, "k")):
            if squares.count(king) != 1:
                raise JieqiError(f"the FEN needs one {'Red' if side else 'Black'} king")
        if pool is None:
            pool = {RED: Counter(), BLACK: Counter()}
            for side in (RED, BLACK):
                if any(ch == ("X" if side else "x") for ch in squares):
                    c = Counter(PIECE_COUNTS)
                    for ch in squares:
                        if ch and ch not in "Xx" and ch.isupper() == side and ch.upper() != "K":
                            c[ch.upper()] -= 1
                    if any(v < 0 for v in c.values()):
                        raise JieqiError("the FEN has no pool field and more revealed pieces than a side has")
                    pool[side] = +c
        for side in (RED, BLACK):
            hidden = sum(1 for ch in squares if ch == ("X" if side else "x"))
            if sum(pool[side].values()) < hidden:
                raise JieqiError(
                    f"{'Red' if side else 'Black'} has {hidden} hidden pieces but a pool of "
                    f"{sum(pool[side].values())}"
                )
        self.squares = squares
        self.pool = pool
        self.turn: Color = turn
        self.halfmove = halfmove
        self.fullmove = fullmove
        self.start_fen = self.fen()
        self._stack: list[_Undo] = []
        self._keys: list[str] = [self._key()]
        self._checks: list[bool] = []  # whether each ply's move gave check

    def board_fen(self) -> str:
        """The board field only."""
        rows = []
        for rank in range(9, -1, -1):
            row, empty = "", 0
            for f in range(9):
                ch = self.squares[rank * 9 + f]
                if ch is None:
                    empty += 1
                else:
                    row += (str(empty) if empty else "") + ch
                    empty = 0
            rows.append(row + (str(empty) if empty else ""))
        return "/".join(rows)

    def fen(self) -> str:
        """The position in the FEN extension (module text)."""
        return (
            f"{self.board_fen()} {_pool_text(self.pool)} {'w' if self.turn else 'b'} - - "
            f"{self.halfmove} {self.fullmove}"
        )

    def _key(self) -> str:
        return self.board_fen() + ("w" if self.turn else "b")

    def copy(self) -> JieqiBoard:
        """A copy of the position and its history."""
        b = JieqiBoard.__new__(JieqiBoard)
        b.squares = list(self.squares)
        b.pool = {RED: Counter(self.pool[RED]), BLACK: Counter(self.pool[BLACK])}
        b.turn, b.halfmove, b.fullmove, b.start_fen = self.turn, self.halfmove, self.fullmove, self.start_fen
        b._stack = list(self._stack)
        b._keys = list(self._keys)
        b._checks = list(self._checks)
        return b

    def view(self, side: Color, unseen: Iterable[str] = ()) -> JieqiBoard:
        """A copy as ``side`` knows it: ``unseen`` are the identities (upper case) of ``side``'s own
        hidden pieces that the opponent captured without ``side`` seeing them; they stay in
        ``side``'s pool (a reveal is then drawn from more identities than there are hidden pieces)."""
        b = self.copy()
        for k in unseen:
            b.pool[side][k.upper()] += 1
        return b

    # -- queries ------------------------------------------------------------------------------------
    @property
    def moves(self) -> list[JieqiMove]:
        """The moves pushed so far, oldest first."""
        return [u.move for u in self._stack]

    def is_hidden(self, sq: int) -> bool:
        """True when a hidden piece stands on ``sq``."""
        ch = self.squares[sq]
        return ch is not None and ch in "Xx"

    def king_square(self, side: Color) -> int:
        """The square of ``side``'s king."""
        return self.squares.index("K" if side else "k")

    def hidden_count(self, side: Color) -> int:
        """How many hidden pieces ``side`` has on the board."""
        h = "X" if side else "x"
        return sum(1 for ch in self.squares if ch == h)

    def reveal_odds(self, side: Color) -> list[tuple[str, float]]:
        """``[(identity, chance)]`` of a reveal of ``side``'s hidden piece (the pool's counts)."""
        total = sum(self.pool[side].values())
        return [(k, v / total) for k, v in sorted(self.pool[side].items()) if v > 0] if total else []

    def attacked(self, sq: int, by: Color) -> bool:
        """Whether a piece of ``by`` attacks ``sq`` (hidden pieces as their starting squares' pieces;
        the king of ``by`` counts as attacking along an open file, the 'flying general')."""
        s = self.squares
        for d, ray in enumerate(RAYS[sq]):
            screen = False
            for t in ray:
                ch = s[t]
                if ch is None:
                    continue
                if ch.isupper() != by:
                    if screen:
                        break
                    screen = True
                    continue
                k = kind_of(ch, t)
                if not screen:
                    if k == "R" or (k == "K" and d >= 2) or (k == "P" and _pawn_hits(t, sq, by)):
                        return True
                    screen = True
                else:
                    if k == "C":
                        return True
                    break
        for frm, leg in HORSE_FROM[sq]:
            ch = s[frm]
            if ch is not None and ch.isupper() == by and s[leg] is None and kind_of(ch, frm) == "N":
                return True
        for frm in ADVISOR[sq]:
            ch = s[frm]
            if ch is not None and ch.isupper() == by and kind_of(ch, frm) == "A":
                if ch not in "Xx" or sq in ADVISOR_PALACE[by][frm]:
                    return True
        for frm, eye in ELEPHANT[sq]:
            ch = s[frm]
            if ch is not None and ch.isupper() == by and s[eye] is None and kind_of(ch, frm) == "B":
                return True
        return False

    def is_check(self) -> bool:
        """Whether the side to move is in check."""
        return self.attacked(self.king_square(self.turn), not self.turn)

    def pseudo_moves(self) -> Iterator[tuple[int, int]]:
        """``(frm, to)`` of every move of the side to move by the pieces' movement, own king's
        safety not yet tested."""
        s, side = self.squares, self.turn
        for frm in range(90):
            ch = s[frm]
            if ch is None or ch.isupper() != side:
                continue
            hidden = ch in "Xx"
            k = kind_of(ch, frm)
            if k == "R" or k == "C":
                for ray in RAYS[frm]:
                    screen = False
                    for t in ray:
                        tc = s[t]
                        if not screen:
                            if tc is None:
                                yield frm, t
                                continue
                            if k == "R":
                                if tc.isupper() != side:
                                    yield frm, t
                                break
                            screen = True
                        elif tc is not None:
                            if tc.isupper() != side:
                                yield frm, t
                            break
                continue
            if k == "N":
                targets: Iterable[int] = (t for t, leg in HORSE[frm] if s[leg] is None)
            elif k == "B":
                targets = (t for t, eye in ELEPHANT[frm] if s[eye] is None)
            elif k == "A":
                targets = ADVISOR_PALACE[side][frm] if hidden else ADVISOR[frm]
            elif k == "K":
                targets = KING_STEPS[side][frm]
            else:  # P
                targets = _pawn_steps(frm, side)
            for t in targets:
                tc = s[t]
                if tc is None or tc.isupper() != side:
                    yield frm, t

    def _safe_after(self, frm: int, to: int) -> bool:
        s = self.squares
        piece, target = s[frm], s[to]
        s[to], s[frm] = piece, None
        try:
            return not self.attacked(self.king_square(self.turn), not self.turn)
        finally:
            s[frm], s[to] = piece, target

    def legal_moves(self) -> list[JieqiMove]:
        """Every legal move of the side to move, without identities (:class:`JieqiMove` with
        ``reveal``/``captured`` None), in square order."""
        return [JieqiMove(f, t) for f, t in self.pseudo_moves() if self._safe_after(f, t)]

    def is_legal(self, frm: int, to: int) -> bool:
        """Whether moving from ``frm`` to ``to`` is legal now."""
        return (frm, to) in set(self.pseudo_moves()) and self._safe_after(frm, to)

    # -- moves --------------------------------------------------------------------------------------
    def push(self, move: JieqiMove) -> None:
        """Make ``move``. A hidden piece's move needs its ``reveal`` (an identity in the mover's
        pool); taking a hidden piece takes ``captured`` out of the opponent's pool when given (left
        None in a view that does not know it). Raises :class:`JieqiError` for an illegal move, a
        missing or impossible reveal, or a ``captured`` identity not in the pool."""
        frm, to = move.frm, move.to
        if not self.is_legal(frm, to):
            raise JieqiError(f"illegal move {move.iccs} in {self.fen()}")
        self.push_unchecked(move)

    def push_unchecked(self, move: JieqiMove) -> None:
        """:meth:`push` without the legality test (the engine's moves come from :meth:`legal_moves`);
        the reveal and the pool are still checked."""
        s, side = self.squares, self.turn
        frm, to = move.frm, move.to
        piece, target = s[frm], s[to]
        if piece is None:
            raise JieqiError(f"no piece on {square_name(frm)}")
        new = piece
        if piece in "Xx":
            if move.reveal is None:
                raise JieqiError(f"{move.iccs} moves a hidden piece: it needs the identity it turns up as")
            if self.pool[side][move.reveal] <= 0:
                raise JieqiError(f"{move.iccs}={move.reveal}: no hidden {move.reveal} is left in the pool")
            self.pool[side][move.reveal] -= 1
            new = move.reveal if side else move.reveal.lower()
        elif move.reveal is not None:
            raise JieqiError(f"{move.token()}: the piece on {square_name(frm)} is not hidden")
        pool_captured = False
        if target is not None and target in "Xx":
            if move.captured is not None:
                if self.pool[not side][move.captured] <= 0:
                    if piece in "Xx":
                        self.pool[side][move.reveal] += 1
                    raise JieqiError(
                        f"{move.token()}: no hidden {move.captured} is left in the opponent's pool"
                    )
                self.pool[not side][move.captured] -= 1
                pool_captured = True
        elif move.captured is not None:
            if piece in "Xx":
                self.pool[side][move.reveal] += 1
            raise JieqiError(f"{move.token()}: the piece taken on {square_name(to)} is not hidden")
        s[to], s[frm] = new, None
        undo = _Undo(move, piece, target, pool_captured, self.halfmove, False)
        self.halfmove = 0 if target is not None or piece in "Xx" else self.halfmove + 1
        if not side:
            self.fullmove += 1
        self.turn = not side
        undo.gave_check = self.is_check()
        self._stack.append(undo)
        self._keys.append(self._key())
        self._checks.append(undo.gave_check)

    def pop(self) -> JieqiMove:
        """Take back the last move and return it. Raises IndexError when there is none."""
        u = self._stack.pop()
        self._keys.pop()
        self._checks.pop()
        side = not self.turn
        self.turn = side
        if not side:
            self.fullmove -= 1
        self.halfmove = u.halfmove
        s = self.squares
        s[u.move.frm], s[u.move.to] = u.piece, u.target
        if u.piece in "Xx":
            self.pool[side][u.move.reveal] += 1
        if u.pool_captured:
            self.pool[not side][u.move.captured] += 1
        return u.move

    def push_token(self, token: str) -> JieqiMove:
        """Parse a move token (module text), check it against the position and make it."""
        move = parse_token(token)
        piece = self.squares[move.frm]
        if piece is not None and piece in "Xx" and move.reveal is None:
            raise JieqiError(f"{token}: the piece on {square_name(move.frm)} is hidden; the token needs =L")
        self.push(move)
        return move

    # -- the end ------------------------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        """The game's outcome if it is over by the rules (module text), else None: mate and
        stalemate (a loss), three-fold repetition (perpetual check loses, otherwise a draw), the
        120-ply limit, bare kings."""
        if not self.legal_moves():
            loser = self.turn
            if self.is_check():
                return win(Termination.CHECKMATE, not loser, "将死", "checkmate")
            return win(
                Termination.STALEMATE,
                not loser,
                f"{'红方' if loser else '黑方'}困毙",
                f"{'Red' if loser else 'Black'} is stalemated (no legal move loses)",
            )
        key = self._keys[-1]
        if self._keys.count(key) >= 3:
            first = self._keys.index(key)
            plies = range(first, len(self._checks))  # moves made since the first occurrence
            # ply i (0-based) was made by the side that moved from _keys[i]; Red moved when that key ends in w
            checked = {RED: True, BLACK: True}
            for i in plies:
                mover = self._keys[i].endswith("w")
                checked[mover] = checked[mover] and self._checks[i]
            if checked[RED] != checked[BLACK]:
                loser = RED if checked[RED] else BLACK
                return win(
                    Termination.PERPETUAL,
                    not loser,
                    f"{'红方' if loser else '黑方'}长将",
                    f"{'Red' if loser else 'Black'} checked perpetually",
                )
            return draw(Termination.REPETITION, "三次重复局面", "threefold repetition")
        if self.halfmove >= MOVE_LIMIT_PLIES:
            return draw(
                Termination.MOVE_LIMIT, "六十回合无吃子无揭子", "60 moves without a capture or a reveal"
            )
        if all(ch is None or ch in "Kk" for ch in self.squares):
            return draw(Termination.INSUFFICIENT_MATERIAL, "双方只剩将帅", "bare kings")
        return None

    # -- notation -----------------------------------------------------------------------------------
    def chinese(self, move: JieqiMove, *, show_captured: bool = True) -> str:
        """The move in Chinese notation for the position before it: the piece it moves as (``暗``
        before a hidden one), its file, 进/退/平 and the target, then ``=车`` for the reveal and
        ``×马`` for a hidden piece taken (``×?`` when ``show_captured`` is False).
        Two pieces of one kind on a file are told apart by 前/后 (pawns: 前/中/后, 一…五)."""
        s, frm, to = self.squares, move.frm, move.to
        ch = s[frm]
        if ch is None:
            raise JieqiError(f"no piece on {square_name(frm)}")
        side = ch.isupper()
        hidden = ch in "Xx"
        k = kind_of(ch, frm)
        name = ("暗" if hidden else "") + NAMES_ZH[k][0 if side else 1]

        def num(f: int) -> str:
            return _CN[8 - f] if side else _FW[f]

        f0, r0, f1, r1 = frm % 9, frm // 9, to % 9, to // 9
        same = [r for r in range(10) if s[r * 9 + f0] == ch and kind_of(ch, r * 9 + f0) == k]
        if len(same) > 1:
            order = sorted(same, reverse=side)  # front first
            i = order.index(r0)
            if len(same) == 2:
                head = ("前" if i == 0 else "后") + name
            elif len(same) == 3:
                head = "前中后"[i] + name
            else:
                head = _CN[i] + name
        else:
            head = name + num(f0)
        forward = (r1 > r0) == side
        if r0 == r1:
            tail = "平" + num(f1)
        elif k in "NBA":
            tail = ("进" if forward else "退") + num(f1)
        else:
            n = abs(r1 - r0)
            tail = ("进" if forward else "退") + (_CN[n - 1] if side else _FW[n - 1])
        text = head + tail
        if move.reveal:
            text += "=" + NAMES_ZH[move.reveal][0 if side else 1]
        target = s[to]
        if target is not None and target in "Xx":
            if move.captured and show_captured:
                text += "×" + NAMES_ZH[move.captured][1 if side else 0]
            elif not show_captured:
                text += "×?"
        return text


def _pawn_steps(frm: int, side: Color) -> tuple[int, ...]:
    f, r = frm % 9, frm // 9
    out = []
    fr = r + (1 if side else -1)
    if 0 <= fr <= 9:
        out.append(fr * 9 + f)
    if (r >= 5) if side else (r <= 4):
        if f > 0:
            out.append(frm - 1)
        if f < 8:
            out.append(frm + 1)
    return tuple(out)


def _pawn_hits(frm: int, sq: int, side: Color) -> bool:
    return sq in _pawn_steps(frm, side)


def deal(rng: _random.Random | None = None) -> dict[int, str]:
    """A random deal: ``{square: identity}`` for the 30 starting squares of hidden pieces, each side's
    15 identities (:data:`PIECE_COUNTS`) shuffled over its own 15 squares (``rng.shuffle``). A game
    keeps it secret and reads a hidden piece's identity off its square (hidden pieces never move)."""
    rng = rng or _random.Random()
    out: dict[int, str] = {}
    for side in (RED, BLACK):
        squares = [sq for sq in range(90) if START_KIND[sq] is not None and _START_SIDE[sq] == side]
        ids = [k for k, n in PIECE_COUNTS.items() for _ in range(n)]
        rng.shuffle(ids)
        out.update(zip(squares, ids, strict=True))
    return out


# -- PGN ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class JieqiRecord:
    """A 揭棋 game read from PGN: ``headers``, ``board`` (at the end, its ``moves`` the game's),
    ``result`` (the Result tag) and ``errors`` (strings; the moves read up to the first bad one)."""

    headers: dict[str, str]
    board: JieqiBoard
    result: str = "*"
    errors: list[str] = dataclasses.field(default_factory=list)


_MOVETEXT_SKIP = re.compile(r"\{[^}]*\}|;[^\n]*|\$\d+|\d+\.(?:\.\.)?")


def write_pgn(headers: dict[str, str], board: JieqiBoard, result: str = "*") -> str:
    """A 揭棋 game as PGN: the tags given, then ``[Variant "jieqi"]`` and the start ``[FEN]`` in the
    FEN extension, the moves as tokens (module text: ``h2e2=R``, ``b2b9xN``), numbered, and
    ``result``. Read back by :func:`read_pgn`."""
    tags = {k: v for k, v in headers.items() if k not in ("Variant", "FEN", "SetUp", "Result")}
    tags.update({"Variant": "jieqi", "SetUp": "1", "FEN": board.start_fen, "Result": result})
    out = [
        f'[{k} "{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"]'
        for k, v in tags.items()
    ]
    out.append("")
    words: list[str] = []
    red_first = JieqiBoard(board.start_fen).turn
    number = JieqiBoard(board.start_fen).fullmove
    for i, m in enumerate(board.moves):
        red = (i % 2 == 0) == red_first
        if red:
            words.append(f"{number}.")
        elif i == 0:
            words.append(f"{number}...")
        if not red:
            number += 1
        words.append(m.token())
    words.append(result)
    line, lines = "", []
    for w in words:
        if line and len(line) + 1 + len(w) > 78:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(out + lines) + "\n"


def read_pgn(text: str) -> JieqiRecord:
    """The first game of a 揭棋 PGN text (:func:`write_pgn`'s form; tags read by
    :func:`xiangqi.core.pgn.split_headers`). Raises :class:`JieqiError` when the text is not a 揭棋
    record (no ``[Variant "jieqi"]``) or its FEN is bad; a bad move stops the reading there and is
    reported in ``errors``."""
    from xiangqi.core.pgn import split_headers

    headers, at, errors = split_headers(text.lstrip("\ufeff"))
    if headers.get("Variant", "").strip().lower() != "jieqi":
        raise JieqiError('not a 揭棋 record: it has no [Variant "jieqi"] tag')
    board = JieqiBoard(headers.get("FEN", "").strip() or START_FEN)
    rec = JieqiRecord(headers, board, headers.get("Result", "*"), [str(e) for e in errors])
    body = _MOVETEXT_SKIP.sub(" ", text[at:])
    for word in body.split():
        if word in ("1-0", "0-1", "1/2-1/2", "*"):
            break
        try:
            board.push_token(word)
        except JieqiError as exc:
            rec.errors.append(f"ply {len(board.moves) + 1}: {exc}")
            break
    return rec
