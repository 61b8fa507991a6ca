"""Foreground first: background engine work gives way while the game's computer or a hint searches.

The game's own engine work (the computer's move, a hint, a draw-offer judgement: everything
:class:`xiangqi.app.opponents.players.EnginePlayer` searches) is *foreground*: a player is waiting for it.
Live analysis and review jobs are *background*: they use engines of their own, and must not slow
the foreground down on a machine with few cores. :class:`ForegroundGate` is the meeting point:

- the foreground wraps each search in ``with gate.foreground(): ...``;
- background work either calls :meth:`ForegroundGate.wait_idle` between its searches (a review job
  does this before each position), or subscribes (:meth:`ForegroundGate.subscribe`) to be told
  when the foreground starts (stop the running search) and when it ends (start it again), which is
  what a live analysis that searches without a limit needs.

One gate per server: ``hub.player.gate`` (the game hub's :class:`EnginePlayer` owns it).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

__all__ = ["ForegroundGate"]

log = logging.getLogger(__name__)


class ForegroundGate:
    """Counts running foreground searches and tells background work when that count leaves or
    reaches zero. Thread-safe; foreground sections may nest or overlap (a count, not a flag)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._listeners: list[Callable[[bool], None]] = []

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Hold the foreground for the block: listeners hear ``True`` when the first section starts
        and ``False`` when the last one ends; :meth:`wait_idle` waits until then."""
        with self._cond:
            self._active += 1
            first = self._active == 1
        if first:
            self._tell(True)
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                last = self._active == 0
                if last:
                    self._cond.notify_all()
            if last:
                self._tell(False)

    @property
    def busy(self) -> bool:
        """True while a foreground search runs."""
        with self._cond:
            return self._active > 0

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no foreground search runs (at most ``timeout`` seconds; None: no limit).
        Returns True when idle, False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._active == 0, timeout)

    def subscribe(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(True)`` when the foreground starts and ``listener(False)`` when it ends
        (from the foreground's thread: keep it short, e.g. stop an engine or set an event). A
        listener's exception is logged and ignored. Returns a function that unsubscribes."""
        with self._cond:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._cond, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def _tell(self, busy: bool) -> None:
        with self._cond:
            listeners = list(self._listeners)
        for fn in listeners:
            try:
                fn(busy)
            except Exception:  # a background listener must never break the game's search
                log.exception("foreground listener failed")
