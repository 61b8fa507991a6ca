"""揭棋 in the page: a game against the computer from the new-game dialog, face-down pieces drawn
as discs, a reveal, resignation, the record in the library replayed with its hidden pieces; and a
computer-computer game played out to its end by the rules."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from xiangqi.core.jieqi import JieqiBoard, read_pgn

pytestmark = pytest.mark.browser


def _jieqi_state(page):
    return page.evaluate("window.xqJieqi.state")


def _start(page, mode: str, level: str = "beginner", capture: str = "capturer") -> None:
    page.click("#btn-new")
    page.check(f"#dlg-new input[name=mode][value={mode}]")
    page.select_option("#sel-level", level)
    page.select_option("#sel-start", "jieqi")
    expect(page.locator("#sel-jieqi-capture")).to_be_visible()
    page.select_option("#sel-jieqi-capture", capture)
    page.click("#btn-start")
    expect(page.locator("#jieqi")).to_be_visible()


def test_a_jieqi_game_against_the_computer(quick_server, driver, page):
    driver.open(quick_server.url)
    _start(page, "red")
    page.wait_for_selector("body[data-jieqi-plies='0'][data-jieqi-busy='0']")
    # 30 pieces face down (plain discs with a mark), the two kings face up
    expect(page.locator(".xq-piece.face-down")).to_have_count(30)
    expect(page.locator(".xq-piece.face-down .xq-piece-text")).to_have_count(0)
    expect(page.locator(".xq-piece[data-piece='K']")).to_have_count(1)
    expect(page.locator("#jq-pools")).to_contain_text("车×2")
    # Red's hidden piece on the cannon's square moves as a cannon: h2e2, and turns face up on e2
    driver.click_move("h2e2")
    page.wait_for_selector("body[data-jieqi-plies='2'][data-jieqi-busy='0']")
    st = _jieqi_state(page)
    revealed = st["moves"][0]["token"][-1]
    assert st["moves"][0]["token"] == f"h2e2={revealed}" and revealed in "ABNRCP"
    assert page.get_attribute(".xq-piece[data-sq='e2']", "data-piece") == revealed
    placement = st["fen"].split()[0]
    hidden = placement.count("X") + placement.count("x")
    assert 27 <= hidden <= 29  # Red's reveal, Black's reply (a reveal, perhaps a capture of a hidden piece)
    expect(page.locator(".xq-piece.face-down")).to_have_count(hidden)
    expect(page.locator("#jq-moves .mv")).to_have_count(2)
    assert page.locator("#jq-moves .mv").first.inner_text().startswith("暗炮二平五=")
    board = JieqiBoard(st["fen"])
    assert board.pool[True][revealed] == {"A": 2, "B": 2, "N": 2, "R": 2, "C": 2, "P": 5}[revealed] - 1
    # one more move of a hidden pawn, then resign
    driver.click_move("a3a4")
    page.wait_for_selector("body[data-jieqi-plies='4'][data-jieqi-busy='0']")
    page.click("#jq-resign")
    page.wait_for_selector("body[data-jieqi-result='0-1']")
    expect(page.locator("#jq-status")).to_contain_text("红方认输")
    # the library has it; its replay draws the start face down and the end as played
    page.click("#btn-library")
    row = page.locator("#dlg-library tbody tr").first
    expect(row).to_contain_text("红方认输")
    expect(row.locator(".lib-review")).to_be_disabled()
    row.locator(".lib-open").click()
    expect(page.locator("#replay")).to_be_visible()
    expect(page.locator("#jieqi")).to_be_hidden()
    expect(page.locator("#rp-moves .mv")).to_have_count(4)
    expect(page.locator("#rp-analyse")).to_be_hidden()
    page.click("#rp-first")
    expect(page.locator(".xq-piece.face-down")).to_have_count(30)
    pgn = page.evaluate(
        "fetch(document.querySelector('#rp-export').href, {headers: {'X-Xiangqi-Token': "
        "document.querySelector('meta[name=xiangqi-token]').content}}).then(r => r.text())"
    )
    rec = read_pgn(pgn)
    assert (
        rec.errors == []
        and rec.result == "0-1"
        and [m.token() for m in rec.board.moves][0] == f"h2e2={revealed}"
    )


@pytest.mark.slow
def test_a_computer_game_of_jieqi_ends_by_the_rules(quick_server, driver, page):
    driver.open(quick_server.url)
    _start(page, "cvc", capture="both")
    page.wait_for_function("Boolean(document.body.dataset.jieqiResult)", timeout=600_000)
    st = _jieqi_state(page)
    assert st["result"]["result"] in ("1-0", "0-1", "1/2-1/2") and "认输" not in st["result"]["reason_zh"]
    expect(page.locator("#jq-status")).to_have_text(st["result"]["reason_zh"])
