"""The shared mode's abuse limits off the event loop, on a real redis-server (xiangqi.online.limits):
counted atomically over two clients and two processes, and a slow (stopped) or dead Redis never stops
the event loop: the check falls back to this process's own count (fail open, per process) and Redis
is not asked again for a while (``Health``); when it answers again the socket counts are written back.

The redis-server is Debian's, on a unix socket in tmp_path (skipped when missing unless
``$XIANGQI_REQUIRE_REDIS`` is set, as CI does); "slow" is the server stopped with SIGSTOP: it accepts
connections (the kernel's backlog) and answers nothing, as an overloaded or hung Redis.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.online.conftest import BASE, FAST, Player, first_legal
from tests.webclient import _Client, run_coroutine

from xiangqi.online import limits
from xiangqi.online.lobby import LobbyError
from xiangqi.online.rooms import OnlineConfig
from xiangqi.web.server import create_app


class Redis:
    """A redis-server of the test's own on a unix socket (``url``); :meth:`stop`/:meth:`cont` pause
    and resume it, :meth:`kill` ends it, :meth:`start` starts it again on the same socket."""

    def __init__(self, tmp: Path) -> None:
        self.exe = shutil.which("redis-server")
        if self.exe is None:
            if os.environ.get("XIANGQI_REQUIRE_REDIS"):
                pytest.fail("$XIANGQI_REQUIRE_REDIS is set but redis-server is not installed")
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        self.tmp = tmp
        self.sock = tmp / "redis.sock"
        self.url = f"unix://{self.sock}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        assert self.exe is not None
        self.sock.unlink(missing_ok=True)
        self.proc = subprocess.Popen([self.exe, "--port", "0", "--unixsocket", str(self.sock), "--save", "",
                                      "--appendonly", "no", "--dir", str(self.tmp)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 60
        while not self.sock.exists():
            if time.monotonic() > end or self.proc.poll() is not None:
                pytest.fail("redis-server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def cont(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)
        self.proc.kill()
        self.proc.wait(60)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill()

    def client(self) -> Any:
        return limits.redis_client(self.url)


@pytest.fixture
def redis(tmp_path):
    r = Redis(tmp_path)
    try:
        yield r
    finally:
        r.close()


class FakeClock:
    """A clock for :class:`limits.Health` that moves only when the test says (``advance``): whether
    Redis is asked again is decided by the test's steps, not by how fast a loaded machine runs."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class LoopWatch:
    """Whether the event loop served other work while a Redis call waited: a task that wakes every
    5 ms logs ``"tick"`` into :attr:`events`, and :meth:`trace` logs ``"ask"`` and ``"answer"``
    around each Redis call of the loop (:meth:`limits.Health.attempt_async`). A call that blocked
    the loop (a blocking client, a sleep) has no tick between its ask and its answer; one that
    waits as a coroutine has at least one, however loaded the machine: the ticker's timer is due
    before the call's time-out, and asyncio runs due timers in order. An order, not a duration."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.005)
            self.events.append("tick")

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self._task

    def trace(self, health: limits.Health, monkeypatch: pytest.MonkeyPatch) -> None:
        """Log ``ask``/``answer`` around every call ``health`` makes on the loop."""
        real = health.attempt_async

        async def attempt_async(call, what):
            async def traced():
                self.events.append("ask")
                try:
                    got = await call()
                except BaseException:
                    self.events.append("failed")
                    raise
                self.events.append("answer")
                return got
            return await real(traced, what)

        monkeypatch.setattr(health, "attempt_async", attempt_async)

    def calls(self) -> list[tuple[str, int]]:
        """Each traced call as ``(how it ended: "answer" or "failed", ticks of the loop meanwhile)``."""
        out, ticks = [], None
        for e in self.events:
            if e == "ask":
                ticks = 0
            elif e in ("answer", "failed"):
                if ticks is not None:
                    out.append((e, ticks))
                ticks = None
            elif ticks is not None:
                ticks += 1
        return out


def no_blocking_client_on_the_loop(lim: limits.RedisLimits, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make ``lim``'s blocking (synchronous) client fail the test when the event loop's thread uses
    it (a call that would stop the loop for a whole time-out while Redis does not answer); returns
    the list of such uses (also raised as AssertionError). Worker threads may use it."""
    used: list[str] = []
    pool = lim.client.connection_pool
    real = pool.get_connection

    def get_connection(*args, **kw):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return real(*args, **kw)
        used.append(threading.current_thread().name)
        raise AssertionError("the blocking Redis client was used on the event loop")

    monkeypatch.setattr(pool, "get_connection", get_connection)
    return used


#: The time-out of a Redis call in the tests of counting (atomicity, not the time-out, is tested
#: there; the time-out's own tests are below): on a loaded machine the first connections and the
#: script's load took over the 0.5 s (and once over 5 s) a call waits, and the fallback then counted
#: in the process. A bound for a hung Redis only, never reached.
PATIENT_S = 60.0


@pytest.fixture
def patient(monkeypatch):
    monkeypatch.setattr(limits, "REDIS_TIMEOUT_S", PATIENT_S)


def test_a_window_lets_exactly_its_limit_through_from_two_clients_at_once(redis, patient):

    async def scenario() -> tuple[int, int]:
        a, b = limits.RedisLimits(redis.url), limits.RedisLimits(redis.url)  # two processes' clients
        wa, wb = (limits.RedisWindow(x, "seeks", 6, 60.0) for x in (a, b))
        try:
            got = await asyncio.gather(*(w.hit_async("u-1") for _ in range(10) for w in (wa, wb)),
                                       return_exceptions=True)
        finally:
            await a.aclose()
            await b.aclose()
        refused = [g for g in got if isinstance(g, LobbyError)]
        assert all(g.status == 429 and g.code == "rate_limited" and 1 <= g.retry_after <= 60 for g in refused)
        assert a.health.failures == b.health.failures == 0
        return sum(1 for g in got if g is None), len(refused)

    assert run_coroutine(scenario()) == (6, 14)
    assert redis.client().zcard(f"{limits.PREFIX}seeks:u-1") == 6


_OTHER = """
import sys, threading
from xiangqi.online import limits
from xiangqi.online.lobby import LobbyError
limits.REDIS_TIMEOUT_S = float(sys.argv[2])  # the tests of counting wait for Redis (PATIENT_S)
lim = limits.RedisLimits(sys.argv[1])
w = limits.RedisWindow(lim, "seeks", 6, 60.0)
print("ready", flush=True)
lim.client.blpop("go")
ok = []
def hit():
    for _ in range(5):
        try:
            w.hit("u-7")
            ok.append(1)
        except LobbyError:
            pass
ts = [threading.Thread(target=hit) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
print(len(ok), lim.health.failures, flush=True)
"""


def test_a_window_is_one_count_for_two_processes(redis, patient):
    """Another process (its worker threads, the synchronous client: the login's path) and this one's
    event loop (the seek's path) hit one key at once: 6 let through in all."""
    other = subprocess.Popen([sys.executable, "-c", _OTHER, redis.url, str(PATIENT_S)],
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "ready"

        async def scenario() -> int:
            lim = limits.RedisLimits(redis.url)
            w = limits.RedisWindow(lim, "seeks", 6, 60.0)
            try:
                await lim.aio().rpush("go", 1)
                got = await asyncio.gather(*(w.hit_async("u-7") for _ in range(10)), return_exceptions=True)
            finally:
                await lim.aclose()
            assert lim.health.failures == 0
            return sum(1 for g in got if g is None)

        here = run_coroutine(scenario())
        out, _ = other.communicate(timeout=60)
    finally:
        if other.poll() is None:
            other.kill()
    there, failures = (int(x) for x in out.split())
    assert failures == 0
    assert here + there == 6, (here, there)
    assert redis.client().zcard(f"{limits.PREFIX}seeks:u-7") == 6


def test_sockets_of_one_address_are_counted_over_two_processes_at_once(redis, patient):
    async def scenario() -> None:
        la, lb = limits.RedisLimits(redis.url), limits.RedisLimits(redis.url)
        live = lambda: ["pa", "pb"]  # noqa: E731
        sa_, sb = limits.RedisSockets(la, "pa", live), limits.RedisSockets(lb, "pb", live)
        try:
            got = await asyncio.gather(*(s.opened("10.0.0.1", 4) for _ in range(5) for s in (sa_, sb)))
            assert sum(got) == 4  # of ten at once from two processes, the limit
            assert sa_.local.get("10.0.0.1", 0) + sb.local.get("10.0.0.1", 0) == 4
            for s in (sa_, sb):  # one closed on each process that has one
                if s.local.get("10.0.0.1"):
                    s.closed("10.0.0.1")
            closed = 4 - sa_.local.get("10.0.0.1", 0) - sb.local.get("10.0.0.1", 0)
            # the closes are written in the background (each process's writer): once they are in Redis
            # the next opens, on either process, see them
            key = f"{limits.PREFIX}sockets:10.0.0.1"
            end = time.monotonic() + 60  # "eventually": a poll; the bound ends a hung test only
            while sum(int(v) for v in (await la.aio().hgetall(key)).values()) != 4 - closed:
                assert time.monotonic() < end, await la.aio().hgetall(key)
                await asyncio.sleep(0.01)
            assert [await sa_.opened("10.0.0.1", 4) for _ in range(closed + 1)] == [True] * closed + [False]
            assert await sb.opened("10.0.0.2", 4)  # another address has its own count
            held = redis.client().hgetall(f"{limits.PREFIX}sockets:10.0.0.1")
            assert {k.decode(): int(v) for k, v in held.items()} == {
                p: n for p, n in (("pa", sa_.local.get("10.0.0.1", 0)), ("pb", sb.local.get("10.0.0.1", 0)))
                if n}
            assert sum(int(v) for v in held.values()) == 4
            # a process that stops beating no longer counts: pb's sockets are dropped from the total
            sa_.live = lambda: ["pa"]
            mine = sa_.local["10.0.0.1"]
            assert [await sa_.opened("10.0.0.1", 4) for _ in range(5 - mine)] == [True] * (4 - mine) + [False]
        finally:
            for s, lim in ((sa_, la), (sb, lb)):
                await s.aclose()
                await lim.aclose()

    run_coroutine(scenario())


def test_a_stopped_redis_does_not_stop_the_loop_and_the_own_count_decides(redis, monkeypatch):
    """While Redis is stopped the first call waits for its time-out as a coroutine (the loop ticks
    meanwhile), then this process's count decides and Redis is not asked again until ``retry_s`` is
    over (a fake clock: the test moves it); once it answers again the sockets' count changed
    meanwhile is written back by the writer's retry."""
    monkeypatch.setattr(limits, "RETRY_S", 0.05)  # the sockets' writer retries this often (its poll)
    clock = FakeClock()

    async def scenario() -> None:
        lim = limits.RedisLimits(redis.url, limits.Health(retry_s=5.0, clock=clock))
        blocking = no_blocking_client_on_the_loop(lim, monkeypatch)
        w = limits.RedisWindow(lim, "seeks", 3, 60.0)
        socks = limits.RedisSockets(lim, "pa", lambda: ["pa"])
        watch = LoopWatch()
        try:
            await w.hit_async("u-1")  # one counted in Redis (and in this process)
            assert await socks.opened("10.0.0.1", 2)
            watch.trace(lim.health, monkeypatch)
            redis.stop()
            watch.start()
            await w.hit_async("u-1")  # Redis does not answer: the time-out, then this process's count
            assert lim.health.failures == 1 and not lim.health.up()
            assert await socks.opened("10.0.0.1", 2)  # Redis not asked again while down: at once
            with pytest.raises(LobbyError) as refused:
                await w.hit_async("u-1")  # the third is fine, the fourth passes the limit of 3 here
                await w.hit_async("u-1")
            assert refused.value.status == 429
            assert not await socks.opened("10.0.0.1", 2)  # the per-process count still limits
            await watch.stop()
            (call,) = watch.calls()  # asked once in the outage: the clock did not reach retry_s
            assert call[0] == "failed" and call[1] >= 1, watch.events  # the loop ran while it waited
            assert lim.health.failures == 1 and blocking == []
            socks.closed("10.0.0.1")  # one of the two closes while Redis is stopped
            redis.cont()
            assert not lim.health.up()
            clock.advance(5.0)  # retry_s over: Redis is asked again
            await w.hit_async("u-9")
            assert lim.health.up() and lim.health.failures == 1
            assert watch.calls()[-1][0] == "answer"
            # the sockets' count changed while Redis was away is written back (tried every RETRY_S)
            end = time.monotonic() + 60  # "eventually": a poll; the bound ends a hung test only
            held: dict[bytes, bytes] = {}
            while time.monotonic() < end:
                held = await lim.aio().hgetall(f"{limits.PREFIX}sockets:10.0.0.1")
                if held == {b"pa": b"1"}:
                    break
                await asyncio.sleep(0.02)
            assert held == {b"pa": b"1"}
        finally:
            redis.cont()
            await socks.aclose()
            await lim.aclose()

    run_coroutine(scenario())


def test_a_dead_redis_counts_in_the_process(redis, monkeypatch):
    """A dead Redis (nothing listens) refuses at once: asked once, then this process counts (the
    clock is fake: retry_s never runs out here); the loop's path never uses the blocking client."""
    redis.kill()

    async def scenario() -> None:
        lim = limits.RedisLimits(redis.url, limits.Health(retry_s=60, clock=FakeClock()))
        blocking = no_blocking_client_on_the_loop(lim, monkeypatch)
        w = limits.RedisWindow(lim, "seeks", 2, 60.0)
        socks = limits.RedisSockets(lim, "pa", lambda: ["pa"])
        try:
            await w.hit_async("u-1")
            await w.hit_async("u-1")
            with pytest.raises(LobbyError):
                await w.hit_async("u-1")
            assert [await socks.opened("a", 1), await socks.opened("a", 1)] == [True, False]
            assert lim.health.failures == 1  # asked once, then not for retry_s
            assert blocking == []
        finally:
            await socks.aclose()
            await lim.aclose()

    run_coroutine(scenario())


@pytest.fixture
def service(tmp_path, redis):
    cfg = OnlineConfig(db_url=f"sqlite:///{tmp_path / 'online.db'}", hasher=FAST, move_provider=first_legal,
                       ping_s=3600, shared=True, heartbeat_s=0.1, process_ttl_s=30.0, seeks_per_minute=3,
                       sockets_per_ip=2, limits_url=redis.url)
    app = create_app(tmp_path / "p0", public=True, online=cfg, move_provider=first_legal, warmup=False)
    with _Client(app, base_url=BASE) as first:
        yield app, first


def _on_loop(first: _Client, fn: Any) -> Any:
    return first.portal.call(fn)


@pytest.mark.slow
@pytest.mark.ci
def test_a_stopped_redis_leaves_seeks_logins_and_sockets_working_and_the_loop_free(service, redis,
                                                                                 monkeypatch):
    """The whole server with Redis stopped: a seek (the loop's path) waits for one time-out as a
    coroutine (the loop ticks meanwhile), then this process's count decides; a login (a worker
    thread) and a socket are answered and counted here. Orders and counts, no durations: the
    health's clock is fake (Redis is not asked again in this test once it failed)."""
    app, first = service
    online = app.state.online
    monkeypatch.setattr(online.redis_limits.health, "clock", FakeClock())
    blocking = no_blocking_client_on_the_loop(online.redis_limits, monkeypatch)
    a = Player(first)
    a.register("owner")
    b = Player(_Client(app, base_url=BASE))
    b.c.portal = first.portal
    b.guest()
    watch = LoopWatch()
    watch.trace(online.redis_limits.health, monkeypatch)
    _on_loop(first, watch.start)
    redis.stop()
    try:
        r = b.post("/seeks", json={"time_control": "5+3"})  # the seek's limit: the time-out, then here
        assert r.status_code == 201, r.text
        assert b.c.delete(f"/api/online/seeks/{r.json()['id']}").status_code == 200
        # a login (a worker thread) and a socket meanwhile: answered, counted in this process
        bad = a.post("/login", json={"username": "owner", "password": "wrong one"})
        assert bad.status_code == 400 and bad.json()["field"] == "login"
        with b.ws("/ws/online/lobby") as ws:
            assert ws.receive_json()["type"] == "lobby"
        first.portal.call(watch.stop)
    finally:
        redis.cont()
    failed = [ticks for how, ticks in watch.calls() if how == "failed"]
    assert failed and all(ticks >= 1 for ticks in failed), watch.events  # the loop ran while each waited
    assert blocking == []
    assert online.redis_limits.health.failures >= 1
    assert online.accounts.limiter._fails  # the failed login was counted in this process
