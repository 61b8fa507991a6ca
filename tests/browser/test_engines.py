"""Settings → engines in the browser: a UCI engine added by its path (checked, its options shown),
chosen as the computer in the new-game dialog, and as the analyser of the engine panel; screenshots
of the settings (desktop and phone) for looking at."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect
from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")
SHOTS = Path(os.environ.get("XQ_SHOTS", "/tmp/shots-engines"))


@pytest.fixture
def server(tmp_path):
    # the game's computer is the real player (no stand-in move provider), so that an added engine
    # is what answers; the built-in engine is not used by this test
    srv = LiveServer(tmp_path / "data", warmup=False)
    srv.start()
    yield srv
    srv.stop()


def add_engine(page, mode: str) -> None:
    before = page.locator("#eng-list .eng-item").count()
    page.fill("#eng-path", f"{sys.executable} {FAKE} {mode}")
    page.click("#eng-check")
    # a handshake starts a Python program: on a busy machine that takes seconds
    expect(page.locator("#eng-status")).to_contain_text("FakeEngine（UCI，", timeout=30_000)
    expect(page.locator("#eng-options [data-option='Hash']")).to_have_value("16")
    page.fill("#eng-new-time", "0.2")
    page.click("#eng-add")
    expect(page.locator("#eng-list .eng-item")).to_have_count(before + 1, timeout=30_000)


def test_an_added_engine_plays_and_analyses(server, driver, page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.open(server.url)
    page.click("#btn-settings")
    expect(page.locator("#eng-empty")).to_be_visible()
    # a program that is not an engine: the reason, in Chinese
    page.fill("#eng-path", "/bin/cat /dev/null")
    page.click("#eng-check")
    expect(page.locator("#eng-status")).to_contain_text("握手失败", timeout=30_000)
    expect(page.locator("#eng-add")).to_be_disabled()
    add_engine(page, "first")      # plays the first legal move
    add_engine(page, "variant")    # answers in ranks 1-10 like Fairy-Stockfish, with a PV
    expect(page.locator("#eng-list .eng-name").first).to_have_text("FakeEngine")
    page.screenshot(path=str(SHOTS / "settings-engines-desktop.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "settings-engines-phone.png"))
    page.set_viewport_size({"width": 1200, "height": 900})
    page.click("#dlg-settings button[value=close]")

    # the first added engine as the computer (Black)
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=red]")
    expect(page.locator("#sel-level optgroup option")).to_have_count(2)
    page.select_option("#sel-level", "engine:1")
    driver.submit_new_game()
    driver.play("h2e2", 2)
    moves = [m["iccs"] for m in driver.state()["moves"]]
    assert moves == ["h2e2", "a6a5"]  # the first legal move of Black in ICCS order
    expect(page.locator("#bar-top .who")).to_contain_text("FakeEngine")

    # the second one as the analyser, of the start position
    driver.new_game("two")
    page.click("#an-engine")
    expect(page.locator("#ep-engine-row")).to_be_visible()
    page.select_option("#ep-engine", "engine:2")
    best = page.locator("#ep-lines .ep-line").first
    expect(best.locator(".ep-pv")).to_contain_text("炮二平五", timeout=20_000)
    expect(best.locator(".ep-score")).to_have_text("+0.30")
    page.screenshot(path=str(SHOTS / "analysis-added-engine-desktop.png"))
