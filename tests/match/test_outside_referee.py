"""``xiangqi match --referee pyffish`` (issue 27): Fairy-Stockfish's rules end the games, ours rule along.

pyffish is a test dependency. The fake engine (fake_engine.py) plays the first legal move, so two of
them repeat a cycle of moves that both referees must rule a draw.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.match.runner import GameResult, MatchResult, PlayerSpec, TimeControl, play_game

pytest.importorskip("pyffish")

from xiangqi.match.outside_referee import PyffishReferee, get_referee, to_fsf  # noqa: E402

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")
MATE_IN_ONE = "3k5/9/9/9/9/9/9/9/7R1/4K4 w - - 0 1"  # h1d1 mates (the e file is the red king's)


def test_coordinates_and_names():
    assert to_fsf(Move.from_iccs("h2e2")) == "h3e3"
    assert to_fsf(Move.from_iccs("a9a0")) == "a10a1"
    assert get_referee("ours") is None and get_referee(None) is None
    assert get_referee("pyffish").name.startswith("pyffish ")
    with pytest.raises(Exception, match="unknown referee 'fsf'"):
        get_referee("fsf")


def test_pyffish_rules_mate_and_a_live_position():
    ref = PyffishReferee()
    b = Board(MATE_IN_ONE)
    assert ref.outcome(b) is None
    b.push(Move.from_iccs("h1d1"))
    assert ref.outcome(b) == ("1-0", "pyffish: checkmate")
    b = Board(MATE_IN_ONE)
    b.push(Move.from_iccs("h1h2"))
    assert ref.outcome(b) is None
    assert ref.outcome(Board()) is None


def test_a_match_game_ended_by_pyffish_keeps_our_ruling():
    red = PlayerSpec("R", [sys.executable, FAKE, "first"], "uci").start()
    black = PlayerSpec("B", [sys.executable, FAKE, "first"], "uci").start()
    try:
        ours = play_game(red, black, ("start", ""), TimeControl(depth=1))
        g = play_game(red, black, ("start", ""), TimeControl(depth=1), referee=PyffishReferee())
    finally:
        red.quit()
        black.quit()
    assert ours.referee == "ours" and ours.own is None
    assert (ours.result, ours.reason) == ("1/2-1/2", "Draw — both sides repeat with allowed moves")
    assert g.referee.startswith("pyffish ")
    assert g.result == "1/2-1/2" and g.reason == "pyffish: repetition, drawn"
    # our referee ruled the same draw at the ply where it ended the game on its own
    assert g.own == (ours.result, ours.reason, len(ours.board.move_stack))
    assert len(g.board.move_stack) >= len(ours.board.move_stack) - 4
    assert not g.rulings_differ


def _game(result: str, own, red: str = "A") -> GameResult:
    return GameResult(red, "B" if red == "A" else "A", "W01", result, "pyffish: x", Board(), 1,
                      referee="pyffish 0.0.90", own=own)


def test_both_tallies_and_the_differing_games_are_reported():
    res = MatchResult("A", "B", TimeControl(movetime=0.2))
    res.games = [_game("1-0", ("1-0", "mate", 80)),               # A wins under both
                 _game("1/2-1/2", ("1-0", "Black perpetually chases: Black loses", 40)),  # ours: A wins
                 _game("1/2-1/2", None, red="B"),                   # ours: no ruling yet (its 120-ply limit)
                 _game("0-1", ("0-1", "mate", 99), red="B")]        # B has Red and loses: A wins
    assert [g.rulings_differ for g in res.games] == [False, True, True, False]
    assert [g.own_score_for("A") for g in res.games] == [1.0, 1.0, None, 1.0]
    text = res.referee_summary()
    assert text.splitlines()[0] == ("Referee: pyffish 0.0.90; our referee on the same games: 3 - 0 - 0 and 1 "
                                    "it would not have ended there; 2 rulings differ")
    assert "ours: 1-0 at ply 40 (Black perpetually chases: Black loses)" in text.splitlines()[1]
    assert text.splitlines()[2].endswith("ours: no ruling")
    assert "Referee: pyffish" in res.summary()
    pgn = res.game_pgn(res.games[1])
    assert '[Referee "pyffish 0.0.90"]' in pgn
    assert '[OwnReferee "1-0 at ply 40: Black perpetually chases: Black loses"]' in pgn
