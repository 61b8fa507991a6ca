"""Match rates of the referee on the rule-book cases in tests/data (issue 11).

Run: ``PYTHONPATH=src python bench/measure_referee.py [--detail]``. Prints, for the CXA
figures (repetition_cxa.tsv) and the AXF rows (repetition_axf.tsv): the verdict match
rate, the per-move class agreement with the figure captions (CXA), the disagreements
by kind (official class -> ours) and the rows missed. No value is asserted here; the
tests in tests/referee pin them.
"""

from __future__ import annotations

import collections
import re
import sys
import time
from pathlib import Path

from xiangqi.core.classify import IDLE
from xiangqi.core.referee import CXA, classify_cycle, effective_class, repetition_cycle

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests/conftest.py
from tests.conftest import play, winner  # noqa: E402 (the tests' own readers of tests/data)
from tests.conftest import read_tsv as rows  # noqa: E402

_NOTE_CLASS = re.compile(r"[（(]\s*(将|杀|捉|闲|兑|献|拦|跟)\s*[）)]")
_IDLE_KINDS = {"兑": IDLE, "献": IDLE, "拦": IDLE, "跟": IDLE}


def main() -> None:
    detail = "--detail" in sys.argv
    cx = rows("repetition_cxa.tsv")
    miss = []
    agree = total = 0
    kinds: collections.Counter[str] = collections.Counter()
    slowest = (0.0, "")
    times: list[float] = []
    for r in cx:
        b = play(r["fen"], r["moves"])
        t = time.process_time()  # CPU time: the machine may be shared; wall time would count others
        got = winner(b, "cxa")
        dt = time.process_time() - t
        slowest = max(slowest, (dt, r["id"]))
        times.append(dt)
        per_loop = len(r["moves"].split()) // 2
        official_raw = _NOTE_CLASS.findall(r["note"])[:per_loop]
        official = [_IDLE_KINDS.get(c, c) for c in official_raw]
        cycle = classify_cycle(b, repetition_cycle(b)[0], CXA)
        ours = [effective_class(mc, CXA) for mc in cycle][: len(official)]
        total += len(official)
        for raw, o, x, mc in zip(official_raw, official, ours, cycle, strict=False):
            if o == x:
                agree += 1
            else:
                kinds[f"{raw}->{x}"] += 1
                if detail:
                    print(f"  {r['id']} {mc.move.iccs()}: official {raw}, ours {x} {mc.chases}")
        if got != r["winner"]:
            miss.append((r["id"], r["winner"], got, "".join(official_raw), "".join(ours)))
    print(f"CXA verdicts: {len(cx) - len(miss)}/{len(cx)} ({100 * (1 - len(miss) / len(cx)):.0f}%)")
    missed = {m[0] for m in miss}
    for group, prefix in (("图 (main figures)", "CXA-fig"), ("参考图 (reference figures)", "CXA-ref")):
        ids = [r["id"] for r in cx if r["id"].startswith(prefix)]
        ok = sum(1 for i in ids if i not in missed)
        print(f"  {group}: {ok}/{len(ids)}")
    print(f"CXA move classes vs captions: {agree}/{total} ({100 * agree / total:.0f}%)")
    print("CXA class disagreements (official->ours):", dict(kinds.most_common()))
    for m in miss:
        print("  miss", *m)
    times.sort()
    print(f"CXA slowest ruling: {slowest[1]} {slowest[0] * 1000:.0f} ms CPU; median "
          f"{times[len(times) // 2] * 1000:.0f} ms")
    ax = rows("repetition_axf.tsv")
    amiss = []
    for r in ax:
        got = winner(play(r["fen"], r["moves"]), "axf")
        if got != r["winner"]:
            amiss.append((r["id"], r["winner"], got))
    print(f"AXF verdicts: {len(ax) - len(amiss)}/{len(ax)} ({100 * (1 - len(amiss) / len(ax)):.0f}%)")
    for m in amiss:
        print("  miss", *m)


if __name__ == "__main__":
    main()
