"""Settings → engines in the browser: a UCI engine added by its path (checked, its options shown),
chosen as the computer in the new-game dialog, and as the analyser of the engine panel; screenshots
of the settings (desktop and phone) for looking at."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect
from tests.browser.conftest import LiveServer, from_peer

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
    expect(page.locator("#eng-status")).to_contain_text("FakeEngine（UCI，")
    expect(page.locator("#eng-options [data-option='Hash']")).to_have_value("16")
    page.fill("#eng-new-time", "0.2")
    page.click("#eng-add")
    expect(page.locator("#eng-list .eng-item")).to_have_count(before + 1)


def test_an_added_engine_plays_and_analyses(server, driver, page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.open(server.url)
    page.click("#btn-settings")
    expect(page.locator("#eng-empty")).to_be_visible()
    # a program that is not an engine: the reason, in Chinese
    page.fill("#eng-path", "/bin/cat /dev/null")
    page.click("#eng-check")
    expect(page.locator("#eng-status")).to_contain_text("握手失败")
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
    # an added engine is an opponent (对手), not a level (难度), and it plays at its own strength
    expect(page.locator("#sel-level optgroup option")).to_have_count(0)
    expect(page.locator("#sel-opponent optgroup.added-engines option")).to_have_count(2)
    page.select_option("#sel-opponent", "engine:1")
    expect(page.locator("#sel-level")).to_be_disabled()
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
    expect(best.locator(".ep-pv")).to_contain_text("炮二平五")
    expect(best.locator(".ep-score")).to_have_text("+0.30")
    page.screenshot(path=str(SHOTS / "analysis-added-engine-desktop.png"))


def test_a_round_robin_in_the_page_shows_its_cross_table(server, driver, page):
    """Three added engines (see tests/web/test_tournament_api.py for why the results are certain):
    the cross table fills in, the points are right, and the games are in the library."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    registry = server.app.state.engines
    for mode in ("first", "illegal", "die"):
        registry.add(sys.executable, [FAKE, mode], movetime_s=0.1)
    driver.open(server.url)
    page.click("#btn-settings")
    expect(page.locator("#eng-list .eng-item")).to_have_count(3)
    page.click("#btn-tournament")
    for key in ("engine:1", "engine:2", "engine:3"):
        page.check(f"#tn-players input[value='{key}']")
    page.fill("#tn-games", "2")
    page.fill("#tn-movetime", "0.1")
    page.click("#tn-start")
    page.wait_for_selector("body[data-tournament='done']", timeout=90_000)
    expect(page.locator("#tn-status")).to_have_text("比赛结束：6 局，已存入棋谱库")
    expect(page.locator("#tn-table td[data-cell='0-1']")).to_have_text("2-0-0")
    expect(page.locator("#tn-table td[data-cell='1-2']")).to_have_text("1-0-1")
    expect(page.locator("#tn-table .tn-points")).to_have_text(["4", "1", "1"])
    page.screenshot(path=str(SHOTS / "tournament-desktop.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "tournament-phone.png"))
    rows = server.app.state.store.list_games()
    assert len(rows) == 6 and {r["result"] for r in rows} <= {"1-0", "0-1"}


@pytest.mark.slow
@pytest.mark.ci
def test_a_round_robin_of_three_levels(server, driver, page, engine_ready):
    """The issue's case: three built-in levels, two games a pair, at 0.05 s a move."""
    driver.open(server.url)
    page.click("#btn-settings")
    page.click("#btn-tournament")
    for key in ("beginner", "intermediate", "advanced"):
        page.check(f"#tn-players input[value='{key}']")
    page.fill("#tn-movetime", "0.05")
    page.click("#tn-start")
    page.wait_for_selector("body[data-tournament='done']", timeout=600_000)
    points = [float(x) for x in page.locator("#tn-table .tn-points").all_inner_texts()]
    assert sum(points) == 6.0  # 6 games, a point each
    page.screenshot(path=str(SHOTS / "tournament-levels-desktop.png"))


def test_a_device_on_the_network_is_told_engines_are_added_on_the_server_machine(tmp_path, driver, page):
    """With --lan a phone on the network plays, but cannot add an engine (a program of the server's
    machine): the settings say so where the form was, and the matches dialog says why it cannot start."""
    srv = LiveServer(tmp_path / "data", warmup=False, wrap=from_peer("192.0.2.5"))
    srv.start()
    try:
        driver.open(srv.url)
        page.click("#btn-settings")
        expect(page.locator("#eng-public")).to_be_visible()
        expect(page.locator("#eng-public")).to_have_text(
            "此操作会在服务器上启动程序（添加、检查或运行引擎，引擎比赛），只能在服务器所在的电脑上进行，不能通过网络")
        expect(page.locator("#eng-add-form")).to_be_hidden()
        page.click("#btn-tournament")
        expect(page.locator("#tn-status")).to_contain_text("只能在服务器所在的电脑上进行")
        assert srv.app.state.tournaments.current is None
    finally:
        srv.stop()
