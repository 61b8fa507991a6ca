"""``xiangqi analyse``: review every game of a record file (annotated PGN, summary table, JSON lines).

:func:`run` is the command behind the CLI; :func:`summary_table`, :class:`Progress` /
:class:`RichProgress` and :func:`review_on_cluster` are its parts. Any format
:func:`xiangqi.core.records.read_records` reads is accepted (PGN, XQF, DhtmlXQ/UBB, EPD).

Where the work runs: in this process (``--jobs 1``), in N local processes (``--jobs N``,
:func:`xiangqi.study.review.review_games`), or on a Dask distributed cluster (``--cluster
tcp://HOST:PORT``, :func:`review_on_cluster`: chunks of games as futures, each worker searching
its games' positions; the workers need pyxiangqi installed). Every position is searched from a
cleared hash table, so the output is the same wherever it runs.
"""

from __future__ import annotations

import json
import sys
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from xiangqi.core.errors import XiangqiError
from xiangqi.study.review import (
    DEFAULT_CONFIRM_DEPTH,
    DEFAULT_HASH_MB,
    EngineCommand,
    GameReview,
    PositionEval,
    ReviewCancelled,
    build_review,
    close_engines,
    default_jobs,
    evaluate_game,
    review_games,
)

__all__ = ["Progress", "RichProgress", "make_progress", "run", "summary_table", "review_on_cluster",
           "evaluate_games", "engine_command", "GAMES_PER_TASK"]

#: Games per Dask task (``--cluster``): few enough that the tasks spread over the workers and the
#: progress moves, many enough that the scheduler's per-task cost (~1 ms) is lost in the searches
#: (a game is ~100 positions of ~0.1 s at depth 8).
GAMES_PER_TASK = 4


class Progress:
    """A progress bar of analysed positions on a text stream (stderr): redrawn in place on a terminal (at most
    10 times a second), a line every ``every`` seconds otherwise; :meth:`close` ends it."""

    def __init__(self, total: int, stream: TextIO | None = None, *, every: float = 5.0,
                 width: int = 30) -> None:
        self.total = max(1, total)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every if not self.tty else 0.1
        self.width = width
        self.t0 = time.perf_counter()
        self.last = -1e9
        self.done = 0

    def line(self) -> str:
        """The bar's text: ``[#####-----] 12/40 positions  3.1/s``."""
        frac = min(1.0, self.done / self.total)
        fill = int(frac * self.width)
        dt = time.perf_counter() - self.t0
        rate = self.done / dt if dt > 0 else 0.0
        return f"[{'#' * fill}{'-' * (self.width - fill)}] {self.done}/{self.total} positions  {rate:.1f}/s"

    def update(self, done: int, total: int | None = None) -> None:
        """Set the count of positions done (the callback of :func:`review_games`)."""
        self.done = done
        if total is not None:
            self.total = max(1, total)
        now = time.perf_counter()
        if now - self.last < self.every and done < self.total:
            return
        self.last = now
        if self.tty:
            self.stream.write("\r" + self.line())
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Finish the bar (a final newline on a terminal)."""
        if self.tty:
            self.stream.write("\r" + self.line() + "\n")
            self.stream.flush()


class RichProgress:
    """The progress bar on a terminal, drawn by rich (bar, positions done / total, positions per
    second, time left) on ``stream``; the same :meth:`update` / :meth:`close` as :class:`Progress`."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as _Bar

        self.total = max(1, total)
        self.console = Console(file=stream if stream is not None else sys.stderr, force_terminal=True)
        self.bar = _Bar(TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), TextColumn("positions"),
                        TaskProgressColumn(), TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                        console=self.console, transient=False, refresh_per_second=10)
        self.task = self.bar.add_task("analyse", total=self.total, rate="")
        self.t0 = time.perf_counter()
        self.done = 0
        self.bar.start()

    def update(self, done: int, total: int | None = None) -> None:
        """Set the count of positions done (the callback of :func:`review_games`)."""
        self.done = done
        if total is not None:
            self.total = max(1, total)
        dt = time.perf_counter() - self.t0
        rate = f"{done / dt:.1f}/s" if dt > 0 else ""
        self.bar.update(self.task, completed=done, total=self.total, rate=rate)

    def close(self) -> None:
        """Draw the bar a last time and give the terminal back."""
        self.bar.refresh()
        self.bar.stop()


def make_progress(total: int, stream: TextIO, quiet: bool = False) -> Progress | RichProgress | None:
    """The progress display of ``total`` positions on ``stream``: None with ``quiet``, a rich bar on a
    terminal, else :class:`Progress`'s plain lines (a log file gets a line every 5 s, no control
    characters)."""
    if quiet:
        return None
    if bool(getattr(stream, "isatty", lambda: False)()):
        return RichProgress(total, stream)
    return Progress(total, stream)


# -- a Dask cluster ---------------------------------------------------------------------------------


def evaluate_games(lines: Sequence[tuple[str, Sequence[str]]], depth: int | None, movetime_ms: int | None,
                   hash_mb: int, deep: int | None = None) -> list[list[dict]]:
    """The work of one cluster task: the evaluations (:meth:`PositionEval.to_dict`) of every position of
    each line ``(start FEN, ICCS moves)``, in order, second pass (``deep``) included. Plain data in
    and out (it runs on a worker)."""
    out = []
    for start, moves in lines:
        evals = evaluate_game(start, list(moves), depth, movetime_ms, hash_mb, deep)
        out.append([e.to_dict() for e in evals])
    return out


def _connect(address: str, timeout_s: float):
    try:
        from distributed import Client
    except ImportError:
        raise XiangqiError("--cluster needs dask.distributed: pip install 'pyxiangqi[cluster]'") from None
    try:
        return Client(address, timeout=timeout_s)
    except (OSError, TimeoutError, ValueError) as exc:
        raise XiangqiError(f"cannot connect to the Dask cluster at {address!r}: {exc}") from None


def review_on_cluster(games: Sequence, client, *, depth: int | None = None, movetime_ms: int | None = None,
                      hash_mb: int = DEFAULT_HASH_MB, deep: int | None = None,
                      games_per_task: int = GAMES_PER_TASK,
                      in_flight: int | None = None, on_progress=None, cancelled=None):
    """Review ``games`` on a Dask cluster (``client``: a :class:`distributed.Client`), yielding the
    :class:`GameReview` of each game in the games' order.

    The games go out in tasks of ``games_per_task`` (:func:`evaluate_games`), at most ``in_flight``
    tasks submitted at a time (default: twice the cluster's threads), so a database of tens of
    thousands of games never sits in the scheduler's memory at once. ``on_progress(done, total)``
    counts positions as tasks finish; ``cancelled()`` is asked between tasks
    (:class:`ReviewCancelled`). A task that fails on a worker raises its error here.
    """
    from distributed import as_completed

    from xiangqi.study.review import _game_line, _limit_dict, _make_limit

    _make_limit(depth, movetime_ms)
    lines = [_game_line(g) for g in games]
    total = sum(len(m) + 1 for _, m in lines)
    limit = _limit_dict(depth, movetime_ms, hash_mb, deep)
    per = max(1, int(games_per_task))
    chunks = [list(range(i, min(len(lines), i + per))) for i in range(0, len(lines), per)]
    if in_flight is None:
        in_flight = 2 * max(1, sum(client.nthreads().values()))
    results: dict[int, list[list[dict]]] = {}
    next_chunk = 0  # the next chunk to yield
    submitted = 0
    done = 0
    pending = as_completed()
    futures = {}

    def submit() -> bool:
        nonlocal submitted
        if submitted >= len(chunks):
            return False
        idx = chunks[submitted]
        fut = client.submit(evaluate_games, [lines[i] for i in idx], depth, movetime_ms, hash_mb, deep,
                            pure=False)
        futures[fut] = submitted
        pending.add(fut)
        submitted += 1
        return True

    try:
        for _ in range(max(1, in_flight)):
            if not submit():
                break
        while next_chunk < len(chunks):
            if next_chunk not in results:
                fut = next(pending)
                k = futures.pop(fut)
                results[k] = fut.result()
                done += sum(len(lines[i][1]) + 1 for i in chunks[k])
                if on_progress is not None:
                    on_progress(done, total)
                if cancelled is not None and cancelled():
                    raise ReviewCancelled(f"cancelled after {done} of {total} positions")
                submit()
                continue
            for gi, evals in zip(chunks[next_chunk], results.pop(next_chunk), strict=True):
                start, moves = lines[gi]
                g = games[gi]
                yield build_review(start, moves, [PositionEval.from_dict(e) for e in evals], limit=limit,
                                   headers=g.headers, errors=g.errors)
            next_chunk += 1
    finally:
        if futures:
            client.cancel(list(futures))


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _cell(text: str, width: int) -> str:
    text = str(text)
    while _width(text) > width:
        text = text[:-1]
    return text + " " * (width - _width(text))


def summary_table(reviews: Sequence[tuple[int, GameReview]]) -> str:
    """The summary table: one row per game (its number, players, result, plies, and per side the
    accuracy and the counts of ?! ? ??), columns aligned for Chinese names too."""
    head = (f"{_cell('#', 4)}{_cell('Red', 16)}{_cell('Black', 16)}{_cell('Result', 8)}{_cell('Plies', 6)}"
            f"{_cell('Red acc', 8)}{_cell('?!/?/??', 9)}{_cell('Black acc', 10)}{_cell('?!/?/??', 9)}")
    rows = [head, "-" * _width(head)]

    def acc(a: float | None) -> str:
        return "-" if a is None else f"{a:.1f}"

    for n, r in reviews:
        h = r.headers
        rows.append(
            f"{_cell(n, 4)}{_cell(h.get('Red', '') or '?', 16)}{_cell(h.get('Black', '') or '?', 16)}"
            f"{_cell(h.get('Result', '*') or '*', 8)}{_cell(len(r.plies), 6)}"
            f"{_cell(acc(r.red.accuracy), 8)}"
            f"{_cell(f'{r.red.inaccuracies}/{r.red.mistakes}/{r.red.blunders}', 9)}"
            f"{_cell(acc(r.black.accuracy), 10)}"
            f"{_cell(f'{r.black.inaccuracies}/{r.black.mistakes}/{r.black.blunders}', 9)}")
    return "\n".join(row.rstrip() for row in rows) + "\n"


def engine_command(command: str, args: Sequence[str] = (), options: Sequence[str] = (),
                   protocol: str = "auto", cp_scale: float | None = None) -> EngineCommand:
    """The :class:`EngineCommand` of ``--engine CMD --engine-arg A … --engine-option NAME=VALUE …``:
    the program found as :func:`xiangqi.engine.uci.commands.resolve_command` finds it (a path, or a name
    on ``$PATH`` or in /usr/games), checked by a handshake (UCI, else UCCI, with ``protocol``
    ``auto``) with the options set; ``cp_scale`` its centipawns per one of ours (None: known
    engines' measured scale, else 1). Raises :class:`XiangqiError` saying what is wrong: no such
    program, not an engine (no ``uciok``/``ucciok``), an option it does not have, a bad
    ``NAME=VALUE``."""
    from xiangqi.engine.uci.client import EngineError
    from xiangqi.engine.uci.commands import resolve_command
    from xiangqi.study.review import _external, close_engines

    argv = resolve_command(command, list(args))
    pairs = []
    for text in options:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise XiangqiError(f"--engine-option takes NAME=VALUE, got {text!r}")
        pairs.append((name.strip(), value.strip()))
    if protocol not in ("auto", "uci", "ucci"):
        raise XiangqiError(f"--engine-protocol must be auto, uci or ucci, got {protocol!r}")
    if cp_scale is not None and not 0 < cp_scale <= 100:
        raise XiangqiError(f"--engine-cp-scale must be > 0 and at most 100, got {cp_scale}")
    cmd = EngineCommand(tuple(argv), protocol, tuple(pairs), cp_scale)
    try:
        _external(cmd)  # started here once: a bad command fails before any work (and is reused)
    except EngineError as exc:
        close_engines()
        raise XiangqiError(f"--engine {' '.join(argv)}: not a usable UCI/UCCI engine: {exc}") from None
    return cmd


def run(input_path: str, output: str | None = None, *, depth: int | None = None,
        movetime_ms: int | None = None, jobs: int | None = 1, as_json: bool = False,
        hash_mb: int = DEFAULT_HASH_MB, input_format: str | None = None, cluster: str | None = None,
        cluster_timeout_s: float = 30.0, deep: int | None = -1, engine: EngineCommand | None = None,
        quiet: bool = False, stdout: TextIO | None = None, stderr: TextIO | None = None,
        confirm: int | None = None) -> int:
    """Review every game of ``input_path`` ('-' reads stdin) and report.

    ``output``: write the annotated PGN there ('-' for stdout), game by game as they finish.
    ``as_json``: one JSON object per game per line on stdout (:meth:`GameReview.to_dict` plus
    ``"game"``, its 1-based number); the summary table then goes to stderr, else to stdout
    (stderr when the PGN goes to stdout). ``depth`` (default 8) or ``movetime_ms`` per position,
    ``jobs`` local processes (0: one per CPU; None: 1), ``hash_mb`` the TT size. ``cluster``: the
    address of a Dask scheduler (``tcp://HOST:PORT``) to run the searches on instead
    (:func:`review_on_cluster`; ``jobs`` then caps the tasks in flight, default twice the cluster's
    threads). ``deep``: the second pass's depth (:func:`xiangqi.study.review.refine_line`; -1, 0
    or None: none, the default: docs/REVIEW.md, "Trust", found no gain from it on the bench).
    ``engine``: an external engine (:func:`engine_command`) reviews
    instead of ours (not with ``cluster``). ``confirm``: the confirmation depth
    (:func:`xiangqi.study.review.confirm_line`; None: :data:`DEFAULT_CONFIRM_DEPTH` with our
    engine, none with ``engine`` or ``cluster``, whose thresholds were not fitted / which has no
    such task; 0: none). The progress bar goes to stderr unless ``quiet``
    (rich's bar on a terminal, plain lines otherwise). Returns 0, or 1 when some games had reading
    problems (listed on stderr, their readable moves reviewed). Raises :class:`XiangqiError` for an unreadable
    input or output, or a bad limit.
    """
    from xiangqi.core.pgn import write_game
    from xiangqi.core.records import read_records

    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    if depth is not None and movetime_ms is not None:
        raise XiangqiError("give --depth or --movetime, not both")
    if depth is not None and not 1 <= depth <= 60:
        raise XiangqiError(f"--depth must be 1-60, got {depth}")
    if movetime_ms is not None and movetime_ms < 1:
        raise XiangqiError(f"--movetime must be at least 1 ms, got {movetime_ms}")
    if jobs is not None and jobs < 0:
        raise XiangqiError(f"--jobs must be >= 0 (0: one per CPU), got {jobs}")
    if cluster is not None and not cluster.startswith(("tcp://", "tls://", "ws://", "wss://", "inproc://")):
        raise XiangqiError(f"--cluster takes a scheduler address such as tcp://HOST:8786, got {cluster!r}")
    if hash_mb < 1:
        raise XiangqiError(f"--hash must be at least 1 MB, got {hash_mb}")
    if deep == -1:
        deep = None  # off by default: on the bench it did not make the marks more trustworthy
    if deep is not None and not 0 <= deep <= 60:
        raise XiangqiError(f"--deep must be 0-60, got {deep}")
    deep = deep or None
    if confirm is not None and not (confirm == 0 or 2 <= confirm <= 60):
        raise XiangqiError(f"--confirm must be 0 (off) or 2-60, got {confirm}")
    if confirm and (engine is not None or cluster is not None):
        raise XiangqiError("--confirm is for reviews by our engine: not with --engine or --cluster "
                           "(its thresholds are fitted to our engine's scores)")
    if confirm is None:
        confirm = DEFAULT_CONFIRM_DEPTH if engine is None and cluster is None else 0
    if engine is not None and cluster is not None:
        raise XiangqiError("--engine reviews with a local engine process: not with --cluster")
    if jobs == 0:
        jobs = default_jobs()
    in_flight = jobs  # with a cluster: None means twice its threads
    jobs = jobs or 1
    if input_path != "-" and Path(input_path).is_dir():
        raise XiangqiError(f"{input_path!r} is a directory: give one record file")
    if input_path != "-" and not Path(input_path).is_file():
        raise XiangqiError(f"no such file: {input_path!r}")
    source = sys.stdin.buffer.read() if input_path == "-" else input_path
    games = read_records(source, fmt=input_format)
    if not games:
        raise XiangqiError(f"no game in {input_path!r}")
    pgn_fh: TextIO | None = None
    if output == "-":
        pgn_fh = out
    elif output:
        try:
            pgn_fh = open(output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise XiangqiError(f"cannot write {output!r}: {exc.strerror or exc}") from None
    table_fh = err if (as_json or output == "-") else out
    problems = 0
    for i, g in enumerate(games, 1):
        for e in g.errors:
            problems += 1
            print(f"xiangqi analyse: warning: game {i}: {e}", file=err)
    from xiangqi.core.records import game_label, start_problem

    numbers = [i for i, g in enumerate(games, 1) if start_problem(g) is None]  # the games with a board
    if not numbers:
        raise XiangqiError(f"{input_path}: {game_label(games[0], 1)}: {start_problem(games[0])}")
    for i in sorted(set(range(1, len(games) + 1)) - set(numbers)):
        print(f"xiangqi analyse: warning: {game_label(games[i - 1], i)}: not analysed: its start position "
              "is unreadable", file=err)
    everything, games = games, [games[i - 1] for i in numbers]
    client = _connect(cluster, cluster_timeout_s) if cluster is not None else None
    bar = make_progress(sum(len(g.mainline_moves()) + 1 for g in games), err, quiet)
    done: list[tuple[int, GameReview]] = []
    try:
        if client is not None:
            reviews = review_on_cluster(games, client, depth=depth, movetime_ms=movetime_ms, hash_mb=hash_mb,
                                        deep=deep, in_flight=in_flight,
                                        on_progress=None if bar is None else bar.update)
        else:
            reviews = review_games(games, depth=depth, movetime_ms=movetime_ms, hash_mb=hash_mb, deep=deep,
                                   jobs=jobs, engine=engine, on_progress=None if bar is None else bar.update,
                                   confirm=confirm or None)
        for k, review in enumerate(reviews):
            n = numbers[k]  # the game's number in the file
            done.append((n, review))
            if as_json:
                out.write(json.dumps({"game": n, **review.to_dict()}, ensure_ascii=False) + "\n")
                out.flush()
            if pgn_fh is not None:
                pgn_fh.write(write_game(review.annotate(everything[n - 1])) + "\n")
                pgn_fh.flush()
    except ValueError as exc:
        raise XiangqiError(str(exc)) from None
    finally:
        if engine is not None:
            close_engines()
        if bar is not None:
            bar.close()
        if pgn_fh is not None and pgn_fh is not out:
            pgn_fh.close()
        if client is not None:
            client.close()
    table_fh.write(summary_table(done))
    table_fh.flush()
    return 1 if problems else 0
