"""Why the first tuning attempt (tools/tune_eval.py) lost its match 5-16-3: measurements.

    nice -n 19 python tools/texel_postmortem.py --old /work/tune-data/old/xq_positions.tsv \\
        --data /work/tune-data [--old-w 3,4,-25,...]

Prints, for the positions tools/tune_eval.py extracted (``fen<TAB>result``):

* the share of lines that are exact copies of another line (the collection files most games two
  or more times, and tune_eval.py did not drop repeated games),
* the share of its random 20 % "test" positions that also occur in its 80 % training positions
  (its split was by position, not by game: the test error could not show overfitting),
* the share of its positions that are not quiet by the engine's own quiescence search
  (texel_data.QuietTest: a capture wins material at once; the label then says little about
  the static evaluation),
* with ``--old-w`` (the weights tune_eval.py printed): the Texel error of those weights and of the
  hand weights on the validation games of tools/texel_data.py's data (held-out games, K refitted
  for each), which is the honest test of the old fit.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="/work/tune-data/old/xq_positions.tsv")
    ap.add_argument("--data", default="/work/tune-data")
    ap.add_argument("--old-w", default=None, help="comma-separated weights printed by tune_eval.py")
    ap.add_argument("--sample", type=int, default=20000, help="positions tested for quietness")
    args = ap.parse_args()

    from xiangqi.core.board import Board

    lines = Path(args.old).read_text(encoding="utf-8").splitlines()
    fens = [ln.split("\t")[0] for ln in lines]
    counts = Counter(fens)
    dup = sum(c - 1 for c in counts.values())
    print(f"old data: {len(fens)} positions, {len(counts)} distinct; {dup} ({100 * dup / len(fens):.1f}%) "
          "are copies of another line")
    idx = np.arange(len(fens))
    np.random.default_rng(1).shuffle(idx)  # tune_eval.py's split (seed 1, 80/20)
    cut = int(len(idx) * 0.8)
    train = {fens[i] for i in idx[:cut]}
    leak = sum(1 for i in idx[cut:] if fens[i] in train)
    print(f"old split: {leak} of {len(idx) - cut} test positions ({100 * leak / (len(idx) - cut):.1f}%) also "
          "occur in its training set")
    from texel_data import QuietTest

    q = QuietTest()
    pick = random.Random(2).sample(range(len(fens)), min(args.sample, len(fens)))
    noisy = sum(1 for i in pick if not q(Board(fens[i]))[0])
    print(f"old positions not quiet (a capture wins material at once): {noisy} of {len(pick)} "
          f"({100 * noisy / len(pick):.1f}%)")
    if args.old_w:
        import texel_tune as tt
        from texel_data import load

        data = load(args.data)
        feats = tt.build_features(data)
        _, va = tt.split(data["game"])
        tr, _ = tt.split(data["game"])
        mva = tt.Model(feats, va, data["result"])
        mtr = tt.Model(feats, tr[::10], data["result"])
        th0 = tt.initial_theta()
        k = tt.fit_k(mtr, th0)
        th_old = th0.copy()
        th_old[tt.O_W:tt.O_W + tt.NPAT] = [float(x) for x in args.old_w.split(",")]
        k_old = tt.fit_k(mtr, th_old)
        print(f"validation games: hand weights {mva.error(th0, k):.6f} (K {k:.6f}); tune_eval.py's weights "
              f"{mva.error(th_old, k_old):.6f} (K {k_old:.6f}), at the hand K {mva.error(th_old, k):.6f}")


if __name__ == "__main__":
    main()
