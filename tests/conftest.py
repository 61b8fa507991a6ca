"""Shared test helpers: paths to the project's own test data, playing its rows (also used by bench/)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True, scope="session")
def _own_data_dir(tmp_path_factory):
    """Point ``$XIANGQI_DATA_DIR`` at a directory of this test process for the whole session, so that
    nothing a test forgets to place (a Store(), the engine's endgame tables, a CLI command, a child
    process) reads or writes the user's data dir: shared by the xdist workers, its store lock would
    make two of them fail each other, and tables found there would change what the engine plays."""
    old = os.environ.get("XIANGQI_DATA_DIR")
    os.environ["XIANGQI_DATA_DIR"] = str(tmp_path_factory.mktemp("xiangqi-data"))
    yield
    if old is None:
        os.environ.pop("XIANGQI_DATA_DIR", None)
    else:
        os.environ["XIANGQI_DATA_DIR"] = old


def read_tsv(name: str) -> list[dict[str, str]]:
    """Rows of tests/data/<name> as dicts keyed by the header line."""
    with open(DATA / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def cxa_case(case_id: str):
    """``(board, last_move)`` of a repetition_cxa.tsv row: the board before the row's last move.

    Imports the core lazily so that this conftest stays cheap to load.
    """
    from xiangqi.core.board import Board, Move

    row = next(r for r in read_tsv("repetition_cxa.tsv") if r["id"] == case_id)
    b = Board(row["fen"])
    moves = row["moves"].split()
    for m in moves[:-1]:
        b.push_iccs(m)
    return b, Move.from_iccs(moves[-1])


def play(fen: str, moves: str):
    """The board after the space-separated ICCS ``moves`` from ``fen`` (a row of the repetition tables).

    fsf1191's FEN carries an empty pocket "[]" (Fairy-Stockfish's notation): the board is the same.
    """
    from xiangqi.core.board import Board, Move

    b = Board(fen.replace("[]", ""))
    for m in moves.split():
        b.push(Move.from_iccs(m))
    return b


def winner(board, rules: object) -> str:
    """``"red"``, ``"black"``, ``"draw"`` or ``"none"``: the board's outcome under ``rules``."""
    out = board.outcome(rules)
    return "none" if out is None else out.winner_name()
