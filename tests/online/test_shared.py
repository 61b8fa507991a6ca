"""Shared mode in one test process: two online services (two "processes") on one database and one
bus, player A on the first and player B on the second (fast; the real two-process failover test with
PostgreSQL and Redis is test_failover.py).

Both apps run on one event loop (the first client's portal) with one :class:`LocalBus`, so what one
process announces reaches the other at once; the version check and the shared lobby go through the
real database (SQLite file, or PostgreSQL when ``$XIANGQI_TEST_PG_URL`` is set).
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from tests.online.conftest import (
    BASE,
    FAST,
    ONE_SECOND,
    Player,
    first_legal,
    online_db_url,
    state_where,
    time_of,
    wait_for,
)
from tests.online.test_play import MATE_LINE
from tests.webclient import _Client

from xiangqi.online.bus import LocalBus
from xiangqi.online.rooms import OnlineConfig, OnlineService, restart_clock
from xiangqi.web.server import create_app


class Two:
    """Two services sharing one database and bus; ``player(k)`` is a browser on process ``k``."""

    def __init__(self, apps: list[Any], first: _Client) -> None:
        self.apps = apps
        self.first = first
        self.online = [a.state.online for a in apps]
        self._used_first = False

    def run(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on the one event loop of both services; its result."""
        return self.first.portal.call(fn, *args)

    def player(self, k: int) -> Player:
        if k == 0 and not self._used_first:
            self._used_first = True
            return Player(self.first)
        c = _Client(self.apps[k], base_url=BASE)
        c.portal = self.first.portal
        return Player(c)


@pytest.fixture(params=["sqlite", "postgresql"])
def two(request, tmp_path):
    drops: list[Any] = []
    url = online_db_url(request.param, tmp_path, drops) or f"sqlite:///{tmp_path / 'online.db'}"
    bus = LocalBus()
    apps = []
    for k in range(2):
        cfg = OnlineConfig(db_url=url, hasher=FAST, grace_s=1.0, bullet_grace_s=1.0,
                           presets={"1s": ONE_SECOND}, move_provider=first_legal, ping_s=3600, shared=True,
                           bus=bus, heartbeat_s=0.1, process_ttl_s=2.0, time_source=time_of(request))
        apps.append(create_app(tmp_path / f"p{k}", public=True, online=cfg, move_provider=first_legal,
                               warmup=False))
    try:
        with _Client(apps[0], base_url=BASE) as first:
            with first.portal.wrap_async_context_manager(apps[1].router.lifespan_context(apps[1])):
                yield Two(apps, first)
    finally:
        for drop in drops:
            drop()


def test_a_game_across_two_processes(two):
    a, b, watcher = two.player(0), two.player(1), two.player(1)
    a.register("redA")
    b.register("blackB")
    seek = a.post("/seeks", json={"time_control": "5+3", "rated": True, "color": "red"}).json()
    # the seek made on process 0 is in process 1's lobby, and only one acceptance starts a game
    assert [s["id"] for s in b.get("/lobby").json()["seeks"]] == [seek["id"]]
    gid = b.post(f"/seeks/{seek['id']}/accept").json()["game_id"]
    assert b.post(f"/seeks/{seek['id']}/accept").status_code == 404
    assert a.get("/me").json()["playing"] == [gid] == b.get("/me").json()["playing"]
    assert [g["id"] for g in a.get("/lobby").json()["games"]] == [gid]
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb, \
            watcher.ws(f"/ws/online/game/{gid}") as wc:
        assert wa.receive_json()["you"] == "red" and wb.receive_json()["you"] == "black"
        assert wc.receive_json()["you"] is None
        st = state_where(wa, lambda s: s["seats"]["black"]["connected"] and s["watchers"] == 1)
        assert st["seats"]["red"]["connected"]  # presence summed over both processes
        for i, mv in enumerate(MATE_LINE[:4]):
            (wa if i % 2 == 0 else wb).send_json({"type": "move", "move": mv})
            for ws in (wa, wb, wc):
                got = state_where(ws, lambda s, n=i + 1: len(s["moves"]) == n)
                assert [m["iccs"] for m in got["moves"]] == MATE_LINE[:i + 1]
        # offers cross processes: a draw offered on 1, declined on 0; a takeback asked on 0, granted on 1
        wb.send_json({"type": "draw_offer"})
        assert state_where(wa, lambda s: s["offers"]["draw"] == "black")["offers"]["draw"] == "black"
        wa.send_json({"type": "draw_decline"})
        state_where(wb, lambda s: s["offers"]["draw"] is None)
        wb.send_json({"type": "move", "move": "h9h8"})  # not black's turn: refused on process 1 too
        msg = wb.receive_json()
        while msg.get("type") != "error":
            msg = wb.receive_json()
        assert msg["code"] == "not_your_turn"
        wa.send_json({"type": "move", "move": MATE_LINE[4]})
        state_where(wb, lambda s: len(s["moves"]) == 5)
        state_where(wa, lambda s: len(s["moves"]) == 5)  # (else an older queued state passes)
        wa.send_json({"type": "takeback_request"})
        state_where(wb, lambda s: s["offers"]["takeback"] == "red")
        state_where(wa, lambda s: s["offers"]["takeback"] == "red")
        wb.send_json({"type": "takeback_accept"})
        back = state_where(wa, lambda s: len(s["moves"]) == 4)
        assert back["turn"] == "red" and back["offers"]["takeback"] is None
        for i, mv in enumerate(MATE_LINE[4:8], start=4):
            (wa if i % 2 == 0 else wb).send_json({"type": "move", "move": mv})
            state_where(wa, lambda s, n=i + 1: len(s["moves"]) == n)
        wb.send_json({"type": "resign"})  # on process 1: the end is stored and rated there, once
        rated = state_where(wa, lambda s: s["rating_change"] is not None)
        assert rated["result"]["termination"] == "resignation" and rated["status"] == "finished"
        assert state_where(wc, lambda s: s["rating_change"] is not None)["result"]["winner"] == "red"
        assert rated["rating_change"]["red"]["after"] > 1600
    db = two.online[0].db
    assert db.moves(gid) == MATE_LINE[:8]
    row = db.game(gid)
    assert row["status"] == "finished" and row["result"] == "1-0" and row["termination"] == "resignation"
    assert row["revision"] >= 8 + 5
    assert len(db.history(a.me["user"]["id"])["blitz"]) == 1  # one rating change, not one per process


def test_version_check_refuses_a_second_writer_of_one_ply(two):
    a, b = two.player(0), two.player(1)
    a.guest()
    b.guest()
    seek = a.post("/seeks", json={"time_control": "5+3", "color": "red"}).json()
    gid = b.post(f"/seeks/{seek['id']}/accept").json()["game_id"]
    db = two.online[0].db
    rev = db.revision(gid)
    values = {"status": "playing"}
    # a copy not at the stored revision writes nothing
    assert two.online[1].db.save_checked(gid, rev + 5, [], ["h2e2"], None, values) is None
    assert db.moves(gid) == [] and db.revision(gid) == rev
    assert db.save_checked(gid, rev, [], [], None, values) == 0  # the row only: revision rev+1 is taken
    assert db.save_checked(gid, rev, [], ["h2e2"], None, values) is None  # a second writer is refused
    assert db.moves(gid) == [] and db.revision(gid) == rev + 1
    # process 1's copy is now behind the store (rev + 1): a move there re-reads, then plays
    room1 = two.online[1].room(gid)
    assert room1.revision == rev + 1
    r = a.post(f"/games/{gid}/move", json={"move": "h2e2"})
    assert r.status_code == 200, r.text
    r = b.post(f"/games/{gid}/move", json={"move": "h9g7"})
    assert r.status_code == 200, r.text
    assert db.moves(gid) == ["h2e2", "h9g7"]
    assert b.post(f"/games/{gid}/move", json={"move": "h0g2"}).json()["code"] == "not_your_turn"


def _both_check(two: Two, gid: str) -> list[bool | None]:
    """Both processes' copies of game ``gid`` check their clocks at once (each its watchdog's step);
    what each check returned."""
    import asyncio

    async def both() -> list[bool | None]:
        return list(await asyncio.gather(*(s.rooms[gid].check_clock() for s in two.online)))

    return two.run(both)


def test_a_timeout_is_stored_once_and_seen_by_both(two, manual_time):
    a, b = two.player(0), two.player(1)
    a.guest()
    b.guest()
    seek = a.post("/seeks", json={"time_control": "1s", "color": "red"}).json()
    gid = b.post(f"/seeks/{seek['id']}/accept").json()["game_id"]
    db = two.online[0].db
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        wa.receive_json()
        wb.receive_json()
        # each side's first move is not timed (app/play/clock.py, "First moves"): Black's clock runs from
        # Red's second move, and its flag falls before Black's second move, so the game is aborted
        # (ABORT_PLIES), on both processes
        for player, move in ((a, "h2e2"), (b, "h9g7"), (a, "h0g2")):
            r = player.post(f"/games/{gid}/move", json={"move": move})
            assert r.status_code == 200, r.text
        wait_for(lambda: all(len(s.rooms[gid].session.moves) == 3 for s in two.online))
        rev = db.revision(gid)
        manual_time.advance(0.999)
        assert _both_check(two, gid) == [None, None] and db.revision(gid) == rev  # 1 ms left
        manual_time.advance(0.001)
        ends = _both_check(two, gid)  # both copies see the flag; one stores it, the other re-reads
        assert ends.count(True) <= 1, ends  # (the watchdog may have been first on both)
        st = state_where(wb, lambda s: s["result"] is not None)
        assert st["result"]["termination"] == "aborted" and st["result"]["winner"] is None
        assert st["status"] == "aborted" and st["clock"]["black_ms"] == 0
        assert state_where(wa, lambda s: s["result"] is not None)["result"]["termination"] == "aborted"
        assert _both_check(two, gid) == [False, False]
    row = db.game(gid)
    assert row["status"] == "aborted" and row["termination"] == "aborted" and row["result"] is None
    assert db.revision(gid) == rev + 1  # the time-out is one stored change


def test_a_first_move_not_made_in_time_aborts_once_and_both_processes_tell_why(two, manual_time):
    """Red (on process 0) never makes its first move: both copies of the game see its first move's time
    (FIRST_MOVE_S) run out; one stores the abort (the version check), the other re-reads it, and the
    players on both processes are told why."""
    from xiangqi.online.rooms import FIRST_MOVE_S

    a, b = two.player(0), two.player(1)
    a.register("sitsdown")
    b.register("waits")
    seek = a.post("/seeks", json={"time_control": "5+3", "rated": True, "color": "red"}).json()
    gid = b.post(f"/seeks/{seek['id']}/accept").json()["game_id"]
    db = two.online[0].db
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        wa.receive_json()
        wb.receive_json()
        wait_for(lambda: all(gid in s.rooms for s in two.online))
        rev = db.revision(gid)
        manual_time.advance(FIRST_MOVE_S["blitz"] - 0.001)
        assert _both_check(two, gid) == [None, None] and db.revision(gid) == rev
        manual_time.advance(0.001)
        ends = _both_check(two, gid)
        assert ends.count(True) <= 1, ends
        for ws in (wa, wb):
            st = state_where(ws, lambda s: s["result"] is not None)
            assert st["status"] == "aborted" and st["result"]["winner"] is None
            assert st["result"]["reason_en"] == "Red did not make a first move within 25 s"
        assert _both_check(two, gid) == [False, False]
    row = db.game(gid)
    assert row["status"] == "aborted" and row["result"] is None and row["rating_change"] is None
    assert row["reason_en"] == "Red did not make a first move within 25 s"
    assert db.revision(gid) == rev + 1  # the abort is one stored change
    assert db.history(a.me["user"]["id"]) == {} and db.history(b.me["user"]["id"]) == {}


def test_a_gone_process_loses_its_presence_and_seeks(two):
    a, b = two.player(0), two.player(1)
    a.guest()
    b.guest()
    s0, s1 = two.online
    seek = a.post("/seeks", json={"time_control": "5+3", "color": "red"}).json()
    assert seek["id"] in s1.lobby.seeks
    # process 0 "dies": its heartbeat stops; process 1 forgets it within the TTL and drops its seeks.
    # The tasks are cancelled on their own loop (the portal's thread): Task.cancel() is not thread-safe,
    # and called from this thread a cancel could be lost, the heartbeat beating on for ever.

    def stop_process_0() -> None:
        for t in list(s0._tasks):
            t.cancel()

    two.first.portal.call(stop_process_0)
    deadline = time.monotonic() + 30  # the TTL is 2 s; a loaded machine runs process 1's sweep late
    while seek["id"] in s1.lobby.seeks and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seek["id"] not in s1.lobby.seeks and s0.proc not in s1.procs
    assert s1.db.lobby_items() == []


def test_a_process_gone_before_its_first_heartbeat_loses_its_seeks(two):
    """A seek whose process died before any heartbeat of it was heard (a row left in the store, or a
    lobby message its only sign of life) is withdrawn once the TTL has passed without a beat."""
    a = two.player(1)
    a.guest()
    s1 = two.online[1]
    seek = a.post("/seeks", json={"time_control": "5+3", "color": "red"}).json()
    item = s1.db.lobby_items()[0][1]
    left = dict(item, id="s-orphan")
    s1.db.add_lobby_item("s-orphan", "seek", left, "dead0process")  # its process: never heard of
    two.first.portal.call(s1.lobby._load)  # a process starting up reads the open items
    assert "s-orphan" in s1.lobby.seeks and "dead0process" in s1.procs
    deadline = time.monotonic() + 30  # the TTL is 2 s
    while "s-orphan" in s1.lobby.seeks and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "s-orphan" not in s1.lobby.seeks and "dead0process" not in s1.procs
    assert [i["id"] for _k, i, _p in s1.db.lobby_items()] == [seek["id"]]  # the live one stays


def test_a_stall_of_the_listening_process_is_no_evidence_that_another_is_gone():
    """Process 1's event loop stalls for longer than the TTL while process 0 beats on (its beats
    queued, unread): on waking, process 1 must not take process 0 for gone, which would withdraw its
    seeks. Only silence while process 1 listens counts. Decided on given monotonic times (the
    service's own state, not a running one: its heartbeat would race the test)."""
    cfg = OnlineConfig(db_url="sqlite://", shared=True, heartbeat_s=0.1, process_ttl_s=2.0)
    ttl, beat = cfg.process_ttl_s, cfg.heartbeat_s
    t0 = 1_000.0
    s1 = SimpleNamespace(config=cfg, procs={"p0": t0}, _bus_heard=t0, _listening_since=t0, _last_beat=t0)
    s1._bus_silence_s = lambda: OnlineService._bus_silence_s(s1)
    note, gone = OnlineService._note_beat, OnlineService._gone_procs
    woke = t0 + ttl + 3.0                      # the loop ran again 5 s after its last beat
    s1._bus_heard = woke                       # its own beat came back at once on waking
    note(s1, woke)
    assert gone(s1, woke) == []                # the stall itself is no silence of p0
    note(s1, woke + beat)
    s1._bus_heard = woke + ttl / 2             # listening, p0 still unheard: not yet gone
    assert gone(s1, woke + ttl / 2) == []
    end = woke + ttl + beat                    # silent for a whole TTL of listening: gone
    s1._bus_heard = end
    assert gone(s1, end) == ["p0"]
    # without a stall, the same silence since p0's last beat is counted from that beat
    s2 = SimpleNamespace(config=cfg, procs={"p0": t0}, _bus_heard=t0 + ttl + beat,
                         _listening_since=t0 - 10, _last_beat=t0 + ttl)
    assert gone(s2, t0 + ttl + beat) == ["p0"]


def test_clock_restarts_from_the_stored_time():
    from xiangqi.app.play.clock import TimeControl
    from xiangqi.app.play.session import GameSession

    s = GameSession(red="human", black="human", time_control=TimeControl("fischer", base_s=60, increment_s=0))
    s.play("h2e2")
    rec = s.clock.to_record()
    t0 = time.monotonic()
    rec["saved_at"] = time.time() - 7.0  # stored 7 s ago, black to move since then
    restart_clock(s, rec)
    left = s.clock.left_ms(False)
    lag_ms = (time.monotonic() - t0) * 1000  # the time since "7 s ago" goes on running (load: >100 ms)
    assert rec["black_ms"] - 7_050 - lag_ms <= left <= rec["black_ms"] - 6_950
    assert s.clock.left_ms(True) == rec["red_ms"]
