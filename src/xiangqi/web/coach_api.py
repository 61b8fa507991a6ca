"""The coach's REST API and its service in the game hub: rating, profile, adaptive level, coach mode.

Routes (JSON; errors ``{"detail"}`` as the rest of the server: 400 bad input, 409 a request the
game's state forbids, 422 a malformed body):

- ``GET  /api/coach/profile`` — the player's rating: ``{"rating", "rd", "volatility", "rank",
  "games", "provisional", "history": [...], "recent": [...]}`` (:func:`xiangqi.app.play.ratings.profile`;
  ``recent``: the last 10 rated games, newest first, with ``library_id`` when the game is in the
  library).
- ``POST /api/coach/new`` ``{red, black, level, coach?, fen?, clock?}`` — a new game as
  ``POST /api/game/new`` with two more choices: ``level`` may be ``"adaptive"`` (自适应: settings
  from the player's rating, :func:`xiangqi.app.play.ratings.adaptive_for`) and ``coach`` true turns coach
  mode on (教练模式; the game is unrated).
- ``POST /api/coach/takeback`` ``{ply}`` — take back the move the coach warned of (ply ``ply``, the
  player's last move) and the computer's reply; counted as ``coach_takebacks``, not as 悔棋. 409 when
  there is no such warning or the game moved on.
- ``POST /api/coach/check`` ``{move}`` — the coach's word on a move *before* it is sent
  (:func:`xiangqi.app.training.coach.advise` on the board now; the answer is the note, ``warn`` true for a
  mistake or blunder): the page asks first in coach mode and, on a warning, lets the player take
  the move back before the computer replies, or play it anyway. The word is kept and becomes the
  move's note when that move is then played (no second search). 409 when the game is over, it is
  not the player's turn or coach mode is off; 400 for an illegal move.
- ``POST /api/coach/threat`` — what the opponent threatens now (:func:`xiangqi.app.training.coach.threat`);
  asking is help taken: the game becomes unrated.

Coach mode: after each of the player's moves the hub calls :meth:`CoachService.moved`, which judges
the move in a thread of its own (:func:`xiangqi.app.training.coach.advise`, depth
:data:`~xiangqi.app.training.coach.COACH_DEPTH`, about 0.1 s; the event loop never waits for it) and puts the
word in the state (``coach.note``; ``coach.checking`` is the ply being judged meanwhile). A word for
a move that is no longer on the board (taken back, a new game) is dropped.

The game's state carries ``coach`` (:meth:`CoachService.state`): whether the game is rated and
why not, the rating change once it is rated, the help counters, the adaptive level's settings.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import Field

from xiangqi.app.play import ratings
from xiangqi.app.play.clock import TimeControl
from xiangqi.app.play.session import ADAPTIVE, GameSession
from xiangqi.app.play.store import StorageError
from xiangqi.app.training import coach
from xiangqi.core.board import STARTING_FEN
from xiangqi.web.models import ClockRequest, PlayerKind, StrictModel, check_position

log = logging.getLogger(__name__)

CoachLevel = Literal["novice", "beginner", "intermediate", "advanced", "master", "adaptive"]


class CoachNewGameRequest(StrictModel):
    """Body of ``POST /api/coach/new``: ``POST /api/game/new``'s fields, ``level`` also
    ``adaptive``, and ``coach`` (coach mode)."""

    red: PlayerKind = "human"
    black: PlayerKind = "engine"
    level: CoachLevel = "beginner"
    coach: bool = False
    fen: str | None = Field(default=None, max_length=200)
    clock: ClockRequest | None = None


class CheckRequest(StrictModel):
    """Body of ``POST /api/coach/check``: the move (ICCS) the player is about to play."""

    move: str = Field(min_length=4, max_length=5)


class TakebackRequest(StrictModel):
    """Body of ``POST /api/coach/takeback``: the ply (1-based) of the move the coach warned of."""

    ply: int = Field(ge=1, le=10000)


#: Seconds the coach's judgement or a threat display may take before it is given up.
COACH_TIMEOUT_S = 60.0


class CoachService:
    """The coach's part of the game hub (``hub.coach``). The hub calls :meth:`saved` after every
    save (the rating follows the game) and :meth:`state` for ``state()["coach"]``; ``revision``
    goes up whenever that part changes without a move (the hub's version counts it)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self.revision = 0
        self._rating: tuple[str, dict[str, Any] | None] | None = None  # (game id, history row)
        #: The coach's last word: ``(game id, ply, note)``; the ply being judged: ``(game id, ply)``.
        self.note: tuple[str, int, dict[str, Any]] | None = None
        self.checking: tuple[str, int] | None = None
        #: The word given before a move was sent (``POST /api/coach/check``): ``(game id, ply, note)``.
        self.prechecked: tuple[str, int, dict[str, Any]] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- hooks the hub calls ------------------------------------------------------

    def saved(self, session: GameSession) -> None:
        """After a save of ``session``: count a finished rated game, take back an unrated one."""
        try:
            entry = ratings.sync_rating(self.hub.store, session)
        except StorageError as exc:  # the next save tries again
            log.warning("the rating could not be updated: %s", exc)
            return
        except Exception:  # noqa: BLE001 - the game was saved; the rating must not undo that
            log.exception("the rating could not be updated")
            return
        old = self._rating
        self._rating = (session.id, entry)
        if old is None or old[0] != session.id or (old[1] or {}).get("id") != (entry or {}).get("id"):
            self.revision += 1

    def state(self, session: GameSession) -> dict[str, Any]:
        """``{"mode": bool (coach mode), "rated", "reason", "why_zh", "why_en", "rating": change or
        None (:func:`xiangqi.app.play.ratings.rating_view`), "undos", "coach_takebacks", "hints",
        "adaptive": settings or None}``."""
        if self._rating is None or self._rating[0] != session.id:
            try:
                self._rating = (session.id, self.hub.store.rating_entry(session.id))
            except StorageError:
                self._rating = (session.id, None)
        ex = session.extras
        note = self._note(session)
        checking = self.checking[1] if self.checking and self.checking[0] == session.id else None
        return {"mode": bool(ex.get("coach")), **ratings.rating_status(session), "note": note,
                "checking": checking,
                "rating": ratings.rating_view(self._rating[1]), "undos": int(ex.get("undos", 0)),
                "coach_takebacks": int(ex.get("coach_takebacks", 0)), "hints": int(ex.get("hints", 0)),
                "adaptive": _adaptive_view(ex.get("adaptive")) if session.level == ADAPTIVE else None}

    def _note(self, session: GameSession) -> dict[str, Any] | None:
        """The coach's last word while its move is still the last move of the player on the board."""
        if self.note is None or self.note[0] != session.id:
            return None
        game_id, ply, note = self.note
        n = len(session.moves)
        if n < ply or session.moves[ply - 1].iccs != note["move"] or n > ply + 1:
            return None
        return {**note, "ply": ply}

    def moved(self, session: GameSession) -> None:
        """After a move on the board (under the hub's lock): in coach mode, judge a move of the
        player in a thread of its own; the word arrives in a later state."""
        color = ratings.human_color(session)
        if not session.extras.get("coach") or color is None or not session.moves:
            return
        board = session.board.copy()
        last = board.pop()
        if board.turn != color:
            return
        ply = len(session.moves)
        pre = self.prechecked
        if pre is not None and pre[:2] == (session.id, ply) and pre[2]["move"] == last.iccs():
            self.note = pre  # judged before it was sent (check): the same word, no second search
            self.prechecked = None
            self.revision += 1
            return
        self.checking = (session.id, ply)
        self.revision += 1
        task = asyncio.get_running_loop().create_task(self._judge(session.id, ply, board, last.iccs()))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _judge(self, game_id: str, ply: int, board: Any, move: str) -> None:
        from xiangqi.app.play.hub import _in_thread

        try:
            note = await asyncio.wait_for(_in_thread(coach.advise, board, move), COACH_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - no word from the coach is better than a broken game
            log.exception("the coach could not judge move %s", move)
            note = None
        if self.checking == (game_id, ply):
            self.checking = None
        if note is not None and self.hub.session.id == game_id:
            self.note = (game_id, ply, note)
        self.revision += 1
        await self.hub.broadcast()

    async def takeback(self, ply: int) -> dict[str, Any]:
        """Take back the warned move at ``ply`` and the reply to it (``POST /api/coach/takeback``)."""
        s = self.hub.session
        note = self._note(s)
        if note is None or note["ply"] != ply or not note.get("warn"):
            raise HTTPException(409, f"no coach warning for ply {ply} to take back (the game moved on)")
        self.note = None
        self.revision += 1
        return await self.hub.undo(coach=True, to_ply=ply - 1)

    async def check(self, move: str) -> dict[str, Any]:
        """The coach's word on ``move`` (ICCS) in the position now, before it is played
        (``POST /api/coach/check``): the :func:`xiangqi.app.training.coach.advise` note plus ``ply`` (the ply
        the move would be). Raises SessionError (409) outside coach mode, after the game, or when it
        is not the player's turn (409); a malformed or illegal move is a 400."""
        from xiangqi.app.play.hub import _in_thread
        from xiangqi.app.play.session import GameOverError, NotYourTurnError
        from xiangqi.core.board import Move

        hub = self.hub
        async with hub._lock:
            s = hub.session
            if not s.extras.get("coach") or ratings.human_color(s) is None:
                raise HTTPException(409, "coach mode is off in this game")
            if s.is_over:
                raise GameOverError("the game is over")
            if s.engine_to_move() or s.board.turn != ratings.human_color(s):
                raise NotYourTurnError("it is the computer's turn")
            board = s.board.copy()
            game_id, ply = s.id, len(s.moves) + 1
        board.copy().push(Move.from_iccs(move))  # a bad or illegal move: its error, a 400 naming it
        note = await asyncio.wait_for(_in_thread(coach.advise, board, move), COACH_TIMEOUT_S)
        self.prechecked = (game_id, ply, note)
        return {**note, "ply": ply}

    async def threat(self) -> dict[str, Any]:
        """The opponent's threat in the current position (``POST /api/coach/threat``)."""
        from xiangqi.app.play.hub import _in_thread
        from xiangqi.app.play.session import NotYourTurnError, SessionError

        hub = self.hub
        async with hub._lock:
            s = hub.session
            if s.is_over:
                raise SessionError("the game is over: no threat to show")
            if ratings.human_color(s) is not None and s.engine_to_move():
                raise NotYourTurnError("it is the computer's turn")
            board = s.board.copy()
        out = await asyncio.wait_for(_in_thread(coach.threat, board), COACH_TIMEOUT_S)
        await hub.note_help(s, "threats")  # help taken: the game is unrated from now on
        return {**out, "fen": board.fen()}


def _adaptive_view(settings: Any) -> dict[str, Any] | None:
    """The adaptive level's stored settings plus the rank name of its Elo (DESIGN.md decision 8)."""
    if not isinstance(settings, dict):
        return None
    elo = settings.get("elo")
    return {**settings, "rank": ratings.rank_name(elo) if isinstance(elo, int | float) else None}


def create_router(hub: Any) -> APIRouter:
    """The coach's routes, with a :class:`CoachService` installed as ``hub.coach``."""
    service = CoachService(hub)
    hub.coach = service
    router = APIRouter()

    @router.get("/api/coach/profile")
    async def get_profile() -> dict[str, Any]:
        store = hub.store
        out = ratings.profile(store)
        recent = out["history"][-10:][::-1]
        ids = {}
        if recent:
            import sqlalchemy as sa

            from xiangqi.app.play.store import games

            with store.engine.connect() as conn:
                wanted = [r["game_id"] for r in recent]
                q = sa.select(games.c.id, games.c.game_id).where(games.c.game_id.in_(wanted))
                ids = {row.game_id: row.id for row in conn.execute(q)}
        out["recent"] = [{**r, "library_id": ids.get(r["game_id"])} for r in recent]
        return out

    @router.post("/api/coach/new")
    async def coach_new(req: CoachNewGameRequest) -> dict[str, Any]:
        tc = TimeControl(**req.clock.model_dump()) if req.clock else None
        if req.fen:
            check_position(req.fen, "start position")
        session = GameSession(red=req.red, black=req.black, level=req.level, fen=req.fen or STARTING_FEN,
                              time_control=tc)
        if req.coach:
            session.extras["coach"] = True
        if req.level == ADAPTIVE:
            session.extras["adaptive"] = ratings.adaptive_for(hub.store)
        return await hub.replace(session)

    @router.post("/api/coach/takeback")
    async def coach_takeback(req: TakebackRequest) -> dict[str, Any]:
        return await service.takeback(req.ply)

    @router.post("/api/coach/threat")
    async def coach_threat() -> dict[str, Any]:
        return await service.threat()

    @router.post("/api/coach/check")
    async def coach_check(req: CheckRequest) -> dict[str, Any]:
        return await service.check(req.move)

    del get_profile, coach_new, coach_takeback, coach_threat, coach_check
    return router




