"""The review's table note (endgame.js ``reviewTableNote``): a move that lets a table win go to a draw
is marked a mistake and the note gives both verdicts. The review is served by the stand-in of
test_review_display from a genuine ``build_review`` over fixed evaluations that carry the tables'
verdicts (the evaluation with tables is tested in tests/study/test_review_tablebase.py)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from playwright.sync_api import expect
from tests.browser import test_review_display as rd

from xiangqi.study.review import MATE_CP, PositionEval, build_review

FEN = "5kb2/9/9/8N/9/9/9/9/9/3K5 w - - 0 1"  # 马 vs 象: Red mates in 13 plies (i6h8)
MOVES = ["i6g7", "f9e9"]  # 马一进三? (a draw by the table), 将6平5
WIN = {"wdl": "win", "dtm": 13, "ending": "KNKB"}
EVALS = [PositionEval(MATE_CP - 7, 7, "i6h8", ("i6h8",), 8, 10, tb=WIN),
         PositionEval(0, None, "f9e9", ("f9e9",), 8, 10, tb={"wdl": "draw", "dtm": None, "ending": "KNKB"}),
         PositionEval(0, None, "g7e8", ("g7e8",), 8, 10, tb={"wdl": "draw", "dtm": None, "ending": "KNKB"})]
SHOTS = Path(os.environ.get("XIANGQI_SHOTS", "/tmp/shots-endgame"))


def test_review_note_gives_the_tables_verdict(quick_server, driver, page, monkeypatch):
    review = build_review(FEN, MOVES, EVALS, limit={"depth": 8})
    assert [p.cls for p in review.plies] == ["mistake", "best"]
    monkeypatch.setattr(rd, "build_review", lambda *a, **k: review)
    rd.stand_in_review_api(quick_server.app)
    api = httpx.Client(base_url=quick_server.url, headers={"X-Xiangqi-Token": quick_server.app.state.token},
                       timeout=60)
    api.post("/api/game/new", json={"red": "human", "black": "human", "fen": FEN}).raise_for_status()
    page.set_viewport_size({"width": 1366, "height": 768})
    driver.open(quick_server.url)
    for i, mv in enumerate(MOVES, start=1):
        driver.play(mv, i)
    page.click("#btn-resign")
    page.click("#confirm-yes")
    page.click("#btn-result-review")
    expect(page.locator("body")).to_have_attribute("data-review-status", "done")
    page.locator("#rv-graph .rv-pt[data-ply='1']").click()
    note = page.locator("#rv-note")
    expect(note).to_contain_text("残局库：和棋（走前：红胜，7 步杀）")
    expect(note).to_have_text("马一进三? 错着 应走 马一进二 · 残局库：和棋（走前：红胜，7 步杀）")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "tb-review-desktop.png"))
    # the second ply keeps the draw: the note gives the verdict alone
    page.locator("#rv-graph .rv-pt[data-ply='2']").click()
    expect(note).to_have_text("将6平5 · 残局库：和棋")
