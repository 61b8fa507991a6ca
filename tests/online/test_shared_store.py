"""Shared mode on a real PostgreSQL: the database calls off the event loop, the version check in the
row's UPDATE, the rating claim and the sweep of a dead process's games, the retried steps of a gone
process.

Two online services ("processes") on one new PostgreSQL database and one :class:`LocalBus`, on one
event loop (the first client's portal), as in test_shared.py. Their engines wait at most 60 s for a
row lock (``lock_timeout``): a test that holds a game's row (``SELECT … FOR UPDATE`` on a connection
of its own) is a slow database for that one game; the old code, which waited for the row on the
event loop, then stalled every game of the process for those seconds and failed the move. The tests
check orders (the other requests are answered while the held one still waits), so the time-out is
only the bound of a hung test: long enough that a loaded machine never reaches it (at 10 s, the
answers meanwhile on a busy machine could outlast it and end the held request first).
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from tests.online.conftest import (
    BASE,
    FAST,
    Player,
    first_legal,
    online_db_url,
    play_opening,
    recv_until,
    state_where,
    wait_for,
)
from tests.webclient import _Client

from xiangqi.online.bus import LocalBus
from xiangqi.online.rooms import OnlineConfig
from xiangqi.online.store import online_games, online_lobby
from xiangqi.web.server import create_app


class Two:
    """Two services on one database and bus; ``player(k)`` is a browser on process ``k``."""

    def __init__(self, apps: list[Any], first: _Client, url: str) -> None:
        self.apps = apps
        self.first = first
        self.url = url
        self.online = [a.state.online for a in apps]
        self._used_first = False

    def player(self, k: int) -> Player:
        if k == 0 and not self._used_first:
            self._used_first = True
            return Player(self.first)
        c = _Client(self.apps[k], base_url=BASE)
        c.portal = self.first.portal
        return Player(c)

    def game(self, red: Player, black: Player, rated: bool = False) -> str:
        seek = red.post("/seeks", json={"time_control": "5+3", "rated": rated, "color": "red"})
        assert seek.status_code == 201, seek.text
        got = black.post(f"/seeks/{seek.json()['id']}/accept")
        assert got.status_code == 200, got.text
        return got.json()["game_id"]

    def run(self, fn: Any, *args: Any) -> Any:
        """``await fn(*args)`` on the services' loop."""
        return self.first.portal.call(fn, *args)


@pytest.fixture
def two(tmp_path):
    drops: list[Any] = []
    url = online_db_url("postgresql", tmp_path, drops)
    url = sa.make_url(url).update_query_dict({"options": "-c lock_timeout=60000"}).render_as_string(
        hide_password=False)
    bus = LocalBus()
    apps = []
    for k in range(2):
        cfg = OnlineConfig(db_url=url, hasher=FAST, grace_s=30.0, move_provider=first_legal, ping_s=3600,
                           shared=True, bus=bus, heartbeat_s=0.1, process_ttl_s=30.0, sweep_s=3600.0,
                           settle_after_s=0.0, retry_s=0.01)
        apps.append(create_app(tmp_path / f"p{k}", public=True, online=cfg, move_provider=first_legal,
                               warmup=False))
    try:
        with _Client(apps[0], base_url=BASE) as first:
            with first.portal.wrap_async_context_manager(apps[1].router.lifespan_context(apps[1])):
                yield Two(apps, first, url)
    finally:
        for drop in drops:
            drop()


class RowLock:
    """A lock on one game's row, held on a connection of the test's own until :meth:`release`."""

    def __init__(self, url: str, row_id: str, table: sa.Table = online_games) -> None:
        self.engine = sa.create_engine(url)
        self.conn = self.engine.connect()
        self.conn.begin()
        got = self.conn.execute(sa.select(table.c.id).where(table.c.id == row_id).with_for_update()).all()
        assert len(got) == 1

    def waiting(self) -> int:
        """How many other sessions wait for a lock now (pg_stat_activity)."""
        with self.engine.connect() as c:
            return int(c.execute(sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()")).scalar())

    def release(self) -> None:
        self.conn.rollback()
        self.conn.close()
        self.engine.dispose()


def test_a_slow_save_of_one_game_does_not_delay_another_game(two):
    a, b, c, d = (two.player(0) for _ in range(4))
    for p, name in ((a, "slowRed"), (b, "slowBlack"), (c, "fastRed"), (d, "fastBlack")):
        p.register(name)
    slow, fast = two.game(a, b), two.game(c, d)
    db = two.online[0].db
    with a.ws(f"/ws/online/game/{slow}") as wa:
        assert wa.receive_json()["you"] == "red"
        state_where(wa, lambda s: s["status"] == "playing")
        lock = RowLock(two.url, slow)
        try:
            wa.send_json({"type": "move", "move": "h2e2"})
            wait_for(lambda: lock.waiting() == 1, 60)  # the slow game's save waits for its row
            # meanwhile the same process answers a move of another game, stored
            r = c.post(f"/games/{fast}/move", json={"move": "b2e2"})
            assert r.status_code == 200, r.text
            assert [m["iccs"] for m in r.json()["moves"]] == ["b2e2"]
            assert db.moves(fast) == ["b2e2"]
            assert db.moves(slow) == []  # not stored, and not shown as made
            assert two.online[0].rooms[slow].state()["moves"] == ()
        finally:
            lock.release()
        st = state_where(wa, lambda s: len(s["moves"]) == 1)  # stored once the row is free, then shown
        assert st["moves"][0]["iccs"] == "h2e2" and st["turn"] == "black"
    assert db.moves(slow) == ["h2e2"]


def test_a_slow_lobby_row_does_not_delay_another_game(two):
    import threading

    a, b, c, d = (two.player(0) for _ in range(4))
    for p in (a, b, c, d):
        p.guest()
    fast = two.game(c, d)
    seek = a.post("/seeks", json={"time_control": "5+3", "color": "red"}).json()
    lock = RowLock(two.url, seek["id"], online_lobby)
    got: list[Any] = []
    accept = threading.Thread(target=lambda: got.append(b.post(f"/seeks/{seek['id']}/accept")))
    try:
        accept.start()
        wait_for(lambda: lock.waiting() == 1, 60)  # the acceptance waits for the seek's row
        r = c.post(f"/games/{fast}/move", json={"move": "h2e2"})  # another game goes on meanwhile
        assert r.status_code == 200, r.text
        assert not got
    finally:
        lock.release()
        accept.join(60)
    assert got and got[0].status_code == 200, got and got[0].text
    gid = got[0].json()["game_id"]
    assert two.online[0].db.game(gid)["red_id"] == a.me["user"]["id"]


def test_one_move_is_one_version_checked_statement(two, monkeypatch):
    import psycopg

    a, b = two.player(0), two.player(1)
    a.guest()
    b.guest()
    gid = two.game(a, b)
    statements: list[str] = []
    run = psycopg.Cursor.execute

    def note(self, query, *args, **kw):  # every statement of either path (SQLAlchemy's runs here too)
        statements.append(" ".join(str(query).split()))
        return run(self, query, *args, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", note)
    r = a.post(f"/games/{gid}/move", json={"move": "h2e2"})
    monkeypatch.undo()
    assert r.status_code == 200, r.text
    writes = [s for s in statements if s.startswith(("UPDATE", "INSERT", "DELETE", "WITH"))]
    # one statement, its own transaction: the row's version check and write, and the ply only if it matched
    assert len(writes) == 1, writes
    assert writes[0].startswith("WITH g AS (UPDATE online_games SET revision = %s, clock = %s, ")
    assert "WHERE id = %s AND revision = %s RETURNING id) INSERT INTO online_moves" in writes[0]
    assert not [s for s in statements if "SELECT online_games.revision" in s]  # no separate read
    assert two.online[0].db.revision(gid) == two.online[0].rooms[gid].revision
    assert two.online[0].db.moves(gid) == ["h2e2"]


def test_two_processes_racing_on_one_game_store_one_move(two):
    red0, black = two.player(0), two.player(1)
    red0.register("racer")
    black.register("other")
    gid = two.game(red0, black)
    red1 = two.player(1)  # the same player in a second tab, on the other process
    r = red1.post("/login", json={"username": "racer", "password": "correct horse"})
    assert r.status_code == 200, r.text
    with red0.ws(f"/ws/online/game/{gid}") as w0, red1.ws(f"/ws/online/game/{gid}") as w1:
        for w in (w0, w1):
            assert w.receive_json()["you"] == "red"
            state_where(w, lambda s: s["status"] == "playing")
        lock = RowLock(two.url, gid)
        try:
            w0.send_json({"type": "move", "move": "h2e2"})
            w1.send_json({"type": "move", "move": "b2e2"})
            wait_for(lambda: lock.waiting() == 2, 60)  # both saves wait for the row: a true race
        finally:
            lock.release()
        stored = wait_for(lambda: two.online[0].db.moves(gid), 60)
        assert stored in (["h2e2"], ["b2e2"])
        loser = w1 if stored == ["h2e2"] else w0
        err = recv_until(loser, lambda m: m.get("type") == "error")
        assert err["code"] == "not_your_turn"  # refused on the re-read game: Black is to move
        for w in (w0, w1):  # both tabs show the one move that was made (perhaps before the refusal)
            st = w.xq_state
            if len(st["moves"]) != 1:
                st = state_where(w, lambda s: len(s["moves"]) == 1)
            assert [m["iccs"] for m in st["moves"]] == stored and st["turn"] == "black"
    db = two.online[0].db
    assert db.moves(gid) == stored
    assert db.revision(gid) == two.online[0].rooms[gid].revision == two.online[1].rooms[gid].revision


def _unrated_end(two: Two, red: Player, black: Player) -> str:
    """A rated game whose process stored its end (finished, 1-0) and died before rating it."""
    gid = two.game(red, black, rated=True)
    db = two.online[0].db
    db.finish(gid, status="finished", result="1-0", termination="resignation", reason_zh="黑方认输",
              reason_en="Black resigned")
    for svc in two.online:  # the dead process's copies are gone with it
        room = svc.rooms.pop(gid, None)
        if room is not None:
            svc.registry.remove(gid)
    return gid


def test_two_processes_sweeping_one_game_rate_it_once(two):
    red, black = two.player(0), two.player(1)
    red.register("sweptRed")
    black.register("sweptBlack")
    gid = _unrated_end(two, red, black)

    async def both() -> list[int]:
        import asyncio

        return list(await asyncio.gather(two.online[0].sweep(), two.online[1].sweep()))

    assert sorted(two.run(both)) == [0, 1]  # one of them rated it, the other found it claimed
    assert two.run(two.online[0].sweep) == 0  # and a later sweep has nothing left to do
    db = two.online[0].db
    for who in (red, black):
        uid = who.me["user"]["id"]
        assert [h["game_id"] for h in db.history(uid)["blitz"]] == [gid]
        assert db.ratings_of(uid)[0]["games"] == 1
    row = db.game(gid)
    assert row["rated_at"] is not None
    assert row["rating_change"]["red"]["delta"] > 0 > row["rating_change"]["black"]["delta"]
    page = red.get(f"/games/{gid}").json()  # the room rebuilt from the store shows the change
    assert page["rating_change"] == row["rating_change"]


def test_the_end_of_a_game_is_rated_once_when_a_sweep_got_there_first(two):
    red, black = two.player(0), two.player(1)
    red.register("raceRed")
    black.register("raceBlack")
    gid = two.game(red, black, rated=True)
    db = two.online[0].db
    play_opening(red, black, gid)  # two moves each: the resignation is rated (ABORT_PLIES)
    with red.ws(f"/ws/online/game/{gid}") as wr:
        assert wr.receive_json()["you"] == "red"
        r = red.post(f"/games/{gid}/resign")
        assert r.status_code == 200, r.text
        st = state_where(wr, lambda s: s["rating_change"] is not None)
    assert two.run(two.online[1].sweep) == 0  # already rated by the process that ended it
    assert len(db.history(red.me["user"]["id"])["blitz"]) == 1
    assert st["rating_change"] == db.game(gid)["rating_change"]


def test_a_gone_process_s_seeks_are_withdrawn_after_a_database_error(two, monkeypatch):
    svc = two.online[1]
    item = {"id": "s-dead", "by": {"kind": "guest", "id": "g-dead", "name": "游客dead", "user_id": None,
                                   "level": None},
            "preset": "5+3", "rated": False, "color": "random", "rating": None, "created_at": 1.7e9}
    svc.db.add_lobby_item("s-dead", "seek", item, "deadproc")
    svc.lobby._put("seek", item)
    real = svc.db.drop_lobby_items_of
    calls: list[str] = []

    def flaky(proc: str) -> list[str]:
        calls.append(proc)
        if len(calls) == 1:
            raise sa.exc.OperationalError("DELETE", {}, Exception("server closed the connection"))
        return real(proc)

    monkeypatch.setattr(svc.db, "drop_lobby_items_of", flaky)
    two.run(svc._process_gone, "deadproc")
    assert calls == ["deadproc", "deadproc"]  # tried again after the error
    assert "s-dead" not in svc.lobby.seeks
    assert [x[1]["id"] for x in svc.db.lobby_items()] == []


def test_a_dead_process_s_game_whose_clock_ran_out_is_ended_and_rated_once(two):
    import json

    red, black = two.player(0), two.player(1)
    red.register("flagRed")
    black.register("flagBlack")
    gid = two.game(red, black, rated=True)
    play_opening(red, black, gid)  # two moves each (ABORT_PLIES); Red's clock runs, Red to move
    db = two.online[0].db
    for svc in two.online:  # the process that held it died; nobody is connected
        if svc.rooms.pop(gid, None) is not None:
            svc.registry.remove(gid)
    clock = db.game(gid)["clock"]
    clock["saved_at"] -= 3600.0  # Red's clock has run since an hour ago: its 5 minutes are over
    with db.engine.begin() as c:
        c.execute(online_games.update().where(online_games.c.id == gid).values(clock=json.dumps(clock)))

    async def both() -> None:
        import asyncio

        await asyncio.gather(two.online[0].sweep(), two.online[1].sweep())

    two.run(both)  # both take the game up; their watchdogs end it on time
    row = wait_for(lambda: (g := db.game(gid))["rating_change"] is not None and g, 60)
    assert row["status"] == "finished" and row["result"] == "0-1" and row["termination"] == "timeout"
    for who in (red, black):
        assert [h["game_id"] for h in db.history(who.me["user"]["id"])["blitz"]] == [gid]
    assert row["rating_change"]["black"]["delta"] > 0
