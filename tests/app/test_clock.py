"""Game clocks with an injected monotonic time: per move, Fischer, byo-yomi, timeouts in a session."""

from __future__ import annotations

import pytest

from xiangqi.app.play.clock import ClockError, GameClock, TimeControl
from xiangqi.app.play.session import GameOverError, GameSession
from xiangqi.core.board import BLACK, RED


def test_fischer_charges_time_and_adds_increment():
    c = GameClock(TimeControl("fischer", base_s=60, increment_s=5))
    c.start(RED, now=100.0)
    assert c.left_ms(RED, now=110.0) == 50_000
    c.switch(now=112.5)  # red used 12.5 s, gets 5 s back
    assert c.main_ms[RED] == 52_500 and c.running == BLACK
    assert c.left_ms(BLACK, now=113.0) == 59_500
    assert c.deadline() == pytest.approx(112.5 + 60)
    assert c.flagged(now=172.4) is None and c.flagged(now=172.6) == BLACK


def test_per_move_is_fresh_every_move():
    c = GameClock(TimeControl("per_move", per_move_s=30))
    c.start(RED, now=0.0)
    c.switch(now=29.0)
    assert c.left_ms(BLACK, now=29.0) == 30_000 and c.left_ms(RED, now=29.0) == 30_000
    assert c.flagged(now=58.9) is None and c.flagged(now=59.0) == BLACK


def test_byoyomi_periods():
    c = GameClock(TimeControl("byoyomi", base_s=10, byoyomi_s=5, periods=2))
    c.start(RED, now=0.0)
    assert c.left_ms(RED, now=4.0) == 6_000
    assert c.left_ms(RED, now=12.0) == 3_000  # main time gone, 2 s into the first period
    c.switch(now=14.0)  # moved inside the first period: it is kept
    assert c.main_ms[RED] == 0 and c.periods_left[RED] == 2
    c.switch(now=15.0)  # black moves at once
    c.switch(now=21.0)  # red overran one period (6 s > 5 s): one period left
    assert c.periods_left[RED] == 1
    c.switch(now=22.0)
    assert c.flagged(now=26.9) is None and c.flagged(now=27.0) == RED
    assert c.view(now=25.0)["red_byoyomi"] is True


def test_bad_time_controls_are_refused():
    with pytest.raises(ClockError, match="kind"):
        TimeControl("hourglass")
    with pytest.raises(ClockError, match="base_s"):
        TimeControl("fischer", base_s=0)
    with pytest.raises(ClockError, match="periods"):
        TimeControl("byoyomi", byoyomi_s=10, periods=0)


def test_session_loses_on_time_with_reason():
    s = GameSession(red="human", black="human", time_control=TimeControl("per_move", per_move_s=10))
    t0 = s.clock.started
    s.play("h2e2", now=t0 + 3)
    assert s.check_time(now=t0 + 12) is None  # black's 10 s started at t0 + 3
    out = s.check_time(now=t0 + 13.5)
    assert out is not None and out.reason_zh == "红胜 — 黑方超时" and out.termination.value == "timeout"
    with pytest.raises(GameOverError):
        s.play("h9g7")


def test_late_move_is_refused_as_timeout():
    s = GameSession(red="human", black="human", time_control=TimeControl("fischer", base_s=5))
    with pytest.raises(GameOverError, match="ran out of time"):
        s.play("h2e2", now=s.clock.started + 6)
    assert s.moves == [] and s.outcome.reason_zh == "黑胜 — 红方超时"


def test_clock_survives_the_record():
    s = GameSession(red="human", black="human", time_control=TimeControl("fischer", base_s=60, increment_s=2))
    t0 = s.clock.started
    s.play("h2e2", now=t0 + 10)
    rec = s.to_record()
    back = GameSession.from_record(rec)
    assert back.clock.control == s.clock.control
    assert back.clock.main_ms[RED] == 52_000
    assert back.clock.running == BLACK
    # Black's time is all there, counted from the moment the restored session started it (asked at
    # that moment: a check "within a second of now" fails on a machine that pauses the test that long)
    assert rec["clock"]["black_ms"] == back.clock.main_ms[BLACK] == 60_000
    assert back.clock.left_ms(BLACK, now=back.clock.started) == 60_000
    assert back.clock.left_ms(BLACK, now=back.clock.started + 1.5) == 58_500
    assert back.state()["clock"]["kind"] == "fischer"


def test_elapsed_time_rounds_to_the_nearest_millisecond():
    # (t0 + 10) - t0 is 9.999999999999545 s for this monotonic start: 10 000 ms, not 9 999
    s = GameSession(red="human", black="human", time_control=TimeControl("fischer", base_s=60, increment_s=2))
    s.clock.start(RED, now=4086.402415013618)
    s.play("h2e2", now=4086.402415013618 + 10)
    assert s.clock.main_ms[RED] == 52_000


def test_engine_budget_is_a_fraction_of_the_time_left():
    c = GameClock(TimeControl("fischer", base_s=300, increment_s=3))
    c.start(RED, now=0.0)
    assert c.think_budget_s(RED, now=0.0) == pytest.approx(300 / 30 + 2.4)
    assert GameClock(TimeControl()).think_budget_s(RED) is None
