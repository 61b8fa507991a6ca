"""The analysis socket's lines (app/training/analysis.py ``_with_text``): Red's side of the score, the
move text, and the flag that tells a win by the repetition rules from a material score."""

from __future__ import annotations

from xiangqi.app.training.analysis import _with_text
from xiangqi.core.board import Board
from xiangqi.engine.consts import MATE_BOUND, REP_WIN, RULE_BOUND

# KRKN, Black to move: its horse can only check for ever (RULES.md §5.4.1), so Black loses by the rule
FEN = "3R5/4k4/9/9/1n7/9/9/9/3K5/9 b - - 0 1"


def line(score_cp, mate=None, pv=("b5c3",)):
    return {"multipv": 1, "score_cp": score_cp, "mate": mate, "pv": list(pv)}


def test_a_rule_score_is_flagged_and_turned_to_reds_side():
    board = Board(FEN)
    upd = {"id": 1, "depth": 9, "lines": [line(-(REP_WIN - 7)), line(35), line(None, mate=-3)]}
    out = _with_text(upd, board)
    rule, cp, mate = out["lines"]
    assert out["turn"] == "black" and out["fen"] == FEN
    assert rule["red_cp"] == REP_WIN - 7 and rule["rule"] is True  # Red wins by the rule
    assert rule["chinese"] == ["马2进3"]  # files counted from Black's right
    assert cp["red_cp"] == -35 and cp["rule"] is False
    assert mate["red_mate"] == 3 and mate["red_cp"] is None and mate["rule"] is False


def test_the_rule_band_lies_between_material_and_mate_scores():
    # the widest material swing (both sides' rooks, horses, cannons) is far below the band
    assert 10_000 < RULE_BOUND < REP_WIN < MATE_BOUND
