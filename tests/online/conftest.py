"""Fixtures of the online tests: a public server in process and players talking to it.

Every player is its own TestClient (its own cookie jar: a browser) on the one event loop of the
first client (they share its portal, so the rooms' locks and tasks belong to one loop, as in the
real server).
"""

from __future__ import annotations

import os
import time
from typing import Any

import argon2
import pytest
from fastapi.testclient import TestClient
from tests.fakeclock import ManualTime
from tests.webclient import _Client

from xiangqi.app.play.clock import TimeControl
from xiangqi.core.board import Board, Move
from xiangqi.online.lobby import Preset
from xiangqi.online.rooms import OnlineConfig, apply_update
from xiangqi.web.server import create_app

FAST = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # tests only
BASE = "http://xq.example"
#: A one-second game (tests only: a time-out after a second of the fake clock, :class:`ManualTime`).
ONE_SECOND = Preset("1s", TimeControl("fischer", base_s=1, increment_s=0))


def first_legal(board: Board, _level: str) -> Move:
    """The computer's move in tests: the first legal move (deterministic, instant)."""
    return next(iter(board.legal_moves))


class Player:
    """One browser: a TestClient with its own cookies, the CSRF token and the page's Origin."""

    def __init__(self, client: TestClient) -> None:
        self.c = client
        token = client.get("/api/online/csrf").json()["token"]
        client.headers.update({"Origin": BASE, "X-Xiangqi-Token": token})
        self.token = token
        self.me: dict[str, Any] | None = None

    def register(self, name: str, password: str = "correct horse") -> dict[str, Any]:
        r = self.c.post("/api/online/register", json={"username": name, "password": password})
        assert r.status_code == 201, r.text
        self.me = r.json()
        return self.me

    def guest(self) -> dict[str, Any]:
        r = self.c.post("/api/online/guest")
        assert r.status_code == 200, r.text
        self.me = r.json()
        return self.me

    def post(self, path: str, **kw: Any):
        return self.c.post("/api/online" + path, **kw)

    def get(self, path: str, **kw: Any):
        return self.c.get("/api/online" + path, **kw)

    def ws(self, path: str):
        return self.c.websocket_connect(f"{path}?token={self.token}", headers={"Origin": BASE})


class Server:
    """The public app and a way to make players on its loop."""

    def __init__(self, app: Any, first: TestClient) -> None:
        self.app = app
        self.first = first
        self.online = app.state.online
        #: the games' time source: a :class:`ManualTime` when the test asked for ``manual_time``
        self.time = self.online.time
        self._n = 0

    def run(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` (a coroutine function or a plain one) on the server's event loop; its result."""
        return self.first.portal.call(fn, *args)

    def player(self, address: str | None = None) -> Player:
        """A new browser; ``address``: the client address the server sees (default the TestClient's)."""
        self._n += 1
        if self._n == 1 and address is None:
            return Player(self.first)
        kw: dict[str, Any] = {} if address is None else {"client": (address, 50000)}
        c = _Client(self.app, base_url=BASE, **kw)
        c.portal = self.first.portal  # one event loop for all players
        return Player(c)

    def game_between(self, red: Player, black: Player, tc: str = "5+3", rated: bool = True) -> str:
        """A game with ``red`` on Red (``red`` seeks with colour red, ``black`` accepts)."""
        seek = red.post("/seeks", json={"time_control": tc, "rated": rated, "color": "red"})
        assert seek.status_code == 201, seek.text
        got = black.post(f"/seeks/{seek.json()['id']}/accept")
        assert got.status_code == 200, got.text
        return got.json()["game_id"]


def online_db_url(backend: str, tmp_path: Any, drops: list[Any]) -> str | None:
    """The online database of a test: None (SQLite in the data dir) or a new PostgreSQL database on
    ``$XIANGQI_TEST_PG_URL`` (skipped when unset, failed when ``$XIANGQI_REQUIRE_PG`` is set), whose
    drop is appended to ``drops``."""
    if backend == "sqlite":
        return None
    from tests.db.conftest import PG_ENV, REQUIRE_ENV, _new_pg_database

    admin = os.environ.get(PG_ENV)
    if not admin:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"${REQUIRE_ENV} is set but ${PG_ENV} is not")
        pytest.skip(f"PostgreSQL: set ${PG_ENV} (.ci/run does) to run the online tests on it too")
    url, drop = _new_pg_database(admin)
    drops.append(drop)
    return url


@pytest.fixture
def manual_time() -> ManualTime:
    """A time source the test moves on by hand; asked for, it is the servers' (games' clocks, grace
    periods, the sweep's clock checks: :attr:`OnlineConfig.time_source`)."""
    return ManualTime()


def time_of(request: Any) -> Any:
    """The ``manual_time`` of the test when it asked for one, else the machine's clocks."""
    from xiangqi.app.play.clock import REAL_TIME

    return request.getfixturevalue("manual_time") if "manual_time" in request.fixturenames else REAL_TIME


@pytest.fixture
def server(request, tmp_path):
    """A public server on SQLite (the embedded default)."""
    yield from _server("sqlite", tmp_path, time_of(request))


@pytest.fixture(params=["sqlite", "postgresql"])
def both_servers(request, tmp_path):
    """A public server on SQLite, then on PostgreSQL: the tests of the move log, clocks, ratings and
    sessions run on both storage modes (a new PostgreSQL database costs a few seconds)."""
    yield from _server(request.param, tmp_path, time_of(request))


def _server(backend: str, tmp_path: Any, time_source: Any = None):
    drops: list[Any] = []
    extra = {} if time_source is None else {"time_source": time_source}
    cfg = OnlineConfig(db_url=online_db_url(backend, tmp_path, drops), hasher=FAST, grace_s=1.0,
                       bullet_grace_s=1.0, presets={"1s": ONE_SECOND}, move_provider=first_legal, ping_s=3600,
                       **extra)
    app = create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False)
    try:
        with _Client(app, base_url=BASE) as first:
            yield Server(app, first)
    finally:
        for drop in drops:
            drop()


#: Two moves of each side: a game that ends after them has a result and a rating change (a game ended
#: sooner is aborted: ``ABORT_PLIES`` in online/rooms.py).
OPENING = ("h2e2", "h9g7", "b0c2", "b9c7")


def play_opening(red: Any, black: Any, gid: str) -> None:
    """Play :data:`OPENING` in game ``gid`` through the HTTP move route, each side from its client."""
    for k, move in enumerate(OPENING):
        r = (red, black)[k % 2].post(f"/games/{gid}/move", json={"move": move})
        assert r.status_code == 200, r.text


def recv_until(ws: Any, pred: Any, limit: int = 50) -> dict[str, Any]:
    """Messages from ``ws`` until one satisfies ``pred`` (returned); fails after ``limit`` others.
    The game's state on the socket is kept up to date on the way (:func:`track`)."""
    for _ in range(limit):
        msg = ws.receive_json()
        track(ws, msg)
        if pred(msg):
            return msg
    raise AssertionError(f"no matching message in {limit}")


def track(ws: Any, msg: dict[str, Any]) -> dict[str, Any] | None:
    """The game's state on socket ``ws`` after message ``msg`` (a whole ``state``, or an ``update``
    applied as the page applies it: :func:`apply_update`), or None for any other message. An update
    that does not follow on from the last state fails the test: a socket that reads never misses one."""
    if msg.get("type") == "state":
        ws.xq_state = msg["state"]
    elif msg.get("type") == "update":
        new = apply_update(getattr(ws, "xq_state", None), msg)
        have = getattr(ws, "xq_state", {}).get("version")
        assert new is not None, f"an update from version {msg['base']}, the page has {have}"
        ws.xq_state = new
    else:
        return None
    return ws.xq_state


def state_where(ws: Any, pred: Any) -> dict[str, Any]:
    """The next state (whole or updated) of the game socket ``ws`` that satisfies ``pred``."""
    recv_until(ws, lambda m: m.get("type") in ("state", "update") and pred(ws.xq_state))
    return ws.xq_state


def wait_for(fn: Any, timeout: float = 60.0) -> Any:
    """Poll ``fn()`` until truthy (returned) or fail after ``timeout`` s (generous: background work
    such as the games-database copy or the computer's reply takes seconds on a loaded machine)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = fn()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError("condition not met in time")

