"""The record sandbox: a job runs in a child process that is killed past its time budget."""

from __future__ import annotations

import threading
import time

import pytest

from xiangqi.app.library import sandbox
from xiangqi.app.library.sandbox import RecordJobError, RecordTooComplex, run_in_child


def test_a_job_returns_its_value_and_its_refusal():
    assert run_in_child(divmod, 7, 2) == (3, 1)
    with pytest.raises(RecordJobError, match="the record cannot be read"):
        run_in_child(divmod, 1, 0)
    with pytest.raises(RecordJobError, match="no game found"):
        run_in_child(sandbox.open_record_job, b"zz", "x.pgn", 0)


def test_a_job_past_its_budget_is_killed():
    """The job would sleep an hour: the call can only come back (with the refusal) because its child
    was killed at the budget; the thread is the bound of a hung test, not a measure."""
    got: list[BaseException] = []

    def call() -> None:
        try:
            run_in_child(time.sleep, 3600, budget_s=0.5)
        except BaseException as exc:  # handed to the test
            got.append(exc)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive(), "the child was not killed at its budget"
    assert len(got) == 1 and isinstance(got[0], RecordTooComplex) and "longer than 0.5 s" in str(got[0])


def test_a_job_that_needs_too_much_memory_is_refused():
    with pytest.raises(RecordJobError, match="too much memory"):
        run_in_child(bytearray, 4 << 30)
