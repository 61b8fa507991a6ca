"""Shared test helpers: paths to the project's own test data, playing its rows (also used by bench/)."""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).parent / "data"


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
