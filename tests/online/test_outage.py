"""Shared mode with its database or its bus gone (issue 26, item 4; DESIGN.md "Security", "Failures").

Two online services ("processes") on one database and one bus, as in test_shared.py, with two fault
injectors:

- :class:`DatabaseDown`: every new connection of an engine is refused with the driver's own
  ``OperationalError`` (what psycopg says when PostgreSQL is stopped) and the pooled ones are dropped
  — the server as it meets a database that went away, deterministically, on SQLite and on
  PostgreSQL. The real thing (a PostgreSQL stopped and started again) is
  ``test_a_real_postgresql_stopped_and_started`` (slow).
- :class:`CutBus`: a :class:`LocalBus` that loses every message while cut (Redis away for both
  processes: their publishes and their subscriptions carry nothing).

Every wait is a bounded poll for a condition (:func:`wait_for`, :func:`state_where`), never a sleep
taken as the assertion.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.websockets import WebSocketDisconnect
from tests.online.conftest import (
    BASE,
    FAST,
    ONE_SECOND,
    Player,
    first_legal,
    online_db_url,
    recv_until,
    state_where,
    wait_for,
)
from tests.online.test_play import MATE_LINE
from tests.online.test_shared import Two
from tests.webclient import _Client

from xiangqi.online.bus import LocalBus
from xiangqi.online.rooms import OnlineConfig
from xiangqi.online.store import RETRY_AFTER_S
from xiangqi.web.server import create_app


class DatabaseDown:
    """Make ``engines`` meet a database that is down: while :attr:`down`, each new DBAPI connection
    raises the driver's ``OperationalError`` (SQLAlchemy's ``do_connect`` event), and :meth:`stop`
    drops the pooled connections (as a server restart kills them). :meth:`start` lets connections
    through again. ``refused`` counts the refused connections."""

    def __init__(self, engines: list[sa.Engine]) -> None:
        self.engines = engines
        self.down = False
        self.refused = 0
        for e in engines:
            sa.event.listen(e, "do_connect", self._connect)

    def _connect(self, dialect: Any, _rec: Any, _cargs: Any, _cparams: Any) -> None:
        if self.down:
            self.refused += 1
            raise dialect.loaded_dbapi.OperationalError(
                "connection refused: is the server running? (the test stopped the database)")

    def stop(self) -> None:
        self.down = True
        for e in self.engines:
            e.dispose()  # the pooled connections die with the server

    def start(self) -> None:
        self.down = False


class CutBus(LocalBus):
    """The in-process bus, losing every message while :attr:`cut` (a Redis outage for every process)."""

    def __init__(self) -> None:
        super().__init__()
        self.cut = False
        self.lost = 0

    def publish(self, channel: str, message: dict[str, Any]) -> None:
        if self.cut:
            self.lost += 1
            return
        super().publish(channel, message)


def _two(url: str, tmp_path: Path, bus: LocalBus):
    apps = []
    for k in range(2):
        cfg = OnlineConfig(db_url=url, hasher=FAST, grace_s=1.0, bullet_grace_s=1.0,
                           presets={"1s": ONE_SECOND}, move_provider=first_legal, ping_s=3600, shared=True,
                           bus=bus, heartbeat_s=0.1, process_ttl_s=2.0, retry_s=0.05)
        apps.append(create_app(tmp_path / f"p{k}", public=True, online=cfg, move_provider=first_legal,
                               warmup=False))
    with _Client(apps[0], base_url=BASE) as first:
        with first.portal.wrap_async_context_manager(apps[1].router.lifespan_context(apps[1])):
            two = Two(apps, first)
            two.bus = bus  # type: ignore[attr-defined]
            yield two


@pytest.fixture(params=["sqlite", "postgresql"])
def two(request, tmp_path):
    drops: list[Any] = []
    url = online_db_url(request.param, tmp_path, drops) or f"sqlite:///{tmp_path / 'online.db'}"
    try:
        yield from _two(url, tmp_path, CutBus())
    finally:
        for drop in drops:
            drop()


def _game(two: Two) -> tuple[Player, Player, str]:
    """A rated game: A (an account) on process 0 plays Red, B on process 1 Black."""
    a, b = two.player(0), two.player(1)
    a.register("outageA")
    b.register("outageB")
    seek = a.post("/seeks", json={"time_control": "5+3", "rated": True, "color": "red"}).json()
    gid = b.post(f"/seeks/{seek['id']}/accept").json()["game_id"]
    return a, b, gid


def _refused_503(r: Any) -> None:
    assert r.status_code == 503, (r.request.url, r.status_code, r.text)
    assert r.headers["Retry-After"] == str(RETRY_AFTER_S)
    body = r.json()
    assert body["code"] == "db_unavailable" and body["retry_after"] == RETRY_AFTER_S
    assert "database is unreachable" in body["detail"] and f"try again in {RETRY_AFTER_S} s" in body["detail"]


def _next_error(ws: Any) -> dict[str, Any]:
    return recv_until(ws, lambda m: m.get("type") == "error")


def test_the_database_down_every_route_503_a_move_refused_then_back_by_itself(two):
    a, b, gid = _game(two)
    down = DatabaseDown([s.engine for s in two.online])
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        assert wa.receive_json()["you"] == "red" and wb.receive_json()["you"] == "black"
        state_where(wa, lambda s: s["seats"]["black"]["connected"])
        wa.send_json({"type": "move", "move": MATE_LINE[0]})
        state_where(wb, lambda s: len(s["moves"]) == 1)
        state_where(wa, lambda s: len(s["moves"]) == 1)
        down.stop()
        # every route that needs the database: 503, Retry-After, a clear message, no 500
        for r in (a.get("/me"), a.get("/config"), b.get("/lobby"), a.get("/leaderboard"),
                  a.get("/players/outageA"),
                  a.post("/seeks", json={"time_control": "5+3", "color": "red"}),
                  b.post(f"/games/{gid}/move", json={"move": MATE_LINE[1]}),
                  b.post(f"/games/{gid}/resign"),
                  a.post("/login", json={"username": "outageA", "password": "correct horse"}),
                  two.player(1).post("/register", json={"username": "newcomer", "password": "pw pw pw pw"})):
            _refused_503(r)
        assert down.refused > 0
        # a move over the socket: refused with a clear message, nothing applied, the socket stays open
        wb.send_json({"type": "move", "move": MATE_LINE[1]})
        err = _next_error(wb)
        assert err["code"] == "db_unavailable" and err["request"] == "move"
        assert err["retry_after"] == RETRY_AFTER_S and "your move was not made" in err["detail"]
        shown = state_where(wb, lambda s: True)
        assert len(shown["moves"]) == 1 and shown["turn"] == "black"
        wb.send_json({"type": "ping", "id": 7})
        assert recv_until(wb, lambda m: m.get("type") == "pong")["id"] == 7  # still open
        assert len(two.online[1].rooms[gid].session.moves) == 1  # nothing applied in memory either
        # a new socket cannot be served: closed with 1013 "try again later" and the reason, not reset
        c = two.player(0)
        with pytest.raises(WebSocketDisconnect) as closed, c.ws("/ws/online/lobby") as wl:
            wl.receive_json()
        assert closed.value.code == 1013 and "database is unreachable" in closed.value.reason
        down.start()
        # back by itself: the next move over the same socket is stored and seen on both processes
        wb.send_json({"type": "move", "move": MATE_LINE[1]})
        state_where(wa, lambda s: len(s["moves"]) == 2)
        assert [m["iccs"] for m in state_where(wb, lambda s: len(s["moves"]) == 2)["moves"]] == MATE_LINE[:2]
    assert two.online[0].db.moves(gid) == MATE_LINE[:2]  # each move once: none lost, none doubled
    assert a.get("/me").status_code == 200 and b.get("/lobby").status_code == 200


def test_a_move_whose_commit_answer_was_lost_shows_up_once(two):
    """The worst case of an outage: the move's statement committed, then the connection died before
    the answer came back. The mover is told it was not made (the process cannot know); once the
    database answers, the room is re-read by itself and both pages get the move — once: a second
    try is refused (``not_your_turn``), the move log has one row for the ply."""
    a, b, gid = _game(two)
    s0 = two.online[0]
    real = s0.db.save_checked
    lost = []

    def commit_then_lose_the_answer(*args: Any) -> Any:
        got = real(*args)
        lost.append(got)
        orig = s0.engine.dialect.loaded_dbapi.OperationalError("server closed the connection unexpectedly")
        raise sa.exc.OperationalError("UPDATE online_games ...", None, orig)

    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        wa.receive_json()
        wb.receive_json()
        s0.db.save_checked = commit_then_lose_the_answer
        try:
            wa.send_json({"type": "move", "move": MATE_LINE[0]})
            err = _next_error(wa)
            assert err["code"] == "db_unavailable" and lost == [0]
        finally:
            s0.db.save_checked = real
        # the re-read after the outage brings the stored move to process 0's sockets by itself
        wait_for(lambda: len(s0.rooms[gid].session.moves) == 1)
        assert [m["iccs"] for m in state_where(wa, lambda s: len(s["moves"]) == 1)["moves"]] == MATE_LINE[:1]
        wa.send_json({"type": "move", "move": MATE_LINE[0]})  # the page tries again: not a second ply
        assert _next_error(wa)["code"] == "not_your_turn"
        wb.send_json({"type": "move", "move": MATE_LINE[1]})
        state_where(wa, lambda s: len(s["moves"]) == 2)
    assert s0.db.moves(gid) == MATE_LINE[:2]


def test_a_silent_bus_leaves_a_connected_opponent_present_and_the_lagging_socket_resyncs(two):
    a, b, gid = _game(two)
    s0, s1 = two.online
    bus: CutBus = two.bus
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        wa.receive_json()
        wb.receive_json()
        state_where(wa, lambda s: s["seats"]["black"]["connected"])
        state_where(wb, lambda s: s["seats"]["red"]["connected"])
        bus.cut = True  # Redis goes away: no heartbeat, presence or sync message gets through
        cut_at = time.monotonic()
        a.post(f"/games/{gid}/move", json={"move": MATE_LINE[0]})  # stored; its announcement is lost
        # longer than a process's ttl (2 s) without a heartbeat from process 1, and more than the
        # grace period (1 s) after: process 1 is not taken for gone, B is not "left" nor claimable
        wait_for(lambda: time.monotonic() - cut_at > 2.0 + 1.0 + 0.5, timeout=60)  # (heartbeats: 0.1 s)
        assert s1.proc in s0.procs and s0.proc in s1.procs
        st = a.get(f"/games/{gid}").json()
        assert st["seats"]["black"]["connected"] is True and st["claim"] is None
        r = a.post(f"/games/{gid}/claim")
        assert r.status_code == 503 and r.json()["code"] == "presence_unknown" and "Retry-After" in r.headers
        assert len(s1.rooms[gid].session.moves) == 0  # B's process lags: the announcement was lost
        bus.cut = False  # Redis is back
        # B's socket resyncs by itself (no action of B), and nobody was ever shown as gone
        wait_for(lambda: len(s1.rooms[gid].session.moves) == 1)  # (then the socket has it)
        got = state_where(wb, lambda s: len(s["moves"]) == 1)
        assert [m["iccs"] for m in got["moves"]] == MATE_LINE[:1]
        wait_for(lambda: s0.presence_known() and s1.presence_known())
        st = a.get(f"/games/{gid}").json()
        assert st["seats"]["black"]["connected"] is True and st["claim"] is None
        assert a.post(f"/games/{gid}/claim").json()["code"] == "conflict"  # B is there: nothing to claim
    assert bus.lost > 0


# -- a real PostgreSQL, stopped and started again (slow: a cluster of its own) -----------------------------


def _pg_bin() -> Path | None:
    dirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name)) \
        if Path("/usr/lib/postgresql").is_dir() else []
    return dirs[-1] if dirs and (dirs[-1] / "pg_ctl").exists() else None


class Cluster:
    """A throwaway PostgreSQL cluster on a unix socket (as scripts/pg-temp.sh makes one) that the
    test may stop and start."""

    def __init__(self, bindir: Path, root: Path, port: int) -> None:
        self.bin, self.root, self.port = bindir, root, port
        self.data = root / "data"
        self.user: list[str] = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(root, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C.UTF-8", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.user, str(self.bin / tool), *args], check=True, capture_output=True,
                       timeout=120)

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "60", "-o",
                  f"-k {self.root} -p {self.port} -c listen_addresses='' -c fsync=off", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@/postgres?host={self.root}&port={self.port}"


@pytest.fixture
def cluster():
    bindir = _pg_bin()
    if bindir is None:
        if os.environ.get("XIANGQI_REQUIRE_PG"):
            pytest.fail("$XIANGQI_REQUIRE_PG is set but PostgreSQL is not installed")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    from xiangqi.web.run import free_port

    # (a directory of its own under /tmp, as pg-temp.sh makes: pytest's is not open to the postgres user)
    root = Path(tempfile.mkdtemp(prefix="xiangqi-pg-outage."))
    try:
        c = Cluster(bindir, root, free_port())
        c.start()
        try:
            yield c
        finally:
            with contextlib.suppress(Exception):
                c.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_a_real_postgresql_stopped_and_started(cluster, tmp_path):
    """PostgreSQL itself stopped (``pg_ctl stop -m fast``: every connection of the pools is killed)
    and started again: 503 with Retry-After meanwhile, the move over the socket refused, and the
    first move after the restart stored (the pool's pre-ping replaces the dead connections), each
    move once."""
    for two in _two(cluster.url, tmp_path, CutBus()):
        a, b, gid = _game(two)
        with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
            wa.receive_json()
            wb.receive_json()
            wa.send_json({"type": "move", "move": MATE_LINE[0]})
            state_where(wb, lambda s: len(s["moves"]) == 1)
            cluster.stop()
            _refused_503(b.post(f"/games/{gid}/move", json={"move": MATE_LINE[1]}))
            _refused_503(a.get("/me"))
            wb.send_json({"type": "move", "move": MATE_LINE[1]})
            assert _next_error(wb)["code"] == "db_unavailable"
            cluster.start()
            # the first request after the restart is served: no dead pooled connection is handed out
            r = b.post(f"/games/{gid}/move", json={"move": MATE_LINE[1]})
            assert r.status_code == 200, r.text
            state_where(wa, lambda s: len(s["moves"]) == 2)
            wa.send_json({"type": "move", "move": MATE_LINE[2]})
            state_where(wb, lambda s: len(s["moves"]) == 3)
        assert two.online[0].db.moves(gid) == MATE_LINE[:3]


# -- a real Redis, stopped and started again (slow) -----------------------------------------------------


class RedisServer:
    """A redis-server on a unix socket in ``root`` that the test may stop and start again (same path)."""

    def __init__(self, exe: str, root: Path) -> None:
        self.exe, self.root = exe, root
        self.sock = root / "redis.sock"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([self.exe, "--port", "0", "--unixsocket", str(self.sock), "--save", "",
                                      "--appendonly", "no", "--dir", str(self.root)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.sock.exists(), timeout=60)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(60)
            self.proc = None
        with contextlib.suppress(FileNotFoundError):
            self.sock.unlink()

    @property
    def url(self) -> str:
        return f"unix://{self.sock}"


@pytest.fixture
def redis_server(tmp_path):
    exe = shutil.which("redis-server")
    if exe is None:
        if os.environ.get("XIANGQI_REQUIRE_REDIS"):
            pytest.fail("$XIANGQI_REQUIRE_REDIS is set but redis-server is not installed")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    r = RedisServer(exe, tmp_path)
    r.start()
    try:
        yield r
    finally:
        r.stop()


@pytest.mark.slow
def test_a_real_redis_stopped_and_started(redis_server, tmp_path):
    """Two services, each with its own :class:`~xiangqi.online.bus.RedisBus` on one redis-server
    (as two processes have), the server stopped for longer than the process ttl and the grace period
    with a move stored meanwhile, then started again on the same socket: the opponent is never shown
    as gone nor claimable, and the lagging process's socket gets the move once the buses reconnect."""
    url = f"sqlite:///{tmp_path / 'online.db'}"
    apps = []
    for k in range(2):
        cfg = OnlineConfig(db_url=url, hasher=FAST, grace_s=1.0, bullet_grace_s=1.0,
                           move_provider=first_legal, ping_s=3600, redis_url=redis_server.url,
                           heartbeat_s=0.1, process_ttl_s=2.0, retry_s=0.05)
        apps.append(create_app(tmp_path / f"p{k}", public=True, online=cfg, move_provider=first_legal,
                               warmup=False))
    with _Client(apps[0], base_url=BASE) as first:
        with first.portal.wrap_async_context_manager(apps[1].router.lifespan_context(apps[1])):
            two = Two(apps, first)
            s0, s1 = two.online
            a, b, gid = _game(two)
            with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
                wa.receive_json()
                wb.receive_json()
                state_where(wa, lambda s: s["seats"]["black"]["connected"])
                wait_for(lambda: len(s1.rooms[gid].session.moves) == 0 and s0.proc in s1.procs)
                redis_server.stop()
                stopped = time.monotonic()
                assert a.post(f"/games/{gid}/move", json={"move": MATE_LINE[0]}).status_code == 200
                wait_for(lambda: time.monotonic() - stopped > 2.0 + 1.0 + 0.5, timeout=60)
                assert s1.proc in s0.procs and s0.proc in s1.procs
                st = a.get(f"/games/{gid}").json()
                assert st["seats"]["black"]["connected"] is True and st["claim"] is None
                assert a.post(f"/games/{gid}/claim").json()["code"] == "presence_unknown"
                assert len(s1.rooms[gid].session.moves) == 0  # its announcement went nowhere
                redis_server.start()
                wait_for(lambda: len(s1.rooms[gid].session.moves) == 1, timeout=60)
                got = state_where(wb, lambda s: len(s["moves"]) == 1)
                assert [m["iccs"] for m in got["moves"]] == MATE_LINE[:1]
                wait_for(lambda: s0.presence_known() and s1.presence_known(), timeout=60)
                st = a.get(f"/games/{gid}").json()
                assert st["seats"]["black"]["connected"] is True and st["claim"] is None
                wb.send_json({"type": "move", "move": MATE_LINE[1]})  # and play goes on across
                state_where(wa, lambda s: len(s["moves"]) == 2)
            assert s0.db.moves(gid) == MATE_LINE[:2]
