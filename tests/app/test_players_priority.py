"""EnginePlayer takes requests in turn: the game's move first (it stops a running hint), and any
request can be cancelled while it waits or runs."""

from __future__ import annotations

import threading
import time

import pytest

from xiangqi.app.opponents.players import EnginePlayer, SearchCancelledError, SearchTicket
from xiangqi.core.board import Board, Move


class SlowEngine:
    """Every search lasts ``seconds`` unless stopped; logs ``(event, kind)``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.log: list[tuple[str, str]] = []
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def _run(self, kind: str) -> Move:
        self._stop.clear()
        self.log.append(("start", kind))
        stopped = self._stop.wait(self.seconds)
        self.log.append(("stopped" if stopped else "end", kind))
        return Move.from_iccs("h2e2")

    def play(self, board, level):
        return type("R", (), {"move": self._run("move")})()

    def search(self, board, limit):
        mv = self._run("query")
        return type("R", (), {"move": mv, "score_cp": 5, "mate": None, "pv": [mv]})()


class Ready(EnginePlayer):
    def __init__(self, engine) -> None:
        super().__init__()
        self._engine = engine

    @staticmethod
    def kernels_ready() -> bool:
        return True


def start(fn, *args, **kw):
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kw)
        except BaseException as exc:  # kept for the test to look at
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def wait_for(pred, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def test_the_games_move_stops_a_running_hint_and_goes_before_waiting_ones():
    eng = SlowEngine(60.0)  # the first hint runs until the move stops it (2 s could end first under load)
    p = Ready(eng)
    hints = [start(p.hint, Board(), "beginner")]
    wait_for(lambda: eng.log == [("start", "query")], 60)
    hints += [start(p.hint, Board(), "beginner") for _ in range(3)]
    wait_for(lambda: p.busy() == ("query", 3))
    eng.seconds = 0.05  # from now on searches are short
    mover = start(p.choose, Board(), "intermediate")
    mover[0].join(60)
    assert mover[1]["value"] == Move.from_iccs("h2e2")
    assert eng.log[:4] == [("start", "query"), ("stopped", "query"), ("start", "move"), ("end", "move")]
    for t, _ in hints:
        t.join(60)
    assert eng.log.count(("end", "query")) == 3  # the waiting hints then ran, one at a time
    assert hints[0][1]["value"]["move"] == "h2e2"  # the stopped hint still answers (best so far)


def test_cancel_a_waiting_and_a_running_request():
    eng = SlowEngine(3600.0)  # ends only when stopped: the log says whether it was
    p = Ready(eng)
    running, waiting = SearchTicket("query"), SearchTicket("query")
    a = start(p.hint, Board(), "beginner", ticket=running)
    # its search has begun (not merely its turn: the first request of a process imports the engine
    # package before it searches, and a cancel in between leaves nothing to stop)
    wait_for(lambda: eng.log == [("start", "query")], 60)
    b = start(p.evaluate, Board(), ticket=waiting)
    wait_for(lambda: p.busy() == ("query", 1))
    p.cancel(waiting, "a newer request")
    b[0].join(60)  # the bound of a hung test: the waiting request ends at once, before any search
    assert not b[0].is_alive() and eng.log == [("start", "query")]  # the running one still runs
    assert isinstance(b[1]["error"], SearchCancelledError) and "a newer request" in str(b[1]["error"])
    p.cancel(running, "the position changed")
    a[0].join(60)
    assert not a[0].is_alive()
    assert isinstance(a[1]["error"], SearchCancelledError)
    assert eng.log == [("start", "query"), ("stopped", "query")]  # stopped, not run to its end
    assert p.busy() == (None, 0)
    with pytest.raises(ValueError):
        SearchTicket("analysis")
