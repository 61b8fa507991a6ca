"""The server process's garbage-collector policy (``xiangqi.web.run.server_gc_policy``): what start-up
made is frozen out of every later collection, the thresholds are the measured ones, garbage is still
collected; every way of starting the server goes through it (DESIGN.md, "Load on a quiet machine")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from xiangqi.web import run

POLICY_CHILD = """
import gc, json, weakref
class Node:
    pass
def cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)
before = cycle()  # garbage made before the policy: collected by it, not frozen
import time, types
import xiangqi.web.run as run
server = types.SimpleNamespace(started=False, should_exit=False)  # what the policy reads of uvicorn's
frozen = run.server_gc_policy(server)
after = cycle()  # garbage made after: the collector still finds it
alive_before = before() is not None
collected = gc.collect()
started = [[] for _ in range(5000)]  # made by the server's start-up: frozen once it has started
assert gc.is_tracked(started[0]) and gc.get_freeze_count() < frozen + 5000
server.started = True
for _ in range(200):
    time.sleep(0.05)
    if gc.get_freeze_count() >= frozen + 5000:
        break
print(json.dumps({"frozen": frozen, "grew": gc.get_freeze_count() - frozen, "thresholds": gc.get_threshold(),
                  "before_alive": alive_before, "after_alive": after() is not None,
                  "collected": collected, "expected": list(run.SERVER_GC_THRESHOLDS)}))
"""


def test_the_policy_freezes_start_up_sets_the_thresholds_and_still_collects_garbage() -> None:
    out = subprocess.run([sys.executable, "-c", POLICY_CHILD], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    # an interpreter with xiangqi.web.run imported holds some 75,000 tracked objects, all frozen; the
    # 5,000 lists made "by the server's start-up" were frozen once it had started
    assert got["frozen"] > 20_000 and 5_000 <= got["grew"] < 5_100
    assert got["thresholds"] == got["expected"] == [700, 10, 100]
    assert got["before_alive"] is False  # the collection before the freeze took it
    assert got["after_alive"] is False and got["collected"] >= 2


@pytest.mark.parametrize("public", [False, True])
def test_every_way_of_starting_the_server_applies_the_policy_before_it_runs(tmp_path, monkeypatch,
                                                                            public: bool) -> None:
    import uvicorn

    calls: list[str] = []
    monkeypatch.setattr(run, "server_gc_policy", lambda *a: calls.append("policy") or 0)

    def fake_run(self, *a, **k) -> None:
        calls.append("run")
        self.should_exit = True  # (the announcing thread then ends)

    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    from xiangqi.web import server

    make = server.create_app
    monkeypatch.setattr(server, "create_app", lambda *a, **k: make(*a, **k, warmup=False))
    assert run.serve(0, data_dir=str(tmp_path), public=public) == 0
    assert calls == ["policy", "run"]
