"""The page and versioned state: undo names the version shown; a failed computer can be retried or
played for. Two pages of one game, one with its incoming messages held back (a slow network)."""

from __future__ import annotations

from playwright.sync_api import expect
from tests.browser.conftest import LiveServer, failing_first

HOLD = """() => {
  const ws = window.xq.ws, deliver = ws.onmessage, held = [];
  ws.onmessage = (ev) => held.push(ev);
  window.releaseHeld = () => { ws.onmessage = deliver; held.forEach((ev) => deliver(ev)); };
}"""


def test_two_pages_pressing_undo_once_each_take_back_one_move(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("red")
    driver.play("h2e2", 2)
    driver.play("h0g2", 4)
    other = page.context.new_page()
    other.goto(quick_server.url)
    other.wait_for_selector("body[data-ready='1'][data-connected='1'][data-plies='4']")
    other.evaluate(HOLD)  # the second page hears nothing for a while
    page.click("#btn-undo")
    driver.wait_plies(2)
    other.click("#btn-undo")  # pressed on the position it still shows (4 plies)
    other.evaluate("window.releaseHeld()")
    other.wait_for_selector("body[data-plies='2']")
    page.wait_for_timeout(300)
    assert driver.plies() == 2 and int(other.get_attribute("body", "data-plies")) == 2
    assert [m["iccs"] for m in driver.state()["moves"]] == ["h2e2", "a6a5"]


def test_a_version_gap_makes_the_page_ask_for_the_state(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("red")
    driver.play("h2e2", 2)
    sent = page.evaluate("""() => {
      const ws = window.xq.ws, out = [];
      const send = ws.send.bind(ws);
      ws.send = (data) => { out.push(JSON.parse(data)); send(data); };
      window.sentMessages = out;
      const st = window.xq.state;
      const old = { ...st, version: st.version - 1, moves: [], fen: st.start_fen };
      ws.onmessage({ data: JSON.stringify({ type: "state", state: old }) });  // late: ignored
      const ahead = { ...st, version: st.version + 3 };
      ws.onmessage({ data: JSON.stringify({ type: "state", state: ahead }) });  // a gap: resync
      return out;
    }""")
    assert sent == [{"type": "state"}]
    assert driver.plies() == 2


def test_a_failed_computer_is_shown_and_the_player_can_move_for_it(tmp_path, driver, page):
    srv = LiveServer(tmp_path / "data", move_provider=failing_first(2))
    srv.start()
    try:
        driver.open(srv.url)
        driver.new_game("red")
        driver.click_move("h2e2")
        expect(page.locator("#btn-retry")).to_be_visible()
        expect(page.locator("#status")).to_contain_text("电脑未能走棋")
        driver.play("h7e7", 2)  # the player makes the computer's move
        driver.play("h0g2", 4)  # and the computer (working again) answers the next one
        expect(page.locator("#btn-retry")).to_have_count(0)
    finally:
        srv.stop()
