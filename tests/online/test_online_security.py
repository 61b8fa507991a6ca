"""Security of the public server: login required, seats, sessions, Origin, CSRF, rate limits."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from starlette.websockets import WebSocketDisconnect
from tests.online.conftest import BASE, FAST, Server, first_legal
from tests.webclient import _Client, api_client

from xiangqi.online.accounts import ADDRESS_FAILURES, LoginLimiter, login_sessions
from xiangqi.online.rooms import OnlineConfig
from xiangqi.web.server import create_app


def test_identity_required(server):
    a = server.player()
    r = a.post("/seeks", json={"time_control": "5+3"})
    assert r.status_code == 401 and r.json()["code"] == "login_required"
    a.guest()
    r = a.post("/seeks", json={"time_control": "5+3", "rated": True})
    assert r.status_code == 400 and r.json()["code"] == "login_required"  # guests play casual only
    assert a.post("/seeks", json={"time_control": "5+3"}).status_code == 201
    bad = a.post("/seeks", json={"time_control": "5+3", "colour": "red"})
    assert bad.status_code == 422  # unknown field


def test_one_player_cannot_move_for_the_other(both_servers):
    a, b, c = both_servers.player(), both_servers.player(), both_servers.player()
    a.register("redside")
    b.register("blackside")
    c.register("bystander")
    gid = both_servers.game_between(a, b)
    r = b.post(f"/games/{gid}/move", json={"move": "h2e2"})  # Red's move, sent by Black
    assert r.status_code == 409 and r.json()["code"] == "not_your_turn"
    r = c.post(f"/games/{gid}/move", json={"move": "h2e2"})
    assert r.status_code == 403 and r.json()["code"] == "not_your_seat"
    r = c.post(f"/games/{gid}/resign")
    assert r.status_code == 403
    assert a.get(f"/games/{gid}").json()["moves"] == []
    r = a.post(f"/games/{gid}/move", json={"move": "e0e2"})  # illegal: the king steps one point
    assert r.status_code == 400 and r.json()["code"] == "bad_move"
    # a forged guest cookie is nobody
    d = both_servers.player()
    d.c.cookies.set("xq_guest", "g-0123456789abcdef.00000000000000000000000000000000")
    assert d.get("/me").json()["user"] is None
    assert d.post(f"/games/{gid}/resign").status_code == 403


def test_sessions_are_private(both_servers):
    a, b = both_servers.player(), both_servers.player()
    a.register("private1")
    b.register("private2")
    token = a.c.cookies.get("xq_session")
    assert b.get("/me").json()["user"]["username"] == "private2"
    prof = b.get("/players/private1").text
    assert token not in prof and "password" not in prof
    with both_servers.online.engine.connect() as conn:
        stored = [r.token_hash for r in conn.execute(sa.select(login_sessions))]
    assert len(stored) == 2 and token not in stored  # only hashes are kept
    a.post("/logout")
    b.c.cookies.set("xq_session", token)  # a stolen token after logout is worth nothing
    assert b.get("/me").json()["user"] is None


def test_foreign_origin_and_csrf_refused(server):
    a = server.player()
    a.register("csrfuser")
    evil = a.post("/seeks", json={"time_control": "5+3"}, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and evil.json()["code"] == "origin"
    no_token = a.c.post("/api/online/seeks", json={"time_control": "5+3"},
                        headers={"X-Xiangqi-Token": ""})
    assert no_token.status_code == 403 and no_token.json()["code"] == "csrf"
    b = server.player()
    other = a.post("/seeks", json={"time_control": "5+3"}, headers={"X-Xiangqi-Token": b.token})
    assert other.status_code == 403  # another browser's token does not fit this browser's cookie
    site = a.post("/seeks", json={"time_control": "5+3"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert site.status_code == 403
    with pytest.raises(WebSocketDisconnect):
        with a.c.websocket_connect(f"/ws/online/lobby?token={a.token}",
                                   headers={"Origin": "http://evil.example"}) as ws:
            ws.receive_json()
    with pytest.raises(WebSocketDisconnect):
        with a.c.websocket_connect("/ws/online/lobby", headers={"Origin": BASE, "X-Xiangqi-Token": ""}) as ws:
            ws.receive_json()
    assert a.post("/seeks", json={"time_control": "5+3"}).status_code == 201


def test_local_routes_closed_on_a_public_server(server):
    a = server.player()
    assert a.c.get("/api/game").status_code == 404
    assert a.c.post("/api/game/move", json={"move": "h2e2"}).status_code == 404
    assert a.c.put("/api/settings", json={}).status_code == 404
    assert a.c.get("/api/levels").status_code == 200
    page = a.c.get("/")
    assert page.status_code == 200 and 'name="xiangqi-token"' in page.text
    assert a.token in page.text  # the page carries this browser's CSRF token


def test_local_server_has_no_online_play(tmp_path):
    app = create_app(tmp_path, move_provider=first_legal, warmup=False)
    with api_client(app) as c:
        assert c.get("/api/online/config").json() == {"public": False}
        assert c.post("/api/online/register", json={"username": "abc", "password": "x" * 10}).status_code in (
            404, 405)
        assert c.get("/api/game").status_code == 200


class FakeClock:
    def __init__(self) -> None:
        self.t = 10_000.0

    def __call__(self) -> float:
        return self.t


def test_login_rate_limit(both_servers):
    a = both_servers.player()
    a.register("limited")
    both_servers.online.accounts.limiter = LoginLimiter(clock=FakeClock())
    b = both_servers.player("127.0.0.2")
    codes = [b.post("/login", json={"username": "limited", "password": "wrong wrong"}).status_code
             for _ in range(5)]
    assert codes == [400] * 5
    r = b.post("/login", json={"username": "limited", "password": "correct horse"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0 and r.json()["code"] == "rate_limited"


def test_a_guesser_cannot_lock_the_owner_out(both_servers):
    """50 wrong passwords for a name from address A (the guesser waiting out every delay) slow A
    down, and the owner at address B logs in with the right password at once."""
    owner = both_servers.player("127.0.0.3")
    owner.register("victim")
    clock = FakeClock()
    both_servers.online.accounts.limiter = LoginLimiter(clock=clock)
    attacker = both_servers.player("127.0.0.2")
    failures = waits = 0
    while failures < 50:
        r = attacker.post("/login", json={"username": "victim", "password": f"guess number {failures}"})
        if r.status_code == 429:
            retry = int(r.headers["Retry-After"])
            assert r.json()["code"] == "rate_limited" and r.json()["retry_after"] == retry >= 1
            waits += 1
            clock.t += retry
            continue
        assert r.status_code == 400 and r.json()["code"] == "bad_login", r.text
        failures += 1
    assert waits == 45  # every try past the first five waited (the doubling delay)
    r = attacker.post("/login", json={"username": "victim", "password": "correct horse"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) == 15 * 60  # the cap
    me = both_servers.player("127.0.0.4")  # the owner, from a new address
    r = me.post("/login", json={"username": "victim", "password": "correct horse"})
    assert r.status_code == 200 and r.json()["user"]["username"] == "victim", r.text
    r = owner.post("/login", json={"username": "victim", "password": "correct horse"})  # and the old one
    assert r.status_code == 200, r.text


def test_an_address_is_slowed_over_many_names(server):
    clock = FakeClock()
    server.online.accounts.limiter = LoginLimiter(clock=clock)
    sprayer = server.player("127.0.0.2")
    for k in range(ADDRESS_FAILURES):  # one try at each of 20 names: each let through
        r = sprayer.post("/login", json={"username": f"name{k}", "password": "password1"})
        assert r.status_code == 400, r.text
    r = sprayer.post("/login", json={"username": "name99", "password": "password1"})
    assert r.status_code == 429 and r.headers["Retry-After"] == "1", r.text  # a new name: the address waits
    clock.t += 1
    assert sprayer.post("/login", json={"username": "name99", "password": "password1"}).status_code == 400
    r = sprayer.post("/login", json={"username": "name100", "password": "password1"})
    assert r.status_code == 429 and r.headers["Retry-After"] == "2", r.text  # doubling
    other = server.player("127.0.0.5")  # another address is not slowed
    assert other.post("/login", json={"username": "name100", "password": "password1"}).status_code == 400


def test_seek_rate_limit(server):
    a = server.player()
    a.guest()
    for _ in range(6):
        sid = a.post("/seeks", json={"time_control": "5+3"}).json()["id"]
        assert a.c.delete(f"/api/online/seeks/{sid}").json() == {"ok": True}
    r = a.post("/seeks", json={"time_control": "5+3"})
    assert r.status_code == 429 and r.json()["retry_after"] >= 1


def test_sockets_per_address_limited(tmp_path):
    cfg = OnlineConfig(hasher=FAST, sockets_per_ip=2, ping_s=3600)
    app = create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False)
    with _Client(app, base_url=BASE) as first:
        p = Server(app, first).player()
        with p.ws("/ws/online/lobby") as w1, p.ws("/ws/online/lobby") as w2:
            w1.receive_json()
            w2.receive_json()
            with pytest.raises(WebSocketDisconnect) as refused:
                with p.ws("/ws/online/lobby") as w3:
                    w3.receive_json()
            assert refused.value.code == 4429
        with p.ws("/ws/online/lobby") as w4:  # closed ones are counted off
            assert w4.receive_json()["type"] == "lobby"


def test_guest_cannot_take_a_rated_seek(server):
    a, g = server.player(), server.player()
    a.register("ratedonly")
    g.guest()
    seek = a.post("/seeks", json={"time_control": "3+2", "rated": True}).json()
    r = g.post(f"/seeks/{seek['id']}/accept")
    assert r.status_code == 401 and r.json()["code"] == "login_required"
    assert [s["id"] for s in g.get("/lobby").json()["seeks"]] == [seek["id"]]  # still open
