"""Perft speed of the Numba move generator against Debian's Fairy-Stockfish, measured in the same run.

Run: ``.venv/bin/python bench/bench_perft.py [--depth 5] [--fsf /usr/games/fairy-stockfish]``.
Prints the nodes, seconds and nodes/s of ``xiangqi.engine.movegen.perft`` and of
Fairy-Stockfish's ``go perft`` (UCI, ``UCI_Variant xiangqi``) from the start position,
then the ratio ours / theirs (issue 5 target: at least 2). Both use one thread and
bulk counting at the last ply; the compile time of our kernel is excluded (a
warm-up call first). No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import time

from xiangqi.core.board import Board
from xiangqi.engine.movegen import perft


def ours(depth: int, repeat: int) -> tuple[int, float]:
    """``(nodes, best seconds)`` of our perft."""
    perft(Board(), 2)  # compile / load from cache
    best = float("inf")
    n = 0
    for _ in range(repeat):
        t = time.perf_counter()
        n = perft(Board(), depth)
        best = min(best, time.perf_counter() - t)
    return n, best


def fairy(exe: str, depth: int, repeat: int) -> tuple[int, float]:
    """``(nodes, best seconds)`` of Fairy-Stockfish's ``go perft`` (wall time around the command)."""
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert p.stdin and p.stdout

    def send(cmd: str) -> None:
        p.stdin.write(cmd + "\n")
        p.stdin.flush()

    def wait_for(prefix: str) -> str:
        while True:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"{exe} exited while waiting for {prefix!r}")
            if line.startswith(prefix):
                return line

    send("uci")
    wait_for("uciok")
    send("setoption name UCI_Variant value xiangqi")
    send("setoption name Threads value 1")
    send("isready")
    wait_for("readyok")
    best = float("inf")
    n = 0
    for _ in range(repeat):
        send("position startpos")
        t = time.perf_counter()
        send(f"go perft {depth}")
        line = wait_for("Nodes searched")
        best = min(best, time.perf_counter() - t)
        n = int(re.findall(r"\d+", line)[0])
    send("quit")
    p.wait(10)
    return n, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--fsf", default="/usr/games/fairy-stockfish")
    args = ap.parse_args()
    n, t = ours(args.depth, args.repeat)
    print(f"numba perft {args.depth}: {n} nodes in {t:.2f} s = {n / t / 1e6:.1f} M nodes/s")
    exe = shutil.which(args.fsf) or args.fsf
    try:
        fn, ft = fairy(exe, args.depth, args.repeat)
    except (OSError, RuntimeError) as exc:
        print(f"fairy-stockfish not available ({exc}); no ratio")
        return
    print(f"fairy-stockfish perft {args.depth}: {fn} nodes in {ft:.2f} s = {fn / ft / 1e6:.1f} M nodes/s")
    if fn != n:
        print(f"WARNING: node counts differ ({n} vs {fn})")
    print(f"ratio numba / fairy-stockfish: {(n / t) / (fn / ft):.2f}")


if __name__ == "__main__":
    main()
