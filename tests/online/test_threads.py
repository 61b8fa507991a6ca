"""Service methods that FastAPI runs in its worker threads (plain ``def`` routes) while the event
loop changes the rooms: they must read a copy, not iterate the live dict (a /me during the rooms'
growth answered 500 "dictionary changed size during iteration" in the 1,000-player bench).

The copy must also run no Python code: ``list(d.items())`` allocates a tuple an item, each
allocation may start a collection, and a collection's callbacks (a profiler's, a library's) or
finalizers are Python code at which the event loop's thread may take the interpreter and change the
dict (seen as a 500 of /me in the bench with a ``gc.callbacks`` probe in the server).
``dict.copy()`` runs none: these reads copy that way."""

from __future__ import annotations

import contextlib
import gc
import threading
import time

from tests.webclient import run_coroutine

from xiangqi.app.play.hub import GameRegistry
from xiangqi.online.lobby import Identity
from xiangqi.online.rooms import OnlineConfig, OnlineService


class _Room:
    status = "playing"

    def seat_of(self, who):
        return None

    def summary(self):
        return {}


@contextlib.contextmanager
def _churning(tmp_path, rooms: int):
    """A service holding ``rooms`` playing rooms while a thread adds and removes others, as the loop
    does when games start and end; yields the service."""
    svc = OnlineService(OnlineConfig(), GameRegistry(None), data_dir=tmp_path)
    for i in range(rooms):
        svc.rooms[f"r{i}"] = _Room()
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            svc.rooms[f"n{i}"] = _Room()
            svc.rooms.pop(f"n{i - 50}", None)
            i += 1

    t = threading.Thread(target=churn)
    t.start()
    try:
        yield svc
    finally:
        stop.set()
        t.join()
        svc.rooms.clear()
        run_coroutine(svc.shutdown())


WHO = Identity("guest", "g-1", "someone")


def test_me_while_rooms_are_added_and_removed(tmp_path):
    errors = []
    with _churning(tmp_path, 2000) as svc:
        deadline = time.monotonic() + 1.5
        calls = 0
        while time.monotonic() < deadline or calls < 200:
            try:
                assert svc.me(WHO)["playing"] == []
            except RuntimeError as exc:  # (the live dict changed under the iteration)
                errors.append(exc)
                break
            calls += 1
    assert not errors, errors


def test_reads_of_the_rooms_from_a_thread_survive_collections_that_switch_threads(tmp_path):
    old = gc.get_threshold()

    def yield_interpreter(phase, info):  # what any Python-level collection callback allows
        if phase == "start":
            time.sleep(0)

    errors: list[Exception] = []
    with _churning(tmp_path, 5000) as svc:  # (more than the 2,000 pairs CPython keeps for reuse)
        gc.callbacks.append(yield_interpreter)
        gc.set_threshold(50, 10, 10)  # a collection every few dozen allocations
        try:
            for k in range(10):
                try:
                    assert svc.me(WHO)["playing"] == []
                    if k == 0:
                        assert len(svc.lobby_view()["games"]) >= 5000
                except RuntimeError as exc:  # (the live dict changed under the iteration)
                    errors.append(exc)
                    break
        finally:
            gc.set_threshold(*old)
            gc.callbacks.remove(yield_interpreter)
    assert not errors, errors
