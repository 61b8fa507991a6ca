"""What the web server and its routers share of their requests: the strict base of every request
body, the time control, the player and level kinds, and the check of a start position.

Below :mod:`xiangqi.web.server` and every ``*_api`` router, which import it: the server includes the
routers, no router imports the server.
"""

from __future__ import annotations

from typing import Literal

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field

from xiangqi.app.play.position import validate_position

__all__ = ["PlayerKind", "LevelKey", "StrictModel", "ClockRequest", "check_position"]

#: Who plays a side of a game.
PlayerKind = Literal["human", "engine"]
#: The built-in engine's level keys (:data:`xiangqi.app.play.session.LEVEL_KEYS`).
LevelKey = Literal["novice", "beginner", "intermediate", "advanced", "master"]


class StrictModel(BaseModel):
    """Base of every request body: a field the model does not know (a misspelt one) is a 422
    naming it, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ClockRequest(StrictModel):
    """A time control (seconds); see :class:`xiangqi.app.play.clock.TimeControl`."""

    kind: Literal["none", "per_move", "fischer", "byoyomi"] = "none"
    base_s: float = Field(default=0, ge=0, le=36000)
    increment_s: float = Field(default=0, ge=0, le=600)
    per_move_s: float = Field(default=0, ge=0, le=36000)
    byoyomi_s: float = Field(default=0, ge=0, le=36000)
    periods: int = Field(default=1, ge=1, le=10)


def check_position(fen: str, what: str) -> None:
    """Raise HTTP 400 naming every problem when ``fen`` is not a position a game can reach
    (:func:`xiangqi.app.play.position.validate_position`); ``what`` names the position in the message
    (e.g. ``"start position"``)."""
    _, problems = validate_position(fen)
    if problems:
        raise HTTPException(400, f"impossible {what}: " + "; ".join(p.en for p in problems))
