"""Clocks in the browser: shown on the board, counting down, and a flag fall loses with its reason."""

from __future__ import annotations

import time

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
    page.fill("#in-per-move", "5")
    driver.submit_new_game()
    expect(page.locator("#bar-bottom .clock")).to_be_visible()
    # Red's 5 s run from the new game and nobody moves: Red's flag falls. (Red used to move in time
    # first, by one API request, for Black's flag to fall: that move had to beat Red's 5 s, which a
    # loaded machine does not promise. A move's reset of the per-move time is tests/app/test_clock.py's,
    # on a fake clock.)
    expect(page.locator("#dlg-result")).to_be_visible()
    expect(page.locator("#result-headline")).to_have_text("黑胜")
    expect(page.locator("#result-reason")).to_have_text("红方超时")
    st = driver.state()
    assert st["result"]["termination"] == "timeout" and st["moves"] == []


def test_game_clock_counts_down_and_adds_increment(quick_server, driver, page):
    driver.open(quick_server.url)
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=two]")
    page.select_option("#sel-tc", "fischer")
    page.fill("#in-base", "1")
    page.fill("#in-inc", "10")
    t0 = time.monotonic()  # Red's clock starts after this (with the new game)
    driver.submit_new_game()
    bottom = page.locator("#bar-bottom .clock")
    expect(bottom).to_have_class("clock running")
    # counting down from 1:00: the page's clock (redrawn every 200 ms) goes below 0:59.5, waited for
    # (a loaded machine can hold a redraw for seconds: no fixed pause decides), and has used at most
    # the time since the new game (measured, not a fixed guess)
    page.wait_for_function("Number(document.querySelector('#bar-bottom .clock').dataset.ms) < 59500")
    shown = int(bottom.get_attribute("data-ms"))
    assert 60_000 - (time.monotonic() - t0) * 1000 - 500 < shown < 59_500
    driver.play("h2e2", 1)
    red_ms = driver.state()["clock"]["red_ms"]
    assert 70_000 - (time.monotonic() - t0) * 1000 - 500 < red_ms <= 70_000  # 60 s - used + 10 s
    expect(page.locator("#bar-top .clock")).to_have_class("clock running")
    # Red's clock is stopped: it shows the server's value, whole seconds rounded up.
    expect(bottom).to_have_attribute("data-ms", str(red_ms))
    secs = -(-red_ms // 1000)
    expect(bottom).to_have_text(f"{secs // 60}:{secs % 60:02d}")
