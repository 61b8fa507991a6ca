"""The puzzle mode's REST API (an APIRouter registered by :func:`xiangqi.web.server.create_app`).

- ``GET /api/puzzles?theme=&source=`` -> ``{"count", "solved", "themes": {tag: n}, "sources": {src: n},
  "player": {"rating", "rd", "streak", "best_streak", "solved", "failed", ...}}``
- ``POST /api/puzzles/next`` ``{"theme"?, "source"?, "exclude"?}`` -> a new attempt (see
  :meth:`xiangqi.app.training.puzzles.Trainer.view`) at a puzzle near the player's rating; 404 when none
  matches
- ``POST /api/puzzles/start`` ``{"id"}`` -> a new attempt at that puzzle (404 unknown)
- ``POST /api/puzzles/attempt/{attempt}/move`` ``{"move": "h2e2"}`` -> ``{"verdict": "right"|"wrong"|"solved",
  "reply", ...view}`` (422 illegal move, 409 finished, 404 unknown attempt)
- ``POST /api/puzzles/attempt/{attempt}/hint`` -> ``{"from", "move"?, "hints"}``
- ``POST /api/puzzles/attempt/{attempt}/solution`` -> ``{"solution", "rest", ...view}``

The routes are plain functions, so FastAPI runs them in its thread pool: a move the engine must
judge (an alternative to the solution: one depth-8 search, at most 5 s) never blocks the event loop.
Bodies are strict (unknown fields and wrong types are 422).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, StringConstraints

from xiangqi.app.training.puzzles import PuzzleError, Trainer

__all__ = ["router", "trainer"]

router = APIRouter()

Filter = Annotated[str, StringConstraints(max_length=60, pattern=r"^[\w/\-]*$")]
PuzzleId = Annotated[str, StringConstraints(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.\-]+$")]
AttemptId = Annotated[str, PathParam(min_length=1, max_length=40, pattern=r"^[0-9a-f]+$")]
Iccs = Annotated[str, StringConstraints(min_length=4, max_length=5,
                                        pattern=r"^[a-iA-I][0-9]-?[a-iA-I][0-9]$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class NextBody(_Strict):
    theme: Filter | None = None
    source: Filter | None = None
    exclude: PuzzleId | None = None


class StartBody(_Strict):
    id: PuzzleId


class MoveBody(_Strict):
    move: Iccs


def trainer(request: Request) -> Trainer:
    """The app's trainer, made on first use over the app store's database."""
    app = request.app
    t = getattr(app.state, "puzzle_trainer", None)
    if t is None:
        store = app.state.store
        t = Trainer(store.engine, store.data_dir)
        app.state.puzzle_trainer = t
    return t


def _call(fn, *args) -> dict[str, Any]:
    try:
        return fn(*args)
    except PuzzleError as exc:
        raise HTTPException(exc.status, str(exc)) from None


@router.get("/api/puzzles")
def puzzles_catalog(request: Request, theme: Annotated[Filter | None, Query()] = None,
                    source: Annotated[Filter | None, Query()] = None) -> dict[str, Any]:
    """Counts by theme and source, and the player's puzzle rating, streak and totals."""
    return trainer(request).catalog(theme or None, source or None)


@router.post("/api/puzzles/next")
def puzzles_next(request: Request, body: NextBody) -> dict[str, Any]:
    """Start an attempt at the next puzzle (not yet solved, near the player's rating)."""
    t = trainer(request)
    p = t.next_puzzle(body.theme or None, body.source or None, body.exclude)
    if p is None:
        raise HTTPException(404, "no puzzle matches the filter")
    return _call(t.start, p.id)


@router.post("/api/puzzles/start")
def puzzles_start(request: Request, body: StartBody) -> dict[str, Any]:
    """Start an attempt at one puzzle."""
    return _call(trainer(request).start, body.id)


@router.post("/api/puzzles/attempt/{attempt}/move")
def puzzles_move(request: Request, attempt: AttemptId, body: MoveBody) -> dict[str, Any]:
    """Judge the solver's move; the opponent's reply comes with it."""
    return _call(trainer(request).move, attempt, body.move.replace("-", "").lower())


@router.post("/api/puzzles/attempt/{attempt}/hint")
def puzzles_hint(request: Request, attempt: AttemptId) -> dict[str, Any]:
    """The piece to move, then the move (the attempt then counts as failed)."""
    return _call(trainer(request).hint, attempt)


@router.post("/api/puzzles/attempt/{attempt}/solution")
def puzzles_solution(request: Request, attempt: AttemptId) -> dict[str, Any]:
    """Show the solution and end the attempt (failed)."""
    return _call(trainer(request).solution, attempt)


# -- endgame practice (残局练习) --------------------------------------------------------------
# - ``GET /api/endgames`` -> ``{"endings": [{"name", "zh"}]}`` (the tables present)
# - ``POST /api/endgames/start`` ``{"ending": "KRKA"}`` or ``{"fen": ...}`` -> a session view
# - ``POST /api/endgames/{session}/move`` ``{"move"}`` -> ``{"reply", "before", "verdict", ...}``
# - ``POST /api/endgames/{session}/undo``;
# - ``GET /api/endgames/{session}/dtm`` -> ``{"wdl", "dtm", "mate_in", "best"}``

Ending = Annotated[str, StringConstraints(min_length=2, max_length=12, pattern=r"^[KARNBCPHEkarnbcphe]+$")]
Fen = Annotated[str, StringConstraints(min_length=10, max_length=120)]


class EndgameStartBody(_Strict):
    ending: Ending | None = None
    fen: Fen | None = None


def endgame_trainer(request: Request):
    """The app's endgame trainer over ``<data dir>/tablebases``, made on first use."""
    app = request.app
    t = getattr(app.state, "endgame_trainer", None)
    if t is None:
        from xiangqi.app.training.endgames import EndgameTrainer

        t = EndgameTrainer(app.state.store.data_dir / "tablebases")
        app.state.endgame_trainer = t
    return t


def _ecall(fn, *args, **kw) -> dict[str, Any]:
    from xiangqi.app.training.endgames import EndgameError

    try:
        return fn(*args, **kw)
    except EndgameError as exc:
        raise HTTPException(exc.status, str(exc)) from None


@router.get("/api/endgames")
def endgames(request: Request) -> dict[str, Any]:
    """The endings whose tables are present."""
    return {"endings": endgame_trainer(request).endings()}


@router.post("/api/endgames/start")
def endgame_start(request: Request, body: EndgameStartBody) -> dict[str, Any]:
    """Start practising a random won position of an ending, or a given FEN."""
    if (body.ending is None) == (body.fen is None):
        raise HTTPException(422, "give exactly one of ending and fen")
    return _ecall(endgame_trainer(request).start, body.ending, body.fen)


@router.post("/api/endgames/{session}/move")
def endgame_move(request: Request, session: AttemptId, body: MoveBody) -> dict[str, Any]:
    """The player's move; the table's longest resistance answers."""
    return _ecall(endgame_trainer(request).move, session, body.move.replace("-", "").lower())


@router.post("/api/endgames/{session}/undo")
def endgame_undo(request: Request, session: AttemptId) -> dict[str, Any]:
    """Take back the last move pair."""
    return _ecall(endgame_trainer(request).undo, session)


@router.get("/api/endgames/{session}/dtm")
def endgame_dtm(request: Request, session: AttemptId) -> dict[str, Any]:
    """The distance to mate, on request."""
    return _ecall(endgame_trainer(request).dtm, session)
