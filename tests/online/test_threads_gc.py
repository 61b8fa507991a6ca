"""A worker thread's read of the live rooms while a collection runs Python code: ``list(d.items())``
allocates a tuple an item, each allocation may start a collection, and a collection's callbacks (a
profiler's, a library's) or finalizers are Python code at which the event loop's thread may take the
interpreter and change the dict ("dictionary changed size during iteration", seen as a 500 of /me
in the 1,000-player bench with a ``gc.callbacks`` probe in the server). ``dict.copy()`` runs no Python
code: these reads copy first."""

from __future__ import annotations

import gc
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

    def summary(self):
        return {}


def test_reads_of_the_rooms_from_a_thread_survive_collections_that_switch_threads(tmp_path):
    svc = OnlineService(OnlineConfig(), GameRegistry(None), data_dir=tmp_path)
    old = gc.get_threshold()

    def yield_interpreter(phase, info):  # what any Python-level collection callback allows
        if phase == "start":
            time.sleep(0)

    try:
        for i in range(5000):  # (more than the 2,000 pairs CPython keeps for reuse)
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
        errors: list[Exception] = []
        gc.callbacks.append(yield_interpreter)
        gc.set_threshold(50, 10, 10)  # a collection every few dozen allocations
        try:
            for k in range(10):
                try:
                    assert svc.me(who)["playing"] == []
                    if k == 0:
                        assert len(svc.lobby_view()["games"]) >= 5000
                except RuntimeError as exc:  # (the live dict changed under the iteration)
                    errors.append(exc)
                    break
        finally:
            gc.set_threshold(*old)
            gc.callbacks.remove(yield_interpreter)
            stop.set()
            t.join()
        assert not errors, errors
    finally:
        svc.rooms.clear()
        run_coroutine(svc.shutdown())
