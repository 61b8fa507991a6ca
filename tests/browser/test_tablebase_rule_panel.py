"""A tablebase result of the repetition rule on the analysis board: in KRKN (车 vs 马) Red to move
wins because Black's horse can only check for ever, and one-sided perpetual check loses; the panel
says so instead of a mate count ("残局库：红胜（对方只能长将，长将判负）"), in both languages.
Slow: KRKN is generated for it (20-40 s). Screenshots go to $XIANGQI_SHOTS (default
/tmp/shots-tbrules)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from xiangqi.engine import tablebase as tb

FEN = "9/9/4k4/9/9/9/9/9/1n7/R2K5 w - - 0 1"  # K d0-d1 (帅六进一) forces the horse into 长将
ZH = "残局库：红胜（对方只能长将，长将判负）"
EN = "Tablebase: Red wins (the other side can only check perpetually, which loses)"
SHOTS = Path(os.environ.get("XIANGQI_SHOTS", "/tmp/shots-tbrules"))


@pytest.mark.slow
def test_engine_panel_shows_a_win_by_the_perpetual_check_rule(live_server, driver, page):
    tb.generate("KRKN", live_server.data_dir / "tablebases")
    api = httpx.Client(base_url=live_server.url, headers={"X-Xiangqi-Token": live_server.app.state.token},
                       timeout=60)
    api.post("/api/game/new", json={"red": "human", "black": "human", "fen": FEN}).raise_for_status()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1366, "height": 768})
    driver.open(live_server.url)
    page.click("#an-engine")
    page.wait_for_function("document.body.dataset.engineTb === 'win'", timeout=90_000)
    verdict = page.locator("#ep-tb")
    expect(verdict).to_have_text(f"{ZH} · 最佳着法：帅六进一")
    page.wait_for_function("document.body.dataset.engineBest === 'd0d1'")
    # the rule's score is no material balance: the bar is full and says who wins, not "+249.99"
    expect(page.locator("#eval-bar .eval-label")).to_have_text("红胜")
    assert page.locator("#eval-bar").get_attribute("data-red") == "100"
    page.screenshot(path=str(SHOTS / "tb-rule-panel-desktop.png"))
    page.click("#btn-hint")
    expect(page.locator("#hint-line")).to_contain_text(ZH)
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button.primary")
    expect(verdict).to_contain_text(EN)
    page.set_viewport_size({"width": 390, "height": 844})
    verdict.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "tb-rule-panel-phone-en.png"))
