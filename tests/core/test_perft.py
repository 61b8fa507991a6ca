"""Core move generation against the perft counts of tests/data/perft.tsv (from shared/cases)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from xiangqi import Board

DATA = Path(__file__).parent.parent / "data"
LIMIT = 2_000_000


def _rows():
    with open(DATA / "perft.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            nodes = int(row["nodes"])
            marks = [] if nodes <= LIMIT else [pytest.mark.slow]
            yield pytest.param(row["fen"], int(row["depth"]), nodes, marks=marks,
                               id=f"{row['id']}-d{row['depth']}")


@pytest.mark.parametrize(("fen", "depth", "nodes"), list(_rows()))
def test_perft(fen: str, depth: int, nodes: int) -> None:
    board = Board(fen)
    before = board.fen()
    assert board.perft(depth) == nodes
    assert board.fen() == before


def test_every_row_is_used() -> None:
    rows = list(_rows())
    assert len(rows) == 154
    assert sum(1 for r in rows if not r.marks) == 134
