"""The computer player: the built-in engine behind a small, thread-safe interface.

:class:`EnginePlayer` wraps :class:`xiangqi.engine.Engine` (imported lazily, so
the app layer loads without Numba having compiled anything). Its methods block;
callers run them in a worker thread (the web layer uses ``asyncio.to_thread``).

Until the engine's Numba kernels are ready (:func:`xiangqi.engine.is_ready`; a
first compile takes 15–50 s), the levels of at most
:data:`xiangqi.engine.pysearch.MAX_DEPTH` plies (初级) are played by the
pure-Python search of :mod:`xiangqi.engine.pysearch`, and hints and draw-offer
judgements use its best move and score; the stronger levels wait for the kernels.

The opening book (:mod:`xiangqi.engine.book`; the game's player, made by the web server, uses the
one shipped with the package): while the position is in the book for the level (:func:`book_choices`),
the computer's move is drawn from the book at once, without a search: 大师 among the best-scored moves,
the lower levels more widely and for fewer plies, so games start differently. The draw uses the
player's own ``random.Random`` (``book_seed`` makes it repeatable); out of the book the level searches
as before. Each book move is remembered (:func:`took_from_book`), so the game can mark it.

The engine searches one position at a time. Requests take turns by priority
(:class:`SearchTicket`): the game's own move goes first and stops a running hint,
analysis or draw judgement; those wait, and any request can be cancelled
(:meth:`EnginePlayer.cancel`) while it waits or runs. Every method works on the
board it is given and only reads it: callers hand over a private copy (a
:class:`~xiangqi.app.play.session.Snapshot`), never a board another thread changes.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import random
import threading
from collections.abc import Iterator
from typing import Any

from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.core.board import ADVISOR, CANNON, ELEPHANT, HORSE, PAWN, ROOK, Board, Move

#: Rough material values in centipawns used by the draw-offer decision
#: (the usual xiangqi scale: rook 9, horse/cannon 4-4.5, advisor/elephant 2, pawn 1-2).
MATERIAL_CP = {ROOK: 900, HORSE: 400, CANNON: 450, ADVISOR: 200, ELEPHANT: 200, PAWN: 100}


@dataclasses.dataclass(frozen=True)
class Level:
    """A level as the page shows it: ``key``, its Chinese and English names, and its measured
    Elo (``elo``, the 95 % error bar ``elo_error``, ``elo_games`` games; None/0 while unmeasured)
    with the rank name ``rank_zh`` of DESIGN.md (e.g. 县丞)."""

    key: str
    name_zh: str
    name_en: str
    elo: int | None = None
    elo_error: int | None = None
    elo_games: int = 0
    rank_zh: str | None = None


FALLBACK_LEVELS = (Level("beginner", "初级", "Beginner"), Level("intermediate", "中级", "Intermediate"),
                   Level("advanced", "高级", "Advanced"), Level("master", "大师", "Master"))


def levels() -> list[Level]:
    """The engine's levels in order of strength (from :data:`xiangqi.engine.LEVELS` when available)."""
    try:
        from xiangqi.engine import LEVELS
    except ImportError:
        return list(FALLBACK_LEVELS)
    vals = LEVELS.values() if isinstance(LEVELS, dict) else LEVELS
    return [Level(lv.key, lv.name_zh, lv.name_en, lv.elo, lv.elo_error, lv.elo_games, lv.rank_zh)
            for lv in vals]


def material_balance(board: Board) -> int:
    """Material of the side to move minus the opponent's, in centipawns (:data:`MATERIAL_CP`)."""
    total = 0
    for code in board.squares:
        if code:
            v = MATERIAL_CP.get(abs(code), 0)
            total += v if (code > 0) == board.turn else -v
    return total


#: ``EnginePlayer(book=DEFAULT_BOOK)``: the book shipped with the package.
DEFAULT_BOOK = "default"


def book_ply(board: Board) -> int:
    """Plies played before ``board``'s position by its move counter (0 at a game's first move)."""
    return max(0, 2 * (board.fullmove_number - 1) + (0 if board.turn else 1))


def book_choices(board: Board, level: str, book: Any = DEFAULT_BOOK) -> list[tuple[Any, float]]:
    """The book moves ``level`` may play in ``board``'s position, with their chances
    (:func:`xiangqi.engine.book.candidates`; ``(BookMove, probability)``): empty when the position is
    out of the book, past the level's book depth, or there is no book (``book`` None, or the shipped
    one missing). ``book``: an :class:`~xiangqi.engine.book.OpeningBook`, :data:`DEFAULT_BOOK` or None."""
    if book is None:
        return []
    from xiangqi.engine import book as books

    if book == DEFAULT_BOOK:
        book = books.default_book()
        if book is None:
            return []
    if level not in books.LEVEL_STYLES:
        return []
    ply = book_ply(board)
    if ply >= books.LEVEL_STYLES[level].max_ply:
        return []  # out of this level's book: no probe at all
    return books.candidates(book.probe(board), level, ply)


#: The last book moves the players took, as (FEN, ICCS): what :func:`took_from_book` answers from.
_BOOK_LOG: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
_BOOK_LOG_SIZE = 256
_book_log_lock = threading.Lock()


def _remember_book_move(board: Board, move: Move) -> None:
    with _book_log_lock:
        _BOOK_LOG[(board.fen(), move.iccs())] = None
        _BOOK_LOG.move_to_end((board.fen(), move.iccs()))
        while len(_BOOK_LOG) > _BOOK_LOG_SIZE:
            _BOOK_LOG.popitem(last=False)


def took_from_book(board: Board, move: Move) -> bool:
    """Whether a player of this process took ``move`` from its book in ``board``'s position (one of the
    last 256 book moves; the position is its FEN, move counters included): what the game marks."""
    with _book_log_lock:
        return (board.fen(), move.iccs()) in _BOOK_LOG


class SearchCancelledError(Exception):
    """A search request was cancelled (:meth:`EnginePlayer.cancel`) before it gave its answer."""


class SearchTicket:
    """One request for the engine, to take turns and to cancel it.

    ``kind`` is ``"move"`` (the game's own move: served first; it stops a running query) or
    ``"query"`` (a hint, an analysis or a draw judgement). ``cancelled`` and ``reason`` (words)
    are set by :meth:`EnginePlayer.cancel`, and ``stop_event`` (the built-in engine's stop for this
    request's search, ``Engine.search(stop=...)``: a cancel that comes just before the search begins
    still stops it at once); ``preempted`` when a move stopped this query's search.
    Raises :class:`ValueError` for another kind.
    """

    KINDS = ("move", "query")

    def __init__(self, kind: str = "query") -> None:
        if kind not in self.KINDS:
            raise ValueError(f"search ticket kind must be move or query, got {kind!r}")
        self.kind = kind
        self.cancelled = False
        self.reason = ""
        self.preempted = False
        self.stop_event = threading.Event()

    def __repr__(self) -> str:
        flags = "".join((" cancelled" if self.cancelled else "", " preempted" if self.preempted else ""))
        return f"<SearchTicket {self.kind}{flags}>"


#: Seconds between the stop requests a waiting move sends to a running query (a stop that came
#: just before that search began would otherwise be lost).
PREEMPT_POLL_S = 0.05


class EnginePlayer:
    """The built-in engine as a player. One search at a time; requests take turns by
    :class:`SearchTicket` priority (the game's move first), and are thread-safe.

    ``hash_mb`` is the transposition-table size in MiB. ``book``: the opening book the levels play
    from (None, the default: no book; :data:`DEFAULT_BOOK`: the shipped one; an
    :class:`~xiangqi.engine.book.OpeningBook`); ``book_seed`` seeds the draw among book moves (None:
    a fresh seed). Every search holds :attr:`gate`
    (:class:`~xiangqi.app.tasks.background.ForegroundGate`), so background analysis gives way to it.
    """

    def __init__(self, hash_mb: int = 64, *, book: Any = None, book_seed: int | None = None) -> None:
        self.hash_mb = hash_mb
        #: Held while this player searches; background engine work waits for it or stops.
        self.gate = ForegroundGate()
        #: The search result behind the last :meth:`choose` (score for the side that moved), or None.
        self.last_result: Any = None
        self.book = book
        self._rng = random.Random(book_seed)
        self._engine: Any = None
        #: The endgame tables' directory (``xiangqi tb generate``); None: the data dir's
        #: ``tablebases`` (:func:`xiangqi.engine.tablebase.default_dir`). Used once it exists.
        self.tablebase_dir: Any = None
        self._cond = threading.Condition()
        self._running: SearchTicket | None = None
        self._waiting: list[SearchTicket] = []
        self._warm_started = False
        #: The engines the user added (:class:`xiangqi.app.opponents.engines.ExternalEngines`), which play the
        #: levels ``engine:<id>``; None: only the built-in levels.
        self.externals: Any = None
        self._external_key: str | None = None  # the added engine searching for a move now

    # -- taking turns ----------------------------------------------------------

    def _next_in_line(self) -> SearchTicket:
        """The waiting ticket to serve next: the first move, else the first query (call under _cond)."""
        return next((t for t in self._waiting if t.kind == "move"), self._waiting[0])

    @contextlib.contextmanager
    def _turn(self, ticket: SearchTicket | None, kind: str) -> Iterator[SearchTicket]:
        """Wait for the engine (moves first; a waiting move stops a running query), hold it for the
        block. Raises :class:`SearchCancelledError` when ``ticket`` is cancelled while it waits."""
        ticket = ticket or SearchTicket(kind)
        with self._cond:
            self._waiting.append(ticket)
            try:
                while True:
                    if ticket.cancelled:
                        raise SearchCancelledError(ticket.reason or "cancelled before it began")
                    if self._running is None and self._next_in_line() is ticket:
                        break
                    run = self._running
                    if ticket.kind == "move" and run is not None and run.kind == "query":
                        run.preempted = True
                        self._stop_engine()
                        self._cond.wait(PREEMPT_POLL_S)
                    else:
                        self._cond.wait()
            finally:
                self._waiting.remove(ticket)
                self._cond.notify_all()
            self._running = ticket
        try:
            with self.gate.foreground():
                yield ticket
        finally:
            with self._cond:
                self._running = None
                self._cond.notify_all()

    def cancel(self, ticket: SearchTicket, reason: str = "cancelled") -> None:
        """Cancel ``ticket``'s request (``reason`` in words, kept on the ticket): a waiting one raises
        :class:`SearchCancelledError` at once, a running search is stopped (its caller then gets
        :class:`SearchCancelledError`). No effect on a request that has already answered."""
        with self._cond:
            if ticket.cancelled:
                return
            ticket.cancelled = True
            ticket.reason = reason
            ticket.stop_event.set()  # before the engine's stop: a search about to begin sees it
            if self._running is ticket:
                self._stop_engine()
            self._cond.notify_all()

    def busy(self) -> tuple[str | None, int]:
        """``(kind of the running request or None, number of waiting requests)`` (for tests, logs)."""
        with self._cond:
            return (None if self._running is None else self._running.kind), len(self._waiting)

    def _stop_engine(self) -> None:
        key = self._external_key
        if key is not None and self.externals is not None:
            self.externals.stop(key)
        eng = self._engine
        if eng is not None and hasattr(eng, "stop"):
            eng.stop()

    def _search(self, ticket: SearchTicket, board: Board, limit: Any) -> Any:
        """A query's search with the built-in engine, stopped by ``ticket``'s cancel whenever it comes:
        before the search begins (``ticket.stop_event``, which the engine reads once it has reset its
        own stop flag) or while it runs (:meth:`cancel` stops the engine). Another searcher (a test's
        stand-in) is called as ``search(board, limit)``."""
        from xiangqi.engine import Engine

        eng = self._get()
        if isinstance(eng, Engine):
            return eng.search(board, limit, stop=ticket.stop_event)
        return eng.search(board, limit)

    @staticmethod
    def _check(ticket: SearchTicket) -> None:
        if ticket.cancelled:
            raise SearchCancelledError(ticket.reason or "cancelled")

    def _get(self) -> Any:
        if self._engine is None:
            from xiangqi.engine import Engine

            self._engine = Engine(hash_mb=self.hash_mb)
        eng = self._engine
        # the endgame tables of the data dir, once any were generated (`xiangqi tb generate`)
        from pathlib import Path

        from xiangqi.engine.tablebase import default_dir

        with contextlib.suppress(OSError):
            tbdir = Path(self.tablebase_dir) if self.tablebase_dir is not None else default_dir()
            if tbdir.is_dir():
                tb = getattr(eng, "tablebase", None)
                if tb is None or tb.directory != tbdir:
                    eng.set_tablebase_path(tbdir)
        return eng

    def warmup(self) -> None:
        """Start compiling the engine kernels in the background (no-op if the engine is absent)."""
        try:
            from xiangqi.engine import warmup
        except ImportError:
            return
        self._warm_started = True
        warmup()

    @staticmethod
    def kernels_ready() -> bool:
        """True once the engine's Numba kernels are compiled or loaded (:func:`xiangqi.engine.is_ready`)."""
        import xiangqi.engine

        return xiangqi.engine.is_ready()

    @staticmethod
    def _quick_level(level: Any) -> bool:
        """Whether :mod:`xiangqi.engine.pysearch` can play ``level`` (a depth of at most its MAX_DEPTH)."""
        from xiangqi.engine import get_level
        from xiangqi.engine.pysearch import MAX_DEPTH

        lv = get_level(level)
        return lv.depth is not None and lv.depth <= MAX_DEPTH

    def waits_for_warmup(self, level: str) -> bool:
        """True while a move at ``level`` would wait for the kernels to compile (cheap; no compile).

        The page shows "engine warming up" instead of "thinking" then. Raises
        :class:`ValueError` for an unknown level.
        """
        from xiangqi.app.opponents.engines import is_engine_key

        if is_engine_key(level):
            return False  # an added engine is a program of its own
        return not self.kernels_ready() and not self._quick_level(level)

    def _use_quick(self) -> bool:
        """True (and the warm-up started) while the kernels are not ready: answer with pysearch."""
        if self.kernels_ready():
            return False
        if not self._warm_started:
            self.warmup()  # nobody started it (e.g. a bare player): the kernels still come
        return True

    def choose(self, board: Board, level: str, time_s: float | None = None,
               ticket: SearchTicket | None = None, style: Any = None) -> Move:
        """The engine's move for the side to move of ``board`` at ``level`` (blocks).

        ``time_s`` (seconds, from the game clock) caps the level's own thinking time.
        While the kernels are not ready, a level :mod:`xiangqi.engine.pysearch` can
        play (初级) is answered by it at once; the others wait for the kernels.
        ``ticket`` (kind ``move``) lets the caller cancel it; a move goes before every
        query and stops a running one. Raises :class:`SearchCancelledError` when cancelled.
        In a position of the level's book the move comes from the book at once (:meth:`book_move`).
        A level ``engine:<id>`` is an engine the user added (:attr:`externals`): it plays its own
        move (no book), with the same turns and cancelling.
        ``style``: a named opponent's :class:`~xiangqi.app.opponents.persona_style.Style`, which reweights the
        book and chooses among the level's near-best lines (None: the level's own choice).
        """
        from xiangqi.app.opponents.engines import EngineSetupError, is_engine_key

        with self._turn(ticket, "move") as t:
            if is_engine_key(level):
                if self.externals is None:
                    raise EngineSetupError(f"{level}: no added engines on this server")
                self._external_key = level
                try:
                    move = self.externals.play(level, board.copy(), time_s)
                finally:
                    self._external_key = None
                self._check(t)
                self.last_result = None  # no score of ours: the computer's conduct waits
                return move
            booked = self.book_move(board, level, style)
            if booked is not None:
                self._check(t)
                return booked
            if self._quick_level(level) and self._use_quick():
                from xiangqi.engine import pysearch

                res = pysearch.play(board.copy(), level, time_limit=time_s)
                if res.move is not None:
                    self._check(t)
                    self.last_result = res
                    return res.move
            lv: Any = level
            if time_s is not None:
                from xiangqi.engine import get_level

                lv = get_level(level)
                if lv.time is None or time_s < lv.time:
                    lv = dataclasses.replace(lv, time=max(0.05, time_s))
            self._check(t)
            if style is None:
                res = self._get().play(board.copy(), lv)
            else:
                from xiangqi.engine import get_level

                res = style.play(self._get(), board.copy(), get_level(lv), self._rng)
            self._check(t)
            self.last_result = res
        return res.move

    def book_move(self, board: Board, level: str, style: Any = None) -> Move | None:
        """A move for ``level`` drawn from the book (:func:`book_choices`, reweighted by ``style``'s
        :meth:`~xiangqi.app.opponents.persona_style.Style.book` when given), or None out of the book (and
        when the book file cannot be read: the level then searches, and the problem is logged once)."""
        from xiangqi.core.errors import XiangqiError

        try:
            choices = book_choices(board, level, self.book)
        except XiangqiError as exc:  # a damaged or missing book file must not stop the game
            if not getattr(self, "_book_failed", False):
                self._book_failed = True
                import logging

                logging.getLogger(__name__).error("the opening book is not usable: %s", exc)
            return None
        if not choices:
            return None
        if style is not None:
            choices = style.book(board, choices)
        from xiangqi.engine.book import draw

        pick = draw(choices, self._rng).move
        _remember_book_move(board, pick)
        return pick

    def hint(self, board: Board, level: str, time_s: float = 1.0,
             ticket: SearchTicket | None = None) -> dict[str, Any]:
        """Best move for a hint: at least ``level``'s strength, searched for ``time_s`` seconds
        (once the kernels are ready).

        Returns ``{"move": ICCS, "score_cp": int|None, "mate": int|None, "pv": [ICCS, ...], "quick": bool,
        "tablebase": {"wdl", "dtm", "ending"} | None}`` (``tablebase``: the endgame table's verdict for
        the side to move when the data dir's tables hold the position, see ``Engine.tablebase``).
        While the kernels are not ready the hint is the best move of the pure-Python
        :data:`~xiangqi.engine.pysearch.MAX_DEPTH`-ply search, at once, with ``quick`` True
        (the page says the engine is still warming up). A query (``ticket`` kind ``query``): it
        waits for the game's moves and is stopped by one; raises :class:`SearchCancelledError`
        when cancelled.
        """
        with self._turn(ticket, "query") as t:
            if self._use_quick():
                from xiangqi.engine import pysearch

                q = pysearch.best_move(board.copy())
                self._check(t)
                if q.move is not None:
                    return {"move": q.move.iccs(), "score_cp": q.score_cp, "mate": q.mate,
                            "pv": [m.iccs() for m in q.pv], "quick": True, "tablebase": None}
            from xiangqi.engine import Limit

            self._check(t)
            res = self._search(t, board.copy(), Limit(time=time_s))
            self._check(t)
        return {"move": res.move.iccs(), "score_cp": res.score_cp, "mate": res.mate,
                "pv": [m.iccs() for m in (res.pv or [])], "quick": False,
                "tablebase": getattr(res, "tablebase", None)}

    def evaluate(self, board: Board, time_s: float = 0.5,
                 ticket: SearchTicket | None = None) -> tuple[int | None, int | None]:
        """``(score_cp, mate)`` from the side to move's view after a short search.

        While the kernels are not ready: the score of the pure-Python search's best move. A query
        like :meth:`hint` (waits for the game's moves; :class:`SearchCancelledError` when cancelled).
        """
        with self._turn(ticket, "query") as t:
            if self._use_quick():
                from xiangqi.engine import pysearch

                q = pysearch.best_move(board.copy())
                self._check(t)
                if q.move is not None:
                    return q.score_cp, q.mate
            from xiangqi.engine import Limit

            self._check(t)
            res = self._search(t, board.copy(), Limit(time=time_s))
            self._check(t)
        return res.score_cp, res.mate

    def stop(self) -> None:
        """Ask the running search, whatever asked for it, to stop soon (it then returns its best
        move so far)."""
        self._stop_engine()


def accepts_draw(score_cp: int | None, mate: int | None, material_cp: int, in_opening: bool) -> bool:
    """Whether the computer accepts a draw offer (提和).

    ``score_cp``/``mate`` are the engine's view for the computer's side;
    ``material_cp`` is the computer's material minus the human's. The computer
    accepts when it is not better: no mate for it, evaluation at most +50 cp
    (half a pawn) and no material lead above a pawn; and never ``in_opening``
    (the first 20 plies from the standard start), where a draw offer is a
    courtesy, not a position.
    """
    if in_opening:
        return False
    if mate is not None:
        return mate < 0
    if score_cp is None:
        return material_cp <= 100
    return score_cp <= 50 and material_cp <= 100
