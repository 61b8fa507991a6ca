"""The ``xiangqi db`` subcommands: ``import``, ``search``, ``explore`` and ``info`` (registered by
:mod:`xiangqi.cli`).

This module only builds the argument parsers at import time; the database modules (SQLAlchemy,
Alembic) are imported when a command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata

__all__ = ["db_command", "fen_option", "register"]


def db_command(func):
    """Wrap a command ``func(args)`` that uses the database ``args.db``: an SQLAlchemy error while it runs
    (a damaged file: "database disk image is malformed") becomes one line naming the database,
    :class:`~xiangqi.db.database.DatabaseError` (exit 2), instead of a traceback."""
    import functools

    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        from xiangqi.db.database import database_errors

        with database_errors(args.db):
            return func(args)

    return run


def open_db(args: argparse.Namespace, *, create: bool = False):
    """The database of ``args.db`` (:func:`xiangqi.db.database.connect`). Unless ``create``, a ``--db``
    SQLite path that is not there is refused (a mistyped name would otherwise read as a new, empty
    database, "0 games", exit 0); the default database is created where it belongs."""
    from xiangqi.db.database import connect

    return connect(args.db, must_exist=not create and args.db is not None)


def fen_option(value: str | None, option: str) -> str | None:
    """``value`` of a FEN option such as ``--fen`` unchanged, None when it was not given; raises
    :class:`~xiangqi.core.errors.XiangqiError` ("--fen: empty FEN", exit 2) when it is empty or blank, which
    would otherwise read as "not given" and silently use the start position."""
    if value is not None and not value.strip():
        from xiangqi.core.errors import XiangqiError

        raise XiangqiError(f"{option}: empty FEN")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``db`` with its ``import``, ``search``, ``explore`` and ``info`` subcommands to the CLI."""
    db = sub.add_parser("db", help="the games database: import record files, search games and positions",
                        description="A database of games (SQLite in the user data dir by default, or any "
                                    "SQLAlchemy URL with --db) with a position index.")
    dsub = db.add_subparsers(dest="db_command", metavar="{import,search,explore,info}", required=True)
    db_help = ("database: an SQLAlchemy URL (sqlite:///games.db, postgresql+psycopg://user@host/name) or an "
               "SQLite file path (default: games.db in $XIANGQI_DATA_DIR or the user data dir)")

    p = dsub.add_parser("import", help="import record files, folders or .tar.gz archives",
                        description="Import every game of the given files (PGN, XQF, DhtmlXQ/UBB; folders "
                                    "recursively; .tar/.tar.gz archives read member by member). Identical "
                                    "games are stored once; bad files and games are reported and skipped; "
                                    "safe to re-run. --masters imports the master games shipped with "
                                    "the package (28,225 games; CCPD, CC BY 4.0, and WXF).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="record file, folder or archive")
    p.add_argument("--masters", action="store_true",
                   help="also import the master games shipped with the package (credit: db/data/NOTICE.md)")
    p.add_argument("--db", default=None, help=db_help)
    p.add_argument("--collection", default="master",
                   help="collection name stored with the games (default: master)")
    p.add_argument("--glob", default=None,
                   help="only files or archive members whose path matches this pattern, e.g. '*大師對局*'")
    p.add_argument("--problems", default=None, metavar="FILE",
                   help="write every problem (file, game, reason) to FILE instead of stderr")
    p.add_argument("-j", "--jobs", type=int, default=1,
                   help="read games in N worker processes (default 1; one process writes the database)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=db_command(cmd_db_import))

    p = dsub.add_parser("search", help="search games by headers, by position or by similar position",
                        description="Prints a table of the matching games (all of them unless --limit); "
                                    "--json prints one JSON object per game per line.")
    p.add_argument("--db", default=None, help=db_help)
    p.add_argument("--player", help="player of either colour (substring; simplified or traditional)")
    p.add_argument("--red", help="red player (substring; simplified or traditional)")
    p.add_argument("--black", help="black player (substring; simplified or traditional)")
    p.add_argument("--event", help="event (substring; simplified or traditional)")
    p.add_argument("--site", help="site (substring)")
    p.add_argument("--from", dest="date_from", metavar="DATE", help="played on or after YYYY[-MM[-DD]]")
    p.add_argument("--to", dest="date_to", metavar="DATE", help="played on or before YYYY[-MM[-DD]]")
    p.add_argument("--result", help="red, black, draw, unknown (or 1-0, 0-1, 1/2-1/2, *)")
    p.add_argument("--ecco", help="ECCO code (A15), prefix (A, A1) or range (A10-A19)")
    p.add_argument("--opening", help="opening name (substring)")
    p.add_argument("--comment", help="text in the comments (substring)")
    p.add_argument("--collection", help="collection name (exact)")
    p.add_argument("--fen", help="games in which this position occurs (board and side to move)")
    p.add_argument("--mirror", action="store_true",
                   help="with --fen or --similar: also the left-right mirrored position")
    p.add_argument("--similar", metavar="FEN",
                   help="games with positions similar to this one, best first (Jaccard over piece-squares)")
    p.add_argument("--min-similarity", type=float, default=0.6,
                   help="with --similar: lowest similarity kept, 0..1 (default 0.6)")
    p.add_argument("--spread", type=int, default=1, choices=[0, 1, 2],
                   help="with --similar: how many pieces the material may differ (default 1)")
    p.add_argument("--limit", type=int, default=None, help="at most this many games (default: all)")
    p.add_argument("--offset", type=int, default=0, help="skip this many games first")
    p.add_argument("--json", action="store_true", help="one JSON object per game per line")
    p.set_defaults(func=db_command(cmd_db_search))

    p = dsub.add_parser("explore", help="the opening explorer: the moves played from a position, and results",
                        description="For the position after MOVES (ICCS such as h2e2, or Chinese such as "
                                    "炮二平五) from --fen or the standard start: every move played from it "
                                    "in the database with its number of games, Red win / draw / Black win "
                                    "percentages (of the games with a known result) and mean year, and the "
                                    "most recent games. Mirrored positions are merged (moves mirrored back) "
                                    "unless --no-mirror.")
    p.add_argument("moves", nargs="*", metavar="MOVE", help="moves from the start (or from --fen)")
    p.add_argument("--db", default=None, help=db_help)
    p.add_argument("--fen", default=None, help="start from this position instead of the standard start")
    p.add_argument("--source", default="both", choices=["master", "mine", "both"],
                   help="master: imported collections; mine: the games saved in the app; both (default)")
    p.add_argument("--no-mirror", dest="mirror", action="store_false",
                   help="do not merge the left-right mirrored position")
    p.add_argument("--top", type=int, default=5, help="recent games to list (default 5, at most 100)")
    p.add_argument("--json", action="store_true", help="the whole answer as one JSON object")
    p.set_defaults(func=db_command(cmd_db_explore))

    p = dsub.add_parser("info", help="print the database URL, schema revision and counts")
    p.add_argument("--db", default=None, help=db_help)
    p.set_defaults(func=db_command(cmd_db_info))


def cmd_db_import(args: argparse.Namespace) -> int:
    """``xiangqi db import``: import, print problems and a summary; 0 unless the database fails. A PATH
    that does not exist is refused before anything is opened or written (exit 2, every such PATH named):
    a mistyped name is the user's error, not a bad file to skip."""
    from xiangqi.core.errors import XiangqiError
    from xiangqi.db.importer import import_paths

    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:
        raise XiangqiError("no such file or folder: " + ", ".join(repr(p) for p in missing))
    paths = list(args.paths)
    if args.masters:
        from xiangqi.db.masters import masters_path

        paths.append(str(masters_path()))
    if not paths:
        raise XiangqiError("name record files, folders or archives to import, or give --masters")
    engine = open_db(args, create=True)
    out = open(args.problems, "w", encoding="utf-8") if args.problems else None  # noqa: SIM115
    try:
        def tell(problem) -> None:
            if out is not None:
                out.write(f"{problem}\n")
            else:
                sys.stderr.write(f"\r{problem}\n")

        with import_bar(enabled=not args.quiet and sys.stderr.isatty()) as bar:
            report = import_paths(engine, paths, collection=args.collection, glob=args.glob, jobs=args.jobs,
                                  progress=bar.update if bar is not None else False, on_problem=tell)
    finally:
        if out is not None:
            out.close()
    warnings = sum(1 for p in report.problems if not p.skipped)
    print(report.summary())
    if report.problems:
        print(f"{len(report.problems) - warnings} problems skipped, {warnings} warnings"
              + (f" (listed in {args.problems})" if args.problems else ""))
    return 0


class _ImportBar:
    """A rich progress bar of an import: bytes of input read (with the games counted so far), then the
    explorer's counts being rebuilt."""

    def __init__(self, progress) -> None:
        self.progress = progress
        self.task = progress.add_task("reading games", total=None, games="")
        self.phase = "read"

    def update(self, state) -> None:
        """The :func:`xiangqi.db.importer.import_paths` progress callback (an ``ImportProgress``)."""
        r = state.report
        games = f"{r.games:,} games, {r.added:,} added, {r.duplicates:,} dup, {r.skipped} skipped"
        if state.phase == "read":
            self.progress.update(self.task, completed=state.done, total=state.total or None, games=games)
        elif state.phase == "counts":
            self.progress.update(self.task, completed=state.total, description="explorer counts", games=games)
        else:
            self.progress.update(self.task, completed=state.total, description="done", games=games)


def import_bar(enabled: bool):
    """A context manager giving an object whose ``update`` is an import's progress callback, drawing a
    rich progress bar on stderr (None when not ``enabled``: no terminal, or ``--quiet``)."""
    import contextlib

    if not enabled:
        return contextlib.nullcontext(None)

    @contextlib.contextmanager
    def bar():
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[games]}"))
        with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
            yield _ImportBar(progress)

    return bar()


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cut(text: str, width: int) -> str:
    out, w = "", 0
    for ch in text:
        cw = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if w + cw > width:
            return out[:-1] + "…" if out else ""
        out += ch
        w += cw
    return out + " " * (width - w)


def _table(hits, similar: bool, position: bool) -> str:
    cols = [("id", 6), ("date", 10), ("red", 16), ("black", 16), ("result", 7), ("ecco", 4), ("event", 30)]
    if position:
        cols.append(("ply", 4))
    if similar:
        cols.append(("sim", 5))
    lines = ["  ".join(_cut(name, w) for name, w in cols).rstrip()]
    for h in hits:
        d = h.to_dict()
        d["ecco"] = d["ecco"] or d["ecco_computed"] or ""
        d["date"] = d["date"] or d["date_raw"]
        d["sim"] = f"{h.similarity:.2f}" if h.similarity is not None else ""
        d["ply"] = "" if h.ply is None else str(h.ply) + ("m" if h.mirrored else "")
        lines.append("  ".join(_cut(str(d.get(name) or ""), w) for name, w in cols).rstrip())
    return "\n".join(lines)


def cmd_db_search(args: argparse.Namespace) -> int:
    """``xiangqi db search``: print the matching games as a table or JSON lines."""
    from xiangqi.db.search import Filters, SearchError, count_games, search_games, similar_games

    filters = Filters(player=args.player, red=args.red, black=args.black, event=args.event, site=args.site,
                      date_from=args.date_from, date_to=args.date_to, result=args.result, ecco=args.ecco,
                      opening=args.opening, comment=args.comment, collection=args.collection)
    fen_option(args.fen, "--fen")
    fen_option(args.similar, "--similar")
    engine = open_db(args)
    if args.similar is not None:
        if args.fen is not None:
            raise SearchError("give --fen or --similar, not both")
        hits = similar_games(engine, args.similar, filters, mirror=args.mirror,
                             min_similarity=args.min_similarity, spread=args.spread, limit=args.limit,
                             offset=args.offset)
    else:
        hits = search_games(engine, filters, fen=args.fen, mirror=args.mirror, limit=args.limit,
                            offset=args.offset)
    if args.json:
        for h in hits:
            print(json.dumps(h.to_dict(), ensure_ascii=False))
    else:
        print(_table(hits, similar=args.similar is not None,
                     position=args.fen is not None or args.similar is not None))
        print(_shown(len(hits), args, lambda: count_games(engine, filters, fen=args.fen, mirror=args.mirror)))
    return 0


def _shown(n: int, args: argparse.Namespace, total) -> str:
    """The search's closing line: ``836 games`` when every match is shown, else ``showing 3 of 836
    games`` (``showing 11–13 of 836 games`` after ``--offset 10``; ``total()`` counts them all). A
    similarity search's total is not counted: ``3 games shown (--limit 3, --offset 0)``."""
    if args.limit is None and not args.offset:
        return f"{n:,} games"
    if args.similar is not None:
        return f"{n:,} games shown (--limit {args.limit}, --offset {args.offset})"
    first = args.offset + 1 if n else args.offset
    return f"showing {first:,}–{args.offset + n:,} of {total():,} games" if args.offset else \
        f"showing {n:,} of {total():,} games"


def cmd_db_explore(args: argparse.Namespace) -> int:
    """``xiangqi db explore``: print the explorer's table (moves in Chinese notation) or its JSON."""
    from xiangqi.db.explore import explore

    fen_option(args.fen, "--fen")
    engine = open_db(args)
    found = explore(engine, args.fen, args.moves, source=args.source, mirror=args.mirror, top=args.top)
    if args.json:
        print(json.dumps(found.to_dict(), ensure_ascii=False))
        return 0
    if found.ecco:
        print(f"{found.ecco} {found.opening}")
    print(found.fen)
    cols = [("move", 10), ("games", 6), ("red%", 6), ("draw%", 6), ("black%", 6), ("year", 5)]

    def pct(v) -> str:
        return "" if v is None else f"{v:.1f}"

    lines = ["  ".join(_cut(name, w) for name, w in cols).rstrip()]
    for m in found.moves:
        cells = [m.text, str(m.games), pct(m.red_pct), pct(m.draw_pct), pct(m.black_pct),
                 str(m.avg_year or "")]
        lines.append("  ".join(_cut(c, w) for c, (_n, w) in zip(cells, cols, strict=True)).rstrip())
    print("\n".join(lines))
    print(f"{found.games} games" + (f", {found.ended} end here" if found.ended else ""))
    if found.top:
        print()
        print("recent games")
        hits = found.top
        print(_table(hits, similar=False, position=True))
    return 0


def cmd_db_info(args: argparse.Namespace) -> int:
    """``xiangqi db info``: the URL, schema revision, and the number of games, positions and boards."""
    from sqlalchemy import func, select

    from xiangqi.db.database import current_revision
    from xiangqi.db.schema import boards, games, positions

    engine = open_db(args)
    with engine.connect() as conn:
        n_games = conn.execute(select(func.count()).select_from(games)).scalar_one()
        n_pos = conn.execute(select(func.count()).select_from(positions)).scalar_one()
        n_boards = conn.execute(select(func.count()).select_from(boards)).scalar_one()
    print(f"database  {engine.url.render_as_string(hide_password=True)}")
    print(f"schema    {current_revision(engine)}")
    print(f"games     {n_games}")
    print(f"positions {n_pos} (distinct {n_boards})")
    return 0
