"""Take the screenshots in docs/screenshots/ with Playwright and Debian's Chromium.

Run from the repository root: ``.venv/bin/python docs/screenshots/make_screenshots.py``
(``... make_screenshots.py topbar``: only the top bar's pictures, ``topbar-*.png``).
The server runs in a thread with a temporary data dir; the computer's moves come
from a fixed list so the pictures are the same every time.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from xiangqi.core.board import Move
from xiangqi.web.run import free_port
from xiangqi.web.server import create_app

OUT = Path(__file__).parent
RECORDS = OUT.parent.parent / "tests" / "data" / "records"
# 中炮对屏风马: the human plays Red, the "computer" answers from this list.
REPLIES = iter(["h9g7", "i9h9", "b9c7", "a9b9", "c6c5", "h7i7"])
HUMAN = ["h2e2", "h0g2", "i0h0", "b0c2", "a0b0", "h0h6"]


def scripted(board, level):
    return Move.from_iccs(next(REPLIES))


def open_page(browser, url: str, width: int, height: int, scale: int = 1):
    """A new page of ``width`` x ``height`` CSS pixels (``scale`` device pixels each) on ``url``,
    once it has its state and its WebSocket."""
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=scale)
    page.goto(url)
    page.wait_for_selector("body[data-ready='1'][data-connected='1']")
    page.wait_for_timeout(300)
    return page


def top_action(page, selector: str) -> None:
    """Click a top-bar action, through the 更多 menu when it is not in the bar (phone size)."""
    if not page.locator(selector).is_visible():
        page.click("#btn-more")
    page.click(selector)


def top_bar(browser, url: str) -> None:
    """The top bar at desktop size (every action in one row) and at phone size, its 更多 menu closed
    and open (issue 31)."""
    page = open_page(browser, url, 1280, 800)
    page.screenshot(path=str(OUT / "topbar-desktop.png"))
    page.close()
    phone = open_page(browser, url, 390, 844, 2)
    phone.screenshot(path=str(OUT / "topbar-phone.png"))
    phone.click("#btn-more")
    phone.wait_for_selector("#more-menu.open")
    phone.wait_for_timeout(200)
    phone.screenshot(path=str(OUT / "topbar-phone-menu.png"))
    phone.close()


def main(only: str = "") -> None:
    data = tempfile.mkdtemp()
    app = create_app(data, move_provider=scripted, warmup=False, engine_delay_s=0)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        top_bar(browser, url)
        if only == "topbar":
            browser.close()
            server.should_exit = True
            th.join()
            return
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(url)
        page.wait_for_selector("body[data-ready='1'][data-connected='1']")
        page.click("#btn-new")
        page.check("#dlg-new input[name=mode][value=red]")
        page.select_option("#sel-tc", "fischer")
        page.wait_for_timeout(200)
        page.screenshot(path=str(OUT / "new-game.png"))
        page.click("#btn-start")
        page.wait_for_selector("body[data-connected='1'][data-plies='0']")
        for i, mv in enumerate(HUMAN):
            page.click(f".xq-hit[data-sq='{mv[:2]}']")
            page.click(f".xq-hit[data-sq='{mv[2:]}']")
            page.wait_for_selector(f"body[data-plies='{2 * i + 2}'][data-thinking='0']")
        page.click(".xq-hit[data-sq='b2']")  # show a selected piece with its destinations
        page.wait_for_timeout(400)
        page.screenshot(path=str(OUT / "desktop.png"))
        page.click(".xq-hit[data-sq='b2']")
        page.click("#btn-hint")  # the real engine's hint: arrow, rings and the text in the panel
        page.wait_for_selector(".xq-arrow.hint", state="attached", timeout=120_000)
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "hint.png"))

        page.click("#btn-edit")
        page.fill("#ed-fen", "4k4/9/9/9/9/9/9/c8/9/R2B1K3 r - - 0 1")
        page.click("#ed-load")
        page.wait_for_selector("body[data-editor-valid='0']")
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "editor.png"))
        page.click("#ed-exit")

        page.click("#btn-settings")
        page.select_option("#set-mode", "dark")
        page.select_option("#set-language", "en")
        page.click("#dlg-settings button[value=close]")
        page.click("#btn-resign")
        page.click("#confirm-yes")
        page.wait_for_selector("#dlg-result[open]")
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "result-dark-en.png"))
        page.click("#dlg-result button[value=close]")
        page.click("#btn-library")
        page.wait_for_selector("#lib-rows tr")
        page.locator("#lib-rows .lib-open").first.click()
        page.click("#rp-prev")
        page.wait_for_timeout(400)
        page.screenshot(path=str(OUT / "replay-dark-en.png"))
        page.click("#rp-exit")
        page.click("#btn-settings")
        page.select_option("#set-mode", "light")
        page.select_option("#set-language", "zh")
        page.select_option("#set-theme", "flat")
        page.click("#dlg-settings button[value=close]")
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "flat.png"))
        page.click("#btn-settings")
        page.select_option("#set-theme", "wood")
        page.click("#dlg-settings button[value=close]")

        # A record with variations and comments in the record browser (desktop, then phone below).
        page.click("#btn-open")
        page.set_input_files("#file-open", str(RECORDS / "xqf" / "xqbase_SAMPLE.XQF"))
        page.wait_for_selector("#record:not([hidden])")
        page.click("#rc-moves .mv[data-pos='5']")
        page.evaluate("document.querySelector('#toast').hidden = true")
        page.wait_for_timeout(400)
        page.screenshot(path=str(OUT / "record-comments.png"))
        page.set_input_files("#file-open", str(RECORDS / "xqf" / "cchess_game_varations.xqf"))
        page.wait_for_selector("body[data-record-lines='6']")
        page.click("#rc-moves .mv[data-pos='6']")
        page.evaluate("document.querySelector('#toast').hidden = true")
        page.wait_for_timeout(400)
        page.screenshot(path=str(OUT / "record-variations.png"))
        page.click("#rc-exit")

        phone = open_page(browser, url, 390, 844, 2)
        phone.screenshot(path=str(OUT / "phone.png"))
        top_action(phone, "#btn-edit")
        phone.click("#ed-initial")
        phone.wait_for_selector("body[data-editor-valid='1']")
        phone.wait_for_timeout(300)
        phone.screenshot(path=str(OUT / "phone-editor.png"), full_page=True)
        phone.click("#ed-exit")
        top_action(phone, "#btn-open")
        phone.set_input_files("#file-open", str(RECORDS / "xqf" / "cchess_game_varations.xqf"))
        phone.wait_for_selector("#record:not([hidden])")
        phone.click("#rc-next")
        phone.evaluate("document.querySelector('#toast').hidden = true")
        phone.wait_for_timeout(400)
        phone.screenshot(path=str(OUT / "phone-record.png"), full_page=True)
        browser.close()
    server.should_exit = True
    th.join()


if __name__ == "__main__":
    main(*sys.argv[1:2])
