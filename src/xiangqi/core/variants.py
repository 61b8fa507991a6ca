"""Start positions of the random mode (随机开局).

The rule (issue 17, after 象棋高手's "random mode"): each side's two rooks, two horses and two
cannons are shuffled over their own six starting squares (the rooks' a/i, the horses' b/h on the
back rank, the cannons' b/h on the cannon rank); advisors, elephants, king and pawns stay where
they are. Both sides get the same arrangement, mirrored across the river (a piece on Red's b0 means
the same piece on Black's b9), so the game is fair. The result is an ordinary FEN, so records, the
engine and the referee need nothing new; a record says which shuffle with ``[Variant "random"]``,
``[Shuffle "N"]`` and its ``[FEN]``.

There are 6! / (2! 2! 2!) = 90 arrangements, numbered 0–89 (:func:`random_start`), 0 being the
first in the order of :data:`SLOTS` and the piece letters ``C < N < R``; the standard position is
number :data:`STANDARD_SHUFFLE` (80).
"""

from __future__ import annotations

import itertools
import random as _random

from xiangqi.core.board import Board, grid_board_fen

__all__ = ["SLOTS", "ARRANGEMENTS", "STANDARD_SHUFFLE", "random_start", "shuffle_number", "random_start_fen"]

#: The six shuffled squares of Red, as (file 0-8 = a-i, rank 0-9); Black's are the same files on
#: rank ``9 - rank``.
SLOTS: tuple[tuple[int, int], ...] = ((0, 0), (1, 0), (7, 0), (8, 0), (1, 2), (7, 2))

#: Every arrangement of the letters of ``RRNNCC`` over :data:`SLOTS`, in lexicographic order.
ARRANGEMENTS: tuple[str, ...] = tuple(sorted({"".join(p) for p in itertools.permutations("RRNNCC")}))

#: The number of the standard arrangement (rooks a/i, horses b/h, cannons b2/h2).
STANDARD_SHUFFLE: int = ARRANGEMENTS.index("RNNRCC")


def _fen(arrangement: str) -> str:
    """The FEN of one arrangement (Red to move, move 1)."""
    grid: list[str | None] = [None] * 90  # by square, rank * 9 + file
    for (f, r), ch in [((f, 0), ch) for f, ch in enumerate("..BAKAB..") if ch != "."] \
            + [((f, 3), "P") for f in (0, 2, 4, 6, 8)] + list(zip(SLOTS, arrangement, strict=True)):
        grid[r * 9 + f] = ch
        grid[(9 - r) * 9 + f] = ch.lower()
    return grid_board_fen(grid) + " w - - 0 1"


def random_start_fen(number: int) -> str:
    """The FEN of arrangement ``number`` (0-89). Raises ValueError outside that range."""
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < len(ARRANGEMENTS):
        raise ValueError(f"a random-mode start is numbered 0-{len(ARRANGEMENTS) - 1}, got {number!r}")
    return _fen(ARRANGEMENTS[number])


def random_start(rng: _random.Random | None = None, *, allow_standard: bool = False) -> tuple[int, Board]:
    """A random arrangement: ``(number, board)``. ``rng`` (default: a fresh ``random.Random()``) makes
    it repeatable; the standard position is left out unless ``allow_standard``."""
    rng = rng or _random.Random()
    choices = [n for n in range(len(ARRANGEMENTS)) if allow_standard or n != STANDARD_SHUFFLE]
    n = rng.choice(choices)
    return n, Board(random_start_fen(n))


def shuffle_number(board_or_fen: Board | str) -> int | None:
    """The arrangement number of a position that is a random-mode start (before any move), or None."""
    fen = board_or_fen.fen() if isinstance(board_or_fen, Board) else str(board_or_fen)
    placement = fen.split()[0]
    for n in range(len(ARRANGEMENTS)):
        if random_start_fen(n).split()[0] == placement:
            return n
    return None
