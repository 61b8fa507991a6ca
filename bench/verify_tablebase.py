"""Verification of generated endgame tables, per ending (issue 14): child consistency and DTM
against an exhaustive mate search; writes a markdown table.

Run from the repository root:
``nice -n 19 .venv/bin/python bench/verify_tablebase.py --dir DIR [--out docs/TABLEBASE_VERIFICATION.md]
[--samples 2000] [--budget-s 60] [ENDING...]`` (default: every table in ``DIR``, smallest first).

For each ending:

* ``--samples`` random legal positions (both sides to move): the value read through the core
  :class:`~xiangqi.core.board.Board` and the pure-Python index (``Tablebase.value``) equals the
  stored one, and every child is consistent (a win has a child lost at DTM-1 and none shorter; a
  loss has every child won, one at DTM-1; a draw has a drawn child and none lost);
* positions with short mates (up to ``samples / 4``) alternating with the random ones: the
  exhaustive mate search of ``tests/engine/tb_mate_search.py`` (the real game tree with captures,
  no tables, no generator code) to depth 7 (:data:`DEEP`) or 5 gives the table's code whenever the
  mate is that short, and nothing otherwise.

Each of the two checks stops after half of ``--budget-s`` seconds per ending (the counts checked
are reported). Exit
status 1 when any position disagrees (listed on stderr).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.engine.tb_mate_search

from tests.engine.tb_mate_search import mate_value  # noqa: E402

from xiangqi.core.board import Board, grid_board_fen  # noqa: E402
from xiangqi.engine import tablebase as tb  # noqa: E402
from xiangqi.engine import tbgen  # noqa: E402

#: Endings searched to 7 plies (few pieces: the search is cheap there); the others to 5.
DEEP = {"KRK", "KNK", "KPK", "KPKP", "KRKA", "KPKA", "KPKB", "KNKA", "KNKB"}


def _board(end, sqs, red_to_move):
    grid = [None] * 90
    for code, s in zip(end.slots(), sqs, strict=True):
        grid[int(s)] = " kabnrcp"[abs(code)].upper() if code > 0 else " kabnrcp"[abs(code)]
    return Board(f"{grid_board_fen(grid)} {'w' if red_to_move else 'b'} - - 0 1")


def _children_ok(base, board, code) -> bool:
    kids = []
    for m in list(board.legal_moves):
        board.push(m, validate=False)
        kids.append(base.value(board)[0])
        board.pop()
    if tb.INVALID in kids:
        return False
    if code > 0:
        return -code in kids and all(not (-code < k < 0) for k in kids)
    if code < 0:
        dtm = -code - 1
        return all(0 < k <= dtm - 1 for k in kids) and (dtm == 0 or dtm - 1 in kids) and \
            (dtm == 0) == (kids == [])
    return 0 in kids and all(k >= 0 for k in kids)


def verify(directory: Path, name: str, samples: int, budget_s: float, seed: int = 1) -> dict:
    """Check ``samples`` random positions of ``name`` (see the module docstring); a dict of counts."""
    end = tb.Ending.parse(name)
    values, header = tb.load_values(directory, name)
    base = tb.Tablebase(directory)
    ng, gs, gc, gl, rd, _ = tb._layouts([end])
    sq = np.zeros(len(end.slots()), np.int64)
    depth = 7 if name in DEEP else 5
    rng = random.Random(seed)
    legal = np.argwhere(values != tb.INVALID)
    picks = [tuple(int(x) for x in legal[rng.randrange(len(legal))]) for _ in range(samples)]
    mag = np.abs(values.astype(np.int32))
    short = np.argwhere((values != tb.INVALID) & (mag <= depth + 1) & (values != 0))
    n_extra = min(samples // 4, len(short))
    extra = [tuple(int(x) for x in short[rng.randrange(len(short))]) for _ in range(n_extra)]
    out = {"ending": name, "stats": header["stats"], "depth": depth, "children_checked": 0,
           "children_bad": 0, "search_checked": 0, "mates_compared": 0, "search_bad": 0, "bad": []}
    t0 = time.perf_counter()
    for side, idx in picks:
        if time.perf_counter() - t0 > budget_s / 2:
            break
        code = int(values[side, idx])
        tbgen.decode(0, idx, sq, ng, gs, gc, gl, rd)
        board = _board(end, sq, side == 0)
        out["children_checked"] += 1
        if not (base.value(board) == (code, name) and _children_ok(base, board, code)):
            out["children_bad"] += 1
            out["bad"].append(f"children {board.fen()} {code}")
    t1 = time.perf_counter()
    # the search: short mates first (each is compared), then random positions (the search must find
    # the table's short mates and nothing where the table says longer or drawn)
    mixed = [p for pair in zip(extra, picks, strict=False) for p in pair] + picks[len(extra):]
    for side, idx in mixed:
        if time.perf_counter() - t1 > budget_s / 2:
            break
        code = int(values[side, idx])
        tbgen.decode(0, idx, sq, ng, gs, gc, gl, rd)
        board = _board(end, sq, side == 0)
        found = mate_value(board, depth)
        dtm = code if code > 0 else (-code - 1 if code < 0 else None)
        out["search_checked"] += 1
        if dtm is not None and dtm <= depth:
            out["mates_compared"] += 1
        if found != (code if dtm is not None and dtm <= depth else 0):
            out["search_bad"] += 1
            out["bad"].append(f"search {board.fen()} table {code} search {found}")
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def table(rows: list[dict]) -> str:
    """Markdown: per ending the counts checked and the disagreements."""
    lines = ["| ending | positions checked (children) | bad | search depth (plies) | positions searched | "
             "mates compared | bad | seconds |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['ending']} | {r['children_checked']:,} | {r['children_bad']} | {r['depth']} | "
                     f"{r['search_checked']:,} | {r['mates_compared']:,} | {r['search_bad']} | "
                     f"{r['seconds']} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("endings", nargs="*")
    ap.add_argument("--dir", required=True, help="the table directory")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--budget-s", type=float, default=60.0, help="seconds per ending at most")
    ap.add_argument("--out", default=None, help="also write the markdown table (appended rows) here")
    args = ap.parse_args()
    d = Path(args.dir)
    names = args.endings or sorted(tb.Tablebase(d).available(), key=lambda n: (tb.Ending.parse(n).size(), n))
    rows = []
    bad = 0
    for n in names:
        r = verify(d, n, args.samples, args.budget_s)
        rows.append(r)
        bad += r["children_bad"] + r["search_bad"]
        for b in r["bad"]:
            print(f"{n}: {b}", file=sys.stderr)
        print(table([r]).splitlines()[-1], flush=True)
        if args.out:
            Path(args.out).write_text(table(rows) + "\n", encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
