"""The ``xiangqi puzzles`` subcommands: ``import``, ``list``, ``show`` and ``mine`` (registered by
:mod:`xiangqi.cli`). The work is in :mod:`xiangqi.study.puzzles`; this module reads the games
database for ``mine`` (the study layer does not import the database layer)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from xiangqi.core.errors import XiangqiError
from xiangqi.db.cli import db_command

__all__ = ["register", "mined_file"]


def mined_file() -> Path:
    """Where ``xiangqi puzzles mine`` writes by default (and the page reads mined puzzles):
    ``puzzles/mined.jsonl`` in the user data dir."""
    from xiangqi.datadir import default_data_dir

    return default_data_dir() / "puzzles" / "mined.jsonl"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``puzzles`` with its subcommands to the CLI's subparsers."""
    pz = sub.add_parser("puzzles", help="puzzles (杀法/残局练习): import, mine, list",
                        description="Puzzles checked by the engine: the first move is the only clearly "
                                    "winning one and the line reaches its goal (mate in N, material, a "
                                    "won ending).")
    psub = pz.add_subparsers(dest="puzzles_command", metavar="{import,list,show,mine}", required=True)

    p = psub.add_parser("import", help="check the CCPD collections with the engine and write the puzzle file",
                        description="Resumable: every record's verdict is appended to --state as it is "
                                    "decided; a rerun continues where the last stopped, and the puzzle "
                                    "file is rewritten after every --chunk records. Run niced: "
                                    "nice -n 19 xiangqi puzzles import.")
    p.add_argument("source", help="CCPD-Dataset-original-big5.tar.gz or an unpacked Dataset folder "
                                  "(its folders 殺局_殺法_練習題 殘局 全盤戰術 中局 are read)")
    p.add_argument("--out", default=None,
                   help="puzzle file (default: the package's study/data/puzzles.jsonl)")
    p.add_argument("--state", default=None,
                   help="verdict log for resuming (default: puzzles-import-state.jsonl beside --out)")
    p.add_argument("--limit", type=int, default=None, help="decide at most N more records")
    p.add_argument("--chunk", type=int, default=25,
                   help="rewrite the puzzle file every N records (default 25)")
    p.add_argument("--depth", type=int, default=None, help="search depth of the checks (default 8)")
    p.add_argument("--only", default=None, help="one collection: mid, end, mate, game (or its folder name)")
    p.add_argument("--tablebase", default=None, metavar="DIR",
                   help="endgame tables consulted where they apply")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per record")
    p.set_defaults(func=cmd_import)

    p = psub.add_parser("list", help="list puzzles (the shipped file, or --file)")
    p.add_argument("--file", default=None, help="a puzzle file (default: the shipped one)")
    p.add_argument("--theme", default=None,
                   help="only puzzles with this theme (mateIn2, winRook, chouJiang…)")
    p.add_argument("--source", default=None, help="only this source (substring: ccpd/殘局, mined…)")
    p.add_argument("--goal", choices=["mate", "material", "win"], default=None)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--stats", action="store_true", help="counts by source, goal and theme instead")
    p.set_defaults(func=cmd_list)

    p = psub.add_parser("show", help="print one puzzle: board, task and solution")
    p.add_argument("id", help="puzzle id (see list)")
    p.add_argument("--file", default=None)
    p.set_defaults(func=cmd_show)

    p = psub.add_parser("mine", help="find puzzles in the games database or record files",
                        description="Decisive games only: where the winner's decisive run begins and "
                                    "exactly one move wins decisively (mate or material). Appends to "
                                    "--out; games already mined there are skipped.")
    p.add_argument("files", nargs="*", metavar="FILE", help="record files instead of the database")
    p.add_argument("--db", default=None,
                   help="games database URL or SQLite path (default: games.db in the data dir)")
    p.add_argument("--limit", type=int, default=100, help="look at N games (default 100)")
    p.add_argument("--out", default=None,
                   help="puzzle file to append to (default: DATA_DIR/puzzles/mined.jsonl)")
    p.add_argument("--depth", type=int, default=None, help="search depth of the checks (default 8)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=db_command(cmd_mine))


def _nice() -> None:
    try:
        os.nice(10)
    except OSError:
        pass


def cmd_import(args: argparse.Namespace) -> int:
    """``xiangqi puzzles import``: decide the records not yet decided; prints the counts as JSON."""
    from xiangqi.study import puzzles as P

    out = Path(args.out) if args.out else P.DATA_FILE
    state = Path(args.state) if args.state else out.with_name("puzzles-import-state.jsonl")
    if not Path(args.source).exists():
        print(f"xiangqi puzzles import: no such file or folder: {args.source}", file=sys.stderr)
        return 2
    tb = None
    if args.tablebase:
        from xiangqi.engine.tablebase import Tablebase

        tb = Tablebase(args.tablebase)
    _nice()
    run = P.ImportRun(state)

    def progress(n: int, pid: str, v) -> None:
        if not args.quiet:
            what = f"{v.goal} {' '.join(v.solution)}" if isinstance(v, P.Puzzle) else f"rejected: {v.reason}"
            print(f"{len(run.done):5d} {pid}: {what}", file=sys.stderr, flush=True)

    run.run(args.source, depth=args.depth or P.DEFAULT_DEPTH, limit=args.limit, chunk=args.chunk, out=out,
            tablebase=tb, only=args.only, on_progress=progress)
    counts = run.counts()
    print(json.dumps({"decided": len(run.done), "counts": counts, "by_collection": run.counts_by_collection(),
                      "file": str(out)}, ensure_ascii=False, indent=1))
    return 0


def _load(path: str | None):
    """The puzzles of ``--file`` ``path`` (None: the shipped file); a path that is not a file is
    :class:`XiangqiError` (exit 2), not an empty list."""
    from xiangqi.study import puzzles as P

    if path is not None and not os.path.isfile(path):
        raise XiangqiError(f"--file: no such file: {path!r}")
    return P.load_puzzles(path)


def cmd_list(args: argparse.Namespace) -> int:
    """``xiangqi puzzles list``: one line per puzzle (id, task, rating, themes, source), or ``--stats``."""
    ps = _load(args.file)
    if args.theme:
        ps = [p for p in ps if args.theme in p.themes]
    if args.source:
        ps = [p for p in ps if args.source in p.source]
    if args.goal:
        ps = [p for p in ps if p.goal == args.goal]
    if args.stats:
        stats: dict[str, dict[str, int]] = {"source": {}, "goal": {}, "theme": {}}
        for p in ps:
            stats["source"][p.source] = stats["source"].get(p.source, 0) + 1
            stats["goal"][p.goal] = stats["goal"].get(p.goal, 0) + 1
            for t in p.themes:
                stats["theme"][t] = stats["theme"].get(t, 0) + 1
        print(json.dumps({"puzzles": len(ps), **stats}, ensure_ascii=False, indent=1))
        return 0
    if args.limit is not None:
        ps = ps[:args.limit]
    from xiangqi.study.puzzles import goal_text

    for p in ps:
        if args.json:
            print(json.dumps(p.to_dict(), ensure_ascii=False))
        else:
            print(f"{p.id:20s} {goal_text(p.goal, p.mate, p.red):10s} {int(p.rating):5d} "
                  f"{','.join(p.themes) or '-':20s} {p.source}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``xiangqi puzzles show ID``: the board, the task and the solution in Chinese notation; 1 if unknown."""
    from xiangqi.core.board import Board, Move
    from xiangqi.study.puzzles import goal_text

    for p in _load(args.file):
        if p.id == args.id:
            b = Board(p.fen)
            print(b.unicode())
            print(f"{p.id}  {goal_text(p.goal, p.mate, p.red)}  ({p.source} {p.ref.get('file', '')})")
            words = []
            for t in p.solution:
                m = Move.from_iccs(t)
                words.append(b.move_text(m))
                b.push(m)
            print("solution:", " ".join(words), f"({' '.join(p.solution)})")
            print("themes:", ", ".join(p.themes) or "-", f" rating {p.rating:.0f}")
            return 0
    print(f"xiangqi puzzles show: no puzzle {args.id!r}", file=sys.stderr)
    return 2  # README: bad input (an id that names no puzzle) exits with 2


def _db_games(url: str | None, limit: int):
    from sqlalchemy import select

    from xiangqi.core.board import STARTING_FEN
    from xiangqi.db.database import connect
    from xiangqi.db.schema import games

    engine = connect(url, must_exist=url is not None)
    q = (select(games.c.id, games.c.fen, games.c.moves, games.c.result, games.c.event, games.c.red,
                games.c.black).where(games.c.result.in_(["1-0", "0-1"])).order_by(games.c.id).limit(limit))
    with engine.connect() as conn:
        for row in conn.execute(q):
            yield (row.fen or STARTING_FEN, row.moves.split(), row.result,
                   {"game": int(row.id), "event": row.event, "red": row.red, "black": row.black})


def cmd_mine(args: argparse.Namespace) -> int:
    """``xiangqi puzzles mine``: mine decisive games; appends puzzles to --out, prints a JSON summary."""
    from xiangqi.study import puzzles as P

    out = Path(args.out) if args.out else mined_file()
    seen: set[str] = set()
    if out.exists():
        for text in out.read_text(encoding="utf-8").splitlines():
            try:
                seen.add(json.loads(text)["id"])
            except (ValueError, KeyError):
                continue
    unreadable: list[str] = []  # record files that could not be read (exit 2 at the end, README)
    if args.files:
        from xiangqi.core.records import read_records

        def gen():
            for f in args.files:
                try:
                    games = read_records(f)
                except XiangqiError as exc:  # named and skipped: the other files are still mined
                    text = str(exc)
                    text = text[len(f"{f}: "):] if text.startswith(f"{f}: ") else text
                    print(f"xiangqi puzzles mine: {f}: {text} (skipped)", file=sys.stderr, flush=True)
                    unreadable.append(f)
                    continue
                for fen, moves, result, ref in P.iter_games_for_mining(games):
                    yield fen, moves, result, {**ref, "file": os.path.basename(f)}

        items = gen()
        source = "mined/file"
    else:
        items = _db_games(args.db, args.limit)
        source = "mined/db"
    _nice()
    engine = P._engine()
    found = looked = 0
    counts: dict[str, int] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    for fen, moves, result, ref in items:
        if looked >= args.limit:
            break
        looked += 1
        key = f"game{ref['game']}" if "game" in ref else f"{ref.get('file', 'file')}-{ref['index']}"
        pid = "mined-" + re.sub(r"[^A-Za-z0-9_.-]", "_", key)[:70]
        if pid in seen:
            continue
        v = P.mine_game(fen, moves, result, engine=engine, depth=args.depth or P.DEFAULT_DEPTH, source=source,
                        ref=ref, pid=pid)
        if isinstance(v, P.Puzzle):
            found += 1
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(v.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
            counts["verified"] = counts.get("verified", 0) + 1
        else:
            counts[v.reason] = counts.get(v.reason, 0) + 1
        if not args.quiet:
            what = f"{v.goal} {' '.join(v.solution)}" if isinstance(v, P.Puzzle) else f"none: {v.reason}"
            print(f"{looked:5d} {pid}: {what}", file=sys.stderr, flush=True)
    summary = {"games": looked, "puzzles": found, "counts": counts, "file": str(out)}
    if unreadable:
        summary["unreadable"] = unreadable
    print(json.dumps(summary, ensure_ascii=False))
    return 2 if unreadable else 0
