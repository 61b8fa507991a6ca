"""The record sandbox: a job runs in a child process that is killed past its time budget."""

from __future__ import annotations

import time

import pytest

from xiangqi.app import sandbox
from xiangqi.app.sandbox import RecordJobError, RecordTooComplex, run_in_child


def test_a_job_returns_its_value_and_its_refusal():
    assert run_in_child(divmod, 7, 2) == (3, 1)
    with pytest.raises(RecordJobError, match="the record cannot be read"):
        run_in_child(divmod, 1, 0)
    with pytest.raises(RecordJobError, match="no game found"):
        run_in_child(sandbox.open_record_job, b"zz", "x.pgn", 0)


def test_a_job_past_its_budget_is_killed():
    t0 = time.monotonic()
    with pytest.raises(RecordTooComplex, match="longer than 0.5 s"):
        run_in_child(time.sleep, 30, budget_s=0.5)
    assert time.monotonic() - t0 < 10


def test_a_job_that_needs_too_much_memory_is_refused():
    with pytest.raises(RecordJobError, match="too much memory"):
        run_in_child(bytearray, 4 << 30)
