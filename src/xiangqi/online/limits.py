"""Abuse limits counted in Redis, for several server processes (shared mode).

In one process the limits are counted in memory (:class:`~xiangqi.online.lobby.SlidingWindow` for
seeks and registrations, :class:`~xiangqi.online.accounts.LoginLimiter` for failed logins, the
service's socket counts per address); a client that spreads over N processes would get N times the
limits. With Redis configured they are counted there, one count for all the processes:

- :class:`RedisWindow` — at most ``limit`` events per key in a sliding window of ``window_s``
  seconds: one sorted set per key (member: the event, score: its time in ms), trimmed, counted and
  added to by one Lua script (atomic: of any number of events sent at once from any number of
  processes exactly ``limit`` are let through; Redis's own clock, so the processes' clocks do not
  matter). A refused event is not counted (as in :class:`SlidingWindow`).
- :class:`RedisLoginLimiter` — the failed logins per (name, address) and per address: one sorted
  set per key as above, one script that trims it and answers its count and the age of its newest
  failure (the :class:`~xiangqi.online.accounts.Throttle`'s delay runs from that), adding the
  failure when asked to.
- :class:`RedisSockets` — the open WebSockets per address: one hash per address, a field per
  process holding that process's count; the check sums the fields of the processes still alive
  (the script drops the fields of a process that stopped beating, so a killed process's sockets do
  not count for ever) and sets this process's field, both in one script.

**Off the event loop.** The checks made on the event loop (a seek, a challenge link, a WebSocket
opened or closed) use redis-py's asyncio client (:meth:`RedisWindow.hit_async`,
:meth:`RedisSockets.opened`): the loop serves every other request while Redis answers. The socket
counts go through one writer task per process, one call at a time, each carrying this process's
count at the moment it is sent (not a +1/-1), so a call that failed or was answered late is put
right by the next one. The checks of the plain ``def`` routes (login, registration) run in
FastAPI's worker threads already and use the synchronous client there.

**When Redis is slow or down: fail open, to this process's own count.** A call that fails or takes
longer than :data:`REDIS_TIMEOUT_S` is decided by the in-memory count of this process (the same
limit, counted here only; each process always keeps that count up to date), and for
:data:`RETRY_S` seconds after a failure Redis is not asked at all (:class:`Health`), so an outage
costs each request at most one timeout per :data:`RETRY_S`, not one each. Reason: these are abuse
limits, not the security of an account or the truth of a game; refusing every seek, login and
socket while Redis is away would take the whole server down for the outage of a counter, while
counting per process still bounds a client to K times the limit with K processes (a password
guesser gets its free tries and doubling delays once per process instead of once). When Redis
answers again the socket counts that changed meanwhile are written back (:class:`RedisSockets`);
the windows start from what Redis held (the events of the outage were counted per process only).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from xiangqi.online.accounts import (
    ADDRESS_THROTTLE,
    PAIR_THROTTLE,
    LoginLimiter,
    RateLimited,
    Throttle,
    _pair_key,
)
from xiangqi.online.lobby import LobbyError, SlidingWindow

__all__ = ["Health", "RedisLimits", "RedisWindow", "RedisLoginLimiter", "RedisSockets", "redis_client",
           "PREFIX", "REDIS_TIMEOUT_S", "RETRY_S"]

log = logging.getLogger(__name__)

#: The prefix of every key the limits use.
PREFIX = "xiangqi:limit:"
#: Seconds a call to Redis may take before the in-memory count is used instead (a loopback round
#: trip is well under a millisecond, but the answer is read only when the event loop gets the CPU:
#: 0.25 s timed out in the 1,000-player bench on a machine loaded 12 on 2 cores; only the request
#: that asks waits, never the loop).
REDIS_TIMEOUT_S = 0.5
#: Seconds after a failed call during which Redis is not asked (the in-memory counts decide).
RETRY_S = 5.0
#: Connections the asyncio client keeps at most (a burst of checks waits for one of them).
ASYNC_CONNECTIONS = 16

# KEYS[1] the window's sorted set; ARGV: window ms, limit, a unique member, 1 to add / 0 to only count.
# Returns {count before, ms until the oldest event leaves the window}.
_WINDOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local wait = 0
if n >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  wait = tonumber(oldest[2]) + window - now
elseif ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
end
return {n, wait}
"""

# KEYS[1] a key's failed logins (sorted set, score: time in ms); ARGV: window ms, a unique member, 1 to
# add one failure / 0 to only look. Returns {failures in the window before this one, ms since the
# newest of them (-1: none)}.
_FAILURES = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local since = -1
if n > 0 then
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  since = now - tonumber(newest[2])
end
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], window)
end
return {n, since}
"""

# KEYS[1] the address's hash (field: process id, value: its open sockets); ARGV: this process, its
# count of the address after the change (the socket being opened included), the limit (0: no check),
# then every live process id. Returns the new total, or -1 when an opening is refused (then this
# process's field is left as it was).
_SOCKETS = """
local live = {}
for i = 4, #ARGV do live[ARGV[i]] = true end
local others = 0
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  if h[i] ~= ARGV[1] then
    if live[h[i]] then others = others + tonumber(h[i + 1]) else redis.call('HDEL', KEYS[1], h[i]) end
  end
end
local mine = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
if limit > 0 and others + mine > limit then return -1 end
if mine > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], mine)
  redis.call('EXPIRE', KEYS[1], 86400)
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return others + mine
"""


def redis_client(url: str) -> Any:
    """A synchronous redis-py client on ``url`` (``redis://…`` or ``unix://…``) with short timeouts."""
    import redis

    return redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S)


def _errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.RedisError, OSError, TimeoutError)


class Health:
    """Whether Redis is asked now: after a failed call not for ``retry_s`` seconds (the in-memory
    counts decide meanwhile). Shared by the event loop and the worker threads (a float and a lock)."""

    def __init__(self, retry_s: float = RETRY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.retry_s = retry_s
        self.clock = clock
        self._down_until = 0.0
        self._down = False
        self._lock = threading.Lock()
        #: failed calls so far (tests, logs)
        self.failures = 0

    def up(self) -> bool:
        """True when Redis is to be asked (no failure in the last ``retry_s`` seconds)."""
        return self.clock() >= self._down_until

    def failed(self, exc: BaseException, what: str) -> None:
        """A call failed (``exc``): the in-memory counts decide for ``retry_s`` seconds (logged once an
        outage)."""
        with self._lock:
            self.failures += 1
            self._down_until = self.clock() + self.retry_s
            first, self._down = not self._down, True
        if first:
            log.warning("limits: redis failed (%s: %s) on %s; counting in this process, asking redis "
                        "again in %g s", type(exc).__name__, exc, what, self.retry_s)

    def attempt(self, call: Callable[[], Any], what: str) -> tuple[bool, Any]:
        """``(True, call())`` when Redis is asked now and ``call`` (blocking) succeeds; ``(False,
        None)`` when it is not asked (:meth:`up`) or the call fails (:meth:`failed`, ``what`` names it
        in the log): then the in-memory counts decide."""
        if not self.up():
            return False, None
        try:
            got = call()
        except _errors() as exc:
            self.failed(exc, what)
            return False, None
        self.ok()
        return True, got

    async def attempt_async(self, call: Callable[[], Awaitable[Any]], what: str) -> tuple[bool, Any]:
        """:meth:`attempt` for a call on the event loop (``call()`` returns the awaitable)."""
        if not self.up():
            return False, None
        try:
            got = await call()
        except _errors() as exc:
            self.failed(exc, what)
            return False, None
        self.ok()
        return True, got

    def ok(self) -> None:
        """A call succeeded."""
        if self._down:
            with self._lock:
                was, self._down = self._down, False
            if was:
                log.warning("limits: redis answers again; the limits count over every process")


class RedisLimits:
    """The Redis of the limits of one process: the synchronous client (worker threads), the asyncio
    client (the event loop: made on first use, on the loop that uses it, at most
    :data:`ASYNC_CONNECTIONS` connections) and their :class:`Health`."""

    def __init__(self, url: str, health: Health | None = None) -> None:
        self.url = url
        self.client = redis_client(url)
        self.health = health or Health()
        self._aio: Any = None

    def aio(self) -> Any:
        """The asyncio client (redis.asyncio) of this process's loop."""
        if self._aio is None:
            import redis.asyncio as aioredis

            pool = aioredis.BlockingConnectionPool.from_url(
                self.url, max_connections=ASYNC_CONNECTIONS, timeout=REDIS_TIMEOUT_S,
                socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S)
            self._aio = aioredis.Redis(connection_pool=pool)
        return self._aio

    async def aclose(self) -> None:
        """Close both clients' connections."""
        if self._aio is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._aio.aclose(close_connection_pool=True), 2)
            self._aio = None
        with contextlib.suppress(Exception):
            self.client.close()


class RedisWindow(SlidingWindow):
    """:class:`SlidingWindow` counted in Redis under ``name`` (the same refusal: 429 with
    ``retry_after``): :meth:`hit` for the worker threads, :meth:`hit_async` for the event loop. When
    Redis fails or is slow the in-memory window of the base class decides (module text); it is kept
    up to date with this process's events in any case."""

    def __init__(self, limits: RedisLimits, name: str, limit: int, window_s: float) -> None:
        super().__init__(limit, window_s)
        self.limits = limits
        self.name = name
        self._script = limits.client.register_script(_WINDOW)
        self._ascript: Any = None

    def _args(self, key: str, add: bool) -> tuple[list[str], list[Any]]:
        return ([f"{PREFIX}{self.name}:{key}"],
                [int(self.window_s * 1000), self.limit, secrets.token_hex(8), 1 if add else 0])

    def count(self, key: str, add: bool = True) -> tuple[int, float]:
        """``(events in the window before this one, seconds until the oldest leaves it)``; with
        ``add`` the event is counted when under the limit. Blocking; raises redis-py's errors."""
        keys, args = self._args(key, add)
        n, wait_ms = self._script(keys=keys, args=args)
        return int(n), int(wait_ms) / 1000

    async def count_async(self, key: str, add: bool = True) -> tuple[int, float]:
        """:meth:`count` on the asyncio client; raises redis-py's errors and TimeoutError after
        :data:`REDIS_TIMEOUT_S`."""
        if self._ascript is None:
            self._ascript = self.limits.aio().register_script(_WINDOW)
        keys, args = self._args(key, add)
        async with asyncio.timeout(REDIS_TIMEOUT_S):
            n, wait_ms = await self._ascript(keys=keys, args=args)
        return int(n), int(wait_ms) / 1000

    def _refuse(self, wait: float) -> LobbyError:
        w = max(1, int(wait + 0.999))
        return LobbyError(f"too many requests: at most {self.limit} in {self.window_s:g} s; "
                          f"try again in {w} s", 429, "rate_limited", w)

    def hit(self, key: str) -> None:
        """Count one event for ``key`` over every process (blocking: a worker thread); raises
        :class:`LobbyError` (429) past the limit."""
        asked, got = self.limits.health.attempt(lambda: self.count(key), f"the {self.name} limit")
        if asked:
            return self._counted(key, *got)
        super().hit(key)

    def _counted(self, key: str, n: int, wait: float) -> None:
        """Redis answered: ``n`` events of ``key`` in the window before this one, the next free
        in ``wait`` s; raises :class:`LobbyError` (429) past the limit, else notes the event here."""
        if n >= self.limit:
            raise self._refuse(wait)
        self.note(key)

    async def hit_async(self, key: str) -> None:
        """:meth:`hit` on the event loop: the loop serves everything else while Redis answers."""
        asked, got = await self.limits.health.attempt_async(lambda: self.count_async(key),
                                                            f"the {self.name} limit")
        if asked:
            return self._counted(key, *got)
        super().hit(key)


class RedisLoginLimiter(LoginLimiter):
    """:class:`~xiangqi.online.accounts.LoginLimiter` counted in Redis: the failures of each
    (name, address) and of each address over every process, the same :class:`Throttle` deciding
    from the count and the age of the newest failure (Redis's clock). When Redis fails or is slow
    the in-memory count of this process decides (module text); it is kept up to date in any case.
    Its calls block: the login runs in a worker thread (a plain ``def`` route)."""

    def __init__(self, limits: RedisLimits, pair: Throttle = PAIR_THROTTLE,
                 address: Throttle = ADDRESS_THROTTLE) -> None:
        super().__init__(pair, address)
        self.limits = limits
        self._script = limits.client.register_script(_FAILURES)

    def _count(self, key: str, throttle: Throttle, add: bool) -> tuple[int, float]:
        """``(failures of key in its window, seconds since the newest)`` (add one when ``add``)."""
        args = [int(throttle.window_s * 1000), secrets.token_hex(8), 1 if add else 0]
        n, since_ms = self._script(keys=[f"{PREFIX}login:{key}"], args=args)
        return int(n), (float("inf") if int(since_ms) < 0 else int(since_ms) / 1000)

    def check(self, username: str, address: str | None = None) -> None:
        """Raise :class:`RateLimited` while the name from ``address``, or the address, is slowed down."""
        def wait() -> float:
            return max(t.wait(*self._count(k, t, False)) for k, t in self._keys(username, address))

        asked, w = self.limits.health.attempt(wait, "the login limit")
        if not asked:
            super().check(username, address)
        elif w > 0:
            raise RateLimited(max(1, int(w + 0.999)))

    def failed(self, username: str, address: str | None = None) -> None:
        """Count one failed login for the (name, address) and for the address."""
        super().failed(username, address)  # (the fallback's count, should Redis fail later)
        keys = self._keys(username, address)
        self.limits.health.attempt(lambda: [self._count(k, t, True) for k, t in keys], "the login limit")

    def succeeded(self, username: str, address: str | None = None) -> None:
        """A successful login clears the failures of the name from this address (not the address's)."""
        super().succeeded(username, address)
        self.limits.health.attempt(
            lambda: self.limits.client.delete(f"{PREFIX}login:{_pair_key(username, address)}"),
            "the login limit")


class RedisSockets:
    """The open WebSockets per address over every live process, on the event loop. ``proc``: this
    process's id; ``live()``: the ids of the processes alive now (this one included).

    :meth:`opened` (awaited before a socket is accepted) and :meth:`closed` (never waits) go
    through one writer task, one Redis call at a time in the order they were made, each carrying
    this process's count of the address then (:attr:`local`, the sockets it accepted): a call lost
    to a failure or answered late is put right by the next one of that address, and the addresses
    whose count changed while Redis was not asked are written back when it answers again (tried
    every :data:`RETRY_S` seconds). When Redis fails or is slow this process's own count decides."""

    def __init__(self, limits: RedisLimits, proc: str, live: Callable[[], list[str]]) -> None:
        self.limits = limits
        self.proc = proc
        self.live = live
        #: this process's open (accepted) sockets per address
        self.local: dict[str, int] = {}
        self._dirty: set[str] = set()  # addresses whose field in Redis may differ from ``local``
        self._queue: asyncio.Queue[tuple[str, str, int, asyncio.Future[bool] | None]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._script: Any = None

    def _start(self) -> asyncio.Queue[tuple[str, str, int, asyncio.Future[bool] | None]]:
        if self._queue is None or self._task is None or self._task.done():
            self._queue = asyncio.Queue()
            self._task = asyncio.get_running_loop().create_task(self._writer())
        return self._queue

    def _open_here(self, address: str, limit: int) -> bool:
        n = self.local.get(address, 0)
        if limit > 0 and n >= limit:
            return False
        self.local[address] = n + 1
        self._dirty.add(address)
        return True

    async def opened(self, address: str, limit: int) -> bool:
        """Count a socket of ``address`` being opened: True when it may open (counted), False when it
        would pass ``limit`` (0: no limit) over every process (nothing counted)."""
        if not self.limits.health.up():
            ok = self._open_here(address, limit)
            self._start().put_nowait(("sync", address, 0, None))  # (the writer writes it back later)
            return ok
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._start().put_nowait(("open", address, limit, fut))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:  # the handshake was given up: a socket counted is closed again
            fut.add_done_callback(lambda f: None if f.cancelled() or not f.result() else self.closed(address))
            raise

    def closed(self, address: str) -> None:
        """A socket of ``address`` that :meth:`opened` counted has closed (never waits)."""
        n = self.local.get(address, 0) - 1
        if n <= 0:
            self.local.pop(address, None)
        else:
            self.local[address] = n
        self._dirty.add(address)
        self._start().put_nowait(("sync", address, 0, None))

    async def _send(self, address: str, extra: int, limit: int) -> int | None:
        """One call: this process's count of ``address`` (plus ``extra``) set in Redis, checked
        against ``limit``; the script's answer, or None when Redis failed (marked for later)."""
        try:
            if self._script is None:
                self._script = self.limits.aio().register_script(_SOCKETS)
            async with asyncio.timeout(REDIS_TIMEOUT_S):
                got = await self._script(keys=[f"{PREFIX}sockets:{address}"],
                                         args=[self.proc, self.local.get(address, 0) + extra, limit,
                                               *self.live()])
        except _errors() as exc:
            self.limits.health.failed(exc, "the sockets limit")
            self._dirty.add(address)
            return None
        self.limits.health.ok()
        if got >= 0:
            self._dirty.discard(address)
        return int(got)

    async def _writer(self) -> None:
        assert self._queue is not None
        queue = self._queue
        while True:
            try:
                if self._dirty and self.limits.health.up():  # Redis is back: write the changed counts
                    for address in list(self._dirty):
                        if await self._send(address, 0, 0) is None:
                            break
                try:
                    async with asyncio.timeout(RETRY_S if self._dirty else None):
                        kind, address, limit, fut = await queue.get()
                except TimeoutError:
                    continue
                if kind == "sync":
                    if self.limits.health.up() and address in self._dirty:
                        await self._send(address, 0, 0)
                    continue
                assert fut is not None
                try:
                    ok = await self._open(address, limit)
                except Exception:  # a bug, not Redis: this process's count decides, the opening goes on
                    log.exception("limits: counting a socket of %s failed", address)
                    ok = self._open_here(address, limit)
                if not fut.done():
                    fut.set_result(ok)
                elif ok:
                    self.closed(address)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("limits: the sockets' writer failed; going on")

    async def _open(self, address: str, limit: int) -> bool:
        if not self.limits.health.up():
            return self._open_here(address, limit)
        got = await self._send(address, 1, limit)
        if got is None:
            return self._open_here(address, limit)
        if got < 0:
            return False
        self.local[address] = self.local.get(address, 0) + 1
        return True

    async def aclose(self) -> None:
        """Stop the writer task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
