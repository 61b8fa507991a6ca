"""Speed of the NNUE evaluation against the Texel tables: static evaluations/s and search nodes/s.

Run: ``PYTHONPATH=src python bench/bench_nnue.py [--depth 9] [--rounds 2]``.

Both evaluations run in the same process, interleaved (texel, nnue, texel, nnue, …), because the
choice is made per search (``Engine.evaluation``, read by the engine at every search): on a shared
machine the two then see the same load. Per evaluation it prints

* the static evaluation alone: calls/s of ``evaluate`` (Texel, from the incremental material
  sums) and of the network's forward pass (from the accumulator), on the positions below;
* the accumulator's incremental update (push of one move, both perspectives) per second;
* the search: the four positions of bench/bench_search.py to a fixed ``--depth`` (fresh 64 MB
  hash each), nodes, CPU seconds of this process (``time.process_time``) and nodes per CPU second.

The trees differ (the evaluations differ), so the depth-limited node counts are printed too; the
figure to compare is nodes per CPU second. The CPU model is printed with the ratios. No timing is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search import POSITIONS, _cpu_model  # noqa: E402

from xiangqi.core.board import Board  # noqa: E402
from xiangqi.engine import Engine, Limit, nnue  # noqa: E402
from xiangqi.engine._numba import njit  # noqa: E402
from xiangqi.engine.evaluate import evaluate, material_state  # noqa: E402
from xiangqi.engine.movegen import board_arrays  # noqa: E402


@njit
def _texel_loop(bd, ks, side, n):
    mg, eg, ph = material_state(bd)
    s = 0
    for i in range(n):
        s += evaluate(bd, ks, side, mg + (i & 1), eg, ph)
    return s


@njit
def _nnue_loop(st, side, n):
    s = 0
    for _i in range(n):
        s += nnue.forward(st, side)
        st[nnue.ST_SP] = 0
    return s


@njit
def _push_loop(st, p, frm, to, n):
    for _i in range(n):
        nnue.acc_push(st, p, frm, to, 0)
        st[nnue.ST_SP] = 0
    return st[nnue.ST_SP]


def _boards() -> list[Board]:
    out = []
    for fen, moves in POSITIONS.values():
        b = Board(fen)
        for m in moves:
            b.push_iccs(m)
        out.append(b)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=2, help="texel/nnue alternations of the search part")
    ap.add_argument("--calls", type=int, default=200_000, help="static evaluations per position timed")
    args = ap.parse_args()
    print(f"CPU: {_cpu_model()}; network: {nnue.net_path()}")
    boards = _boards()
    st = nnue.new_state()
    t_tex = t_nn = t_push = 0.0
    for b in boards:
        bd, ks, side = board_arrays(b)
        nnue.refresh(bd, st)
        _texel_loop(bd, ks, side, 10)
        _nnue_loop(st, side, 10)
        sq = int(np.nonzero(bd)[0][0])
        _push_loop(st, int(bd[sq]), sq, sq, 10)
        c = time.process_time()
        _texel_loop(bd, ks, side, args.calls)
        t_tex += time.process_time() - c
        c = time.process_time()
        _nnue_loop(st, side, args.calls)
        t_nn += time.process_time() - c
        c = time.process_time()
        _push_loop(st, int(bd[sq]), sq, sq, args.calls)
        t_push += time.process_time() - c
    n = args.calls * len(boards)
    print(f"static eval: texel {n / t_tex / 1e6:.2f} M/s, nnue forward {n / t_nn / 1e6:.2f} M/s, "
          f"nnue accumulator push {n / t_push / 1e6:.2f} M/s (CPU time)")
    totals = {"texel": [0, 0.0], "nnue": [0, 0.0]}
    for _ in range(args.rounds):
        for name in ("texel", "nnue"):
            for pname, b in zip(POSITIONS, boards, strict=True):
                eng = Engine(hash_mb=64)
                eng.evaluation = name
                eng.search(b, Limit(depth=2))  # compile / load the kernels outside the timing
                eng = Engine(hash_mb=64)
                eng.evaluation = name  # per engine (Engine.evaluation), whatever XIANGQI_EVAL says
                c = time.process_time()
                res = eng.search(b, Limit(depth=args.depth))
                cpu = time.process_time() - c
                totals[name][0] += res.nodes
                totals[name][1] += cpu
                print(f"{name:5s} {pname:12s} depth {res.depth} nodes {res.nodes:8d} cpu {cpu:.2f} s "
                      f"({res.nodes / cpu / 1e6:.3f} M/s) move {res.move} score {res.score_cp}")
    nps = {k: v[0] / v[1] for k, v in totals.items()}
    for k, v in totals.items():
        print(f"{k}: {v[0]} nodes in {v[1]:.2f} s CPU = {nps[k] / 1e6:.3f} M nodes/s")
    print(f"nnue / texel nodes per CPU second: {nps['nnue'] / nps['texel']:.3f} (CPU: {_cpu_model()})")


if __name__ == "__main__":
    main()
