"""随机开局: the 90 mirrored arrangements of rooks, horses and cannons over their own squares."""

import random

import pytest

from xiangqi.core.board import STARTING_FEN, Board
from xiangqi.core.variants import (
    ARRANGEMENTS,
    STANDARD_SHUFFLE,
    random_start,
    random_start_fen,
    shuffle_number,
)


def test_ninety_arrangements_and_the_standard_one():
    assert len(ARRANGEMENTS) == 90  # 6! / (2! 2! 2!)
    assert random_start_fen(STANDARD_SHUFFLE) == STARTING_FEN


@pytest.mark.parametrize("n", range(90))
def test_every_start_is_legal_mirrored_and_keeps_the_fixed_pieces(n):
    b = Board(random_start_fen(n))
    assert not b.is_check() and len(list(b.legal_moves)) > 0
    sq = b.squares
    std = Board().squares
    for s in range(90):
        f, r = s % 9, s // 9
        mirror = (9 - r) * 9 + f
        assert sq[s] == -sq[mirror] or sq[s] == sq[mirror] == 0  # the same arrangement for Black
        if (f, r) not in ((0, 0), (1, 0), (7, 0), (8, 0), (1, 2), (7, 2)) and r < 5:
            assert sq[s] == std[s]  # advisors, elephants, king, pawns and empty squares in place
    assert sorted(sq) == sorted(std)  # the same material
    assert shuffle_number(b) == n


def test_random_start_is_repeatable_and_skips_the_standard_position():
    seen = {random_start(random.Random(i))[0] for i in range(400)}
    assert STANDARD_SHUFFLE not in seen and len(seen) > 60
    assert random_start(random.Random(7))[0] == random_start(random.Random(7))[0]
    assert shuffle_number(Board()) == STANDARD_SHUFFLE
    assert random_start_fen(0) == "ccbakabnn/9/1r5r1/p1p1p1p1p/9/9/P1P1P1P1P/1R5R1/9/CCBAKABNN w - - 0 1"
    assert shuffle_number("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/4K4/RNBA1ABNR w - - 0 1") is None
    with pytest.raises(ValueError, match="0-89"):
        random_start_fen(90)
