"""Engines of the user's choice: any UCI or UCCI xiangqi engine installed on the machine, added in
Settings → engines, checked by a handshake, and played as the computer or used as the analyser.

An added engine is a row of the app database's ``external_engines`` table: the command (program
and arguments), the protocol found by the handshake (``uci`` or ``ucci``), the name and options
the engine announced, the option values the user chose, and the thinking time per move. In a game
its level key is ``engine:<id>`` (:func:`engine_key`), next to the built-in levels.

The protocol work (handshake, ``position … moves``, Fairy-Stockfish's ranks 1–10, ElephantEye's
``nobestmove``) is :class:`xiangqi.engine.uci.client.SimpleEngine`'s; this module keeps the list, starts
one process per engine when it is first needed, serialises its searches (an engine process searches
one position at a time) and restarts a process that died.

Only a local server may add engines: adding one runs a program of the user's machine, which a
public server must never let a visitor do (``web/engines_api.py`` refuses it there).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.engine.uci.commands import EngineSetupError, resolve_command  # re-exported: the app's API

__all__ = ["EngineSetupError", "EngineGaveNoMove", "no_move_outcome",
           "EngineSpec", "ExternalEngines", "ExternalAnalyser", "ExternalSearcher",
           "engine_key",
           "is_engine_key", "parse_engine_key", "resolve_command", "probe", "MAX_ENGINES",
           "DEFAULT_MOVETIME_S",
           "engines_table"]

log = logging.getLogger(__name__)

#: How many engines the list may hold (a bound on what one page can make the server remember).
MAX_ENGINES = 32
#: Seconds a move, unless the user sets another time for the engine (0.05 … 60).
DEFAULT_MOVETIME_S = 1.0
MOVETIME_RANGE_S = (0.05, 60.0)
#: The longest single search of an added engine on the analysis board (it is asked again and again).
ANALYSIS_STEP_MAX_S = 8.0
#: Seconds the handshake (``uciok``/``ucciok`` and ``readyok``) may take.
HANDSHAKE_TIMEOUT_S = 10.0
_KEY = re.compile(r"^engine:([1-9][0-9]{0,8})$")

_meta = sa.MetaData()
engines_table = sa.Table(
    "external_engines", _meta,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),           # the engine's ``id name`` (or the program's)
    sa.Column("author", sa.Text, nullable=False, default=""),
    sa.Column("argv", sa.Text, nullable=False),           # JSON list: the program and its arguments
    sa.Column("protocol", sa.Text, nullable=False),       # uci | ucci
    sa.Column("announced", sa.Text, nullable=False),      # JSON list of the options it announced
    sa.Column("options", sa.Text, nullable=False),        # JSON object: the values chosen
    sa.Column("movetime_ms", sa.Integer, nullable=False),
)


class EngineGaveNoMove(EngineSetupError):
    """An added engine answered a position without a move: it resigned (``bestmove resign``,
    :attr:`resigned` True) or sent ``nobestmove`` / ``bestmove (none)`` (ElephantEye's draw claim, or
    no legal move). Not a failure of the engine: :func:`no_move_outcome` ends the game by it.
    :attr:`name`: the engine's name."""

    def __init__(self, message: str, *, name: str, resigned: bool) -> None:
        super().__init__(message)
        self.name = name
        self.resigned = resigned


def no_move_outcome(board: Board, exc: EngineGaveNoMove, rules: object | None = None) -> Any:
    """The game's :class:`~xiangqi.core.outcome.Outcome` when the side to move of ``board`` (an added
    engine) gave no move (``exc``): a resignation loses; a draw claim is judged by our referee as in
    ``xiangqi match`` (:func:`xiangqi.match.runner.judge_claim`: a valid claim gives the referee's
    ruling, e.g. 和棋 — 60回合未吃子…（FakeEngine提和）; an invalid one loses for the claimant)."""
    from xiangqi.core.outcome import Termination, win
    from xiangqi.match.runner import judge_claim

    side = board.turn
    who_zh, who_en = ("红方", "Red") if side else ("黑方", "Black")
    if exc.resigned:
        return win(Termination.RESIGNATION, not side, f"{who_zh}（{exc.name}）认输",
                   f"{who_en} ({exc.name}) resigns")
    ruling = judge_claim(board, rules)
    if ruling is None:
        return win(Termination.RESIGNATION, not side, f"{who_zh}（{exc.name}）提和无效，判负",
                   f"{who_en} ({exc.name}) claimed a draw the rules do not give: loses")
    return dataclasses.replace(ruling, reason_zh=f"{ruling.reason_zh}（{exc.name}提和）",
                               reason_en=f"{ruling.reason_en} (claimed by {exc.name})")


def engine_key(engine_id: int) -> str:
    """The level key of an added engine in a game (``engine:<id>``)."""
    return f"engine:{engine_id}"


def is_engine_key(level: Any) -> bool:
    """True for a level key of the form ``engine:<id>`` (``id`` a positive integer)."""
    return isinstance(level, str) and _KEY.match(level) is not None


def parse_engine_key(level: str) -> int:
    """The engine id of ``engine:<id>``; :class:`EngineSetupError` for anything else."""
    m = _KEY.match(level) if isinstance(level, str) else None
    if m is None:
        raise EngineSetupError(f"not an engine key: {level!r} (expected engine:<id>)")
    return int(m.group(1))


@dataclasses.dataclass(frozen=True)
class EngineSpec:
    """One added engine. ``argv``: the program (an absolute path) and its arguments; ``protocol``
    ``uci`` or ``ucci``; ``announced``: the options the engine announced in its handshake, as
    dicts ``{name, type, default, min, max, var}``; ``options``: the values the user set (sent after
    each start); ``movetime_s``: seconds a move."""

    id: int
    name: str
    author: str
    argv: tuple[str, ...]
    protocol: str
    announced: tuple[dict[str, Any], ...]
    options: dict[str, Any]
    movetime_s: float

    @property
    def key(self) -> str:
        """The level key (``engine:<id>``)."""
        return engine_key(self.id)

    def to_dict(self) -> dict[str, Any]:
        """The API's view: ``{id, key, name, author, command, args, protocol, announced, options,
        movetime_s}``."""
        return {"id": self.id, "key": self.key, "name": self.name, "author": self.author,
                "command": self.argv[0], "args": list(self.argv[1:]), "protocol": self.protocol,
                "announced": list(self.announced), "options": dict(self.options),
                "movetime_s": self.movetime_s}


def _option_dict(opt: Any) -> dict[str, Any]:
    return {"name": opt.name, "type": opt.type, "default": opt.default, "min": opt.min, "max": opt.max,
            "var": list(opt.var)}


def probe(argv: Sequence[str], protocol: str = "auto", *,
          timeout: float = HANDSHAKE_TIMEOUT_S) -> dict[str, Any]:
    """Start the engine, do the handshake, stop it: ``{"name", "author", "protocol", "options":
    [{name, type, default, min, max, var}, …]}``. ``protocol``: ``uci``, ``ucci`` or ``auto`` (try
    UCI, then UCCI). Raises :class:`EngineSetupError` when it cannot be started or does not answer
    (the message names the program and what happened)."""
    from xiangqi.engine.uci.client import EngineError, SimpleEngine

    try:
        eng = SimpleEngine.popen(list(argv), protocol, timeout=timeout, cwd=str(Path(argv[0]).parent))
    except EngineError as exc:
        raise EngineSetupError(f"{argv[0]}: the handshake failed: {exc}") from None
    try:
        return {"name": eng.id.get("name") or Path(argv[0]).name, "author": eng.id.get("author", ""),
                "protocol": eng.protocol, "options": [_option_dict(o) for o in eng.options.values()]}
    finally:
        eng.quit()


def check_options(announced: Sequence[dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` checked against the options the engine announced; returns them normalised
    (spin → int within min/max, check → bool, combo → one of its values, string → text of at most
    200 characters). Buttons and unknown names are refused. Raises :class:`EngineSetupError`."""
    by_name = {o["name"]: o for o in announced}
    out: dict[str, Any] = {}
    for name, value in values.items():
        opt = by_name.get(name)
        if opt is None:
            raise EngineSetupError(f"the engine has no option {name!r}")
        kind = opt["type"]
        if kind == "spin":
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise EngineSetupError(f"option {name}: a whole number is needed, got {value!r}")
            try:
                v = int(value)
            except ValueError:
                raise EngineSetupError(f"option {name}: a whole number is needed, got {value!r}") from None
            lo, hi = opt.get("min"), opt.get("max")
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                raise EngineSetupError(f"option {name}: {v} is outside {lo}…{hi}")
            out[name] = v
        elif kind == "check":
            if isinstance(value, bool):
                out[name] = value
            elif value in ("true", "false"):
                out[name] = value == "true"
            else:
                raise EngineSetupError(f"option {name}: true or false is needed, got {value!r}")
        elif kind == "combo":
            if value not in opt.get("var", []):
                raise EngineSetupError(f"option {name}: {value!r} is not one of {', '.join(opt['var'])}")
            out[name] = value
        elif kind == "button":
            raise EngineSetupError(f"option {name} is a button; it has no value to set")
        else:
            if not isinstance(value, str) or len(value) > 200 or "\n" in value:
                raise EngineSetupError(f"option {name}: a text of at most 200 characters on one line "
                                       "is needed")
            out[name] = value
    return out


def _movetime(seconds: Any) -> float:
    lo, hi = MOVETIME_RANGE_S
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not lo <= seconds <= hi:
        raise EngineSetupError(f"the time a move must be {lo}…{hi} seconds, got {seconds!r}")
    return float(seconds)


class ExternalEngines:
    """The list of added engines (in the app's database) and their running processes.

    ``db``: the :class:`xiangqi.app.play.store.Store`'s SQLAlchemy engine (the table is created when
    missing). Thread-safe: the game's computer, the analysis board and the review may ask different
    engines at once; one engine's searches take turns. :meth:`close` stops every process.
    """

    def __init__(self, db: sa.Engine) -> None:
        self.db = db
        self.writable = True
        try:
            _meta.create_all(db)
        except XiangqiError as exc:  # a read-only database: the list can be read, not changed
            log.warning("the engines list cannot be changed: %s", exc)
            self.writable = False
        self._lock = threading.Lock()
        self._running: dict[int, Any] = {}          # id -> SimpleEngine
        self._locks: dict[int, threading.Lock] = {}  # id -> its search lock
        self._closed = False

    # -- the list ---------------------------------------------------------------

    @staticmethod
    def _spec(row: Any) -> EngineSpec:
        return EngineSpec(row.id, row.name, row.author or "", tuple(json.loads(row.argv)), row.protocol,
                          tuple(json.loads(row.announced)), json.loads(row.options), row.movetime_ms / 1000)

    def list(self) -> list[EngineSpec]:
        """Every added engine, oldest first."""
        with self.db.connect() as conn:
            rows = conn.execute(sa.select(engines_table).order_by(engines_table.c.id)).all()
        return [self._spec(r) for r in rows]

    def get(self, engine_id: int) -> EngineSpec:
        """The engine ``engine_id``; :class:`EngineSetupError` when there is none."""
        with self.db.connect() as conn:
            row = conn.execute(sa.select(engines_table).where(engines_table.c.id == engine_id)).first()
        if row is None:
            raise EngineSetupError(f"there is no engine {engine_id} (it may have been removed)")
        return self._spec(row)

    def spec(self, key: str) -> EngineSpec:
        """The engine of a level key ``engine:<id>``."""
        return self.get(parse_engine_key(key))

    def add(self, command: str, args: Sequence[str] = (), *, protocol: str = "auto",
            options: dict[str, Any] | None = None, movetime_s: float = DEFAULT_MOVETIME_S) -> EngineSpec:
        """Check the engine with a handshake (:func:`probe`) and add it; returns it. The options are
        checked against the ones it announced (:func:`check_options`). Raises
        :class:`EngineSetupError` (not found, no handshake, bad option, full list, read-only)."""
        if not self.writable:
            raise EngineSetupError("the database is read-only: engines cannot be added")
        argv = resolve_command(command, args)
        seconds = _movetime(movetime_s)
        if len(self.list()) >= MAX_ENGINES:
            raise EngineSetupError(f"at most {MAX_ENGINES} engines can be added; remove one first")
        info = probe(argv, protocol)
        values = check_options(info["options"], options or {})
        with self.db.begin() as conn:
            new_id = conn.execute(engines_table.insert().values(
                name=info["name"][:100], author=info["author"][:100], argv=json.dumps(argv),
                protocol=info["protocol"], announced=json.dumps(info["options"]), options=json.dumps(values),
                movetime_ms=round(seconds * 1000))).inserted_primary_key[0]
        return self.get(int(new_id))

    def update(self, engine_id: int, *, options: dict[str, Any] | None = None,
               movetime_s: float | None = None) -> EngineSpec:
        """Change an engine's option values (merged into the ones set) or its time a move; the running
        process is restarted with them at its next search."""
        spec = self.get(engine_id)
        values = dict(spec.options)
        if options:
            values.update(check_options(spec.announced, options))
        ms = spec.movetime_s if movetime_s is None else _movetime(movetime_s)
        with self.db.begin() as conn:
            conn.execute(engines_table.update().where(engines_table.c.id == engine_id).values(
                options=json.dumps(values), movetime_ms=round(ms * 1000)))
        self._stop_process(engine_id)
        return self.get(engine_id)

    def remove(self, engine_id: int) -> None:
        """Remove an engine from the list (its process is stopped). Games it played keep its name."""
        self.get(engine_id)
        with self.db.begin() as conn:
            conn.execute(engines_table.delete().where(engines_table.c.id == engine_id))
        self._stop_process(engine_id)

    # -- processes --------------------------------------------------------------

    def _search_lock(self, engine_id: int) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(engine_id, threading.Lock())

    def _process(self, spec: EngineSpec) -> Any:
        """The running process of ``spec`` (started, and given its options, when there is none)."""
        from xiangqi.engine.uci.client import EngineError, SimpleEngine

        with self._lock:
            if self._closed:
                raise EngineSetupError("the server is stopping")
            eng = self._running.get(spec.id)
        if eng is not None and eng.process.poll() is None:
            return eng
        try:
            eng = SimpleEngine.popen(list(spec.argv), spec.protocol, timeout=HANDSHAKE_TIMEOUT_S,
                                     options=spec.options or None, cwd=str(Path(spec.argv[0]).parent),
                                     name=spec.name)
        except EngineError as exc:
            raise EngineSetupError(f"{spec.name}: cannot be started: {exc}") from None
        with self._lock:
            self._running[spec.id] = eng
        return eng

    def _stop_process(self, engine_id: int) -> None:
        with self._lock:
            eng = self._running.pop(engine_id, None)
        if eng is not None:
            eng.quit()

    def play(self, key: str, board: Board, time_s: float | None = None) -> Move:
        """The move of engine ``key`` (``engine:<id>``) in ``board``'s position (with its history),
        thinking its time a move, or ``time_s`` seconds when less (the game clock's budget).
        Raises :class:`EngineSetupError` for an unknown engine, :class:`EngineGaveNoMove` when the
        engine gives no move (``bestmove resign``, ``nobestmove``, ``(none)``), and
        :class:`xiangqi.engine.uci.client.EngineError` when the engine fails (its process is then
        stopped, and started again at the next request)."""
        from xiangqi.engine import Limit
        from xiangqi.engine.uci.client import EngineError

        spec = self.spec(key)
        seconds = spec.movetime_s if time_s is None else max(0.05, min(spec.movetime_s, time_s))
        with self._search_lock(spec.id):
            eng = self._process(spec)
            try:
                res = eng.play(board, Limit(time=seconds))
            except EngineError:
                self._stop_process(spec.id)
                raise
        if res.move is None:
            what = "resigned" if res.resigned else "gave no move (a draw claim or no legal move)"
            raise EngineGaveNoMove(f"{spec.name} {what} in {board.fen()}", name=spec.name,
                                   resigned=bool(res.resigned))
        return res.move

    def analyse(self, key: str, board: Board, time_s: float, multipv: int = 1) -> list[dict[str, Any]]:
        """Engine ``key``'s analysis of ``board`` for ``time_s`` seconds: one dict per line,
        ``{"move": ICCS, "score_cp": int|None, "mate": int|None, "pv": [ICCS…], "depth": int|None}``
        with the score from the side to move's view. Errors as :meth:`play`."""
        from xiangqi.engine import Limit
        from xiangqi.engine.uci.client import EngineError

        spec = self.spec(key)
        with self._search_lock(spec.id):
            eng = self._process(spec)
            try:
                infos = eng.analyse(board, Limit(time=time_s), multipv=multipv)
            except EngineError:
                self._stop_process(spec.id)
                raise
        lines = []
        for info in infos if isinstance(infos, list) else [infos]:
            pv = info.get("pv") or []
            score = info.get("score")
            lines.append({"move": pv[0].iccs() if pv else None,
                          "score_cp": getattr(score, "cp", None), "mate": getattr(score, "mate", None),
                          "pv": [m.iccs() for m in pv], "depth": info.get("depth")})
        return lines

    def search(self, key: str, board: Board, limit: Any) -> Any:
        """Engine ``key``'s search of ``board`` under ``limit`` from cleared tables, as the review reads
        it (:meth:`xiangqi.engine.uci.client.ClientSearcher.search`: ``move``, ``score_cp``/``mate`` from
        the side to move's view, ``pv``, ``depth``). Errors as :meth:`play`."""
        from xiangqi.engine.uci.client import ClientSearcher, EngineError

        spec = self.spec(key)
        with self._search_lock(spec.id):
            eng = self._process(spec)
            try:
                searcher = ClientSearcher(eng)
                searcher.new_game()
                return searcher.search(board, limit)
            except EngineError:
                self._stop_process(spec.id)
                raise

    def stop(self, key: str | None = None) -> None:
        """Ask the running search of engine ``key`` (every engine when None) to stop at once (it then
        answers with its best move so far)."""
        with self._lock:
            if key is None:
                running = list(self._running.values())
            else:
                one = self._running.get(parse_engine_key(key))
                running = [] if one is None else [one]
        for eng in running:
            try:
                eng.send("stop")
            except Exception:  # noqa: BLE001 - a process that is gone has nothing to stop
                pass

    def close(self) -> None:
        """Stop every engine process (at the server's shutdown)."""
        with self._lock:
            self._closed = True
            running = list(self._running.values())
            self._running.clear()
        for eng in running:
            eng.quit()


class ExternalAnalyser:
    """An added engine as the analysis board's searcher: the object
    :class:`xiangqi.app.training.analysis.LiveAnalysis` drives (``search(board, limit, on_info,
    multipv)`` that runs until :meth:`stop`, and ``stop()``), so the panel, its pauses for the game's
    computer and its time limit work the same with the built-in engine or an added one.

    The engine is asked for ever longer searches (0.25 s, 0.5 s, 1 s … :data:`ANALYSIS_STEP_MAX_S`)
    of the same position; after each, ``on_info`` gets each line as an object with ``multipv, depth,
    seldepth, nodes, nps, time_s, score_cp, mate, pv`` (scores from the side to move's view), as the
    built-in engine reports its iterations. ``limit.depth`` is ignored (engines count depth
    differently); the panel's time limit ends the search."""

    def __init__(self, engines: ExternalEngines, key: str) -> None:
        self.engines = engines
        self.key = key
        self._stopped = threading.Event()

    def stop(self) -> None:
        """End the running :meth:`search` soon (the engine's current step is told to stop)."""
        self._stopped.set()
        self.engines.stop(self.key)

    def search(self, board: Board, limit: Any, *, on_info: Any = None, multipv: int = 1) -> None:
        """Analyse ``board`` until :meth:`stop` (see the class doc). Errors of the engine propagate
        (:class:`EngineSetupError`, :class:`xiangqi.engine.uci.client.EngineError`)."""
        import time
        import types

        self._stopped.clear()
        step, started = 0.25, time.monotonic()
        while not self._stopped.is_set():
            lines = self.engines.analyse(self.key, board, step, multipv)
            if self._stopped.is_set():
                return
            spent = time.monotonic() - started
            for k, ln in enumerate(lines, start=1):
                if on_info is None or not ln["pv"]:
                    continue
                pv = [Move.from_iccs(m) for m in ln["pv"]]
                on_info(types.SimpleNamespace(multipv=k, depth=ln["depth"] or 0, seldepth=ln["depth"] or 0,
                                              nodes=0, nps=0, time_s=spent, score_cp=ln["score_cp"],
                                              mate=ln["mate"], pv=pv))
            step = min(step * 2, ANALYSIS_STEP_MAX_S)


class ExternalSearcher:
    """An added engine as the review's searcher: the object
    :func:`xiangqi.study.review.evaluate_line` asks (``new_game()``, ``search(board, limit)``) in place
    of the built-in engine. Each position is searched for the engine's time a move (its setting in
    Settings → engines; a review's depth means nothing to another engine); the answer has the fields
    the review reads (``move``, ``score_cp``, ``mate`` from the side to move's view, ``pv``, ``depth``,
    ``nodes``, ``tablebase``). Errors as :meth:`ExternalEngines.analyse`."""

    def __init__(self, engines: ExternalEngines, key: str) -> None:
        self.engines = engines
        self.key = key
        self.spec = engines.spec(key)

    def new_game(self) -> None:
        """Nothing to do here: :meth:`ExternalEngines.search` clears the engine's tables before each
        position (under the engine's search lock, so another user of the process cannot come between)."""

    def search(self, board: Board, limit: Any) -> Any:
        """The engine's answer in ``board`` (its move history counts for repetitions), thinking
        ``limit.time`` seconds or the engine's time a move: :meth:`ExternalEngines.search`, the same
        path as ``xiangqi analyse --engine`` (:class:`xiangqi.engine.uci.client.ClientSearcher`)."""
        from xiangqi.engine import Limit

        seconds = getattr(limit, "time", None) or self.spec.movetime_s
        return self.engines.search(self.key, board, Limit(time=seconds))
