"""The review uses the endgame tables: a position in a table gets the table's exact verdict, and a
move is judged by the table when both positions are in one (a win let go to a draw is a mistake,
a win kept is good even if slower). Tables are generated here (马 vs 象 KNKB, about 1-2 s)."""

from __future__ import annotations

import pytest

from xiangqi.core.board import Board
from xiangqi.engine import tablebase as tb
from xiangqi.study import review

# Red mates in 13 plies (i6h8 is the only fastest move); i6g7 lets it go to a draw; d0e0 still wins
# (the table: KNKB, values checked in the test)
FEN = "5kb2/9/9/8N/9/9/9/9/9/3K5 w - - 0 1"


@pytest.fixture
def tables(tmp_path, monkeypatch):
    monkeypatch.setenv("XIANGQI_DATA_DIR", str(tmp_path))
    tb.generate("KNKB", tmp_path / "tablebases")
    return tb.Tablebase(tmp_path / "tablebases")


def test_classify_by_table():
    win, draw, loss = ({"wdl": w, "dtm": d, "ending": "KNKB"} for w, d in (("win", 13), ("draw", None),
                                                                          ("loss", 12)))
    assert review.classify_by_table(win, loss, True) == "best"  # the opponent is lost: kept
    assert review.classify_by_table(win, loss, False) == "good"
    assert review.classify_by_table(win, draw, False) == "mistake"  # a win let go
    assert review.classify_by_table(draw, win, False) == "mistake"  # a draw let go: now lost
    assert review.classify_by_table(win, win, False) == "blunder"  # a win turned into a loss
    assert review.classify_by_table(draw, draw, False) == "good"
    assert review.classify_by_table(None, draw, False) is None
    assert review.classify_by_table(win, None, False) is None


def test_review_gives_the_tables_verdict(tables):
    board_value = tables.probe(Board(FEN))
    assert (board_value.wdl, board_value.dtm, board_value.best) == ("win", 13, ["i6h8"])
    evals = review.evaluate_line(FEN, ["i6g7"], 0, 2, depth=3, hash_mb=4)
    before, after = evals
    assert before.tb == {"wdl": "win", "dtm": 13, "ending": "KNKB"}
    assert (before.mate, before.best) == (7, "i6h8")  # the exact mate, the table's move
    assert after.tb == {"wdl": "draw", "dtm": None, "ending": "KNKB"} and (after.cp, after.mate) == (0, None)
    rv = review.build_review(FEN, ["i6g7"], evals)
    ply = rv.plies[0]
    assert ply.cls == "mistake" and ply.symbol == "?"
    d = ply.to_dict()
    assert d["tb_before"]["wdl"] == "win" and d["tb_after"]["wdl"] == "draw"
    # stored and read back: the verdicts are kept
    again = review.GameReview.from_stored(rv.to_stored())
    assert again.plies[0].cls == "mistake" and again.plies[0].after.tb == after.tb


def test_a_slower_win_is_good_by_the_table(tables):
    evals = review.evaluate_line(FEN, ["d0e0"], 0, 2, depth=3, hash_mb=4)
    assert evals[1].tb["wdl"] == "loss" and evals[1].tb["dtm"] > 12  # Black is still lost, later
    ply = review.build_review(FEN, ["d0e0"], evals).plies[0]
    assert ply.cls == "good"


def test_no_tables_no_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("XIANGQI_DATA_DIR", str(tmp_path))
    before, after = review.evaluate_line(FEN, ["i6g7"], 0, 2, depth=2, hash_mb=4)
    assert before.tb is None and after.tb is None and "tb" not in before.to_dict()
