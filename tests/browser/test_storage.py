"""What the page shows of storage faults and engine failures (issue 10): a disk-full banner that
stays while nothing can be saved and goes when play resumes, the notices of what was kept aside at
start-up shown once, the computer's failure with its retry button, each in the page's language.
Screenshots at 1366x768 and 390x844 go to /tmp/ui-storage-*.png."""

from __future__ import annotations

import re
import sqlite3

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect
from tests.browser.conftest import LiveServer, failing_first, first_move

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": (1366, 768), "phone": (390, 844)}
# file paths, quoted names and format words are left as they are in a Chinese text
TOKEN = re.compile(r"\S*/\S*|'[^']*'|\b(?:FEN|ICCS|JSON|UTF-8|SQLite|damaged_games|RuntimeError|data-dir)\b")


class Disk:
    """Makes the server's database fail every write with SQLite's own 'database or disk is full'
    (as tests/web/test_storage_faults.py does)."""

    def __init__(self, server: LiveServer) -> None:
        self.full = False

        @sa.event.listens_for(server.app.state.store.engine, "do_execute")
        def _write(cursor, statement, parameters, context):  # noqa: ANN001
            if self.full and statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
                raise sqlite3.OperationalError("database or disk is full")


def set_language(page, lang: str) -> None:
    page.click("#btn-settings")
    page.select_option("#set-language", lang)
    page.click("#dlg-settings button[value=close]")


def in_view(page, sel: str) -> bool:
    """Whether the element is wholly inside the viewport (the page not scrolled)."""
    return page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }""", sel)


def no_english(text: str) -> bool:
    return not re.search(r"[A-Za-z]{3,}", TOKEN.sub("", text))


def test_disk_full_banner_stays_until_play_resumes(quick_server, driver, page):
    """A move that cannot be saved: the banner says the disk is full and the move was not played, in
    Chinese and in English, also after a reload; it goes when the move is saved."""
    driver.open(quick_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    disk = Disk(quick_server)
    banner = page.locator("#storage-banner")
    expect(banner).to_be_hidden()
    disk.full = True
    driver.click_move("h9g7")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("磁盘已满")
    expect(banner).to_contain_text("没有走成")
    expect(banner).to_contain_text("腾出磁盘空间")
    assert no_english(banner.inner_text()), banner.inner_text()
    assert "电脑" not in banner.inner_text()  # two players: no computer move to retry
    assert page.locator("#toast").is_hidden()  # said by the banner, not also by a toast over it
    banner.locator("summary").click()  # the server's words on request
    expect(banner.locator("details p")).to_contain_text("磁盘已满：没有写入 /")
    assert no_english(banner.inner_text()), banner.inner_text()
    assert driver.plies() == 1 and driver.state()["storage_error"]["kind"] == "full"
    page.wait_for_timeout(4000)  # longer than a toast: the banner stays
    expect(banner).to_be_visible()
    for name, (w, h) in VIEWPORTS.items():
        page.set_viewport_size({"width": w, "height": h})
        page.evaluate("document.querySelector('#storage-banner').scrollIntoView({block: 'nearest'})")
        page.screenshot(path=f"/tmp/ui-storage-full-{name}.png")
        assert in_view(page, "#storage-banner"), name
        assert page.evaluate("document.documentElement.scrollWidth") <= w
    page.set_viewport_size({"width": 1366, "height": 768})
    assert page.evaluate("document.scrollingElement.scrollTop") == 0
    page.reload()  # the state says it: a reloaded page shows it too
    page.wait_for_selector("body[data-ready='1'][data-connected='1']")
    expect(banner).to_be_visible()
    set_language(page, "en")
    expect(banner).to_contain_text("The disk is full")
    expect(banner).to_contain_text("was not played")
    assert not re.search(r"[\u4e00-\u9fff]", banner.inner_text())
    disk.full = False  # space is back: the move is played and the banner goes
    driver.play("h9g7", 2)
    expect(banner).to_be_hidden()
    assert page.get_attribute("body", "data-storage") == ""


def test_the_computers_unsaved_move_shows_the_banner_until_it_is_saved(tmp_path, driver, page):
    holder: dict = {}

    def provider(board, level):
        holder["disk"].full = True  # the disk fills while the computer thinks
        return first_move(board, level)

    srv = LiveServer(tmp_path / "data", move_provider=provider)
    srv.start()
    try:
        srv.app.state.hub.storage_retry_s = 0.2
        holder["disk"] = Disk(srv)
        driver.open(srv.url)
        driver.new_game("red")
        driver.click_move("h2e2")
        banner = page.locator("#storage-banner")
        expect(banner).to_contain_text("磁盘已满")
        expect(banner).to_contain_text("电脑的着法会自动重试")
        assert driver.plies() == 1
        holder["disk"].full = False
        driver.wait_plies(2)
        expect(banner).to_be_hidden()
    finally:
        srv.stop()


def test_a_damaged_database_is_told_once(tmp_path, driver, page):
    """A damaged database kept aside at start-up: a notice in Chinese (then English) naming the kept
    file; dismissed, and not shown again after a reload; a new notice is shown."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "xiangqi.db").write_bytes(b"\x13garbage" * 1000)
    srv = LiveServer(data, move_provider=first_move)
    srv.start()
    try:
        driver.open(srv.url)
        notices = page.locator("#storage-notices .storage-notice")
        expect(notices).to_have_count(1)
        text = notices.first.inner_text()
        assert "数据库文件已损坏" in text and "另存为" in text and "xiangqi.db.damaged-" in text, text
        assert no_english(text.replace("知道了", "")), text
        for name, (w, h) in VIEWPORTS.items():
            page.set_viewport_size({"width": w, "height": h})
            page.evaluate("document.querySelector('#storage-notices').scrollIntoView({block: 'nearest'})")
            page.screenshot(path=f"/tmp/ui-storage-notice-{name}.png")
            assert in_view(page, "#storage-notices"), name
            assert page.evaluate("document.documentElement.scrollWidth") <= w
        page.set_viewport_size({"width": 1366, "height": 768})
        set_language(page, "en")
        expect(notices.first).to_contain_text("The database file was damaged")
        expect(notices.first).to_contain_text("a fresh one was started")
        notices.first.locator("button").click()
        expect(notices).to_have_count(0)
        expect(page.locator("#storage-notices")).to_be_hidden()
        page.reload()
        page.wait_for_selector("body[data-ready='1'][data-connected='1']")
        page.wait_for_timeout(300)
        expect(notices).to_have_count(0)  # shown once
        # the same page next to another notice: only the new one is shown
        lost = ("the saved current game could not be replayed "
                "(IllegalMoveError: illegal move a0a5: no piece on a0)")
        srv.app.state.store.notices.append({"kind": "damaged_game", "path": None, "message": lost})
        page.reload()
        page.wait_for_selector("body[data-ready='1'][data-connected='1']")
        expect(notices).to_have_count(1)
        expect(notices.first).to_contain_text("The last game was damaged")
        set_language(page, "zh")
        expect(notices.first).to_contain_text("保存的当前对局无法复原（着法 a0a5 不合规则：a0 上没有棋子）")
    finally:
        srv.stop()


def test_engine_failure_and_retry_in_the_pages_language(tmp_path, driver, page):
    """The computer fails twice: the status says why in Chinese (the reason translated, not the
    English inside a Chinese sentence) with a 重试 button, in English with Retry; Retry plays on."""
    srv = LiveServer(tmp_path / "data", move_provider=failing_first(2))
    srv.start()
    try:
        driver.open(srv.url)
        driver.new_game("red")
        driver.click_move("h2e2")
        retry = page.locator("#btn-retry")
        expect(retry).to_be_visible()
        expect(retry).to_have_text("重试")
        status = page.locator("#status")
        expect(status).to_contain_text("电脑未能走棋（引擎出错（RuntimeError: engine crashed）；已试 2 次）")
        assert no_english(status.inner_text().replace("engine crashed", "")), status.inner_text()
        assert page.locator("#toast").is_hidden()  # the status says it; no toast over the button
        for name, (w, h) in VIEWPORTS.items():
            page.set_viewport_size({"width": w, "height": h})
            page.evaluate("document.querySelector('#status').scrollIntoView({block: 'nearest'})")
            page.screenshot(path=f"/tmp/ui-engine-failed-{name}.png")
            assert in_view(page, "#btn-retry"), name
        page.set_viewport_size({"width": 1366, "height": 768})
        set_language(page, "en")
        expect(retry).to_have_text("Retry")
        expect(status).to_contain_text("The computer could not make its move (the engine failed: "
                                       "RuntimeError: engine crashed; 2 attempts)")
        retry.click()
        driver.wait_plies(2)
        expect(retry).to_have_count(0)
    finally:
        srv.stop()


def test_a_read_only_database_is_said_once_by_the_banner(quick_server, driver, page):
    """Opened read-only (the hub's start-up state for a read-only file, set here as the hub sets it
    from the store's notice): the banner says games can be viewed, not played; its notice is not
    repeated under it."""
    store, hub = quick_server.app.state.store, quick_server.app.state.hub
    store._open_read_only().dispose()  # the store's own read-only notice
    notice = store.notices[-1]
    hub.storage_error = {"kind": notice["kind"], "detail": notice["message"]}
    driver.open(quick_server.url)
    banner = page.locator("#storage-banner")
    expect(banner).to_contain_text("数据库是只读的")
    expect(banner).to_contain_text("可以查看对局，但不能走棋或保存")
    assert "没有走成" not in banner.inner_text()
    expect(page.locator("#storage-notices .storage-notice")).to_have_count(0)
    set_language(page, "en")
    expect(banner).to_contain_text("Games can be viewed but not played or saved")
