"""The top bar at phone size (issue 31, item 6): a few main actions and a 更多 (more) button that
opens the rest as a sheet, instead of a sideways-scrolling strip with 练习题, 残局练习, 揭棋 and 设置
off-screen and no hint that there was more. Every action is shown or one tap away; nothing runs
off the page's side; the desktop bar shows all of them with no 更多 button."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

#: every action of the top bar (index.html's nav.actions), in its order
ACTIONS = ["btn-new", "btn-undo", "btn-hint", "btn-draw", "btn-resign", "btn-flip", "btn-save", "btn-open",
           "btn-edit", "btn-library", "btn-profile", "btn-puzzles", "btn-endgame", "btn-jieqi",
           "btn-settings"]

#: True when the element ``id`` is wholly inside the viewport and a tap at its centre reaches it
#: (not clipped by a scrolling strip, not covered by something else)
TAPPABLE = """(id) => { const b = document.getElementById(id); const r = b.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.left < 0 || r.top < 0 || r.right > innerWidth + 0.5
        || r.bottom > innerHeight + 0.5) return false;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit !== null && b.contains(hit); }"""


def top_actions(page) -> list[str]:
    return page.eval_on_selector_all(".actions button:not(#btn-more)", "bs => bs.map(b => b.id)")


def assert_no_sideways_overflow(page) -> None:
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def reachable_at_phone_size(page) -> dict[str, str]:
    """Each action's way to reach it: "bar" (tappable as the page opens) or "more" (tappable once
    更多 is tapped); asserts that each is one or the other and that the menu fits the screen."""
    ways = {}
    for id_ in ACTIONS:
        if page.evaluate(TAPPABLE, id_):
            ways[id_] = "bar"
            continue
        more = page.locator("#btn-more")
        expect(more).to_be_visible()
        assert page.evaluate(TAPPABLE, "btn-more")
        more.click()
        expect(more).to_have_attribute("aria-expanded", "true")
        assert page.evaluate(TAPPABLE, id_), f"{id_} is neither in the bar nor in the 更多 menu"
        assert_no_sideways_overflow(page)
        ways[id_] = "more"
        page.keyboard.press("Escape")
        expect(page.locator("#more-menu")).to_be_hidden()
        expect(more).to_have_attribute("aria-expanded", "false")
    return ways


def test_every_top_bar_action_is_shown_or_one_tap_away_on_a_phone(quick_server, driver, page):
    page.set_viewport_size({"width": 390, "height": 844})
    driver.open(quick_server.url)
    assert top_actions(page) == ACTIONS
    assert_no_sideways_overflow(page)
    expect(page.locator("#btn-more")).to_have_text("更多 ▾")
    ways = reachable_at_phone_size(page)
    assert [k for k, v in ways.items() if v == "bar"] == ["btn-new", "btn-undo", "btn-hint"]
    # 设置 through 更多 opens the settings, and the menu closes behind it
    page.click("#btn-more")
    page.click("#btn-settings")
    expect(page.locator("#dlg-settings")).to_have_attribute("open", "")
    expect(page.locator("#more-menu")).to_be_hidden()
    expect(page.locator("#btn-more")).to_have_attribute("aria-expanded", "false")
    # in English (longer words) the bar still fits and everything is still reachable
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button[value=close]")
    expect(page.locator("#btn-more")).to_have_text("More ▾")
    assert_no_sideways_overflow(page)
    assert set(reachable_at_phone_size(page)) == set(ACTIONS)


def test_the_menu_closes_on_a_tap_outside_and_on_its_button(quick_server, driver, page):
    page.set_viewport_size({"width": 390, "height": 844})
    driver.open(quick_server.url)
    menu, more = page.locator("#more-menu"), page.locator("#btn-more")
    more.click()
    expect(menu).to_be_visible()
    more.click()
    expect(menu).to_be_hidden()
    more.click()
    expect(menu).to_be_visible()
    page.mouse.click(200, 800)  # the page below the sheet
    expect(menu).to_be_hidden()
    # an action from the menu does its work: 翻转 flips the board and closes the sheet
    def red_at_bottom() -> bool:
        return (page.locator(".xq-hit[data-sq='e0']").bounding_box()["y"]
                > page.locator(".xq-hit[data-sq='e9']").bounding_box()["y"])
    assert red_at_bottom()
    more.click()
    page.click("#btn-flip")
    expect(menu).to_be_hidden()
    assert not red_at_bottom()


def test_the_desktop_bar_shows_every_action_without_a_more_button(quick_server, driver, page):
    page.set_viewport_size({"width": 1280, "height": 800})
    driver.open(quick_server.url)
    expect(page.locator("#btn-more")).to_be_hidden()
    assert top_actions(page) == ACTIONS
    for id_ in ACTIONS:
        assert page.evaluate(TAPPABLE, id_), id_
    # one row beside the title, as before the phone menu
    tops = {round(page.locator(f"#{id_}").bounding_box()["y"]) for id_ in ACTIONS}
    assert len(tops) == 1, tops
    page.click("#btn-settings")
    expect(page.locator("#dlg-settings")).to_have_attribute("open", "")
