"""Texel tuning of the evaluation's pattern weights on master games.

Data source: the Chinese Chess Practical Dataset (CCPD, CC BY 4.0, "Yu-Han Tseng
and Bo-Nian Chen (2026)"), master games 1950–2013 with results, read from the
team corpus ``../shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz`` (folder
``Dataset/對局``, Big5 Chinese PGN, parsed by :mod:`xiangqi.core.records`).

Two steps::

    .venv/bin/python tools/tune_eval.py extract --games 4000 --out /tmp/xq_positions.tsv
    .venv/bin/python tools/tune_eval.py tune --data /tmp/xq_positions.tsv

``extract`` samples quiet positions (not in check, the last move not a capture,
from ply 16 on, every 3rd ply) from each game with a 1-0 / 0-1 / 1/2-1/2 result
and writes ``fen<TAB>result`` (result for Red: 1, 0.5, 0). ``tune`` fits the
scale K of ``sigmoid(K * eval)`` to the results, then minimises the mean squared
error over the pattern weights :data:`xiangqi.engine.evaluate.W` by coordinate
descent (Texel's method: each weight ±step while the error falls, steps halving),
on a training split, and reports the error on the held-out split. It prints the
new weights as a Python list to paste into evaluate.py; nothing is changed
automatically.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/corpus.py, also when loaded by path
from corpus import CORPUS, RESULTS, read_games  # noqa: E402

FOLDER = "/對局/"


def extract(path: str, games: int, out: str, seed: int) -> None:
    """Write ``fen\\tresult`` lines of quiet positions from up to ``games`` master games."""
    rng = random.Random(seed)
    n_games = 0
    n_pos = 0
    with open(out, "w", encoding="utf-8") as fh:
        # rng.random() > 0.15 skips a file: spread the sample over the whole collection
        for _name, recs in read_games(path, FOLDER, lambda _: rng.random() <= 0.15):
            if n_games >= games:
                break
            for g in recs:
                res = RESULTS.get(g.headers.get("Result", ""))
                if res is None or g.errors:
                    continue
                b = g.board()
                moves = g.mainline_moves()
                if len(moves) < 30:
                    continue
                n_games += 1
                for ply, m in enumerate(moves):
                    if not b.is_legal(m):
                        break
                    cap = b.is_capture(m)
                    b.push(m, validate=False)
                    if ply >= 16 and ply % 3 == 0 and not cap and not b.is_check():
                        fh.write(f"{b.fen()}\t{res}\n")
                        n_pos += 1
    print(f"{n_games} games, {n_pos} positions -> {out}")


def _load(path: str):
    from xiangqi.core.board import Board
    from xiangqi.engine.evaluate import material_state
    from xiangqi.engine.movegen import board_arrays

    bds, kss, sides, states, results = [], [], [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fen, res = line.rstrip("\n").split("\t")
            bd, ks, side = board_arrays(Board(fen))
            bds.append(bd)
            kss.append(ks)
            sides.append(side)
            states.append(material_state(bd))
            results.append(float(res))
    return (np.array(bds), np.array(kss), np.array(sides, np.int64), np.array(states, np.int64),
            np.array(results))


def _evals(bds, kss, sides, states, w):
    from xiangqi.engine._numba import njit
    from xiangqi.engine.evaluate import evaluate_with

    @njit
    def run(bds, kss, sides, states, w):
        out = np.zeros(bds.shape[0], np.float64)
        for i in range(bds.shape[0]):
            s = evaluate_with(bds[i], kss[i], sides[i], states[i, 0], states[i, 1], states[i, 2], w)
            out[i] = s if sides[i] == 0 else -s  # Red's point of view
        return out

    return run(bds, kss, sides, states, w)


def _error(ev, results, k):
    p = 1.0 / (1.0 + np.exp(-k * ev / 100.0))
    return float(np.mean((results - p) ** 2))


def tune(data: str, rounds: int, seed: int) -> None:
    """Fit K, then the pattern weights by coordinate descent; print the result."""
    from xiangqi.engine.evaluate import W

    bds, kss, sides, states, results = _load(data)
    idx = np.arange(len(results))
    np.random.default_rng(seed).shuffle(idx)
    cut = int(len(idx) * 0.8)
    tr, te = idx[:cut], idx[cut:]
    w = W.copy()
    ev = _evals(bds, kss, sides, states, w)
    ks_grid = np.linspace(0.1, 2.0, 96)
    k = float(ks_grid[np.argmin([_error(ev[tr], results[tr], x) for x in ks_grid])])
    base_tr = _error(ev[tr], results[tr], k)
    base_te = _error(ev[te], results[te], k)
    print(f"{len(results)} positions; K = {k:.3f}; error train {base_tr:.5f} test {base_te:.5f}")
    best = base_tr
    step = 8
    for r in range(rounds):
        improved = False
        for j in range(len(w)):
            for delta in (step, -step):
                trial = w.copy()
                trial[j] += delta
                e = _error(_evals(bds[tr], kss[tr], sides[tr], states[tr], trial), results[tr], k)
                if e < best - 1e-7:
                    best, w = e, trial
                    improved = True
                    break
        print(f"round {r + 1}: step {step}, train error {best:.5f}, weights {w.tolist()}")
        sys.stdout.flush()
        if not improved:
            if step == 1:
                break
            step //= 2
    final_te = _error(_evals(bds[te], kss[te], sides[te], states[te], w), results[te], k)
    print(f"test error {base_te:.5f} -> {final_te:.5f}")
    print(f"W = {w.tolist()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("extract")
    p.add_argument("--corpus", default=CORPUS)
    p.add_argument("--games", type=int, default=4000)
    p.add_argument("--out", default="/tmp/xq_positions.tsv")
    p.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("tune")
    p.add_argument("--data", default="/tmp/xq_positions.tsv")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.cmd == "extract":
        extract(args.corpus, args.games, args.out, args.seed)
    else:
        tune(args.data, args.rounds, args.seed)


if __name__ == "__main__":
    main()
