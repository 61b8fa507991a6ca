"""Online play end to end, in process: accounts, lobby, a whole game over WebSockets, clocks, offers."""

from __future__ import annotations

import pytest
from tests.online.conftest import recv_until, state_where, wait_for

#: A whole game that ends in mate: Red played by the engine (depth 6), Black always its first legal
#: move (made once with xiangqi.engine and kept here; the server's referee rules it checkmate).
MATE_LINE = ("b0c2 a6a5 a3a4 a5a4 b2b9 a4a3 b9b8 a3a2 a0a2 c6c5 a2a9 c5c4 a9c9 c4c3 c9c3 e6e5 h2h9 e5e4 b8b9 "
             "d9e8 c3c9 e8d9 c9c7 d9e8 c7h7 e4e3 c2e3 g6g5 h0g2 g5g4 g3g4 i6i5 g4g5 i5i4 i3i4 b7b8 i4i5 b8b7 "
             "f0e1 b7b8 i0i4 b8b7 b9f9 b7b8 f9f8 e8f9 i4b4 b8b9 h7e7 e9d9 b4d4").split()


#: Two moves of each side (ABORT_PLIES): a game that ends after them has a result.
OPENING = ["h2e2", "h9g7", "b0c2", "b9c7"]

def test_register_login_logout_me(server):
    a = server.player()
    assert a.get("/me").json() == {"user": None, "ratings": [], "playing": []}
    me = a.register("小明哥")
    assert me["user"]["username"] == "小明哥" and me["user"]["kind"] == "user"
    set_cookie = a.c.cookies.get("xq_session")
    assert set_cookie and len(set_cookie) > 30
    assert a.post("/logout").json() == {"ok": True}
    assert a.get("/me").json()["user"] is None
    bad = a.post("/login", json={"username": "小明哥", "password": "wrong password"})
    assert bad.status_code == 400 and bad.json()["code"] == "bad_login"
    ok = a.post("/login", json={"username": "小明哥", "password": "correct horse"})
    assert ok.status_code == 200 and ok.json()["user"]["username"] == "小明哥"
    b = server.player()
    taken = b.post("/register", json={"username": "小明哥", "password": "x" * 10})
    assert taken.status_code == 409 and taken.json()["code"] == "taken"
    short = b.post("/register", json={"username": "ab", "password": "x" * 10})
    assert short.status_code == 400 and short.json()["field"] == "username"


def test_session_cookie_flags(server):
    a = server.player()
    r = a.post("/register", json={"username": "cookies", "password": "correct horse"})
    head = r.headers["set-cookie"]
    assert "xq_session=" in head and "HttpOnly" in head and "SameSite=lax" in head
    assert "Secure" not in head  # plain http here
    r = a.post("/login", json={"username": "cookies", "password": "correct horse"},
               headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in r.headers["set-cookie"]


def test_seek_live_in_lobby_then_accept(server):
    a, b = server.player(), server.player()
    a.register("alice")
    b.register("bob")
    with b.ws("/ws/online/lobby") as lobby_b, a.ws("/ws/online/lobby") as lobby_a:
        first = lobby_b.receive_json()
        assert first["type"] == "lobby" and first["lobby"]["seeks"] == []
        lobby_a.receive_json()
        seek = a.post("/seeks", json={"time_control": "5+3", "rated": True, "color": "black"}).json()
        assert seek["category"] == "blitz" and seek["rating"] == 1500 and seek["provisional"] is True
        live = recv_until(lobby_b, lambda m: m["type"] == "lobby" and m["lobby"]["seeks"])
        assert [s["id"] for s in live["lobby"]["seeks"]] == [seek["id"]]
        assert live["lobby"]["seeks"][0]["by"]["username"] == "alice"
        own = b.post("/seeks", json={"time_control": "3+2"}).json()  # Bob's own seek ...
        gid = b.post(f"/seeks/{seek['id']}/accept").json()["game_id"]
        assert own["id"] not in [x["id"] for x in b.get("/lobby").json()["seeks"]]  # ... goes with it
        start = recv_until(lobby_a, lambda m: m["type"] == "game_start")
        assert start == {"type": "game_start", "game_id": gid, "seek_id": seek["id"], "color": "black"}
        start_b = recv_until(lobby_b, lambda m: m["type"] == "game_start")
        assert start_b["color"] == "red"
    st = a.get(f"/games/{gid}").json()
    assert st["seats"]["black"]["user"]["username"] == "alice"
    assert st["seats"]["red"]["user"]["username"] == "bob"
    assert st["status"] == "playing" and st["rated"] is True and st["clock"]["red_ms"] > 290_000
    assert server.online.lobby.seeks == {}
    again = b.post(f"/seeks/{seek['id']}/accept")
    assert again.status_code == 404


def test_whole_game_to_mate_over_websockets_and_ratings(both_servers, tmp_path):
    a, b = both_servers.player(), both_servers.player()
    a.register("redplayer")
    b.register("blackplayer")
    gid = both_servers.game_between(a, b)
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        assert wa.receive_json() == {"type": "hello", "you": "red", "game_id": gid}
        assert wb.receive_json()["you"] == "black"
        for i, mv in enumerate(MATE_LINE):
            ws = wa if i % 2 == 0 else wb
            ws.send_json({"type": "move", "move": mv})
            st = state_where(wa, lambda s, n=i + 1: len(s["moves"]) == n)
            assert st["moves"][-1]["iccs"] == mv
            other = state_where(wb, lambda s, n=i + 1: len(s["moves"]) == n)
            assert other["version"] == st["version"]
        assert st["result"]["termination"] == "checkmate" and st["result"]["winner"] == "red"
        assert st["status"] == "finished"
        rated = state_where(wa, lambda s: s["rating_change"] is not None)
    change = rated["rating_change"]
    assert change["red"]["before"] == 1500 and change["red"]["after"] > 1600
    assert change["black"]["after"] < 1400
    assert change["red"]["delta"] == -change["black"]["delta"]  # equal ratings and RDs: symmetric
    prof = a.get("/players/redplayer").json()
    assert prof["stats"] == {"games": 1, "wins": 1, "losses": 0, "draws": 0}
    assert prof["ratings"][0]["category"] == "blitz" and prof["ratings"][0]["games"] == 1
    assert prof["ratings"][0]["rating"] == change["red"]["after"]
    assert prof["ratings"][0]["provisional"] is True
    assert [h["game_id"] for h in prof["history"]["blitz"]] == [gid]
    assert prof["games"][0]["result"] == "1-0" and prof["games"][0]["plies"] == len(MATE_LINE)
    board = a.get("/leaderboard?category=blitz").json()
    assert [p["user"]["username"] for p in board["players"]] == ["redplayer", "blackplayer"]
    assert board["players"][0]["rank_zh"] == "中郎将"  # 1600-1699 (DESIGN.md decision 8)
    # the move log is the source of truth; the game is in the games database for review
    assert both_servers.online.db.moves(gid) == MATE_LINE
    db_id = wait_for(lambda: both_servers.online.db.game(gid)["db_id"])
    import sqlalchemy as sa

    from xiangqi.db.schema import games

    with both_servers.app.state.games_db.engine().connect() as c:
        row = c.execute(sa.select(games.c.moves, games.c.collection, games.c.result, games.c.ecco_computed)
                        .where(games.c.id == db_id)).one()
    assert row.moves == " ".join(MATE_LINE) and row.collection == "online" and row.result == "1-0"
    assert row.ecco_computed and row.ecco_computed[0] in "ABCDE"


def test_server_decides_the_timeout(both_servers, manual_time, monkeypatch):
    """The server's clock ends the game, once: the flag falls on the games' fake clock, the check is
    the watchdog's own step (:meth:`GameHub.check_clock`), called here instead of waiting."""
    a, b = both_servers.player(), both_servers.player()
    a.guest()
    b.guest()
    online = both_servers.online
    finishes: list[str] = []
    store_finish = online.db.finish
    monkeypatch.setattr(online.db, "finish",
                        lambda gid, **kw: (finishes.append(gid), store_finish(gid, **kw)))
    gid = both_servers.game_between(a, b, tc="1s", rated=False)
    room = online.rooms[gid]
    with a.ws(f"/ws/online/game/{gid}") as wa:
        wa.receive_json()
        a.post(f"/games/{gid}/move", json={"move": "h2e2"})  # each side's first move is not timed
        b.post(f"/games/{gid}/move", json={"move": "h9g7"})
        a.post(f"/games/{gid}/move", json={"move": "h0g2"})
        b.post(f"/games/{gid}/move", json={"move": "b9c7"})  # each side has made two moves: not aborted
        a.post(f"/games/{gid}/move", json={"move": "i0h0"})
        # nobody sends anything after Red's third move: Black's second (all its time) runs
        manual_time.advance(0.999)
        assert both_servers.run(room.check_clock) is None and room.session.outcome is None
        assert room.state()["clock"]["black_ms"] == 1
        manual_time.advance(0.001)
        assert both_servers.run(room.check_clock) in (True, False)  # (or the watchdog was first)
        assert both_servers.run(room.check_clock) is False  # over: a second check changes nothing
        st = state_where(wa, lambda s: s["result"] is not None)
    assert st["result"]["termination"] == "timeout" and st["result"]["winner"] == "red"
    assert st["clock"]["black_ms"] == 0 and st["status"] == "finished"
    late = b.post(f"/games/{gid}/move", json={"move": "i9h9"})
    assert late.status_code == 409 and late.json()["code"] == "game_over"
    wait_for(lambda: online.db.game(gid)["termination"] == "timeout")
    assert finishes == [gid]  # the end stored once
    row = online.db.game(gid)
    assert row["status"] == "finished" and row["result"] == "1-0"


def test_takeback_needs_consent(both_servers):
    a, b = both_servers.player(), both_servers.player()
    a.register("taker")
    b.register("giver")
    gid = both_servers.game_between(a, b)
    a.post(f"/games/{gid}/move", json={"move": "h2e2"})
    b.post(f"/games/{gid}/move", json={"move": "h9g7"})
    a.post(f"/games/{gid}/move", json={"move": "b0c2"})
    with a.ws(f"/ws/online/game/{gid}") as wa:
        wa.receive_json()
        st = a.post(f"/games/{gid}/takeback_request").json()
        assert st["offers"]["takeback"] == "red" and len(st["moves"]) == 3
        ev = recv_until(wa, lambda m: m["type"] == "event")
        assert ev == {"type": "event", "event": "takeback_requested", "by": "red"}
        own = a.post(f"/games/{gid}/takeback_accept")  # one cannot grant one's own request
        assert own.status_code == 409
        st = b.post(f"/games/{gid}/takeback_decline").json()
        assert st["offers"]["takeback"] is None and len(st["moves"]) == 3
        a.post(f"/games/{gid}/takeback_request")
        st = b.post(f"/games/{gid}/takeback_accept").json()
    assert [m["iccs"] for m in st["moves"]] == ["h2e2", "h9g7"] and st["turn"] == "red"
    assert both_servers.online.db.moves(gid) == ["h2e2", "h9g7"]
    # Black asks after Red replied: Red's reply and Black's move both go
    a.post(f"/games/{gid}/move", json={"move": "b0c2"})
    b.post(f"/games/{gid}/takeback_request")
    st = a.post(f"/games/{gid}/takeback_accept").json()
    assert [m["iccs"] for m in st["moves"]] == ["h2e2"] and st["turn"] == "black"


def test_draw_offer_and_accept_resign_abort(server):
    a, b = server.player(), server.player()
    a.register("drawer")
    b.register("accepter")
    gid = server.game_between(a, b, rated=False)
    st = a.post(f"/games/{gid}/abort").json()  # before both moved
    assert st["status"] == "aborted" and st["result"]["termination"] == "aborted"
    assert st["rating_change"] is None
    gid = server.game_between(a, b, rated=False)
    for k, mv in enumerate(OPENING):
        assert (a if k % 2 == 0 else b).post(f"/games/{gid}/move", json={"move": mv}).status_code == 200
    assert a.post(f"/games/{gid}/abort").json()["code"] == "conflict"  # each side has made two moves
    st = a.post(f"/games/{gid}/draw_offer").json()
    assert st["offers"]["draw"] == "red"
    st = b.post(f"/games/{gid}/draw_accept").json()
    assert st["result"]["termination"] == "agreement" and st["result"]["winner"] == "draw"
    gid = server.game_between(a, b, rated=False)
    for k, mv in enumerate(OPENING):
        (a if k % 2 == 0 else b).post(f"/games/{gid}/move", json={"move": mv})
    st = b.post(f"/games/{gid}/resign").json()
    assert st["result"]["termination"] == "resignation" and st["result"]["winner"] == "red"


def _grace_over(server, gid, manual_time) -> None:
    """The grace period of a player who left (1 s here) passes on the games' clock; the room's state
    goes out (what the room's own task does after the grace period on the machine's clock)."""
    manual_time.advance(1.0)
    server.run(server.online.rooms[gid].broadcast)


def test_reconnect_resyncs_and_disconnect_claim(both_servers, manual_time):
    a, b = both_servers.player(), both_servers.player()
    a.register("stayer")
    b.register("leaver")
    gid = both_servers.game_between(a, b, rated=False)
    with a.ws(f"/ws/online/game/{gid}") as wa:
        wa.receive_json()
        with b.ws(f"/ws/online/game/{gid}") as wb:
            wb.receive_json()
            seen = state_where(wb, lambda s: s["seats"]["black"]["connected"])
            a.post(f"/games/{gid}/move", json={"move": "h2e2"})
            seen = state_where(wb, lambda s: len(s["moves"]) == 1)
        ev = recv_until(wa, lambda m: m["type"] == "event")
        assert ev["event"] == "opponent_left" and ev["by"] == "black"
        manual_time.advance(0.5)
        early = a.post(f"/games/{gid}/claim")
        assert early.status_code == 409  # the grace period (1 s here) is not over
        assert a.get(f"/games/{gid}").json()["claim"] == {"by": "red", "after_ms": 500}
        _grace_over(both_servers, gid, manual_time)
        st = state_where(wa, lambda s: s["claim"] is not None and s["claim"]["after_ms"] == 0)
        assert st["claim"]["by"] == "red"
        # Black comes back while Red waits: nothing lost, the claim is gone
        with b.ws(f"/ws/online/game/{gid}?since={seen['version']}") as wb:
            wb.receive_json()
            st = state_where(wb, lambda s: s["seats"]["black"]["connected"])
            assert [m["iccs"] for m in st["moves"]] == ["h2e2"] and st["claim"] is None
            assert st["version"] > seen["version"]
            wb.send_json({"type": "move", "move": "h9g7", "version": st["version"]})
            st = state_where(wb, lambda s: len(s["moves"]) == 2)
            a.post(f"/games/{gid}/move", json={"move": "b0c2"})  # each side two moves: a claim wins
            state_where(wb, lambda s: len(s["moves"]) == 3)
            wb.send_json({"type": "move", "move": "b9c7"})
            st = state_where(wb, lambda s: len(s["moves"]) == 4)
        recv_until(wa, lambda m: m.get("event") == "opponent_left")
        _grace_over(both_servers, gid, manual_time)
        st = state_where(wa, lambda s: s["claim"] is not None and s["claim"]["after_ms"] == 0)
        won = a.post(f"/games/{gid}/claim").json()
    assert won["result"]["winner"] == "red" and won["result"]["termination"] == "abandoned"
    assert a.get(f"/games/{gid}").json()["status"] == "finished"


def test_stale_version_refused(server):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    v = a.get(f"/games/{gid}").json()["version"]
    a.post(f"/games/{gid}/move", json={"move": "h2e2", "version": v})
    r = b.post(f"/games/{gid}/move", json={"move": "h9g7", "version": v})
    assert r.status_code == 409 and r.json()["code"] == "stale_version"
    assert r.json()["state"]["moves"][0]["iccs"] == "h2e2"


def test_spectators_counted(server):
    a, b, c, d = (server.player() for _ in range(4))
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    with c.ws(f"/ws/online/game/{gid}") as wc:
        assert wc.receive_json()["you"] is None
        assert state_where(wc, lambda s: s["watchers"] == 1)
        with d.ws(f"/ws/online/game/{gid}") as wd:
            wd.receive_json()
            assert state_where(wc, lambda s: s["watchers"] == 2)
            a.post(f"/games/{gid}/move", json={"move": "h2e2"})
            st = state_where(wd, lambda s: len(s["moves"]) == 1)
            assert st["moves"][0]["chinese"] == "炮二平五"
            wd.send_json({"type": "move", "move": "h9g7"})
            err = recv_until(wd, lambda m: m["type"] == "error")
            assert err["code"] == "not_your_seat"
        assert state_where(wc, lambda s: s["watchers"] == 1)
    lobby = a.get("/lobby").json()
    assert [g["id"] for g in lobby["games"]] == [gid]


def test_challenge_link_and_computer(server):
    a, b = server.player(), server.player()
    a.register("friend1")
    b.guest()
    ch = a.post("/challenges", json={"time_control": "10+5", "color": "red"})
    assert ch.status_code == 201
    link = ch.json()
    assert link["url"] == f"/?challenge={link['id']}" and link["category"] == "rapid"
    assert b.get(f"/challenges/{link['id']}").json()["by"]["username"] == "friend1"
    assert a.post(f"/challenges/{link['id']}/accept").status_code == 400
    gid = b.post(f"/challenges/{link['id']}/accept").json()["game_id"]
    st = b.get(f"/games/{gid}").json()
    assert st["seats"]["red"]["user"]["username"] == "friend1"
    assert st["seats"]["black"]["user"]["kind"] == "guest"
    assert b.get(f"/challenges/{link['id']}").status_code == 404
    got = b.post("/computer", json={"level": "beginner", "time_control": "10+5", "color": "red"})
    gid = got.json()["game_id"]
    st = b.post(f"/games/{gid}/move", json={"move": "h2e2"}).json()
    assert st["seats"]["black"]["user"]["kind"] == "engine"
    st = wait_for(lambda: (g := b.get(f"/games/{gid}").json())["turn"] == "red"
                  and len(g["moves"]) == 2 and g)
    assert st["moves"][0]["iccs"] == "h2e2"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_restart_takes_the_game_up_from_the_move_log(tmp_path, backend, manual_time):
    from tests.online.conftest import BASE, FAST, ONE_SECOND, Server, first_legal, online_db_url
    from tests.webclient import _Client

    from xiangqi.online.rooms import OnlineConfig
    from xiangqi.web.server import create_app

    drops: list = []
    url = online_db_url(backend, tmp_path, drops)

    def app():
        cfg = OnlineConfig(db_url=url, hasher=FAST, grace_s=0.3, presets={"1s": ONE_SECOND}, ping_s=3600,
                           time_source=manual_time)
        return create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False)

    first = app()
    with _Client(first, base_url=BASE) as c1:
        s = Server(first, c1)
        a, b = s.player(), s.player()
        a.register("before1")
        b.register("before2")
        gid = s.game_between(a, b, tc="10+5")
        a.post(f"/games/{gid}/move", json={"move": "h2e2"})
        b.post(f"/games/{gid}/move", json={"move": "h9g7"})
        manual_time.advance(4.0)  # Red thinks 4 s before the server stops
        red_ms = a.get(f"/games/{gid}").json()["clock"]["red_ms"]
        assert red_ms == 600_000 - 4000
        cookies = [dict(a.c.cookies), dict(b.c.cookies)]
        tokens = [a.token, b.token]
    second = app()  # a new server process on the same database
    with _Client(second, base_url=BASE) as c2:
        players = []
        for i, (jar, tok) in enumerate(zip(cookies, tokens, strict=True)):
            c = c2 if i == 0 else _Client(second, base_url=BASE)
            if i:
                c.portal = c2.portal
            c.cookies.update(jar)
            c.headers.update({"Origin": BASE, "X-Xiangqi-Token": tok})  # the secret is in the database
            players.append(c)
        st = players[0].get(f"/api/online/games/{gid}").json()
        assert [m["iccs"] for m in st["moves"]] == ["h2e2", "h9g7"] and st["status"] == "playing"
        # the time the server was away is not charged (one process: nobody kept the game meanwhile);
        # the clock runs again from the restart, from the time left at the last stored change
        assert st["turn"] == "red" and st["clock"]["red_ms"] == 600_000
        manual_time.advance(3.0)
        st = players[0].get(f"/api/online/games/{gid}").json()
        assert st["clock"]["red_ms"] == 600_000 - 3000
        assert players[0].get("/api/online/me").json()["playing"] == [gid]
        r = players[0].post(f"/api/online/games/{gid}/move", json={"move": "b0c2"})
        assert r.status_code == 200, r.text
        r = players[1].post(f"/api/online/games/{gid}/move", json={"move": "b9c7"})
        assert r.status_code == 200, r.text
        r = players[1].post(f"/api/online/games/{gid}/resign")
        assert r.json()["result"]["winner"] == "red"
    assert second.state.online.db.moves(gid) == ["h2e2", "h9g7", "b0c2", "b9c7"]
    second.state.online.engine.dispose()
    for drop in drops:
        drop()


def test_lag_credit_is_capped(server, manual_time):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    room = server.online.rooms[gid]
    from xiangqi.core.board import BLACK, RED

    assert room.lag_credit(RED) == 0.0
    for rtt in (0.1, 0.12, 5.0, 0.08, 0.11):
        room.note_rtt(RED, rtt)
    assert room.lag_credit(RED) == pytest.approx(0.055)  # half the median (0.11 s)
    for _ in range(5):
        room.note_rtt(BLACK, 2.0)
    assert room.lag_credit(BLACK) == 0.3
    a.post(f"/games/{gid}/move", json={"move": "h2e2"})  # the first moves are not timed (clock.py)
    b.post(f"/games/{gid}/move", json={"move": "h9g7"})
    clock = room.session.clock
    before = clock.main_ms[RED]
    manual_time.advance(2.0)  # Red thinks 2 s (the games' clock): 55 ms of it are credited back
    a.post(f"/games/{gid}/move", json={"move": "h0g2"})
    assert clock.main_ms[RED] == before - 1945 + 3000  # and the increment of 5+3 added
    before = clock.main_ms[BLACK]
    manual_time.advance(0.030)  # a move within Black's credit (0.3 s) costs nothing, never less
    b.post(f"/games/{gid}/move", json={"move": "b9c7"})
    assert clock.main_ms[BLACK] == before + 3000


def test_a_spectator_arriving_does_not_make_a_move_stale(server):
    a, b, c = server.player(), server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    v = a.get(f"/games/{gid}").json()["version"]
    with c.ws(f"/ws/online/game/{gid}") as wc:
        wc.receive_json()
        seen = state_where(wc, lambda s: s["watchers"] == 1)
        assert seen["version"] > v  # the state changed (the watch count) ...
        r = a.post(f"/games/{gid}/move", json={"move": "h2e2", "version": v})
        assert r.status_code == 200, r.text  # ... the position did not
        r = b.post(f"/games/{gid}/move", json={"move": "h9g7", "version": seen["version"]})
        assert r.status_code == 409 and r.json()["code"] == "stale_version"  # Red has moved since
        assert b.post(f"/games/{gid}/move", json={"move": "h9g7", "version": 10**6}).status_code == 409


def _ratings_of(p, name):
    return {r["category"]: (r["rating"], r["games"]) for r in p.get(f"/players/{name}").json()["ratings"]}


@pytest.mark.parametrize("plies", [0, 1, 3])
def test_a_rated_game_ended_before_two_moves_each_is_aborted(both_servers, plies):
    """Resigning at ply 0 used to move 1500 to 1806 / 1194 with no move played. Before each side has
    made two moves (ABORT_PLIES) a resignation, an agreed draw or a claim aborts the game: no result,
    no rating change, shown as aborted to both players and in their histories."""
    a, b = both_servers.player(), both_servers.player()
    a.register("farmer1")
    b.register("farmer2")
    for end in ("resign", "draw"):
        gid = both_servers.game_between(a, b, rated=True)
        for k, mv in enumerate(OPENING[:plies]):
            assert (a if k % 2 == 0 else b).post(f"/games/{gid}/move", json={"move": mv}).status_code == 200
        assert a.get(f"/games/{gid}").json()["can_abort"] is True
        if end == "resign":
            st = b.post(f"/games/{gid}/resign").json()
        else:
            a.post(f"/games/{gid}/draw_offer")
            st = b.post(f"/games/{gid}/draw_accept").json()
        assert st["status"] == "aborted" and st["result"]["termination"] == "aborted", st["result"]
        assert st["result"]["winner"] is None and st["result"]["headline_zh"] == "对局已取消"
        assert st["rating_change"] is None
        for p in (a, b):
            seen = p.get(f"/games/{gid}").json()
            assert seen["status"] == "aborted" and seen["result"]["headline_en"] == "Game aborted"
        row = both_servers.online.db.game(gid)
        assert row["status"] == "aborted" and row["termination"] == "aborted" and row["result"] is None
        assert row["rated_at"] is None and row["rating_change"] is None
    for name, p in (("farmer1", a), ("farmer2", b)):
        prof = p.get(f"/players/{name}").json()
        assert [g["status"] for g in prof["games"]] == ["aborted", "aborted"]
        assert [g["termination"] for g in prof["games"]] == ["aborted", "aborted"]
        assert prof["stats"] == {"games": 0, "wins": 0, "losses": 0, "draws": 0}
        assert prof["history"] == {} and _ratings_of(p, name) == {}
        assert all(r["rating"] == 1500 and r["games"] == 0 for r in p.get("/me").json()["ratings"])
    for name in ("farmer1", "farmer2"):
        r, games = both_servers.online.db.rating(both_servers.online.accounts.find(name).id, "blitz")
        assert (round(r.rating), round(r.rd), games) == (1500, 350, 0)


def test_a_rated_game_resigned_after_two_moves_each_is_rated(both_servers):
    a, b = both_servers.player(), both_servers.player()
    a.register("player_r")
    b.register("player_b")
    gid = both_servers.game_between(a, b, rated=True)
    for k, mv in enumerate(OPENING):
        (a if k % 2 == 0 else b).post(f"/games/{gid}/move", json={"move": mv})
    assert a.get(f"/games/{gid}").json()["can_abort"] is False
    st = b.post(f"/games/{gid}/resign").json()
    assert st["status"] == "finished" and st["result"]["winner"] == "red"
    change = wait_for(lambda: both_servers.online.db.game(gid)["rating_change"])
    assert change["red"]["before"] == 1500 and change["red"]["after"] > 1500 > change["black"]["after"]
    assert _ratings_of(a, "player_r")["blitz"] == (change["red"]["after"], 1)


def test_a_claim_on_a_player_who_left_before_two_moves_each_aborts(server, manual_time):
    a, b = server.player(), server.player()
    a.register("stayer2")
    b.register("leaver2")
    gid = server.game_between(a, b, rated=True)
    with a.ws(f"/ws/online/game/{gid}") as wa:
        wa.receive_json()
        with b.ws(f"/ws/online/game/{gid}") as wb:
            wb.receive_json()
            state_where(wb, lambda s: s["seats"]["black"]["connected"])
            a.post(f"/games/{gid}/move", json={"move": "h2e2"})
            state_where(wb, lambda s: len(s["moves"]) == 1)
        recv_until(wa, lambda m: m.get("event") == "opponent_left")
        _grace_over(server, gid, manual_time)
        state_where(wa, lambda s: s["claim"] is not None and s["claim"]["after_ms"] == 0)
        st = a.post(f"/games/{gid}/claim").json()
    assert st["status"] == "aborted" and st["result"]["termination"] == "aborted"
    assert server.online.db.game(gid)["rating_change"] is None
