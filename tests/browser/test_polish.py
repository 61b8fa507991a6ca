"""A new user's rough edges in the page: races between the state and the fetched game tree, errors
in the console (each test here fails on the code before its fix)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_new_game_as_black_with_a_stale_tree_fetch_keeps_the_move_list(gated_server, driver, page):
    """The tree of a new game as Black is fetched while the computer thinks; when its answer (with no
    moves) comes after the computer's first move, the move list keeps that move and the page raises
    no "Cannot read properties of undefined (reading 'review')"."""
    srv, release = gated_server
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    driver.open(srv.url)
    held = []

    def hold(route):
        if not held:  # the first fetch after the new game: answer it later, as it was then
            held.append((route, route.fetch()))
        else:
            route.continue_()

    page.route("**/api/analysis/tree/current", hold)
    driver.new_game("black")
    page.wait_for_function("document.body.dataset.plies === '0'")
    driver.until(lambda: held, "the page fetched the new game's tree")
    release.set()
    driver.wait_plies(1)
    route, response = held[0]
    route.fulfill(response=response)
    page.wait_for_timeout(500)
    assert errors == []
    toast = page.locator("#toast")
    # before: 错误: Cannot read properties of undefined (reading 'review')
    assert not toast.is_visible(), toast.inner_text()
    assert driver.move_texts() == ["车九进一"]  # the computer's first move (a0a1)
    expect(page.locator("#move-list .mv.current")).to_have_text("车九进一")
    expect(page.locator("body")).to_have_attribute("data-analysis-ply", "1")


def test_editor_and_endgame_show_only_their_own_texts(quick_server, driver, page):
    """The position editor's check follows a language change (before: "局面合法" stayed in an English
    page); endgame practice without tables shows how to make them and no buttons that cannot work
    (before: 换一局 and an empty 残局 list); neither shows the game's coach line underneath."""
    driver.open(quick_server.url)
    page.click("#btn-edit")
    expect(page.locator("#ed-problems")).to_have_text("局面合法")
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.keyboard.press("Escape")
    expect(page.locator("#ed-problems")).to_have_text("Position is valid")
    expect(page.locator("#coach-panel")).to_be_hidden()
    page.click("#ed-exit")
    page.click("#btn-endgame")
    expect(page.locator("#eg-status")).to_contain_text("No endgame tables yet")
    expect(page.locator("#eg-setup .job-command")).to_have_text(
        "xiangqi tb generate --default --max-indices 1100000")
    expect(page.locator("#eg-new")).to_be_hidden()
    expect(page.locator("#eg-ending")).to_be_hidden()
    expect(page.locator("#eg-exit")).to_be_visible()
    expect(page.locator("#coach-panel")).to_be_hidden()
    page.click("#eg-exit")
    expect(page.locator("#coach-panel")).to_be_visible()  # the game's own line is back
    # an opened record is not the game either
    page.click("#btn-open")
    page.fill("#paste-text", "1. 炮二平五 马８进７ *")
    page.click("#btn-paste-open")
    expect(page.locator("#record")).to_be_visible()
    expect(page.locator("#coach-panel")).to_be_hidden()


def test_new_game_dialog_fits_a_phone(quick_server, driver, page):
    """On a 390 px phone every choice of the new-game dialog stays inside it (before: 对手 and 开局 ran
    past its right edge in English)."""
    page.set_viewport_size({"width": 390, "height": 844})
    driver.open(quick_server.url)
    driver.top_action("#btn-settings")
    page.select_option("#set-language", "en")
    page.keyboard.press("Escape")
    page.click("#btn-new")
    expect(page.locator("#dlg-new")).to_be_visible()
    right = page.eval_on_selector("#dlg-new", "d => d.getBoundingClientRect().right")
    edges = page.eval_on_selector_all(
        "#dlg-new select",
        "ss => ss.filter(s => s.offsetParent).map(s => [s.id, s.getBoundingClientRect().right])")
    assert len(edges) >= 5
    assert all(r <= right for _, r in edges), (right, edges)
