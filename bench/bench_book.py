"""Opening book (issue 13): build time, file size, probe latency.

Run: ``.venv/bin/python bench/bench_book.py --db GAMES.db [--out FILE] [--probes 20000] [--repeat 3]``.

``--db``: a games database holding the corpus (``xiangqi db import`` of the CCPD master games and the
wxf-masters files, docs/BOOK.md). Builds the book with the default parameters ``--repeat`` times into
``--out`` (default a temporary file) and prints the best and median wall time, the games and plies
read, the book's positions, moves and file size (and the build's CPU time, which a busy machine
does not inflate); then opens the file (memory-mapped) and times
``OpeningBook.probe`` (the key of the board, two binary searches, the legality check of each move) on
``--probes`` positions: random plies 0-29 of random games of the database (mostly in the book) and
the same number of positions 40-60 plies deep (mostly out of the book), p50/p99 in microseconds,
and the raw lookup (``numpy.searchsorted`` on the memory map only). No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from xiangqi.core.board import Board, Move
from xiangqi.db import connect
from xiangqi.db.book import build_book
from xiangqi.db.schema import games
from xiangqi.engine.book import OpeningBook, position_keys


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def sample_positions(engine, n: int, lo: int, hi: int, seed: int) -> list[Board]:
    """``n`` boards at a random ply in [lo, hi] of random standard-start games."""
    with engine.connect() as conn:
        rows = [r.moves.split() for r in conn.execute(select(games.c.moves).where(games.c.fen.is_(None)))]
    rng = random.Random(seed)
    rows = [r for r in rows if len(r) > lo]
    out = []
    while len(out) < n:
        mv = rng.choice(rows)
        ply = rng.randint(lo, min(hi, len(mv) - 1))
        b = Board()
        for m in mv[:ply]:
            b.push(Move.from_iccs(m), validate=False)
        out.append(b)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the corpus games database (URL or SQLite path)")
    ap.add_argument("--out", default=None, help="where to write the book (default: a temporary file)")
    ap.add_argument("--probes", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    engine = connect(args.db)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp()) / "bench.xqbook"
    times, cpu, stats = [], [], None
    for _ in range(args.repeat):
        c0 = time.process_time()
        stats = build_book(engine, out, source="bench")
        cpu.append(time.process_time() - c0)
        times.append(stats.seconds)
    print(f"build: {stats.games} games, {stats.plies} plies -> {stats.positions} positions, {stats.entries} "
          f"moves; {stats.bytes / 1e6:.2f} MB ({stats.bytes} bytes); best {min(times):.2f} s, median "
          f"{statistics.median(times):.2f} s wall over {args.repeat} builds (CPU best {min(cpu):.2f} s)")
    book = OpeningBook(out)
    for label, lo, hi in (("in the opening (plies 0-29)", 0, 29), ("deep (plies 40-60)", 40, 60)):
        boards = sample_positions(engine, args.probes, lo, hi, seed=lo + 1)
        found = 0
        lat = []
        for b in boards:
            t = time.perf_counter()
            r = book.probe(b)
            lat.append((time.perf_counter() - t) * 1e6)
            found += bool(r)
        keys = [min(position_keys(b.squares, b.turn)) for b in boards]
        raw = []
        for k in keys:
            t = time.perf_counter()
            book._rows(k)
            raw.append((time.perf_counter() - t) * 1e6)
        print(f"probe {label}: {len(boards)} positions, {100 * found / len(boards):.1f}% in the book; "
              f"probe p50 {percentile(lat, 0.5):.1f} us, p99 {percentile(lat, 0.99):.1f} us; "
              f"searchsorted only p50 {percentile(raw, 0.5):.1f} us, p99 {percentile(raw, 0.99):.1f} us")


if __name__ == "__main__":
    main()
