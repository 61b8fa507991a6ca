"""Draw claims in matches (issue 16): an engine's ``nobestmove`` is judged by our referee.

ElephantEye answers ``nobestmove`` in a position it holds drawn; ``xiangqi match`` used to score
that as its forfeit. The fake engine (fake_engine.py) plays the first legal move and claims (or
resigns) on cue.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.match.runner import PlayerSpec, TimeControl, judge_claim, play_game

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")


def fake(mode: str, name: str):
    return PlayerSpec(name, [sys.executable, FAKE, mode], "uci").start()


def play(red_mode: str, black_mode: str):
    red, black = fake(red_mode, "R"), fake(black_mode, "B")
    try:
        return play_game(red, black, ("start", ""), TimeControl(depth=1))
    finally:
        red.quit()
        black.quit()


def test_a_valid_repetition_claim_is_a_draw():
    g = play("claim", "first")
    # the same moves as the referee's own threefold test (test_match.py) up to the second
    # occurrence of the position after '... a9a2 c0a2 b0a0': Red claims there, one cycle before
    # the referee would rule the third occurrence
    moves = " ".join(m.iccs() for m in g.board.move_stack)
    assert moves == ("a0a1 a6a5 a1a0 a5a4 a0a1 a4a3 a1a0 a3a2 a0a1 a2a1 b0a2 a1a0 a2b0 a0b0 b2a2 a9a2 "
                     "c0a2 b0a0 a2c0 a0b0 c0a2 b0a0")
    assert g.board.outcome() is None  # the game itself is not over: only the claim ends it
    assert g.result == "1/2-1/2"
    assert g.reason == "Draw — both sides repeat with allowed moves (claimed by R)"


def test_an_invalid_claim_forfeits():
    g = play("first", "nobestmove")
    assert len(g.board.move_stack) == 1  # Black claimed at once, in the opening
    assert (g.result, g.reason) == ("1-0", "B sent no move (an invalid draw claim)")
    g = play("none", "first")
    assert (g.result, g.reason) == ("0-1", "R sent no move (an invalid draw claim)")
    g = play("resign", "first")
    assert (g.result, g.reason) == ("0-1", "R resigned")


def test_a_claim_in_a_dead_drawn_position_is_a_draw():
    red, black = fake("nobestmove", "R"), fake("first", "B")
    try:
        # 帅仕 against 将象 from the position after a pawn capture: no attacking material
        from xiangqi.match import runner as match

        board = Board("3ak4/9/9/9/9/9/9/4B4/9/4K4 w - - 0 1")
        assert judge_claim(board) is not None and judge_claim(board).winner is None
        assert board.outcome() is not None  # the referee rules it before any claim
        g = match._game_over(red, black, ("x", ""), board, 300, None, 1)
        assert g.result == "1/2-1/2" and "neither side has a rook, horse, cannon or pawn" in g.reason
    finally:
        red.quit()
        black.quit()


ROOKS = "3k5/9/9/9/9/9/9/9/R8/4K3r w - - {} 1"


@pytest.mark.parametrize("clock,valid", [(119, True), (118, False), (100, False), (0, False)])
def test_move_limit_claims(clock, valid):
    # CXA's natural move limit is 120 plies (RULES.md §4): the claim holds when the claimant's
    # next move reaches it; ElephantEye counts 100 plies, which is no draw under our rules
    ruling = judge_claim(Board(ROOKS.format(clock)))
    assert (ruling is not None) == valid
    if valid:
        assert ruling.winner is None and ruling.reason_en == (
            "Draw — 60 moves without a capture with the claimant's next move")
    # a shorter tournament limit moves the threshold
    from xiangqi.core.referee import CXA

    assert judge_claim(Board(ROOKS.format(clock)), CXA.with_move_limit(clock + 1)) is not None


def test_a_repetition_claim_is_judged_by_who_checks_perpetually():
    # Red checks with the rook on every move, Black's king steps aside and back
    board = Board("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1")
    for text in ("a0a9", "d9d8", "a9a8", "d8d9", "a8a9", "d9d8"):
        board.push(Move.from_iccs(text))
    # Red to move, the position after 'a0a9 d9d8' for the second time: not yet ruled
    assert board.outcome() is None
    assert judge_claim(board) is None  # Red, the perpetual checker, cannot claim a draw
    board.push(Move.from_iccs("a9a8"))
    assert board.outcome() is None
    ruling = judge_claim(board)  # Black claims: the referee rules Red's perpetual check
    assert ruling is not None and ruling.result() == "0-1"
    assert ruling.reason_en == "Black wins — Red perpetually checks: Red loses"
