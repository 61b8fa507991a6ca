"""The engine knows the repetition rules (issue 3): in every case of the CXA rule-book
table (tests/data/repetition_cxa.tsv) where the last move completes a forbidden
repetition and loses for its mover, the engine, to move in the position before that
move, picks a move that breaks the cycle instead."""

from __future__ import annotations

import pytest

from xiangqi import Board, Move, Termination
from xiangqi.engine import Engine, Limit

from ..conftest import read_tsv  # type: ignore[import-not-found]


def _offender_cases() -> list[pytest.param]:
    cases = []
    for row in read_tsv("repetition_cxa.tsv"):
        moves = row["moves"].split()
        if not moves or row["winner"] not in ("red", "black"):
            continue
        board = Board(row["fen"])
        for m in moves[:-1]:
            board.push_iccs(m)
        last = Move.from_iccs(moves[-1])
        mover = "red" if board.turn else "black"
        board.push(last)
        out = board.outcome()
        board.pop()
        # Only the rows where the referee itself says the last move loses for its mover.
        if out is None or out.termination != Termination.PERPETUAL or out.winner_name() == mover:
            continue
        cases.append(pytest.param(row["fen"], moves, id=row["id"]))
    return cases


CASES = _offender_cases()


def test_there_are_offender_cases() -> None:
    assert len(CASES) >= 9  # 9 figures of the 2020 rule book end on the losing move


@pytest.mark.parametrize(("fen", "moves"), CASES)
def test_engine_breaks_the_forbidden_cycle(fen: str, moves: list[str]) -> None:
    board = Board(fen)
    for m in moves[:-1]:
        board.push_iccs(m)
    mover = board.turn
    res = Engine(hash_mb=4).search(board, Limit(depth=2))
    assert res.move is not None
    assert res.move != Move.from_iccs(moves[-1])
    board.push(res.move)
    out = board.outcome()
    assert out is None or out.termination != Termination.PERPETUAL or out.winner == mover
