"""The endgame table on the analysis board: the engine panel shows "残局库：红胜，7 步杀 · 最佳着法：马一进二"
(English on the English page), and the hint carries the verdict. Screenshots (desktop and phone) go
to $XIANGQI_SHOTS (default /tmp/shots-endgame)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from playwright.sync_api import expect

from xiangqi.engine import tablebase as tb

# 马 vs 象 (KNKB): Red mates in 13 plies = 7 moves, the only fastest move i6h8 (马一进二)
FEN = "5kb2/9/9/8N/9/9/9/9/9/3K5 w - - 0 1"
SHOTS = Path(os.environ.get("XIANGQI_SHOTS", "/tmp/shots-endgame"))


def test_engine_panel_shows_the_tablebase_verdict(live_server, driver, page):
    tb.generate("KNKB", live_server.data_dir / "tablebases")
    api = httpx.Client(base_url=live_server.url, headers={"X-Xiangqi-Token": live_server.app.state.token},
                       timeout=60)
    api.post("/api/game/new", json={"red": "human", "black": "human", "fen": FEN}).raise_for_status()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1366, "height": 768})
    driver.open(live_server.url)
    page.click("#an-engine")
    page.wait_for_function("document.body.dataset.engineTb === 'win'")
    verdict = page.locator("#ep-tb")
    expect(verdict).to_have_text("残局库：红胜，7 步杀 · 最佳着法：马一进二")
    # the engine's own line is the table's mate
    page.wait_for_function("document.body.dataset.engineBest === 'i6h8'")
    expect(page.locator("#ep-lines .ep-line").first.locator(".ep-score")).to_have_text("M7")
    page.screenshot(path=str(SHOTS / "tb-panel-desktop.png"))
    # the hint says it too
    page.click("#btn-hint")
    expect(page.locator("#hint-line")).to_contain_text("残局库：红胜，7 步杀")
    # English page
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button.primary")
    expect(verdict).to_have_text("Tablebase: Red mates in 7 · best: H1+2")
    page.set_viewport_size({"width": 390, "height": 844})
    verdict.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "tb-panel-phone-en.png"))
    driver.top_action("#btn-settings")
    page.select_option("#set-language", "zh")
    page.click("#dlg-settings button.primary")
    expect(verdict).to_contain_text("残局库：红胜，7 步杀")
    verdict.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "tb-panel-phone.png"))
