"""Review jobs on the server: a small queue of game reviews, run behind the game's own computer.

A review (:func:`xiangqi.study.review.evaluate_game` / :func:`~xiangqi.study.review.build_review`)
takes ``plies + 1`` engine searches: seconds to a minute, far too long for a request.
:class:`ReviewManager` runs them in worker threads:

- a bounded queue: at most ``max_jobs`` reviews queued or running per server
  (:class:`ReviewQueueFull` past it: the web layer answers 429); submitting a review that is
  already queued or running (same game, same moves, same depth) returns that job;
- ``workers`` threads (default 1: on a small machine a second one only competes with the game's
  computer), started when work arrives and ended after :data:`IDLE_EXIT_S` idle seconds;
- before every position the worker waits until the game's computer (and a hint) is not searching
  (:meth:`xiangqi.app.tasks.background.ForegroundGate.wait_idle`), so a review never slows a game down;
- progress ``done / total`` positions, cancel (a queued job at once, a running one before its next
  position), ``failed`` with the reason;
- finished jobs are forgotten :data:`KEEP_FINISHED_S` seconds after they end (and beyond
  :data:`MAX_FINISHED` of them, the oldest first);
- every finished review is stored with the game in the app's SQLite file (table ``reviews``, one
  row per game identity and depth, holding :meth:`GameReview.to_stored`), so reviewing the same
  game again is answered at once (:meth:`ReviewManager.stored`) without a search; a row whose
  moves differ from the game's (the game went on, a move was taken back) is stale and deleted.

Identity of a game: ``game:<session id>`` for the current game and the library's games (a game
keeps its id when it goes to the library, so a review of the game just played is found again from
the library), ``record:<digest>`` for an uploaded record (the digest of its start position and
moves). The row also keeps the digest of the reviewed line (start, moves, hash size): a lookup
with other moves misses and deletes the row.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.core.errors import XiangqiError
from xiangqi.study.review import (
    CONFIRM_VERSION,
    DEFAULT_CONFIRM_DEPTH,
    DEFAULT_DEPTH,
    DEFAULT_HASH_MB,
    GameReview,
    ReviewCancelled,
    _limit_dict,
    build_review,
    confirm_line,
    evaluate_game,
)

__all__ = [
    "ReviewSource", "ReviewJob", "ReviewManager", "ReviewQueueFull", "ReviewStore",
    "line_digest", "record_key", "game_key", "review_record_job",
    "MAX_JOBS", "KEEP_FINISHED_S", "MAX_FINISHED", "IDLE_EXIT_S",
]

log = logging.getLogger(__name__)

#: Reviews queued or running at once per server (more are refused: 429).
MAX_JOBS = 4
#: Seconds a finished (done, cancelled, failed) job stays known after it ended.
KEEP_FINISHED_S = 1800.0
#: Finished jobs kept at most (the oldest are forgotten first).
MAX_FINISHED = 64
#: Seconds an idle worker thread waits for work before it ends.
IDLE_EXIT_S = 5.0
#: Seconds between two looks at the cancel flag while a worker waits for the foreground to end.
_GATE_POLL_S = 0.1
#: Most plies a game sent for review may have (a longer one is refused).
MAX_PLIES = 1000

#: Job states (the review API's ``status``).
QUEUED, RUNNING, DONE, CANCELLED, FAILED = "queued", "running", "done", "cancelled", "failed"
FINISHED = (DONE, CANCELLED, FAILED)


class ReviewQueueFull(XiangqiError):
    """The server already has its maximum of reviews queued or running; ``limit`` is that maximum."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"too many reviews at once: {limit} are already queued or running on this "
                         "server; wait for one to finish or cancel one, then try again")
        self.limit = limit


def line_digest(start_fen: str, moves: Sequence[str], hash_mb: int = DEFAULT_HASH_MB) -> str:
    """SHA-1 hex of a reviewed line: start FEN, ICCS moves and TT size (a review depends on all three),
    and the confirmation depth and method (:data:`DEFAULT_CONFIRM_DEPTH`, :data:`CONFIRM_VERSION`), so
    that a review stored before or with another confirmation is not served as this one."""
    text = f"{start_fen}|{' '.join(moves)}|{hash_mb}|confirm{DEFAULT_CONFIRM_DEPTH}v{CONFIRM_VERSION}"
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def game_key(game_id: str) -> str:
    """Identity of a played game (the current one or a library row): ``game:<session id>``."""
    return f"game:{game_id}"


def record_key(start_fen: str, moves: Sequence[str]) -> str:
    """Identity of an uploaded record's game: ``record:`` and the digest of its start and moves."""
    return "record:" + hashlib.sha1(f"{start_fen}|{' '.join(moves)}".encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class ReviewSource:
    """What to review: ``key`` the game's identity (:func:`game_key`, :func:`record_key`), its start
    FEN and main-line ``moves`` (ICCS, legal), ``headers`` (PGN tags) and the search ``depth``."""

    key: str
    start_fen: str
    moves: tuple[str, ...]
    headers: dict[str, str]
    depth: int = DEFAULT_DEPTH
    hash_mb: int = DEFAULT_HASH_MB
    errors: tuple[str, ...] = ()
    #: An added engine (``engine:<id>``, :mod:`xiangqi.app.opponents.engines`) that reviews instead of ours.
    engine: str | None = None

    @property
    def stored_key(self) -> str:
        """The key of the stored review: the game's, and the added engine's when one reviews it (a
        review by another engine is another review)."""
        return self.key if self.engine is None else f"{self.key}|{self.engine}"

    @property
    def digest(self) -> str:
        """:func:`line_digest` of the line."""
        return line_digest(self.start_fen, self.moves, self.hash_mb)


@dataclasses.dataclass
class ReviewJob:
    """One review: ``id`` (hex), its :class:`ReviewSource`, ``status`` (queued / running / done /
    cancelled / failed), ``done`` / ``total`` positions, ``error`` (why it failed), ``review``
    (the :class:`GameReview` when done), ``ended`` (monotonic time it finished, or None)."""

    id: str
    source: ReviewSource
    status: str = QUEUED
    done: int = 0
    total: int = 0
    error: str | None = None
    review: GameReview | None = None
    ended: float | None = None
    cancel_event: threading.Event = dataclasses.field(default_factory=threading.Event)

    def to_dict(self, with_review: bool = True) -> dict[str, Any]:
        """The review API's answer: ``{"job", "status", "done", "total", "error"?, "review"?}``."""
        out: dict[str, Any] = {"job": self.id, "status": self.status, "done": self.done, "total": self.total}
        if self.error is not None:
            out["error"] = self.error
        if with_review and self.review is not None:
            out["review"] = self.review.to_dict()
        return out


# -- storage -----------------------------------------------------------------------------------

_meta = sa.MetaData()
#: Stored reviews: one per game identity and depth; ``digest`` the reviewed line's
#: (:func:`line_digest`), ``review`` :meth:`GameReview.to_stored` as JSON.
reviews_table = sa.Table(
    "reviews", _meta,
    sa.Column("game_key", sa.String(80), primary_key=True),
    sa.Column("depth", sa.Integer, primary_key=True),
    sa.Column("digest", sa.String(40), nullable=False),
    sa.Column("review", sa.Text, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
)


class ReviewStore:
    """The ``reviews`` table in the app's database (``engine``: the :class:`xiangqi.app.play.store.Store`'s
    SQLAlchemy engine, whose errors are :class:`xiangqi.app.play.store.StorageError`). The table is created
    when missing; a read-only database simply keeps nothing (:meth:`save` returns False)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.writable = True
        try:
            _meta.create_all(engine)
        except XiangqiError as exc:  # a read-only or full database: reviews are not kept
            log.warning("reviews will not be stored: %s", exc)
            self.writable = False

    def load(self, key: str, depth: int, digest: str) -> GameReview | None:
        """The stored review of ``key`` at ``depth`` if its line's digest is ``digest``; a row for
        other moves is stale and deleted. A damaged row is deleted too (logged). None when absent."""
        try:
            with self.engine.connect() as conn:
                row = conn.execute(sa.select(reviews_table.c.digest, reviews_table.c.review).where(
                    reviews_table.c.game_key == key, reviews_table.c.depth == depth)).first()
        except XiangqiError as exc:
            log.warning("cannot read stored reviews: %s", exc)
            return None
        if row is None:
            return None
        if row.digest == digest:
            try:
                return GameReview.from_stored(json.loads(row.review))
            except ValueError as exc:
                log.warning("dropping a damaged stored review of %s: %s", key, exc)
        self.delete(key, depth)
        return None

    def latest(self, key: str, digest: str) -> GameReview | None:
        """The stored review of ``key`` with the deepest search among the rows for the line ``digest``
        (rows for other moves are deleted), or None."""
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(sa.select(reviews_table.c.depth, reviews_table.c.digest).where(
                    reviews_table.c.game_key == key).order_by(reviews_table.c.depth.desc())).all()
        except XiangqiError as exc:
            log.warning("cannot read stored reviews: %s", exc)
            return None
        for row in rows:
            got = self.load(key, int(row.depth), digest)
            if got is not None:
                return got
        return None

    def save(self, key: str, depth: int, digest: str, review: GameReview) -> bool:
        """Keep ``review`` (replacing the row of ``key`` and ``depth``); False when it cannot be written."""
        if not self.writable:
            return False
        text = json.dumps(review.to_stored(), ensure_ascii=False, separators=(",", ":"))
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.delete(reviews_table).where(reviews_table.c.game_key == key,
                                                            reviews_table.c.depth == depth))
                conn.execute(sa.insert(reviews_table).values(game_key=key, depth=depth, digest=digest,
                                                             review=text, updated=time.time()))
            return True
        except XiangqiError as exc:
            log.warning("cannot store the review of %s: %s", key, exc)
            return False

    def delete(self, key: str, depth: int | None = None) -> None:
        """Forget the stored review(s) of ``key`` (every depth when ``depth`` is None)."""
        q = sa.delete(reviews_table).where(reviews_table.c.game_key == key)
        if depth is not None:
            q = q.where(reviews_table.c.depth == depth)
        with contextlib.suppress(XiangqiError), self.engine.begin() as conn:
            conn.execute(q)


# -- the manager --------------------------------------------------------------------------------


class ReviewManager:
    """Queue, run, track and keep game reviews (module docstring).

    ``store``: a :class:`ReviewStore` (None: nothing kept); ``gate``: the server's
    :class:`ForegroundGate` (``hub.player.gate``); ``workers`` threads; ``max_jobs`` queued +
    running reviews at most; ``keep_s`` seconds a finished job stays known. ``clock`` gives
    monotonic seconds (tests pass their own). Thread-safe.
    """

    def __init__(self, store: ReviewStore | None, gate: ForegroundGate | None = None, *, workers: int = 1,
                 max_jobs: int = MAX_JOBS, keep_s: float = KEEP_FINISHED_S, max_finished: int = MAX_FINISHED,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if max_jobs < 1:
            raise ValueError(f"max_jobs must be >= 1, got {max_jobs}")
        self.store = store
        self.gate = gate or ForegroundGate()
        self.workers = workers
        self.max_jobs = max_jobs
        self.keep_s = keep_s
        self.max_finished = max_finished
        self.clock = clock
        self._lock = threading.Condition()
        self._jobs: OrderedDict[str, ReviewJob] = OrderedDict()
        self._queue: list[ReviewJob] = []
        self._threads: set[threading.Thread] = set()
        self._closed = False
        #: The added engines (:class:`xiangqi.app.opponents.engines.ExternalEngines`) a review may ask for.
        self.externals: Any = None

    # -- asking ----------------------------------------------------------

    def stored(self, source: ReviewSource) -> GameReview | None:
        """The stored review of ``source`` (same game, moves and depth), or None."""
        if self.store is None:
            return None
        return self.store.load(source.stored_key, source.depth, source.digest)

    def get(self, job_id: str) -> ReviewJob | None:
        """The job ``job_id``, or None (never existed, or forgotten)."""
        with self._lock:
            self._forget_old()
            return self._jobs.get(job_id)

    def active(self) -> int:
        """Reviews queued or running."""
        with self._lock:
            return sum(1 for j in self._jobs.values() if j.status in (QUEUED, RUNNING))

    # -- submitting -------------------------------------------------------

    def submit(self, source: ReviewSource) -> ReviewJob:
        """A job for ``source``: a finished one at once when a stored review matches, the job already
        queued, running or done for the same line and depth (a done one still known covers a
        database that cannot be written), else a new queued job. Raises
        :class:`ReviewQueueFull` when ``max_jobs`` reviews are queued or running, ValueError for a
        game longer than :data:`MAX_PLIES` or a closed manager."""
        if len(source.moves) > MAX_PLIES:
            raise ValueError(f"a game of {len(source.moves)} plies is too long to review "
                             f"(at most {MAX_PLIES})")
        total = len(source.moves) + 1
        stored = self.stored(source)
        with self._lock:
            if self._closed:
                raise ValueError("the review service is shut down")
            self._forget_old()
            if stored is not None:
                job = ReviewJob(uuid.uuid4().hex, source, status=DONE, done=total, total=total, review=stored,
                                ended=self.clock())
                self._jobs[job.id] = job
                return job
            for job in self._jobs.values():
                same = (job.source.key == source.key and job.source.depth == source.depth
                        and job.source.engine == source.engine
                        and job.source.digest == source.digest)
                if same and job.status in (QUEUED, RUNNING, DONE):  # DONE: kept here when not stored
                    return job
            if sum(1 for j in self._jobs.values() if j.status in (QUEUED, RUNNING)) >= self.max_jobs:
                raise ReviewQueueFull(self.max_jobs)
            job = ReviewJob(uuid.uuid4().hex, source, total=total)
            self._jobs[job.id] = job
            self._queue.append(job)
            self._lock.notify_all()
            if len(self._threads) < self.workers:
                t = threading.Thread(target=self._work, name="xiangqi-review", daemon=True)
                self._threads.add(t)
                t.start()
            return job

    def cancel(self, job_id: str) -> ReviewJob | None:
        """Cancel a queued job (at once) or a running one (before its next position); a finished job
        is left as it is. Returns the job, None when unknown."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            if job.status == QUEUED:
                self._queue.remove(job)
                self._finish(job, CANCELLED)
            elif job.status == RUNNING:
                job.cancel_event.set()
            return job

    def wait(self, job_id: str, timeout: float | None = None) -> ReviewJob | None:
        """Block until job ``job_id`` is finished (at most ``timeout`` s); the job, None if unknown."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                job = self._jobs.get(job_id)
                if job is None or job.status in FINISHED:
                    return job
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return job
                self._lock.wait(left if left is not None else 0.5)

    def close(self, timeout: float = 5.0) -> None:
        """Cancel every job, stop the workers (waiting at most ``timeout`` s for a running search)."""
        with self._lock:
            self._closed = True
            for job in list(self._queue):
                self._finish(job, CANCELLED)
            self._queue.clear()
            for job in self._jobs.values():
                if job.status == RUNNING:
                    job.cancel_event.set()
            self._lock.notify_all()
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)

    # -- inside ------------------------------------------------------------

    def _finish(self, job: ReviewJob, status: str, error: str | None = None) -> None:
        """Set a final status (call under the lock)."""
        job.status = status
        job.error = error
        job.ended = self.clock()
        self._lock.notify_all()

    def _forget_old(self) -> None:
        """Drop finished jobs past ``keep_s`` and beyond ``max_finished`` (call under the lock)."""
        now = self.clock()
        finished = [j for j in self._jobs.values() if j.status in FINISHED]
        extra = len(finished) - self.max_finished
        for j in finished:
            if (j.ended is not None and now - j.ended > self.keep_s) or extra > 0:
                del self._jobs[j.id]
                extra -= 1

    def _next(self) -> ReviewJob | None:
        with self._lock:
            end = time.monotonic() + IDLE_EXIT_S
            while not self._queue and not self._closed:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            if not self._queue or self._closed:
                self._threads.discard(threading.current_thread())
                return None
            job = self._queue.pop(0)
            job.status = RUNNING
            return job

    def _work(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            self._run(job)

    def _stop_asked(self, job: ReviewJob) -> bool:
        """Wait while the foreground searches; True when the job is to stop."""
        while not self.gate.wait_idle(_GATE_POLL_S):
            if job.cancel_event.is_set():
                return True
        return job.cancel_event.is_set()

    def _progress(self, job: ReviewJob, i: int) -> None:
        with self._lock:
            job.done = i + 1

    def _confirming(self, job: ReviewJob, k: int, n: int) -> None:
        """The confirmation's progress: ``k`` of its ``n`` candidate plies searched again. They count
        after the first pass's positions, so ``done`` keeps rising until the review is ready."""
        with self._lock:
            first = len(job.source.moves) + 1
            job.total = first + n
            job.done = first + k

    def _run(self, job: ReviewJob) -> None:
        src = job.source
        try:
            searcher, deep = None, None  # no second pass: docs/REVIEW.md, "Trust"
            confirm = DEFAULT_CONFIRM_DEPTH  # docs/REVIEW.md, "Confirmation" (our engine only)
            limit = _limit_dict(src.depth, None, src.hash_mb, deep, confirm=confirm)
            if src.engine is not None:  # an added engine reviews (Settings → engines)
                from xiangqi.app.opponents.engines import EngineSetupError, ExternalSearcher

                if self.externals is None:
                    raise EngineSetupError(f"{src.engine}: no added engines on this server")
                searcher = ExternalSearcher(self.externals, src.engine)
                limit = {"engine": searcher.spec.name, "movetime_s": searcher.spec.movetime_s}
                deep = None  # its time a move, as set in Settings → engines
                confirm = None  # the thresholds are fitted to our engine's scores
            evals = evaluate_game(src.start_fen, list(src.moves), src.depth, None, src.hash_mb, deep,
                                  on_position=lambda i: self._progress(job, i),
                                  cancelled=lambda: self._stop_asked(job), searcher=searcher)
            conf = (confirm_line(src.start_fen, list(src.moves), evals, confirm, src.hash_mb,
                                 cancelled=lambda: self._stop_asked(job),
                                 on_progress=lambda k, n: self._confirming(job, k, n))
                    if confirm else None)
            review = build_review(src.start_fen, list(src.moves), evals,
                                  limit=limit, confirmed=conf,
                                  headers=src.headers, errors=src.errors)
        except ReviewCancelled:
            with self._lock:
                self._finish(job, CANCELLED)
            return
        except Exception as exc:  # noqa: BLE001 - the job fails with the reason; the worker goes on
            log.exception("review %s failed", job.id)
            with self._lock:
                self._finish(job, FAILED, f"{type(exc).__name__}: {exc}" if not isinstance(exc, XiangqiError)
                             else str(exc))
            return
        if self.store is not None:
            self.store.save(src.stored_key, src.depth, src.digest, review)
        with self._lock:
            job.review = review
            job.done = job.total
            self._finish(job, DONE)


# -- a record's game, read in the record sandbox (xiangqi.app.library.sandbox) ------------------------------


def review_record_job(text: str, index: int) -> dict[str, Any]:
    """Read game ``index`` (0-based) of the record ``text`` (PGN or any format
    :func:`xiangqi.core.records.read_records` sniffs) and give its line to review:
    ``{"start_fen", "moves" (ICCS, cut at the first illegal move), "headers", "errors"}``. Meant to
    run in :func:`xiangqi.app.library.sandbox.run_in_child` (time and memory budget). Raises
    :class:`XiangqiError` for an unreadable record or an index out of range."""
    from xiangqi.core.records import read_records

    if not text.strip():
        raise XiangqiError("empty record: nothing to review")
    games = read_records(text.encode("utf-8"))
    if not games:
        raise XiangqiError("no game found in the record (not a PGN, XQF, DhtmlXQ/UBB, EPD or FEN record)")
    if not 0 <= index < len(games):
        raise XiangqiError(f"the record holds {len(games)} game(s); there is no game_index {index}")
    game = games[index]
    board = game.board()
    start = board.fen()
    moves: list[str] = []
    errors = [str(e) for e in game.errors]
    for mv in game.mainline_moves():
        if not board.is_legal(mv):
            errors.append(f"ply {len(moves) + 1}: illegal move {mv.iccs()}: the review stops before it")
            break
        board.push(mv, validate=False)
        moves.append(mv.iccs())
    return {"start_fen": start, "moves": moves, "headers": {str(k): str(v) for k, v in game.headers.items()},
            "errors": errors}


# -- learn from your mistakes --------------------------------------------------------------------

#: Classes of the moves "learn from your mistakes" turns into puzzles.
PUZZLE_CLASSES = ("mistake", "blunder")


def _line_texts(board, line: Sequence[str]) -> list[dict[str, str]]:
    """``[{"move", "text"}]`` of the ICCS ``line`` from ``board`` (not changed), Chinese notation;
    stops at the first move that is not legal there."""
    from xiangqi.core.board import Move
    from xiangqi.core.notation import move_to_text

    b = board.copy()
    out = []
    for text in line:
        mv = Move.from_iccs(text)
        if not b.is_legal(mv):
            break
        out.append({"move": text, "text": move_to_text(b, mv, "chinese")})
        b.push(mv, validate=False)
    return out


def practice_puzzles(review: GameReview, sides: Sequence[str] = ("red", "black"),
                     classes: Sequence[str] = PUZZLE_CLASSES) -> list[dict[str, Any]]:
    """The puzzles of "learn from your mistakes": one per ply of ``sides`` whose class is in
    ``classes`` (default mistakes and blunders), in game order. Each is ``{"ply", "color", "fen"
    (the position before the move), "last_move" (the move that led there, ICCS, or None),
    "dests" ({from square: [ICCS moves]}, the legal moves there), "check" (bool), "played"
    ({"move", "text"}), "class", "symbol", "drop", "eval_before", "mate_before", "best"
    ({"move", "text"} or None), "line" ([{"move", "text"}], the engine's line from there)}``;
    texts in Chinese notation. A try is judged by :func:`xiangqi.study.review.try_move`.
    """
    from xiangqi.core.board import Board, Move

    board = Board(review.start_fen)
    out: list[dict[str, Any]] = []
    last: str | None = None
    for p in review.plies:
        if p.color in sides and p.cls in classes:
            dests: dict[str, list[str]] = {}
            for m in board.legal_moves:
                dests.setdefault(m.iccs()[:2], []).append(m.iccs())
            line = _line_texts(board, p.line)
            out.append({
                "ply": p.ply, "color": p.color, "fen": board.fen(), "last_move": last, "dests": dests,
                "check": board.is_check(), "played": {"move": p.move, "text": p.text}, "class": p.cls,
                "symbol": p.symbol, "drop": round(p.drop, 2), "eval_before": p.before.cp,
                "mate_before": p.before.mate, "best": line[0] if line else None, "line": line})
        board.push(Move.from_iccs(p.move), validate=False)
        last = p.move
    return out
