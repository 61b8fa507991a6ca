"""Bad input: every malformed request gets a clear 4xx with a JSON ``detail``; never a 5xx, never a
blocked server, never a changed game.

The sweep (:func:`sweep`) is built from the app's own OpenAPI routes (every path and query parameter,
every JSON or file body) crossed with lists of bad values, plus the WebSocket; the other tests pin
each kind of defect with its exact message.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient  # noqa: F401 - type of api_client()
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.webclient import api_client, run_coroutine

from xiangqi.web.server import create_app

DATA = Path(__file__).parent.parent / "data" / "records"
GAME_1982 = DATA / "pgn" / "xiangqijs_readme_iccs_1982.pgn"
#: Routes whose body is a record file (raw bytes), not JSON.
RECORD_ROUTES = {"/api/game/open", "/api/record/open", "/api/record/export"}
#: Routes that change the game even without a body: the sweep does not call them blindly.
ACTIONS = {"/api/game/undo", "/api/game/resign", "/api/game/draw", "/api/game/hint"}
SQLITE_MAX = 2**63 - 1


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


def make_app(path: Path, **kw: Any):
    return create_app(path, move_provider=first_move, warmup=False, engine_delay_s=0, **kw)


@pytest.fixture
def client(tmp_path):
    with api_client(make_app(tmp_path), raise_server_exceptions=False) as c:
        yield c


def setup_games(c) -> dict[str, Any]:
    """A finished game in the library (row 1) and a two-player game in progress (h2e2 h9g7)."""
    c.post("/api/game/new", json={"red": "human", "black": "human"}).raise_for_status()
    c.post("/api/game/move", json={"move": "b2e2"}).raise_for_status()
    c.post("/api/game/resign").raise_for_status()
    c.post("/api/game/new", json={"red": "human", "black": "human"}).raise_for_status()
    for mv in ("h2e2", "h9g7"):
        c.post("/api/game/move", json={"move": mv}).raise_for_status()
    return c.get("/api/game").json()


# -- the catalogue of bad input ------------------------------------------------------------------------

NEST = 100_000
#: JSON bodies that no route may accept: (label, bytes). Sent as application/json.
BAD_JSON: list[tuple[str, bytes]] = [
    ("invalid utf-8", b'{"move": "\xff\xfe"}'),
    ("truncated utf-8", b'{"fen": "\xe7\xba"}'),
    ("overlong utf-8", b'{"move": "\xc0\xafh2e2"}'),
    ("utf-8 encoded surrogate", b'{"move": "\xed\xa0\x80"}'),
    ("utf-16 with BOM", '{"move": "h2e2"}'.encode("utf-16")),
    ("utf-16-le", '{"move": "h2e2"}'.encode("utf-16-le")),
    ("utf-16-be", '{"fen": "x"}'.encode("utf-16-be")),
    ("utf-32", '{"move": "h2e2"}'.encode("utf-32")),
    ("odd utf-16", b"\xff\xfe{\x00\"\x00"),
    ("NaN", b"NaN"),
    ("NaN field", b'{"move": NaN}'),
    ("Infinity clock", b'{"clock": {"kind": "fischer", "base_s": Infinity, "increment_s": 1}}'),
    ("-Infinity clock", b'{"clock": {"kind": "per_move", "per_move_s": -Infinity}}'),
    ("NaN clock", b'{"clock": {"kind": "byoyomi", "base_s": 10, "byoyomi_s": NaN}}'),
    ("float overflow", b'{"clock": {"kind": "fischer", "base_s": 1e400}}'),
    ("huge int", b'{"clock": {"kind": "byoyomi", "periods": ' + b"9" * 5000 + b"}}"),
    ("int 2^64", b'{"clock": {"periods": 18446744073709551616}}'),
    ("lone high surrogate", b'{"move": "\\ud800"}'),
    ("lone low surrogate", b'{"fen": "\\udfff"}'),
    ("surrogate key", b'{"\\ud83d": 1}'),
    ("surrogate top", b'"\\udc00"'),
    ("surrogate in list", b'{"moves": ["\\ud800"], "fen": "x"}'),
    ("surrogate header", b'{"headers": {"Event": "\\udbff"}}'),
    ("surrogate title", b'{"title": "\\ud800\\ud800"}'),
    ("surrogate setting", b'{"theme": "\\ud800"}'),
    ("deep lists", b"[" * NEST),
    ("deep lists closed", b"[" * 3000 + b"]" * 3000),
    ("deep objects", b'{"a":' * NEST),
    ("deep field", b'{"moves": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
    ("deep setting", b'{"theme": ' + b"[" * 900 + b"]" * 900 + b"}"),
    ("nested setting", b'{"theme": {"a": {"b": {"c": [1, 2, {"d": []}]}}}}'),
    ("deep clock", b'{"clock": ' + b'{"kind":' * 2000 + b'"none"' + b"}" * 2000 + b"}"),
    ("truncated", b'{"move": "h2'),
    ("trailing garbage", b'{"move": "h2e2"} xx'),
    ("two documents", b"{}{}"),
    ("single quotes", b"{'move': 'h2e2'}"),
    ("comment", b'{"move": "h2e2" /* c */}'),
    ("control char", b'{"move": "h2\x01e2"}'),
    ("nul bytes", b"\x00\x00\x00\x00"),
    ("only a BOM", b"\xef\xbb\xbf"),
    ("whitespace", b"   \n\t "),
    ("duplicate keys", b'{"move": "h2e2", "move": "b2e2"}'),
    ("unknown field", b'{"colour": "red", "move": "h2e2", "fen": "x", "title": "t"}'),
    ("misspelt field", b'{"mvoe": "h2e2"}'),
    ("misspelt nested", b'{"clock": {"kind": "fischer", "base": 60}}'),
    ("array", b"[1, 2, 3]"),
    ("null", b"null"),
    ("number", b"12345"),
    ("string", b'"h2e2"'),
    ("true", b"true"),
    ("wrong types", b'{"move": 1, "fen": [], "red": {}, "title": 5, "theme": 1, "moves": "h2e2"}'),
    ("huge string", b'{"fen": "' + b"a" * 300_000 + b'", "move": "h2e2"}'),
    ("many keys", json.dumps({f"k{i}": i for i in range(5000)}).encode()),
    ("long key", json.dumps({"x" * 70_000: 1}).encode()),
    ("huge list", json.dumps({"moves": ["h2e2"] * 30_000, "fen": "x"}).encode()),
]

#: Record bodies (file bytes) that are not a game: (label, bytes).
BAD_RECORDS: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("blank", b" \r\n\t "),
    ("invalid utf-8", b"[Event \"\xff\xfe\xfa\"]\n1. \xc3\x28 \xa0\xa1"),
    ("utf-16 garbage", "[Event \"x\"]\n1. 炮二平五".encode("utf-16")[:-1]),
    ("nul bytes", b"\x00" * 1000),
    ("random bytes", bytes(range(256)) * 8),
    ("xqf header only", b"XQ" + b"\x00" * 10),
    ("xqf garbage", b"XQ\x0a" + bytes(range(256)) * 4),
    ("xqf bad counts", b"XQ\x12" + b"\xff" * 2000),
    ("dhtmlxq garbage", b"[DhtmlXQ][DhtmlXQ_binit]zz[/DhtmlXQ_binit][DhtmlXQ_movelist]\xff\xff[/DhtmlXQ]"),
    ("dhtmlxq nested", b"[DhtmlXQ]" * 20_000),
    ("pgn nested variations", b"1. h2e2 " + b"(" * 50_000 + b"1. b2e2" + b")" * 50_000),
    ("pgn nested comments", b"{" * 50_000 + b"}" * 50_000),
    ("pgn deep open", b"1. h2e2 h9g7 " + b"( 2. " * 30_000),
    ("pgn tags only", b'[Event "x"]\n' * 5000),
    ("pgn long tag", b'[Event "' + b"x" * 500_000 + b'"]\n1. h2e2'),
    ("pgn bad fen", b'[FEN "zzz"]\n[SetUp "1"]\n1. h2e2'),
    ("pgn impossible fen", b'[FEN "4k4/9/9/9/9/9/9/9/9/4KR3 w"]\n1. h2e2'),
    ("fen garbage", b"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x - - 0 9999999999999999"),
    ("epd many bad lines", b"not a fen\n" * 20_000),
    ("json instead", b'{"move": "h2e2"}'),
    ("surrogate text", "[Event \"\ud800\"]".encode("utf-8", "surrogatepass")),
    ("too large", b"1. h2e2 h9g7 " * 200_000),
]

#: Bad values for path parameters (library row ids and the like).
BAD_PATH_VALUES = ["9223372036854775808", "18446744073709551616", "-9223372036854775809", "9" * 400,
                   "1e3", "abc", "0x10", "1.5", "%20", "%00", "١٢", "-1", "0", "nan", "inf"]
#: Bad values for query parameters.
BAD_QUERY_VALUES = ["", "x" * 5000, "nan", "-1", "9223372036854775808", "1e9", "\x00", "🀄",
                    "chinese ", "PGN", "%ff", "zh-CN", "[]", "null"]
#: WebSocket frames that are not a valid message: text or bytes.
BAD_WS: list[str | bytes] = [
    "[" * NEST, '{"a":' * NEST, "[" * 900 + "]" * 900, '{"type": "move", "move": NaN}',
    '{"type": "move", "move": "\\ud800"}', '{"type": "\\udfff"}', '{"type": "move", "move": Infinity}',
    "not json", "", "{", '{"type": "move"', "null", "[]", "1", '"move"', '{"type": 1}',
    '{"type": "nope"}', '{"type": "move", "move": ["h2e2"]}', '{"type": "move", "move": "zz"}',
    '{"type": "move", "move": "' + "x" * 200_000 + '"}', b"\xff\xfe\x00", b'{"type": "state"}',
    '{"type": "state", "type": "undo"}',
    '{"type": "move", "move": "h2e2", "x": ' + "[" * 5000 + "]" * 5000 + "}",
]


def _routes(app) -> list[tuple[str, str, dict[str, Any]]]:
    """(path, method, operation) of every REST operation in the app's OpenAPI document."""
    out = []
    for path, ops in app.openapi()["paths"].items():
        for method, op in ops.items():
            out.append((path, method.upper(), op))
    return out


def _fill(path: str, row_id: int) -> str:
    return path.replace("{row_id}", str(row_id))


GOOD_QUERY = {"name": "x.pgn", "index": "0", "fmt": "pgn", "notation": "iccs", "lang": "en", "search": "",
              "result": ""}


class Sweep:
    """Counts of one sweep: requests tried, 5xx answers, answers without a JSON string ``detail``."""

    def __init__(self) -> None:
        self.tried = 0
        self.server_errors: list[str] = []
        self.no_detail: list[str] = []
        self.changed: list[str] = []
        self.accepted: list[str] = []

    def check(self, label: str, status: int, body: bytes, content_type: str) -> None:
        self.tried += 1
        if status >= 500:
            self.server_errors.append(f"{label}: {status} {body[:200]!r}")
            return
        if status >= 400:
            try:
                detail = json.loads(body)["detail"]
                ok = isinstance(detail, str) and detail and content_type.startswith("application/json")
            except (ValueError, KeyError, TypeError):
                ok = False
            if not ok:
                self.no_detail.append(f"{label}: {status} {body[:200]!r}")
        else:
            self.accepted.append(f"{label}: {status}")


def _ws_sweep(c, game_id: str, res: Sweep) -> None:
    """Every bad frame on one socket, which must answer each with an error and stay open."""
    with c.websocket_connect(f"/ws/game/{game_id}") as ws:
        assert ws.receive_json()["type"] == "state"
        for frame in BAD_WS:
            res.tried += 1
            if isinstance(frame, bytes):
                ws.send_bytes(frame)
            else:
                ws.send_text(frame)
            ws.send_text('{"type": "state"}')
            if frame == b'{"type": "state"}':  # a valid request in a binary frame: answered too
                assert [ws.receive_json()["type"] for _ in range(2)] == ["state", "state"]
                continue
            replies = []
            while True:
                msg = ws.receive_json()
                replies.append(msg)
                if msg.get("type") == "state":
                    break
            errors = [m for m in replies if m.get("type") == "error"]
            if not (errors and isinstance(errors[0].get("detail"), str)):
                res.no_detail.append(f"WS {str(frame)[:40]!r}: {replies[:1]}")


def sweep(c, app) -> Sweep:
    """Send every bad request of the catalogue to the app behind ``c``; see :class:`Sweep`."""
    game = setup_games(c)
    res = Sweep()
    row_id = 1

    def setup_current() -> None:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        for mv in ("h2e2", "h9g7"):
            c.post("/api/game/move", json={"move": mv})
        game.update(c.get("/api/game").json())

    def game_unchanged(label: str) -> None:
        st = c.get("/api/game")
        if st.status_code != 200 or st.json()["id"] != game["id"] or st.json()["moves"] != game["moves"]:
            res.changed.append(label)
            setup_current()  # go on with a fresh game

    def send(label: str, method: str, url: str, **kw: Any) -> None:
        r = c.request(method, url, **kw)
        res.check(label, r.status_code, r.content, r.headers.get("content-type", ""))
        if url == "/api/game/open" and r.status_code == 200:  # a lenient reader found a game in it
            setup_current()
            return
        game_unchanged(label)

    for path, method, op in _routes(app):
        if path in ACTIONS:
            continue
        params = op.get("parameters", [])
        query = {p["name"]: GOOD_QUERY.get(p["name"], "") for p in params if p["in"] == "query"}
        has_body = "requestBody" in op or path in RECORD_ROUTES
        good_body: dict[str, Any] = {"content": GAME_1982.read_bytes()} if path in RECORD_ROUTES else (
            {"json": {"title": "t"}} if method == "PATCH" else
            {"json": {"theme": "wood"}} if path == "/api/settings" else
            {"json": {"fen": "x"}} if has_body else {})
        url = _fill(path, row_id)
        if method == "DELETE":
            url = _fill(path, 999_999)  # never delete the library's game
        # 1. bad bodies
        if has_body:
            bodies = BAD_RECORDS if path in RECORD_ROUTES else BAD_JSON
            for label, data in bodies:
                send(f"{method} {path} body {label}", method, url, params=query, content=data,
                     headers={"content-type": "application/octet-stream" if path in RECORD_ROUTES
                              else "application/json"})
            if path not in RECORD_ROUTES:  # the same JSON declared as another type or charset
                for ctype in ("text/plain", "application/json; charset=utf-16", "multipart/form-data",
                              "application/x-www-form-urlencoded"):
                    send(f"{method} {path} content-type {ctype}", method, url, params=query,
                         content='{"move": "h2e2"}'.encode("utf-16"), headers={"content-type": ctype})
        # 2. bad path parameters
        for p in params:
            if p["in"] != "path":
                continue
            for value in BAD_PATH_VALUES:
                send(f"{method} {path} {p['name']}={value!r}", method,
                     path.replace("{" + p["name"] + "}", value), params=query, **good_body)
        # 3. bad query parameters
        for p in params:
            if p["in"] != "query":
                continue
            for value in BAD_QUERY_VALUES:
                send(f"{method} {path}?{p['name']}={value[:20]!r}", method, url,
                     params={**query, p["name"]: value}, **good_body)
    # 4. routes outside the OpenAPI document
    for url in ("/", "/static/js/app.js", "/static/%2e%2e/server.py", "/static/" + "x" * 3000, "/api/nope",
                "/api/library/9223372036854775808/replay", "/api/library/99999999999999999999/pgn"):
        for method in ("GET", "POST", "DELETE"):
            send(f"{method} {url[:60]}", method, url)
    # 5. the WebSocket: every bad frame on one socket, which must stay open and answer
    try:
        _ws_sweep(c, game["id"], res)
    except Exception as exc:  # the socket closed under a bad frame: a failure of the sweep
        res.server_errors.append(f"WS: socket closed ({type(exc).__name__}: {str(exc)[:100]})")
    game_unchanged("WS")
    for gid in ("x" * 10_000, "%00", "\u00e9"):
        res.tried += 1
        try:
            with c.websocket_connect(f"/ws/game/{gid}") as ws:
                ws.receive_json()
        except Exception as exc:
            res.server_errors.append(f"WS /ws/game/{gid[:20]}: {type(exc).__name__}")
    saved = app.state.store.load_current()
    if saved is None or saved.id != game["id"] or [m.iccs for m in saved.moves] != ["h2e2", "h9g7"]:
        res.changed.append("saved game")
    return res


def test_a_sweep_of_bad_requests_gets_only_clear_4xx(tmp_path):
    app = make_app(tmp_path)
    with api_client(app, raise_server_exceptions=False) as c:
        res = sweep(c, app)
        assert c.get("/api/game").status_code == 200  # still answering
        assert c.get("/api/settings").status_code == 200
        assert c.get("/").status_code == 200
    print(f"\nbad requests tried: {res.tried}, 5xx: {len(res.server_errors)}, "
          f"no JSON detail: {len(res.no_detail)}, game changed: {len(res.changed)}")
    assert res.tried >= 300
    assert res.server_errors == []
    assert res.no_detail == []
    assert res.changed == []
    # a few of the bad bodies are harmless to a route that takes no such field (e.g. GET with a body)
    assert all(not a.startswith(("POST /api/game/new", "POST /api/game/move", "PUT", "PATCH"))
               for a in res.accepted), res.accepted


# -- each kind of defect, with its message ------------------------------------------------------------


def moves_of(c) -> list[str]:
    return [m["iccs"] for m in c.get("/api/game").json()["moves"]]


@pytest.mark.parametrize(("path", "body", "expected"), [
    ("/api/game/move", b'{"move": "\xff\xfe"}', "not valid UTF-8: byte 0xff at offset 10"),
    ("/api/game/move", '{"move": "h2e2"}'.encode("utf-16"), "looks like UTF-16"),
    ("/api/game/move", '{"move": "h2e2"}'.encode("utf-16-le"), "looks like UTF-16"),
    ("/api/game/move", b'{"move": NaN}', "NaN is not a JSON number"),
    ("/api/game/new", b'{"clock": {"kind": "fischer", "base_s": Infinity}}', "Infinity is not a JSON number"),
    ("/api/game/new", b'{"clock": {"kind": "fischer", "base_s": 1e400}}', "number 1e400 is too large"),
    ("/api/game/move", b'{"move": "\\ud800"}', "string at move holds a lone UTF-16 surrogate"),
    ("/api/game/from_record", b'{"fen": "x", "moves": ["h2e2", "\\udc00"]}',
     "string at moves[1] holds a lone"),
    ("/api/game/move", b"[" * 50_000, "nested too deeply at offset 32 (limit 32 levels)"),
    ("/api/game/move", b'{"move": "h2e2", "move": "b2e2"}', "duplicate key 'move'"),
    ("/api/game/new", b'{"clock": {"periods": ' + b"9" * 5000 + b"}}", "Exceeds the limit"),
    ("/api/game/move", b'{"move": "h2e2"', "is not valid JSON: Expecting ',' delimiter at line 1 column 16"),
])
def test_json_bodies_are_strict(client, path, body, expected):
    setup_games(client)
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("request body ") and expected in r.json()["detail"], r.json()
    assert moves_of(client) == ["h2e2", "h9g7"]


@pytest.mark.parametrize(("method", "path", "body", "expected"), [
    ("POST", "/api/game/new", {"colour": "red"}, "unknown field 'colour' in the body"),
    ("POST", "/api/game/new", {"clock": {"kind": "fischer", "base": 60}}, "unknown field 'clock.base'"),
    ("POST", "/api/game/move", {"move": "a0a1", "gameid": "x"}, "unknown field 'gameid'"),
    ("POST", "/api/game/from_record", {"fen": "x", "move": ["h2e2"]}, "unknown field 'move'"),
    ("POST", "/api/position/validate", {"fen": "x", "strict": True}, "unknown field 'strict'"),
    ("PATCH", "/api/library/1", {"titel": "x"}, "unknown field 'titel'"),
])
def test_misspelt_fields_are_refused_by_name(client, method, path, body, expected):
    setup_games(client)
    r = client.request(method, path, json=body)
    assert r.status_code == 422 and expected in r.json()["detail"], r.text
    assert moves_of(client) == ["h2e2", "h9g7"]
    assert client.get("/api/library/1").json()["title"] == ""


@pytest.mark.parametrize(("method", "suffix"), [("GET", ""), ("GET", "/replay"), ("GET", "/pgn"),
                                                 ("PATCH", ""), ("DELETE", "")])
def test_library_ids_past_sqlite_integers(client, method, suffix):
    setup_games(client)
    body = {"json": {"title": "t"}} if method == "PATCH" else {}
    for big in (2**63, 2**64, -(2**63) - 1, 10**30):
        r = client.request(method, f"/api/library/{big}{suffix}", **body)
        assert r.status_code == 422, (big, r.text)
        assert "path parameter 'row_id'" in r.json()["detail"]
    r = client.request(method, f"/api/library/{SQLITE_MAX}{suffix}", **body)
    assert r.status_code == 404 and r.json()["detail"] == f"no saved game with id {SQLITE_MAX}"


def test_settings_follow_the_schema(client):
    assert client.put("/api/settings", json={"theme": "flat", "traditional": True}).status_code == 200
    cases = [({"colour": "red"}, "unknown setting 'colour'"),
             ({"theme": "neon"},
              "setting 'theme' cannot be \"neon\" (allowed: \"wood\", \"flat\", \"contrast\")"),
             ({"traditional": 1}, "setting 'traditional' cannot be 1"),
             ({"language": None}, "setting 'language' cannot be null"),
             ({"sound": {"a": [1, {"b": []}]}}, "setting 'sound' cannot be {\"a\""),
             ({"theme": "x" * 5000}, "too long"),
             ({"mode": "dark", "notation": "zh"}, "setting 'notation' cannot be \"zh\"")]
    for values, expected in cases:
        r = client.put("/api/settings", json=values)
        assert r.status_code == 400 and expected in r.json()["detail"], (values, r.text)
    # nothing of a refused request is stored (the valid "mode" of the last one neither)
    assert client.get("/api/settings").json() == {"theme": "flat", "traditional": True}


def test_bad_stored_settings_are_ignored_and_the_page_loads(tmp_path):
    from xiangqi.app.play.store import Store, settings

    store = Store(tmp_path)
    store.set_settings({"notation": "wxf", "language": "en"})
    with store.engine.begin() as conn:  # what an older version or a hand edit may have left
        for key, text in [("theme", "[" * 900 + "]" * 900), ("pieces", json.dumps("x" * 100_000)),
                          ("mode", "not json"), ("sound", '{"a": {"b": 1}}'), ("colour", '"red"'),
                          ("traditional", "1")]:
            conn.execute(sa.insert(settings).values(key=key, value=text))
    store.close()
    with api_client(make_app(tmp_path)) as c:
        r = c.get("/api/settings")
        assert r.status_code == 200 and r.json() == {"notation": "wxf", "language": "en"}
        page = c.get("/")
        assert page.status_code == 200 and 'id="board"' in page.text
        assert c.get("/api/game").status_code == 200
        assert c.get("/api/game/pgn").status_code == 200  # the PGN's language comes from the settings
        # a good value replaces the bad one
        assert c.put("/api/settings", json={"theme": "contrast"}).json()["theme"] == "contrast"


# -- body size, counted while reading -----------------------------------------------------------------


def asgi_post(app, path: str, total: int, *, chunk: int = 64 * 1024,
              headers: list[tuple[bytes, bytes]] | None = None) -> tuple[int, bytes, int]:
    """POST ``total`` bytes to ``path`` straight through ASGI, in ``chunk``-sized messages made only
    when the app asks for them; returns (status, body, bytes the app read)."""
    sent = 0
    out: dict[str, Any] = {"body": b""}

    async def receive():
        nonlocal sent
        if sent >= total:
            return {"type": "http.disconnect"}
        n = min(chunk, total - sent)
        sent += n
        return {"type": "http.request", "body": b"1" * n, "more_body": sent < total}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1:8765"), (b"origin", b"http://127.0.0.1:8765"),
                         (b"x-xiangqi-token", app.state.token.encode()),
                         (b"content-type", b"application/octet-stream"), *(headers or [])],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8765)}
    run_coroutine(app(scope, receive, send))
    return out["status"], out["body"], sent


def test_body_limits_are_enforced_while_reading(tmp_path):
    from xiangqi.web.limits import JSON_BODY_LIMIT, MAX_UPLOAD_BYTES

    app = make_app(tmp_path)
    chunk = 64 * 1024
    for path in ("/api/record/open", "/api/game/open", "/api/record/export"):
        status, body, read = asgi_post(app, path, 40 * 1024 * 1024, chunk=chunk)  # no Content-Length
        assert status == 413 and read <= MAX_UPLOAD_BYTES + chunk, (path, status, read)
        assert json.loads(body)["detail"] == (f"request body too large: more than {MAX_UPLOAD_BYTES} bytes "
                                              f"(limit {MAX_UPLOAD_BYTES} bytes for this route)")
        # a Content-Length past the limit: refused before a byte is read
        status, body, read = asgi_post(app, path, 400 * 1024 * 1024,
                                       headers=[(b"content-length", b"419430400")])
        assert status == 413 and read == 0
        assert "419430400 bytes (limit" in json.loads(body)["detail"]
    # JSON routes have a small limit
    status, body, read = asgi_post(app, "/api/game/move", 1024 * 1024, chunk=16 * 1024)
    assert status == 413 and read <= JSON_BODY_LIMIT + 16 * 1024
    assert f"(limit {JSON_BODY_LIMIT} bytes for this route)" in json.loads(body)["detail"]
    status, body, read = asgi_post(app, "/api/game/move", 10, headers=[(b"content-length", b"ten")])
    assert status == 400 and "bad Content-Length" in json.loads(body)["detail"]


def test_body_limit_through_the_client(client):
    setup_games(client)
    r = client.post("/api/settings", content=b"{" + b" " * 100_000 + b"}",
                    headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = client.put("/api/settings", content=b'{"theme": "' + b"x" * 100_000 + b'"}',
                   headers={"content-type": "application/json"})
    assert r.status_code == 413 and "limit 65536 bytes" in r.json()["detail"]
    r = client.post("/api/record/open", content=b"1. h2e2 " * 300_000)
    assert r.status_code == 413 and "2400000 bytes (limit 2097152" in r.json()["detail"]
    assert moves_of(client) == ["h2e2", "h9g7"]


# -- record parsing: off the event loop, with a time budget -------------------------------------------

#: About 1.5 MB of sibling variations: reading it whole takes half a minute.
HEAVY = b"1. h2e2 " + b"(1. b2e2) " * 150_000


@pytest.mark.parametrize("path", ["/api/record/open", "/api/game/open", "/api/record/export"])
def test_a_slow_record_neither_blocks_the_server_nor_runs_past_its_budget(tmp_path, path, monkeypatch):
    """The heavy record is read off the event loop (a worker thread hands it to a child process),
    so the server answers while it is read; the child is stopped at the budget (422).

    An order, not latencies: the reading of the heavy record is held at its start (the worker
    thread waits) until the server has answered other requests; a server that read it on the loop
    never gets there (before: 9.8 s of the loop's time), and the hold is never reached."""
    from xiangqi.app.library.sandbox import RecordSandbox

    reading, answered = threading.Event(), threading.Event()
    real_run = RecordSandbox._run

    def held_run(self, fn, args):
        if args and args[0] == HEAVY:
            reading.set()
            answered.wait(60)
        return real_run(self, fn, args)

    monkeypatch.setattr(RecordSandbox, "_run", held_run)
    app = make_app(tmp_path, record_budget_s=1.5)
    with api_client(app) as c:
        setup_games(c)
        c.post("/api/record/open", content=GAME_1982.read_bytes()).raise_for_status()  # a child is warm
        result: dict[str, Any] = {}

        def upload() -> None:
            result["response"] = c.post(path, content=HEAVY)

        worker = threading.Thread(target=upload)
        worker.start()
        try:
            assert reading.wait(60), "the record was not handed to a worker thread"
            assert [c.get("/api/game").status_code for _ in range(3)] == [200] * 3  # while it is held
        finally:
            answered.set()
        statuses = []
        while worker.is_alive() and len(statuses) < 200:  # and while the child reads it
            statuses.append(c.get("/api/game").status_code)
            time.sleep(0.02)
        worker.join(60)
        assert not worker.is_alive()
        assert set(statuses) <= {200}, statuses
        r = result["response"]
        assert r.status_code == 422, r.text[:300]
        assert r.json()["detail"] == ("record too complex: reading it took longer than 1.5 s "
                                      "(the limit for one record)")
        assert moves_of(c) == ["h2e2", "h9g7"]
        # and the next record reads normally
        r = c.post("/api/record/open", content=GAME_1982.read_bytes())
        assert r.status_code == 200 and len(r.json()["nodes"]) == 126


def test_game_open_reads_the_record_in_a_child(client):
    setup_games(client)
    r = client.post("/api/game/open", content=GAME_1982.read_bytes())
    assert r.status_code == 200 and len(r.json()["moves"]) == 125
    r = client.post("/api/game/open", content=b"1. zz99")
    assert r.status_code == 400 and "zz99" in r.json()["detail"]


# -- from_record is as strict as new ---------------------------------------------------------------

#: Red to move while Black's king stands in check from the rook on e1: Red could take the king.
KING_EN_PRISE = "4k4/9/9/9/9/9/9/9/4R4/3K5 w - - 0 1"


def test_from_record_validates_the_position_like_new(client):
    setup_games(client)
    r = client.post("/api/game/new", json={"fen": KING_EN_PRISE})
    assert r.status_code == 400 and "side to move could take the king" in r.json()["detail"]
    for fen, expected in [(KING_EN_PRISE, "side to move could take the king"),
                          ("4k4/9/9/9/9/9/9/9/4B4/3K5 w - - 0 1", "elephant on e1")]:
        r = client.post("/api/game/from_record", json={"fen": fen, "moves": []})
        assert r.status_code == 400, r.text
        assert r.json()["detail"].startswith("impossible record position:") and expected in r.json()["detail"]
    assert moves_of(client) == ["h2e2", "h9g7"]
    # the same position with Black to move is fine, and so is the game after Black's reply
    r = client.post("/api/game/from_record", json={"fen": "4k4/9/9/9/9/9/9/9/4R4/3K5 b - - 0 1",
                                                   "moves": ["e9f9"]})
    assert r.status_code == 200 and [m["iccs"] for m in r.json()["moves"]] == ["e9f9"]


# -- the WebSocket -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("frame", "expected"), [
    ("[" * 50_000, "message nested too deeply at offset 32"),
    ('{"type": "move", "move": NaN}', "message NaN is not a JSON number"),
    (r'{"type": "move", "move": "\ud800"}', "lone UTF-16 surrogate"),
    ('{"type": "move", "move": "' + "x" * 100_000 + '"}', "message too large: 100028 bytes (limit 65536)"),
    ("{", "message is not valid JSON"),
])
def test_bad_websocket_messages_keep_the_socket_open(client, frame, expected):
    game = setup_games(client)
    with client.websocket_connect(f"/ws/game/{game['id']}") as ws:
        assert ws.receive_json()["type"] == "state"
        ws.send_text(frame)
        msg = ws.receive_json()
        assert msg["type"] == "error" and expected in msg["detail"], msg
        ws.send_text('{"type": "move", "move": "b0c2"}')
        msg = ws.receive_json()
        assert msg["type"] == "state", msg
        assert [m["iccs"] for m in msg["state"]["moves"]] == ["h2e2", "h9g7", "b0c2"]


# -- strict JSON still reads every valid document --------------------------------------------------

_scalars = (st.none() | st.booleans() | st.integers() | st.text(max_size=20)
            | st.floats(allow_nan=False, allow_infinity=False))
_documents = st.recursive(_scalars, lambda c: st.lists(c, max_size=4)
                          | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=20)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents, st.booleans())
def test_strict_json_reads_what_json_writes(value, ascii_only):
    from xiangqi.web.limits import loads_strict

    text = json.dumps(value, ensure_ascii=ascii_only)
    assert loads_strict(text.encode("utf-8")) == json.loads(text)


def test_brackets_and_escapes_inside_strings_are_not_nesting():
    from xiangqi.web.limits import BadJSON, loads_strict

    value = {"a": "[" * 100 + '\\"{' * 50, "b": ["]}" * 40, "\U0001f600 \\"]}
    assert loads_strict(json.dumps(value).encode()) == value  # the emoji arrives as a surrogate pair
    assert loads_strict(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a UTF-8 BOM is skipped
    with pytest.raises(BadJSON, match="nested too deeply at offset 50 \\(limit 32"):
        loads_strict(b'{"s": "[[[[", "t": ' + b"[" * 40 + b"]" * 40 + b"}")
