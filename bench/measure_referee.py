"""Match rates of the referee on the rule-book cases (issues 11, 28).

Run: ``PYTHONPATH=src python bench/measure_referee.py [--detail] [--pyffish]``. Prints, for
two sets of CXA 2020 rule-book figures, the verdict match rate, the per-move class agreement
with the figure captions by the caption's class (将 杀 捉 闲 兑 献 拦 跟), the verdicts by
topic (what the figure is about: 兑/献, 拦/不能离线, 杀, 根, king/pawn/advisor moving, 联合捉,
一将一捉 …) and the rows missed:

* ``tests/data/repetition_cxa.tsv``: the 52 figures the tests use (seen while building);
* ``bench/data/repetition_cxa_heldout.tsv``: the other 26 figures of the same rule book
  (图5–9, 11, 13, 14, 16, 17, 21, 30 and 参考图7, 9, 13, 14, 19, 23, 25, 26, 28, 37, 39–42), never
  used by a test or to decide a rule: the held-out check.

Then the AXF rows (repetition_axf.tsv). ``--pyffish`` adds Fairy-Stockfish's verdict
(``pyffish.is_optional_game_end``) on every CXA figure: how often it agrees with the book and with
us, by topic. Fairy-Stockfish implements the Asian rules (AXF), so it is a valid outside judge only
where the two rule sets agree: perpetual check, and a plain perpetual chase of one piece against
idle moves; it is not where the CXA rules differ (长杀 and 一将一捉 forbidden, a chase of several
pieces in turn, 通则 1/3 king and pawn chases, the 2020 responsibility comparison), see
docs/RULES.md §5.5. No value is asserted here; the tests in tests/referee pin them.
"""

from __future__ import annotations

import collections
import csv
import importlib.util
import re
import sys
import time
from pathlib import Path

from xiangqi.core.board import ADVISOR, KING, PAWN, Board, Move
from xiangqi.core.classify import IDLE
from xiangqi.core.referee import CXA, classify_cycle, effective_class, repetition_cycle

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_tests_conftest", ROOT / "tests" / "conftest.py")
_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conftest)  # the tests' own readers of tests/data (by path: a `tests`
play, winner = _conftest.play, _conftest.winner  # package elsewhere on the path must not shadow it)

_NOTE_CLASS = re.compile(r"[（(]\s*(将|杀|捉|闲|兑|献|拦|跟)\s*[）)]")
_IDLE_KINDS = {"兑": IDLE, "献": IDLE, "拦": IDLE, "跟": IDLE}
SETS = (("seen (tests/data/repetition_cxa.tsv)", ROOT / "tests" / "data" / "repetition_cxa.tsv"),
        ("held out (bench/data/repetition_cxa_heldout.tsv)",
         ROOT / "bench" / "data" / "repetition_cxa_heldout.tsv"))


def read(path: Path) -> list[dict[str, str]]:
    """Rows of a repetition TSV (id, ruleset, fen, moves, winner, source, note)."""
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def topics(row: dict[str, str]) -> list[str]:
    """What a figure is about, from its caption's move classes and words and the pieces moved in
    its cycle (one row may have several topics)."""
    note = row["note"]
    per_loop = len(row["moves"].split()) // 2
    kinds = _NOTE_CLASS.findall(note)[:per_loop]
    out = []
    if {"兑", "献"} & set(kinds) or "兑" in note:
        out.append("兑/献 exchange offer")
    if {"拦", "跟"} & set(kinds) or "离线" in note:
        out.append("拦/不能离线 block")
    if "杀" in kinds:
        out.append("杀 mate threat")
    if "将" in kinds and "捉" in kinds:
        out.append("将+捉 mixed")
    if "根" in note:
        out.append("根 roots (有根/无根/假根/少根)")
    if "联合" in note:
        out.append("联合捉 joint chase")
    b = Board(row["fen"])
    moved = set()
    for m in row["moves"].split()[:per_loop]:
        mv = Move.from_iccs(m)
        moved.add(abs(b.squares[mv.from_square]))
        b.push(mv)
    out += [f"{name} moves in the cycle" for t, name in ((KING, "king"), (PAWN, "pawn"), (ADVISOR, "advisor"))
            if t in moved]
    if "闲" in kinds and "捉" in kinds:
        out.append("捉 against 闲")
    if fsf_comparable(kinds, note):
        out.append("= AXF rules (Fairy-Stockfish a valid judge)")
    if not out:
        out.append("other")
    return out


def fsf_comparable(kinds: list[str], note: str) -> bool:
    """True if the figure's ruling rests only on rules the Asian rules share (RULES.md §5.5): no
    杀 (allowed under AXF), no side mixing 将 and 捉 (一将一捉 is allowed under AXF), no joint chase
    or both-sides-forbidden responsibility comparison, no king or pawn chase. The caption's classes
    alternate Red, Black."""
    red, black = set(kinds[0::2]), set(kinds[1::2])
    if "杀" in red | black or "联合" in note or "兵" in note or "卒" in note:
        return False
    return not any({"将", "捉"} <= side for side in (red, black))


def fsf_winner(fen: str, moves: list[str]) -> str:
    """Fairy-Stockfish's verdict at the end of ``moves``: red/black/draw, or none."""
    import pyffish as sf

    fsf = [f"{t[0]}{int(t[1]) + 1}{t[2]}{int(t[3]) + 1}" for t in moves]
    ended, value = sf.is_optional_game_end("xiangqi", fen, fsf)
    if not ended:
        return "none"
    if value == 0:
        return "draw"
    red_to_move = (len(moves) % 2 == 0) == (fen.split()[1] in ("w", "r"))
    return "red" if (value > 0) == red_to_move else "black"


def measure(title: str, rows: list[dict[str, str]], detail: bool, with_fsf: bool) -> None:
    miss = []
    agree = total = 0
    by_class: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    by_topic: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    kinds: collections.Counter[str] = collections.Counter()
    times: list[float] = []
    fsf_book = fsf_ours = 0
    for r in rows:
        b = play(r["fen"], r["moves"])
        t = time.process_time()  # CPU time: the machine may be shared; wall time would count others
        got = winner(b, "cxa")
        times.append(time.process_time() - t)
        per_loop = len(r["moves"].split()) // 2
        official_raw = _NOTE_CLASS.findall(r["note"])[:per_loop]
        official = [_IDLE_KINDS.get(c, c) for c in official_raw]
        cycle = classify_cycle(b, repetition_cycle(b)[0], CXA)
        ours = [effective_class(mc, CXA) for mc in cycle][: len(official)]
        total += len(official)
        for raw, o, x, mc in zip(official_raw, official, ours, cycle, strict=False):
            by_class[raw][1] += 1
            if o == x:
                agree += 1
                by_class[raw][0] += 1
            else:
                kinds[f"{raw}->{x}"] += 1
                if detail:
                    print(f"  {r['id']} {mc.move.iccs()}: official {raw}, ours {x} ({mc.article})")
        fsf = fsf_winner(r["fen"], r["moves"].split()) if with_fsf else ""
        fsf_book += fsf == r["winner"]
        fsf_ours += fsf == got
        for tp in topics(r):
            cell = by_topic[tp]
            cell[0] += got == r["winner"]
            cell[1] += 1
            cell[2] += fsf == r["winner"]
            cell[3] += fsf == got
        if got != r["winner"]:
            miss.append((r["id"], r["winner"], got, "".join(official_raw), "".join(ours)))
    n = len(rows)
    print(f"== CXA figures, {title}")
    print(f"verdicts: {n - len(miss)}/{n} ({100 * (1 - len(miss) / n):.0f}%)")
    missed = {m[0] for m in miss}
    for group, prefix in (("图 (main figures)", "CXA-fig"), ("参考图 (reference figures)", "CXA-ref")):
        ids = [r["id"] for r in rows if r["id"].startswith(prefix)]
        print(f"  {group}: {sum(1 for i in ids if i not in missed)}/{len(ids)}")
    print(f"move classes vs captions: {agree}/{total} ({100 * agree / total:.0f}%)")
    print("  by the caption's class:", ", ".join(f"{c} {a}/{t}" for c, (a, t) in sorted(by_class.items())))
    print("  disagreements (official->ours):", dict(kinds.most_common()))
    print("verdicts by topic (ours = book" + (", Fairy-Stockfish = book, Fairy-Stockfish = ours" if with_fsf
                                              else "") + "):")
    for tp, (ok, cnt, fb, fo, _) in sorted(by_topic.items(), key=lambda kv: -kv[1][1]):
        extra = f"   FSF=book {fb}/{cnt}, FSF=ours {fo}/{cnt}" if with_fsf else ""
        print(f"  {tp:34s} {ok}/{cnt}{extra}")
    if with_fsf:
        print(f"Fairy-Stockfish: agrees with the book {fsf_book}/{n}, with us {fsf_ours}/{n}")
    for m in miss:
        print("  miss", *m)
    times.sort()
    print(f"median ruling {times[len(times) // 2] * 1000:.0f} ms CPU, slowest {times[-1] * 1000:.0f} ms")


def main() -> None:
    detail = "--detail" in sys.argv
    with_fsf = "--pyffish" in sys.argv
    for title, path in SETS:
        measure(title, read(path), detail, with_fsf)
    ax = read(ROOT / "tests" / "data" / "repetition_axf.tsv")
    amiss = []
    for r in ax:
        got = winner(play(r["fen"], r["moves"]), "axf")
        if got != r["winner"]:
            amiss.append((r["id"], r["winner"], got))
    print(f"== AXF verdicts: {len(ax) - len(amiss)}/{len(ax)} ({100 * (1 - len(amiss) / len(ax)):.0f}%)")
    for m in amiss:
        print("  miss", *m)


if __name__ == "__main__":
    main()
