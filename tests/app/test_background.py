"""The foreground gate: background engine work hears when the game's own searches start and end."""

import threading
import time

from xiangqi.app.opponents.players import EnginePlayer
from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.core.board import Board


def test_listeners_hear_first_start_and_last_end_only():
    gate = ForegroundGate()
    heard: list[bool] = []
    unsubscribe = gate.subscribe(heard.append)
    with gate.foreground():
        assert gate.busy
        with gate.foreground():  # overlapping sections: one start, one end
            pass
        assert gate.busy
    assert not gate.busy
    assert heard == [True, False]
    unsubscribe()
    with gate.foreground():
        pass
    assert heard == [True, False]


def test_wait_idle_blocks_until_the_foreground_ends():
    gate = ForegroundGate()
    assert gate.wait_idle(0)
    entered = threading.Event()
    release = threading.Event()

    def foreground():
        with gate.foreground():
            entered.set()
            release.wait(60)  # set by the test: a loaded machine's stall must not end it first

    t = threading.Thread(target=foreground)
    t.start()
    assert entered.wait(60)
    assert gate.wait_idle(0.05) is False
    release.set()
    assert gate.wait_idle(60) is True
    t.join(60)


def test_a_failing_listener_does_not_break_the_foreground():
    gate = ForegroundGate()
    heard = []

    def bad(_busy):
        raise RuntimeError("boom")

    gate.subscribe(bad)
    gate.subscribe(heard.append)
    with gate.foreground():
        pass
    assert heard == [True, False]


def test_the_players_searches_hold_the_gate():
    player = EnginePlayer(hash_mb=1)
    seen = []
    player.gate.subscribe(lambda busy: seen.append((busy, time.monotonic())))
    board = Board("3k5/9/9/9/9/9/9/9/4R4/4K4 w")
    player.choose(board, "beginner")
    assert [b for b, _ in seen] == [True, False]
    assert not player.gate.busy
