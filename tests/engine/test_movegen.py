"""Numba move generation against the published perft counts and the pure-Python core."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.conftest import read_tsv

from xiangqi.core.board import Board
from xiangqi.engine import movegen

ROWS = read_tsv("perft.tsv")
FAST_LIMIT = 2_000_000


def _param(row: dict[str, str]):
    nodes = int(row["nodes"])
    marks = [pytest.mark.slow] if nodes > FAST_LIMIT else []
    return pytest.param(row["fen"], int(row["depth"]), nodes, marks=marks, id=f"{row['id']}-d{row['depth']}")


@pytest.mark.parametrize(("fen", "depth", "nodes"), [_param(r) for r in ROWS])
def test_perft_matches_reference(fen: str, depth: int, nodes: int) -> None:
    assert movegen.perft(Board(fen), depth) == nodes


def test_perft_depth_zero_and_negative() -> None:
    assert movegen.perft(Board(), 0) == 1
    with pytest.raises(ValueError, match="depth must be >= 0"):
        movegen.perft(Board(), -1)


def test_perft_does_not_modify_board() -> None:
    b = Board("r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1")
    before = b.fen()
    movegen.perft(b, 3)
    assert b.fen() == before


def _random_positions(n: int, seed: int) -> list[Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        b = Board()
        for _ in range(rng.randrange(4, 90)):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(rng.choice(moves), validate=False)
        out.append(b)
    return out


def test_legal_moves_equal_core_on_random_games() -> None:
    buf = np.zeros(movegen.MAX_MOVES, np.int64)
    checked = 0
    for b in _random_positions(150, seed=7):
        bd, ks, side = movegen.board_arrays(b)
        n = movegen.gen_legal(bd, ks, side, buf)
        kernel = sorted(movegen.int_to_move(m).iccs() for m in buf[:n])
        core = sorted(m.iccs() for m in b.legal_moves)
        assert kernel == core, b.fen()
        in_check = bool(movegen.king_attacked(bd, int(ks[side]), side))
        assert in_check == b.is_check(), b.fen()
        checked += 1
    assert checked == 150


def test_move_codes_round_trip() -> None:
    for m in list(Board().legal_moves):
        assert movegen.int_to_move(movegen.move_to_int(m)) == m
