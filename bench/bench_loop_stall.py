"""How long the server's event loop stands still, measured where the tests only check orders
(tests/online/test_limits_async.py, tests/web/test_bad_input.py; docs/DESIGN.md, "Testing").

Two measurements, each against a peer measured in the same run (``ratio`` = case / peer), so that a
loaded machine moves both:

* ``redis-stopped``: the longest gap between the wake-ups of a task that sleeps 5 ms at a time on
  the loop while a :class:`~xiangqi.online.limits.RedisWindow` call waits for a stopped
  (SIGSTOP) redis-server until its time-out, against the same while Redis answers. A blocking
  call would make the gap the whole time-out (0.5 s); a loop that serves meanwhile keeps it at
  a few ms.
* ``record-reading``: the median time of ``GET /api/game`` while a 1.5 MB record of variations is
  read (in a child process, stopped at its budget), against the median on an idle server.

Run: ``PYTHONPATH=src .venv/bin/python bench/bench_loop_stall.py [--rounds N]`` (needs
redis-server for the first; skipped without it). Loopback and a unix socket only. No timing is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path


class _Ticks:
    """The longest gap between the wake-ups of a 5 ms sleeper on the running loop."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.005)
            now = time.monotonic()
            self.worst = max(self.worst, now - last)
            last = now

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> float:
        assert self._task is not None
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        return self.worst


def redis_stall(rounds: int) -> tuple[float, float] | None:
    """``(worst gap while Redis is stopped, worst gap while it answers)`` in seconds, the medians of
    ``rounds`` tries; None without redis-server."""
    from xiangqi.online import limits

    exe = shutil.which("redis-server")
    if exe is None:
        return None
    tmp = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    sock = tmp / "redis.sock"
    proc = subprocess.Popen([exe, "--port", "0", "--unixsocket", str(sock), "--save", "", "--appendonly",
                             "no", "--dir", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while not sock.exists():
            if time.monotonic() > end or proc.poll() is not None:
                raise SystemExit("redis-server did not start")
            time.sleep(0.02)

        async def one(stopped: bool) -> float:
            lim = limits.RedisLimits(f"unix://{sock}", limits.Health(retry_s=0.0))
            w = limits.RedisWindow(lim, "bench", 10**6, 60.0)
            try:
                await w.hit_async("warm")  # the connection and the script, before measuring
                if stopped:
                    proc.send_signal(signal.SIGSTOP)
                ticks = _Ticks()
                ticks.start()
                await asyncio.sleep(0.02)
                await w.hit_async("u")  # stopped: waits for REDIS_TIMEOUT_S, then counts here
                await asyncio.sleep(0.02)
                return await ticks.stop()
            finally:
                proc.send_signal(signal.SIGCONT)
                await lim.aclose()

        stopped = [asyncio.run(one(True)) for _ in range(rounds)]
        answering = [asyncio.run(one(False)) for _ in range(rounds)]
        return statistics.median(stopped), statistics.median(answering)
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def record_latency(rounds: int) -> tuple[float, float]:
    """``(median GET latency while a heavy record is read, median on an idle server)`` in seconds."""
    from fastapi.testclient import TestClient

    from xiangqi.web.server import create_app

    heavy = b"1. h2e2 " + b"(1. b2e2) " * 150_000
    with tempfile.TemporaryDirectory() as d:
        app = create_app(Path(d), warmup=False, engine_delay_s=0, record_budget_s=1.5)
        with TestClient(app, base_url="http://127.0.0.1") as c:
            c.headers.update({"X-Xiangqi-Token": app.state.token, "Origin": "http://127.0.0.1"})

            def latencies(n: int, busy: threading.Thread | None) -> list[float]:
                out: list[float] = []
                while len(out) < n and (busy is None or busy.is_alive()):
                    t0 = time.monotonic()
                    c.get("/api/game")
                    out.append(time.monotonic() - t0)
                    time.sleep(0.02)
                return out

            idle, busy = [], []
            for _ in range(rounds):
                idle += latencies(20, None)
                t = threading.Thread(target=lambda: c.post("/api/record/open", content=heavy))
                t.start()
                busy += latencies(200, t)
                t.join()
    return statistics.median(busy), statistics.median(idle)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="tries of each measurement (medians)")
    args = ap.parse_args()
    got = redis_stall(args.rounds)
    if got is None:
        print("redis-stopped: skipped (no redis-server)")
    else:
        case, peer = got
        print(f"redis-stopped: worst loop gap {case * 1000:.1f} ms, Redis answering {peer * 1000:.1f} ms, "
              f"ratio {case / peer:.2f}")
    case, peer = record_latency(args.rounds)
    print(f"record-reading: median GET {case * 1000:.1f} ms, idle {peer * 1000:.1f} ms, "
          f"ratio {case / peer:.2f}")


if __name__ == "__main__":
    main()
