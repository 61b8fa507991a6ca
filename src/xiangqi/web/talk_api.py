"""The named computer opponents' REST API and their remarks in the game hub
(:mod:`xiangqi.app.opponents.persona`).

Routes (JSON; errors ``{"detail"}`` as the rest of the server: 400 bad input, 422 a malformed body):

- ``GET  /api/talk/opponents`` — ``{"opponents": [...]}``: each opponent's names, description, level
  (with its measured Elo and rank name), style, avatar character and voice
  (:func:`xiangqi.app.opponents.persona.opponent_view`), weakest first.
- ``POST /api/talk/new`` ``{red, black, opponent, coach?, fen?, clock?}`` — a new game as
  ``POST /api/game/new`` against the named ``opponent``: the computer plays its level and style,
  and speaks. Exactly one side must be the computer (400 otherwise).

The game's state carries ``talk`` (:meth:`xiangqi.app.opponents.persona.TalkService.state`): whether remarks
and speech are on (settings ``talk``, ``talk_speech``), the opponent and its remarks.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import Field

from xiangqi.app.opponents.persona import OPPONENTS, TalkService, opponent_view
from xiangqi.app.play.clock import TimeControl
from xiangqi.app.play.session import GameSession
from xiangqi.core.board import STARTING_FEN
from xiangqi.web.models import ClockRequest, PlayerKind, StrictModel, check_position

OpponentKey = Literal[tuple(OPPONENTS)]  # type: ignore[valid-type]


class TalkNewGameRequest(StrictModel):
    """Body of ``POST /api/talk/new``: ``POST /api/game/new``'s fields with ``opponent`` (a key of
    :data:`xiangqi.app.opponents.persona.OPPONENTS`) instead of ``level``, and ``coach`` (coach mode)."""

    red: PlayerKind = "human"
    black: PlayerKind = "engine"
    opponent: OpponentKey
    coach: bool = False
    fen: str | None = Field(default=None, max_length=200)
    clock: ClockRequest | None = None


def create_router(hub: Any) -> APIRouter:
    """The opponents' routes, with a :class:`~xiangqi.app.opponents.persona.TalkService` installed as
    ``hub.talk``."""
    hub.talk = TalkService(hub.store)
    router = APIRouter()

    @router.get("/api/talk/opponents")
    async def opponents() -> dict[str, Any]:
        return {"opponents": [opponent_view(op) for op in OPPONENTS.values()]}

    @router.post("/api/talk/new")
    async def talk_new(req: TalkNewGameRequest) -> dict[str, Any]:
        if sorted((req.red, req.black)) != ["engine", "human"]:
            raise HTTPException(400, "a named opponent plays one side against the player: "
                                     "one of red and black must be engine, the other human")
        tc = TimeControl(**req.clock.model_dump()) if req.clock else None
        if req.fen:
            check_position(req.fen, "start position")
        op = OPPONENTS[req.opponent]
        session = GameSession(red=req.red, black=req.black, level=op.level, fen=req.fen or STARTING_FEN,
                              time_control=tc)
        session.extras["opponent"] = op.key
        if req.coach:
            session.extras["coach"] = True
        return await hub.replace(session)

    del opponents, talk_new
    return router
