"""Live analysis: one page's engine panel, searching a position without a limit in a thread of its own.

:class:`LiveAnalysis` owns an :class:`xiangqi.engine.Engine` (its own transposition table, not the
game's) and a worker thread. :meth:`LiveAnalysis.start` asks for a position (replacing the one
searched), :meth:`LiveAnalysis.stop` ends the search, :meth:`LiveAnalysis.close` ends the thread.
The search is ``Limit(depth=max_depth, infinite=True)`` with multi-PV 1-3, capped at
``max_seconds`` of searching per position (then it stops and says so: a forgotten panel does not
burn a core for ever).

Background priority (:mod:`xiangqi.app.tasks.background`): the analysis subscribes to the game's
:class:`~xiangqi.app.tasks.background.ForegroundGate`; when the game's computer move or a hint starts, the
running search is stopped at once, and when the foreground ends it starts again on the same position
(the transposition table is kept, so it is back at its depth quickly).

The thread never talks to a socket. It leaves its news in :meth:`take_events` (status changes, in
order) and :meth:`take_update` (the newest completed iteration only, so a slow reader gets the
latest lines, never a backlog); the web layer polls both a few times a second (throttled updates).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from typing import Any

from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.engine.consts import RULE_BOUND

__all__ = ["LiveAnalysis", "MAX_MULTIPV", "MAX_SECONDS", "MAX_DEPTH", "PV_SHOWN"]

log = logging.getLogger(__name__)

#: Lines the panel may ask for.
MAX_MULTIPV = 3
#: Seconds one position is searched before the analysis stops by itself.
MAX_SECONDS = 300.0
#: Deepest iteration searched; the search then waits (idle) until stopped.
MAX_DEPTH = 40
#: Moves of each line converted to text for the page.
PV_SHOWN = 12


class LiveAnalysis:
    """The engine panel of one page. Thread-safe; see the module docstring.

    ``gate`` is the server's foreground gate (``hub.player.gate``); ``hash_mb`` the engine's table;
    ``max_seconds``/``max_depth`` bound one position's search. ``engine``: the searcher (default:
    a built-in :class:`xiangqi.engine.Engine`, made at the first search); an added engine's
    :class:`xiangqi.app.opponents.engines.ExternalAnalyser` analyses with that engine instead.
    """

    def __init__(self, gate: ForegroundGate, *, hash_mb: int = 16, max_seconds: float = MAX_SECONDS,
                 max_depth: int = MAX_DEPTH, engine: Any = None,
                 tablebase_dir: str | os.PathLike[str] | None = None) -> None:
        self.gate = gate
        #: Endgame tables (``xiangqi tb generate``) for the verdict and the search; None: none.
        self.tablebase_dir = tablebase_dir
        self._tb_verdict: dict[str, Any] | None = None
        self.hash_mb = hash_mb
        self.max_seconds = max_seconds
        self.max_depth = max_depth
        self._cond = threading.Condition()
        self._job: dict[str, Any] | None = None  # {"id", "board", "multipv"}
        self._seq = 0
        self._closed = False
        self._engine = engine
        #: The level key of the added engine analysing (``engine:<id>``), None for the built-in one.
        self.engine_key: str | None = getattr(engine, "key", None)
        self._events: collections.deque[dict[str, Any]] = collections.deque(maxlen=64)
        self._update: dict[str, Any] | None = None
        self._lines: dict[int, Any] = {}
        self._busy = False
        self._unsubscribe = gate.subscribe(self._on_gate)
        self._thread = threading.Thread(target=self._run, name="xiangqi-live-analysis", daemon=True)
        self._thread.start()

    # -- the page's requests -------------------------------------------------------

    def start(self, fen: str, moves: list[str] | None = None, multipv: int = 1) -> int:
        """Search the position ``fen`` after ``moves`` (ICCS; they count for repetitions) with
        ``multipv`` lines (1..3). Returns the job id the updates carry. Raises
        :class:`~xiangqi.core.errors.XiangqiError` for a bad FEN or move and ValueError for ``multipv``."""
        if not 1 <= multipv <= MAX_MULTIPV:
            raise ValueError(f"multipv must be 1 to {MAX_MULTIPV}, got {multipv}")
        board = Board(fen)
        for i, text in enumerate(moves or []):
            try:
                board.push(Move.from_iccs(text))
            except XiangqiError as exc:
                raise XiangqiError(f"move {i + 1} ({text}) cannot be played: {exc}") from None
        with self._cond:
            self._seq += 1
            self._job = {"id": self._seq, "board": board, "multipv": multipv}
            self._lines = {}
            self._update = None
            self._cond.notify_all()
        self._halt()
        return self._seq

    def stop(self) -> None:
        """End the running search (the panel closed); nothing more is sent for it. Always answered by
        one event: ``{"type": "stopped", "reason": "stopped"}`` when a position was being analysed
        (or waited for the foreground), ``{"type": "stopped", "reason": "idle"}`` when nothing was (a
        second stop, a stop after the search ran out of time or failed), so that a page waiting for
        the answer to its stop always gets one."""
        with self._cond:
            had = self._job is not None
            self._job = None
            self._update = None
            self._cond.notify_all()
        self._halt()
        self._event({"type": "stopped", "reason": "stopped" if had else "idle"})

    def close(self, timeout: float = 5.0) -> None:
        """Stop and end the thread (the page went away). Waits up to ``timeout`` seconds for the
        search to return."""
        self.request_close()
        self._thread.join(timeout=timeout)

    def request_close(self) -> None:
        """Tell the thread to end (its search stops) without waiting: safe to call from the event loop,
        and what a cancelled close must already have done (the server stopping). Idempotent."""
        with self._cond:
            was = self._closed
            self._closed = True
            self._job = None
            self._cond.notify_all()
        if not was:
            self._unsubscribe()
        self._halt()

    @property
    def alive(self) -> bool:
        """True while the worker thread runs."""
        return self._thread.is_alive()

    @property
    def running(self) -> bool:
        """True while a position is being analysed (or waits for the foreground to end)."""
        with self._cond:
            return self._job is not None

    # -- what the web layer reads --------------------------------------------------------

    def take_events(self) -> list[dict[str, Any]]:
        """Status messages since the last call, in order: ``{"type": "paused"}`` (the game's computer
        searches), ``{"type": "resumed"}``, ``{"type": "stopped", "reason": "stopped|idle|time|error",
        "detail"?}``, and before a status message the iteration that completed before it (an
        ``info`` as :meth:`take_update` gives it). Newer than all of them: :meth:`take_update`."""
        out = []
        while True:
            try:
                out.append(self._events.popleft())
            except IndexError:
                return out

    def take_update(self) -> dict[str, Any] | None:
        """The newest completed iteration not yet taken, or None: ``{"type": "info", "id", "fen",
        "turn": "red|black", "depth", "seldepth", "nodes", "nps", "time_s", "lines": [{"multipv",
        "score_cp", "mate", "red_cp", "red_mate", "rule", "pv": [ICCS], "chinese": [...], "wxf": [...]}]}``.
        ``score_cp``/``mate`` are from the side to move (the engine's convention), ``red_cp``/
        ``red_mate`` from Red's side (for the evaluation bar); ``rule`` is true when the score is
        a win or loss by the repetition rules (``engine.consts.RULE_BOUND < |score_cp|``: the
        opponent can only check or chase for ever), not a material balance; ``chinese``/``wxf``
        the first :data:`PV_SHOWN` moves as text."""
        with self._cond:
            upd, self._update = self._update, None
            job = self._job
        if upd is None or job is None or upd["id"] != job["id"]:
            return None
        return _with_text(upd, job["board"])

    # -- the worker thread ---------------------------------------------------------------

    def _event(self, msg: dict[str, Any]) -> None:
        """Queue a status message. An iteration completed before it and not yet taken goes into the
        queue first, so that the page sees the news in the order it happened (no line of the search
        after its "paused", "stopped" ...)."""
        with self._cond:
            upd, job = self._update, self._job
            if upd is not None and job is not None and upd["id"] == job["id"]:
                self._update = None
                self._events.append(_with_text(upd, job["board"]))
            self._events.append(msg)

    def _on_gate(self, busy: bool) -> None:
        """The foreground started (stop the search now) or ended (the worker starts it again)."""
        with self._cond:
            self._busy = busy
            self._cond.notify_all()
        if busy:
            self._halt()

    def _halt(self) -> None:
        eng = self._engine
        if eng is not None:
            eng.stop()

    def _run(self) -> None:
        from xiangqi.engine import Engine, Limit

        while True:
            with self._cond:
                while not self._closed and self._job is None:
                    self._cond.wait()
                if self._closed:
                    return
                job = self._job
            if self.gate.busy:
                self._event({"type": "paused"})
                while True:
                    with self._cond:
                        self._cond.wait_for(
                            lambda j=job: self._closed or not self._busy or self._job is not j, timeout=0.5)
                        if self._closed or self._job is not job:
                            break
                    if not self.gate.busy:
                        break
                with self._cond:
                    if self._closed or self._job is not job:
                        continue
                self._event({"type": "resumed"})
            if self._engine is None:
                self._engine = Engine(hash_mb=self.hash_mb)
                if self.tablebase_dir is not None:
                    self._engine.set_tablebase_path(self.tablebase_dir)
            eng = self._engine
            verdict = tablebase_verdict(getattr(eng, "tablebase", None), job["board"])
            with self._cond:
                if self._job is job:
                    self._tb_verdict = verdict
            timer = threading.Timer(self.max_seconds, eng.stop)
            timer.daemon = True
            started = time.monotonic()
            with self._cond:
                if self._job is not job or self._closed:
                    continue
            timer.start()
            try:
                eng.search(job["board"], Limit(depth=self.max_depth, infinite=True),
                           on_info=lambda info, j=job: self._on_info(j, info), multipv=job["multipv"])
            except Exception as exc:  # noqa: BLE001 - a failed search ends this job, not the thread
                log.exception("live analysis failed")
                with self._cond:
                    if self._job is job:
                        self._job = None
                self._event({"type": "stopped", "reason": "error", "detail": f"{type(exc).__name__}: {exc}"})
                continue
            finally:
                timer.cancel()
            with self._cond:
                if self._closed:
                    return
                if self._job is not job:
                    continue  # replaced or stopped: the next loop takes what is asked now
                if self.gate.busy or self._busy:
                    continue  # paused by the foreground: the loop waits, then searches again
                if time.monotonic() - started >= self.max_seconds - 0.05:
                    self._job = None
                    timed_out = True
                else:
                    timed_out = False
            if timed_out:
                self._event({"type": "stopped", "reason": "time"})

    def _on_info(self, job: dict[str, Any], info: Any) -> None:
        """One line of an iteration: the update holds this iteration's lines so far and, for the
        lines it has not reached yet, the previous iteration's (so the panel keeps its lines)."""
        with self._cond:
            if self._job is not job:
                return
            self._lines[info.multipv] = info
            lines = [self._lines[k] for k in sorted(self._lines)]
            self._update = {
                "type": "info", "id": job["id"], "depth": info.depth, "seldepth": info.seldepth,
                "nodes": info.nodes, "nps": info.nps, "time_s": round(info.time_s, 2),
                "lines": [{"multipv": ln.multipv, "score_cp": ln.score_cp, "mate": ln.mate, "depth": ln.depth,
                           "pv": [m.iccs() for m in ln.pv]} for ln in lines],
                "tablebase": self._tb_verdict,
            }


def tablebase_verdict(tablebase: Any, board: Board) -> dict[str, Any] | None:
    """The endgame table's verdict on ``board`` for the panel, or None (no tables, not in them).

    ``{"wdl": "win|draw|loss" for the side to move, "dtm": plies or None, "mate": moves to mate
    (ceil(dtm / 2)) or None, "winner": "red|black" or None, "ending", "best": [ICCS], "chinese",
    "wxf": the best moves in the notations}`` (:meth:`xiangqi.engine.tablebase.Tablebase.probe`).
    """
    if tablebase is None or sum(1 for p in board.squares if p) > 8:
        return None
    from xiangqi.core.notation import move_to_text
    from xiangqi.engine.tablebase import TablebaseError

    try:
        res = tablebase.probe(board)
    except TablebaseError:
        return None
    if res is None:
        return None
    turn = "red" if board.turn else "black"
    other = "black" if board.turn else "red"
    winner = turn if res.wdl == "win" else other if res.wdl == "loss" else None
    moves = [Move.from_iccs(m) for m in res.best]
    out = {"wdl": res.wdl, "dtm": res.dtm, "mate": None if res.dtm is None else (res.dtm + 1) // 2,
           "winner": winner, "ending": res.ending, "best": list(res.best),
           "chinese": [move_to_text(board, m, "chinese") for m in moves],
           "wxf": [move_to_text(board, m, "wxf") for m in moves]}
    if res.rule:  # won / lost by the repetition rule (长将 loses): no DTM, "rule": "perpetual-check"
        out["rule"] = res.rule
    return out


def _with_text(upd: dict[str, Any], board: Board) -> dict[str, Any]:
    """``upd`` with the position, the side to move and each line's moves in Chinese and WXF."""
    from xiangqi.core.notation import move_to_text

    red = bool(board.turn)
    out = dict(upd, fen=board.fen(), turn="red" if red else "black")
    lines = []
    for ln in upd["lines"]:
        b = board.copy()
        chinese, wxf = [], []
        for text in ln["pv"][:PV_SHOWN]:
            mv = Move.from_iccs(text)
            if not b.is_legal(mv):
                break
            chinese.append(move_to_text(b, mv, "chinese"))
            wxf.append(move_to_text(b, mv, "wxf"))
            b.push(mv, validate=False)
        sign = 1 if red else -1
        entry = dict(ln, chinese=chinese, wxf=wxf,
                     red_cp=None if ln["score_cp"] is None else sign * ln["score_cp"],
                     red_mate=None if ln["mate"] is None else sign * ln["mate"],
                     rule=ln["score_cp"] is not None and abs(ln["score_cp"]) > RULE_BOUND)
        lines.append(entry)
    out["lines"] = lines
    return out
