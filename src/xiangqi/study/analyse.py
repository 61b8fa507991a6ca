"""``xiangqi analyse``: review every game of a record file (annotated PGN, summary table, JSON lines).

:func:`run` is the command behind the CLI; :func:`summary_table` and :class:`Progress` are its
parts. Any format :func:`xiangqi.core.records.read_records` reads is accepted (PGN, XQF,
DhtmlXQ/UBB, EPD).
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
from xiangqi.study.review import DEFAULT_HASH_MB, GameReview, default_jobs, review_games

__all__ = ["Progress", "run", "summary_table"]


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


def run(input_path: str, output: str | None = None, *, depth: int | None = None,
        movetime_ms: int | None = None, jobs: int = 1, as_json: bool = False, hash_mb: int = DEFAULT_HASH_MB,
        input_format: str | None = None,
        quiet: bool = False, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Review every game of ``input_path`` ('-' reads stdin) and report.

    ``output``: write the annotated PGN there ('-' for stdout), game by game as they finish.
    ``as_json``: one JSON object per game per line on stdout (:meth:`GameReview.to_dict` plus
    ``"game"``, its 1-based number); the summary table then goes to stderr, else to stdout
    (stderr when the PGN goes to stdout). ``depth`` (default 8) or ``movetime_ms`` per position,
    ``jobs`` local processes (0: one per CPU), ``hash_mb`` the TT size. The progress bar goes to
    stderr unless ``quiet``. Returns 0, or 1 when some games had reading problems (listed on
    stderr, their readable moves reviewed). Raises :class:`XiangqiError` for an unreadable
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
    if jobs < 0:
        raise XiangqiError(f"--jobs must be >= 0 (0: one per CPU), got {jobs}")
    if hash_mb < 1:
        raise XiangqiError(f"--hash must be at least 1 MB, got {hash_mb}")
    jobs = jobs or default_jobs()
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
    bar = None if quiet else Progress(sum(len(g.mainline_moves()) + 1 for g in games), err)
    done: list[tuple[int, GameReview]] = []
    try:
        reviews = review_games(games, depth=depth, movetime_ms=movetime_ms, hash_mb=hash_mb, jobs=jobs,
                               on_progress=None if bar is None else bar.update)
        for n, review in enumerate(reviews, 1):
            done.append((n, review))
            if as_json:
                out.write(json.dumps({"game": n, **review.to_dict()}, ensure_ascii=False) + "\n")
                out.flush()
            if pgn_fh is not None:
                pgn_fh.write(write_game(review.annotate(games[n - 1])) + "\n")
                pgn_fh.flush()
    except ValueError as exc:
        raise XiangqiError(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
        if pgn_fh is not None and pgn_fh is not out:
            pgn_fh.close()
    table_fh.write(summary_table(done))
    table_fh.flush()
    return 1 if problems else 0
