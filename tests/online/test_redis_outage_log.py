"""A Redis outage is logged once, not once a retry (online/bus.py, :class:`Outage`).

Before, the bus's reader logged a full traceback every 0.5 s while Redis was away and its writer one
for every publish: 19 tracebacks at ERROR level over a 3 s outage. Now the outage gives one warning
(what failed, which Redis, why, that it is retried), the tracebacks go to debug level, and one line
says when Redis answers again. Against a real redis-server on a unix socket in tmp_path (skipped
when it is missing unless $XIANGQI_REQUIRE_REDIS is set).
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from tests.online.test_limits_async import redis  # noqa: F401 - the fixture: a redis-server of the test's own
from tests.webclient import run_coroutine

from xiangqi.online.bus import Outage, RedisBus, shown_url


async def _until(pred, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < end, "the condition did not come true in time"
        await asyncio.sleep(0.05)


def test_an_outage_is_one_warning_and_its_end_one_line(redis, caplog):  # noqa: F811 - the fixture
    caplog.set_level(logging.DEBUG, logger="xiangqi.online.bus")
    url = redis.url

    async def scenario():
        bus = RedisBus(url)
        await bus.start()
        got: list[int] = []
        bus.subscribe("game:x", lambda m: got.append(m["n"]))
        try:
            bus.publish("game:x", {"n": 0})
            await _until(lambda: got == [0])
            redis.kill()
            n = 0
            while bus.outage.failures < 8:  # the reader's retries and the writer's publishes fail
                n += 1
                bus.publish("game:x", {"n": n})
                await asyncio.sleep(0.1)
                assert n < 300, "the bus did not notice the outage"
            during = list(caplog.records)
            redis.start()
            back = n + 1000

            def delivered() -> bool:
                bus.publish("game:x", {"n": back})
                return back in got

            await _until(delivered)
            return during, list(caplog.records), bus.outage.failures
        finally:
            await bus.close()

    during, after, failures = run_coroutine(scenario())
    loud = [r for r in during if r.levelno >= logging.INFO]
    assert len(loud) == 1, [r.getMessage() for r in loud]
    [warning] = loud
    text = warning.getMessage()
    assert warning.levelno == logging.WARNING and warning.exc_info is None
    assert text.startswith("redis bus: ") and f"on {url} (" in text and "retrying" in text
    assert "ConnectionError" in text  # why, in one line
    quiet = [r for r in during if r.levelno == logging.DEBUG]
    assert len(quiet) >= 8 and all(r.exc_info for r in quiet)  # the tracebacks: at debug level
    loud_after = [r for r in after if r.levelno >= logging.INFO]
    assert len(loud_after) == 2, [r.getMessage() for r in loud_after]
    again = loud_after[1].getMessage()
    assert again.startswith(f"redis bus: {url} answers again after ") and f"({failures} failed calls" in again


def test_the_outage_log_counts_on_its_own_clock(caplog):
    caplog.set_level(logging.DEBUG, logger="xiangqi.online.bus")
    now = [100.0]
    where = "redis://127.0.0.1:6379/0"
    outage = Outage(where, "retrying", clock=lambda: now[0])
    outage.ok()  # up: nothing to say
    for _ in range(3):
        outage.failed(ConnectionError("refused"), "reading")
        now[0] += 2.5
    outage.ok()
    outage.ok()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
    assert lines == [
        ("WARNING", f"redis bus: reading failed on {where} (ConnectionError: refused); retrying"),
        ("WARNING", f"redis bus: {where} answers again after 7.5 s (3 failed calls meanwhile)")]
    assert sum(1 for r in caplog.records if r.levelno == logging.DEBUG and r.exc_info) == 3


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://:secret@10.1.2.3:6380/2", "redis://10.1.2.3:6380/2"),
    ("rediss://user:pw@cache.example/0", "rediss://cache.example/0"),
    ("unix:///run/redis/redis.sock", "unix:///run/redis/redis.sock"),
    ("redis://[::1]:6379/0", "redis://[::1]:6379/0"),
])
def test_the_logs_name_the_redis_without_its_password(url, shown):
    assert shown_url(url) == shown
