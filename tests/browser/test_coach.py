"""The coach in the browser (issue 12): coach mode's warning and its takeback, the rating shown after
a rated game and on the profile page, hints in steps, the adaptive level in the new-game dialog.

The computer plays :func:`first_move` at once; the coach's judgement runs the real engine at its
small depth (``engine_ready`` compiles the kernels first)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"


def coach_game(page, body: dict) -> None:
    """Start a game through POST /api/coach/new as the page would, and wait until the page shows it."""
    old = page.get_attribute("body", "data-game-id")
    page.evaluate("""async (body) => {
        const token = document.querySelector('meta[name="xiangqi-token"]').content;
        const r = await fetch('/api/coach/new', {method: 'POST', body: JSON.stringify(body),
            headers: {'Content-Type': 'application/json', 'X-Xiangqi-Token': token}});
        if (!r.ok) throw new Error(await r.text());
    }""", body)
    page.wait_for_function(
        f"document.body.dataset.gameId !== '{old}' && document.body.dataset.connected === '1'")


def test_coach_warns_before_the_move_is_sent(quick_server, engine_ready, driver, page):
    """Before: the warning came after the computer had replied. Now the move is shown to the coach
    first (POST /api/coach/check): the warning is a question, and 换一步 sends nothing."""
    driver.open(quick_server.url)
    coach_game(page, {"red": "human", "black": "engine", "level": "beginner", "coach": True, "fen": HANGING})
    driver.click_move("b0b6")
    dlg = page.locator("#dlg-confirm")
    expect(dlg).to_be_visible()
    expect(page.locator("#confirm-title")).to_have_text("教练提醒")
    expect(page.locator("#confirm-text")).to_have_text("这步丢车：对方 马3进2 吃车。还要走这步吗？")
    page.click("#confirm-no")  # 换一步
    expect(dlg).to_be_hidden()
    st = driver.state()
    assert st["fen"] == HANGING and st["moves"] == []  # nothing was sent: no reply either
    assert page.get_attribute("body", "data-plies") == "0"
    # the blunder again, played anyway: it is sent and the warning is not shown a second time
    driver.click_move("b0b6")
    expect(dlg).to_be_visible()
    page.click("#confirm-yes")  # 仍然走
    driver.wait_plies(2)
    expect(page.locator("#coach-warning")).to_have_count(0)
    assert driver.state()["coach"]["note"]["warn"] is True  # the word kept for the move (no second search)


def test_coach_warns_of_the_hanging_rook_and_takes_it_back(quick_server, engine_ready, driver, page):
    """When the coach cannot judge before the move (here its check route fails), the move goes as it
    is and the warning comes after it, with the coach's takeback."""
    page.route("**/api/coach/check", lambda route: route.fulfill(status=503, body="{}"))
    driver.open(quick_server.url)
    coach_game(page, {"red": "human", "black": "engine", "level": "beginner", "coach": True, "fen": HANGING})
    expect(page.locator("#coach-rated")).to_have_text("不是从标准开局开始，不计等级分")
    driver.click_move("b0b6")
    warning = page.locator("#coach-warning")
    expect(warning).to_be_visible()
    expect(warning.locator(".coach-text")).to_have_text("这步丢车：对方 马3进2 吃车")
    driver.wait_plies(2)  # the computer replied meanwhile; the takeback takes both back
    page.click("#btn-coach-takeback")
    driver.wait_plies(0)
    expect(warning).to_have_count(0)
    st = driver.state()
    assert st["fen"] == HANGING and st["coach"]["coach_takebacks"] == 1 and st["coach"]["undos"] == 0
    expect(page.locator(".coach-help")).to_have_text("教练建议收回 1 步（不算悔棋）")
    # a safe move: no warning, the coach says it is fine
    driver.click_move("b0b2")
    expect(page.locator(".coach-good")).to_be_visible()
    expect(warning).to_have_count(0)
    # in English
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button.primary")
    expect(page.locator(".coach-good")).to_have_text("Coach: a good move")


def test_coach_mode_from_the_new_game_dialog_and_hints_in_steps(quick_server, engine_ready, driver, page):
    driver.open(quick_server.url)
    old = page.get_attribute("body", "data-game-id")
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=red]")
    page.check("#in-coach")
    driver.submit_new_game()
    assert page.get_attribute("body", "data-game-id") != old
    assert driver.state()["coach"]["mode"] is True
    expect(page.locator("#coach-rated")).to_have_text("教练模式对局不计等级分")
    page.click("#btn-hint")
    ring = page.locator(".xq-shape-ring.hint.from")
    expect(ring).to_have_count(1)
    expect(page.locator("#hint-line")).to_have_text("提示：动这个子")
    # step 1: the piece only (the arrow of a piece shape is not drawn)
    assert page.eval_on_selector(".xq-arrow.hint.piece", "e => getComputedStyle(e).display") == "none"
    sq = ring.get_attribute("data-sq")
    page.click("#btn-hint")  # step 2: the move
    arrow = page.locator(".xq-arrow.hint:not(.piece)")
    expect(arrow).to_have_count(1)
    assert page.eval_on_selector(".xq-arrow.hint", "e => getComputedStyle(e).display") != "none"
    assert arrow.get_attribute("data-from") == sq
    text = page.locator("#hint-line").inner_text()
    assert text.startswith("提示：") and "动这个子" not in text
    page.click("#btn-hint")  # step 3: the line
    expect(page.locator("#hint-line")).to_contain_text("接着：")
    assert page.locator("#hint-line").inner_text().startswith(text + " · ")


def test_rating_after_a_rated_game(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("red", "beginner")
    expect(page.locator("#coach-rated")).to_have_text("本局计等级分")
    driver.play("h2e2", 2)
    page.click("#btn-resign")
    page.click("#confirm-yes")
    expect(page.locator("#dlg-result")).to_be_visible()
    st = driver.state()
    r = st["coach"]["rating"]
    assert r["before"] == 1500 and r["delta"] < 0
    line = page.locator("#result-rating")
    expect(line).to_have_text(f"等级分 1500 → {r['after']}（−{-r['delta']}）· {r['rank']}")
    page.click("#dlg-result button[value=close]")
    page.click("#btn-profile")
    expect(page.locator("#pf-rating")).to_have_text(str(r["after"]))
    expect(page.locator("#pf-games")).to_have_text("1 局")
    expect(page.locator(".pf-chart .pf-dot")).to_have_count(1)
    expect(page.locator(".pf-recent tbody tr")).to_have_count(1)
    expect(page.locator(".pf-recent tbody tr td").nth(2)).to_have_text("负")
    page.keyboard.press("Escape")
    # 悔棋 takes the result back: the page says the game is unrated now
    page.click("#btn-undo")
    expect(page.locator("#coach-rated")).to_have_text("悔棋后不计等级分")
    assert driver.state()["coach"]["rating"] is None


def test_adaptive_level_in_the_new_game_dialog(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("red", "adaptive")
    st = driver.state()
    assert st["level"] == "adaptive" and st["coach"]["adaptive"]["elo"] == 1500
    expect(page.locator("#bar-top .who")).to_have_text("黑方 — 电脑 · 自适应 · 常侍 ≈1500")
    # 1500 lies between 初级 (1069, depth 2) and 中级 (1950, depth 4) of the ladder, half-way: t = 0.489
    assert st["coach"]["adaptive"]["depth"] == 3
    assert "深度 3" in page.locator("#bar-top .who").get_attribute("title")
