"""Game-review speed: plies analysed per second at a fixed depth with 1 and 2 local processes and on a
Dask LocalCluster.

Run: ``nice -n 10 .venv/bin/python bench/bench_analyse.py [--games 3] [--depth 6] [--jobs 1,2]
[--cluster-workers 2]``.
Reviews the first ``--games`` master games of ``tests/data/corpus/wxf-masters/xqdb_traditional.pgn``
with :func:`xiangqi.study.review.review_games` (one search per position, each from a cleared hash
table), once per ``--jobs`` value, and prints positions per second, the ratio of each run to
the 1-process run (the scaling) and whether the reviews are identical (they must be: the output
does not depend on the number of processes). A run with processes is timed twice: "cold", as
``xiangqi analyse --jobs N`` runs (starting the processes, each loading the compiled kernels
from the Numba cache, is included), and "warm", on a pool started and warmed beforehand
(:func:`xiangqi.study.review.make_pool`), which is the steady-state speed. Kernels are compiled before timing;
the machine's load average is printed, since other work on a shared machine slows every run.
``--cluster-workers N`` (default 2; 0 skips it) then starts a ``dask.distributed.LocalCluster`` of
N worker processes (one thread each) on 127.0.0.1, warms every worker (kernels loaded) and times
:func:`xiangqi.study.analyse.review_on_cluster` on it, one game per task (``xiangqi analyse
--cluster`` on a real cluster is the same code). The CPU model is printed first.
No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from xiangqi.core.records import read_records
from xiangqi.engine import warmup
from xiangqi.study.review import make_pool, review_games

GAMES = Path(__file__).resolve().parent.parent / "tests/data/corpus/wxf-masters/xqdb_traditional.pgn"


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), or the platform's processor string."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--jobs", default="1,2", help="comma-separated process counts to time")
    ap.add_argument("--file", default=str(GAMES))
    ap.add_argument("--cluster-workers", type=int, default=2, help="LocalCluster worker processes (0: skip)")
    args = ap.parse_args()
    games = read_records(args.file)[: args.games]
    positions = sum(len(g.mainline_moves()) + 1 for g in games)
    warmup(background=False)
    print(f"CPU: {cpu_model()}")
    print(f"{len(games)} games, {positions} positions, depth {args.depth}; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    base = None
    first_out = None

    def report(label: str, dt: float, reviews) -> None:
        nonlocal base, first_out
        rate = positions / dt
        out = json.dumps([r.to_dict() for r in reviews])
        same = "" if first_out is None else ("; same reviews" if out == first_out else "; REVIEWS DIFFER")
        first_out = first_out or out
        base = base or rate
        print(f"{label}: {dt:.1f} s, {rate:.1f} plies/s, ratio to 1 job {rate / base:.2f}{same} "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)

    for jobs in (int(j) for j in args.jobs.split(",")):
        t = time.perf_counter()
        reviews = list(review_games(games, depth=args.depth, jobs=jobs))
        report(f"jobs {jobs}" + (" cold" if jobs > 1 else ""), time.perf_counter() - t, reviews)
        if jobs > 1:
            with make_pool(jobs) as pool:
                for f in [pool.submit(time.sleep, 1.0) for _ in range(jobs)]:  # start every worker
                    f.result()
                t = time.perf_counter()
                reviews = list(review_games(games, depth=args.depth, jobs=jobs, executor=pool))
                report(f"jobs {jobs} warm", time.perf_counter() - t, reviews)
    if args.cluster_workers > 0:
        from distributed import Client, LocalCluster

        from xiangqi.study.analyse import review_on_cluster

        with LocalCluster(n_workers=args.cluster_workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(warmup, background=False)  # every worker loads the kernels before the timing
            t = time.perf_counter()
            reviews = list(review_on_cluster(games, client, depth=args.depth, games_per_task=1))
            report(f"LocalCluster {args.cluster_workers} workers", time.perf_counter() - t, reviews)


if __name__ == "__main__":
    main()
