"""The 揭棋 game's routes (:mod:`xiangqi.app.play.jieqi_game`): one 揭棋 game per server, beside the
ordinary game of the hub, saved after every change (the store's ``jieqi`` slot, the library when
it ends).

* ``GET /api/jieqi`` — ``{"game": state | null}`` (:meth:`JieqiGame.state`, as the human player sees it)
* ``POST /api/jieqi/new`` — ``{red, black, level, capture_reveal}``: a new deal
* ``POST /api/jieqi/move`` — ``{move: "h2e2", game_id?}``: the human's move (409 when it is not a
  human's turn, 400 for an illegal move)
* ``POST /api/jieqi/engine`` — the computer moves when it is its turn (the search runs in a worker
  thread, a few seconds at most); returns the state
* ``POST /api/jieqi/resign`` — the human (the side to move when both are human) resigns

Library rows of 揭棋 games are replayed by :func:`library_replay` and exported by
:func:`library_pgn` (called from the library routes of ``server.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, FastAPI, HTTPException, Response
from pydantic import BaseModel, ConfigDict, Field

from xiangqi.app.play import jieqi_game
from xiangqi.app.play.jieqi_game import JieqiGame
from xiangqi.core.board import BLACK, RED
from xiangqi.core.jieqi import JieqiBoard, JieqiError

__all__ = ["create_router", "library_replay", "library_pgn", "is_jieqi_record"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class NewJieqi(_Strict):
    """Body of ``POST /api/jieqi/new``."""

    red: Literal["human", "engine"] = "human"
    black: Literal["human", "engine"] = "engine"
    level: Literal["1", "2", "3"] = "2"
    capture_reveal: Literal["capturer", "both"] = "capturer"


class JieqiMoveBody(_Strict):
    """Body of ``POST /api/jieqi/move``: ``move`` in ICCS; ``game_id`` guards against a stale page."""

    move: str = Field(min_length=4, max_length=4, pattern=r"^[a-i][0-9][a-i][0-9]$")
    game_id: str | None = Field(default=None, max_length=64)


def viewer_of(game: JieqiGame) -> bool:
    """Whose eyes the page looks through: the human side (the side to move when both are human,
    Red when neither is)."""
    if game.red == "human" and game.black == "human":
        return game.board.turn
    return BLACK if game.black == "human" and game.red != "human" else RED


def is_jieqi_record(record: Any) -> bool:
    """Whether a library row's record (dict) is a 揭棋 game's."""
    return isinstance(record, dict) and record.get("variant") == "jieqi"


def create_router(app: FastAPI, store: Any, language: Any = lambda: "zh") -> APIRouter:
    """The routes above; ``language()`` gives the interface language for the record's names."""
    router = APIRouter()
    holder: dict[str, Any] = {"game": None, "loaded": False}
    lock = asyncio.Lock()
    app.state.jieqi = holder

    def current() -> JieqiGame | None:
        if not holder["loaded"]:
            holder["game"] = jieqi_game.load_current(store)
            holder["loaded"] = True
        return holder["game"]

    def state(game: JieqiGame | None) -> dict[str, Any]:
        return {"game": None if game is None else game.state(viewer_of(game))}

    def save(game: JieqiGame) -> None:
        jieqi_game.save(store, game, language())

    @router.get("/api/jieqi")
    async def get_jieqi() -> dict[str, Any]:
        return state(current())

    @router.post("/api/jieqi/new")
    async def new_jieqi(req: NewJieqi) -> dict[str, Any]:
        async with lock:
            game = JieqiGame(red=req.red, black=req.black, level=req.level, capture_reveal=req.capture_reveal)
            await asyncio.to_thread(save, game)
            holder["game"], holder["loaded"] = game, True
            return state(game)

    @router.post("/api/jieqi/move")
    async def move_jieqi(req: JieqiMoveBody) -> dict[str, Any]:
        async with lock:
            game = current()
            if game is None:
                raise HTTPException(404, "no 揭棋 game: start one first")
            if req.game_id is not None and req.game_id != game.id:
                raise HTTPException(409, "that 揭棋 game is no longer the current one")
            if game.is_over:
                raise HTTPException(409, "the game is over")
            if game.player(game.board.turn) != "human":
                raise HTTPException(409, "it is the computer's turn")
            try:
                game.play(req.move)
            except JieqiError as exc:
                raise HTTPException(400, str(exc)) from None
            try:
                await asyncio.to_thread(save, game)
            except Exception:
                game.board.pop()  # not saved: not made
                raise
            return state(game)

    @router.post("/api/jieqi/engine")
    async def engine_jieqi() -> dict[str, Any]:
        async with lock:
            game = current()
            if game is None:
                raise HTTPException(404, "no 揭棋 game: start one first")
            if not game.is_over and game.player(game.board.turn) == "engine":
                work = JieqiGame.from_record(game.to_record())  # the search never touches the shown game
                mv = await asyncio.to_thread(work.engine_move)
                if mv is not None:
                    game.play(mv.iccs)
                    try:
                        await asyncio.to_thread(save, game)
                    except Exception:
                        game.board.pop()
                        raise
            return state(game)

    @router.post("/api/jieqi/resign")
    async def resign_jieqi() -> dict[str, Any]:
        async with lock:
            game = current()
            if game is None:
                raise HTTPException(404, "no 揭棋 game: start one first")
            try:
                game.resign(viewer_of(game))
            except JieqiError as exc:
                raise HTTPException(409, str(exc)) from None
            try:
                await asyncio.to_thread(save, game)
            except Exception:
                game.resigned = None
                raise
            return state(game)

    return router


def library_replay(row_id: int, g: dict[str, Any]) -> dict[str, Any]:
    """The replay of a 揭棋 library row (the shape of ``GET /api/library/{id}/replay``): the FEN of
    every position (hidden pieces ``X``/``x``, the full record: a finished game shows every reveal
    and capture), the moves with their Chinese names."""
    game = JieqiGame.from_record(g["record"])
    b = JieqiBoard(game.board.start_fen)
    fens = [b.fen()]
    for m in game.board.moves:
        b.push_unchecked(m)
        fens.append(b.fen())
    out = game.outcome
    return {
        "id": row_id,
        "title": g["title"],
        "notes": g["notes"],
        "fens": fens,
        "variant": "jieqi",
        "red": g["red"],
        "black": g["black"],
        "level": g["level"],
        "moves": game.labels(None),
        "opening": None,
        "result": None
        if out is None
        else {"result": out.result(), "reason_zh": out.reason_zh, "reason_en": out.reason_en},
    }


def library_pgn(row_id: int, g: dict[str, Any], language: str) -> Response:
    """A 揭棋 library row as a PGN download (:meth:`JieqiGame.to_pgn`)."""
    text = JieqiGame.from_record(g["record"]).to_pgn(language)
    return Response(
        text,
        media_type="application/x-chess-pgn; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="xiangqi-library-{row_id}.pgn"'},
    )
