"""Routes of engine matches in the page (app/opponents/tournament.py): a round-robin of built-in levels and
added engines, with its live cross table; every game goes to the library.

- ``POST /api/tournament`` ``{players: [key…], games_per_pair: 1..50, movetime_s: 0.05..10, openings:
  standard|random}`` → the
  round-robin's state (``Tournament.to_dict()``); a key is a level (``beginner`` … ``master``) or an
  added engine (``engine:<id>``). 409 when one is running, 422 for bad players.
- ``GET /api/tournament`` → the state of the current (or last) round-robin, or ``{"status": "none"}``.
- ``DELETE /api/tournament`` → stops it after the game being played; its state.

Only this machine's own requests reach them (they start engine programs and use the machine's
cores): the router declares :func:`xiangqi.web.security.this_machine_only`, so another machine
(a LAN peer) and everyone on a public server get 403 with the reason. The games are played in a
worker thread; requests only read its state.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException
from pydantic import Field, StringConstraints

from xiangqi.app.opponents.engines import EngineSetupError, is_engine_key
from xiangqi.app.opponents.tournament import (
    MAX_GAMES_PER_PAIR,
    MAX_PLAYERS,
    TournamentError,
    TournamentManager,
)
from xiangqi.web.models import StrictModel
from xiangqi.web.security import this_machine_only

__all__ = ["create_router"]

PlayerKey = Annotated[str, StringConstraints(pattern=r"^(?:[a-z]{1,20}|engine:[1-9][0-9]{0,8})$")]


class TournamentRequest(StrictModel):
    """Body of ``POST /api/tournament``."""

    players: list[PlayerKey] = Field(min_length=2, max_length=MAX_PLAYERS)
    games_per_pair: int = Field(default=2, ge=1, le=MAX_GAMES_PER_PAIR)
    movetime_s: float = Field(default=0.5, ge=0.05, le=10.0)
    #: ``standard``: the match tool's balanced openings; ``random``: 随机开局, a shuffle of rooks,
    #: horses and cannons per pair of games (colours swapped), as ``xiangqi match --variant random``
    openings: Literal["standard", "random"] = "standard"


def game_session(g: Any, event: str, language: str) -> Any:
    """A finished match game (:class:`xiangqi.match.runner.GameResult`) as a
    :class:`~xiangqi.app.play.session.GameSession` the library keeps: both sides ``engine``, the
    players' names, event and round as PGN tags, the moves replayed, and an adjudicated result
    (a crash, an illegal move, the ply cap) declared with the match's reason."""
    from xiangqi.app.play.session import GameSession
    from xiangqi.core.board import Termination
    from xiangqi.core.outcome import draw, win

    start = g.board.copy()
    moves = []
    while start.move_stack:
        moves.append(start.pop())
    moves.reverse()
    session = GameSession(red="engine", black="engine", level="master", fen=start.fen(),
                          headers={"Red": g.red, "Black": g.black, "Event": event, "Round": str(g.round),
                                   "Opening": g.opening})
    for mv in moves:
        session.play(mv, clocked=False)
    if not session.is_over:
        why = f"比赛裁定：{g.reason}", f"adjudicated: {g.reason}"
        if g.result == "1/2-1/2":
            session.declare(draw(Termination.AGREEMENT, *why))
        else:
            session.declare(win(Termination.RESIGNATION, g.result == "1-0", *why))
    return session


def create_router(app: Any, hub: Any, store: Any) -> APIRouter:
    """The round-robin routes; the :class:`TournamentManager` becomes ``app.state.tournaments``."""

    def save(g: Any, event: str) -> None:
        language = hub.language()
        session = game_session(g, event, language)
        store.save_finished(session, session.to_pgn("chinese", language), language)

    manager = TournamentManager(save=save)
    app.state.tournaments = manager
    router = APIRouter(dependencies=[Depends(this_machine_only)])  # every route: this machine only

    def players_of(keys: list[str]) -> list[tuple[str, Any]]:
        from xiangqi.app.opponents.players import levels
        from xiangqi.match.runner import PlayerSpec

        named = {lv.key: lv for lv in levels()}
        en = hub.language() == "en"
        out = []
        for key in keys:
            if is_engine_key(key):
                registry = getattr(app.state, "engines", None)
                if registry is None:
                    raise HTTPException(422, f"{key}: there are no added engines on this server")
                try:
                    spec = registry.spec(key)
                except EngineSetupError as exc:
                    raise HTTPException(422, str(exc)) from None
                out.append((key, PlayerSpec(spec.name, list(spec.argv), spec.protocol, dict(spec.options))))
            elif key in named:
                lv = named[key]
                ps = PlayerSpec.parse(f"builtin:{key}", hash_mb=16)
                out.append((key, PlayerSpec(lv.name_en if en else lv.name_zh, ps.command, ps.protocol,
                                            ps.options)))
            else:
                raise HTTPException(422, f"{key!r} is neither a level ({', '.join(named)}) nor an added "
                                         "engine (engine:<id>)")
        return out

    @router.post("/api/tournament")
    async def start(req: TournamentRequest) -> dict[str, Any]:
        from xiangqi.match.runner import TimeControl

        players = await asyncio.to_thread(players_of, req.players)
        openings = None
        if req.openings == "random":  # 随机开局: one shuffle per pair of games
            from xiangqi.match.runner import random_openings

            openings = random_openings((req.games_per_pair + 1) // 2)
        try:
            t = manager.start(players, req.games_per_pair, TimeControl(movetime=req.movetime_s),
                              openings=openings)
        except TournamentError as exc:
            raise HTTPException(409 if "running" in str(exc) else 422, str(exc)) from None
        return t.to_dict()

    @router.get("/api/tournament")
    async def state() -> dict[str, Any]:
        t = manager.current
        return {"status": "none"} if t is None else await asyncio.to_thread(t.to_dict)

    @router.delete("/api/tournament")
    async def stop() -> dict[str, Any]:
        t = manager.cancel()
        return {"status": "none"} if t is None else await asyncio.to_thread(t.to_dict)

    del start, state, stop
    return router
