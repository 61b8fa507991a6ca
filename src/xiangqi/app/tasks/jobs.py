"""Long setup work started from the page: importing the master games, generating the default tables.

A new install has an empty games database (the opening explorer and the database browser show
nothing) and no endgame tables (endgame practice cannot start). Both are filled by work that takes a
minute or more on a small machine; the page starts it as a :class:`Job`, which runs in one thread of
its own and keeps a :meth:`Job.snapshot` the page polls (``GET /api/jobs/{name}``,
:mod:`xiangqi.web.jobs_api`).

The job is background work in the sense of :mod:`xiangqi.app.tasks.background`: at each progress step it
waits while the game's computer or a hint searches (:meth:`ForegroundGate.wait_idle`), so a game
played during the import keeps its speed. A job can be cancelled (it stops at its next progress
step); what it had finished stays: the importer commits every chunk of games, and the table
generator keeps every finished table and its checkpoints, so starting it again goes on from there.

:func:`masters_job` and :func:`tablebases_job` are the two works; each is ``work(step)`` where
``step(done, total, phase)`` reports progress (and raises :class:`Cancelled` when asked to stop).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xiangqi.app.tasks.background import ForegroundGate

__all__ = ["Cancelled", "Job", "Step", "masters_job", "tablebases_job", "DEFAULT_TB_MAX_INDICES"]

log = logging.getLogger(__name__)

#: ``step(done, total, phase, info=None)``: progress of a job's work (``done`` of ``total`` units,
#: ``phase`` a short word the page translates, ``info`` a small JSON-able dict of counts shown beside
#: the bar); raises :class:`Cancelled` once the job is cancelled.
Step = Callable[..., None]

#: The default table set the page generates: the endings of at most this many indices per side to
#: move, the README's ``xiangqi tb generate --default --max-indices 1100000`` (62 endings, KPK ...
#: KRRKA; about 75 s on a 2-core machine, first compile of the kernels included).
DEFAULT_TB_MAX_INDICES = 1_100_000


class Cancelled(Exception):  # noqa: N818 - the job's own stop signal, not an error
    """The job was cancelled; raised by ``step`` inside the work."""


class Job:
    """One kind of background work with at most one run at a time.

    ``work(step)`` runs in a daemon thread at :meth:`start`; it returns a JSON-able result (kept in
    the snapshot's ``result``) or raises (the message kept in ``error``). States: ``idle`` (never
    run), ``running``, ``done``, ``failed``, ``cancelled``. Thread-safe.
    """

    def __init__(self, name: str, work: Callable[[Step], Any], gate: ForegroundGate | None = None) -> None:
        self.name = name
        self.work = work
        self.gate = gate
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._state: dict[str, Any] = {"name": name, "state": "idle", "done": 0, "total": 0, "phase": "",
                                       "info": {}, "error": None, "result": None, "started": None,
                                       "seconds": None}

    def snapshot(self) -> dict[str, Any]:
        """``{name, state, done, total, phase, info, error, result, started, seconds}`` (a copy):
        ``done``/``total`` the progress in the work's units (``total`` 0: not known yet), ``phase``
        the work's word for its current step, ``info`` its counts, ``started`` the Unix time of the
        start, ``seconds``
        the run's length once it ended."""
        with self._lock:
            return dict(self._state)

    @property
    def running(self) -> bool:
        """True while the work runs."""
        with self._lock:
            return self._state["state"] == "running"

    def start(self) -> bool:
        """Start the work in a new thread; False (and nothing started) when it is running already."""
        with self._lock:
            if self._state["state"] == "running":
                return False
            self._cancel.clear()
            self._state.update(state="running", done=0, total=0, phase="start", info={}, error=None,
                               result=None, started=time.time(), seconds=None)
            self._thread = threading.Thread(target=self._run, name=f"xiangqi-job-{self.name}", daemon=True)
            self._thread.start()
        return True

    def cancel(self) -> bool:
        """Ask the running work to stop at its next step; False when nothing runs."""
        with self._lock:
            if self._state["state"] != "running":
                return False
        self._cancel.set()
        return True

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the run to end (tests, shutdown); True when no run is left."""
        t = self._thread
        if t is not None:
            t.join(timeout)
            return not t.is_alive()
        return True

    def _step(self, done: float, total: float, phase: str, info: dict[str, Any] | None = None) -> None:
        if self._cancel.is_set():
            raise Cancelled
        if self.gate is not None:
            while not self.gate.wait_idle(0.5):  # the game's computer searches: give way
                if self._cancel.is_set():
                    raise Cancelled
        with self._lock:
            self._state.update(done=done, total=total, phase=phase, info=dict(info or {}))

    def _run(self) -> None:
        t0 = time.monotonic()
        try:
            result = self.work(self._step)
        except Cancelled:
            end: dict[str, Any] = {"state": "cancelled"}
        except Exception as exc:  # noqa: BLE001 - the page shows what went wrong; the server goes on
            log.warning("background job %s failed: %s", self.name, exc, exc_info=True)
            end = {"state": "failed", "error": str(exc) or type(exc).__name__}
        else:
            end = {"state": "done", "result": result}
        with self._lock:
            self._state.update(end, seconds=round(time.monotonic() - t0, 1))


def masters_job(gdb: Any) -> Callable[[Step], dict[str, Any]]:
    """The work that imports the shipped master games (:func:`xiangqi.db.masters.import_masters`)
    into the app's games database ``gdb`` (:class:`xiangqi.app.library.database.GamesDatabase`). Progress:
    bytes of the shipped file read (phase ``read``), then ``counts`` (the explorer's counts); info:
    ``{games, added, duplicates}`` so far. Result:
    ``{games, added, duplicates, skipped}``."""

    def work(step: Step) -> dict[str, Any]:
        from xiangqi.db.masters import import_masters

        step(0, 0, "open")
        engine = gdb.engine()

        def progress(p) -> None:
            r = p.report
            step(p.done, p.total, p.phase, {"games": r.games, "added": r.added, "duplicates": r.duplicates})

        report = import_masters(engine, progress=progress)
        return {"games": report.games, "added": report.added, "duplicates": report.duplicates,
                "skipped": report.skipped}

    return work


def tablebases_job(directory: Path, max_indices: int = DEFAULT_TB_MAX_INDICES, *,
                   checkpoint_every: float | None = 60.0,
                   generate: Callable[..., Any] | None = None) -> Callable[[Step], dict[str, Any]]:
    """The work that generates the default tables (:func:`xiangqi.engine.tablebase.default_set` of
    ``max_indices``, smallest first) into ``directory``, as ``xiangqi tb generate --default
    --max-indices N`` does: tables already there are kept (resumable), an ending cut off midway goes
    on from its checkpoint (every ``checkpoint_every`` seconds). Progress: endings done of the set
    (phase: the ending being generated). ``generate``: the generator (tests; default
    :func:`xiangqi.engine.tablebase.generate`). Result: ``{endings, generated}``."""

    def work(step: Step) -> dict[str, Any]:
        from xiangqi.engine import tablebase

        gen = generate or tablebase.generate
        names = tablebase.default_set(max_indices)
        made = 0
        for i, name in enumerate(names):
            step(i, len(names), name)
            if not tablebase.table_path(directory, name).exists():
                # each progress line of the generator is a step too: a cancel stops it midway (its
                # checkpoint stays) and it waits while the game's computer searches
                gen(name, directory, checkpoint_every=checkpoint_every,
                    progress=lambda _msg, i=i, name=name: step(i, len(names), name))
                made += 1
        step(len(names), len(names), "done")
        return {"endings": len(names), "generated": made}

    return work
