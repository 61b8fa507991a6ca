"""The analysis board's routes: positions and moves of the analysis tree, saved variations, and the
engine panel's WebSocket.

REST (JSON; errors ``{"detail": ...}``: 400 for a bad position, move or tree, 404 for an unknown
library game, 422 for a malformed body):

- ``POST /api/analysis/position`` ``{fen}`` -> ``{fen, turn, legal: {from: [ICCS]}, check: square|null,
  over: {result, reason_zh, reason_en}|null}``: what the page needs to let the player move there.
- ``POST /api/analysis/play`` ``{fen, move}`` -> the new tree node ``{move, fen, text: {chinese, wxf,
  iccs}, check}`` (the move must be legal in ``fen``); ``POST /api/analysis/line`` ``{fen, moves}`` ->
  ``{nodes: [...]}``, one such node per move of the line (a review's better line shown as a branch).
- ``GET /api/analysis/tree/current`` and ``GET /api/analysis/tree/library/{row_id}`` -> the game's
  tree with the player's saved variations (:func:`xiangqi.app.library.records.record_view` shape, plus
  ``source``, ``game_id``, ``variations``).
- ``PUT`` the same paths with ``{start_fen, nodes: [{parent, move, comment}]}`` -> ``{saved: true,
  variations, nodes}``: stores the tree (PGN with variations, :mod:`xiangqi.app.library.trees`); its main
  line must be the game's moves (the game as played stays the main line).
- ``POST /api/analysis/export`` ``{start_fen, nodes, headers?, fmt: pgn|xqf, notation}`` -> the tree
  as a PGN (or XQF) download: an opened record with the player's variations.

WebSocket ``/ws/analysis?token=…`` (the engine panel; one analysis per socket, at most
:data:`MAX_ANALYSES` sockets analysing at once per server). The page sends ``{"type": "start",
"fen", "moves"?: [ICCS], "multipv": 1..3, "engine"?: "engine:<id>"}`` (replaces what is searched;
``engine``: an added engine of Settings → engines analyses instead of the built-in one) and
``{"type": "stop"}``;
the server sends ``{"type": "started", "id"}``, ``{"type": "info", ...}`` (at most every
:data:`UPDATE_INTERVAL_S`, see :meth:`xiangqi.app.training.analysis.LiveAnalysis.take_update`),
``{"type": "paused"}`` / ``{"type": "resumed"}`` while the game's computer searches (it has
priority: :mod:`xiangqi.app.tasks.background`), ``{"type": "stopped", "reason"}`` (``time``, ``error`` with
``detail``, or the answer to a stop: ``stopped``, or ``idle`` when nothing was running: a stop
before any start, a second stop), and ``{"type": "error", "detail"}`` for a refused message (the
socket stays open). Every message of the page gets an answer: ``started``, ``stopped`` or ``error``.
Closing the socket stops the search.

Why a socket of its own and not messages on the game's socket: the game socket belongs to one game
id and is closed when the game is replaced, while an analysis follows the position the page shows
(a library game, an opened record); and its stream of updates does not queue behind game states in
the game socket's bounded send queue (:mod:`xiangqi.web.clients`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, WebSocket
from fastapi import Path as PathParam
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from starlette.websockets import WebSocketDisconnect

from xiangqi.app.library.trees import (
    MAX_NODES,
    TreeError,
    TreeStore,
    count_variations,
    game_from_nodes,
    merge_main_line,
)
from xiangqi.app.training.analysis import MAX_MULTIPV, LiveAnalysis
from xiangqi.core.board import Board, Move, square_name
from xiangqi.core.errors import XiangqiError
from xiangqi.web.limits import BadJSON, StrictJSONRoute, receive_json_message
from xiangqi.web.security import program_refusal

__all__ = ["MAX_ANALYSES", "UPDATE_INTERVAL_S", "LiveAnalyses", "create_router"]

#: Engine panels searching at once on one server (each is a thread with its own engine; the
#: machine's cores are few and the game's computer comes first).
MAX_ANALYSES = 2
#: Seconds between two updates sent to a page.
UPDATE_INTERVAL_S = 0.25

RowId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="library row id")]
Fen = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Iccs = Annotated[str, StringConstraints(min_length=4, max_length=6)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PositionBody(_Strict):
    """``POST /api/analysis/position``."""

    fen: Fen


class PlayBody(_Strict):
    """``POST /api/analysis/play``."""

    fen: Fen
    move: Iccs


class LineBody(_Strict):
    """``POST /api/analysis/line``."""

    fen: Fen
    moves: list[Iccs] = Field(min_length=1, max_length=200)


class TreeNode(_Strict):
    """One node of a tree from the page: ``parent`` index (None for node 0), ``move`` ICCS."""

    parent: int | None = None
    move: Iccs | None = None
    comment: Annotated[str, StringConstraints(max_length=2000)] = ""


class TreeBody(_Strict):
    """``PUT /api/analysis/tree/...``: the tree as a flat list
    (:func:`xiangqi.app.library.trees.game_from_nodes`)."""

    start_fen: Fen
    nodes: list[TreeNode] = Field(min_length=1, max_length=MAX_NODES)


class ExportBody(TreeBody):
    """``POST /api/analysis/export``."""

    headers: dict[Annotated[str, StringConstraints(max_length=64)],
                  Annotated[str, StringConstraints(max_length=500)]] = Field(default_factory=dict,
                                                                             max_length=50)
    fmt: Literal["pgn", "xqf"] = "pgn"
    notation: Literal["chinese", "wxf", "iccs"] = "chinese"


class StartMessage(_Strict):
    """``{"type": "start", ...}`` on the analysis socket."""

    type: Literal["start"]
    fen: Fen
    moves: list[Iccs] = Field(default_factory=list, max_length=1000)
    multipv: int = Field(default=1, ge=1, le=MAX_MULTIPV)
    #: An added engine (``engine:<id>``, Settings → engines) instead of the built-in one.
    engine: Annotated[str, StringConstraints(pattern=r"^engine:[1-9][0-9]{0,8}$")] | None = None


def _board(fen: str) -> Board:
    """The board of ``fen``; 400 when it cannot be read or the side to move could take the king
    (the other king in check, or the kings facing each other): from there a move would leave a board
    without a king. Other oddities (a pawn where no pawn can go) stay allowed: records hold them."""
    try:
        board = Board(fen)
    except XiangqiError as exc:
        raise HTTPException(400, f"bad position: {exc}") from None
    probe = board.copy(stack=False)
    probe.turn = not board.turn
    if probe.is_check():
        from xiangqi.app.play.position import validate_position

        why = [p.en for p in validate_position(fen)[1] if "could take the king" in p.en]
        raise HTTPException(400, f"impossible position {fen}: "
                                 + (why[0] if why else "the side to move could take the king"))
    return board


def _check_square(board: Board) -> str | None:
    return square_name(board.king(board.turn)) if board.is_check() else None


def _play(board: Board, text: str) -> dict[str, Any]:
    """Play ``text`` (ICCS) on ``board`` (changed) and return the tree node the page adds; 400 when
    it is not a legal move there."""
    from xiangqi.core.notation import move_to_text

    try:
        mv = Move.from_iccs(text)
    except XiangqiError as exc:
        raise HTTPException(400, str(exc)) from None
    if not board.is_legal(mv):
        raise HTTPException(400, f"{text} is not a legal move in {board.fen()}")
    texts = {k: move_to_text(board, mv, "iccs-dash" if k == "iccs" else k)
             for k in ("chinese", "wxf", "iccs")}
    board.push(mv)
    return {"move": mv.iccs(), "fen": board.fen(), "text": texts, "check": _check_square(board)}


class LiveAnalyses:
    """The engine panels' analyses open on one server (each a thread: :class:`LiveAnalysis`).

    A socket's ``finally`` closes its own, but at shutdown that await can be cancelled (the server
    stopping cancels the socket's task) and leave the thread searching: :meth:`close_all`, called by
    the app's lifespan after the sockets, ends every one that is left."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[LiveAnalysis] = set()

    def add(self, analysis: LiveAnalysis) -> LiveAnalysis:
        with self._lock:
            self._open.add(analysis)
        return analysis

    def discard(self, analysis: LiveAnalysis) -> None:
        with self._lock:
            self._open.discard(analysis)

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)

    def close_all(self, timeout: float = 5.0) -> int:
        """Tell every open analysis to end, then wait for their threads (``timeout`` seconds in all).
        Returns how many were open."""
        import time

        with self._lock:
            left = list(self._open)
            self._open.clear()
        for a in left:
            a.request_close()
        deadline = time.monotonic() + timeout
        for a in left:
            a.close(timeout=max(0.0, deadline - time.monotonic()))
        return len(left)


def create_router(hub: Any, store: Any) -> APIRouter:
    """The analysis routes for the app of ``hub`` (its session and foreground gate) and ``store``
    (the app's database: saved trees live there). The router's ``analyses`` (:class:`LiveAnalyses`)
    holds the engine panels' analyses; the app closes them at shutdown."""
    router = APIRouter(route_class=StrictJSONRoute)
    analyses = LiveAnalyses()
    router.analyses = analyses  # type: ignore[attr-defined]
    trees = TreeStore(store.engine)
    slots = threading.BoundedSemaphore(MAX_ANALYSES)

    def tree_view(start_fen: str, moves: list[str], game_id: str, headers: dict[str, str],
                  source: str) -> dict[str, Any]:
        from xiangqi.app.library.records import record_view

        game = merge_main_line(start_fen, moves, trees.load(game_id), headers)
        view = record_view(game)
        view.update(source=source, game_id=game_id, variations=count_variations(game))
        return view

    def save_tree(body: TreeBody, start_fen: str, moves: list[str], game_id: str) -> dict[str, Any]:
        try:
            game = game_from_nodes(body.start_fen, [n.model_dump() for n in body.nodes])
        except TreeError as exc:
            raise HTTPException(400, str(exc)) from None
        if game.board().fen() != Board(start_fen).fen():
            raise HTTPException(400, "the tree's start position is not the game's")
        main = [m.iccs() for m in game.mainline_moves()]
        if main[:len(moves)] != moves:
            raise HTTPException(400, "the tree's main line must begin with the game's moves")
        trees.save(game_id, game)
        return {"saved": True, "variations": count_variations(game), "nodes": len(body.nodes)}

    def library_row(row_id: int) -> dict[str, Any]:
        g = store.get_game(row_id)
        if g is None:
            raise HTTPException(404, f"no saved game with id {row_id}")
        if g["record"].get("variant") == "jieqi":  # hidden pieces: not for the analysis board
            raise HTTPException(409, f"saved game {row_id} is a 揭棋 game: it can be replayed, not analysed")
        return g

    @router.post("/api/analysis/position")
    async def position(body: PositionBody) -> dict[str, Any]:
        board = _board(body.fen)
        out = board.outcome()
        legal: dict[str, list[str]] = {}
        if out is None:
            for m in board.legal_moves:
                legal.setdefault(m.iccs()[:2], []).append(m.iccs())
        over = None if out is None else {"result": out.result(), "reason_zh": out.reason_zh,
                                         "reason_en": out.reason_en}
        return {"fen": board.fen(), "turn": "red" if board.turn else "black", "legal": legal,
                "check": _check_square(board), "over": over}

    @router.post("/api/analysis/play")
    async def play(body: PlayBody) -> dict[str, Any]:
        return _play(_board(body.fen), body.move)

    @router.post("/api/analysis/line")
    async def line(body: LineBody) -> dict[str, Any]:
        board = _board(body.fen)
        out = []
        for i, text in enumerate(body.moves):
            try:
                out.append(_play(board, text))
            except HTTPException as exc:
                raise HTTPException(400, f"move {i + 1}: {exc.detail}") from None
        return {"nodes": out}

    @router.get("/api/analysis/tree/current")
    async def current_tree() -> dict[str, Any]:
        s = hub.session
        rec = s.to_record()
        return await asyncio.to_thread(tree_view, rec["start_fen"], rec["moves"], s.id,
                                       s.pgn_headers(hub.language()), "current")

    @router.put("/api/analysis/tree/current")
    async def put_current_tree(body: TreeBody) -> dict[str, Any]:
        s = hub.session
        rec = s.to_record()
        return await asyncio.to_thread(save_tree, body, rec["start_fen"], rec["moves"], s.id)

    @router.get("/api/analysis/tree/library/{row_id}")
    async def library_tree(row_id: RowId) -> dict[str, Any]:
        g = library_row(row_id)
        rec = g["record"]
        view = await asyncio.to_thread(tree_view, rec["start_fen"], rec["moves"], g["game_id"],
                                       {"Event": g["title"], "Red": g["red"], "Black": g["black"]}, "library")
        view["library_id"] = row_id
        return view

    @router.put("/api/analysis/tree/library/{row_id}")
    async def put_library_tree(row_id: RowId, body: TreeBody) -> dict[str, Any]:
        g = library_row(row_id)
        rec = g["record"]
        return await asyncio.to_thread(save_tree, body, rec["start_fen"], rec["moves"], g["game_id"])

    @router.post("/api/analysis/export")
    async def export(body: ExportBody) -> Response:
        from xiangqi.core.records import write_records

        try:
            game = game_from_nodes(body.start_fen, [n.model_dump() for n in body.nodes], body.headers)
        except TreeError as exc:
            raise HTTPException(400, str(exc)) from None
        from xiangqi.web.export_notes import warnings_header

        losses: list[str] = []
        data = await asyncio.to_thread(write_records, [game], body.fmt, notation=body.notation,
                                       warnings=losses)
        media = "application/octet-stream" if body.fmt == "xqf" else "application/x-chess-pgn; charset=utf-8"
        return Response(data, media_type=media,
                        headers={"Content-Disposition": f'attachment; filename="analysis.{body.fmt}"',
                                 **warnings_header(losses)})

    def added_analyser(ws: WebSocket, key: str) -> Any:
        """The analyser of the added engine ``key`` (web/engines_api.py), or None when there is no
        such engine. Call it only for a socket :func:`~xiangqi.web.security.program_refusal` lets
        start programs."""
        from xiangqi.app.opponents.engines import EngineSetupError, ExternalAnalyser

        registry = getattr(ws.app.state, "engines", None)
        if registry is None:
            return None
        try:
            registry.spec(key)
        except EngineSetupError:
            return None
        return ExternalAnalyser(registry, key)

    @router.websocket("/ws/analysis")
    async def analysis_socket(ws: WebSocket) -> None:
        await ws.accept()
        analysis: LiveAnalysis | None = None
        holding = False
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=32)

        def say(msg: dict[str, Any]) -> None:
            with contextlib.suppress(asyncio.QueueFull):  # a page that does not read loses old news
                outbox.put_nowait(msg)

        async def pump() -> None:
            """Send the queued answers and, every UPDATE_INTERVAL_S, the analysis's news: on a clock of
            its own, so that a page sending often (each answer resetting a wait) still gets the news,
            the answer to its stop among them."""
            loop = asyncio.get_running_loop()
            news_at = loop.time() + UPDATE_INTERVAL_S
            while True:
                wait = news_at - loop.time()
                if wait > 0:
                    try:
                        msg = await asyncio.wait_for(outbox.get(), wait)
                        await ws.send_json(msg)
                        continue
                    except TimeoutError:
                        pass
                news_at = loop.time() + UPDATE_INTERVAL_S
                if analysis is None:
                    continue
                news = analysis.take_events()
                upd = await asyncio.to_thread(analysis.take_update)
                if upd is not None:
                    news.append(upd)
                # a job's "started" is queued in the same step as its start, so it is in the outbox
                # before any news of that job can reach here: send the queue first, then the news
                while not outbox.empty():
                    await ws.send_json(outbox.get_nowait())
                for ev in news:
                    await ws.send_json(ev)

        sender = asyncio.create_task(pump())
        try:
            while True:
                try:
                    msg = await receive_json_message(ws)
                except BadJSON as exc:
                    say({"type": "error", "detail": str(exc)})
                    continue
                kind = msg.get("type") if isinstance(msg, dict) else None
                if kind == "stop":
                    if analysis is not None:
                        analysis.stop()  # answered by its "stopped" event (reason stopped or idle)
                    else:  # before any start (or after a refused change of engine): nothing to stop
                        say({"type": "stopped", "reason": "idle"})
                    if holding:  # the slot counts running analyses, not open sockets
                        slots.release()
                        holding = False
                    continue
                if kind != "start":
                    say({"type": "error", "detail": "message must be {\"type\": \"start\", \"fen\": …, "
                                                    "\"multipv\": 1-3} or {\"type\": \"stop\"}"})
                    continue
                try:
                    req = StartMessage.model_validate(msg)
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(p) for p in first["loc"]) or "message"
                    say({"type": "error", "detail": f"start message: {where}: {first['msg']}"})
                    continue
                try:  # as the REST routes: no search where the side to move could take the king
                    _board(req.fen)
                except HTTPException as exc:
                    say({"type": "error", "detail": f"start message: fen: {exc.detail}"})
                    continue
                if not holding:
                    if not slots.acquire(blocking=False):
                        say({"type": "error", "detail": f"too many analyses on this server (at most "
                                                        f"{MAX_ANALYSES} at once); close another panel"})
                        continue
                    holding = True
                if analysis is not None and analysis.engine_key != req.engine:  # another engine chosen
                    old, analysis = analysis, None
                    old.request_close()
                    analyses.discard(old)
                    await asyncio.to_thread(old.close)
                if analysis is None:
                    searcher = None
                    if req.engine is not None:
                        refused = program_refusal(ws)
                        if refused is not None:  # an added engine is a program: this machine's only
                            say({"type": "error", "detail": f"start message: {refused}"})
                            continue
                        searcher = added_analyser(ws, req.engine)
                        if searcher is None:
                            say({"type": "error", "detail": f"start message: engine: {req.engine} is not "
                                                            "an added engine of this server"})
                            continue
                    analysis = analyses.add(LiveAnalysis(hub.player.gate, engine=searcher,
                                                         tablebase_dir=hub.store.data_dir / "tablebases"))
                try:
                    job = analysis.start(req.fen, req.moves, req.multipv)
                except (XiangqiError, ValueError) as exc:
                    say({"type": "error", "detail": f"start message: {exc}"})
                    continue
                say({"type": "started", "id": job})
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
            if holding:
                slots.release()
            if analysis is not None:
                analysis.request_close()  # at once: the await below can be cancelled (shutdown)
                analyses.discard(analysis)
                await asyncio.to_thread(analysis.close)

    return router
