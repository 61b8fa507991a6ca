"""Review jobs (xiangqi.app.training.review): queue, progress, cancel, failure, priority below the game's
computer, results kept in the app's database."""

from __future__ import annotations

import threading
import time

import pytest

from xiangqi.app.play.store import Store
from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.app.training.review import (
    ReviewManager,
    ReviewQueueFull,
    ReviewSource,
    ReviewStore,
    game_key,
    review_record_job,
)
from xiangqi.core.board import Board
from xiangqi.core.errors import XiangqiError

# Red: king e0, rook b0; Black: king f9, horse c8. b0b6 leaves the rook where the horse takes it.
HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"
OPENING = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2", "a9b9", "b2a2", "c6c5"]


def _src(moves, fen=None, key="game:g1", depth=2) -> ReviewSource:
    return ReviewSource(key, fen or Board().fen(), tuple(moves), {"Red": "r", "Black": "b"}, depth)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path)
    yield s
    s.close()


def _wait(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_a_job_runs_to_done_and_is_found_again_in_the_store(store) -> None:
    mgr = ReviewManager(ReviewStore(store.engine))
    seen: list[tuple[int, int]] = []  # (done, total) as the confirmation tells it
    told = mgr._confirming
    mgr._confirming = lambda j, k, n: (told(j, k, n), seen.append((j.done, j.total)))
    job = mgr.submit(_src(["b0b6", "c8b6"], HANGING))
    assert job.total == 3 and job.status in ("queued", "running")
    job = mgr.wait(job.id, 120)
    # 3 positions, then the one candidate (b0b6, the hung rook) searched again: the bar keeps rising
    assert seen == [(3, 4), (4, 4)]
    assert job.status == "done" and job.done == job.total == 4
    d = job.to_dict()
    assert d["review"]["counts"]["red"]["blunder"] == 1 and d["review"]["plies"][0]["class"] == "blunder"
    # a second ask: the stored review, at once, equal to the first
    again = mgr.submit(_src(["b0b6", "c8b6"], HANGING))
    assert again.id != job.id and again.status == "done" and again.done == again.total == 3
    assert again.to_dict()["review"] == d["review"]
    # another manager on the same database (a restarted server) finds it too
    other = ReviewManager(ReviewStore(store.engine))
    assert other.stored(_src(["b0b6", "c8b6"], HANGING)).to_dict() == d["review"]
    # other moves for the same game: stale, the row is deleted
    assert other.stored(_src(["b0b6"], HANGING)) is None
    assert other.stored(_src(["b0b6", "c8b6"], HANGING)) is None
    mgr.close()


def test_a_foreground_section_pauses_the_progress_of_a_job(store) -> None:
    gate = ForegroundGate()
    held = threading.Event()  # the worker waits at the gate (not merely searching its position)
    polls = threading.Semaphore(0)  # one release per time the worker asked the gate while busy
    real_wait_idle = gate.wait_idle

    def wait_idle(timeout=None):
        if gate.busy:
            held.set()
            polls.release()
        return real_wait_idle(timeout)

    gate.wait_idle = wait_idle
    mgr = ReviewManager(None, gate)
    job = mgr.submit(_src(OPENING, depth=3))
    assert _wait(lambda: job.done >= 2)
    with gate.foreground():
        # the position being searched when the foreground began may end first: wait until the worker
        # stands at the gate (a fixed 0.3 s could be shorter than that search on a loaded machine)
        assert held.wait(60)
        paused_at = job.done
        for _ in range(3):  # the worker asks the gate again and again (its poll), and stays
            assert polls.acquire(timeout=60)
        assert job.done == paused_at and job.status == "running"
        assert paused_at < job.total
    assert mgr.wait(job.id, 120).status == "done" and job.done == job.total >= len(OPENING) + 1
    mgr.close()


def test_cancel_a_queued_job_and_a_running_one_waiting_for_the_foreground(store) -> None:
    gate = ForegroundGate()
    mgr = ReviewManager(None, gate)
    with gate.foreground():
        first = mgr.submit(_src(OPENING, key="game:a"))
        second = mgr.submit(_src(OPENING[:4], key="game:b"))
        assert _wait(lambda: first.status == "running")
        assert second.status == "queued" and first.done == 0
        assert mgr.cancel(second.id).status == "cancelled"
        mgr.cancel(first.id)
        assert mgr.wait(first.id, 60).status == "cancelled" and first.done == 0
    assert mgr.cancel("nope") is None and mgr.get("nope") is None
    mgr.close()


def test_the_same_line_twice_is_one_job_and_a_full_queue_is_refused(store) -> None:
    gate = ForegroundGate()
    mgr = ReviewManager(None, gate, max_jobs=2)
    with gate.foreground():
        a = mgr.submit(_src(OPENING, key="game:a"))
        assert mgr.submit(_src(OPENING, key="game:a")) is a
        mgr.submit(_src(OPENING[:2], key="game:b"))
        with pytest.raises(ReviewQueueFull, match="2 are already queued or running"):
            mgr.submit(_src(OPENING[:3], key="game:c"))
        assert mgr.active() == 2
    mgr.close()
    assert mgr.active() == 0


def test_a_bad_line_fails_with_the_reason() -> None:
    mgr = ReviewManager(None)
    job = mgr.submit(_src(["h2e2", "h2e2"], depth=1))
    job = mgr.wait(job.id, 60)
    assert job.status == "failed" and "h2e2" in job.error
    assert job.to_dict()["error"] == job.error and "review" not in job.to_dict()
    mgr.close()


def test_finished_jobs_are_forgotten_after_a_while() -> None:
    now = [1000.0]
    mgr = ReviewManager(None, keep_s=60, max_finished=2, clock=lambda: now[0])
    gate_free = mgr.submit(_src(["h2e2"], depth=1, key="game:x"))
    assert mgr.wait(gate_free.id, 60).status == "done"
    assert mgr.get(gate_free.id) is gate_free
    now[0] += 61
    assert mgr.get(gate_free.id) is None
    ids = []
    for k in "abc":
        j = mgr.submit(_src(["h2e2"], depth=1, key=f"game:{k}"))
        mgr.wait(j.id, 60)
        ids.append(j.id)
    assert mgr.get(ids[0]) is None and mgr.get(ids[1]) is not None and mgr.get(ids[2]) is not None
    mgr.close()


def test_review_store_keeps_one_row_per_game_and_depth(store) -> None:
    rs = ReviewStore(store.engine)
    mgr = ReviewManager(rs)
    for depth in (1, 2):
        j = mgr.submit(_src(["h2e2", "h9g7"], depth=depth, key=game_key("abc")))
        assert mgr.wait(j.id, 60).status == "done"
    src = _src(["h2e2", "h9g7"], key=game_key("abc"))
    best = rs.latest(game_key("abc"), src.digest)
    assert best is not None and best.limit["depth"] == 2
    mgr.close()


def test_record_job_reads_the_chosen_game_and_refuses_bad_input() -> None:
    pgn = ('[Game "Chinese Chess"]\n[Red "A"]\n\n1. 炮二平五 马8进7 2. 马二进三 *\n\n'
           '[Game "Chinese Chess"]\n[Red "B"]\n\n1. 兵七进一 *\n')
    got = review_record_job(pgn, 1)
    assert got["moves"] == ["c3c4"] and got["headers"]["Red"] == "B" and got["start_fen"] == Board().fen()
    assert review_record_job(pgn, 0)["moves"] == ["h2e2", "h9g7", "h0g2"]
    with pytest.raises(XiangqiError, match="no game_index 2"):
        review_record_job(pgn, 2)
    with pytest.raises(XiangqiError, match="empty"):
        review_record_job("  ", 0)


def test_without_a_store_a_done_job_still_known_answers_again() -> None:
    mgr = ReviewManager(None)
    job = mgr.submit(_src(["h2e2"], depth=1))
    assert mgr.wait(job.id, 60).status == "done"
    assert mgr.submit(_src(["h2e2"], depth=1)) is job
    other = mgr.submit(_src(["h2e2"], depth=2))
    assert other is not job and mgr.wait(other.id, 60).status == "done"
    mgr.close()
