"""The computer's draw offer in the page: shown beside the status, taken with one click."""

from __future__ import annotations

import random

import httpx
import pytest
from playwright.sync_api import expect
from tests.browser.conftest import LiveServer

from xiangqi.core.board import Board
from xiangqi.engine.api import SearchResult

pytestmark = pytest.mark.browser


def level_computer(board, level):
    """The first legal move, reported as a level game (0 cp) so a compliant computer offers a draw."""
    mv = min(board.legal_moves, key=lambda m: m.iccs())
    return SearchResult(mv, 0, None, 1, 1, 0.0, [mv])


def test_the_computer_offers_a_draw_and_the_player_takes_it(tmp_path, driver, page):
    srv = LiveServer(tmp_path / "data", move_provider=level_computer)
    srv.start()
    try:
        api = httpx.Client(base_url=srv.url, headers={"X-Xiangqi-Token": srv.app.state.token,
                                                      "Origin": srv.url.rstrip("/")}, timeout=60)
        assert api.put("/api/settings", json={"computer_tendency": "compliant"}).status_code == 200
        driver.open(srv.url)
        page.click("#btn-settings")
        expect(page.locator("#set-tendency")).to_have_value("compliant")
        page.click("#dlg-settings button[value=close]")
        rng = random.Random(3)
        while driver.plies() < 50:  # Red's quiet random moves, the computer's first legal ones
            st = driver.state()
            if st["turn"] != "red" or st["thinking"]:
                page.wait_for_timeout(20)
                continue
            b = Board(st["fen"])
            quiet = [m for m in sorted(b.legal_moves, key=lambda m: m.iccs()) if not b.is_capture(m)]
            n = driver.plies()
            assert api.post("/api/game/move", json={"move": rng.choice(quiet).iccs()}).status_code == 200
            driver.wait_plies(n + 2)
        expect(page.locator("#status .computer-offer")).to_contain_text("电脑提和")
        page.click("#btn-take-draw")
        expect(page.locator("#status")).to_have_text("和棋 — 电脑提和，双方同意")
    finally:
        srv.stop()
