"""Games database (issue 13): import speed with the position index, size on disk, search latencies.

Run: ``.venv/bin/python bench/bench_db.py [--games N] [--db PATH] [--queries 200] [--similar 30]``;
``bench/bench_db.py queries --db URL [--db URL2]`` times the page's queries (position search, the
opening explorer) on databases already built (:func:`bench_queries`).

Imports the CCPD master games (``對局/大師對局`` of the tarball, read member by member) and the
wxf-masters PGN files into a fresh SQLite database and prints: files and games read, games stored,
duplicates and skipped, wall time, games read per second and games stored per second; the database
size on disk (after a WAL checkpoint) and per table; then the latency (p50/p99, ms) of position
searches (random positions of stored games, all matching games fetched; plain and with mirror) and of
similar-position searches (middlegame positions of stored games, top 20). As the peer in the same run,
``read_records`` alone on the first ``--peer`` master files gives games/s and the ratio import / read
(per CPU second, all processes counted, so that it holds on a busy machine).
``--games N`` imports only the first N master files (they are copied to a temporary folder first,
not timed). No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from xiangqi.core.board import Board, Move
from xiangqi.core.records import read_records
from xiangqi.db import connect, import_paths, search_games, similar_games
from xiangqi.db.schema import games

# the shared corpus beside the checkout (../shared/corpus), or where $XIANGQI_CORPUS says
SHARED = Path(os.environ.get("XIANGQI_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
DEFAULT_TAR = SHARED / "ccpd" / "CCPD-Dataset-original-big5.tar.gz"
DEFAULT_WXF = SHARED / "wxf-masters"
MASTER_GLOB = "*大師對局*"


def master_files(tar_path: Path, limit: int | None) -> list[tuple[str, bytes]]:
    """(member name, bytes) of the first ``limit`` master-game files of the tarball."""
    out = []
    with tarfile.open(tar_path) as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".pgn") and "大師對局" in member.name:
                fh = tar.extractfile(member)
                if fh is not None:
                    out.append((member.name, fh.read()))
                if limit is not None and len(out) >= limit:
                    break
    return out


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the import's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values`` (nearest rank)."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def sample_positions(engine, n: int, rng: random.Random, lo: int = 0, hi: int | None = None) -> list[str]:
    """FENs of ``n`` random positions of stored games (plies lo..hi of each game's main line)."""
    from sqlalchemy import select

    with engine.connect() as conn:
        rows = conn.execute(select(games.c.id, games.c.fen, games.c.moves)).all()
    fens = []
    while len(fens) < n and rows:
        _gid, fen, moves = rng.choice(rows)
        moves = moves.split()
        top = len(moves) if hi is None else min(hi, len(moves))
        if top < lo:
            continue
        ply = rng.randint(lo, top)
        board = Board(fen) if fen else Board()
        for m in moves[:ply]:
            board.push(Move.from_iccs(m), validate=False)
        fens.append(board.fen())
    return fens


def game_steps(engine, rng: random.Random, lo: int, hi: int) -> list[str]:
    """FENs of plies lo..hi of one random stored game of at least ``hi`` plies."""
    from sqlalchemy import select

    with engine.connect() as conn:
        rows = conn.execute(select(games.c.fen, games.c.moves).where(games.c.plies >= hi)).all()
    fen, moves = rng.choice(rows)
    board = Board(fen) if fen else Board()
    out = []
    for ply, m in enumerate(moves.split()[:hi]):
        board.push(Move.from_iccs(m), validate=False)
        if ply + 1 >= lo:
            out.append(board.fen())
    return out


_CPU_TIMES: list[float] = []


def timed(fn, args_list) -> tuple[list[float], list[int]]:
    """Milliseconds per call of ``fn(arg)`` and the number of hits of each (the CPU milliseconds of this
    process per call are left in ``_CPU_TIMES``: on a machine busy with other work the wall time of a
    query mostly measures the wait for a core, its CPU time does not)."""
    times, counts = [], []
    _CPU_TIMES.clear()
    for a in args_list:
        c = time.process_time()
        t = time.perf_counter()
        hits = fn(a)
        times.append((time.perf_counter() - t) * 1000)
        _CPU_TIMES.append((time.process_time() - c) * 1000)
        counts.append(len(hits))
    return times, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=None,
                        help="only the first N master files (default: all)")
    parser.add_argument("--tar", type=Path, default=DEFAULT_TAR, help="the CCPD tarball")
    parser.add_argument("--wxf", default=str(DEFAULT_WXF),
                        help="the wxf-masters folder ('' to leave out)")
    parser.add_argument("--db", type=Path, default=None, help="database file (default: a temporary one)")
    parser.add_argument("--queries", type=int, default=200, help="position searches to time")
    parser.add_argument("--similar", type=int, default=30, help="similar-position searches to time")
    parser.add_argument("--peer", type=int, default=1000, help="master files read by read_records alone")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes reading games (default 1)")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="bench_db_")
    db_path = args.db or Path(tmp.name) / "games.db"
    if db_path.exists():
        raise SystemExit(f"{db_path} exists: give a new file")
    sources: list[Path] = []
    glob = None
    if args.games is not None:
        folder = Path(tmp.name) / "subset"
        folder.mkdir()
        for i, (_name, data) in enumerate(master_files(args.tar, args.games)):
            (folder / f"{i:06d}.pgn").write_bytes(data)
        sources.append(folder)
    else:
        sources.append(args.tar)
        glob = MASTER_GLOB
    engine = connect(f"sqlite:///{db_path}")
    t = time.perf_counter()
    cpu = _cpu()
    report = import_paths(engine, sources, glob=glob, jobs=args.jobs)
    if args.wxf:
        more = import_paths(engine, [Path(args.wxf)], jobs=args.jobs)
        for f in ("files", "games", "added", "duplicates", "skipped", "positions"):
            setattr(report, f, getattr(report, f) + getattr(more, f))
        report.problems.extend(more.problems)
    seconds = time.perf_counter() - t
    cpu = _cpu() - cpu
    print(f"import   {report.files} files, {report.games} games read, {report.added} stored, "
          f"{report.duplicates} duplicates, {report.skipped} skipped, {report.positions} positions")
    print(f"         {seconds:.1f} s: {report.games / seconds:.0f} games read/s, "
          f"{report.added / seconds:.0f} games stored/s (jobs {args.jobs})")
    print(f"         {cpu:.1f} CPU s (all processes): {report.games / cpu:.0f} games read per CPU second "
          "(the wall-clock rate depends on what else the machine runs)")
    reasons: dict[str, int] = {}
    for p in report.problems:
        key = ("skipped: " if p.skipped else "warning: ") + p.reason.split(":")[0][:50]
        reasons[key] = reasons.get(key, 0) + 1
    for r, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:8]:
        print(f"         {n:6d}  {r}")

    with sqlite3.connect(db_path) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            tables = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC") \
                .fetchall()
        except sqlite3.OperationalError:
            tables = []
    size = db_path.stat().st_size
    print(f"size     {size / 1e6:.1f} MB ({size / max(1, report.added) / 1e3:.1f} kB per stored game): "
          + ", ".join(f"{name} {n / 1e6:.1f}" for name, n in tables[:6]))

    rng = random.Random(13)
    fens = sample_positions(engine, args.queries, rng)
    search_games(engine, fen=fens[0])  # warm the page cache
    for mirror, limit in ((False, None), (True, None), (False, 50), (True, 50)):
        ms, counts = timed(lambda f, m=mirror, n=limit: search_games(engine, fen=f, mirror=m, limit=n), fens)
        what = f"{'mirror' if mirror else 'plain '} {'all' if limit is None else f'first {limit}':>8}"
        print(f"position {what} p50 {pct(ms, .5):6.2f} ms  p99 {pct(ms, .99):6.2f} ms  "
              f"max {max(ms):6.1f} ms  (games per query: median {statistics.median(counts):.0f}, "
              f"max {max(counts)})")
    mids = sample_positions(engine, args.similar, rng, lo=20, hi=60)
    ms, counts = timed(lambda f: similar_games(engine, f, limit=20), mids)
    print(f"similar  p50 {pct(ms, .5):6.1f} ms  p99 {pct(ms, .99):6.1f} ms  max {max(ms):6.1f} ms  "
          f"(top 20, min similarity 0.6, spread 1; plies 20-60)")
    steps = game_steps(engine, rng, 20, 60)
    ms, _ = timed(lambda f: similar_games(engine, f, limit=20), steps)
    print(f"similar  stepping through one game, plies 20-60: p50 {pct(ms, .5):6.1f} ms  "
          f"p99 {pct(ms, .99):6.1f} ms  (candidates of a material are cached)")
    opening = sample_positions(engine, max(5, args.similar // 3), rng, lo=0, hi=8)
    ms, _ = timed(lambda f: similar_games(engine, f, limit=20), opening)
    print(f"similar  opening positions (plies 0-8, full material): p50 {pct(ms, .5):6.1f} ms  "
          f"max {max(ms):6.1f} ms")

    peer = master_files(args.tar, args.peer)
    t = time.perf_counter()
    read_cpu = _cpu()
    n = 0
    for _name, data in peer:
        try:
            n += len(read_records(data))
        except ValueError:
            pass
    read_s = time.perf_counter() - t
    read_cpu = _cpu() - read_cpu
    print(f"peer     read_records alone: {n / read_s:.0f} games/s on {len(peer)} master files "
          f"({n / read_cpu:.0f} per CPU second); import / read, per CPU second: "
          f"{report.games / cpu / (n / read_cpu):.2f}")
    engine.dispose()
    tmp.cleanup()


# -- position search and explorer latency on a database already built (issue 13, the web side) ------

def bench_queries(url: str, *, queries: int = 200, seed: int = 13) -> dict[str, tuple[float, float]]:
    """p50/p99 (ms) of the queries the page makes, on the database at ``url`` (SQLite or PostgreSQL).

    - ``position``: ``search_games(fen=…, limit=20)``, the browser's first page, for random positions
      of stored games (any ply: mostly rare positions) and ``position_open`` for plies 0–12 (common
      ones, many games); ``…_mirror`` the same with ``mirror=True``;
    - ``explore``: :func:`xiangqi.db.explore.explore` (moves, results, 5 recent games), for plies
      0–16 of random games (the explorer's usual case), its answer cache emptied before each query
      (with :func:`~xiangqi.db.explore.changed`: its notes of the database's state are read again too);
      ``explore_new`` the same with only the answers forgotten (a position not asked before in a running
      app, whose notes on the database are current);
      ``explore_cached`` the same positions again (answered from the cache); ``explore_start`` the
      start position (every game: the worst case), uncached;
    - ``count``: ``count_games(fen=…)`` for the opening positions (the browser's total).
    Each query runs once after one warm-up query; the database is only read.
    """
    from xiangqi.db import count_games
    from xiangqi.db.explore import _CACHE, changed, explore

    def cold(f):
        changed()
        return explore(engine, f).moves

    def new(f):
        _CACHE.clear()
        return explore(engine, f).moves

    rng = random.Random(seed)
    engine = connect(url, migrate=False)
    anywhere = sample_positions(engine, queries, rng)
    opening = sample_positions(engine, queries, rng, 0, 12)
    early = sample_positions(engine, queries, rng, 0, 16)
    cases = {
        "position": (lambda f: search_games(engine, fen=f, limit=20), anywhere),
        "position_mirror": (lambda f: search_games(engine, fen=f, mirror=True, limit=20), anywhere),
        "position_open": (lambda f: search_games(engine, fen=f, limit=20), opening),
        "position_open_mirror": (lambda f: search_games(engine, fen=f, mirror=True, limit=20), opening),
        "count_open": (lambda f: [0] * count_games(engine, fen=f, mirror=True), opening),
        "explore": (cold, early),
        "explore_new": (new, early),
        "explore_cached": (lambda f: explore(engine, f).moves, early),
        "explore_start": (cold, [Board().fen()] * max(5, queries // 20)),
    }
    out = {}
    for name, (fn, args) in cases.items():
        fn(args[0])  # warm-up: the first query pays for the connection and the page cache
        times, counts = timed(fn, args)
        out[name] = (pct(times, 0.5), pct(times, 0.99))
        cpu = list(_CPU_TIMES)
        print(f"{name:22s} p50 {out[name][0]:7.1f} ms  p99 {out[name][1]:7.1f} ms  "
              f"(CPU p50 {pct(cpu, 0.5):6.1f} ms  p99 {pct(cpu, 0.99):6.1f} ms; "
              f"{len(times)} queries, median {statistics.median(counts):.0f} rows)")
    engine.dispose()
    return out


def queries_main(argv: list[str] | None = None) -> None:
    """``bench_db.py queries --db URL [--db URL2 …] [--queries N]``: :func:`bench_queries` on each."""
    parser = argparse.ArgumentParser(prog="bench_db.py queries",
                                     description=(bench_queries.__doc__ or "").splitlines()[0])
    parser.add_argument("--db", action="append", required=True,
                        help="SQLAlchemy URL or SQLite path (repeatable)")
    parser.add_argument("--queries", type=int, default=200, help="queries per kind (default 200)")
    args = parser.parse_args(argv)
    for url in args.db:
        engine = connect(url, migrate=False)
        from sqlalchemy import func, select

        with engine.connect() as conn:
            n = conn.execute(select(func.count()).select_from(games)).scalar_one()
        engine.dispose()
        print(f"-- {engine.url.render_as_string(hide_password=True)}: {n} games")
        bench_queries(url, queries=args.queries)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["queries"]:
        queries_main(sys.argv[2:])
    else:
        main()
