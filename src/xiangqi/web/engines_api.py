"""Routes of Settings → engines: add any UCI/UCCI engine of this machine, play it, analyse with it.

- ``GET /api/engines`` → ``{"engines": [EngineSpec.to_dict()], "allowed": bool}`` (``allowed``
  False, the list empty and ``refused`` the reason, for another machine or on a public server).
- ``POST /api/engines/check`` ``{command, args?, protocol?}`` → the handshake's ``{name, author,
  protocol, options}`` (nothing is saved).
- ``POST /api/engines`` ``{command, args?, protocol?, options?, movetime_s?}`` → the added engine.
- ``PATCH /api/engines/{id}`` ``{options?, movetime_s?}`` → the engine; ``DELETE /api/engines/{id}``.
- ``POST /api/engines/game`` ``{engine, red, black, fen?, clock?}`` → the new game's state: the
  engine ``engine`` (an id) plays the side(s) marked ``engine``; its level key is ``engine:<id>``.
- ``POST /api/engines/{id}/analyse`` ``{fen, moves?, time_s?, multipv?}`` → ``{"engine", "lines":
  [{move, score_cp, mate, pv, depth}]}``, scores for the side to move (the analysis board's panel
  with an added engine).

Errors: 404 for an unknown engine, 422 with the reason when an engine cannot be added, changed or
used (no such program, no handshake, a bad option), 403 from another machine or on a public server.
Starting programs is the local user's privilege only: every route but the list declares
:func:`xiangqi.web.security.this_machine_only` (the connection's peer address must be this
machine's loopback; a public server refuses everyone). A LAN peer (``--lan``) gets an empty list,
``allowed`` False and ``refused``, the reason the page shows. Handshakes and searches run in worker
threads, one handshake at a time.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi import Path as PathParam
from pydantic import Field, StringConstraints

from xiangqi.app.opponents.engines import (
    MOVETIME_RANGE_S,
    EngineSetupError,
    ExternalEngines,
    engine_key,
)
from xiangqi.app.play.clock import TimeControl
from xiangqi.app.play.session import GameSession
from xiangqi.core.board import STARTING_FEN, Board
from xiangqi.core.errors import XiangqiError
from xiangqi.web.models import ClockRequest, PlayerKind, StrictModel, check_position
from xiangqi.web.security import program_refusal, this_machine_only

__all__ = ["create_router"]

#: What the acting routes declare: only this machine's own requests run them (web/security.py).
THIS_MACHINE = [Depends(this_machine_only)]

EngineId = Annotated[int, PathParam(ge=1, le=2**31 - 1, description="engine id")]
Arg = Annotated[str, StringConstraints(max_length=1024)]
OptionValue = Annotated[str, StringConstraints(max_length=200)] | int | bool
Options = Annotated[dict[Annotated[str, StringConstraints(max_length=100)], OptionValue],
                    Field(max_length=100)]
#: Seconds an analysis request may think (the page asks again for longer).
ANALYSE_MAX_S = 10.0


class CheckRequest(StrictModel):
    """Body of ``POST /api/engines/check``."""

    command: str = Field(min_length=1, max_length=1024)
    args: list[Arg] = Field(default_factory=list, max_length=32)
    protocol: Literal["auto", "uci", "ucci"] = "auto"


class AddRequest(CheckRequest):
    """Body of ``POST /api/engines``."""

    options: Options = Field(default_factory=dict)
    movetime_s: float = Field(default=1.0, ge=MOVETIME_RANGE_S[0], le=MOVETIME_RANGE_S[1])


class UpdateRequest(StrictModel):
    """Body of ``PATCH /api/engines/{id}``."""

    options: Options | None = None
    movetime_s: float | None = Field(default=None, ge=MOVETIME_RANGE_S[0], le=MOVETIME_RANGE_S[1])


class EngineGameRequest(StrictModel):
    """Body of ``POST /api/engines/game``."""

    engine: int = Field(ge=1, le=2**31 - 1)
    red: PlayerKind = "human"
    black: PlayerKind = "engine"
    fen: str | None = Field(default=None, max_length=200)
    clock: ClockRequest | None = None


class AnalyseRequest(StrictModel):
    """Body of ``POST /api/engines/{id}/analyse``: the position (a FEN and the moves played from it,
    so the engine sees repetitions), seconds, lines."""

    fen: str = Field(default=STARTING_FEN, max_length=200)
    moves: list[Annotated[str, StringConstraints(pattern=r"^[a-i][0-9][a-i][0-9]$")]] = Field(
        default_factory=list, max_length=1000)
    time_s: float = Field(default=1.0, ge=0.05, le=ANALYSE_MAX_S)
    multipv: int = Field(default=1, ge=1, le=5)


def create_router(app: Any, hub: Any, store: Any) -> APIRouter:
    """The engines routes; the list (:class:`ExternalEngines` on ``store``'s database) becomes
    ``app.state.engines`` and the game's computer (``hub.player``) plays its levels ``engine:<id>``."""
    registry = ExternalEngines(store.engine)
    app.state.engines = registry
    hub.player.externals = registry
    reviews = getattr(app.state, "reviews", None)  # review jobs may ask an added engine (review_api.py)
    if reviews is not None:
        reviews.externals = registry
    handshakes = asyncio.Semaphore(1)
    router = APIRouter()

    def setup_error(exc: EngineSetupError) -> HTTPException:
        text = str(exc)
        return HTTPException(404 if text.startswith("there is no engine") else 422, text)

    @router.get("/api/engines")
    async def list_engines(request: Request) -> dict[str, Any]:
        refused = program_refusal(request)
        if refused is not None:  # the list names programs of this machine that the client cannot use
            return {"engines": [], "allowed": False, "refused": refused}
        return {"engines": [e.to_dict() for e in await asyncio.to_thread(registry.list)], "allowed": True}

    @router.post("/api/engines/check", dependencies=THIS_MACHINE)
    async def check_engine(req: CheckRequest) -> dict[str, Any]:
        from xiangqi.app.opponents.engines import probe, resolve_command

        try:
            argv = resolve_command(req.command, req.args)
            async with handshakes:
                info = await asyncio.to_thread(probe, argv, req.protocol)
        except EngineSetupError as exc:
            raise setup_error(exc) from None
        return {**info, "command": argv[0], "args": argv[1:]}

    @router.post("/api/engines", dependencies=THIS_MACHINE)
    async def add_engine(req: AddRequest) -> dict[str, Any]:
        try:
            async with handshakes:
                spec = await asyncio.to_thread(registry.add, req.command, req.args, protocol=req.protocol,
                                               options=req.options, movetime_s=req.movetime_s)
        except EngineSetupError as exc:
            raise setup_error(exc) from None
        return spec.to_dict()

    @router.patch("/api/engines/{engine_id}", dependencies=THIS_MACHINE)
    async def update_engine(engine_id: EngineId, req: UpdateRequest) -> dict[str, Any]:
        try:
            spec = await asyncio.to_thread(registry.update, engine_id, options=req.options,
                                           movetime_s=req.movetime_s)
        except EngineSetupError as exc:
            raise setup_error(exc) from None
        return spec.to_dict()

    @router.delete("/api/engines/{engine_id}", dependencies=THIS_MACHINE)
    async def remove_engine(engine_id: EngineId) -> dict[str, Any]:
        try:
            await asyncio.to_thread(registry.remove, engine_id)
        except EngineSetupError as exc:
            raise setup_error(exc) from None
        return {"removed": engine_id}

    @router.post("/api/engines/game", dependencies=THIS_MACHINE)
    async def engine_game(req: EngineGameRequest) -> dict[str, Any]:
        try:
            spec = await asyncio.to_thread(registry.get, req.engine)
        except EngineSetupError as exc:
            raise setup_error(exc) from None
        if req.fen:
            check_position(req.fen, "start position")
        tc = TimeControl(**req.clock.model_dump()) if req.clock else None
        session = GameSession(red=req.red, black=req.black, level=engine_key(spec.id),
                              fen=req.fen or STARTING_FEN, time_control=tc)
        session.extras["engine_name"] = spec.name
        return await hub.replace(session)

    @router.post("/api/engines/{engine_id}/analyse", dependencies=THIS_MACHINE)
    async def analyse(engine_id: EngineId, req: AnalyseRequest) -> dict[str, Any]:
        try:
            board = Board(req.fen)
            for i, text in enumerate(req.moves):
                try:
                    board.push_iccs(text)
                except XiangqiError as exc:
                    raise HTTPException(400, f"move {i + 1} ({text}): {exc}") from None
        except XiangqiError as exc:
            raise HTTPException(400, f"bad position: {exc}") from None
        if board.is_game_over():
            raise HTTPException(409, "the game is over in this position: there is nothing to analyse")
        from xiangqi.engine.uci.client import EngineError

        try:
            spec = await asyncio.to_thread(registry.get, engine_id)
            lines = await asyncio.to_thread(registry.analyse, spec.key, board, req.time_s, req.multipv)
        except EngineSetupError as exc:
            raise setup_error(exc) from None
        except EngineError as exc:
            raise HTTPException(502, f"{spec.name} failed: {exc}") from None
        return {"engine": spec.to_dict(), "lines": lines}

    del list_engines, check_engine, add_engine, update_engine, remove_engine, engine_game, analyse
    return router
