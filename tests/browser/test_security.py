"""In a real browser: the page works under its own Content Security Policy and across a server restart
(a new session token), and a page from another origin cannot drive the game (DESIGN.md, "Security")."""

from __future__ import annotations

import http.server
import threading

import httpx
import pytest
from tests.browser.conftest import WAIT_MS

pytestmark = [pytest.mark.browser]


def test_page_plays_under_its_content_security_policy(browser, quick_server):
    """Without Playwright's CSP bypass: no violation is reported while the page loads and plays a move."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        messages: list[str] = []
        page.on("console", lambda m: messages.append(m.text))
        page.on("pageerror", lambda e: messages.append(str(e)))
        page.goto(quick_server.url)
        page.wait_for_selector("body[data-ready='1'][data-connected='1']")
        page.click(".xq-hit[data-sq='h2']")
        page.click(".xq-hit[data-sq='e2']")
        page.wait_for_selector("body[data-plies='2'][data-thinking='0']")  # the computer answered
        assert not [m for m in messages if "Content Security Policy" in m or "Refused" in m], messages
    finally:
        context.close()


def test_page_keeps_working_after_a_restart_with_a_new_token(quick_server, driver, page):
    driver.open(quick_server.url)
    old = quick_server.app.state.token
    quick_server.restart()
    assert quick_server.app.state.token != old
    page.wait_for_selector("body[data-connected='1']")  # the WebSocket took the new token
    driver.new_game("two")  # a POST sent with the old token is refused once, then resent with the new one
    driver.play("h2e2", 1)
    assert driver.state()["moves"][0]["iccs"] == "h2e2"


def test_a_request_with_an_old_token_is_resent_with_the_new_one(quick_server, driver, page):
    """With the WebSocket stubbed (it would fetch the new token itself), a POST after a restart is
    refused for its old token, and the page resends it once with the token of the new start."""
    page.route_web_socket("**/ws/**", lambda ws: None)  # opens, never reaches the server
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if r.url.endswith("/api/game/new") else None)
    driver.open(quick_server.url)
    quick_server.restart()
    driver.new_game("two")
    assert statuses == [403, 200]
    st = httpx.get(quick_server.url + "api/game", timeout=60).json()
    assert st["players"] == {"red": "human", "black": "human"}


class _Elsewhere(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        body = b"<!doctype html><title>another site</title><p>hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


ATTACK = """async ([base, id]) => {
  const out = {};
  for (const path of ["/api/game/undo", "/api/game/resign"]) {
    try {
      await fetch(base + path, { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" },
                                 body: "{}" });
      out[path] = "sent";
    } catch (e) { out[path] = String(e); }
  }
  out.ws = await new Promise((resolve) => {
    const ws = new WebSocket(base.replace("http", "ws") + "/ws/game/" + id);
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "resign" }));
      setTimeout(() => resolve("open"), 500);
    };
    ws.onerror = () => resolve("refused");
  });
  return out;
}"""


def test_a_page_from_another_origin_cannot_drive_the_game(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Elsewhere)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    try:
        other = page.context.new_page()
        other.goto(f"http://127.0.0.1:{elsewhere.server_address[1]}/")  # another origin: another port
        game_id = driver.state()["id"]
        out = other.evaluate(ATTACK, [quick_server.url.rstrip("/"), game_id])
        assert out["ws"] == "refused", out
    finally:
        elsewhere.shutdown()
    st = httpx.get(quick_server.url + "api/game", timeout=60).json()
    assert [m["iccs"] for m in st["moves"]] == ["h2e2"] and st["result"] is None


READS = """async (base) => {
  const out = {};
  for (const [what, load] of [
    ["fetch", () => fetch(base + "/api/game", { mode: "no-cors" })],
    ["img", () => new Promise((ok, bad) => { const i = new Image(); i.onload = ok; i.onerror = bad;
                                             i.src = base + "/api/library"; })],
    ["script", () => new Promise((ok, bad) => { const s = document.createElement("script");
                                                s.onload = ok; s.onerror = bad; s.src = base + "/api/game";
                                                document.head.appendChild(s); })],
  ]) {
    try { await load(); out[what] = "loaded"; } catch (e) { out[what] = "error"; }
  }
  return out;
}"""


@pytest.mark.parametrize("site", ["127.0.0.1", "localhost"])  # same site (another port), another site
def test_a_page_from_another_origin_cannot_make_the_server_run_a_read(quick_server, page, monkeypatch, site):
    """A no-cors fetch, an <img> and a <script> carry no Origin: only Fetch Metadata tells them apart."""
    calls: list[str] = []
    hub, store = quick_server.app.state.hub, quick_server.app.state.store
    real_state, real_list = hub.state, store.list_games
    monkeypatch.setattr(hub, "state", lambda: calls.append("state") or real_state())
    monkeypatch.setattr(store, "list_games", lambda **kw: calls.append("library") or real_list(**kw))
    elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Elsewhere)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://{site}:{elsewhere.server_address[1]}/")
        out = page.evaluate(READS, quick_server.url.rstrip("/"))
    finally:
        elsewhere.shutdown()
    assert calls == [], (calls, out)
    assert httpx.get(quick_server.url + "api/game", timeout=60).status_code == 200 and calls == ["state"]
