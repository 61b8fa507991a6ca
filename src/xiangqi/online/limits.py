"""Abuse limits counted in Redis, for several server processes (shared mode).

In one process the limits are counted in memory (:class:`~xiangqi.online.lobby.SlidingWindow` for
seeks and registrations, :class:`~xiangqi.online.accounts.LoginLimiter` for failed logins, the
service's socket counts per address); a client that spreads over N processes would get N times the
limits. With Redis configured they are counted there, one count for all the processes:

- :class:`RedisWindow` — at most ``limit`` events per key in a sliding window of ``window_s``
  seconds: one sorted set per key (member: the event, score: its time in ms), trimmed, counted and
  added to by one Lua script (atomic; Redis's own clock, so the processes' clocks do not matter).
  A refused event is not counted (as in :class:`SlidingWindow`).
- :class:`RedisLoginLimiter` — the failed logins per name and per address (the same windows).
- :class:`RedisSockets` — the open WebSockets per address: one hash per address, a field per
  process; the count is the sum over the processes still alive (the script drops the fields of a
  process that stopped beating, so a killed process's sockets do not count for ever).

Redis calls are synchronous (redis-py, a short socket timeout): one round trip on loopback, well
under a millisecond. When Redis does not answer, the check falls back to this process's in-memory
count (logged): a Redis outage loosens the limits to per process, it never refuses everyone.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Any

from xiangqi.online.accounts import FAILURE_WINDOW_S, MAX_FAILURES, LoginLimiter, RateLimited, _fold
from xiangqi.online.lobby import LobbyError, SlidingWindow

__all__ = ["RedisWindow", "RedisLoginLimiter", "RedisSockets", "redis_client", "PREFIX"]

log = logging.getLogger(__name__)

#: The prefix of every key the limits use.
PREFIX = "xiangqi:limit:"
#: Seconds a call to Redis may take before the in-memory count is used instead.
REDIS_TIMEOUT_S = 0.5

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

# KEYS[1] the address's hash (field: process id, value: its open sockets); ARGV: this process, the
# change (+1 / -1), the limit (0: none), then every live process id. Returns the new total, or -1 when
# an opening is refused.
_SOCKETS = """
local live = {}
for i = 4, #ARGV do live[ARGV[i]] = true end
local total = 0
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  if live[h[i]] then total = total + tonumber(h[i + 1]) else redis.call('HDEL', KEYS[1], h[i]) end
end
local d = tonumber(ARGV[2])
if d > 0 and tonumber(ARGV[3]) > 0 and total >= tonumber(ARGV[3]) then return -1 end
local mine = redis.call('HINCRBY', KEYS[1], ARGV[1], d)
if mine <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('EXPIRE', KEYS[1], 86400)
return total + d
"""


def redis_client(url: str) -> Any:
    """A synchronous redis-py client on ``url`` (``redis://…`` or ``unix://…``) with short timeouts."""
    import redis

    return redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S)


def _errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.RedisError, OSError)


class RedisWindow(SlidingWindow):
    """:class:`SlidingWindow` counted in Redis under ``name`` (the same ``hit`` and refusal: 429
    with ``retry_after``); the in-memory window of the base class when Redis fails."""

    def __init__(self, client: Any, name: str, limit: int, window_s: float) -> None:
        super().__init__(limit, window_s)
        self.client = client
        self.name = name
        self._script = client.register_script(_WINDOW)

    def count(self, key: str, add: bool = True) -> tuple[int, float]:
        """``(events in the window before this one, seconds until the oldest leaves it)``; with
        ``add`` the event is counted when under the limit. Raises redis-py's errors."""
        n, wait_ms = self._script(keys=[f"{PREFIX}{self.name}:{key}"],
                                  args=[int(self.window_s * 1000), self.limit, secrets.token_hex(8),
                                        1 if add else 0])
        return int(n), int(wait_ms) / 1000

    def hit(self, key: str) -> None:
        """Count one event for ``key`` over every process; raises :class:`LobbyError` (429) past the
        limit."""
        try:
            n, wait = self.count(key)
        except _errors() as exc:
            log.warning("limits: redis failed (%s); counting %s in this process", exc, self.name)
            super().hit(key)
            return
        if n >= self.limit:
            w = max(1, int(wait + 0.999))
            raise LobbyError(f"too many requests: at most {self.limit} in {self.window_s:g} s; "
                             f"try again in {w} s", 429, "rate_limited", w)


class RedisLoginLimiter(LoginLimiter):
    """:class:`LoginLimiter` counted in Redis (failures per name and per address, every process)."""

    def __init__(self, client: Any, max_failures: int = MAX_FAILURES,
                 window_s: float = FAILURE_WINDOW_S) -> None:
        super().__init__(max_failures, window_s)
        self.client = client
        self.window = RedisWindow(client, "login", max_failures, window_s)

    def check(self, username: str, address: str | None = None) -> None:
        """Raise :class:`RateLimited` when the name or the address has used up its failures."""
        wait = 0.0
        try:
            for k in self._keys(username, address):
                n, w = self.window.count(k, add=False)
                if n >= self.max_failures:
                    wait = max(wait, w, 0.001)
        except _errors() as exc:
            log.warning("limits: redis failed (%s); counting logins in this process", exc)
            super().check(username, address)
            return
        if wait > 0:
            raise RateLimited(max(1, int(wait + 0.999)))

    def failed(self, username: str, address: str | None = None) -> None:
        """Count one failed login for the name and the address."""
        super().failed(username, address)  # (the fallback's count, should Redis fail later)
        try:
            for k in self._keys(username, address):
                self.window.count(k)
        except _errors() as exc:
            log.warning("limits: redis failed (%s); a failed login counted in this process only", exc)

    def succeeded(self, username: str) -> None:
        """A successful login clears the name's failures (not the address's)."""
        super().succeeded(username)
        try:
            self.client.delete(f"{PREFIX}login:u:{_fold(username)[:100]}")
        except _errors() as exc:
            log.warning("limits: redis failed (%s)", exc)


class RedisSockets:
    """The open WebSockets per address over every live process. ``proc``: this process's id;
    ``live()``: the ids of the processes alive now (this one included)."""

    def __init__(self, client: Any, proc: str, live: Callable[[], list[str]]) -> None:
        self.client = client
        self.proc = proc
        self.live = live
        self._script = client.register_script(_SOCKETS)

    def change(self, address: str, delta: int, limit: int) -> int:
        """Add ``delta`` (+1 opened, -1 closed) to this process's count of ``address``; returns the
        new total, or -1 when an opening would pass ``limit`` (then nothing is counted). Raises
        redis-py's errors."""
        return int(self._script(keys=[f"{PREFIX}sockets:{address}"],
                                args=[self.proc, delta, limit, *self.live()]))
