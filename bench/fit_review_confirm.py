"""Fit the confirmation's blunder (??) line on the tuning games: a grid over its thresholds, scored
against the deeper reference (Fairy-Stockfish), from one dump of ``bench_review_reference.py``.

The dump holds, for every ply, the first pass's evaluations, the confirmation's searches (before,
after, second-best; the second-best searched from a low loss so that every threshold of the grid
has it) and the reference's clamped loss. Made by::

    PYTHONPATH=src nice -n 10 python bench/bench_review_reference.py --games weak --ref-depth 16 \\
        --set tuning --confirm 11 --second-from 120 --dump /tmp/tuning.json
    PYTHONPATH=src python bench/fit_review_confirm.py /tmp/tuning.json

A ply is classified again for each grid point, without a search: an endgame table's verdict first,
then, for a confirmed ply, :func:`xiangqi.study.review.classify_confirmed` with the blunder threshold
``T`` (cp, clamped loss), the second-best margin ``S`` (cp), and, when ``W`` > 0, a blunder also
needs the mover's drop in win chance (deeper scores, -100..100 scale, ``study.review.win_chance``)
of at least ``W`` (else it is a mistake); the other plies keep their first-pass class.

The choice: a grid point's utility is ``confirmed - 4 x unconfirmed`` blunders (a ?? is worth
marking when it is confirmed at least 4 times in 5, the 80 % of the goal of issue #29); the tuning
set has about ten ??, so one ply moves the plain maximum, and the chosen point is the one whose
*worst* utility over its neighbours (one grid step either way in ``T``, ``S`` and ``W``) is the
highest, ties to its own utility, then to the current constants. Goal 1 (reference blunders
marked ? or ??) does not depend on the blunder line (a ply above the mistake threshold is ? or
??), so it is printed only.
Fit on the tuning set only; the held-out set is measured with the chosen constants by the bench.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from xiangqi.study import review as rv

BLUNDER_CP = 300  # a reference blunder (bench_review_reference.py)
T_GRID = tuple(range(160, 421, 20))
S_GRID = (0, 50, 75, 100, 125, 150)
W_GRID = (0, 10, 15, 20, 25, 30)


def _ev(d: dict | None) -> rv.PositionEval | None:
    return None if d is None else rv.PositionEval.from_dict(d)


def classify(row: dict, t: int, s: int, w: float) -> str:
    """The class of one dumped ply at the grid point ``(t, s, w)`` (module docstring)."""
    before, after = _ev(row["before"]), _ev(row["after"])
    by_table = rv.classify_by_table(before.tb, after.tb, row["best"])
    if by_table is not None:
        return by_table
    if row["confirm"] is None:
        return row["cls"]
    b, a, sec = (_ev(e) for e in row["confirm"])
    red = row["color"] == "red"
    thresholds = ((t, "blunder"),) + tuple(x for x in rv.CONFIRM_THRESHOLDS if x[1] != "blunder")
    cls, _ = rv.classify_confirmed(red, b, a, sec, second_cp=s, thresholds=thresholds)
    if cls == "blunder" and w > 0:
        sign = 1 if red else -1
        if sign * (b.win - a.win) < w:
            return "mistake"
    return cls


def score(rows: list[dict], t: int, s: int, w: float) -> dict:
    """Goal 1 (marked / reference blunders) and goal 2 (confirmed / our ??) at one grid point."""
    ref = marked = ours = conf = 0
    for row in rows:
        cls = classify(row, t, s, w)
        if row["loss"] >= BLUNDER_CP:
            ref += 1
            marked += cls in ("mistake", "blunder")
        if cls == "blunder":
            ours += 1
            conf += row["loss"] >= BLUNDER_CP
    return {
        "t": t,
        "s": s,
        "w": w,
        "ref": ref,
        "marked": marked,
        "ours": ours,
        "confirmed": conf,
        "utility": conf - 4 * (ours - conf),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump", help="bench_review_reference.py --dump output of the tuning set")
    args = ap.parse_args()
    rows = json.loads(Path(args.dump).read_text())
    current = (rv.CONFIRM_THRESHOLDS[0][0], rv.CONFIRM_SECOND_CP, 0)
    table = {(t, s, w): score(rows, t, s, w) for t in T_GRID for s in S_GRID for w in W_GRID}

    def near(grid: tuple, v) -> tuple:
        k = grid.index(v)
        return grid[max(0, k - 1) : k + 2]

    def worst(key: tuple) -> int:
        t, s, w = key
        return min(
            table[(a, b, c)]["utility"]
            for a in near(T_GRID, t)
            for b in near(S_GRID, s)
            for c in near(W_GRID, w)
        )

    def rank(key: tuple):
        g = table[key]
        dist = abs(key[0] - current[0]) / 20 + abs(key[1] - current[1]) / 25 + key[2] / 5
        return (-worst(key), -g["utility"], -g["confirmed"], dist)

    keys = sorted(table, key=rank)
    now = table[current]
    print(
        f"current T={current[0]} S={current[1]} W=0: goal 1 {now['marked']}/{now['ref']}, "
        f"goal 2 {now['confirmed']}/{now['ours']}, utility {now['utility']}, worst around {worst(current)}"
    )
    print("best grid points (T cp, S cp, W win chance): goal 1, goal 2, utility, worst utility around")
    for key in keys[:12]:
        g = table[key]
        print(
            f"  T={key[0]:3d} S={key[1]:3d} W={key[2]:2}: {g['marked']}/{g['ref']}, "
            f"{g['confirmed']}/{g['ours']}, {g['utility']}, {worst(key)}"
        )
    plain = max(table, key=lambda k: (table[k]["utility"], table[k]["confirmed"], -rank(k)[3]))
    print(
        f"the plain maximum of the utility: T={plain[0]} S={plain[1]} W={plain[2]} "
        f"({table[plain]['confirmed']}/{table[plain]['ours']}, {table[plain]['utility']})"
    )
    print("the blunder threshold alone (S and W at the current values): confirmed/ours")
    for t in T_GRID:
        g = table[(t, current[1], 0)]
        print(f"  T={t:3d}: {g['confirmed']}/{g['ours']}")
    print(f"chosen: T={keys[0][0]} S={keys[0][1]} W={keys[0][2]}")


if __name__ == "__main__":
    main()
