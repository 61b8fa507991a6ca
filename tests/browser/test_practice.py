"""Learn from your mistakes (practice.js): a reviewed library game's blunder as a puzzle; a wrong try
refused, the engine's move accepted; two wrong tries show the answer; the done screen."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from playwright.sync_api import expect

# Red: king e0, rook b0; Black: king f9, horse c8. 1. b0b6?? leaves the rook where the horse takes it.
HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"
SHOTS = Path(os.environ.get("XIANGQI_SHOTS", "/tmp/shots-review"))


def _library_game(server) -> str:
    """A two-player game from HANGING with the blunder and its punishment, resigned into the library
    (row 1); returns the engine's better move of ply 1 as the server's review finds it."""
    api = httpx.Client(base_url=server.url, headers={"X-Xiangqi-Token": server.app.state.token}, timeout=60)
    api.post("/api/game/new", json={"red": "human", "black": "human", "fen": HANGING}).raise_for_status()
    for mv in ("b0b6", "c8b6"):
        api.post("/api/game/move", json={"move": mv}).raise_for_status()
    api.post("/api/game/resign").raise_for_status()
    return api


def test_practice_a_blunder_wrong_then_right(quick_server, engine_ready, driver, page):
    api = _library_game(quick_server)
    driver.open(quick_server.url)
    page.click("#btn-library")
    row = page.locator("#lib-rows tr").first
    row.locator(".lib-practice").click()
    page.wait_for_selector("body[data-practice='puzzle']")
    expect(page.locator("#practice")).to_be_visible()
    expect(page.locator("#game-panel")).to_be_hidden()
    expect(page.locator("#pr-count")).to_have_text("第 1 / 1 题")
    expect(page.locator("#pr-task")).to_have_text("第 1 回合，红方走了 车八进六??。找一步更好的棋。")
    # the position before the blunder: the rook still on b0
    expect(page.locator(".xq-piece[data-sq='b0']")).to_have_attribute("data-piece", "R")
    review = api.get("/api/library/1/review").json()  # stored by the practice's review just now
    best = review["plies"][0]["best"]
    assert best and best != "b0b6"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "practice-puzzle-desktop.png"))
    # a wrong try: the blunder again
    driver.click_move("b0b6")
    expect(page.locator("#pr-feedback")).to_have_text("这步不够好，再试一次（还有 1 次）。")
    page.wait_for_selector("body[data-practice='puzzle']")
    expect(page.locator(".xq-piece[data-sq='b0']")).to_have_attribute("data-piece", "R")  # back in place
    # the engine's move
    driver.click_move(best)
    page.wait_for_selector("body[data-practice='solved']")
    expect(page.locator("#pr-feedback")).to_have_text("正确！这正是电脑的着法。")
    expect(page.locator("#pr-feedback")).to_have_class("pr-feedback right")
    expect(page.locator(f".xq-piece[data-sq='{best[2:]}']")).to_have_attribute("data-piece", "R")  # played
    expect(page.locator(".xq-piece[data-sq='b0']")).to_have_count(0)
    page.screenshot(path=str(SHOTS / "practice-solved-desktop.png"))
    page.click("#pr-next")  # the last puzzle: 完成
    page.wait_for_selector("body[data-practice='done']")
    expect(page.locator("#pr-done-text")).to_have_text("1 题中答对 1 题。")
    page.locator("#pr-done .pr-exit").click()
    expect(page.locator("#practice")).to_be_hidden()
    expect(page.locator("#game-panel")).to_be_visible()
    assert page.evaluate("document.body.dataset.practice") is None


def test_two_wrong_tries_show_the_answer_in_english_on_a_phone(quick_server, engine_ready, driver, page):
    api = _library_game(quick_server)
    api.put("/api/settings", json={"language": "en"}).raise_for_status()
    page.set_viewport_size({"width": 390, "height": 844})
    driver.open(quick_server.url)
    page.evaluate("window.xiangqiPractice.open({library_id: 1, depth: 4})")
    page.wait_for_selector("body[data-practice='puzzle']")
    expect(page.locator("#pr-task")).to_have_text("Move 1: Red played 车八进六??. Find a better move.")
    for left in (1, 0):
        driver.click_move("b0b6")
        if left:
            expect(page.locator("#pr-feedback")).to_have_text("Not good enough, try again (1 left).")
            page.wait_for_selector("body[data-practice='puzzle']")
    page.wait_for_selector("body[data-practice='shown']")
    expect(page.locator("#pr-feedback")).to_have_text("Still not good enough. The answer:")
    review = api.get("/api/library/1/review").json()
    p0 = review["plies"][0]
    assert review["limit"]["depth"] == 4
    expect(page.locator(".xq-arrow")).to_have_count(1)
    expect(page.locator(f".xq-shape-ring.to[data-sq='{p0['best'][2:]}']")).to_have_count(1)
    expect(page.locator("#pr-line")).to_be_visible()
    expect(page.locator("#pr-line")).to_contain_text("Better was ")
    expect(page.locator("#pr-show")).to_be_disabled()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "practice-answer-phone.png"), full_page=True)
    page.click("#pr-next")
    expect(page.locator("#pr-done-text")).to_have_text("0 of 1 solved.")


def test_opening_a_library_replay_ends_the_practice(quick_server, engine_ready, driver, page):
    _library_game(quick_server)
    driver.open(quick_server.url)
    page.evaluate("window.xiangqiPractice.open({library_id: 1, depth: 3})")
    page.wait_for_selector("body[data-practice='puzzle']")
    expect(page.locator(".player-bar.top")).to_be_hidden()  # they name the current game's players
    page.click("#btn-library")
    page.locator("#lib-rows tr").first.locator(".lib-open").click()
    expect(page.locator("#replay")).to_be_visible()
    expect(page.locator("#practice")).to_be_hidden()
    assert page.evaluate("document.body.dataset.practice") is None
    page.click("#rp-first")  # the replay owns the board now: the start position, rook on b0
    expect(page.locator(".xq-piece[data-sq='b0']")).to_have_attribute("data-piece", "R")
    page.click("#rp-last")
    expect(page.locator(".xq-piece[data-sq='b6']")).to_have_attribute("data-piece", "n")


def test_practice_of_the_current_game_takes_the_human_side(quick_server, engine_ready, driver, page):
    api = httpx.Client(base_url=quick_server.url, headers={"X-Xiangqi-Token": quick_server.app.state.token},
                       timeout=60)
    api.post("/api/game/new", json={"red": "human", "black": "engine", "fen": HANGING}).raise_for_status()
    api.post("/api/game/move", json={"move": "b0b6"}).raise_for_status()
    driver.open(quick_server.url)
    driver.wait_plies(2)  # the stand-in computer's reply, c8a7: it leaves the rook alone (a blunder too)
    assert [m["iccs"] for m in driver.state()["moves"]] == ["b0b6", "c8a7"]
    page.evaluate("window.xiangqiPractice.open({current: true, depth: 3})")
    page.wait_for_selector("body[data-practice='puzzle']")
    expect(page.locator("#pr-count")).to_have_text("第 1 / 1 题")  # Red's blunder only: Red is the human
    assert page.evaluate("document.body.dataset.practicePly") == "1"
    job = api.post("/api/review", json={"current": True, "depth": 3}).json()
    assert job["status"] == "done"
    both = api.get(f"/api/review/{job['job']}/puzzles?side=both").json()["puzzles"]
    assert [(p["ply"], p["class"]) for p in both] == [(1, "blunder"), (2, "blunder")]
    # opened with a review job (as the review summary does) and both sides
    page.evaluate(f"window.xiangqiPractice.open({{job: '{job['job']}', side: 'both'}})")
    expect(page.locator("#pr-count")).to_have_text("第 1 / 2 题")
    page.click("#pr-next")
    expect(page.locator("#pr-count")).to_have_text("第 2 / 2 题")
    expect(page.locator("#pr-task")).to_have_text("第 1 回合，黑方走了 马3进1??。找一步更好的棋。")
    expect(page.locator(".xq-piece[data-sq='b6']")).to_have_attribute("data-piece", "R")  # Black to take it
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "practice-black-puzzle-desktop.png"))
