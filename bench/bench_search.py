"""Search speed at 大师 and the reply time of every level, measured on this machine.

Run: ``.venv/bin/python bench/bench_search.py [--master-time 3]``.
For a few typical positions (opening, middlegame, endgame) it prints the nodes/s
of the search at 大师 (``Engine.play`` with the master level's time), and for each
level the reply time of ``Engine.play`` (median and maximum over the positions,
fresh hash per game as in a new game). The peer for the nodes/s figure is our
own perft speed in the same run (``search nps / perft nps``), so the numbers can
be compared across machines. Kernels are compiled before timing. No timing is
asserted anywhere.

The machine is shared, so the nodes/s are given twice: per wall-clock second and per second
of this process's CPU time (``time.process_time``, all threads; the search runs in one), the
latter the one to compare between runs on a loaded machine. ``--levels-too`` adds the
per-level reply times. The evaluation played is the shipped one unless ``XIANGQI_EVAL`` names
other tables (``XIANGQI_EVAL=hand``: the hand-set ones), and is printed with the CPU model.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from xiangqi.core.board import Board
from xiangqi.engine import LEVELS, Engine, warmup
from xiangqi.engine.movegen import perft

POSITIONS = {
    "start+h2e2": ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", ["h2e2"]),
    "middlegame": ("r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w", []),
    "opening": ("r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/9/P1P1P1P1P/1CN3NC1/9/R1BAKAB1R w", []),
    "endgame": ("3akab2/9/4b4/p3p3p/2p3n2/6P2/P1P1P3P/4B4/4A4/2BAK1R2 w", []),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--master-time", type=float, default=LEVELS["master"].time)
    ap.add_argument("--levels-too", action="store_true", help="also time every level's reply")
    args = ap.parse_args()
    from xiangqi.engine.evaluate import tables_source

    print(f"CPU: {_cpu_model()}; evaluation: {tables_source()}")
    warmup(background=False)
    t = time.perf_counter()
    n = perft(Board(), 4)
    perft_nps = n / (time.perf_counter() - t)
    print(f"perft 4 (peer): {perft_nps / 1e6:.1f} M nodes/s")
    boards = []
    for fen, moves in POSITIONS.values():
        b = Board(fen)
        for m in moves:
            b.push_iccs(m)
        boards.append(b)
    master = dataclasses.replace(LEVELS["master"], time=args.master_time)
    total_nodes = 0
    total_time = 0.0
    total_cpu = 0.0
    for name, b in zip(POSITIONS, boards, strict=True):
        eng = Engine(hash_mb=64)
        c0 = time.process_time()
        res = eng.play(b, master)
        cpu = time.process_time() - c0
        total_nodes += res.nodes
        total_time += res.time_s
        total_cpu += cpu
        print(f"大师 {name:12s} depth {res.depth:2d} nodes {res.nodes:9d} time {res.time_s:.2f} s "
              f"cpu {cpu:.2f} s nps {res.nodes / res.time_s / 1e6:.2f} M "
              f"(cpu {res.nodes / cpu / 1e6:.2f} M)  move {res.move}")
    nps = total_nodes / total_time
    print(f"大师 search: {nps / 1e6:.2f} M nodes/s wall, {total_nodes / total_cpu / 1e6:.2f} M nodes/s "
          f"CPU time (search nps / perft nps = {nps / perft_nps:.3f})")
    if not args.levels_too:
        return
    for key, lv in LEVELS.items():
        if key == "master":
            lv = master
        times = []
        depths = []
        for b in boards:
            eng = Engine(hash_mb=64)
            t = time.perf_counter()
            res = eng.play(b, lv, seed=1)
            times.append(time.perf_counter() - t)
            depths.append(res.depth)
        print(f"{lv.name_zh} ({key}): reply median {statistics.median(times):.2f} s, max {max(times):.2f} s, "
              f"depths {depths}")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


if __name__ == "__main__":
    main()
