"""What a change sends: one ``update`` (the changed keys and the new moves) on the state last sent,
encoded once for every socket; the whole state on connect and on request; nothing lost on a resync.
Also the cheap paths of the load work: the lobby's coalesced view, the saves' kept connection."""

from __future__ import annotations

import json
import time

import sqlalchemy as sa
from tests.online.conftest import recv_until, state_where, wait_for

from xiangqi.app.play.hub import Encoded
from xiangqi.online.rooms import LOBBY_COALESCE_S, apply_update, state_update

#: Keys of a GameState that do not change when a move is made in the middle of a game.
STEADY = {"id", "start_fen", "players", "level", "seats", "time_control", "category", "rated", "status",
          "offers", "watchers", "rating_change", "db_id", "result", "engine_error", "thinking", "claim"}


def _without_clock_time(st):
    st = dict(st)
    st["clock"] = {k: v for k, v in st["clock"].items()
                   if k not in ("server_time_ms", "red_ms", "black_ms")}
    st.pop("first_move_ms", None)  # counted down on the real clock too
    return st


def test_state_update_round_trip():
    old = {"id": "g", "version": 4, "fen": "A", "turn": "red", "moves": [{"iccs": "h2e2"}], "gone": 1}
    new = {"id": "g", "version": 6, "fen": "B", "turn": "black",
           "moves": [{"iccs": "h2e2"}, {"iccs": "h9g7"}]}
    msg = state_update(old, new)
    assert msg == {"type": "update", "base": 4, "version": 6,
                   "changes": {"fen": "B", "turn": "black", "gone": None},
                   "moves_from": 1, "moves_add": [{"iccs": "h9g7"}]}
    assert apply_update(old, msg) == {**new, "gone": None}
    # a takeback of two plies: the tail is cut, nothing added
    back = state_update(new, {**new, "version": 7, "moves": []})
    assert back["moves_from"] == 0 and back["moves_add"] == [] and back["changes"] == {}
    assert apply_update(new, back)["moves"] == []
    # the same move list: no moves in the message
    assert "moves_from" not in state_update(new, {**new, "version": 8, "moves": list(new["moves"])})
    # an update that does not follow on: None (the page asks for the whole state); one already had: as is
    assert apply_update(old, {**msg, "base": 5}) is None
    assert apply_update(None, msg) is None
    assert apply_update(new, msg) is new
    assert old["fen"] == "A" and len(old["moves"]) == 1  # the state given is not changed


def test_a_move_sends_one_update_with_the_move(server):
    a, b, c = server.player(), server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb, \
            c.ws(f"/ws/online/game/{gid}") as wc:
        for ws in (wa, wb, wc):
            recv_until(ws, lambda m: m["type"] == "hello")
            first = ws.receive_json()
            assert first["type"] == "state" and first["state"]["moves"] == []  # the whole game first
            ws.xq_state = first["state"]
        for ws in (wa, wb, wc):
            state_where(ws, lambda s: s["watchers"] == 1 and s["seats"]["black"]["connected"])
        before = wb.xq_state
        wa.send_json({"type": "move", "move": "h2e2", "version": wa.xq_state["version"]})
        msgs = {}
        for name, ws in (("a", wa), ("b", wb), ("c", wc)):
            msgs[name] = recv_until(ws, lambda m: m["type"] == "update" and "moves_from" in m)
        # players and spectator get the same message: the new move only, on the state they had
        assert msgs["a"] == msgs["b"] == msgs["c"]
        up = msgs["b"]
        assert up["base"] == before["version"] and up["version"] > before["version"]
        assert up["moves_from"] == 0 and [m["iccs"] for m in up["moves_add"]] == ["h2e2"]
        assert up["moves_add"][0]["chinese"] == "炮二平五"
        changed = set(up["changes"])
        assert {"fen", "turn", "last_move", "legal", "clock"} <= changed
        assert not changed & STEADY and "moves" not in changed and "version" not in changed
        assert up["changes"]["turn"] == "black" and up["changes"]["last_move"] == "h2e2"
        assert "h9" in up["changes"]["legal"]  # Black's moves now
        # the page's copy after the update is the server's whole state
        whole = a.get(f"/games/{gid}").json()
        assert _without_clock_time(wb.xq_state) == _without_clock_time(whole)
        # asking for the state gives the whole game again
        wc.send_json({"type": "state"})
        got = recv_until(wc, lambda m: m["type"] == "state")["state"]
        assert [m["iccs"] for m in got["moves"]] == ["h2e2"] and got["version"] == wc.xq_state["version"]


def test_a_page_that_missed_an_update_resyncs_without_loss(server):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    with a.ws(f"/ws/online/game/{gid}") as wa:
        wa.receive_json()
        start = state_where(wa, lambda s: s["seats"]["red"]["connected"])
        a.post(f"/games/{gid}/move", json={"move": "h2e2"})
        raw = recv_until(wa, lambda m: m["type"] == "update" and "moves_from" in m)  # not applied: "missed"
        b.post(f"/games/{gid}/move", json={"move": "h9g7"})
        second = recv_until(wa, lambda m: m["type"] == "update" and "moves_from" in m)
        assert second["base"] == raw["version"]
        assert apply_update(start, second) is None  # it does not follow on from what the page shows
        wa.send_json({"type": "state"})  # what the page does then
        st = recv_until(wa, lambda m: m["type"] == "state")["state"]
        assert [m["iccs"] for m in st["moves"]] == ["h2e2", "h9g7"] and st["version"] == second["version"]
    # a reconnect starts from the whole game too
    with a.ws(f"/ws/online/game/{gid}?since=0") as wa:
        recv_until(wa, lambda m: m["type"] == "hello")
        first = wa.receive_json()
        assert first["type"] == "state" and [m["iccs"] for m in first["state"]["moves"]] == ["h2e2", "h9g7"]


def test_one_encoding_for_every_socket(server):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    room = server.online.room(gid)
    a.post(f"/games/{gid}/move", json={"move": "h2e2"})  # the room's first broadcast: a whole state
    got = []
    subs = [server.online.bus.subscribe(room.channel, got.append) for _ in range(3)]
    try:
        b.post(f"/games/{gid}/move", json={"move": "h9g7"})
        wait_for(lambda: len(got) >= 3)
    finally:
        for s in subs:
            s.close()
    assert got[0] is got[1] is got[2] and isinstance(got[0], Encoded)
    text = got[0].text()
    assert got[1].text() is text and json.loads(text) == json.loads(json.dumps(dict(got[0])))
    assert got[0]["type"] == "update" and got[0]["moves_add"][0]["iccs"] == "h9g7"


def test_lobby_changes_are_coalesced(server):
    from xiangqi.online.lobby import Identity

    watcher = server.player()
    watcher.guest()
    svc = server.online

    def burst():  # five seeks in one turn of the server's loop
        for i in range(5):
            svc.create_seek(Identity("guest", f"g-burst{i}", f"游客{i}"), "5+3", False, "red")

    with watcher.ws("/ws/online/lobby") as lobby:
        assert lobby.receive_json()["type"] == "lobby"
        t0 = time.monotonic()
        server.first.portal.call(burst)
        view = recv_until(lobby, lambda m: m["type"] == "lobby")
        took = time.monotonic() - t0
        assert len(view["lobby"]["seeks"]) == 5  # one view for the five changes
        assert took >= LOBBY_COALESCE_S
        # nothing more is pending: a ping is answered next, not another view
        lobby.send_json({"type": "ping"})
        assert lobby.receive_json() == {"type": "pong"}


def test_saves_keep_one_connection_and_replace_a_broken_one(server):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    db = server.online.db
    a.post(f"/games/{gid}/move", json={"move": "h2e2"})
    conn = db._conn
    assert conn is not None
    b.post(f"/games/{gid}/move", json={"move": "h9g7"})
    assert db._conn is conn  # the same connection for every save
    # a save refused by the database (ply 0 again): the connection is dropped, the log unchanged
    try:
        db.save_moves(gid, [], ["h2e2"], None)
    except sa.exc.IntegrityError:
        pass
    else:
        raise AssertionError("a second row for ply 0 was accepted")
    assert db._conn is None and db.moves(gid) == ["h2e2", "h9g7"]
    r = a.post(f"/games/{gid}/move", json={"move": "h0g2"})
    assert r.status_code == 200 and db.moves(gid) == ["h2e2", "h9g7", "h0g2"]
    assert db._conn is not None and db._conn is not conn
