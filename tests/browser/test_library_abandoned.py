"""我的对局 in the page: abandoned starts are hidden behind a toggle that counts them (issue 31, item 6)."""

from __future__ import annotations

from playwright.sync_api import expect


def test_library_hides_abandoned_starts_behind_a_counted_toggle(quick_server, driver, page):
    driver.open(quick_server.url)
    two = {"red": "human", "black": "human"}
    for _ in range(2):  # two games left after Red's first move: abandoned starts
        assert driver.post("/api/game/new", two) == 200
        assert driver.post("/api/game/move", {"move": "h2e2"}) == 200
    assert driver.post("/api/game/new", two) == 200  # a real game: a move each, then resigned
    for mv in ("h2e2", "h9g7"):
        assert driver.post("/api/game/move", {"move": mv}) == 200
    assert driver.post("/api/game/resign", {}) == 200
    expect(page.locator("#dlg-result")).to_be_visible()
    page.click("#dlg-result button[value=close]")
    assert driver.post("/api/game/new", two) == 200
    page.click("#btn-library")
    rows = page.locator("#lib-rows tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("黑胜 — 红方认输")  # Red was to move: Red resigned
    toggle = page.locator("#lib-abandoned-toggle")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_text("显示未下完的空对局（2）")
    page.check("#lib-abandoned")
    expect(rows).to_have_count(3)
    expect(rows.nth(1).locator("td").nth(3)).to_have_text("1")  # one ply: move 1
    page.uncheck("#lib-abandoned")
    expect(rows).to_have_count(1)
    page.fill("#lib-search", "认输")  # no abandoned start matches: the toggle goes away
    expect(toggle).to_be_hidden()
    expect(rows).to_have_count(1)
