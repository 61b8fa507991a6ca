"""Background setup jobs (xiangqi.app.tasks.jobs): states, progress, cancel, giving way to the foreground,
and the default-tables work (resumable: tables present are kept)."""

from __future__ import annotations

import threading

import pytest

from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.app.tasks.jobs import Job, tablebases_job
from xiangqi.engine import tablebase


def test_a_job_runs_once_at_a_time_and_keeps_its_result():
    release = threading.Event()
    steps = []

    def work(step):
        step(1, 3, "one", {"games": 5})
        steps.append("one")
        release.wait(60)
        step(3, 3, "end")
        return {"n": 3}

    job = Job("x", work)
    assert job.snapshot()["state"] == "idle"
    assert job.start() is True
    assert job.start() is False  # running already
    release.set()
    assert job.join(60)
    snap = job.snapshot()
    assert (snap["state"], snap["done"], snap["total"], snap["phase"]) == ("done", 3, 3, "end")
    assert snap["result"] == {"n": 3}
    assert job.start() is True and job.join(60)  # a finished job can run again


def test_cancel_stops_at_the_next_step_and_a_failure_is_kept():
    entered, go = threading.Event(), threading.Event()

    def work(step):
        step(0, 2, "a")
        entered.set()
        go.wait(60)
        step(1, 2, "b")  # raises Cancelled
        raise AssertionError("not reached")

    job = Job("x", work)
    assert job.cancel() is False
    job.start()
    assert entered.wait(60)
    assert job.cancel() is True
    go.set()
    job.join(60)
    assert job.snapshot()["state"] == "cancelled"

    def broken(step):
        raise OSError("disk full")

    bad = Job("y", broken)
    bad.start()
    bad.join(60)
    assert bad.snapshot()["state"] == "failed" and bad.snapshot()["error"] == "disk full"


def test_a_step_waits_while_the_game_searches():
    gate = ForegroundGate()
    order = []
    stepped = threading.Event()

    def work(step):
        step(0, 1, "x")
        order.append("stepped")
        stepped.set()

    at_gate = threading.Event()  # the step stands at the gate (it asked while the search runs)
    real_wait_idle = gate.wait_idle

    def wait_idle(timeout=None):
        if gate.busy:
            at_gate.set()
        return real_wait_idle(timeout)

    gate.wait_idle = wait_idle
    job = Job("x", work, gate)
    with gate.foreground():
        job.start()
        assert at_gate.wait(60)
        assert not stepped.is_set()  # held while the foreground search runs
        order.append("search over")
    job.join(60)
    assert order == ["search over", "stepped"]


def test_tablebases_job_generates_the_missing_tables_smallest_first(tmp_path):
    names = tablebase.default_set(5000)  # KPK KCK KNK KRK
    assert names == ["KPK", "KCK", "KNK", "KRK"]
    tablebase.table_path(tmp_path, "KCK").write_bytes(b"present")  # kept, not made again
    made = []

    def fake_generate(name, directory, checkpoint_every=None, progress=None):
        progress(f"{name}: pass 1")
        made.append(name)
        tablebase.table_path(directory, name).write_bytes(b"t")

    seen = []
    work = tablebases_job(tmp_path, 5000, generate=fake_generate)
    result = work(lambda done, total, phase, info=None: seen.append((done, total, phase)))
    assert made == ["KPK", "KNK", "KRK"]
    assert result == {"endings": 4, "generated": 3}
    assert seen[0] == (0, 4, "KPK") and seen[-1] == (4, 4, "done")
    assert work(lambda *a, **k: None) == {"endings": 4, "generated": 0}  # resumed: nothing left to do


@pytest.mark.slow
def test_tablebases_job_really_generates_the_smallest_table(tmp_path):
    job = Job("tablebases", tablebases_job(tmp_path, 2970, checkpoint_every=None))
    job.start()
    assert job.join(300)
    snap = job.snapshot()
    assert snap["state"] == "done", snap
    assert tablebase.Tablebase(tmp_path).available() == ["KPK"]
