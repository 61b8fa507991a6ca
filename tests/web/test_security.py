"""The local server answers only its own page and scripts that hold its token (DESIGN.md, "Security").

Each attack below is what a foreign web page in the user's browser, or a DNS-rebinding
page, can send: a foreign ``Host``, a foreign ``Origin``, a ``no-cors`` text/plain POST, a
form post (``Origin: null``), a WebSocket from another origin. None of them may read the
library or change the game; the page itself and a script that read the token still work.
"""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient  # noqa: F401 - type of api_client()
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect
from tests.webclient import BASE_URL, api_client, bare_client, run_coroutine

from xiangqi.cli import build_parser, main
from xiangqi.web.security import LocalGuard
from xiangqi.web.server import create_app

EVIL = "http://evil.example"
REFUSED = (WebSocketDenialResponse, WebSocketDisconnect)


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


@pytest.fixture
def app(tmp_path):
    return create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)


@pytest.fixture
def page(app):
    """The server's own page, with one move played in a two-human game."""
    with api_client(app) as c:
        assert c.post("/api/game/new", json={"red": "human", "black": "human"}).status_code == 200
        assert c.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
        yield c


def moves(page) -> list[str]:
    st = page.get("/api/game").json()
    return [m["iccs"] for m in st["moves"]] + ([st["result"]["result"]] if st.get("result") else [])


def saved_game(page) -> int:
    """Resign a game so that the library holds one row; returns its id (a fresh game is started)."""
    assert page.post("/api/game/resign").status_code == 200
    rows = page.get("/api/library").json()
    assert len(rows) == 1
    page.post("/api/game/new", json={"red": "human", "black": "human"})
    page.post("/api/game/move", json={"move": "h2e2"})
    return rows[0]["id"]


# -- Host: DNS rebinding ------------------------------------------------------------------

def test_foreign_host_cannot_read_or_delete_the_library(app, page):
    gid = saved_game(page)
    with bare_client(app, headers={"Host": "evil.example:8765"}) as rebound:
        r = rebound.get("/api/library")
        assert r.status_code == 421 and "evil.example" in r.json()["detail"]
        assert rebound.get("/").status_code == 421  # nor the page with its token
        # Even with the page's token (which a rebinding page cannot read anyway) nothing is deleted.
        r = rebound.delete(f"/api/library/{gid}", headers={"X-Xiangqi-Token": app.state.token})
        assert r.status_code == 421
    assert [row["id"] for row in page.get("/api/library").json()] == [gid]


FOREIGN_HOSTS = ["evil.example:8765", "127.0.0.1:9999", "localhost", "127.0.0.1.evil.example:8765",
                 "user@127.0.0.1:8765", "127.0.0.1:8765/x", ""]


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_only_this_servers_own_host_is_answered(app, host):
    with bare_client(app, headers={"Host": host}) as c:
        assert c.get("/api/game").status_code == 421, host


def test_a_second_host_header_is_refused(app):
    with bare_client(app) as c:
        r = c.get("/api/game", headers=[("Host", "127.0.0.1:8765"), ("Host", "evil.example:8765")])
        assert r.status_code == 400 and "host" in r.json()["detail"]


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "LOCALHOST:8765"])
def test_loopback_names_are_answered(app, host):
    with bare_client(app, headers={"Host": host}) as c:
        assert c.get("/api/game").status_code == 200, host


def test_foreign_host_websocket_is_refused(app, page):
    gid = page.get("/api/game").json()["id"]
    with bare_client(app, headers={"Host": "evil.example:8765"}) as rebound:
        with pytest.raises(REFUSED):
            with rebound.websocket_connect(f"/ws/game/{gid}?token={app.state.token}") as ws:
                ws.receive_json()


def test_a_lan_host_is_answered_only_when_served_on_the_lan(tmp_path):
    lan = create_app(tmp_path / "lan", warmup=False, host="0.0.0.0", port=8765)  # noqa: S104
    with bare_client(lan, headers={"Host": "192.168.1.5:8765"}) as c:
        assert c.get("/api/game").status_code == 200
    with bare_client(lan, headers={"Host": "evil.example:8765"}) as c:
        assert c.get("/api/game").status_code == 421
    one = create_app(tmp_path / "one", warmup=False, host="192.168.1.5", port=8765)
    with bare_client(one, headers={"Host": "192.168.1.5:8765"}) as c:
        assert c.get("/api/game").status_code == 200
    with bare_client(one, headers={"Host": "192.168.1.6:8765"}) as c:
        assert c.get("/api/game").status_code == 421
    local = create_app(tmp_path / "local", warmup=False, port=8765)
    with bare_client(local, headers={"Host": "192.168.1.5:8765"}) as c:
        assert c.get("/api/game").status_code == 421


# Headers a browser never sends but any local program can: each must be refused with a 4xx,
# not crash the guard into a 500 with a traceback in the log (found against a real server:
# ``curl -H $'Host: localhost:\xb2' http://127.0.0.1:PORT/``). The TestClient re-encodes header
# bytes, so these go to the middleware as raw ASGI scopes.
HOSTILE_HEADERS = [
    (b"host", b"localhost:\xb2"),               # "\xb2" (superscript two) passes str.isdigit()
    (b"host", b"127.0.0.1:\xb98765"),
    (b"origin", b"http://[::1"),                 # urlsplit raises "Invalid IPv6 URL"
    (b"origin", b"http://["),
    (b"origin", b"http://localhost:\xb2"),
    (b"origin", b"http://127.0.0.1:\xb3"),
]


def guard_answer(guard_kw: dict, headers: list[tuple[bytes, bytes]], *, method: str = "GET",
                 kind: str = "http", query: bytes = b"") -> tuple[int | None, dict, list]:
    """Run one request through a bare LocalGuard; (status or None when passed on, scope the app saw, sent)."""
    seen: dict = {}
    sent: list = []

    async def inner(scope, receive, send):
        seen.update(scope)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive():
        return {"type": "websocket.connect"} if kind == "websocket" else {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": kind, "method": method, "path": "/api/game", "query_string": query,
             "headers": headers, "server": ("127.0.0.1", 8765)}
    guard = LocalGuard(inner, token="T" * 43, **guard_kw)
    run_coroutine(guard(scope, receive, send))
    if seen:
        return None, seen, sent
    if kind == "websocket":
        return 403, seen, sent
    return sent[0]["status"], seen, sent


@pytest.mark.parametrize(("name", "value"), HOSTILE_HEADERS, ids=[repr(v) for _, v in HOSTILE_HEADERS])
def test_malformed_host_or_origin_is_a_4xx_not_a_crash(name, value):
    for method in ("GET", "POST"):
        headers = [(b"host", b"127.0.0.1:8765"), (b"x-xiangqi-token", b"T" * 43)]
        headers = [h for h in headers if h[0] != name] + [(name, value)]
        status, seen, sent = guard_answer({"port": 8765}, headers, method=method)
        assert status in (400, 403, 421) and not seen, (method, value, status)
        assert "detail" in json.loads(sent[1]["body"])


def test_no_byte_in_host_or_origin_crashes_the_guard():
    """Every byte value at the places a parser trips over (port, brackets, scheme): a 4xx or a pass."""
    shapes = [(b"host", b"localhost:%s"), (b"host", b"localhost:8765%s"), (b"host", b"[::1%s"),
              (b"host", b"%s:8765"), (b"origin", b"http://%s"), (b"origin", b"http://[::1%s"),
              (b"origin", b"http://localhost:%s"), (b"origin", b"http://localhost:8765%s")]
    answers = set()
    for name, shape in shapes:
        for byte in range(256):
            headers = [(b"host", b"127.0.0.1:8765"), (b"x-xiangqi-token", b"T" * 43)]
            headers = [h for h in headers if h[0] != name] + [(name, shape % bytes([byte]))]
            status, _, _ = guard_answer({"port": 8765}, headers, method="POST")
            answers.add(status)
    assert answers <= {None, 400, 403, 421} and {403, 421} <= answers


# -- Origin and token: cross-site requests ----------------------------------------------------

FORGED = [
    # (what a foreign page can send, path, extra headers, body)
    ("fetch with a foreign Origin", "/api/game/undo", {"Origin": EVIL}, None),
    ("no-cors text/plain POST", "/api/game/open", {"Origin": EVIL, "Content-Type": "text/plain"},
     b'[Event "x"]\n\n1. h2e2 h9g7 *\n'),
    ("no-cors resign", "/api/game/resign", {"Origin": EVIL, "Content-Type": "text/plain"}, b"x"),
    ("form post from a sandboxed frame", "/api/game/resign",
     {"Origin": "null", "Content-Type": "application/x-www-form-urlencoded"}, b"a=1"),
    ("another port of this machine", "/api/game/undo", {"Origin": "http://127.0.0.1:9999"}, None),
    ("neither Origin nor token", "/api/game/resign", {}, None),
    ("own Origin without the token", "/api/game/undo", {"Origin": BASE_URL}, None),
    ("a wrong token", "/api/game/undo", {"X-Xiangqi-Token": "guess"}, None),
]


@pytest.mark.parametrize(("what", "path", "headers", "body"), FORGED, ids=[f[0] for f in FORGED])
def test_forged_state_changes_are_refused(app, page, what, path, headers, body):
    before = moves(page)
    with bare_client(app) as forger:
        r = forger.post(path, headers=headers, content=body)
    assert r.status_code == 403, (what, r.text)
    assert "detail" in r.json()
    assert moves(page) == before == ["h2e2"]


# What Chromium sends (seen on the wire) for requests a page on http://localhost:OTHER makes to this
# server: a no-cors fetch, an <img>, a <script> carry no Origin at all, so only Fetch Metadata tells
# them from the page's own. Before this check each reached its route (~60-165 GETs/s of
# GET /api/game from one foreign tab: the state() pushes and pops of the board race of issue 10).
def fetch_meta(site: str, mode: str, dest: str) -> dict[str, str]:
    """The Fetch Metadata headers a browser adds to a request."""
    return {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest}


CROSS_SITE_READS = [
    ("no-cors fetch", fetch_meta("cross-site", "no-cors", "empty")),
    ("<img>", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}),
    ("<script>", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}),
    ("another port (same site)", {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors",
                                  "Sec-Fetch-Dest": "empty"}),
    ("<object>", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "object"}),
    ("<iframe>", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}),
]


@pytest.mark.parametrize(("what", "headers"), CROSS_SITE_READS, ids=[c[0] for c in CROSS_SITE_READS])
def test_a_foreign_page_cannot_make_the_server_run_a_read(app, page, what, headers, monkeypatch):
    gid = saved_game(page)
    calls: list[str] = []
    hub = app.state.hub
    real_state = hub.state
    monkeypatch.setattr(hub, "state", lambda: calls.append("state") or real_state())
    with bare_client(app) as foreign:
        for path in ("/api/game", "/api/library", f"/api/library/{gid}/replay", "/"):
            r = foreign.get(path, headers=headers)
            assert r.status_code == 403, (what, path, r.status_code)
            assert r.headers["cross-origin-resource-policy"] == "same-origin"
            assert "Sec-Fetch-Site" in r.json()["detail"]
    assert calls == []


@pytest.mark.parametrize("headers", [
    fetch_meta("same-origin", "cors", "empty"),  # the page's own requests
    fetch_meta("none", "navigate", "document"),  # typed or bookmarked
    fetch_meta("cross-site", "navigate", "document"),  # a link to it on another site
    {},  # a script or an older browser
])
def test_the_page_links_and_scripts_still_read(app, page, headers):
    with bare_client(app) as c:
        r = c.get("/", headers=headers)
        assert r.status_code == 200 and "xiangqi-token" in r.text
        assert c.get("/api/game", headers=headers).status_code == 200


def test_a_cross_site_post_is_refused_even_with_the_token(app, page):
    """Not reachable by a browser page (it cannot read the token), but one rule for every method."""
    r = page.post("/api/game/undo", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate",
                                             "Sec-Fetch-Dest": "document", "Origin": BASE_URL})
    assert r.status_code == 403
    assert moves(page) == ["h2e2"]


def test_foreign_origin_with_a_stolen_token_is_still_refused(app, page):
    r = page.post("/api/game/undo", headers={"Origin": EVIL})
    assert r.status_code == 403
    assert moves(page) == ["h2e2"]


def test_library_delete_and_settings_need_the_token(app, page):
    gid = saved_game(page)
    with bare_client(app) as forger:
        assert forger.delete(f"/api/library/{gid}", headers={"Origin": EVIL}).status_code == 403
        assert forger.delete(f"/api/library/{gid}").status_code == 403
        assert forger.put("/api/settings", json={"theme": "x"}).status_code == 403
        assert forger.patch(f"/api/library/{gid}", json={"title": "x"}).status_code == 403
    assert page.get("/api/settings").json().get("theme") != "x"
    assert page.delete(f"/api/library/{gid}").json() == {"deleted": gid}


def test_a_script_with_the_token_and_no_origin_can_play(app, page):
    """The way xiangqi.web.server's docstring tells scripts to authenticate: the token from GET /."""
    with bare_client(app) as script:
        html = script.get("/").text
        token = re.search(r'<meta name="xiangqi-token" content="([^"]+)">', html)[1]
        assert script.post("/api/game/move", json={"move": "h9g7"}).status_code == 403
        r = script.post("/api/game/move", json={"move": "h9g7"}, headers={"X-Xiangqi-Token": token})
        assert r.status_code == 200, r.text
    assert moves(page) == ["h2e2", "h9g7"]


def test_the_token_changes_at_every_start(tmp_path):
    a = create_app(tmp_path / "a", warmup=False)
    b = create_app(tmp_path / "b", warmup=False)
    assert len(a.state.token) >= 32 and a.state.token != b.state.token


def test_on_the_lan_an_origin_must_be_the_host_it_asks(tmp_path):
    """Served on 0.0.0.0 any IP literal is a valid Host, but a page on another machine's IP (an
    attacker's site at http://203.0.113.9:PORT, the same port) is not this server's origin."""
    lan = {"port": 8765, "host": "0.0.0.0"}  # noqa: S104
    token = (b"x-xiangqi-token", b"T" * 43)
    for origin, host, passed in [(b"http://203.0.113.9:8765", b"192.168.1.5:8765", False),
                                 (b"http://192.168.1.6:8765", b"192.168.1.5:8765", False),
                                 (b"http://192.168.1.5:8765", b"192.168.1.5:8765", True),
                                 (b"http://192.168.1.5", b"192.168.1.5:8765", False),
                                 (b"http://127.0.0.1:8765", b"127.0.0.1:8765", True),
                                 (b"http://localhost:8765", b"127.0.0.1:8765", True)]:
        for method, kind in (("GET", "http"), ("POST", "http"), ("GET", "websocket")):
            status, _, _ = guard_answer(lan, [(b"host", host), (b"origin", origin), token],
                                        method=method, kind=kind)
            assert (status is None) == passed, (origin, host, method, kind, status)
            assert status in (None, 403)


def test_the_websocket_token_is_taken_out_of_the_query_string():
    """The server's access log (uvicorn at --log-level info) prints each WebSocket's path with its
    query string: the token must not be in it, nor reach the route."""
    headers = [(b"host", b"127.0.0.1:8765"), (b"origin", b"http://127.0.0.1:8765")]
    query = b"a=1&token=" + b"T" * 43 + b"&b=%20"
    status, seen, _ = guard_answer({"port": 8765}, headers, kind="websocket", query=query)
    assert status is None and seen["query_string"] == b"a=1&b=%20"
    status, seen, _ = guard_answer({"port": 8765}, headers, kind="websocket", query=b"token=" + b"T" * 43)
    assert status is None and seen["query_string"] == b""
    # A refused handshake keeps no token either (uvicorn logs the refusal with the path).
    scope_query = b"token=" + b"T" * 42 + b"X"
    sent: list = []

    async def never(scope, receive, send):
        raise AssertionError("a refused handshake reached the app")

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "websocket", "path": "/ws/game/x", "query_string": scope_query, "headers": headers,
             "server": ("127.0.0.1", 8765)}
    run_coroutine(LocalGuard(never, token="T" * 43, port=8765)(scope, receive, send))
    assert sent[0]["type"] == "websocket.close" and b"T" * 42 not in scope["query_string"]


# -- the WebSocket ------------------------------------------------------------------

def test_websocket_from_a_foreign_origin_is_refused(app, page):
    gid = page.get("/api/game").json()["id"]
    with bare_client(app, headers={"Origin": EVIL}) as forger:
        with pytest.raises(REFUSED):
            with forger.websocket_connect(f"/ws/game/{gid}?token={app.state.token}") as ws:
                ws.send_json({"type": "undo"})
                ws.receive_json()
    assert moves(page) == ["h2e2"]


def test_websocket_without_the_token_is_refused(app, page):
    gid = page.get("/api/game").json()["id"]
    with bare_client(app, headers={"Origin": BASE_URL}) as c:
        with pytest.raises(REFUSED):
            with c.websocket_connect(f"/ws/game/{gid}") as ws:
                ws.receive_json()
        with pytest.raises(REFUSED):
            with c.websocket_connect(f"/ws/game/{gid}?token=guess") as ws:
                ws.receive_json()
        # The page's way: its own Origin and the token as a query parameter.
        with c.websocket_connect(f"/ws/game/{gid}?token={app.state.token}") as ws:
            assert ws.receive_json()["state"]["id"] == gid
            ws.send_json({"type": "undo"})
            assert ws.receive_json()["state"]["moves"] == []


def test_websocket_for_a_wrong_game_does_not_tell_the_current_id(page):
    gid = page.get("/api/game").json()["id"]
    with page.websocket_connect("/ws/game/WRONG") as ws:
        msg = ws.receive_json()
    assert msg["type"] == "replaced"
    assert gid not in json.dumps(msg)


# -- response headers -----------------------------------------------------------------

def test_page_gets_the_token_and_protective_headers(app, page):
    r = page.get("/")
    assert f'<meta name="xiangqi-token" content="{app.state.token}">' in r.text
    assert r.headers["cache-control"] == "no-store"
    assert r.headers["x-content-type-options"] == "nosniff"
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert "connect-src 'self' ws://127.0.0.1:8765" in csp
    assert page.get("/api/game").headers["x-frame-options"] == "DENY"


# -- LAN serving ------------------------------------------------------------------------

def test_serve_on_all_interfaces_needs_the_lan_flag(capsys):
    assert main(["serve", "--host", "0.0.0.0"]) == 2  # noqa: S104
    err = capsys.readouterr().err
    assert "--lan" in err and "0.0.0.0" in err and "Traceback" not in err
    assert main(["play", "--no-browser", "--host", "192.168.1.5"]) == 2
    assert "--lan" in capsys.readouterr().err


def test_lan_flag_is_described_and_warns():
    from xiangqi.web.run import listen_warning

    for cmd in ("play", "serve"):
        sub = build_parser()._subparsers._group_actions[0].choices[cmd]
        text = sub.format_help()
        assert "--lan" in text and "--host" in text and "127.0.0.1" in text
    assert build_parser().parse_args(["serve"]).host is None
    assert listen_warning("127.0.0.1", lan=False) is None
    assert listen_warning("localhost", lan=False) is None
    warning = listen_warning("0.0.0.0", lan=True)  # noqa: S104
    assert warning is not None and "network" in warning and "resign" in warning
    # what a peer can do (tests/web/test_this_machine_only.py checks both halves) and what it cannot
    for can in ("play", "undo", "resign", "change the settings", "delete saved games"):
        assert can in warning.split("; they cannot")[0], can
    assert "cannot start programs on this machine" in warning and "engines" in warning
    assert "start programs" in build_parser()._subparsers._group_actions[0].choices["play"].format_help()


def test_no_api_documentation_pages_are_served(page):
    """/docs, /redoc and /openapi.json would be one more page to attack (Swagger's scripts): none is."""
    for path in ("/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"):
        assert page.get(path).status_code == 404, path
