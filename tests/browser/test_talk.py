"""A named opponent in the page: chosen in the new-game dialog, its remarks in the bubble by its bar."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect
from tests.browser.conftest import LiveServer

from xiangqi.engine.api import SearchResult

pytestmark = pytest.mark.browser


def scored_computer():
    """The first legal move (ICCS order); its evaluation is 0 on its first move, +400 from its second:
    the player's move between them was a blunder by the computer's own view."""
    calls = []

    def provider(board, level):
        calls.append(1)
        mv = min(board.legal_moves, key=lambda m: m.iccs())
        return SearchResult(mv, 0 if len(calls) == 1 else 400, None, 1, 1, 0.0, [mv])

    return provider


def test_a_named_opponent_greets_and_calls_a_blunder(tmp_path, driver, page):
    srv = LiveServer(tmp_path / "data", move_provider=scored_computer())
    srv.start()
    try:
        driver.open(srv.url)
        old = page.get_attribute("body", "data-game-id")
        page.click("#btn-new")
        page.check("#dlg-new input[name=mode][value=red]")
        page.select_option("#sel-opponent", "afu")
        expect(page.locator("#opponent-about")).to_contain_text("当头炮")
        expect(page.locator("#sel-level")).to_be_disabled()
        expect(page.locator("#sel-level")).to_have_value("beginner")
        page.click("#btn-start")
        page.wait_for_function(f"document.body.dataset.gameId !== '{old}'")
        bubble = page.locator("#talk .talk-text")
        expect(bubble).to_contain_text("我是阿福（初级，攻杀型）")  # the greeting and the player's record
        expect(bubble).to_contain_text("我们是第一次交手吧？")
        expect(page.locator("#bar-top .who")).to_contain_text("阿福 · 初级")
        expect(page.locator("#talk .talk-avatar")).to_have_text("福")
        driver.play("h2e2", 2)
        expect(page.locator("#talk")).to_have_attribute("data-kind", "opening")
        expect(bubble).to_contain_text("中炮局")
        # speech on: new remarks are spoken (the page notes what it handed to speechSynthesis)
        page.click("#btn-settings")
        page.select_option("#set-talk-speech", "on")
        page.click("#dlg-settings button[value=close]")
        assert page.get_attribute("body", "data-last-remark-spoken") is None  # nothing said again
        driver.play("h0g2", 4)  # the computer's evaluation jumps by 400 after this move
        expect(page.locator("#talk")).to_have_attribute("data-kind", re.compile(r"\bblunder_player\b"))
        expect(bubble).to_contain_text("马二进三")
        expect(page.locator("body")).to_have_attribute("data-last-remark-spoken", re.compile("马二进三"))
        # what was said before is in the log under the bubble
        page.click("#talk .talk-more")
        expect(page.locator("#talk .talk-log li").last).to_contain_text("我是阿福（初级，攻杀型）")
        # in English the same remark in English, the move in WXF
        page.click("#btn-settings")
        page.select_option("#set-language", "en")
        expect(bubble).to_contain_text("H2+3")
        # switched off: the bubble goes away
        page.select_option("#set-talk", "off")
        page.click("#dlg-settings button[value=close]")
        expect(page.locator("#talk")).to_be_hidden()
        api = httpx.Client(base_url=srv.url, headers={"X-Xiangqi-Token": srv.app.state.token,
                                                      "Origin": srv.url.rstrip("/")}, timeout=60)
        talk = api.get("/api/game").json()["talk"]
        assert talk["enabled"] is False and talk["remarks"] == []
    finally:
        srv.stop()
