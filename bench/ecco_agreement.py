"""Agreement of our ECCO classifier with the [ECCO] tags of the CCPD master games.

Reads the CCPD tarball (``../shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz``; Big5 PGN, one
game per file; CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen (2026), Chinese Chess Practical Dataset
(CCPD)"), takes the master games (``Dataset/對局/大師對局/``) that start from the standard position
and carry an ECCO tag, classifies each from its moves and prints the agreement overall and per
letter of the tag (A–E), the most common disagreements (tag → ours) with an example file each, and
the time per game. Identical games (same moves and tag) count once; ``--files`` counts every file.

    python bench/ecco_agreement.py [--tarball PATH] [--limit N] [--top 15] [--files] [--json]

The corpus is only measured here: the classifier is built from the published definitions
(:mod:`xiangqi.study.ecco_rules`), never fitted to these tags.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tarfile
import time
from pathlib import Path

from xiangqi.core.records import read_records
from xiangqi.study.ecco import classify, code_names

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT.parent / "shared" / "corpus" / "ccpd" / "CCPD-Dataset-original-big5.tar.gz"
MASTER_DIR = "Dataset/對局/大師對局/"


def iter_master_games(tarball: Path, limit: int | None = None):
    """(member name, game) for every readable master game file in the CCPD tarball."""
    n = 0
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar:
            name = member.name
            if not member.isfile() or not name.startswith(MASTER_DIR) or not name.endswith(".pgn"):
                continue
            data = tar.extractfile(member).read()
            try:
                games = read_records(data, fmt="pgn")
            except Exception:  # noqa: BLE001 - a bad file is counted, not fatal
                yield member.name, None
                continue
            for g in games:
                yield member.name, g
            n += 1
            if limit and n >= limit:
                return


def measure(tarball: Path, limit: int | None = None, count_files: bool = False) -> dict:
    """Agreement figures as a dict (see the module doc); the bench's whole measurement."""
    total = collections.Counter()
    agree = collections.Counter()
    confusion: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], str] = {}
    seen: set[tuple[str, tuple[int, ...]]] = set()
    skipped = collections.Counter()
    names = code_names()
    t0, classified = time.perf_counter(), 0
    t_classify = 0.0
    for fname, game in iter_master_games(tarball, limit):
        if game is None:
            skipped["unreadable"] += 1
            continue
        tag = game.headers.get("ECCO", "").strip().upper()
        if not tag:
            skipped["no ECCO tag"] += 1
            continue
        moves = game.mainline_moves()
        key = (tag, tuple(m.from_square * 90 + m.to_square for m in moves))
        if not count_files:
            if key in seen:
                skipped["duplicate"] += 1
                continue
            seen.add(key)
        t1 = time.perf_counter()
        result = classify(game)
        t_classify += time.perf_counter() - t1
        if result is None:
            skipped["not from the standard start"] += 1
            continue
        if tag not in names:
            skipped["tag is not a named code"] += 1
            continue
        classified += 1
        letter = tag[0]
        total[letter] += 1
        if result.code == tag:
            agree[letter] += 1
        else:
            confusion[(tag, result.code)] += 1
            examples.setdefault((tag, result.code), fname)
    elapsed = time.perf_counter() - t0
    return {
        "games": classified, "agree": sum(agree.values()),
        "per_letter": {k: [agree[k], total[k]] for k in "ABCDE"},
        "confusion": [[a, b, n, examples[(a, b)]] for (a, b), n in confusion.most_common()],
        "skipped": dict(skipped), "seconds": elapsed,
        "classify_ms_per_game": 1000 * t_classify / max(classified, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL, help="the CCPD Big5 tarball")
    ap.add_argument("--limit", type=int, default=None, help="read only the first N master game files")
    ap.add_argument("--top", type=int, default=15, help="disagreements to list")
    ap.add_argument("--files", action="store_true", help="count every file (duplicates too)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    if not args.tarball.is_file():
        print(f"ecco_agreement: no CCPD tarball at {args.tarball}", file=sys.stderr)
        return 2
    r = measure(args.tarball, args.limit, args.files)
    if args.json:
        print(json.dumps(r, ensure_ascii=False))
        return 0
    n, a = r["games"], r["agree"]
    print(f"CCPD master games with an ECCO tag: {n} {'files' if args.files else 'unique games'}; "
          f"agreement {a}/{n} = {100 * a / max(n, 1):.2f}%")
    print("\n| letter | games | agree | % |\n|---|---:|---:|---:|")
    for k, (ag, tot) in r["per_letter"].items():
        print(f"| {k} | {tot} | {ag} | {100 * ag / max(tot, 1):.2f} |")
    print(f"\nmost common disagreements (tag -> ours), of {n - a}:")
    names = code_names()
    for tag, ours, count, example in r["confusion"][:args.top]:
        print(f"  {count:5d}  {tag} {names.get(tag, '?')} -> {ours} {names.get(ours, '?')}   e.g. {example}")
    print(f"\nskipped: {r['skipped']}")
    print(f"{r['seconds']:.1f} s in all (reading included); classify {r['classify_ms_per_game']:.3f} ms/game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
