"""GameHub: the one game the local server hosts, its WebSocket clients and its computer player.

Data flow of one move (DESIGN.md): message → :meth:`GameHub.move` →
``GameSession.play`` (the core Board checks legality, the referee rules) →
``Store.save_game`` (one transaction) → broadcast of the new state → if the
computer is to move, ``EnginePlayer.choose`` runs in a worker thread and its
move takes the same path. All hub methods run on the server's event loop.

Every change goes through one save step, :meth:`GameHub._saving`: a change that cannot be
saved (disk full, read-only database) is undone in memory and never shown as made; the
computer's unsaved move is retried every :attr:`GameHub.storage_retry_s` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import WebSocket

from xiangqi.app.clock import TimeControl
from xiangqi.app.players import EnginePlayer, accepts_draw, material_balance
from xiangqi.app.session import GameSession, NotYourTurnError, SessionError
from xiangqi.app.store import StorageError, Store
from xiangqi.core.board import Board, Move

log = logging.getLogger(__name__)

#: (board copy, level) -> Move; the default is the built-in engine.
MoveProvider = Callable[[Board, str], Move]
#: Seconds a hint or a draw-offer judgement may take (including a first kernel compile) before the
#: request gets an error instead of waiting for ever.
ENGINE_ANSWER_TIMEOUT_S = 120.0


class EngineTimeoutError(SessionError):
    """The engine did not answer a hint or draw-offer request in time."""


class GameHub:
    """Holds the current :class:`GameSession`, saves it after every change and pushes state to clients.

    ``move_provider`` chooses the computer's moves (default: :class:`EnginePlayer`);
    tests pass a fast deterministic one. ``engine_delay_s`` pauses before each
    computer move when the computer plays both sides, so a person can follow.
    """

    def __init__(self, store: Store, player: EnginePlayer | None = None,
                 move_provider: MoveProvider | None = None, engine_delay_s: float = 0.3) -> None:
        self.store = store
        self.player = player or EnginePlayer()
        self.move_provider: MoveProvider = move_provider or self.player.choose
        self.engine_delay_s = engine_delay_s
        self.session: GameSession = store.load_current() or GameSession()
        self.clients: set[WebSocket] = set()
        self.thinking = False
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

    # -- state -----------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The session's state plus ``thinking`` (the computer is searching), ``engine_warming``
        (that search waits for the engine's first compile: the page says so), ``storage_error``
        (``{"kind": "full"|"read_only"|"io"…, "detail"}`` while changes cannot be saved, else None)
        and ``storage_notices`` (:attr:`Store.notices`: a damaged file or game kept aside at start-up)."""
        st = self.session.state()
        st["thinking"] = self.thinking
        st["engine_warming"] = (self.thinking and not self._custom_provider
                                and self.player.waits_for_warmup(self.session.level))
        st["storage_error"] = self.storage_error
        st["storage_notices"] = list(self.store.notices)
        return st

    async def broadcast(self, extra: dict[str, Any] | None = None) -> None:
        """Send ``{"type": "state", "state": ...}`` (plus ``extra`` keys) to every client."""
        msg = {"type": "state", "state": self.state()}
        if extra:
            msg.update(extra)
        dead = []
        for ws in list(self.clients):
            try:
                await ws.send_json(msg)
            except Exception:  # a closed socket: forget it
                dead.append(ws)
        for ws in dead:
            self.clients.discard(ws)

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
        for ws in list(self.clients):
            with contextlib.suppress(Exception):
                await ws.send_json({"type": "replaced", "id": session.id, "old": old.id})
        self.kick_engine()
        return self.state()

    async def move(self, iccs: str) -> dict[str, Any]:
        """A human move (ICCS text). Raises the core's errors for bad or illegal moves."""
        async with self._lock:
            if self.session.engine_to_move():
                raise NotYourTurnError("it is the computer's turn; wait for its move")
            with self._saving():
                self.session.play(iccs)
        await self.broadcast()
        self.kick_engine()
        return self.state()

    async def undo(self) -> dict[str, Any]:
        """Take back the last full move (悔棋); a running search is abandoned."""
        async with self._lock:
            self.player.stop()
            with self._saving():
                self.session.undo()
            self.thinking = False
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
        await self.broadcast()
        return self.state()

    async def offer_draw(self) -> dict[str, Any]:
        """The human offers a draw (提和). Against the computer it decides from a short search and
        the material (:func:`xiangqi.app.players.accepts_draw`); between humans the draw is agreed.
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
        board = s.board.copy()
        try:
            score, mate = await asyncio.wait_for(asyncio.to_thread(self.player.evaluate, board),
                                                 ENGINE_ANSWER_TIMEOUT_S)
        except TimeoutError:
            raise EngineTimeoutError(
                f"the engine did not judge the draw offer within {ENGINE_ANSWER_TIMEOUT_S:.0f} s") from None
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
                    self.player.stop()
                    with self._saving():
                        s.agree_draw()
                    self.thinking = False
        await self.broadcast({"draw_offer": {"accepted": accepted}})
        return {"accepted": accepted, "state": self.state()}

    async def hint(self) -> dict[str, Any]:
        """The engine's best move for the side to move (at least the game's level; 1 s search).

        Returns ``{"move", "score_cp", "mate", "pv", "fen", "chinese", "wxf"}``: ``move`` in ICCS,
        ``fen`` the position it is for, ``chinese``/``wxf`` the move's text (车一平二 / R1.2).
        """
        s = self.session
        if s.is_over:
            raise SessionError("the game is over: no hint")
        if s.engine_to_move():
            raise NotYourTurnError("it is the computer's turn")
        board = s.board.copy()
        try:
            hint = await asyncio.wait_for(asyncio.to_thread(self.player.hint, board, s.level),
                                          ENGINE_ANSWER_TIMEOUT_S)
        except TimeoutError:
            raise EngineTimeoutError(
                f"the engine gave no hint within {ENGINE_ANSWER_TIMEOUT_S:.0f} s") from None
        mv = Move.from_iccs(hint["move"])
        from xiangqi.app.session import chinese_move_text
        from xiangqi.core.notation import move_to_wxf

        return {**hint, "fen": board.fen(), "chinese": chinese_move_text(board, mv),
                "wxf": move_to_wxf(board, mv)}

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
        import time

        while True:
            deadline = s.clock.deadline()
            if deadline is None:
                return
            wait = max(0.0, deadline - time.monotonic()) + 0.01
            await asyncio.sleep(wait + (self.storage_retry_s if self.storage_error else 0.0))
            async with self._lock:
                if self.session is not s or s.version != version or s.is_over:
                    return
                if s.clock.flagged() is None:
                    continue
                self._clock_task = None  # this watch ends here; the save step arms the next one
                with contextlib.suppress(StorageError):  # undone; the restored game's watch retries
                    with self._saving():
                        s.check_time()
                    self.player.stop()
                    self.thinking = False
            await self.broadcast()
            return

    # -- the computer's moves --------------------------------------------

    def kick_engine(self) -> None:
        """Start the computer's move task if it is to move and none is running."""
        if self._engine_task is not None and not self._engine_task.done():
            return
        if not self.session.engine_to_move():
            return
        self._engine_task = asyncio.get_running_loop().create_task(self._engine_loop())

    async def _engine_loop(self) -> None:
        while self.session.engine_to_move():
            s = self.session
            version = s.version
            both = "human" not in s.players.values()
            if both and self.engine_delay_s:
                await asyncio.sleep(self.engine_delay_s)
                if self.session is not s or s.version != version:
                    continue
            self.thinking = True
            await self.broadcast()
            unsaved, self._unsaved_move = self._unsaved_move, None
            try:
                if unsaved is not None and unsaved[0] == (s.id, version):
                    mv = unsaved[1]  # chosen before but not saved (disk full): play it now
                else:
                    mv = await asyncio.to_thread(self._choose, s)
            except Exception:
                log.exception("the computer player failed")
                self.thinking = False
                await self.broadcast({"error": "the computer player failed; see the server log"})
                return
            async with self._lock:
                if self.session is not s or s.version != version or not s.engine_to_move():
                    self.thinking = False
                    continue  # the game changed meanwhile (undo, new game): think again if needed
                unsaved_error = None
                try:
                    with self._saving():
                        s.play(mv)
                except StorageError as exc:
                    self.thinking = False
                    self._unsaved_move = ((s.id, version), mv)
                    unsaved_error = str(exc)
                except Exception:
                    log.exception("the computer chose a move the board refused: %s", mv)
                    self.thinking = False
                    await self.broadcast({"error": f"the computer chose an illegal move {mv}"})
                    return
                self.thinking = False
            if unsaved_error is not None:  # not played: tell the pages (once), retry when space is back
                if unsaved is None:
                    await self.broadcast({"error": unsaved_error})
                await asyncio.sleep(self.storage_retry_s)
                continue
            await self.broadcast()
        if self.thinking:
            self.thinking = False
            await self.broadcast()

    def _choose(self, s: GameSession) -> Move:
        """The computer's move (runs in a worker thread); the game clock caps its thinking time."""
        board = s.board.copy()
        if self._custom_provider:
            return self.move_provider(board, s.level)
        return self.player.choose(board, s.level, s.clock.think_budget_s(board.turn))

    async def wait_idle(self) -> None:
        """Wait until no computer move is being searched (used by tests and shutdown)."""
        while self._engine_task is not None and not self._engine_task.done():
            await asyncio.sleep(0.01)

    async def shutdown(self) -> None:
        """Stop a running search and wait for its task."""
        self.player.stop()
        if self._clock_task is not None:
            self._clock_task.cancel()
        t = self._engine_task
        if t is not None and not t.done():
            t.cancel()
            with contextlib.suppress(BaseException):
                await t
