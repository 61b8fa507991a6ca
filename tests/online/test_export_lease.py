"""A process killed between a game's export claim and its write into the games database, or in the
middle of its rating: the game is put there (rated) afterwards all the same, once, on SQLite and on
PostgreSQL.

The export claim (``exported_at``) is a lease (:meth:`OnlineStore.claim_export`): the games database
is another database, so the claim and the write cannot be one transaction; a claim older than
:attr:`OnlineConfig.export_lease_s` without a ``db_id`` is taken over by the sweep (shared mode) or,
in the embedded mode, by the next start of the server. The rating claim (``rated_at``) has no such
window: the claim and the ratings are one transaction, so a process killed inside it leaves the game
unclaimed. The dying process is a real one: a Python process on the same database that makes the
claim with the store's own code and is then killed with SIGKILL (before the write it would have made).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import pytest
import sqlalchemy as sa
from tests.online.conftest import BASE, FAST, Server, first_legal, online_db_url, play_opening, wait_for
from tests.webclient import _Client

from xiangqi.db.schema import games
from xiangqi.online.bus import LocalBus
from xiangqi.online.rooms import OnlineConfig
from xiangqi.online.store import ratings
from xiangqi.web.server import create_app

_DIE_AFTER_EXPORT_CLAIM = """
import os, signal, sys
import sqlalchemy as sa
from xiangqi.online.store import OnlineStore
store = OnlineStore(sa.create_engine(sys.argv[1]))
assert store.claim_export(sys.argv[2]), "nothing to claim"
print("claimed", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # dead before the games database's write
"""

_DIE_IN_THE_RATING = """
import os, signal, sys
import sqlalchemy as sa
from xiangqi.online.store import OnlineStore
store = OnlineStore(sa.create_engine(sys.argv[1]))
def rate(red, black):  # called inside the transaction, after the claim's UPDATE matched
    print("claimed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
store.rate_once(sys.argv[2], rate)
"""


def _die(script: str, url: str, gid: str) -> None:
    """Run ``script`` on the online database ``url`` for game ``gid`` and see it killed after it
    claimed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    got = subprocess.run([sys.executable, "-c", script, url, gid], capture_output=True, text=True,
                         timeout=120, env=env)
    assert got.stdout.strip() == "claimed", got.stderr
    assert got.returncode == -9, (got.returncode, got.stderr)


class One(Server):
    """A public server in shared mode (one process of several, on its own bus) with a short lease."""

    def __init__(self, app: Any, first: _Client, url: str) -> None:
        super().__init__(app, first)
        self.url = url

    def run(self, fn: Any, *args: Any) -> Any:
        return self.first.portal.call(fn, *args)

    def finished_unexported(self, rated: bool = False) -> tuple[str, Any]:
        """A game played to a resignation and stored as finished, whose export was not claimed (the
        games database taken away while it ends: as a process that died right after storing the end);
        its room dropped, as on a process that did not hold it. Returns its id and the function that
        gives the games database (and the rating) back: to be called once the dying process made its
        claim (the end's own work, a task, may come late: it then finds the game claimed)."""
        red, black = self.player(), self.player()
        if rated:
            red.register(f"red{self._n}")
            black.register(f"black{self._n}")
        else:
            red.guest()
            black.guest()
        seek = red.post("/seeks", json={"time_control": "5+3", "rated": rated, "color": "red"})
        assert seek.status_code == 201, seek.text
        gid = black.post(f"/seeks/{seek.json()['id']}/accept").json()["game_id"]
        gdb, self.online.games_db = self.online.games_db, None
        rate_once = self.online.db.rate_once
        if rated:  # (the rating too is left undone: the process died first)
            self.online.db.rate_once = lambda *_a, **_k: None

        def restore() -> None:
            self.online.games_db = gdb
            self.online.db.rate_once = rate_once

        play_opening(red, black, gid)  # two moves each: the resignation has a result (ABORT_PLIES)
        assert black.post(f"/games/{gid}/resign").status_code == 200
        wait_for(lambda: self.online.db.game(gid)["status"] == "finished")
        wait_for(lambda: not any(t.get_coro().__name__ == "finished" for t in list(self.online._tasks)))
        if self.online.rooms.pop(gid, None) is not None:
            self.online.registry.remove(gid)
        row = self.online.db.game(gid)
        assert row["exported_at"] is None and row["db_id"] is None
        return gid, restore

    def exports(self, gid: str) -> list[tuple[int, str | None]]:
        with self.app.state.games_db.engine().connect() as c:
            return [(r.id, r.ecco_computed) for r in c.execute(
                sa.select(games.c.id, games.c.ecco_computed).where(games.c.source == f"online:{gid}"))]


@pytest.fixture(params=["sqlite", "postgresql"])
def one(request, tmp_path):
    drops: list[Any] = []
    url = online_db_url(request.param, tmp_path, drops) or f"sqlite:///{tmp_path / 'online.db'}"
    cfg = OnlineConfig(db_url=url, hasher=FAST, move_provider=first_legal, ping_s=3600, shared=True,
                       bus=LocalBus(), heartbeat_s=0.1, process_ttl_s=30.0, sweep_s=3600.0,
                       settle_after_s=0.0, retry_s=0.01, export_lease_s=1.0)
    app = create_app(tmp_path / "p0", public=True, online=cfg, move_provider=first_legal, warmup=False)
    try:
        with _Client(app, base_url=BASE) as first:
            yield One(app, first, url)
    finally:
        for drop in drops:
            drop()


@pytest.mark.slow
@pytest.mark.ci
def test_a_process_killed_between_the_export_claim_and_the_write_leaves_the_game_to_the_sweep(one):
    gid, restore = one.finished_unexported()
    _die(_DIE_AFTER_EXPORT_CLAIM, one.url, gid)
    restore()
    row = one.online.db.game(gid)
    assert row["exported_at"] is not None and row["db_id"] is None  # claimed, never written
    claimed_at = time.monotonic()
    assert one.run(one.online.sweep) == 0
    if time.monotonic() - claimed_at < 0.9:  # the lease (1 s) holds: the claim's owner may be writing
        assert one.exports(gid) == []
    while time.monotonic() - claimed_at < 1.1:
        time.sleep(0.05)
    one.run(one.online.sweep)  # the lease has run out: the sweep takes the claim over and writes it
    got = one.exports(gid)
    assert len(got) == 1, got
    db_id, ecco = got[0]
    assert ecco and ecco[0] in "ABCDE"  # the same PGN as a normal end: classified
    assert one.online.db.game(gid)["db_id"] == db_id
    one.run(one.online.sweep)
    assert one.exports(gid) == [(db_id, ecco)]  # once
    assert one.player().get(f"/games/{gid}").json()["db_id"] == db_id


@pytest.mark.slow
@pytest.mark.ci
def test_a_process_killed_inside_the_rating_leaves_the_game_unrated_for_the_sweep(one):
    gid, restore = one.finished_unexported(rated=True)
    _die(_DIE_IN_THE_RATING, one.url, gid)
    restore()
    row = one.online.db.game(gid)
    assert row["rated_at"] is None and row["rating_change"] is None  # the claim died with its transaction
    # the row is not left locked: this sweep rates it (an outcome; the time it took is no part of it)
    assert one.run(one.online.sweep) == 1
    row = one.online.db.game(gid)
    assert row["rated_at"] is not None
    change = row["rating_change"]
    assert change["red"]["delta"] > 0 > change["black"]["delta"]  # Black resigned
    with sa.create_engine(one.url).connect() as c:
        assert sorted(r.games for r in c.execute(sa.select(ratings.c.games))) == [1, 1]
    assert one.run(one.online.sweep) == 0  # once


@pytest.mark.slow
@pytest.mark.ci
def test_the_embedded_server_s_next_start_exports_a_game_its_dead_run_had_claimed(tmp_path):
    cfg = OnlineConfig(hasher=FAST, move_provider=first_legal, ping_s=3600)
    app = create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False)
    url = f"sqlite:///{tmp_path / 'online.db'}"
    with _Client(app, base_url=BASE) as first:
        srv = One(app, first, url)
        gid, restore = srv.finished_unexported()
        _die(_DIE_AFTER_EXPORT_CLAIM, url, gid)  # the first run's claim, then its death
        restore()
        assert srv.exports(gid) == []
    app = create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False)
    with _Client(app, base_url=BASE) as first:  # the next start
        srv = One(app, first, url)
        got = wait_for(lambda: srv.exports(gid))
        assert len(got) == 1 and got[0][1]
        wait_for(lambda: srv.online.db.game(gid)["db_id"] == got[0][0])
