"""The result dialog of a repetition ruling shows the referee's explanation: each move of the cycle
with its class and the article that decided it (the state's result.explain)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from playwright.sync_api import expect

# Red's rook follows a lone black horse between d7 and f6 (tests/referee/test_explain.py): after
# eight plies Red 长捉 loses.
FEN = "3akab2/9/3n5/R8/9/9/9/9/4A4/3AK4 w - - 0 1"
MOVES = "a6a7 d7f6 a7a6 f6d7 a6a7 d7f6 a7a6 f6d7".split()
SHOTS = Path(os.environ.get("XIANGQI_SHOTS", "/tmp/shots-referee"))


def test_result_dialog_explains_the_repetition_ruling(quick_server, driver, page):
    api = httpx.Client(base_url=quick_server.url, headers={"X-Xiangqi-Token": quick_server.app.state.token},
                       timeout=60)
    for name, size in (("desktop", {"width": 1366, "height": 768}), ("phone", {"width": 390, "height": 844})):
        page.set_viewport_size(size)
        api.post("/api/game/new", json={"red": "human", "black": "human", "fen": FEN}).raise_for_status()
        for mv in MOVES[:-1]:
            api.post("/api/game/move", json={"move": mv}).raise_for_status()
        driver.open(quick_server.url)
        driver.click_move(MOVES[-1])  # the player completes the cycle on the board
        expect(page.locator("#dlg-result")).to_be_visible()
        expect(page.locator("#result-reason")).to_have_text("红方长捉，判负")
        box = page.locator("#result-explain")
        expect(box).to_be_visible()
        box.locator("summary").click()
        text = box.locator("pre").inner_text()
        assert text.splitlines()[0] == "红 车九进一: 捉 马 (第24.3条, 无根子)"
        assert "红方: 长捉 — 禁止着法 (第24.13/24.14条)" in text
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"result-explain-{name}.png"))
    # Another result (a resignation) has no explanation.
    page.click("#dlg-result button[value=close]")
    api.post("/api/game/new", json={"red": "human", "black": "human"}).raise_for_status()
    driver.open(quick_server.url)
    driver.top_action("#btn-resign")
    page.click("#confirm-yes")
    expect(page.locator("#dlg-result")).to_be_visible()
    expect(page.locator("#result-explain")).to_be_hidden()
