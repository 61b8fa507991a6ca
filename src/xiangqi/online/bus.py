"""The event bus: publish/subscribe of game events, the lobby and presence between server parts.

Channels (strings): ``game:<id>`` (every state of one game and its events, as sent to its sockets),
``lobby`` (the lobby changed), ``user:<identity id>`` (a message for one player's sockets, e.g.
``game_start``); in shared mode also ``sync:<id>`` (a game's changes between processes), ``lobby:sync``
and ``procs`` (heartbeats; :mod:`xiangqi.online.rooms`). Messages are JSON-ready dicts.

:class:`EventBus` is the interface; :class:`LocalBus` is the embedded implementation (one
process: a subscriber's callback is called synchronously, in publish order, on the event loop). A
scaled-out server replaces it with a Redis pub/sub implementation of the same three methods
(``publish`` does ``PUBLISH channel json``; one reader task per process ``SUBSCRIBE``s the channels
that have local subscribers and calls their callbacks): the callers do not change. Callbacks must
not block (they queue the message for a socket, :class:`xiangqi.web.clients.Client`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["EventBus", "LocalBus", "RedisBus", "Subscription", "Outage", "shown_url"]

log = logging.getLogger(__name__)

Callback = Callable[[dict[str, Any]], None]


class Subscription:
    """A subscriber's handle: :meth:`close` ends it (idempotent)."""

    def __init__(self, bus: EventBus, channel: str, callback: Callback) -> None:
        self.bus = bus
        self.channel = channel
        self.callback = callback
        self.closed = False

    def close(self) -> None:
        """Stop receiving messages."""
        if not self.closed:
            self.closed = True
            self.bus._unsubscribe(self)


class EventBus:
    """Publish/subscribe by channel name (see the module text). The base keeps this process's
    subscriptions and delivers to them; an implementation says how a message travels
    (:meth:`publish`) and hears when a channel gets its first or loses its last local subscriber."""

    def __init__(self) -> None:
        self._subs: dict[str, list[Subscription]] = {}

    def publish(self, channel: str, message: dict[str, Any]) -> None:
        """Send ``message`` to every subscriber of ``channel`` (never waits)."""
        raise NotImplementedError

    def subscribe(self, channel: str, callback: Callback) -> Subscription:
        """Call ``callback(message)`` for every message published on ``channel`` from now on."""
        sub = Subscription(self, channel, callback)
        first = channel not in self._subs
        self._subs.setdefault(channel, []).append(sub)
        if first:
            self._channel_opened(channel)
        return sub

    def subscribers(self, channel: str) -> int:
        """How many subscriptions this process holds on ``channel``."""
        return len(self._subs.get(channel, ()))

    def _unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.channel)
        if subs and sub in subs:
            subs.remove(sub)
            if not subs:
                del self._subs[sub.channel]
                self._channel_closed(sub.channel)

    def _channel_opened(self, channel: str) -> None:
        """The first local subscriber of ``channel`` came (nothing to do in one process)."""

    def _channel_closed(self, channel: str) -> None:
        """The last local subscriber of ``channel`` left."""

    def _deliver(self, channel: str, message: dict[str, Any]) -> None:
        """Call the local subscribers of ``channel`` in subscription order; one that raises is
        logged and the others still get the message."""
        for sub in list(self._subs.get(channel, ())):
            if sub.closed:
                continue
            try:
                sub.callback(message)
            except Exception:
                log.exception("a subscriber of %s failed", channel)


class LocalBus(EventBus):
    """The in-process bus: callbacks are called at once, in subscription order; a callback that raises
    is logged and the others still get the message."""

    def publish(self, channel: str, message: dict[str, Any]) -> None:
        self._deliver(channel, message)


#: Seconds the bus's reader waits after a failed read before it reads again.
READ_RETRY_S = 0.5


def shown_url(url: str) -> str:
    """``url`` (a Redis URL) as the logs name it: scheme, host, port and path (``redis://host:6379/0``,
    ``unix:///run/redis.sock``), without a user name or password."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "redis (an unreadable URL)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}"


class Outage:
    """The log of one connection's outages: :meth:`failed` writes one warning when the first call
    fails (what failed, on which Redis, why, and that it is retried) and each failure's traceback
    at debug level only; :meth:`ok` writes one line when a call succeeds again (how long it was
    down, how many calls failed). Between the two nothing more is logged, however often the calls
    are retried. ``where``: the Redis as :func:`shown_url` names it; ``clock``: seconds."""

    def __init__(self, where: str, retry: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        self.retry = retry
        self.clock = clock
        self.down = False
        self.since = 0.0
        #: failed calls in the current (or last) outage
        self.failures = 0

    def failed(self, exc: BaseException, what: str) -> None:
        """A call (``what``: ``reading``, ``pub game:x`` …) failed with ``exc``."""
        if not self.down:
            self.down, self.since, self.failures = True, self.clock(), 0
            log.warning("redis bus: %s failed on %s (%s: %s); %s", what, self.where, type(exc).__name__,
                        exc, self.retry)
        self.failures += 1
        log.debug("redis bus: %s failed on %s (failure %d of this outage)", what, self.where, self.failures,
                  exc_info=exc)

    def ok(self) -> None:
        """A call succeeded: the end of an outage is logged once."""
        if self.down:
            self.down = False
            log.warning("redis bus: %s answers again after %.1f s (%d failed calls meanwhile)", self.where,
                        self.clock() - self.since, self.failures)


class RedisBus(EventBus):
    """The bus over Redis pub/sub (redis-py's asyncio client), for several server processes.

    ``publish`` queues ``PUBLISH channel <json>`` for one writer task (so messages leave in publish
    order and the event loop never waits for the network; the publishes queued while one was sent
    go out in one pipeline, one round trip); the first local subscriber of a channel
    queues ``SUBSCRIBE`` on the same writer, which waits for Redis to confirm it before it sends
    anything queued after it — so a socket that subscribes and then asks for a broadcast gets that
    broadcast. One reader task receives the messages of every channel this process subscribed to and
    calls the local callbacks, in order. A process's own messages come back through Redis like
    everyone else's (each callback sees each message once).

    Create it with :meth:`start` on the server's loop; :meth:`close` ends the tasks and connections.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        super().__init__()
        self._queue: Any = None
        self._tasks: list[Any] = []
        self._confirmed: dict[str, Any] = {}
        self._redis: Any = None
        self._pubsub: Any = None
        #: one warning an outage, one when it is over (the tracebacks at debug level)
        self.outage = Outage(shown_url(url), f"retrying (reads every {READ_RETRY_S:g} s; what is published "
                                             "meanwhile is lost)")

    async def start(self) -> None:
        """Connect and start the writer and reader tasks (raises redis-py's errors when unreachable)."""
        import asyncio

        import redis.asyncio as aioredis

        self._redis = aioredis.from_url(self.url)
        await self._redis.ping()
        self._pubsub = self._redis.pubsub()
        self._queue = asyncio.Queue()
        await self._subscribe_now("xiangqi:bus")  # the reader needs one subscription to listen on
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._writer()), loop.create_task(self._reader())]

    async def close(self) -> None:
        """Stop the tasks and close the connections."""
        import asyncio
        import contextlib

        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(BaseException):
                await t
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._pubsub.aclose(), 2)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._redis.aclose(), 2)

    def publish(self, channel: str, message: dict[str, Any]) -> None:
        import json

        self._queue.put_nowait(("pub", channel, json.dumps(message, ensure_ascii=False)))

    def _channel_opened(self, channel: str) -> None:
        self._queue.put_nowait(("sub", channel, None))

    def _channel_closed(self, channel: str) -> None:
        self._queue.put_nowait(("unsub", channel, None))

    async def _subscribe_now(self, channel: str) -> None:
        import asyncio

        done = self._confirmed.setdefault(channel, asyncio.Event())
        await self._pubsub.subscribe(channel)
        if not self._tasks:  # before the reader runs: read the confirmation here
            while not done.is_set():
                msg = await self._pubsub.get_message(timeout=1.0)
                if msg and msg["type"] == "subscribe":
                    self._confirmed.pop(msg["channel"].decode(), done).set()
            return
        try:
            await asyncio.wait_for(done.wait(), 5.0)
        except TimeoutError:
            log.error("redis did not confirm the subscription to %s", channel)

    async def _writer(self) -> None:
        queue = self._queue
        while True:
            op, channel, data = await queue.get()
            try:
                if op == "pub" and queue.empty():
                    await self._redis.publish(channel, data)
                elif op == "pub":  # the publishes queued meanwhile go out together, in order
                    pipe = self._redis.pipeline(transaction=False)
                    pipe.publish(channel, data)
                    while not queue.empty() and queue._queue[0][0] == "pub":  # type: ignore[attr-defined]
                        _op, ch, d = queue.get_nowait()
                        pipe.publish(ch, d)
                    await pipe.execute()
                elif op == "sub":
                    if channel in self._subs:
                        await self._subscribe_now(channel)
                elif channel not in self._subs:
                    await self._pubsub.unsubscribe(channel)
            except Exception as exc:
                self.outage.failed(exc, f"{op} {channel}")
            else:
                self.outage.ok()

    async def _reader(self) -> None:
        import asyncio
        import json

        while True:
            try:  # (no timeout: waits for the next message; close() cancels the task)
                msg = await self._pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.outage.failed(exc, "reading")
                await asyncio.sleep(READ_RETRY_S)
                continue
            self.outage.ok()
            if msg is None:
                continue
            channel = msg["channel"].decode() if isinstance(msg["channel"], bytes) else msg["channel"]
            if msg["type"] == "subscribe":
                ev = self._confirmed.pop(channel, None)
                if ev is not None:
                    ev.set()
                continue
            if msg["type"] != "message":
                continue
            try:
                data = json.loads(msg["data"])
            except ValueError:
                log.error("redis bus: a message on %s is not JSON", channel)
                continue
            self._deliver(channel, data)
