"""Record parsing with a time budget, in a separate process, so that no upload can block the server.

Why a process: the record readers are pure Python, so a parse in a thread still holds the GIL and
slows every other request; and a thread cannot be stopped, so a budget in a thread only decides
when to stop *waiting*. A child process runs on the other core, and past its budget it is killed
(SIGKILL): the time a record can take is really bounded (and its memory: 1 GiB of address
space). The children are forked from a ``forkserver`` that has the readers imported already, so
a parse costs a fork (a few ms) rather than a Python start-up; the budget counts from the moment
the child runs the job, so a slow start of the fork server never turns a small record into "too
complex".

Jobs (:func:`open_record_job`, :func:`convert_record_job`, :func:`open_game_job`) are plain module
functions; what they return travels back pickled. A :class:`xiangqi.core.errors.XiangqiError` they
raise comes back as :class:`RecordJobError` with the same text (400); a job past its budget raises
:class:`RecordTooComplex` (422).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import threading
from typing import Any

from xiangqi.core.errors import XiangqiError

#: Seconds one record parse may take. A 2 MB collection of ~2,000 ordinary games (the upload limit)
#: took about 10 s on a busy 2-core machine, so the budget leaves room for it; the parse runs in a
#: child process, so the server answers everyone else meanwhile, and only pathological records (deep
#: variation nesting) reach the budget.
RECORD_BUDGET_S = 30.0
#: Seconds to wait for a child process to start before giving up (fork server start-up included).
_START_TIMEOUT_S = 60.0
#: Record parses running at once (the machine's cores; more would only queue on the CPUs).
MAX_PARALLEL = max(1, min(2, os.cpu_count() or 1))


class RecordJobError(XiangqiError):
    """The record was refused by its reader (bad format, illegal move…); the text says why."""


class RecordTooComplex(RecordJobError):
    """The record took longer than its budget to read; ``budget_s`` is that budget (seconds)."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(f"record too complex: reading it took longer than {budget_s:g} s "
                         f"(the limit for one record)")
        self.budget_s = budget_s


_ctx_lock = threading.Lock()
_ctx: Any = None


def _context() -> Any:
    """The multiprocessing context: ``forkserver`` preloading the readers where available
    (Linux, macOS), else ``spawn``. Never plain ``fork``: the server has threads."""
    global _ctx
    with _ctx_lock:
        if _ctx is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload(["xiangqi.app.library.records",
                                            "xiangqi.core.records", "xiangqi.core.pgn"])
            else:
                ctx = multiprocessing.get_context("spawn")
            _ctx = ctx
        return _ctx


def prestart() -> None:
    """Start the fork server now (it imports the readers), so the first upload does not wait for it."""
    ctx = _context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


#: Address space a child may use (bytes): a record that needs more is "too complex", not a machine
#: that swaps.
CHILD_MEMORY_BYTES = 1 << 30


def _limit_memory() -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the time budget still holds
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > CHILD_MEMORY_BYTES:
            resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, hard))
    except (ValueError, OSError):
        pass


def _child(conn: Any, fn: Any, args: tuple[Any, ...]) -> None:
    _limit_memory()
    conn.send(("started", None))
    try:
        result: tuple[str, Any] = ("ok", fn(*args))
    except XiangqiError as exc:
        result = ("refused", str(exc))
    except RecursionError:
        result = ("refused", "record too complex: nested too deeply to read")
    except MemoryError:
        result = ("refused", "record too complex: reading it needs too much memory")
    except Exception as exc:  # a reader bug: the page gets a message, not a crash
        result = ("refused", f"the record cannot be read ({type(exc).__name__}: {exc})")
    try:
        conn.send(result)
    except Exception as exc:  # an unpicklable result
        conn.send(("refused", f"the record cannot be read ({type(exc).__name__})"))
    conn.close()


def run_in_child(fn: Any, *args: Any, budget_s: float = RECORD_BUDGET_S) -> Any:
    """``fn(*args)`` in a child process, killed after ``budget_s`` seconds of work; blocks the caller.

    Returns what ``fn`` returns; raises :class:`RecordJobError` with the text of a
    :class:`XiangqiError` it raised (or of a crash), :class:`RecordTooComplex` past the budget,
    and :class:`OSError` when no child process can be started.
    """
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    try:
        proc.start()
        send.close()
        if not recv.poll(_START_TIMEOUT_S):
            raise OSError("the record reader process did not start")
        recv.recv()  # "started"
        if not recv.poll(budget_s):
            raise RecordTooComplex(budget_s)
        try:
            status, value = recv.recv()
        except EOFError:  # the child died (killed by the OS for its memory, say)
            raise RecordJobError("record too complex: its reader stopped without an answer") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    if status != "ok":
        raise RecordJobError(value)
    return value


class RecordSandbox:
    """Runs record jobs off the event loop, at most :data:`MAX_PARALLEL` at once, each in a child
    process with ``budget_s`` seconds (see :func:`run_in_child`)."""

    def __init__(self, budget_s: float = RECORD_BUDGET_S, parallel: int = MAX_PARALLEL) -> None:
        self.budget_s = budget_s
        self._slots = threading.BoundedSemaphore(parallel)  # not asyncio's: no tie to one event loop

    def _run(self, fn: Any, args: tuple[Any, ...]) -> Any:
        with self._slots:
            return run_in_child(fn, *args, budget_s=self.budget_s)

    async def run(self, fn: Any, *args: Any) -> Any:
        """Await ``fn(*args)`` run by :func:`run_in_child`; the event loop keeps serving meanwhile."""
        return await asyncio.to_thread(self._run, fn, args)


# -- jobs (run in the child) ---------------------------------------------------------------------------


def open_record_job(data: bytes, name: str, index: int, first_readable: bool = False) -> bytes:
    """:func:`xiangqi.app.library.records.open_record` as UTF-8 JSON bytes (encoded in the child, so that a
    large view costs the server no encoding time)."""
    from xiangqi.app.library.records import open_record

    view = open_record(data, name, index, first_readable=first_readable)
    return json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")


def convert_record_job(data: bytes, name: str, index: int, fmt: str,
                       notation: str) -> tuple[bytes, str, str, list[str]]:
    """:func:`xiangqi.app.library.records.convert_record`, with its warnings (what XQF could not keep)
    last."""
    from xiangqi.app.library.records import convert_record

    warnings: list[str] = []
    return (*convert_record(data, name, index, fmt, notation, warnings=warnings), warnings)


def open_game_job(data: bytes, red: str, black: str, level: str) -> Any:
    """A :class:`xiangqi.app.play.session.GameSession` replaying the first game of the record file ``data``
    (bytes: PGN, XQF, DhtmlXQ/UBB or EPD, format and encoding sniffed); raises
    :class:`xiangqi.app.play.session.SessionError` when it holds no playable game (a record whose start
    position or moves cannot be read is refused, not opened as an empty game from the standard start)
    and :class:`xiangqi.core.errors.XiangqiError` when the data is no record at all."""
    from xiangqi.app.play.session import GameSession, SessionError
    from xiangqi.core.pgn import read_text_file
    from xiangqi.core.records import detect_format, read_records, write_records

    games = read_records(data)
    game = games[0]
    if game.errors and not list(game.mainline_moves()):
        raise SessionError(f"the record could not be read: {game.errors[0]}")
    if detect_format(data) == "pgn" and not data.lstrip().startswith(b"[DhtmlXQ"):
        text = read_text_file(data)  # the PGN itself: its headers and result as written
    else:
        text = write_records([game], "pgn").decode("utf-8")
    return GameSession.from_pgn(text, red=red, black=black, level=level)
