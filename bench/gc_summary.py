"""Summary of a garbage-collector log of ``bench/gc_probe`` (see its docstring).

Run: ``python bench/gc_summary.py LOG [--from T0] [--to T1]`` (unix times; default: the whole log).
Prints per generation the collections, per minute, the objects scanned (median, max), the CPU and
wall milliseconds (median, max) and how many took 50 ms and 100 ms of CPU or more.
"""

from __future__ import annotations

import argparse
import statistics


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--from", dest="t0", type=float, default=None)
    ap.add_argument("--to", dest="t1", type=float, default=None)
    args = ap.parse_args()
    rows = []
    for line in open(args.log, encoding="utf-8"):
        p = line.split()
        if len(p) >= 10 and p[1].startswith("gen"):
            t = float(p[0])
            if (args.t0 is None or t >= args.t0) and (args.t1 is None or t <= args.t1):
                rows.append((t, int(p[1][3:]), float(p[3]), float(p[5]), int(p[9])))
        elif len(p) >= 3 and p[1] == "frozen":
            print(line.rstrip())
    if not rows:
        print("no collections in the window")
        return 1
    minutes = max((rows[-1][0] - rows[0][0]) / 60, 1e-9)
    for g in (0, 1, 2):
        r = [x for x in rows if x[1] == g]
        if not r:
            print(f"gen{g}: none")
            continue
        cpu, wall, scanned = [x[3] for x in r], [x[2] for x in r], [x[4] for x in r if x[4] >= 0]
        note = " (only those over 2 ms of wall time are logged)" if g == 0 else ""
        print(f"gen{g}: {len(r)} ({len(r) / minutes:.1f}/min){note}; "
              + (f"scanned median {statistics.median(scanned):.0f} max {max(scanned)}; " if scanned else "")
              + f"cpu ms median {statistics.median(cpu):.1f} max {max(cpu):.1f}; wall ms median "
              f"{statistics.median(wall):.1f} max {max(wall):.1f}; "
              f"cpu >= 50 ms: {sum(c >= 50 for c in cpu)}, >= 100 ms: {sum(c >= 100 for c in cpu)}")
    print(f"window {minutes:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
