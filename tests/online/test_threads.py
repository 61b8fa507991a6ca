"""Service methods that FastAPI runs in its worker threads (plain ``def`` routes) while the event
loop changes the rooms: they must read a copy, not iterate the live dict (a /me during the rooms'
growth answered 500 "dictionary changed size during iteration" in the 1,000-player bench)."""

from __future__ import annotations

import threading
import time

from tests.webclient import run_coroutine

from xiangqi.online.lobby import Identity
from xiangqi.web.hub import GameRegistry
from xiangqi.web.online_rooms import OnlineConfig, OnlineService


class _Room:
    status = "playing"

    def seat_of(self, who):
        return None


def test_me_while_rooms_are_added_and_removed(tmp_path):
    svc = OnlineService(OnlineConfig(), GameRegistry(None), data_dir=tmp_path)
    try:
        for i in range(2000):
            svc.rooms[f"r{i}"] = _Room()
        stop = threading.Event()

        def churn():  # what the loop does as games start and end
            i = 0
            while not stop.is_set():
                svc.rooms[f"n{i}"] = _Room()
                svc.rooms.pop(f"n{i - 50}", None)
                i += 1

        t = threading.Thread(target=churn)
        t.start()
        who = Identity("guest", "g-1", "someone")
        errors = []
        deadline = time.monotonic() + 1.5
        calls = 0
        try:
            while time.monotonic() < deadline or calls < 200:
                try:
                    assert svc.me(who)["playing"] == []
                except RuntimeError as exc:  # (the live dict changed under the iteration)
                    errors.append(exc)
                    break
                calls += 1
        finally:
            stop.set()
            t.join()
        assert not errors, errors
    finally:
        svc.rooms.clear()
        run_coroutine(svc.shutdown())
