"""GameHub: the one game the local server hosts, its WebSocket clients and its computer player.

Data flow of one move (DESIGN.md): message → :meth:`GameHub.move` →
``GameSession.play`` (the core Board checks legality, the referee rules) →
``Store.save_current`` (one transaction) → broadcast of the new state → if the
computer is to move, ``EnginePlayer.choose`` runs in a worker thread and its
move takes the same path. All hub methods run on the server's event loop.

Every change goes through one save step, :meth:`GameHub._saving`: a change that cannot be
saved (disk full, read-only database) is undone in memory and never shown as made; the
computer's unsaved move is retried every :attr:`GameHub.storage_retry_s` seconds.

Threads. The session and its board belong to the event loop: only hub methods (on the loop,
under the hub's lock where they change the game) touch them. A worker thread (the computer's
move, a hint, a draw judgement) gets a :class:`~xiangqi.app.play.session.Snapshot` taken under the
lock: a private board copy and plain values, never the session. Its answer is applied under the
lock only if the game is still at the snapshot's version. The engine serves the game's own move
before hints (:class:`~xiangqi.app.opponents.players.SearchTicket`); a hint for a position that is gone,
or one the same page asked for again, is cancelled.

Clients (:mod:`xiangqi.web.clients`) each have a bounded send queue drained by their own task:
:meth:`GameHub.broadcast` never waits for a socket, and a page that falls behind is dropped (it
reconnects and gets the current state). Every state carries ``version``, one more for every
change a page can see; an undo may name the version it takes back (:meth:`GameHub.undo`).

The computer never stalls the game: a move that raises, is illegal or takes longer than
``engine_timeout_s`` is logged and tried again (:data:`ENGINE_RETRIES` times); after that the
state says ``engine_error`` and the player may retry (:meth:`GameHub.retry_engine`) or move for
the computer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from xiangqi.app.opponents.engines import EngineGaveNoMove, no_move_outcome
from xiangqi.app.opponents.players import (
    EnginePlayer,
    SearchCancelledError,
    SearchTicket,
    accepts_draw,
    material_balance,
)
from xiangqi.app.play.clock import TimeControl
from xiangqi.app.play.conduct import OFFER_DRAW, RESIGN, Conduct, computer_draw_agreed, computer_resigns
from xiangqi.app.play.session import GameSession, NotYourTurnError, SessionError, Snapshot, StaleVersionError
from xiangqi.app.play.store import StorageError, Store
from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError

if TYPE_CHECKING:
    from xiangqi.web.clients import Client

log = logging.getLogger(__name__)

#: (board copy, level) -> Move; the default is the built-in engine.
MoveProvider = Callable[[Board, str], Move]
#: Seconds a hint or a draw-offer judgement may take (including a first kernel compile) before the
#: request gets an error instead of waiting for ever.
ENGINE_ANSWER_TIMEOUT_S = 120.0
#: Seconds the computer's own move may take (a first kernel compile included) before it counts as
#: a failure; a clock's own limit is usually far shorter.
ENGINE_MOVE_TIMEOUT_S = 180.0
#: How many times a failed computer move is tried again before the player is asked to decide.
ENGINE_RETRIES = 1

T = TypeVar("T")


class EngineTimeoutError(SessionError):
    """The engine did not answer a hint or draw-offer request in time."""


class HintCancelledError(SessionError):
    """A hint was dropped before its answer: the position changed, or the same page asked again.
    ``version`` is the state version the hint was asked for (None when unknown)."""

    def __init__(self, message: str, version: int | None = None) -> None:
        super().__init__(message)
        self.version = version


def _in_thread(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run ``fn(*args)`` in a new daemon thread; the returned future (of the running loop) gets its
    result. One thread per request, so that the game's move never waits in a shared pool behind
    hints; a thread whose answer is no longer wanted just ends unheard."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, exc: BaseException | None) -> None:
        if fut.done():  # timed out or cancelled meanwhile
            return
        if exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(result)

    def run() -> None:
        try:
            result, exc = fn(*args), None
        except BaseException as e:  # handed to the awaiting coroutine
            result, exc = None, e
        with contextlib.suppress(RuntimeError):  # the loop is gone (shutdown)
            loop.call_soon_threadsafe(settle, result, exc)

    threading.Thread(target=run, name=f"xiangqi-{getattr(fn, '__name__', 'engine')}", daemon=True).start()
    return fut


class GameHub:
    """Holds the current :class:`GameSession`, saves it after every change and pushes state to clients.

    ``move_provider`` chooses the computer's moves from a private board copy (default:
    :class:`EnginePlayer`); tests pass a fast deterministic one. ``engine_delay_s`` pauses
    before each computer move when the computer plays both sides, so a person can follow.
    ``engine_timeout_s`` bounds one computer move (see the module text).
    """

    def __init__(self, store: Store, player: EnginePlayer | None = None,
                 move_provider: MoveProvider | None = None, engine_delay_s: float = 0.3,
                 engine_timeout_s: float = ENGINE_MOVE_TIMEOUT_S) -> None:
        self.store = store
        self.player = player or EnginePlayer()
        self.move_provider: MoveProvider = move_provider or self.player.choose
        self.engine_delay_s = engine_delay_s
        self.engine_timeout_s = engine_timeout_s
        self.session: GameSession = store.load_current() or GameSession()
        self.clients: set[Client] = set()
        #: True while the computer searches its move (part of the state: the page shows it).
        self.thinking = False
        #: Why the computer could not move after its retries, ``{"detail", "detail_zh", "detail_en",
        #: "attempts"}``; None while it plays normally. While set the computer waits: the player may
        #: retry it (:meth:`retry_engine`) or make its move (:meth:`move`).
        self.engine_error: dict[str, Any] | None = None
        self.notice: dict[str, Any] | None = None
        self._engine_task: asyncio.Task[None] | None = None
        self._clock_task: asyncio.Task[None] | None = None
        self._custom_provider = move_provider is not None
        self._lock = asyncio.Lock()
        #: ``{"kind", "detail"}`` of the last save that failed (None once a save succeeds); set from
        #: the start when the database was opened read-only.
        self.storage_error: dict[str, str] | None = next(
            ({"kind": n["kind"], "detail": n["message"]} for n in store.notices if n["kind"] == "read_only"),
            None)
        #: Seconds between retries of a computer move that could not be saved.
        self.storage_retry_s = 2.0
        self._unsaved_move: tuple[tuple[str, int], Move] | None = None  # ((game id, version), move)
        self._tell_task: asyncio.Task[None] | None = None
        #: Running hint searches: ticket -> (game id, version) of the position they are for.
        self._queries: dict[SearchTicket, tuple[str, int]] = {}
        self._client_hints: dict[object, SearchTicket] = {}  # the latest hint of each page
        #: The computer's last evaluation ((game id, version), cp, mate, tablebase wdl), see _choose.
        self._last_eval: tuple | None = None
        self._conduct_for: tuple[str, Conduct] | None = None  # (game id, its Conduct)
        self._computer_offer: tuple[str, int] | None = None  # (game id, version) of a standing offer
        self._version = 0
        self._version_key: tuple[Any, ...] | None = None
        #: The coach (:class:`xiangqi.web.coach_api.CoachService`, set by its router): the rating after
        #: each save, the coach's advice after each of the player's moves, ``state()["coach"]``.
        self.coach: Any = None
        #: The opponents' remarks (:class:`xiangqi.app.opponents.persona.TalkService`, set by
        #: web/talk_api.py).
        self.talk: Any = None

    # -- state -----------------------------------------------------------

    def _warming(self) -> bool:
        return (self.thinking and not self._custom_provider
                and self.player.waits_for_warmup(self.session.engine_level() or self.session.level))

    @property
    def version(self) -> int:
        """The state's version: one more for every change a page can see (a move, an undo, a result,
        the computer starting or ending its search, an engine failure, a new game). Never goes down
        while the server runs; read under the lock to compare a request's version with it."""
        s = self.session
        err = self._failure()
        key = (s.id, s.version, self.thinking, self._warming(), None if err is None else err["detail"],
               None if self.storage_error is None else self.storage_error["detail"],
               None if self.coach is None else self.coach.revision, self._version_extra())
        if key != self._version_key:
            self._version_key = key
            self._version += 1
        return self._version

    def _version_extra(self) -> tuple[Any, ...]:
        """What else a page sees of this room, for :attr:`version` (the local game: nothing more;
        an online room adds its seats, offers and watchers, :mod:`xiangqi.online.rooms`)."""
        return ()

    def state(self) -> dict[str, Any]:
        """The session's state (its ``version`` replaced by :attr:`version`) plus ``thinking`` (the
        computer is searching), ``engine_warming`` (that search waits for the engine's first
        compile: the page says so), ``engine_error`` (:attr:`engine_error`), ``storage_error``
        (``{"kind": "full"|"read_only"|"io"…, "detail"}`` while changes cannot be saved, else None)
        and ``storage_notices`` (:attr:`Store.notices`: a damaged file or game kept aside at start-up)."""
        st = self.session.state()
        st["version"] = self.version
        st["thinking"] = self.thinking
        st["engine_warming"] = self._warming()
        st["engine_error"] = self._failure()
        st["storage_error"] = self.storage_error
        st["storage_notices"] = list(self.store.notices)
        st["computer_draw_offer"] = self.computer_offers_draw()
        if self.coach is not None:
            st["coach"] = self.coach.state(self.session)
        if self.talk is not None:
            st["talk"] = self.talk.state(self.session)
        return st

    def _failure(self) -> dict[str, Any] | None:
        """:attr:`engine_error` while it still matters (the computer is to move)."""
        return self.engine_error if self.engine_error is not None and self.session.engine_to_move() else None

    def add_client(self, client: Client) -> None:
        """Register a connected page; it gets every broadcast from now on."""
        self.clients.add(client)

    def remove_client(self, client: Client) -> None:
        """Forget a page (it disconnected or was dropped); its pending hint is cancelled."""
        self.clients.discard(client)
        ticket = self._client_hints.pop(client, None)
        if ticket is not None:
            self.player.cancel(ticket, "the page went away")

    def send_all(self, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for every client; never waits (a client whose queue is full is dropped)."""
        for client in list(self.clients):
            client.send(msg)

    async def broadcast(self, extra: dict[str, Any] | None = None) -> None:
        """Send ``{"type": "state", "state": ...}`` (plus ``extra`` keys) to every client.

        Queues the message for each client and returns at once: a slow or dead socket delays no
        one. Every change is broadcast, so this is also where hints for a position that is gone
        are cancelled."""
        self._drop_stale_queries()
        if not self.clients:
            return
        msg = {"type": "state", "state": self.state()}
        if extra:
            msg.update(extra)
        self.send_all(msg)

    def _drop_stale_queries(self) -> None:
        here = (self.session.id, self.session.version)
        for ticket, at in list(self._queries.items()):
            if at != here:
                self.player.cancel(ticket, "the position changed before the hint was ready")

    def language(self) -> str:
        """The interface language from the settings (``zh`` or ``en``; ``zh`` when unset or unknown)."""
        try:
            lang = self.store.get_settings().get("language")
        except Exception:
            log.exception("could not read the settings")
            return "zh"
        return "en" if lang == "en" else "zh"

    @contextlib.contextmanager
    def _saving(self) -> Iterator[None]:
        """The save step of every change (used under the lock). The block changes the game, in
        place or by making another session current; if it did (even when it then raised, as a
        move that first ends the game on time does), the result is saved with
        :meth:`Store.save_game` (one transaction; a replaced unfinished game is kept in the
        library). If that raises :class:`StorageError` the change is undone in memory (the game as
        it was before the block, or the replaced game, is current again), ``storage_error`` is set
        and broadcast, and the error propagates: a change that cannot be saved is not made."""
        old = self.session
        record, version = old.to_record(), old.version
        try:
            yield
        finally:
            if self.session is not old or old.version != version:
                self._commit(old, record, version)

    def _commit(self, old: GameSession, record: dict[str, Any], version: int) -> None:
        new = self.session
        try:
            self.store.save_game(new, self.language(), abandoned=None if new is old else old)
        except StorageError as exc:
            log.warning("a change could not be saved and was undone: %s", exc)
            if new is old:
                try:
                    back = GameSession.from_record(record)
                except Exception:  # pragma: no cover - the record was written by to_record just now
                    log.exception("could not restore the game from before the unsaved change")
                    raise exc from None
                back.version = version
                self.session = back
            else:
                self.session = old
            self.storage_error = {"kind": exc.kind, "detail": str(exc)}
            self.arm_clock()
            self._tell_task = asyncio.get_running_loop().create_task(self.broadcast())
            raise
        self.storage_error = None
        self.arm_clock()
        if self.coach is not None:
            self.coach.saved(new)
        if self.talk is not None:
            self.talk.saved(new)

    # -- actions ---------------------------------------------------------

    async def new_game(self, *, red: str, black: str, level: str, fen: str | None = None,
                       time_control: TimeControl | None = None) -> dict[str, Any]:
        """Start a new game (raises SessionError / FenError / ClockError on bad input); returns its state."""
        from xiangqi.core.board import STARTING_FEN

        session = GameSession(red=red, black=black, level=level, fen=fen or STARTING_FEN,
                              time_control=time_control)
        return await self.replace(session)

    async def replace(self, session: GameSession) -> dict[str, Any]:
        """Make ``session`` the current game: saved, announced to old clients, engine started."""
        async with self._lock:
            old = self.session
            with self._saving():
                self.session = session
            self.player.stop()
            self.thinking = False
            self.engine_error = None
        self._drop_stale_queries()
        self.send_all({"type": "replaced", "id": session.id, "old": old.id})
        self.kick_engine()
        return self.state()

    async def move(self, iccs: str) -> dict[str, Any]:
        """A human move (ICCS text). Raises the core's errors for bad or illegal moves and
        :class:`NotYourTurnError` on the computer's turn, unless the computer failed
        (:attr:`engine_error`): then the player may make its move."""
        async with self._lock:
            if self.session.engine_to_move() and self.engine_error is None:
                raise NotYourTurnError("it is the computer's turn; wait for its move")
            offered = self.computer_offers_draw()
            with self._saving():
                self.session.play(iccs)
            if offered:  # playing on declines the computer's draw offer
                self._conduct(self.session).declined(len(self.session.moves))
                self._computer_offer = None
            self.engine_error = None
            if self.coach is not None:
                self.coach.moved(self.session)
        await self.broadcast()
        self.kick_engine()
        return self.state()

    async def undo(self, version: int | None = None, *, coach: bool = False,
                   to_ply: int | None = None) -> dict[str, Any]:
        """Take back the last full move (悔棋); a running search is abandoned.

        ``version`` is the state version the page showed when the player pressed 悔棋: when the
        game has changed since (another tab's undo, the computer's reply), nothing is taken back
        and :class:`StaleVersionError` is raised, so two pages pressing once each take back one
        move, not two. None: no check (a caller that does not track versions). ``coach``: a takeback
        the coach offered (counted apart from 悔棋, :meth:`GameSession.undo`); ``to_ply``: take back
        until at most that many plies remain (the coach's warned move and the reply after it)."""
        async with self._lock:
            current = self.version
            if version is not None and version != current:
                raise StaleVersionError(
                    f"undo refused: it was pressed at version {version} but the game is now at version "
                    f"{current} (it changed meanwhile); look at the current position and undo again",
                    current)
            self.player.stop()
            with self._saving():
                self.session.undo(coach=coach)
                while to_ply is not None and len(self.session.moves) > to_ply and self.session.can_undo():
                    self.session.undo(coach=coach)
            self.thinking = False
            self.engine_error = None
        await self.broadcast()
        self.kick_engine()
        return self.state()

    async def resign(self) -> dict[str, Any]:
        """The human side to move (or the only human side) resigns."""
        async with self._lock:
            s = self.session
            humans = [c for c, k in s.players.items() if k == "human"]
            if not humans:
                raise SessionError("no human player to resign")
            color = s.board.turn if s.board.turn in humans else humans[0]
            self.player.stop()
            with self._saving():
                s.resign(color)
            self.thinking = False
            self.engine_error = None
        await self.broadcast()
        return self.state()

    async def offer_draw(self) -> dict[str, Any]:
        """The human offers a draw (提和). Against the computer it decides from a short search and
        the material (:func:`xiangqi.app.opponents.players.accepts_draw`); between humans the draw is agreed.
        Returns ``{"accepted": bool, "state": ...}``."""
        s = self.session
        if s.is_over:
            raise SessionError("the game is already over")
        engines = [c for c, k in s.players.items() if k == "engine"]
        if not engines:
            async with self._lock:
                with self._saving():
                    s.agree_draw()
            await self.broadcast()
            return {"accepted": True, "state": self.state()}
        comp = engines[0]
        if self.computer_offers_draw():  # the player takes the computer's own offer
            async with self._lock:
                if self.computer_offers_draw():
                    with self._saving():
                        s.declare(computer_draw_agreed())
                    self._computer_offer = None
            await self.broadcast({"draw_offer": {"accepted": True}})
            return {"accepted": True, "state": self.state()}
        async with self._lock:
            board = self.session.snapshot().board
        ticket = SearchTicket("query")
        try:
            score, mate = await self._query(ticket, self.player.evaluate, board, 0.5, ticket)
        except TimeoutError:
            raise EngineTimeoutError(
                f"the engine did not judge the draw offer within {ENGINE_ANSWER_TIMEOUT_S:.0f} s") from None
        except SearchCancelledError as exc:
            raise HintCancelledError(f"the draw offer was not judged: {exc}") from None
        if board.turn != comp:  # the search speaks for the side to move
            score = None if score is None else -score
            mate = None if mate is None else -mate
        mat = material_balance(board)
        if board.turn != comp:
            mat = -mat
        from xiangqi.core.board import STARTING_FEN

        accepted = accepts_draw(score, mate, mat, s.start_fen == STARTING_FEN and len(s.moves) < 20)
        if accepted:
            async with self._lock:
                if self.session is s and not s.is_over:
                    with self._saving():
                        s.agree_draw()
                    self.player.stop()
                    self.thinking = False
        await self.broadcast({"draw_offer": {"accepted": accepted}})
        return {"accepted": accepted, "state": self.state()}

    async def hint(self, client: object | None = None) -> dict[str, Any]:
        """The engine's best move for the side to move (at least the game's level; 1 s search).

        Returns ``{"move", "score_cp", "mate", "pv", "fen", "chinese", "wxf", "version"}``: ``move``
        in ICCS, ``fen`` and ``version`` the position it is for, ``chinese``/``wxf`` the move's text
        (车一平二 / R1.2). A hint waits for the computer's own move and never delays it. ``client``
        (any hashable, e.g. the page's connection) identifies the asker: its newer request cancels
        its older one. Raises :class:`HintCancelledError` when the request was replaced or the
        position changed before the answer, :class:`EngineTimeoutError` after
        :data:`ENGINE_ANSWER_TIMEOUT_S`.
        """
        async with self._lock:
            s = self.session
            if s.is_over:
                raise SessionError("the game is over: no hint")
            if s.engine_to_move():
                raise NotYourTurnError("it is the computer's turn")
            snap = s.snapshot()
            asked = self.version
        ticket = SearchTicket("query")
        if client is not None:
            older = self._client_hints.get(client)
            if older is not None:
                self.player.cancel(older, "a newer hint request from the same page replaced this one")
            self._client_hints[client] = ticket
        self._queries[ticket] = (snap.game_id, snap.version)
        try:
            hint = await self._query(ticket, self.player.hint, snap.board, snap.level, 1.0, ticket)
        except TimeoutError:
            raise EngineTimeoutError(
                f"the engine gave no hint within {ENGINE_ANSWER_TIMEOUT_S:.0f} s") from None
        except SearchCancelledError:
            raise HintCancelledError(f"hint cancelled: {ticket.reason or 'cancelled'}", asked) from None
        finally:
            self._queries.pop(ticket, None)
            if client is not None and self._client_hints.get(client) is ticket:
                del self._client_hints[client]
        if (self.session.id, self.session.version) != (snap.game_id, snap.version):
            raise HintCancelledError("hint cancelled: the position changed before the hint was ready", asked)
        board = snap.board  # the thread is done with it: the snapshot is ours again
        mv = Move.from_iccs(hint["move"])
        from xiangqi.app.play.session import chinese_move_text
        from xiangqi.core.notation import move_to_wxf

        line = _line_text(board, hint.get("pv") or [hint["move"]])
        await self.note_help(s, "hints")  # a hint seen is help taken: the game is no longer rated
        return {**hint, "fen": board.fen(), "chinese": chinese_move_text(board, mv),
                "wxf": move_to_wxf(board, mv), "line": line, "version": self.version}

    async def note_help(self, session: GameSession, what: str) -> None:
        """Count help taken in ``session`` (``hints``, ``threats``: :meth:`GameSession.count`; such a
        game is not rated, app/play/ratings.py), save it and tell the pages. The position's version stays,
        so hints being searched for it are not cancelled; a save that fails is logged and the count
        is kept in memory (the next save writes it)."""
        async with self._lock:
            if self.session is not session or session.is_over:
                return
            record, version = session.to_record(), session.version
            session.count(what)
            if self.coach is not None:
                self.coach.revision += 1
            try:
                self._commit(session, record, version)
            except StorageError:
                log.warning("help taken (%s) could not be saved yet", what)
                self.session.count(what)  # the restored game keeps the count in memory
        await self.broadcast()

    async def _query(self, ticket: SearchTicket, fn: Callable[..., T], *args: Any) -> T:
        """Run a hint or judgement ``fn(*args)`` in its own thread, at most
        :data:`ENGINE_ANSWER_TIMEOUT_S`; on a timeout or if the caller goes away, the search is
        cancelled (raises TimeoutError / CancelledError / :class:`SearchCancelledError`)."""
        try:
            return await asyncio.wait_for(_in_thread(fn, *args), ENGINE_ANSWER_TIMEOUT_S)
        except BaseException:
            self.player.cancel(ticket, "the request ended")
            raise

    # -- clocks ------------------------------------------------------------

    def arm_clock(self) -> None:
        """(Re)start the watchdog that ends the game when the running clock's flag falls."""
        if self._clock_task is not None and not self._clock_task.done():
            self._clock_task.cancel()
        self._clock_task = None
        s = self.session
        if s.is_over or s.clock.deadline() is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the server loop (start-up): armed again by lifespan
            return
        self._clock_task = loop.create_task(self._clock_watch(s, s.version))

    async def _clock_watch(self, s: GameSession, version: int) -> None:
        while True:
            deadline = s.clock.deadline()
            if deadline is None:
                return
            wait = max(0.0, deadline - s.clock.now()) + 0.01
            await asyncio.sleep(wait + (self.storage_retry_s if self.storage_error else 0.0))
            if self.session is not s or s.version != version or s.is_over:
                return
            if await self.check_clock() is not None:
                return

    async def check_clock(self) -> bool | None:
        """End the game when the running clock's flag has fallen by now (the clock's time source):
        the watchdog's step, which tests call after moving a fake clock on. Under the lock: the end
        is saved (a failed save undoes it; the restored game's watch tries again) and broadcast.
        Returns True when this call ended the game, False when the game was over already (nothing
        done), None when no flag has fallen or the end could not be saved (undone; an online room
        in shared mode re-reads the game another process ended first)."""
        async with self._lock:
            s = self.session
            if s.is_over:
                return False
            if s.clock.flagged() is None:
                return None
            if self._clock_task is asyncio.current_task():
                self._clock_task = None  # this watch ends here; the save step arms the next one
            with contextlib.suppress(StorageError):
                with self._saving():
                    s.check_time()
                self.player.stop()
                self.thinking = False
        ended = self.session is s and s.is_over  # (an unsaved end was undone: another session now)
        await self.broadcast()
        return True if ended else None

    # -- the computer's moves --------------------------------------------

    def kick_engine(self) -> None:
        """Start the computer's move task if it is to move, has not failed and none is running."""
        if self._engine_task is not None and not self._engine_task.done():
            return
        if not self.session.engine_to_move() or self.engine_error is not None:
            return
        self._engine_task = asyncio.get_running_loop().create_task(self._engine_loop())

    async def retry_engine(self) -> dict[str, Any]:
        """After the computer failed (:attr:`engine_error`), let it try again; returns the state.
        Raises :class:`SessionError` when it has not failed."""
        async with self._lock:
            if self.engine_error is None:
                raise SessionError("the computer has not failed: there is nothing to retry")
            self.engine_error = None
        await self.broadcast()
        self.kick_engine()
        return self.state()

    async def _engine_loop(self) -> None:
        failures = 0
        while True:
            s = self.session
            if not s.engine_to_move() or self.engine_error is not None:
                break
            version = s.version
            both = "human" not in s.players.values()
            if both and self.engine_delay_s and not failures:
                await asyncio.sleep(self.engine_delay_s)
                if self.session is not s or s.version != version:
                    continue
            async with self._lock:
                if self.session is not s or s.version != version or not s.engine_to_move():
                    continue
                snap = s.snapshot()  # on the loop, under the lock: the thread sees only this copy
                self.thinking = True
            await self.broadcast()
            unsaved, self._unsaved_move = self._unsaved_move, None
            if unsaved is not None and unsaved[0] == (s.id, version):
                mv, failure = unsaved[1], None  # chosen before but not saved (disk full): play it now
            else:
                mv, failure = await self._think(snap)
            unsaved_error = None
            async with self._lock:
                if self.session is not s or s.version != version or not s.engine_to_move():
                    self.thinking = False
                    continue  # the game changed meanwhile (undo, new game): think again if needed
                if isinstance(failure, EngineGaveNoMove):  # the referee ends the game (match.judge_claim)
                    try:
                        with self._saving():
                            s.declare(no_move_outcome(s.board, failure, s.rules))
                        failure = None
                    except StorageError as exc:  # not ended: asked again when space is back
                        self.thinking = False
                        unsaved_error = str(exc)
                        failure = None
                        unsaved = None
                elif failure is None:
                    try:
                        with self._saving():
                            s.play(mv)
                        self._after_computer_move(s, version)
                    except StorageError as exc:  # not played: told once, retried when space is back
                        self.thinking = False
                        self._unsaved_move = ((s.id, version), mv)
                        unsaved_error = str(exc)
                    except XiangqiError as exc:
                        failure = f"the computer chose a move the board refuses ({exc})"
                if failure is None:
                    if unsaved_error is None:
                        failures = 0
                        self.thinking = False
                else:
                    failures += 1
                    log.error("the computer could not move (attempt %d of %d): %s",
                              failures, ENGINE_RETRIES + 1, failure)
                    if failures > ENGINE_RETRIES:
                        self.thinking = False
                        self.engine_error = _engine_failure(failure, failures)
            if unsaved_error is not None:
                if unsaved is None:
                    await self.broadcast({"error": unsaved_error})
                await asyncio.sleep(self.storage_retry_s)
                continue
            if failure is not None and self.engine_error is None:
                continue  # try again (the page keeps showing "thinking")
            extra = None
            if self.engine_error is not None:
                err = self.engine_error
                extra = {"error": err["detail_en"] if self.language() == "en" else err["detail_zh"]}
            await self.broadcast(extra)
        if self.thinking:
            self.thinking = False
            await self.broadcast()

    async def _think(self, snap: Snapshot) -> tuple[Move | None, Any]:
        """The computer's move for ``snap`` from a worker thread: ``(move, None)``, or ``(None, why)``
        when it raised, gave no move or took longer than :attr:`engine_timeout_s`; ``(None,
        EngineGaveNoMove)`` when an added engine resigned or claimed a draw (the game ends by it)."""
        ticket = SearchTicket("move")
        try:
            mv = await asyncio.wait_for(_in_thread(self._choose, snap, ticket), self.engine_timeout_s)
        except TimeoutError:
            self.player.cancel(ticket, "timed out")
            return None, f"no move within {self.engine_timeout_s:g} s"
        except asyncio.CancelledError:
            self.player.cancel(ticket, "the game's engine task ended")
            raise
        except EngineGaveNoMove as exc:  # an added engine resigned or claimed a draw: not a failure
            return None, exc
        except Exception as exc:
            log.exception("the computer player failed")
            return None, f"the engine failed: {type(exc).__name__}: {exc}"
        if not isinstance(mv, Move):
            return None, f"the engine gave no move (it returned {mv!r})"
        return mv, None

    def _choose(self, snap: Snapshot, ticket: SearchTicket) -> Move:
        """The computer's move (runs in a worker thread, on the snapshot only); the game clock caps
        its thinking time; the adaptive level plays its own settings (``snap.engine_level``). Its
        evaluation (for :class:`~xiangqi.app.play.conduct.Conduct`) is kept in
        :attr:`_last_eval`; a test's provider may return a search result (``.move``, ``.score_cp``,
        ``.mate``) instead of a move to give one."""
        self._last_eval = None
        if self._custom_provider:  # a test's provider: still the foreground for background work
            with self.player.gate.foreground():
                got = self.move_provider(snap.board, snap.level)
            res = got if hasattr(got, "move") else None
            mv = got.move if res is not None else got
        else:
            self.player.last_result = None
            style = None if self.talk is None else self.talk.style_for(snap.opponent)
            mv = self.player.choose(snap.board, snap.engine_level or snap.level, snap.think_s, ticket=ticket,
                                    style=style)
            res = self.player.last_result
        if res is not None:
            tb = getattr(res, "tablebase", None)
            self._last_eval = ((snap.game_id, snap.version), getattr(res, "score_cp", None),
                               getattr(res, "mate", None), tb.get("wdl") if isinstance(tb, dict) else None)
        return mv

    def _conduct(self, s: GameSession) -> Conduct:
        """This game's :class:`~xiangqi.app.play.conduct.Conduct` (tendency: the ``computer_tendency``
        setting when the game's first decision is made)."""
        if self._conduct_for is None or self._conduct_for[0] != s.id:
            tendency = "normal"
            with contextlib.suppress(Exception):
                tendency = self.store.get_settings().get("computer_tendency", "normal")
            self._conduct_for = (s.id, Conduct(tendency if tendency in ("stubborn", "normal", "compliant")
                                               else "normal"))
        return self._conduct_for[1]

    def _after_computer_move(self, s: GameSession, version: int) -> None:
        """After the computer's move at ``version`` (called under the lock, the move saved): resign or
        offer a draw as its tendency says (:mod:`xiangqi.app.play.conduct`)."""
        got, self._last_eval = self._last_eval, None
        if got is None or got[0] != (s.id, version) or s.is_over:
            return
        _, cp, mate, wdl = got
        if self.talk is not None:
            self.talk.observe(s, cp, mate)
        comp = not s.board.turn  # the side that just moved
        conduct = self._conduct(s)
        conduct.observe(len(s.moves) - 1, cp, mate, wdl)
        mat = -material_balance(s.board)  # the computer's material minus the player's
        decision = conduct.decide(len(s.moves), mat)
        if decision == RESIGN and "human" in s.players.values():
            with self._saving():
                s.declare(computer_resigns(comp))
        elif decision == OFFER_DRAW and "human" in s.players.values():
            self._computer_offer = (s.id, s.version)

    def computer_offers_draw(self) -> bool:
        """True while the computer's draw offer stands (until the player's next move)."""
        s = self.session
        offer = self._computer_offer
        return offer is not None and offer == (s.id, s.version) and not s.is_over

    async def wait_idle(self) -> None:
        """Wait until no computer move is being searched (used by tests and shutdown)."""
        while self._engine_task is not None and not self._engine_task.done():
            await asyncio.sleep(0.01)

    async def shutdown(self) -> None:
        """Stop a running search and wait for its task; close the clients' send queues."""
        self.player.stop()
        if self._clock_task is not None:
            self._clock_task.cancel()
        t = self._engine_task
        if t is not None and not t.done():
            t.cancel()
            with contextlib.suppress(BaseException):
                await t
        for client in list(self.clients):
            client.drop("the server is shutting down")


class GameRegistry:
    """The games one server holds, keyed by game id: the rooms (:class:`GameHub` and its online
    subclass, :class:`xiangqi.online.rooms.OnlineRoom`).

    The local game is the simplest case: one room, :attr:`local`, found under the id of whatever
    game it holds now (a new game there changes its id). Online rooms are added under their game's
    id, which never changes. Every room has the same parts (a session saved after every change, its
    clock watchdog, the computer's move loop, versioned states pushed to its sockets).
    """

    def __init__(self, local: GameHub | None = None) -> None:
        self.local = local
        self.rooms: dict[str, GameHub] = {}

    def add(self, room: GameHub) -> None:
        """Hold ``room`` under its game's id (replacing a room of the same id)."""
        self.rooms[room.session.id] = room

    def get(self, game_id: str) -> GameHub | None:
        """The room of ``game_id``: the local game when it holds that game, else an added room; None."""
        if self.local is not None and self.local.session.id == game_id:
            return self.local
        return self.rooms.get(game_id)

    def remove(self, game_id: str) -> GameHub | None:
        """Forget the added room of ``game_id`` (returned, or None); the local room stays."""
        return self.rooms.pop(game_id, None)

    def __len__(self) -> int:
        return len(self.rooms) + (self.local is not None)

    def __iter__(self) -> Iterator[GameHub]:
        if self.local is not None:
            yield self.local
        yield from list(self.rooms.values())

    async def shutdown(self) -> None:
        """Shut every room down (:meth:`GameHub.shutdown`)."""
        for room in self:
            await room.shutdown()


def _line_text(board: Board, pv: list[str], limit: int = 8) -> list[str]:
    """The first ``limit`` moves of ``pv`` (ICCS) from ``board`` in Chinese notation (the hint's line);
    stops at a move that is not legal there."""
    from xiangqi.app.play.session import chinese_move_text

    b = board.copy()
    out = []
    for text in pv[:limit]:
        try:
            mv = Move.from_iccs(text)
        except XiangqiError:
            break
        if not b.is_legal(mv):
            break
        out.append(chinese_move_text(b, mv))
        b.push(mv)
    return out


def _engine_failure(why: str, attempts: int) -> dict[str, Any]:
    """The state's ``engine_error`` for a computer that failed ``attempts`` times (last: ``why``)."""
    en = (f"The computer could not make its move ({why}; {attempts} attempts). "
          "Retry it, make its move yourself, or undo.")
    zh = f"电脑未能走棋（{why}；已试 {attempts} 次）。可以重试、替电脑走一步，或悔棋。"
    return {"detail": why, "detail_en": en, "detail_zh": zh, "attempts": attempts}


class Encoded(dict):  # type: ignore[type-arg]
    """A message for many pages (a room's state or update): a dict like any other message, whose JSON
    text is made once, on the first send, and reused for every other page
    (:meth:`xiangqi.web.clients.Client._drain`).
    Build it when the message is complete; it must not be changed after the first send."""

    __slots__ = ("_text",)

    def text(self) -> str:
        """The JSON text (compact, UTF-8 as is: what Starlette's ``send_json`` sends)."""
        try:
            return self._text
        except AttributeError:
            self._text: str = json.dumps(self, separators=(",", ":"), ensure_ascii=False)
            return self._text
