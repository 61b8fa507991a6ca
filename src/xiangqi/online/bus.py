"""The event bus: publish/subscribe of game events, the lobby and presence between server parts.

Channels (strings): ``game:<id>`` (every state of one game and its events, as sent to its sockets),
``lobby`` (the lobby changed), ``user:<identity id>`` (a message for one player's sockets, e.g.
``game_start``). Messages are JSON-ready dicts.

:class:`EventBus` is the interface; :class:`LocalBus` is the embedded implementation (one
process: a subscriber's callback is called synchronously, in publish order, on the event loop). A
scaled-out server replaces it with a Redis pub/sub implementation of the same three methods
(``publish`` does ``PUBLISH channel json``; one reader task per process ``SUBSCRIBE``s the channels
that have local subscribers and calls their callbacks): the callers do not change. Callbacks must
not block (they queue the message for a socket, :class:`xiangqi.web.clients.Client`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["EventBus", "LocalBus", "Subscription"]

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
    """Publish/subscribe by channel name (see the module text)."""

    def publish(self, channel: str, message: dict[str, Any]) -> None:
        """Send ``message`` to every subscriber of ``channel`` (never waits)."""
        raise NotImplementedError

    def subscribe(self, channel: str, callback: Callback) -> Subscription:
        """Call ``callback(message)`` for every message published on ``channel`` from now on."""
        raise NotImplementedError

    def subscribers(self, channel: str) -> int:
        """How many subscriptions this process holds on ``channel``."""
        raise NotImplementedError

    def _unsubscribe(self, sub: Subscription) -> None:
        raise NotImplementedError


class LocalBus(EventBus):
    """The in-process bus: callbacks are called at once, in subscription order; a callback that raises
    is logged and the others still get the message."""

    def __init__(self) -> None:
        self._subs: dict[str, list[Subscription]] = {}

    def publish(self, channel: str, message: dict[str, Any]) -> None:
        for sub in list(self._subs.get(channel, ())):
            if sub.closed:
                continue
            try:
                sub.callback(message)
            except Exception:
                log.exception("a subscriber of %s failed", channel)

    def subscribe(self, channel: str, callback: Callback) -> Subscription:
        sub = Subscription(self, channel, callback)
        self._subs.setdefault(channel, []).append(sub)
        return sub

    def subscribers(self, channel: str) -> int:
        return len(self._subs.get(channel, ()))

    def _unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.channel)
        if subs and sub in subs:
            subs.remove(sub)
            if not subs:
                del self._subs[sub.channel]
