"""A new install as a new player meets it: an empty games database and no endgame tables.

Before: the explorer and the database browser were empty without saying why (only "use xiangqi db
import"), and endgame practice named a command different from the README's and offered no button.
Now the page says what is missing and offers the work as a background job with progress
(web/jobs_api.py, setup.js). The master games here are the 40-game sample of the shipped file
(tests/data/masters-sample.pgn.xz); the tables the four smallest of the default set (real ones).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from xiangqi.app.tasks.jobs import tablebases_job
from xiangqi.db import masters as masters_mod
from xiangqi.web.jobs_api import TB_COMMAND

pytestmark = pytest.mark.browser
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "masters-sample.pgn.xz"
README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_explorer_offers_the_master_games_and_imports_them(quick_server, driver, page, monkeypatch):
    monkeypatch.setattr(masters_mod, "masters_path", lambda: SAMPLE)
    driver.open(quick_server.url)
    driver.new_game("two")
    page.click("#btn-explorer")
    setup = page.locator("#ex-setup")
    expect(setup).to_be_visible()
    expect(setup).to_contain_text("还没有大师对局")
    expect(setup).to_contain_text("28,225")
    expect(page.locator("#ex-none")).to_contain_text("xiangqi db import --masters")
    setup.locator(".job-start").click()
    expect(setup).to_have_attribute("data-job", "done")
    expect(setup).to_contain_text("已导入 40 局大师对局")
    # the explorer asked again: the start position's moves of the 40 games
    expect(page.locator("#ex-rows tr").first).to_contain_text("炮二平五")
    assert int(page.get_attribute("body", "data-explorer-games")) == 40
    # the database browser has them too, and no longer offers the import
    page.click("#btn-library")
    expect(page.locator("#db-pane")).to_be_visible()
    expect(page.locator("#db-setup")).to_be_hidden()


def test_the_database_tab_says_what_is_missing(quick_server, driver, page):
    driver.open(quick_server.url)
    page.click("#btn-library")
    expect(page.locator("#db-setup")).to_be_visible()
    expect(page.locator("#db-setup .job-start")).to_have_text("导入大师对局")


def test_endgame_practice_generates_the_default_tables_from_the_page(quick_server, driver, page):
    # the four smallest endings of the default set (KPK KCK KNK KRK): real tables, quick to make
    jobs = quick_server.app.state.jobs
    jobs["tablebases"].work = tablebases_job(quick_server.data_dir / "tablebases", 4860)
    driver.open(quick_server.url)
    page.click("#btn-endgame")
    setup = page.locator("#eg-setup")
    expect(setup).to_be_visible()
    # the command the page names is the README's
    expect(setup.locator(".job-command")).to_have_text(TB_COMMAND)
    assert f"`.venv/bin/{TB_COMMAND}`" in README.read_text(encoding="utf-8")
    setup.locator(".job-start").click()
    # done: practice starts by itself with the tables made
    # (炮对将 KCK is made as well, but not offered: a lone cannon cannot mate)
    expect(page.locator("#eg-ending option")).to_have_count(3, timeout=120_000)
    expect(setup).to_be_hidden()
    expect(page.locator("#eg-status")).to_contain_text(re.compile("红先胜|黑先胜"))
