"""Search speed at 大师 and the reply time of every level, measured on this machine.

Run: ``.venv/bin/python bench/bench_search.py [--master-time 3]``.
For a few typical positions (opening, middlegame, endgame) it prints the nodes/s
of the search at 大师 (``Engine.play`` with the master level's time), and for each
level the reply time of ``Engine.play`` (median and maximum over the positions,
fresh hash per game as in a new game). The peer for the nodes/s figure is our
own perft speed in the same run (``search nps / perft nps``), so the numbers can
be compared across machines. Kernels are compiled before timing. No timing is
asserted anywhere.
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
    args = ap.parse_args()
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
    for name, b in zip(POSITIONS, boards, strict=True):
        eng = Engine(hash_mb=64)
        res = eng.play(b, master)
        total_nodes += res.nodes
        total_time += res.time_s
        print(f"大师 {name:12s} depth {res.depth:2d} nodes {res.nodes:9d} time {res.time_s:.2f} s "
              f"nps {res.nodes / res.time_s / 1e6:.2f} M  move {res.move}")
    nps = total_nodes / total_time
    print(f"大师 search: {nps / 1e6:.2f} M nodes/s (search nps / perft nps = {nps / perft_nps:.3f})")
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


if __name__ == "__main__":
    main()
