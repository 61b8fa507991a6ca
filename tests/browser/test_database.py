"""The page's database browser and opening explorer (database.js, explorer.js) on a live server whose
data dir holds a games database: the 15 CCPD sample games and the eight hand-made explorer games of
tests/db/test_explore.py (counts there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect
from tests.browser.conftest import LiveServer, first_move
from tests.db.test_explore import GAMES, _pgn

from xiangqi.db import connect, import_paths

pytestmark = pytest.mark.browser
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def db_server(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    engine = connect(f"sqlite:///{data / 'games.db'}")
    import_paths(engine, sorted((DATA / "corpus" / "ccpd").glob("*.pgn")))
    for collection in ("master", "mine"):
        path = tmp_path / f"{collection}.pgn"
        text = "\n".join(_pgn(n, m, r, d) for n, m, r, d, c in GAMES if c == collection)
        path.write_text(text, encoding="utf-8")
        import_paths(engine, [path], collection=collection)
    engine.dispose()
    srv = LiveServer(data, move_provider=first_move)
    srv.start()
    yield srv
    srv.stop()


def test_explorer_plays_its_moves_in_a_two_player_game(db_server, driver, page):
    driver.open(db_server.url)
    driver.new_game("two")
    page.click("#btn-explorer")
    rows = page.locator("#ex-rows tr")
    # the start: 炮二平五 in 6 hand-made games and 5 CCPD games (the other CCPD games start from a FEN
    # or open otherwise)
    expect(rows.first).to_contain_text("炮二平五")
    first = rows.first.locator("td").nth(1)
    expect(first).to_have_text("11")
    rows.first.locator(".ex-play").click()
    driver.wait_plies(1)
    expect(page.locator("#ex-opening")).to_have_text("B00 中炮局")
    expect(page.locator("#ex-rows tr").first).to_contain_text("马8进7")
    page.select_option("#ex-source", "mine")
    expect(page.locator("#ex-rows tr")).to_have_count(1)
    expect(page.locator("#ex-rows tr .ex-bar")).to_have_attribute("aria-label", "100% / 0% / 0%")


def test_explorer_is_off_against_the_computer(db_server, driver, page):
    driver.open(db_server.url)
    driver.new_game("red")
    page.click("#btn-explorer")
    expect(page.locator("#ex-blocked")).to_be_visible()
    expect(page.locator("#ex-body")).to_be_hidden()


def test_database_browser_filters_pages_and_opens_a_game(db_server, driver, page):
    driver.open(db_server.url)
    page.click("#btn-library")  # no saved game: the database tab
    expect(page.locator("#db-pane")).to_be_visible()
    rows = page.locator("#db-rows tr")
    expect(rows).to_have_count(20)
    expect(page.locator("#db-count")).to_have_text("1–20 / 23")
    page.click("#db-next")
    expect(rows).to_have_count(3)
    page.fill("#db-player", "胡榮華")
    expect(rows).to_have_count(5)
    page.fill("#db-date-from", "1998/3")
    expect(page.locator("#db-error")).to_contain_text("date_from")
    page.fill("#db-date-from", "")
    page.select_option("#db-result", "red")
    expect(rows).to_have_count(3)
    rows.first.locator(".db-open").click()
    expect(page.locator("#record")).to_be_visible()
    expect(page.locator("#rc-title")).to_contain_text("胡榮華")


def test_search_this_position_from_the_board(db_server, driver, page):
    driver.open(db_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    page.click("#btn-search-pos")
    expect(page.locator("#db-pos")).to_be_visible()
    rows = page.locator("#db-rows tr")
    expect(rows).to_have_count(13)  # 炮二平五 in 11 games, 炮八平五 (mirrored) in 2
    expect(page.locator("#db-rows td.db-ply").first).to_have_text("1")
    page.uncheck("#db-mirror")
    expect(rows).to_have_count(11)
    rows.first.locator(".db-open").click()
    expect(page.locator("#record")).to_be_visible()
    expect(page.locator("#rc-ply")).to_have_text(re.compile(r"^1 / \d+$"))  # at the searched position
    # browsing the record, the explorer follows the record's line; its move steps the record on
    page.click("#btn-explorer")
    expect(page.locator("#ex-opening")).to_have_text("B00 中炮局")


def test_explorer_and_opening_line_in_english(db_server, driver, page):
    """In English the ECCO names are the English ones (study/data/ecco_terms_en.tsv), in the explorer and
    on the game's opening line."""
    import os

    driver.open(db_server.url)
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button[value=close]")
    driver.new_game("two")
    page.click("#btn-explorer")
    expect(page.locator("#ex-rows tr").first).to_contain_text("炮二平五")
    page.locator("#ex-rows tr").first.locator(".ex-play").click()
    driver.wait_plies(1)
    expect(page.locator("#ex-opening")).to_have_text("B00 Central Cannon Opening")
    page.locator("#ex-rows tr").first.locator(".ex-play").click()  # 马8进7
    driver.wait_plies(2)
    expect(page.locator("#ex-opening")).to_have_text("B05 Central Cannon vs Left Horse")
    expect(page.locator("#opening-line .opening-name")).to_have_text("Central Cannon vs Left Horse")
    shots = os.environ.get("XQ_SHOTS")
    if shots:
        for w, h in ((1366, 768), (390, 844)):
            page.set_viewport_size({"width": w, "height": h})
            page.wait_for_timeout(300)
            page.screenshot(path=f"{shots}/explorer-en-{w}.png", full_page=True)
