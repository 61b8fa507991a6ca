"""The coach's REST API and its service in the game hub: rating, profile, adaptive level, coach mode.

Routes (JSON; errors ``{"detail"}`` as the rest of the server: 400 bad input, 409 a request the
game's state forbids, 422 a malformed body):

- ``GET  /api/coach/profile`` — the player's rating: ``{"rating", "rd", "volatility", "rank",
  "games", "provisional", "history": [...], "recent": [...]}`` (:func:`xiangqi.app.coach.profile`;
  ``recent``: the last 10 rated games, newest first, with ``library_id`` when the game is in the
  library).
- ``POST /api/coach/new`` ``{red, black, level, coach?, fen?, clock?}`` — a new game as
  ``POST /api/game/new`` with two more choices: ``level`` may be ``"adaptive"`` (自适应: settings
  from the player's rating, :func:`xiangqi.app.coach.adaptive_for`) and ``coach`` true turns coach
  mode on (教练模式; the game is unrated).

The game's state carries ``coach`` (:meth:`CoachService.state`): whether the game is rated and
why not, the rating change once it is rated, the help counters, the adaptive level's settings.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import Field

from xiangqi.app import coach
from xiangqi.app.clock import TimeControl
from xiangqi.app.session import ADAPTIVE, GameSession
from xiangqi.app.store import StorageError
from xiangqi.core.board import STARTING_FEN
from xiangqi.web.server import ClockRequest, PlayerKind, StrictModel, _check_position

log = logging.getLogger(__name__)

CoachLevel = Literal["beginner", "intermediate", "advanced", "master", "adaptive"]


class CoachNewGameRequest(StrictModel):
    """Body of ``POST /api/coach/new``: ``POST /api/game/new``'s fields, ``level`` also
    ``adaptive``, and ``coach`` (coach mode)."""

    red: PlayerKind = "human"
    black: PlayerKind = "engine"
    level: CoachLevel = "beginner"
    coach: bool = False
    fen: str | None = Field(default=None, max_length=200)
    clock: ClockRequest | None = None


class CoachService:
    """The coach's part of the game hub (``hub.coach``). The hub calls :meth:`saved` after every
    save (the rating follows the game) and :meth:`state` for ``state()["coach"]``; ``revision``
    goes up whenever that part changes without a move (the hub's version counts it)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self.revision = 0
        self._rating: tuple[str, dict[str, Any] | None] | None = None  # (game id, history row)

    # -- hooks the hub calls ------------------------------------------------------

    def saved(self, session: GameSession) -> None:
        """After a save of ``session``: count a finished rated game, take back an unrated one."""
        try:
            entry = coach.sync_rating(self.hub.store, session)
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
        None (:func:`xiangqi.app.coach.rating_view`), "undos", "coach_takebacks", "hints",
        "adaptive": settings or None}``."""
        if self._rating is None or self._rating[0] != session.id:
            try:
                self._rating = (session.id, self.hub.store.rating_entry(session.id))
            except StorageError:
                self._rating = (session.id, None)
        ex = session.extras
        return {"mode": bool(ex.get("coach")), **coach.rating_status(session),
                "rating": coach.rating_view(self._rating[1]), "undos": int(ex.get("undos", 0)),
                "coach_takebacks": int(ex.get("coach_takebacks", 0)), "hints": int(ex.get("hints", 0)),
                "adaptive": _adaptive_view(ex.get("adaptive")) if session.level == ADAPTIVE else None}

    def moved(self, session: GameSession) -> None:
        """After a move of the player (under the hub's lock)."""


def _adaptive_view(settings: Any) -> dict[str, Any] | None:
    """The adaptive level's stored settings plus the rank name of its Elo (DESIGN.md decision 8)."""
    if not isinstance(settings, dict):
        return None
    elo = settings.get("elo")
    return {**settings, "rank": coach.rank_name(elo) if isinstance(elo, int | float) else None}


def create_router(hub: Any) -> APIRouter:
    """The coach's routes, with a :class:`CoachService` installed as ``hub.coach``."""
    service = CoachService(hub)
    hub.coach = service
    router = APIRouter()

    @router.get("/api/coach/profile")
    async def get_profile() -> dict[str, Any]:
        store = hub.store
        out = coach.profile(store)
        recent = out["history"][-10:][::-1]
        ids = {}
        if recent:
            import sqlalchemy as sa

            from xiangqi.app.store import games

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
            _check_position(req.fen, "start position")
        session = GameSession(red=req.red, black=req.black, level=req.level, fen=req.fen or STARTING_FEN,
                              time_control=tc)
        if req.coach:
            session.extras["coach"] = True
        if req.level == ADAPTIVE:
            session.extras["adaptive"] = coach.adaptive_for(hub.store)
        return await hub.replace(session)

    del get_profile, coach_new
    return router




