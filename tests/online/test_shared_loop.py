"""Shared mode on a real PostgreSQL: the lobby's and the accounts' database calls run off the event
loop (a lock held on one row delays only the request that needs it, never another user's lobby action
on the same process), and the sweep puts a dead process's finished game into the games database
exactly once.

Uses the two-process fixture of test_shared_store.py (two services on one new PostgreSQL database,
``lock_timeout`` 60 s): a test that holds a row with ``SELECT … FOR UPDATE`` on a connection of its
own is a slow database for that row. The old code, which read and wrote those rows on the event loop,
stalled the whole process until the lock was released (and the other user's action with it).
"""

from __future__ import annotations

import threading
from typing import Any

import sqlalchemy as sa
from tests.online.conftest import play_opening, wait_for
from tests.online.test_shared_store import RowLock, two  # noqa: F401 (the fixture)

from xiangqi.db.schema import games
from xiangqi.online.accounts import login_sessions
from xiangqi.online.store import online_lobby, ratings


def _in_thread(fn: Any) -> tuple[threading.Thread, list[Any]]:
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(fn()), daemon=True)
    t.start()
    return t, got


def _quick(fn: Any) -> Any:
    """``fn()``: another user's request, made while a held lock keeps the test's first request
    waiting. Its answer is checked by order, not by time: each test then asserts that the waiting
    request has still no answer (the old code, waiting on the event loop, answered ``fn`` only after
    the lock's time-out had failed the held request)."""
    return fn()


def test_a_held_seek_row_does_not_delay_another_user_s_seek_or_challenge(two):  # noqa: F811
    a, b, c = (two.player(0) for _ in range(3))
    for p in (a, b, c):
        p.guest()
    seek = a.post("/seeks", json={"time_control": "5+3", "color": "red"}).json()
    lock = RowLock(two.url, seek["id"], online_lobby)
    try:  # a's cancel waits for the seek's row; b and c make, look at and cancel theirs meanwhile
        t, got = _in_thread(lambda: a.c.delete(f"/api/online/seeks/{seek['id']}"))
        wait_for(lambda: lock.waiting() == 1, 60)
        mine = _quick(lambda: b.post("/seeks", json={"time_control": "5+3", "color": "black"}))
        assert mine.status_code == 201, mine.text
        assert _quick(lambda: b.c.delete(f"/api/online/seeks/{mine.json()['id']}")).status_code == 200
        ch = _quick(lambda: c.post("/challenges", json={"time_control": "5+3"}))
        assert ch.status_code == 201, ch.text
        seen = _quick(lambda: b.get(f"/challenges/{ch.json()['id']}"))
        assert seen.status_code == 200 and seen.json()["id"] == ch.json()["id"]
        assert _quick(lambda: c.c.delete(f"/api/online/challenges/{ch.json()['id']}")).status_code == 200
        assert not got  # a's cancel still waits
    finally:
        lock.release()
        t.join(60)
    assert got and got[0].status_code == 200, got and got[0].text
    with sa.create_engine(two.url).connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(online_lobby)).scalar() == 0


def test_a_held_session_row_does_not_delay_another_user_s_lobby_action(two):  # noqa: F811
    a, b = two.player(0), two.player(0)
    a.register("lockedSession")
    b.guest()
    engine = sa.create_engine(two.url)
    conn = engine.connect()
    conn.begin()
    try:  # every row of the sessions table held for update: a's cookie lookup waits (an UPDATE of
        # last_seen, or a slow read); b, a guest, goes on with the lobby
        conn.execute(sa.text(f"LOCK TABLE {login_sessions.name} IN ACCESS EXCLUSIVE MODE"))
        t, got = _in_thread(lambda: a.post("/seeks", json={"time_control": "5+3"}))
        wait_for(lambda: RowLock.waiting(_Pg(engine)) >= 1, 60)
        r = _quick(lambda: b.post("/seeks", json={"time_control": "5+3"}))
        assert r.status_code == 201, r.text
        assert _quick(lambda: b.get("/lobby")).status_code == 200
        assert not got
    finally:
        conn.rollback()
        conn.close()
        t.join(60)
        engine.dispose()
    assert got and got[0].status_code == 201, got and got[0].text
    assert got[0].json()["by"]["username"] == "lockedSession"


def test_a_held_rating_row_does_not_delay_another_user_s_seek(two):  # noqa: F811
    a, b, c, d = (two.player(0) for _ in range(4))
    for p, name in ((a, "ratedA"), (b, "ratedB")):
        p.register(name)
    c.guest()
    d.guest()
    import datetime as dt

    with sa.create_engine(two.url).begin() as conn:
        conn.execute(ratings.insert().values(user_id=a.me["user"]["id"], category="blitz", rating=1600.0,
                                             rd=100.0, volatility=0.06, games=3,
                                             updated_at=dt.datetime.now(dt.UTC)))
    engine = sa.create_engine(two.url)
    conn = engine.connect()
    conn.begin()
    try:  # a's rating read (for the seek's view) waits for the ratings table
        conn.execute(sa.text("LOCK TABLE ratings IN ACCESS EXCLUSIVE MODE"))
        t, got = _in_thread(lambda: a.post("/seeks", json={"time_control": "3+2", "rated": True}))
        wait_for(lambda: RowLock.waiting(_Pg(engine)) >= 1, 60)
        r = _quick(lambda: c.post("/seeks", json={"time_control": "5+3"}))  # a guest's: no rating
        assert r.status_code == 201, r.text
        assert _quick(lambda: d.post(f"/seeks/{r.json()['id']}/accept")).status_code == 200
        assert not got
    finally:
        conn.rollback()
        conn.close()
        t.join(60)
        engine.dispose()
    assert got and got[0].status_code == 201, got and got[0].text
    assert got[0].json()["rating"] == 1600  # the seat's rating, read once the table was free


def test_a_slow_room_look_up_does_not_delay_another_user_s_seek(two):  # noqa: F811
    a, b, c, d = (two.player(0) for _ in range(4))
    for p, name in ((a, "lookRed"), (b, "lookBlack")):
        p.register(name)
    c.guest()
    d.guest()
    gid = two.game(a, b, rated=True)
    engine = sa.create_engine(two.url)
    conn = engine.connect()
    conn.begin()
    try:  # the games' table locked: a's look-up of its game (SELECT revision) waits for it
        conn.execute(sa.text("LOCK TABLE online_games IN ACCESS EXCLUSIVE MODE"))
        t, got = _in_thread(lambda: a.get(f"/games/{gid}"))
        wait_for(lambda: RowLock.waiting(_Pg(engine)) >= 1, 60)
        r = _quick(lambda: c.post("/seeks", json={"time_control": "5+3"}))
        assert r.status_code == 201, r.text
        ch = _quick(lambda: d.post("/challenges", json={"time_control": "10+5"}))
        assert ch.status_code == 201, ch.text
        assert not got
    finally:
        conn.rollback()
        conn.close()
        t.join(60)
        engine.dispose()
    assert got and got[0].status_code == 200, got and got[0].text
    st = got[0].json()
    assert st["id"] == gid and st["status"] == "playing"
    assert st["seats"]["red"]["rating"]["rating"] == 1500  # read off the loop before the state was sent


class _Pg:
    """Enough of a :class:`RowLock` for its ``waiting`` count."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine


def _exports(pair: Any, gid: str) -> list[tuple[int, str | None]]:
    """The copies of online game ``gid`` in the two processes' games databases: ``[(id, ECCO)]``."""
    out = []
    for app in pair.apps:
        with app.state.games_db.engine().connect() as c:
            out += [(r.id, r.ecco_computed) for r in c.execute(
                sa.select(games.c.id, games.c.ecco_computed).where(games.c.source == f"online:{gid}"))]
    return out


def test_two_processes_sweeping_a_dead_process_s_game_put_it_into_the_games_database_once(two):  # noqa: F811
    red, black = two.player(0), two.player(1)
    red.guest()
    black.guest()
    gid = two.game(red, black)  # casual: the sweep's rating part has nothing to do with it
    for mover, move in ((red, "h2e2"), (black, "h9g7"), (red, "h0g2")):
        r = mover.post(f"/games/{gid}/move", json={"move": move})
        assert r.status_code == 200, r.text
    db = two.online[0].db
    wait_for(lambda: db.moves(gid) == ["h2e2", "h9g7", "h0g2"])
    db.finish(gid, status="finished", result="1-0", termination="resignation", reason_zh="黑方认输",
              reason_en="Black resigned")  # stored by a process that then died before the export
    for svc in two.online:
        if svc.rooms.pop(gid, None) is not None:
            svc.registry.remove(gid)
    assert _exports(two, gid) == []

    async def both() -> None:
        import asyncio

        await asyncio.gather(two.online[0].sweep(), two.online[1].sweep())

    two.run(both)
    two.run(two.online[0].sweep)
    two.run(two.online[1].sweep)  # later sweeps find nothing left
    got = _exports(two, gid)
    assert len(got) == 1, got
    db_id, ecco = got[0]
    assert ecco and ecco[0] in "ABCDE"  # classified like a game finished normally
    row = db.game(gid)
    assert row["db_id"] == db_id and row["exported_at"] is not None
    assert red.get(f"/games/{gid}").json()["db_id"] == db_id


def test_a_game_ended_normally_is_not_exported_again_by_a_sweep(two):  # noqa: F811
    red, black = two.player(0), two.player(1)
    red.guest()
    black.guest()
    gid = two.game(red, black)
    play_opening(red, black, gid)  # two moves each: the resignation ends the game (ABORT_PLIES)
    assert black.post(f"/games/{gid}/resign").status_code == 200
    db = two.online[0].db
    wait_for(lambda: db.game(gid)["db_id"])
    two.run(two.online[0].sweep)
    two.run(two.online[1].sweep)
    assert len(_exports(two, gid)) == 1


def test_a_seek_accepted_while_its_row_is_being_stored_starts_one_game(two):  # noqa: F811
    a, b = two.player(0), two.player(0)
    a.guest()
    b.guest()
    engine = sa.create_engine(two.url)
    conn = engine.connect()
    conn.begin()
    try:  # a's seek is in the lobby of this process while its row waits for the table
        conn.execute(sa.text("LOCK TABLE online_lobby IN ACCESS EXCLUSIVE MODE"))
        t, made = _in_thread(lambda: a.post("/seeks", json={"time_control": "5+3", "color": "red"}))
        wait_for(lambda: RowLock.waiting(_Pg(engine)) >= 1, 60)
        seeks = _quick(lambda: b.get("/lobby")).json()["seeks"]
        assert [s["by"]["id"] for s in seeks] == [a.me["user"]["id"]]
        lobby = two.online[0].lobby
        waiting = threading.Event()  # the acceptance waits for the seek's row to be stored
        real_stored = lobby._stored

        async def stored(item_id):
            if item_id in lobby._storing:
                waiting.set()
            return await real_stored(item_id)

        lobby._stored = stored
        t2, got = _in_thread(lambda: b.post(f"/seeks/{seeks[0]['id']}/accept"))
        assert waiting.wait(60)
        assert not made and not got  # the acceptance waits for the seek's row, not the other way
    finally:
        conn.rollback()
        conn.close()
        t.join(60)
        t2.join(60)
        engine.dispose()
    assert made and made[0].status_code == 201, made and made[0].text
    assert got and got[0].status_code == 200, got and got[0].text
    row = two.online[0].db.game(got[0].json()["game_id"])
    assert row["red_id"] == a.me["user"]["id"] and row["black_id"] == b.me["user"]["id"]
    with sa.create_engine(two.url).connect() as c:  # the seek's row was inserted, then taken
        assert c.execute(sa.select(sa.func.count()).select_from(online_lobby)).scalar() == 0
