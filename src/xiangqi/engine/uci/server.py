"""UCI and UCCI engine server: ``xiangqi engine`` (DESIGN.md decision 7).

One :class:`EngineServer` speaks both protocols; the first ``uci`` or ``ucci``
command chooses which (a later one switches). Commands read before either
are answered in UCI form, as Pikafish does.

Coordinates are ICCS with ranks 0–9 from Red's side (``h2e2``), the
Pikafish / ElephantEye convention (DESIGN.md decision 3), FEN uses the xqbase
letters ``KABNRCP`` and accepts ``H``/``E``.

UCI (the chess protocol by R. Huber and S. Meyer-Kahlen, April 2006, as used
by Pikafish for xiangqi):

* ``uci`` → ``id name``/``id author``/``option …``/``uciok``; ``isready`` →
  ``readyok`` at once (see "A fresh install" below); ``setoption name N value V``;
  ``ucinewgame``; ``position startpos|fen <fen> [moves m1 m2 …]``;
  ``go [ponder] [searchmoves …] depth|nodes|movetime|wtime|btime|winc|binc|movestogo|infinite``
  (times in milliseconds); ``stop``; ``ponderhit``; ``quit``.
* Replies ``info depth D seldepth S multipv K score cp X|mate M nodes N nps R time T pv …``
  and ``bestmove m [ponder p]`` (``bestmove (none)`` when there is no legal move).

UCCI 3.0 (xqbase.com "中国象棋通用引擎协议", 2007, as implemented by ElephantEye):

* ``ucci`` → ``id …``/``option …``/``ucciok``; ``setoption <name> <value>`` (no
  ``name``/``value`` keywords); ``position`` as in UCI; ``banmoves m1 m2 …``
  (moves the engine must not play in the current position; cleared by the next
  ``position``); ``go [ponder|draw] depth D | nodes N | infinite |
  time T [movestogo M | increment I] [opptime T2 [oppmovestogo M2 | oppincrement I2]]``;
  ``probe`` → ``pophash`` (this engine does not expose its hash table);
  ``stop``; ``ponderhit [draw]``; ``quit`` → ``bye``.
* Times are in seconds unless the GUI sets ``usemillisec true`` (UCCI 2.3 added the
  option and recommends milliseconds).
* ``info depth D score X nodes N time T pv …`` where a mate in ``n`` plies scores
  ``±(10000 - n)`` (ElephantEye's ``MATE_VALUE`` convention);
  ``bestmove m [ponder p] [draw]``, ``nobestmove`` when there is no legal move.
  ``go draw`` means the opponent offers a draw: the engine accepts (``draw`` after
  the move) when its own score is at most :data:`DRAW_ACCEPT_CP`.

Options (UCI names; UCCI uses ``hashsize``, ``level``, ``newgame``, ``usemillisec``):
``Hash`` (MB), ``Clear Hash``, ``MultiPV``, ``Ponder``, ``Level`` (``full`` or a level of
:mod:`xiangqi.engine.levels`: the level's own depth/nodes/time, capped by the ``go``
limits, and its choice among near-best moves), ``Skill Level`` 0–20 (mapped onto the
levels, 20 = full strength), and ``UCI_LimitStrength``/``UCI_Elo`` once the levels
carry a measured Elo (the strongest level whose Elo is at most ``UCI_Elo``; a ``UCI_Elo``
outside the measured range is clamped to it, with an ``info string`` saying so).
``OwnBook`` (UCCI ``usebook``, default off) and ``BookFile`` (UCCI ``bookfiles``; empty: the book
shipped with the package, :mod:`xiangqi.engine.book`): with the book on, a ``go`` in a position the
book knows answers at once with the book's best move (the highest Wilson weight,
:func:`xiangqi.engine.book.best`; ``banmoves``/``searchmoves`` respected) after ``info string book
<move> games N score S% weight W (K book moves)``; out of the book (or pondering) it searches.
``TablebasePath`` (UCCI ``tablebasepath``): a directory of endgame tables probed at the root
(``info string tablebase KRKA: win for the side to move, mate in 9 plies``; docs/TABLEBASES.md).
Also ``go perft N`` and ``d`` (show the board) for debugging.

Every bad line gets ``info string error: <what>`` and is otherwise ignored; the
server never exits on bad input. The search runs in a worker thread so that
``stop``, ``ponderhit``, ``isready`` and ``quit`` are read while it searches.

Bad input, as built (reported.md R28, R30):

* **A refused ``position`` leaves no position.** A ``position`` line with a bad FEN,
  an illegal position or an illegal move (``info string error: move 2 of the move
  list ('b0c2'): illegal move b0c2 in <FEN>: no piece on b0``: the first bad move,
  its 1-based index and why) is refused *as a whole*: the engine then has no
  position, and every ``go`` answers at once ``bestmove (none)`` (UCCI:
  ``nobestmove``) after ``info string error: no position to search: the last
  'position' was refused (…)``, until the next good ``position`` (or
  ``ucinewgame``, which sets the start position). We do not follow Stockfish's
  convention of playing on from the last legal move: a GUI that sends a stale FEN
  with a whole game's moves (R30) would get a move for the wrong side. Neither the
  previous position nor a prefix of the refused one is ever searched.
* **Illegal positions are refused at ``position``**: the core FEN reader's rules
  (exactly one king per side inside its palace, at most the full set of each piece)
  and, at the FEN, the side *not* to move must not be in check (kings facing each
  other included): the side to move could take the king. (The stricter placement
  rules of the position editor, ``xiangqi.app.play.position``, are the app's; the engine
  searches such positions.)
* **Every ``go`` gets exactly one ``bestmove``** (``nobestmove`` in UCCI), except one
  sent while a search is running (refused: that search answers). A ``go`` that cannot
  be carried out (no position, an unknown parameter, a value that is not a number,
  ``searchmoves`` with an illegal move) is answered at once: error line, then
  ``bestmove (none)``.
* **Degenerate limits are clamped, never refused**, each with an ``info string
  warning: …`` line: ``depth`` below 1, ``nodes`` below 1, ``movetime`` of 0 or
  less, or no time left on the own clock (``wtime``/``btime``, UCCI ``time``, of
  0 or less) give the *minimum search*, one full iteration (depth 1, a few
  milliseconds), in place of the time/node limits; any other negative clock or
  increment counts as 0; ``movestogo`` below 1 is ignored; values above
  :data:`MAX_GO_DEPTH` plies, :data:`MAX_GO_NODES` nodes or :data:`MAX_GO_SECONDS`
  seconds are cut to those (a search that long ends with ``stop``, like ``go
  infinite``). Numbers may be written with a fraction or exponent (``1.5``,
  ``1e3``); a depth or node count is truncated to a whole number; ``nan``/``inf``
  are refused.
* **``go perft N`` runs in the worker thread like a search**: ``isready`` is answered
  during it, ``stop`` ends it (within one subtree of :data:`PERFT_SPLIT` plies,
  milliseconds; ``info string perft N stopped …``) and ``quit`` returns at once. It
  prints ``info string <move>: <count>`` per root move and ``info string perft N
  nodes T time MS``, never a ``bestmove``.
* UCCI ``probe`` always answers ``pophash`` (after an error line for a bad position);
  ``banmoves`` and ``go`` after a refused ``position`` are refused.

A fresh install (issue 27): the Numba kernels compile in a background thread when the
server starts (15–60 s with an empty cache, longer on a loaded machine; milliseconds
once cached). ``uciok``/``ucciok`` and ``readyok`` never wait for it, so a GUI's start-up
time-outs cannot fire; while the kernels are not ready ``isready`` sends ``info string``
saying so before ``readyok``. A ``go`` meanwhile:

* with a time limit (``movetime``, a clock, UCCI ``time``) searches with the pure-Python
  search of :mod:`xiangqi.engine.pysearch` (the evaluation tables, no network; about 50k
  nodes/s) within the same time budget (:func:`xiangqi.engine.timeman.budget`), after
  ``info string`` naming the fallback, and answers ``bestmove`` as usual;
* with a depth or node limit, ``infinite`` or ``ponder``, waits for the kernels (its depth
  and node count then mean what they mean once compiled); a ``stop`` (or ``ponderhit``)
  that arrives before they are ready ends the wait, and the answer is the fallback's
  2-ply move.

The first time a fallback was used or ``readyok`` was sent before the kernels were
ready, the server announces ``info string search kernels ready …`` when they are.
With ``XIANGQI_ENGINE_WAIT_READY=1`` in the environment ``isready`` waits for the kernels
as before (``xiangqi match`` sets it for the engines it starts, so that no game is
played by the fallback); ``xiangqi engine --warmup`` compiles them ahead and exits
(scripts/setup.sh runs it at install).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from xiangqi.core.board import STARTING_FEN, Board, Move, square_name
from xiangqi.core.errors import XiangqiError

ENGINE_NAME = "pyxiangqi"
ENGINE_AUTHOR = "the pyxiangqi authors"

#: ElephantEye's mate value: a mate in ``n`` plies is reported as ``±(MATE_VALUE - n)`` in UCCI.
UCCI_MATE_VALUE = 10000
#: UCCI ``go draw``: accept the offered draw when our score (side to move, centipawns) is at most this.
DRAW_ACCEPT_CP = -50
#: Most moves ``banmoves``/``searchmoves`` may exclude: excluding k moves costs a MultiPV k+1 search.
MAX_EXCLUDED = 8
HASH_MIN_MB, HASH_MAX_MB, HASH_DEFAULT_MB = 1, 4096, 64
MULTIPV_MAX = 64
#: ``go`` limits above these are cut to them (with an ``info string warning``): plies, nodes, seconds.
MAX_GO_DEPTH = 1000
MAX_GO_NODES = 10**15
MAX_GO_SECONDS = 10**6
#: ``go perft``: subtrees of at most this many plies are counted in one kernel call (about 5 ms);
#: ``stop`` is checked between them.
PERFT_SPLIT = 3
#: Skill Level (0–20, Stockfish's range) to our named levels; 20 is full strength.
SKILL_LEVELS = ((0, 5, "beginner"), (6, 10, "intermediate"), (11, 15, "advanced"), (16, 19, "master"))
FULL_STRENGTH = "full"


class ProtocolError(XiangqiError):
    """A command line that cannot be understood; the message says what and where."""


@dataclasses.dataclass
class _GoRequest:
    limit: Any
    ponder: bool = False
    draw_offered: bool = False
    excluded: tuple[Move, ...] = ()


def _parse_int(tokens: list[str], i: int, key: str, *, minimum: int = 0) -> int:
    if i + 1 >= len(tokens):
        raise ProtocolError(f"'{key}' needs a number after it")
    text = tokens[i + 1]
    try:
        value = int(float(text)) if "." in text else int(text)
    except ValueError:
        raise ProtocolError(f"'{key}' needs a number, got {text!r}") from None
    if value < minimum:
        raise ProtocolError(f"'{key}' must be >= {minimum}, got {value}")
    return value


def _parse_number(tokens: list[str], i: int, key: str) -> float:
    """The number after ``tokens[i]`` (a ``go`` value): any finite decimal, e.g. ``250``, ``1.5``, ``1e3``."""
    if i + 1 >= len(tokens):
        raise ProtocolError(f"'{key}' needs a number after it")
    text = tokens[i + 1]
    try:
        value = float(text)
    except ValueError:
        raise ProtocolError(f"'{key}' needs a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ProtocolError(f"'{key}' needs a finite number, got {text!r}")
    return value


def position_problem(board: Board) -> str | None:
    """Why ``board`` is not a position a game can reach, or None when it is.

    The core FEN reader already refuses wrong piece counts and kings outside their
    palace; this adds that the side *not* to move must not be in check (kings facing
    each other included), since the side to move could then take the king.
    """
    waiting = not board.turn
    probe = board.copy(stack=False)
    probe.turn = waiting
    if not probe.is_check():
        return None
    red_k, black_k = board.king(True), board.king(False)
    name = "Red" if waiting else "Black"
    lo, hi = min(red_k, black_k), max(red_k, black_k)
    if red_k % 9 == black_k % 9 and not any(board.squares[s] for s in range(lo + 9, hi, 9)):
        why = f"the kings face each other ({square_name(lo)} and {square_name(hi)})"
    else:
        why = f"{name} is in check but it is not {name}'s move"
    return f"illegal position {board.fen()}: {why}; the side to move could take the king"


def parse_position(tokens: list[str]) -> Board:
    """The board of a ``position`` command (tokens after the word ``position``).

    ``startpos [moves …]`` or ``fen <up to 6 fields> [moves …]``; the moves are ICCS
    with ranks 0–9 and must be legal in turn. The returned board keeps the whole
    history in ``move_stack`` so the search sees repetitions (R20).

    Raises :class:`ProtocolError` (naming the bad token, or the first illegal move and
    its 1-based index in the list, or why the FEN is an illegal position, see
    :func:`position_problem`) or the core's FEN errors. Nothing is returned for a
    line with any error: there is no "position up to the last legal move".
    """
    if not tokens:
        raise ProtocolError("'position' needs 'startpos' or 'fen <FEN>'")
    try:
        mi = tokens.index("moves")
    except ValueError:
        mi = len(tokens)
    head, moves = tokens[:mi], tokens[mi + 1:]
    if head[0] == "startpos":
        if len(head) > 1:
            raise ProtocolError(f"unexpected {head[1]!r} after 'startpos'")
        board = Board(STARTING_FEN)
    elif head[0] == "fen":
        if len(head) < 2:
            raise ProtocolError("'position fen' needs a FEN")
        board = Board(" ".join(head[1:7]))
        if len(head) > 7:
            raise ProtocolError(f"unexpected {head[7]!r} after the FEN")
    else:
        raise ProtocolError(f"'position' needs 'startpos' or 'fen', got {head[0]!r}")
    problem = position_problem(board)
    if problem is not None:
        raise ProtocolError(problem)
    for n, text in enumerate(moves, 1):
        try:
            board.push(Move.from_iccs(text))
        except XiangqiError as exc:
            raise ProtocolError(f"move {n} of the move list ({text!r}): {exc}") from None
    return board


class _PerftStopped(Exception):
    """``stop`` or ``quit`` arrived during ``go perft``."""


class EngineServer:
    """The UCI/UCCI conversation around one engine.

    ``engine`` is an object with the built-in engine's API (``search(board, limit,
    on_info=, multipv=)``, ``stop()``, ``new_game()``, ``set_hash(mb)``); None
    creates ``xiangqi.engine.Engine(hash_mb=64)`` when first needed. ``write``
    receives each output line without its newline (default: print to stdout
    and flush). ``warmup`` is called once in a background thread at start (the
    Numba compile; default ``xiangqi.engine.warmup``); ``isready`` does not wait for it
    unless ``wait_ready`` (default: ``XIANGQI_ENGINE_WAIT_READY=1`` in the environment),
    and a ``go`` before it has finished is answered as the module docstring says.
    ``fallback(board, limit_seconds, excluded, level, stop)`` is the search used then
    (default :func:`_python_fallback`; returns a result with ``move``, ``score_cp``,
    ``mate``, ``depth``, ``nodes``, ``pv``).
    ``levels`` maps level names to level objects (default ``xiangqi.engine.LEVELS``);
    ``limit_factory`` builds a search limit from keyword arguments (default
    ``xiangqi.engine.Limit``).

    Feed lines with :meth:`handle` (returns False after ``quit``) or run a whole
    stream with :meth:`run`.
    """

    def __init__(self, engine: Any = None, *, write: Callable[[str], None] | None = None,
                 warmup: Callable[[], Any] | None = None, levels: dict[str, Any] | None = None,
                 limit_factory: Callable[..., Any] | None = None, wait_ready: bool | None = None,
                 fallback: Callable[..., Any] | None = None) -> None:
        self._engine = engine
        if wait_ready is None:
            wait_ready = os.environ.get("XIANGQI_ENGINE_WAIT_READY", "") not in ("", "0")
        self.wait_ready = wait_ready
        self._fallback_fn = fallback or _python_fallback
        #: True once a 'readyok' or a 'go' was answered before the kernels were ready (then their
        #: readiness is announced with an 'info string').
        self._announce_ready = False
        #: How many searches the fallback answered (for tests and the 'ready' note).
        self.fallback_searches = 0
        self._warm_t0 = time.monotonic()
        self._write_fn = write
        self._out_lock = threading.Lock()
        self._warmup_fn = warmup
        self._warm_thread: threading.Thread | None = None
        self._levels = levels
        self._limit_factory = limit_factory
        self.protocol = "uci"
        #: The position ``go`` searches; None after a refused ``position`` (see :attr:`refused`).
        self.board: Board | None = Board(STARTING_FEN)
        #: Why the last ``position`` was refused (None when the position in force came from a good one).
        self.refused: str | None = None
        self.banned: tuple[Move, ...] = ()
        self.hash_mb = HASH_DEFAULT_MB
        self.multipv = 1
        self.level = FULL_STRENGTH
        self.limit_strength = False
        self.elo: int | None = None
        self.use_millisec = False
        self.ponder_option = False
        #: OwnBook / BookFile: the opening book (:mod:`xiangqi.engine.book`), opened on first use.
        self.own_book = False
        self.book_file = ""
        self._book: Any = None
        self._worker: threading.Thread | None = None
        self._stop_requested = threading.Event()
        self._ponderhit = threading.Event()
        self._ponder_draw = False
        self._phase = "idle"
        self._busy = False
        self._quit = False
        self._started = False
        self._kernels_done = False

    # -- plumbing ----------------------------------------------------------

    def send(self, line: str) -> None:
        """Write one output line (thread-safe)."""
        with self._out_lock:
            self._send_locked(line)

    def _send_locked(self, line: str) -> None:
        if self._write_fn is not None:
            self._write_fn(line)
        else:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def error(self, message: str) -> None:
        """Report a bad command as ``info string error: …``."""
        self.send(f"info string error: {message}")

    def start(self) -> None:
        """Start the background warm-up (Numba compile) once."""
        if self._started:
            return
        self._started = True
        fn = self._warmup_fn
        if fn is None and self._engine is None:
            def fn() -> None:  # import in the thread too: 'uciok' must not wait for Numba's import
                from xiangqi.engine import warmup

                warmup(background=False)
        if fn is not None:
            self._warm_thread = threading.Thread(target=self._safe_warmup, args=(fn,), daemon=True)
            self._warm_thread.start()

    def _safe_warmup(self, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - report, never die
            self.error(f"warm-up failed: {exc}")
            return
        with self._out_lock:
            self._kernels_done = True
            if self._announce_ready and not self._quit:
                took = time.monotonic() - self._warm_t0
                self._send_locked(f"info string search kernels ready after {took:.1f} s"
                                  f" ({self.fallback_searches} searches answered by the Python fallback)")

    @property
    def kernels_ready(self) -> bool:
        """True when no warm-up is running: the engine's own search can start at once."""
        t = self._warm_thread
        return t is None or not t.is_alive()

    def _wait_kernels(self) -> bool:
        """Wait for the warm-up until it ends or ``stop``/``ponderhit`` arrives; True when it ended."""
        t = self._warm_thread
        while t is not None and t.is_alive():
            if self._stop_requested.is_set() or (self._phase == "ponder" and self._ponderhit.is_set()):
                return False
            t.join(0.02)
        return True

    @property
    def engine(self) -> Any:
        """The engine, created on first use."""
        if self._engine is None:
            from xiangqi.engine import Engine

            self._engine = Engine(hash_mb=self.hash_mb)
        return self._engine

    @property
    def levels(self) -> dict[str, Any]:
        """Level name → level object."""
        if self._levels is None:
            from xiangqi.engine import LEVELS
            from xiangqi.engine.levels import EXTRA_LEVELS

            self._levels = {**EXTRA_LEVELS, **LEVELS}
        return self._levels

    def make_limit(self, **kw: Any) -> Any:
        """A search limit from keyword arguments (seconds for times)."""
        if self._limit_factory is None:
            from xiangqi.engine import Limit

            self._limit_factory = Limit
        return self._limit_factory(**kw)

    @property
    def searching(self) -> bool:
        """True while a ``go`` has not yet produced its ``bestmove``."""
        return self._busy

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running search to finish; True if none is running any more."""
        w = self._worker
        if w is not None:
            w.join(timeout)
            return not w.is_alive()
        return True

    def run(self, lines: Iterable[str] | TextIO | None = None) -> int:
        """Serve until ``quit`` or end of input (default: stdin); returns exit status 0."""
        self.start()
        source = sys.stdin if lines is None else lines
        for raw in source:
            if not self.handle(raw):
                break
        else:
            self._shutdown()
        return 0

    # -- dispatch ------------------------------------------------------------

    def handle(self, line: str) -> bool:
        """Process one command line. Returns False once ``quit`` was received."""
        if self._quit:
            return False
        self.start()
        tokens = line.strip().split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        handler = getattr(self, f"_cmd_{cmd}", None)
        if handler is None:
            self.error(f"unknown command {cmd!r}")
            return True
        try:
            handler(args)
        except XiangqiError as exc:
            self.error(str(exc))
        except Exception as exc:  # noqa: BLE001 - a bad line must never kill the engine
            self.error(f"{cmd}: {type(exc).__name__}: {exc}")
        return not self._quit

    # -- handshake and options ----------------------------------------------

    def _options(self) -> list[tuple[str, str]]:
        names = list(self.levels)
        combo = " ".join(f"var {n}" for n in [FULL_STRENGTH, *names])
        opts = [
            ("Hash", f"type spin default {HASH_DEFAULT_MB} min {HASH_MIN_MB} max {HASH_MAX_MB}"),
            ("Clear Hash", "type button"),
            ("MultiPV", f"type spin default 1 min 1 max {MULTIPV_MAX}"),
            ("Ponder", "type check default false"),
            ("Level", f"type combo default {FULL_STRENGTH} {combo}"),
            ("Skill Level", "type spin default 20 min 0 max 20"),
            ("TablebasePath", "type string default <empty>"),
            ("OwnBook", "type check default false"),
            ("BookFile", "type string default <empty>"),
            ("Evaluation", f"type combo default {self._evaluation()} var nnue var texel"),
        ]
        elos = self._level_elos()
        if elos:
            opts.append(("UCI_LimitStrength", "type check default false"))
            opts.append(("UCI_Elo", f"type spin default {max(elos.values())} min {min(elos.values())} "
                                    f"max {max(elos.values())}"))
        return opts

    def _evaluation(self) -> str:
        """The evaluation the engine plays now: ``nnue`` or ``texel`` (option ``Evaluation``)."""
        from xiangqi.engine import nnue

        chosen = getattr(self._engine, "evaluation", None) if self._engine is not None else None
        if chosen is None:
            return "nnue" if nnue.selected() else "texel"
        return chosen

    def _level_elos(self) -> dict[str, int]:
        """Measured Elo per level, for levels that carry one (``elo`` attribute)."""
        out = {}
        for name, lvl in self.levels.items():
            elo = getattr(lvl, "elo", None)
            if isinstance(elo, int | float) and elo > 0:
                out[name] = int(elo)
        return out

    def _cmd_uci(self, args: list[str]) -> None:
        self.protocol = "uci"
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for name, spec in self._options():
            self.send(f"option name {name} {spec}")
        self.send("uciok")

    def _cmd_ucci(self, args: list[str]) -> None:
        self.protocol = "ucci"
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        self.send("option usemillisec type check default false")
        self.send(f"option hashsize type spin min {HASH_MIN_MB} max {HASH_MAX_MB} default {HASH_DEFAULT_MB}")
        self.send("option ponder type check default false")
        self.send("option newgame type button")
        self.send("option tablebasepath type string default <empty>")
        levels = " ".join(f"var {n}" for n in [FULL_STRENGTH, *self.levels])
        self.send(f"option level type combo {levels} default {FULL_STRENGTH}")
        self.send("option usebook type check default false")
        self.send("option bookfiles type string default <empty>")
        self.send(f"option evaluation type combo var nnue var texel default {self._evaluation()}")
        self.send("ucciok")

    def _cmd_isready(self, args: list[str]) -> None:
        if self.wait_ready and not self.searching and self._warm_thread is not None:
            self._warm_thread.join()
        with self._out_lock:
            if not self.kernels_ready:
                self._announce_ready = True
                self._send_locked("info string search kernels still compiling (first start); a 'go' with a "
                                  "time limit is searched by the Python fallback until they are ready")
            self._send_locked("readyok")

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._require_idle("ucinewgame")
        self.engine.new_game()
        self.board = Board(STARTING_FEN)
        self.refused = None
        self.banned = ()

    def _cmd_setoption(self, args: list[str]) -> None:
        if "name" in args:
            i = args.index("name")
            if "value" in args[i + 1:]:
                j = args.index("value", i + 1)
                name, value = " ".join(args[i + 1:j]), " ".join(args[j + 1:])
            else:
                name, value = " ".join(args[i + 1:]), ""
        else:  # UCCI: setoption <name> [<value>]
            if not args:
                raise ProtocolError("'setoption' needs an option name")
            name, value = args[0], " ".join(args[1:])
        self.set_option(name, value)

    def set_option(self, name: str, value: str) -> None:
        """Set option ``name`` (case-insensitive, UCI or UCCI spelling) to ``value`` (text)."""
        key = " ".join(name.lower().split())
        value = value.strip()
        if key in ("hash", "hashsize"):
            mb = self._int_option(name, value, HASH_MIN_MB, HASH_MAX_MB)
            self._require_idle("setoption Hash")
            self.hash_mb = mb
            if self._engine is not None:
                self._engine.set_hash(mb)
        elif key in ("clear hash", "clearhash", "newgame"):
            self._require_idle(f"setoption {name}")
            self.engine.new_game()
        elif key == "multipv":
            self.multipv = self._int_option(name, value, 1, MULTIPV_MAX)
        elif key == "ponder":
            self.ponder_option = self._bool_option(name, value)
        elif key == "usemillisec":
            self.use_millisec = self._bool_option(name, value)
        elif key in ("level", "skill level", "skill"):
            if key == "level" and not value.lstrip("-").isdigit():
                lv = value.lower()
                if lv != FULL_STRENGTH and lv not in self.levels:
                    from_zh = {getattr(v, "name_zh", None): k for k, v in self.levels.items()}
                    if value in from_zh:
                        lv = from_zh[value]
                    else:
                        raise ProtocolError(f"unknown level {value!r}; expected one of "
                                            f"{', '.join([FULL_STRENGTH, *self.levels])}")
                self.level = lv
            else:
                skill = self._int_option(name, value, 0, 20)
                self.level = FULL_STRENGTH
                for lo, hi, lv in SKILL_LEVELS:
                    if lo <= skill <= hi and lv in self.levels:
                        self.level = lv
        elif key == "uci_limitstrength":
            on = self._bool_option(name, value)
            if on and not self._level_elos():
                raise ProtocolError("UCI_LimitStrength is not available: the levels have no measured Elo yet")
            self.limit_strength = on
        elif key == "uci_elo":
            elos = self._level_elos()
            if not elos:
                raise ProtocolError("UCI_Elo is not available: the levels have no measured Elo yet")
            self.elo = self._elo_option(name, value, min(elos.values()), max(elos.values()))
        elif key == "tablebasepath":
            self._require_idle(f"setoption {name}")
            path = "" if value in ("", "<empty>") else value
            found = self.engine.set_tablebase_path(path)
            if path:
                self.send(f"info string tablebases in {path}: "
                          + (", ".join(found) if found else "none yet (the directory has no table files)"))
        elif key == "evaluation":  # the network (default) or the Texel tables, for the next search
            from xiangqi.engine import nnue

            ev = value.lower()
            if ev not in nnue.EVALUATIONS:
                raise ProtocolError(f"unknown evaluation {value!r}; expected one of "
                                    f"{', '.join(nnue.EVALUATIONS)}")
            self._require_idle(f"setoption {name}")
            self.engine.evaluation = ev
        elif key in ("ownbook", "usebook"):
            self.own_book = self._bool_option(name, value)
        elif key in ("bookfile", "bookfiles"):
            self._set_book_file(value)
        elif key in ("batch", "debug", "threads", "uci analysemode",
                     "uci showwdl", "move overhead"):
            pass  # accepted; no effect on this engine
        else:
            raise ProtocolError(f"unknown option {name!r}")

    def _set_book_file(self, value: str) -> None:
        """``BookFile``: open the book now, so a bad file is told at once (the old book stays then)."""
        from xiangqi.engine.book import BookError, OpeningBook

        path = "" if value in ("", "<empty>") else value
        if path:
            try:
                book = OpeningBook(path)
            except BookError as exc:
                raise ProtocolError(f"BookFile: {exc}") from None
        else:
            book = None
        self.book_file, self._book = path, book

    def book(self) -> Any:
        """The opening book in force (BookFile's, else the shipped one; None when neither is there)."""
        if self._book is None and not self.book_file:
            from xiangqi.engine.book import default_book

            self._book = default_book()
        return self._book

    def _book_move(self, board: Board, allowed: list[Move]) -> Move | None:
        """With OwnBook on: the book's best move among ``allowed`` (an ``info string book`` line is
        sent), or None when the position is out of the book."""
        if not self.own_book:
            return None
        from xiangqi.engine.book import BookError

        try:
            book = self.book()
        except BookError as exc:  # the shipped book damaged: say so and search
            self.error(f"OwnBook: {exc}; searching instead")
            return None
        if book is None:
            return None
        from xiangqi.engine.book import best

        moves = [m for m in book.probe(board) if m.move in allowed]
        pick = best(moves)
        if pick is None:
            return None
        score = "-" if pick.score is None else f"{100 * pick.score:.1f}%"
        self.send(f"info string book {pick.iccs} games {pick.count} score {score} weight {pick.weight:.3f} "
                  f"({len(moves)} book moves)")
        return pick.move

    @staticmethod
    def _int_option(name: str, value: str, lo: int, hi: int) -> int:
        try:
            v = int(value)
        except ValueError:
            raise ProtocolError(f"option {name!r} needs a whole number, got {value!r}") from None
        if not lo <= v <= hi:
            raise ProtocolError(f"option {name!r} must be between {lo} and {hi}, got {v}")
        return v

    def _elo_option(self, name: str, value: str, lo: int, hi: int) -> int:
        """``UCI_Elo``: a whole number, clamped to the measured range ``lo``..``hi`` with a note.

        A request below the weakest level gets the weakest level (not the default,
        the strongest one), one above the strongest gets the strongest.
        """
        try:
            v = int(value)
        except ValueError:
            raise ProtocolError(f"option {name!r} needs a whole number, got {value!r}") from None
        if not lo <= v <= hi:
            used = min(max(v, lo), hi)
            self.send(f"info string option {name!r} is measured between {lo} and {hi}; {v} is out of range, "
                      f"using {used}")
            v = used
        return v

    @staticmethod
    def _bool_option(name: str, value: str) -> bool:
        v = value.lower()
        if v in ("true", "on", "1", "yes"):
            return True
        if v in ("false", "off", "0", "no"):
            return False
        raise ProtocolError(f"option {name!r} needs true or false, got {value!r}")

    def effective_level(self) -> str:
        """The level in force: from UCI_Elo when UCI_LimitStrength is on, else the Level option.

        UCI_Elo picks the strongest level whose measured Elo is at most UCI_Elo; while
        UCI_Elo was not set, its advertised default (the strongest level's Elo) holds.
        """
        if self.limit_strength:
            elos = self._level_elos()
            if elos:
                target = self.elo if self.elo is not None else max(elos.values())
                below = [n for n, e in elos.items() if e <= target]
                pool = below or [min(elos, key=elos.get)]
                return max(pool, key=lambda n: elos[n])
        return self.level

    # -- position -------------------------------------------------------------

    def _cmd_position(self, args: list[str]) -> None:
        """Set the position; a line with any error is refused whole and leaves *no* position."""
        self.banned = ()
        try:
            board = parse_position(args)
        except Exception as exc:
            self.board = None
            self.refused = str(exc) if isinstance(exc, XiangqiError) else f"{type(exc).__name__}: {exc}"
            raise
        self.board = board
        self.refused = None

    def _current_board(self, what: str) -> Board:
        """The position in force, or :class:`ProtocolError` when the last ``position`` was refused."""
        if self.board is None:
            raise ProtocolError(f"no position {what}: the last 'position' was refused ({self.refused})")
        return self.board

    def _cmd_banmoves(self, args: list[str]) -> None:
        board = self._current_board("for 'banmoves'")
        moves = []
        for text in args:
            m = Move.from_iccs(text)
            if not board.is_legal(m):
                raise ProtocolError(f"banmoves: {text} is not a legal move in {board.fen()}")
            moves.append(m)
        self.banned = tuple(moves)

    def _cmd_probe(self, args: list[str]) -> None:
        # one 'pophash' per 'probe', also after an error line: a GUI waiting for it never hangs
        try:
            if args:
                parse_position(args)  # validate only
            else:
                self._current_board("to probe")
        except XiangqiError as exc:
            self.error(str(exc))
        self.send("pophash")

    def _cmd_d(self, args: list[str]) -> None:
        board = self._current_board("to show")
        for row in str(board).splitlines():
            self.send(f"info string {row}")
        self.send(f"info string Fen: {board.fen()}")

    # -- go / stop --------------------------------------------------------------

    def _require_idle(self, what: str) -> None:
        if self.searching:
            raise ProtocolError(f"'{what}' is not allowed while searching; send 'stop' first")

    def parse_go(self, args: list[str]) -> _GoRequest:
        """Parse the tokens after ``go`` into a limit (times converted to seconds).

        Degenerate values are clamped with an ``info string warning`` each (module
        docstring): a depth/node/move-time limit below its minimum, or no time left
        on the own clock, gives the minimum search (depth 1); values above
        :data:`MAX_GO_DEPTH`/:data:`MAX_GO_NODES`/:data:`MAX_GO_SECONDS` are cut.
        Raises :class:`ProtocolError` for an unknown parameter, a missing or
        non-numeric value, or an illegal ``searchmoves`` move; needs a position.
        """
        board = self._current_board("to search")
        kw: dict[str, Any] = {}
        ponder = draw = False
        search_moves: list[Move] = []
        ms = 1000.0
        ucci_scale = 1000.0 if self.use_millisec else 1.0
        ucci_unit = "ms" if self.use_millisec else "s"
        red = board.turn
        ucci_time: dict[str, float] = {}
        minimum_search: list[str] = []  # why the request became the minimum search
        warnings: list[str] = []

        def capped(key: str, value: float, cap: float, shown: str, unit: str) -> float:
            if value > cap:
                warnings.append(f"'{key} {shown}' is more than {int(cap)} {unit}; using {int(cap)} {unit}")
                return cap
            return value

        def non_negative(key: str, value: float, shown: str) -> float:
            if value < 0:
                warnings.append(f"'{key} {shown}' is negative; using 0")
                return 0.0
            return value

        i = 0
        while i < len(args):
            t = args[i]
            if t == "ponder":
                ponder = True
            elif t == "draw":
                draw = True
            elif t == "infinite":
                kw["infinite"] = True
            elif t in ("depth", "nodes", "movestogo", "movetime", "wtime", "btime", "winc", "binc",
                       "time", "increment", "opptime", "oppincrement", "oppmovestogo"):
                v = _parse_number(args, i, t)
                shown = args[i + 1]
                i += 1
                if t == "depth":
                    if v < 1:
                        minimum_search.append(f"'depth {shown}' is below 1")
                    else:
                        kw["depth"] = int(capped(t, v, MAX_GO_DEPTH, shown, "plies"))
                elif t == "nodes":
                    if v < 1:
                        minimum_search.append(f"'nodes {shown}' is below 1")
                    else:
                        kw["nodes"] = int(capped(t, v, MAX_GO_NODES, shown, "nodes"))
                elif t == "movestogo":
                    if v < 1:
                        warnings.append(f"'movestogo {shown}' is below 1; ignored")
                    else:
                        kw["movestogo"] = int(min(v, 10**6))
                elif t == "movetime":
                    if v <= 0:
                        minimum_search.append(f"'movetime {shown}' is not above 0")
                    else:
                        kw["time"] = capped(t, v, MAX_GO_SECONDS * ms, shown, "ms") / ms
                elif t in ("wtime", "btime", "winc", "binc"):
                    v = non_negative(t, v, shown)
                    kw[t] = capped(t, v, MAX_GO_SECONDS * ms, shown, "ms") / ms
                elif t == "oppmovestogo":
                    ucci_time[t] = v
                else:  # UCCI clock fields, in seconds or (usemillisec) milliseconds
                    v = non_negative(t, v, shown)
                    ucci_time[t] = capped(t, v, MAX_GO_SECONDS * ucci_scale, shown, ucci_unit) / ucci_scale
            elif t == "searchmoves":
                j = i + 1
                while j < len(args) and _looks_like_move(args[j]):
                    m = Move.from_iccs(args[j])
                    if not board.is_legal(m):
                        raise ProtocolError(f"searchmoves: {args[j]} is not legal in {board.fen()}")
                    search_moves.append(m)
                    j += 1
                i = j - 1
            elif t in ("mate", "perft"):
                raise ProtocolError(f"'go {t}' is not supported")
            else:
                raise ProtocolError(f"unknown 'go' parameter {t!r}")
            i += 1
        if ucci_time:
            own = ("wtime", "winc") if red else ("btime", "binc")
            opp = ("btime", "binc") if red else ("wtime", "winc")
            for key, field in (("time", own[0]), ("increment", own[1]), ("opptime", opp[0]),
                               ("oppincrement", opp[1])):
                if key in ucci_time:
                    kw[field] = ucci_time[key]
        own_clock = "wtime" if red else "btime"
        if kw.get(own_clock) == 0 and "time" not in kw:
            clock_name = "time" if self.protocol == "ucci" and "time" in ucci_time else own_clock
            minimum_search.append(f"no time left on the clock ('{clock_name} 0')")
        if minimum_search:
            for key in ("nodes", "time", "wtime", "btime", "winc", "binc", "movestogo"):
                kw.pop(key, None)
            kw["depth"] = 1
            warnings.append(f"{'; '.join(minimum_search)}: searching to depth 1 (the minimum search)")
        if not any(k in kw for k in ("depth", "nodes", "time", own_clock, "infinite")):
            # a bare 'go' searches until 'stop', as Stockfish does; so do clock fields that set no
            # limit for the side to move (only the opponent's time, increments, moves to go)
            if any(k in kw for k in ("wtime", "btime", "winc", "binc", "movestogo")) or ucci_time:
                warnings.append(f"'go {' '.join(args)}' sets no limit for the side to move: "
                                "searching until 'stop'")
            for key in ("wtime", "btime", "winc", "binc", "movestogo"):
                kw.pop(key, None)
            kw["infinite"] = True
        excluded: tuple[Move, ...] = self.banned
        if search_moves:
            legal = list(board.legal_moves)
            excluded = tuple(m for m in legal if m not in search_moves or m in self.banned)
        if excluded and len(excluded) > MAX_EXCLUDED:
            raise ProtocolError(f"at most {MAX_EXCLUDED} moves can be excluded (searchmoves/banmoves), "
                                f"got {len(excluded)}")
        for w in warnings:
            self.send(f"info string warning: {w}")
        return _GoRequest(self.make_limit(**kw), ponder=ponder, draw_offered=draw, excluded=excluded)

    def _cmd_go(self, args: list[str]) -> None:
        if self.searching:
            raise ProtocolError("already searching; send 'stop' first")
        if args and args[0] == "perft":
            self._start_perft(args[1:])
            return
        try:
            board = self._current_board("to search").copy()
            req = self.parse_go(args)
        except Exception as exc:  # noqa: BLE001 - every 'go' gets its answer, also after a surprise
            # the GUI must not wait for a search that never starts
            self.error(str(exc) if isinstance(exc, XiangqiError) else f"go: {type(exc).__name__}: {exc}")
            self._emit_bestmove(None, None, None, _GoRequest(None))
            return
        self._stop_requested.clear()
        self._ponderhit.clear()
        self._ponder_draw = False
        self._phase = "ponder" if req.ponder else "search"
        self._busy = True
        self._worker = threading.Thread(target=self._search_thread, args=(board, req), daemon=True,
                                        name="xiangqi-search")
        self._worker.start()

    def _start_perft(self, args: list[str]) -> None:
        """``go perft N``: count the legal move tree in the worker thread (``stop`` ends it)."""
        depth = _parse_int(["perft", *args], 0, "perft", minimum=0)
        if len(args) > 1:
            raise ProtocolError(f"unexpected {args[1]!r} after 'go perft {args[0]}'")
        board = self._current_board("for perft").copy()
        self._stop_requested.clear()
        self._phase = "perft"
        self._busy = True
        self._worker = threading.Thread(target=self._perft_thread, args=(board, depth), daemon=True,
                                        name="xiangqi-perft")
        self._worker.start()

    def _perft_thread(self, board: Board, depth: int) -> None:
        if self._warm_thread is not None:
            self._warm_thread.join()  # never compile the kernels from two threads at once
        try:
            from xiangqi.engine.movegen import perft as leaf_count
        except ImportError:  # pragma: no cover - engine package incomplete
            leaf_count = Board.perft
        t0 = time.perf_counter()
        total, done, stopped = 0, 0, False
        moves = list(board.legal_moves) if depth else []
        try:
            if depth == 0:
                total = 1
            for m in moves:
                if self._stop_requested.is_set():
                    stopped = True
                    break
                board.push(m, validate=False)
                try:
                    n = self._perft_count(board, depth - 1, leaf_count)
                finally:
                    board.pop()
                self.send(f"info string {m.iccs()}: {n}")
                total += n
                done += 1
        except _PerftStopped:
            stopped = True
        except Exception as exc:  # noqa: BLE001 - report, never die
            self.error(f"perft failed: {type(exc).__name__}: {exc}")
            stopped = True
        ms = int((time.perf_counter() - t0) * 1000)
        self._phase = "idle"
        with self._out_lock:
            self._busy = False
            if stopped:
                self._send_locked(f"info string perft {depth} stopped after {done} of {len(moves)} moves: "
                                  f"nodes {total} so far, time {ms}")
            else:
                self._send_locked(f"info string perft {depth} nodes {total} time {ms}")

    def _perft_count(self, board: Board, depth: int, leaf_count: Callable[[Board, int], int]) -> int:
        """Leaves of ``board``'s tree to ``depth`` plies, in kernel calls of :data:`PERFT_SPLIT` plies.

        Raises :class:`_PerftStopped` when ``stop`` (or ``quit``) was received.
        """
        if depth <= PERFT_SPLIT:
            return int(leaf_count(board, depth))
        total = 0
        for m in list(board.legal_moves):
            if self._stop_requested.is_set():
                raise _PerftStopped
            board.push(m, validate=False)
            try:
                total += self._perft_count(board, depth - 1, leaf_count)
            finally:
                board.pop()
        return total

    def _cmd_stop(self, args: list[str]) -> None:
        if self.searching:
            self._stop_requested.set()
            if self._phase != "perft":  # perft checks the flag itself; it needs no engine
                self._keep_stopping(lambda: True)

    def _cmd_ponderhit(self, args: list[str]) -> None:
        if not self.searching or self._phase != "ponder":
            return
        self._ponder_draw = "draw" in args
        self._ponderhit.set()
        self._keep_stopping(lambda: self._phase == "ponder")

    def _keep_stopping(self, still: Callable[[], bool]) -> None:
        """Call ``engine.stop()`` now and again until the search ends or ``still()`` is False.

        Repeating it closes the race where ``stop`` arrives before the worker thread
        has entered ``engine.search`` (which clears the engine's stop flag on entry).
        """
        engine = self.engine
        worker = self._worker

        def loop() -> None:
            while worker is not None and worker.is_alive() and still():
                engine.stop()
                worker.join(0.02)

        engine.stop()
        threading.Thread(target=loop, daemon=True, name="xiangqi-stopper").start()

    def _cmd_quit(self, args: list[str]) -> None:
        self._shutdown()
        if self.protocol == "ucci":
            self.send("bye")
        self._quit = True

    def _shutdown(self) -> None:
        """Stop the running work: wait up to 10 s for a search's ``bestmove``, up to 1 s for a perft.

        A perft sees the stop flag between its kernel calls (milliseconds); one that is
        still inside a call after that is left to die with the process (a daemon thread).
        """
        if self.searching:
            self._stop_requested.set()
            if self._phase == "perft":
                self.wait(1.0)
                return
            self._keep_stopping(lambda: True)
            self.wait(10.0)

    # -- the search thread -----------------------------------------------------------

    def _search_thread(self, board: Board, req: _GoRequest) -> None:
        try:
            result_move, ponder_move, score = self._run_search(board, req)
        except Exception as exc:  # noqa: BLE001 - the GUI must still get a bestmove
            self.error(f"search failed: {type(exc).__name__}: {exc}")
            legal = [m for m in board.legal_moves if m not in req.excluded]
            result_move, ponder_move, score = (legal[0] if legal else None), None, None
        self._phase = "idle"
        # not busy before 'bestmove' is out: a GUI may send the next 'go' as soon as it reads it
        with self._out_lock:
            self._busy = False
            self._emit_bestmove(result_move, ponder_move, score, req, locked=True)

    def _run_search(self, board: Board, req: _GoRequest) -> tuple[Move | None, Move | None, int | None]:
        legal = [m for m in board.legal_moves if m not in req.excluded]
        if not legal:
            return None, None, None
        if not req.ponder:
            booked = self._book_move(board, legal)
            if booked is not None:
                return booked, None, None
        if req.ponder:
            res, best = self._search_once(board, self.make_limit(infinite=True), req)
            # UCI: no bestmove while pondering until 'ponderhit' or 'stop'.
            while not (self._ponderhit.is_set() or self._stop_requested.is_set()):
                self._ponderhit.wait(0.01)
            self._phase = "search"
            if not self._stop_requested.is_set():
                res, best = self._search_once(board, req.limit, req)
        else:
            res, best = self._search_once(board, req.limit, req)
        move = best if best is not None else legal[0]
        if move not in legal:
            self.error(f"engine proposed {move.iccs()}, which is not allowed here; playing {legal[0].iccs()}")
            move = legal[0]
        ponder = getattr(res, "ponder", None)
        pv = list(getattr(res, "pv", None) or [])
        if ponder is None and len(pv) >= 2 and pv[0] == move:
            ponder = pv[1]
        if ponder is not None:
            b2 = board.copy()
            b2.push(move, validate=False)
            if not b2.is_legal(ponder):
                ponder = None
        score = getattr(res, "score_cp", None)
        mate = getattr(res, "mate", None)
        if mate:
            score = 30000 if mate > 0 else -30000
        return move, ponder, score

    def _search_once(self, board: Board, limit: Any, req: _GoRequest) -> tuple[Any, Move | None]:
        """One search; returns (result, best allowed move or None).

        With excluded moves (``banmoves``/``searchmoves``) the search runs with
        MultiPV raised by their number, and the best line not starting with an
        excluded move wins; the result's ``pv`` is then replaced by that line's.
        """
        if not self.kernels_ready:
            seconds = _time_budget(limit, board.turn)
            # a depth/node/infinite search waits for the kernels, unless stop (or ponderhit) comes first
            if seconds is not None or not self._wait_kernels():
                return self._fallback_once(board, limit, req, seconds)
        excluded = set(req.excluded)
        multipv = self.multipv + len(excluded) if excluded else self.multipv
        first_moves: dict[int, Move | None] = {}
        lines: dict[int, Any] = {}

        def on_info(info: Any) -> None:
            k = getattr(info, "multipv", 1) or 1
            pv = list(getattr(info, "pv", None) or [])
            lines[k] = info
            first_moves[k] = pv[0] if pv else None
            if not excluded:
                if self.protocol == "uci" or k == 1:  # UCCI has no multipv field: best line only
                    self.send(self.format_info(info))
                return
            if pv and pv[0] in excluded:
                return  # hide lines that start with a banned move; renumber the others
            rank = 1 + sum(1 for j, m in first_moves.items() if j < k and m not in excluded)
            if rank <= (self.multipv if self.protocol == "uci" else 1):
                self.send(self.format_info(info, multipv=rank))

        level = self.effective_level()
        if level != FULL_STRENGTH and not excluded and self.multipv == 1 and hasattr(self.engine, "play"):
            res = self.engine.play(board, _level_within(self.levels[level], limit, board.turn))
            if getattr(res, "move", None) is not None:
                self.send(self.format_info(_ResultInfo(res)))
        else:
            res = self.engine.search(board, limit, on_info=on_info, multipv=multipv)
        verdict = getattr(res, "tablebase", None)
        if verdict:
            dtm = verdict.get("dtm")
            self.send(f"info string tablebase {verdict['ending']}: {verdict['wdl']} for the side to move"
                      + (f", mate in {dtm} plies" if dtm is not None else ""))
        best = getattr(res, "move", None)
        if excluded and (best is None or best in excluded):
            best = None
            for k, m in sorted(first_moves.items()):
                if m is not None and m not in excluded:
                    best = m
                    line = lines[k]
                    pv = list(getattr(line, "pv", None) or [])
                    res = _Replaced(res, pv, getattr(line, "score_cp", None), getattr(line, "mate", None))
                    break
        return res, best

    def _fallback_once(self, board: Board, limit: Any, req: _GoRequest,
                       seconds: float | None) -> tuple[Any, Move | None]:
        """A search by the fallback (the kernels are not ready): ``seconds`` of budget, or None for the
        2-ply answer to a ``stop`` that ended the wait."""
        self._announce_ready = True
        self.fallback_searches += 1
        how = f"{seconds * 1000:.0f} ms" if seconds is not None else "2 plies"
        self.send(f"info string search kernels still compiling: the Python fallback searches ({how})")
        level = self.effective_level()
        res = self._fallback_fn(board, seconds, tuple(req.excluded),
                                None if level == FULL_STRENGTH else self.levels[level], self._stop_requested)
        best = getattr(res, "move", None)
        if best is not None:
            self.send(self.format_info(_ResultInfo(res)))
        return res, best

    def format_info(self, info: Any, multipv: int | None = None) -> str:
        """One ``info`` line in the current protocol from a SearchInfo-like object."""
        parts = ["info"]
        depth = getattr(info, "depth", None)
        if depth is not None:
            parts += ["depth", str(int(depth))]
        if self.protocol == "uci":
            sel = getattr(info, "seldepth", None)
            if sel:
                parts += ["seldepth", str(int(sel))]
            parts += ["multipv", str(multipv or getattr(info, "multipv", 1) or 1)]
        mate = getattr(info, "mate", None)
        cp = getattr(info, "score_cp", None)
        if self.protocol == "uci":
            if mate:
                parts += ["score", "mate", str(int(mate))]
            elif cp is not None:
                parts += ["score", "cp", str(int(cp))]
        else:
            if mate:
                # mate in m moves = 2m-1 plies for the winner; mated in m moves = 2m plies
                m = int(mate)
                score = UCCI_MATE_VALUE - (2 * m - 1) if m > 0 else -(UCCI_MATE_VALUE - 2 * -m)
                parts += ["score", str(score)]
            elif cp is not None:
                parts += ["score", str(int(cp))]
        nodes = getattr(info, "nodes", None)
        if nodes is not None:
            parts += ["nodes", str(int(nodes))]
        if self.protocol == "uci":
            nps = getattr(info, "nps", None)
            if nps is not None:
                parts += ["nps", str(int(nps))]
        t = getattr(info, "time_s", None)
        if t is not None:
            parts += ["time", str(int(round(t * 1000)))]
        pv = list(getattr(info, "pv", None) or [])
        if pv:
            parts += ["pv", *(m.iccs() for m in pv)]
        return " ".join(parts)

    def _emit_bestmove(self, move: Move | None, ponder: Move | None, score: int | None,
                       req: _GoRequest, *, locked: bool = False) -> None:
        send = self._send_locked if locked else self.send
        if move is None:
            send("nobestmove" if self.protocol == "ucci" else "bestmove (none)")
            return
        line = f"bestmove {move.iccs()}"
        if ponder is not None:
            line += f" ponder {ponder.iccs()}"
        if self.protocol == "ucci" and (req.draw_offered or self._ponder_draw):
            if score is not None and score <= DRAW_ACCEPT_CP:
                line += " draw"
        send(line)


def _time_budget(limit: Any, red_to_move: bool) -> float | None:
    """Seconds the search of ``limit`` may take (:func:`xiangqi.engine.timeman.budget`'s maximum), or
    None when it has no time limit (depth, nodes, infinite)."""
    from xiangqi.engine.timeman import budget

    try:
        _opt, mx = budget(limit, red_to_move)
    except AttributeError:  # a limit object without the clock fields
        return None
    return mx


def _python_fallback(board: Board, seconds: float | None, excluded: tuple[Move, ...], level: Any,
                     stop: threading.Event) -> Any:
    """The search used while the kernels compile: :mod:`xiangqi.engine.pysearch` on ``board``.

    ``seconds`` is the time budget (None: a 2-ply search, the answer to an early ``stop``);
    iterative deepening until it is spent or ``stop`` is set, the best root move of the
    deepest iteration searched (a partial one counts for its moves searched, the previous
    best first). ``excluded`` moves are not played (unless every legal move is excluded).
    ``level`` (a :class:`xiangqi.engine.Level` or None for full strength): its choice among
    near-best moves (:func:`xiangqi.engine.pysearch.play`). Returns a
    :class:`xiangqi.engine.SearchResult`.
    """
    from xiangqi.engine import pysearch
    from xiangqi.engine.api import SearchResult, _score_fields

    t0 = time.perf_counter()
    # a little under the budget: CPython's node checks come every 256 nodes and the reply has to go out
    budget_s = None if seconds is None else max(0.005, seconds * 0.85 - 0.01)
    if level is not None and not excluded:
        return pysearch.play(board, level, time_limit=budget_s, stop=stop, node_limit=1 << 62)
    depth = pysearch.MAX_DEPTH if seconds is None else 64
    lines, done, nodes = pysearch.search_lines(board, depth, margin_cp=None if excluded else 0,
                                               node_limit=1 << 62, time_limit=budget_s, stop=stop)
    allowed = [(s, m) for s, m in lines if m not in excluded] or lines
    if not allowed:
        return SearchResult(None, None, 0, 0, nodes, time.perf_counter() - t0, [])
    score, move = allowed[0]
    cp, mate = _score_fields(score)
    return SearchResult(move, cp, mate, done, nodes, time.perf_counter() - t0, [move])


class _Replaced:
    """A search result whose PV and score come from another MultiPV line."""

    def __init__(self, res: Any, pv: list[Move], score_cp: int | None, mate: int | None) -> None:
        self.move = pv[0] if pv else None
        self.pv = pv
        self.ponder = pv[1] if len(pv) > 1 else None
        self.score_cp = score_cp
        self.mate = mate
        self.depth = getattr(res, "depth", None)
        self.nodes = getattr(res, "nodes", None)


def _looks_like_move(text: str) -> bool:
    return len(text) == 4 and text[0] in "abcdefghi" and text[1].isdigit() and text[2] in "abcdefghi" \
        and text[3].isdigit()


def _min_opt(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else min(a, b)


def _level_within(level: Any, limit: Any, red_to_move: bool) -> Any:
    """``level`` with its depth/nodes/time capped by the GUI's ``limit``.

    A level carries its own limits (``xiangqi.engine.levels``); a GUI's ``go``
    may allow less. Clock limits become a per-move time through the engine's
    time manager (:func:`xiangqi.engine.timeman.budget`, the optimum time). An
    ``infinite`` limit leaves the level as it is.
    """
    if getattr(limit, "infinite", False) or not dataclasses.is_dataclass(level):
        return level
    per_move = getattr(limit, "time", None)
    clock = getattr(limit, "wtime" if red_to_move else "btime", None)
    if per_move is None and clock is not None:
        try:
            from xiangqi.engine.timeman import budget

            per_move = budget(limit, red_to_move)[0]
        except ImportError:  # pragma: no cover - engine package incomplete
            per_move = None
    changes = {}
    for field, cap in (("depth", getattr(limit, "depth", None)), ("nodes", getattr(limit, "nodes", None)),
                       ("time", per_move)):
        if hasattr(level, field) and cap is not None:
            changes[field] = _min_opt(getattr(level, field), cap)
    return dataclasses.replace(level, **changes) if changes else level


class _ResultInfo:
    """A SearchResult seen as a SearchInfo (for the one ``info`` line after a level move)."""

    def __init__(self, res: Any) -> None:
        self.depth = getattr(res, "depth", None)
        self.seldepth = None
        self.score_cp = getattr(res, "score_cp", None)
        self.mate = getattr(res, "mate", None)
        self.nodes = getattr(res, "nodes", None)
        t = getattr(res, "time_s", None)
        self.time_s = t
        self.nps = int(self.nodes / t) if self.nodes is not None and t else None
        self.pv = list(getattr(res, "pv", None) or [])
        self.multipv = 1


def serve(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the UCI/UCCI server on stdin/stdout until ``quit`` (the ``xiangqi engine`` command)."""
    out = stdout or sys.stdout
    for stream in (stdin or sys.stdin, out):
        try:  # bytes that are not UTF-8 must give an error line, not a UnicodeDecodeError
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass

    def write(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    server = EngineServer(write=write)
    return server.run(stdin or sys.stdin)


__all__ = ["DRAW_ACCEPT_CP", "UCCI_MATE_VALUE", "EngineServer", "ProtocolError", "parse_position",
           "position_problem", "serve"]
