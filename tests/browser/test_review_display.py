"""The review display (issue 12, 复盘): progress and cancel, the evaluation graph with one point per
ply (a click jumps there), the classes in the move list in colour, the better move as an arrow and
its line as a branch, the summary card.

The review itself (the jobs and their engine searches) is tested with the review API; here the
display is driven by a small stand-in of that API inside the test, serving a genuine
``GameReview.to_dict()`` built by :func:`xiangqi.study.review.build_review` from fixed evaluations
(no search), so the test is quick and exact."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute
from playwright.sync_api import expect

from xiangqi.study.review import PositionEval, build_review

pytestmark = pytest.mark.browser

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
MOVES = ["h2e2", "h9g7", "h0g2", "a6a5"]  # 炮二平五 马8进7 马二进三 卒1进1??
EVALS = [PositionEval(20, None, "h2e2", ("h2e2", "h9g7"), 8, 100),
         PositionEval(25, None, "h9g7", ("h9g7", "h0g2"), 8, 100),
         PositionEval(20, None, "h0g2", ("h0g2", "b7e7"), 8, 100),
         PositionEval(25, None, "b7e7", ("b7e7", "b0c2", "b9c7"), 8, 100),
         PositionEval(650, None, "h2h9", ("h2h9",), 8, 100)]


def stand_in_review_api(app) -> dict:
    """Routes of the review API contract (HELPERS.md) answering from a fixed review: the first GET
    says 2 of 5 positions are done, the next one gives the result. Put before any other route."""
    calls = {"post": [], "get": 0, "delete": 0}
    review = build_review(START, MOVES, EVALS, limit={"depth": 8}).to_dict()

    async def post(body: dict) -> dict:
        calls["post"].append(body)
        return {"job": "j1", "status": "running", "done": 0, "total": 5}

    async def get(job: str) -> dict:
        calls["get"] += 1
        if calls["get"] < 2:
            return {"job": job, "status": "running", "done": 2, "total": 5}
        return {"job": job, "status": "done", "done": 5, "total": 5, "review": review}

    async def delete(job: str) -> dict:
        calls["delete"] += 1
        return {"status": "cancelled"}

    routes = [APIRoute("/api/review", post, methods=["POST"]),
              APIRoute("/api/review/{job}", get, methods=["GET"]),
              APIRoute("/api/review/{job}", delete, methods=["DELETE"])]
    app.router.routes[0:0] = routes
    return calls


def play_and_resign(driver, page):
    driver.new_game("two")
    for i, mv in enumerate(MOVES, start=1):
        driver.play(mv, i)
    page.click("#btn-resign")
    page.click("#confirm-yes")
    expect(page.locator("#dlg-result")).to_be_visible()


def test_review_from_the_result_dialog(quick_server, driver, page):
    calls = stand_in_review_api(quick_server.app)
    driver.open(quick_server.url)
    play_and_resign(driver, page)
    page.click("#btn-result-review")
    expect(page.locator("#rv-progress")).to_be_visible()
    expect(page.locator("#rv-count")).to_have_text("2 / 5")
    expect(page.locator("body")).to_have_attribute("data-review-status", "done")
    assert calls["post"] == [{"current": True}]
    expect(page.locator("#rv-progress")).to_be_hidden()
    # the graph: one point per ply, the blunder marked
    expect(page.locator("#rv-graph .rv-pt")).to_have_count(4)
    expect(page.locator("#rv-graph .rv-pt.blunder")).to_have_attribute("data-ply", "4")
    # the marks in the move list, in colour
    blunder = page.locator("#move-list > li > .mv[data-ply='3']")
    expect(blunder).to_have_attribute("data-symbol", "??")
    expect(blunder).to_have_class(re.compile(r"\bmark-blunder\b"))
    color = blunder.evaluate("e => getComputedStyle(e, '::after').color")
    assert color == "rgb(213, 0, 0)"
    assert page.locator("#move-list > li > .mv[data-symbol]").count() == 1  # the good moves carry none
    # the better line as a branch beside the blunder, stepped through like any variation
    expect(page.locator("#move-list .var .mv.from-review")).to_have_text(["炮2平5", "马八进七", "马2进3"])
    # a click on the graph jumps to that ply
    page.locator("#rv-graph .rv-pt[data-ply='2']").click()
    expect(page.locator("body")).to_have_attribute("data-analysis-ply", "2")
    expect(page.locator("#move-list .mv.current")).to_have_text("马8进7")
    # in the position before the blunder the better move is an arrow
    page.locator("#rv-graph .rv-pt[data-ply='3']").click()
    expect(page.locator(".xq-arrow.review")).to_have_attribute("data-from", "b7")
    expect(page.locator(".xq-arrow.review")).to_have_attribute("data-to", "e7")
    page.keyboard.press("ArrowRight")  # the blunder itself: the note names the better move
    expect(page.locator("#rv-note")).to_have_text("卒1进1?? 败着 应走 炮2平5")
    expect(page.locator(".xq-arrow.review")).to_have_count(0)
    # step into the better line
    page.click("#move-list .var .mv.from-review >> nth=0")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#move-list .mv.current")).to_have_text("马八进七")
    # the summary card
    side = page.locator("#rv-summary .rv-side")
    expect(side).to_have_text(["红方：准确率 100.0% · 缓着 0 · 错着 0 · 败着 0",
                               "黑方：准确率 19.3% · 缓着 0 · 错着 0 · 败着 1"])
    expect(page.locator("#rv-summary .rv-worst")).to_have_text("最大失误： 2. 卒1进1?? 应走 炮2平5")
    # in English both moves are in the page's notation (before: "2. 卒1进1?? better was C2.5")
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button[value=close]")
    expect(page.locator("#rv-summary .rv-worst")).to_have_text("Biggest mistake: 2. P1+1?? better was C2.5")
    page.click("#btn-settings")
    page.select_option("#set-language", "zh")
    page.click("#dlg-settings button[value=close]")
    # the review's branch is not the player's: nothing of it is saved
    st = page.evaluate("fetch('/api/analysis/tree/current').then(r => r.json())")
    assert st["variations"] == 0


def test_review_from_the_library_and_cancel(quick_server, driver, page):
    calls = stand_in_review_api(quick_server.app)
    driver.open(quick_server.url)
    play_and_resign(driver, page)
    page.click("#dlg-result button[value=close]")
    page.click("#btn-library")
    page.locator("#lib-rows .lib-review").first.click()
    expect(page.locator("#rv-progress")).to_be_visible()
    page.click("#rv-cancel")
    expect(page.locator("#rv-progress")).to_be_hidden()
    page.wait_for_function("document.body.dataset.reviewStatus === 'cancelled'")
    # the page says "cancelled" before its DELETE is sent: wait for the request, not a fixed time
    driver.until(lambda: calls["delete"] >= 1, "the page sent DELETE /api/review/<job>")
    assert calls["delete"] == 1
    row_id = page.evaluate("fetch('/api/library').then(r => r.json())")[0]["id"]
    assert calls["post"] == [{"library_id": row_id}]
    calls["get"] = 0
    page.click("#btn-library")
    page.locator("#lib-rows .lib-review").first.click()
    expect(page.locator("#rv-graph .rv-pt")).to_have_count(4)
    expect(page.locator("#an-title")).not_to_have_text("")
    expect(page.locator("#move-list > li > .mv[data-ply='3']")).to_have_attribute("data-symbol", "??")
