"""随机开局 in the page: a shuffled start from the new-game dialog, played and resigned; the PGN names it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from xiangqi.core.board import Board
from xiangqi.core.variants import shuffle_number

pytestmark = pytest.mark.browser


def test_a_random_start_game_played_to_its_end(quick_server, driver, page):
    driver.open(quick_server.url)
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=red]")
    page.select_option("#sel-start", "random")
    driver.submit_new_game()
    st = driver.state()
    number = shuffle_number(st["start_fen"])
    assert number is not None and st["start_fen"] != Board().fen()
    for _ in range(3):  # Red plays its first legal move, the computer answers
        b = Board(driver.state()["fen"])
        mv = min(b.legal_moves, key=lambda m: m.iccs())
        n = driver.plies()
        driver.play(mv.iccs(), n + 2)
    page.click("#btn-resign")
    page.click("#confirm-yes")
    expect(page.locator("#status")).to_contain_text("红方认输")
    pgn = page.evaluate("fetch('/api/game/pgn?notation=iccs', {headers: {'X-Xiangqi-Token': "
                        "document.querySelector('meta[name=xiangqi-token]').content}}).then(r => r.text())")
    assert '[Variant "random"]' in pgn and f'[Shuffle "{number}"]' in pgn and '[Result "0-1"]' in pgn


def test_the_new_game_dialog_opens_on_the_standard_start_after_a_random_game(quick_server, driver, page):
    """Issue 31: the dialog silently kept 随机开局 for the next game."""
    driver.open(quick_server.url)
    page.click("#btn-new")
    page.select_option("#sel-start", "random")
    driver.submit_new_game()
    assert shuffle_number(driver.state()["start_fen"]) is not None
    page.click("#btn-new")
    expect(page.locator("#sel-start")).to_have_value("")
    driver.submit_new_game()
    assert driver.state()["start_fen"] == Board().fen()
