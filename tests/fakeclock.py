"""A time source that tests move on by hand (:class:`xiangqi.app.play.clock.TimeSource`): no test waits for
a clock to run out, it advances this one and then asks for the check (a room's
:meth:`~xiangqi.app.play.hub.GameHub.check_clock`, the service's sweep)."""

from __future__ import annotations

from xiangqi.app.play.clock import TimeSource


class ManualTime(TimeSource):
    """Monotonic and wall readings that stand still until :meth:`advance` moves both by the same
    seconds (``wall`` starts at ``wall_at``, a fixed Unix time, so stored times are reproducible)."""

    def __init__(self, start: float = 1000.0, wall_at: float = 1_800_000_000.0) -> None:
        self._mono = start
        self._wall = wall_at

    def monotonic(self) -> float:
        """The monotonic reading (seconds)."""
        return self._mono

    def wall(self) -> float:
        """The wall reading (Unix seconds)."""
        return self._wall

    def advance(self, seconds: float) -> None:
        """Move both readings on by ``seconds`` (>= 0)."""
        assert seconds >= 0, seconds
        self._mono += seconds
        self._wall += seconds
