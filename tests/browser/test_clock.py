"""Clocks in the browser: shown on the board, counting down, and a flag fall loses with its reason."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_per_move_clock_runs_out(quick_server, driver, page):
    driver.open(quick_server.url)
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=two]")
    page.select_option("#sel-tc", "per_move")
    expect(page.locator("#in-per-move")).to_be_visible()
    expect(page.locator("#in-base")).to_be_hidden()
    page.fill("#in-per-move", "2")
    driver.submit_new_game()
    expect(page.locator("#bar-bottom .clock")).to_be_visible()
    driver.play("h2e2", 1)  # Red moves in time; Black's 2 s run out
    expect(page.locator("#dlg-result")).to_be_visible(timeout=8_000)
    expect(page.locator("#result-headline")).to_have_text("红胜")
    expect(page.locator("#result-reason")).to_have_text("黑方超时")
    assert driver.state()["result"]["termination"] == "timeout"


def test_game_clock_counts_down_and_adds_increment(quick_server, driver, page):
    driver.open(quick_server.url)
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=two]")
    page.select_option("#sel-tc", "fischer")
    page.fill("#in-base", "1")
    page.fill("#in-inc", "10")
    driver.submit_new_game()
    bottom = page.locator("#bar-bottom .clock")
    expect(bottom).to_have_class("clock running")
    page.wait_for_timeout(1500)
    shown = int(bottom.get_attribute("data-ms"))
    assert 55_000 < shown < 59_500  # counting down from 1:00
    driver.play("h2e2", 1)
    red_ms = driver.state()["clock"]["red_ms"]
    assert 65_000 < red_ms <= 70_000  # 60 s - about 2 s used + 10 s increment
    expect(page.locator("#bar-top .clock")).to_have_class("clock running")
    # Red's clock is stopped: it shows the server's value, whole seconds rounded up.
    expect(bottom).to_have_attribute("data-ms", str(red_ms))
    secs = -(-red_ms // 1000)
    expect(bottom).to_have_text(f"{secs // 60}:{secs % 60:02d}")
