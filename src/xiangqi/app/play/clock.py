"""Game clocks: none, per move (步时), game time with increment (局时 + 加时), byo-yomi (读秒).

Times are kept in milliseconds; ``now`` arguments are seconds from
:func:`time.monotonic` (injectable for tests). The clock of the side to move
runs from the moment its turn began; :meth:`GameClock.switch` charges the
elapsed time when a move is made. Only the server's clock counts: the page
shows a countdown from the last state it received.

- ``per_move`` (步时): each move within ``per_move_s`` seconds.
- ``fischer`` (局时 + 加时): ``base_s`` for the game, plus ``increment_s`` after each move.
- ``byoyomi`` (读秒): ``base_s`` of main time, then ``periods`` periods of
  ``byoyomi_s`` seconds; a move inside a period keeps it, an overrun period is
  used up, and the flag falls when none is left.

First moves (online games): a clock made with ``free_first_moves=True`` does not run for a side
until that side has made its first move, as on lichess: Red's clock starts after Red's first move
(it runs for Black from then), Black's after Black's. Until then the side's time is not charged,
no flag can fall and its increment is not added; :attr:`GameClock.free` holds the sides still
waiting for their first move. A clock made with ``first_move_s`` also gives the side whose first
move is still to come that many seconds for it, counted from when its turn began (the game's start
for Red, Red's first move for Black, as lichess counts them): past them that side is flagged
(:meth:`GameClock.flagged`), and the online room aborts the game (no result, no rating change;
:data:`xiangqi.online.rooms.FIRST_MOVE_S`). Without it a game whose first moves never come is
aborted only by the players or when one of them starts another game.

Time source: a clock reads the time through its :class:`TimeSource` (``source``; default
:data:`REAL_TIME`, the machine's clocks); the online service gives every clock of its games its own
one (:attr:`xiangqi.online.rooms.OnlineConfig.time_source`), so that tests advance time by hand
(``tests/fakeclock.py``) instead of waiting for it.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

from xiangqi.core.board import BLACK, RED, Color
from xiangqi.core.errors import XiangqiError

KINDS = ("none", "per_move", "fischer", "byoyomi")


class TimeSource:
    """Where game clocks and the online rooms read the time: :meth:`monotonic` (seconds of a clock that
    never goes back: deadlines, grace periods) and :meth:`wall` (Unix seconds: the times stored for
    another process to read, e.g. a clock record's ``saved_at``). This class reads the machine's
    clocks (:func:`time.monotonic`, :func:`time.time`); a test passes a subclass that it advances by
    hand (``tests/fakeclock.py``: both readings move together)."""

    def monotonic(self) -> float:
        """Seconds of :func:`time.monotonic`."""
        return time.monotonic()

    def wall(self) -> float:
        """Unix seconds (:func:`time.time`)."""
        return time.time()


#: The machine's clocks: the default time source of every :class:`GameClock`.
REAL_TIME = TimeSource()


class ClockError(XiangqiError):
    """A time control with bad values (names the field)."""


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """A time control; seconds for every duration. ``kind`` is one of :data:`KINDS`.

    Raises :class:`ClockError` for an unknown kind or a value out of range
    (durations 1 s – 10 h, increment 0 – 10 min, 1–10 periods).
    """

    kind: str = "none"
    base_s: float = 0.0
    increment_s: float = 0.0
    per_move_s: float = 0.0
    byoyomi_s: float = 0.0
    periods: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ClockError(f"time control kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        need = {"per_move": ("per_move_s",), "fischer": ("base_s",), "byoyomi": ("byoyomi_s",)}
        for name in need.get(self.kind, ()):
            v = getattr(self, name)
            if not 1 <= v <= 36000:
                raise ClockError(f"{name} must be 1-36000 seconds for a {self.kind} clock, got {v}")
        if not 0 <= self.base_s <= 36000:
            raise ClockError(f"base_s must be 0-36000 seconds, got {self.base_s}")
        if not 0 <= self.increment_s <= 600:
            raise ClockError(f"increment_s must be 0-600 seconds, got {self.increment_s}")
        if not 1 <= self.periods <= 10:
            raise ClockError(f"periods must be 1-10, got {self.periods}")

    @property
    def enabled(self) -> bool:
        """False for ``none``."""
        return self.kind != "none"

    def describe_zh(self) -> str:
        """Short Chinese description, e.g. ``局时10分 加时5秒``."""
        def mmss(s: float) -> str:
            s = int(s)
            return f"{s // 60}分" + (f"{s % 60}秒" if s % 60 else "") if s >= 60 else f"{s}秒"

        if self.kind == "per_move":
            return f"步时{mmss(self.per_move_s)}"
        if self.kind == "fischer":
            return f"局时{mmss(self.base_s)}" + (f" 加时{mmss(self.increment_s)}" if self.increment_s else "")
        if self.kind == "byoyomi":
            return f"局时{mmss(self.base_s)} 读秒{mmss(self.byoyomi_s)}" + (
                f"×{self.periods}" if self.periods > 1 else "")
        return "不限时"


@functools.lru_cache(maxsize=256)
def _control_fields(control: TimeControl) -> tuple[tuple[str, Any], ...]:
    return tuple(dataclasses.asdict(control).items())


def _control_record(control: TimeControl) -> dict[str, Any]:
    """``dataclasses.asdict(control)`` (a new dict; read once per control: a clock's record is
    made on every move of a game, DESIGN.md "Load")."""
    return dict(_control_fields(control))


class GameClock:
    """Both players' clocks under one :class:`TimeControl`. ``free_first_moves``, ``first_move_s``
    (seconds, None: no limit; only with ``free_first_moves``): module text, "First moves";
    ``source``: where the time is read when no ``now`` is given (:class:`TimeSource`)."""

    def __init__(self, control: TimeControl, *, free_first_moves: bool = False,
                 first_move_s: float | None = None, source: TimeSource = REAL_TIME) -> None:
        self.control = control
        self.source = source
        self.main_ms = {RED: int(control.base_s * 1000), BLACK: int(control.base_s * 1000)}
        self.periods_left = {RED: control.periods, BLACK: control.periods}
        self.running: Color | None = None
        self.started = 0.0
        #: the sides whose first move is still to come and whose time is not counted yet (module doc)
        self.free: set[Color] = {RED, BLACK} if free_first_moves and control.enabled else set()
        #: seconds a side in :attr:`free` has for its first move (None: no limit)
        self.first_move_s = first_move_s if self.free else None

    def now(self) -> float:
        """The time source's monotonic seconds (what ``now`` arguments default to)."""
        return self.source.monotonic()

    def _now(self, now: float | None) -> float:
        return self.source.monotonic() if now is None else now

    def start(self, color: Color, now: float | None = None) -> None:
        """Start ``color``'s clock (its turn begins)."""
        if not self.control.enabled:
            return
        self.running = color
        self.started = self._now(now)

    def stop(self, now: float | None = None) -> None:
        """Stop the clock (game over), charging the running side's time so far."""
        if self.running is not None:
            self._charge(self.running, self._now(now) - self.started)
        self.running = None

    def _charge(self, color: Color, elapsed_s: float) -> None:
        if color in self.free:  # its first move: not timed
            return
        c = self.control
        ms = max(0, round(elapsed_s * 1000))
        if c.kind == "fischer":
            self.main_ms[color] = max(0, self.main_ms[color] - ms)
        elif c.kind == "byoyomi":
            main = self.main_ms[color]
            if ms <= main:
                self.main_ms[color] = main - ms
            else:
                over = ms - main
                self.main_ms[color] = 0
                used = over // int(c.byoyomi_s * 1000)
                self.periods_left[color] = max(0, self.periods_left[color] - int(used))

    def switch(self, now: float | None = None) -> None:
        """The running side has moved: charge its time, add the increment, start the other side."""
        if self.running is None:
            return
        now = self._now(now)
        mover = self.running
        if mover in self.free:
            self.free.discard(mover)  # its first move is made: its clock counts from its next turn
        else:
            self._charge(mover, now - self.started)
            if self.control.kind == "fischer":
                self.main_ms[mover] += int(self.control.increment_s * 1000)
        self.running = not mover
        self.started = now

    def left_ms(self, color: Color, now: float | None = None) -> int:
        """Milliseconds ``color`` has before its flag falls (the current byo-yomi period counts
        as the time left once main time is gone; per-move: what is left of this move)."""
        c = self.control
        if not c.enabled:
            return 0
        counting = self.running == color and color not in self.free
        elapsed = max(0, round((self._now(now) - self.started) * 1000)) if counting else 0
        if c.kind == "per_move":
            return max(0, int(c.per_move_s * 1000) - elapsed)
        if c.kind == "fischer":
            return max(0, self.main_ms[color] - elapsed)
        period = int(c.byoyomi_s * 1000)
        main = self.main_ms[color]
        if elapsed <= main:
            return main - elapsed if main - elapsed > 0 else period
        over = elapsed - main
        used, into = divmod(over, period)
        if used >= self.periods_left[color]:
            return 0
        return period - into

    def deadline(self, now: float | None = None) -> float | None:
        """Monotonic time at which the running side's flag falls, or None when no clock runs (a side
        before its first move: when its :attr:`first_move_s` run out, None without that limit)."""
        c = self.control
        if self.running is None or not c.enabled:
            return None
        if self.running in self.free:
            return None if self.first_move_s is None else self.started + self.first_move_s
        color = self.running
        if c.kind == "per_move":
            return self.started + c.per_move_s
        if c.kind == "fischer":
            return self.started + self.main_ms[color] / 1000
        return self.started + self.main_ms[color] / 1000 + self.periods_left[color] * c.byoyomi_s

    def first_move_left_ms(self, now: float | None = None) -> int | None:
        """Milliseconds the side to move has left for its first move (its :attr:`first_move_s`
        counted from when its turn began, 0 once they are used up), or None: no clock runs, that side
        has made its first move, or there is no first-move limit (module text, "First moves")."""
        if self.running is None or self.running not in self.free or self.first_move_s is None:
            return None
        left = self.started + self.first_move_s - self._now(now)
        return max(0, round(left * 1000))

    def flagged(self, now: float | None = None) -> Color | None:
        """The side whose time has run out, or None."""
        d = self.deadline()
        if d is not None and self._now(now) >= d:
            return self.running
        return None

    def think_budget_s(self, color: Color, now: float | None = None) -> float | None:
        """Seconds the engine may spend on this move (None: no clock). A fraction of what is left,
        so that a game of about 60 more moves fits (the usual 1/30 of main time plus most of the
        increment or byo-yomi period)."""
        c = self.control
        if not c.enabled:
            return None
        left = self.left_ms(color, now) / 1000
        if c.kind == "per_move":
            return max(0.05, min(left * 0.5, left - 1.0))
        if c.kind == "fischer":
            return max(0.05, min(left / 30 + c.increment_s * 0.8, left * 0.5))
        main = self.main_ms[color] / 1000
        if main > 0:
            return max(0.05, main / 30 + c.byoyomi_s * 0.5)
        return max(0.05, min(c.byoyomi_s * 0.5, c.byoyomi_s - 1.0))

    def view(self, now: float | None = None) -> dict[str, Any]:
        """JSON-ready: ``{kind, describe_zh, running, red_ms, black_ms, red_periods, black_periods,
        red_byoyomi, black_byoyomi, byoyomi_ms}`` (``*_byoyomi``: main time is used up;
        ``*_periods``: byo-yomi periods left, the one running included, counted up to ``now`` for
        the side whose clock runs; ``byoyomi_ms``: one period's length)."""
        c = self.control
        periods = dict(self.periods_left)
        in_byo = {color: c.kind == "byoyomi" and self.main_ms[color] == 0 for color in (RED, BLACK)}
        if c.kind == "byoyomi" and self.running is not None and self.running not in self.free:
            color = self.running
            elapsed = max(0, round((self._now(now) - self.started) * 1000))
            main = self.main_ms[color]
            if elapsed >= main:
                in_byo[color] = True
                used = (elapsed - main) // max(1, int(c.byoyomi_s * 1000))
                periods[color] = max(0, periods[color] - int(used))
        ticking = self.running is not None and self.running not in self.free
        return {
            "kind": c.kind, "describe_zh": c.describe_zh(),
            # a side before its first move: its clock is shown standing (it is not counted)
            "running": None if not ticking else ("red" if self.running else "black"),
            "red_ms": self.left_ms(RED, now), "black_ms": self.left_ms(BLACK, now),
            "red_periods": periods[RED], "black_periods": periods[BLACK],
            "red_byoyomi": in_byo[RED], "black_byoyomi": in_byo[BLACK],
            "byoyomi_ms": int(c.byoyomi_s * 1000) if c.kind == "byoyomi" else 0,
        }

    def to_record(self, now: float | None = None) -> dict[str, Any]:
        """Control and time left (the running side's time so far is charged) for the store."""
        main = dict(self.main_ms)
        periods = dict(self.periods_left)
        if self.running is not None and self.running not in self.free and \
                self.control.kind in ("fischer", "byoyomi"):
            saved = (self.main_ms.copy(), self.periods_left.copy())
            self._charge(self.running, self._now(now) - self.started)
            main, periods = dict(self.main_ms), dict(self.periods_left)
            self.main_ms, self.periods_left = saved
        rec = {"control": _control_record(self.control), "red_ms": main[RED], "black_ms": main[BLACK],
               "red_periods": periods[RED], "black_periods": periods[BLACK]}
        if self.free:
            rec["free"] = sorted("red" if c else "black" for c in self.free)
            if self.first_move_s is not None:
                rec["first_move_s"] = self.first_move_s
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any], source: TimeSource = REAL_TIME) -> GameClock:
        """Rebuild from :meth:`to_record` (not running; the session starts it); ``free``: the sides
        still before their first move (absent in the records of timed-from-the-start clocks),
        ``first_move_s`` their limit (absent: none); ``source``: the new clock's time source."""
        clk = cls(TimeControl(**rec["control"]), source=source)
        clk.main_ms = {RED: int(rec["red_ms"]), BLACK: int(rec["black_ms"])}
        clk.periods_left = {RED: int(rec["red_periods"]), BLACK: int(rec["black_periods"])}
        clk.free = {RED if c == "red" else BLACK for c in rec.get("free", ()) if c in ("red", "black")}
        limit = rec.get("first_move_s")
        clk.first_move_s = float(limit) if clk.free and isinstance(limit, (int, float)) else None
        return clk
