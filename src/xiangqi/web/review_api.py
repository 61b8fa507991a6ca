"""The review API: game reviews (复盘) as background jobs, "learn from your mistakes" tries, the
annotated PGN export. Registered by :func:`xiangqi.web.server.create_app` (``review_router``).

- ``POST /api/review`` — body exactly one of ``{"library_id": int}``, ``{"current": true}`` (the
  game being played or just finished) or ``{"pgn": str, "game_index": int}`` (a record's game,
  read in the record sandbox with its time budget), optional ``"depth"`` (1..20, default
  :data:`xiangqi.study.review.DEFAULT_DEPTH`). Answers ``{"job", "status", "done", "total"}``;
  when that game (same moves, same depth) was reviewed before, ``"status": "done"`` at once with
  ``"review"`` (:meth:`GameReview.to_dict`). 429 when :data:`xiangqi.app.training.review.MAX_JOBS` reviews
  are already queued or running; 400 for a game with no moves or an unreadable record, 404 for an
  unknown library row, 413 for a body past 64 KB, 422 for a bad body (unknown field, bad type,
  none or two of the sources).
- ``GET /api/review/{job}`` — ``{"job", "status": "queued|running|done|cancelled|failed", "done",
  "total", "error"?, "review"?}``; ``DELETE /api/review/{job}`` cancels it: ``{"job", "status"}``
  (``cancelled``; a job already finished keeps and shows its status). Unknown job: 404.
- ``POST /api/review/{job}/try`` ``{"ply": int, "move": "h2e2"}`` — judge a try at that ply of a
  done review (:func:`xiangqi.study.review.try_move`: ``{"accepted", "best", "drop", "eval",
  "mate", "reply"}``); 409 while the review is not done, 400 for an illegal move or a ply out of
  range, 429 while :data:`MAX_TRIES` tries are being judged.
- ``GET /api/review/{job}/puzzles?side=red|black|both`` — the done review's mistakes and blunders
  of that side (default both) as puzzles for "learn from your mistakes" (static/js/practice.js):
  ``{"job", "side", "puzzles": [...]}`` (:func:`xiangqi.app.training.review.practice_puzzles`); 409 while
  the review is not done.
- ``GET /api/library/{row_id}/review`` — the stored review of a library game (the deepest one
  for its current moves), ``to_dict()``; 404 when it has none.
- ``GET /api/library/{row_id}/pgn?annotated=1`` (served by the server's library PGN route, which
  calls :func:`annotated_library_pgn`) — the game with the review written in: ``[%eval 0.35,8]``
  comments, NAGs ($6 ?!, $2 ?, $4 ??) and the better lines as variations.

Review jobs run in :class:`xiangqi.app.training.review.ReviewManager` threads behind the game's own computer
(``hub.player.gate``); the event loop only hands work over and reads progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, StringConstraints, model_validator

from xiangqi.app.play.session import GameSession
from xiangqi.app.training.review import (
    ReviewManager,
    ReviewQueueFull,
    ReviewSource,
    ReviewStore,
    game_key,
    line_digest,
    practice_puzzles,
    record_key,
    review_record_job,
)
from xiangqi.study.review import DEFAULT_DEPTH, DEFAULT_HASH_MB, GameReview, try_move
from xiangqi.web.limits import StrictJSONRoute
from xiangqi.web.security import this_machine_only

if TYPE_CHECKING:
    from xiangqi.app.library.sandbox import RecordSandbox
    from xiangqi.app.play.hub import GameHub
    from xiangqi.app.play.store import Store

__all__ = ["review_router", "annotated_library_pgn", "ReviewRequest", "TryRequest", "MAX_TRIES",
           "REVIEW_WORKERS"]

#: Worker threads of the server's review jobs: one, so that a review takes at most one core away
#: from the game's computer on a small machine (and it waits while that computer searches).
REVIEW_WORKERS = 1
#: Tries ("learn from your mistakes") judged at once per server (each is one search).
MAX_TRIES = 2
#: Seconds a try waits at most for the game's computer to finish its search before it searches too.
TRY_WAIT_S = 10.0
#: Most PGN text one review request may carry (the JSON body limit is 64 KB anyway).
MAX_PGN_CHARS = 60000
_UNKNOWN = "no review job {!r} (unknown, or finished long ago and forgotten)"

JobId = Annotated[str, PathParam(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$",
                                 description="review job id")]
RowId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="library row id")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewRequest(_Strict):
    """Body of ``POST /api/review``: exactly one of ``library_id``, ``current`` (true) or ``pgn``
    (with an optional ``game_index``, 0-based); ``depth`` 1..20."""

    library_id: StrictInt | None = Field(default=None, ge=1, le=2**63 - 1)
    current: Literal[True] | None = None
    pgn: StrictStr | None = Field(default=None, min_length=1, max_length=MAX_PGN_CHARS)
    game_index: StrictInt | None = Field(default=None, ge=0, le=100000)
    depth: StrictInt = Field(default=DEFAULT_DEPTH, ge=1, le=20)
    #: An added engine (``engine:<id>``, Settings → engines) reviews instead of ours, at its own
    #: time a move (``depth`` is ours).
    engine: Annotated[StrictStr, StringConstraints(pattern=r"^engine:[1-9][0-9]{0,8}$")] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ReviewRequest:
        given = [n for n in ("library_id", "current", "pgn") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of library_id, current (true) or pgn"
                             + (f"; got {', '.join(given)}" if given else ""))
        if self.game_index is not None and self.pgn is None:
            raise ValueError("game_index goes with pgn only")
        return self


class TryRequest(_Strict):
    """Body of ``POST /api/review/{job}/try``: ``ply`` (1-based) and the tried ``move`` (ICCS)."""

    ply: StrictInt = Field(ge=1, le=10000)
    move: StrictStr = Field(pattern=r"^[a-i][0-9][a-i][0-9]$")


def _library_record(store: Store, row_id: int) -> dict[str, Any]:
    g = store.get_game(row_id)  # DamagedGameError (409) for a record that cannot be replayed
    if g is None:
        raise HTTPException(404, f"no saved game with id {row_id}")
    if g["record"].get("variant") == "jieqi":  # hidden pieces: no engine review (web/jieqi_api.py)
        raise HTTPException(409, f"saved game {row_id} is a 揭棋 game: it can be replayed, not reviewed")
    return g


def _library_source(store: Store, row_id: int, depth: int, language: str) -> ReviewSource:
    rec = _library_record(store, row_id)["record"]
    session = GameSession.from_record(rec)
    return ReviewSource(game_key(session.id), session.start_fen, tuple(m.iccs for m in session.moves),
                        session.pgn_headers(language), depth)


def _stored_library_review(reviews: ReviewManager, store: Store,
                           row_id: int) -> tuple[GameSession, GameReview]:
    rec = _library_record(store, row_id)["record"]
    session = GameSession.from_record(rec)
    digest = line_digest(session.start_fen, [m.iccs for m in session.moves], DEFAULT_HASH_MB)
    review = None if reviews.store is None else reviews.store.latest(game_key(session.id), digest)
    if review is None:
        raise HTTPException(404, f"saved game {row_id} has not been reviewed yet (or its moves changed "
                                 "since): start a review with POST /api/review {\"library_id\": "
                                 f"{row_id}}}")
    return session, review


def annotated_library_pgn(app: FastAPI, row_id: int, notation: str, language: str) -> str:
    """The annotated PGN of library row ``row_id`` (its stored review written in; see the module
    doc), moves in ``notation``, tags in ``language``. HTTPException 404 when the row or its
    review is missing. Blocking (reads the database): call it in a thread."""
    from xiangqi.core.pgn import Game, write_game

    session, review = _stored_library_review(app.state.reviews, app.state.store, row_id)
    game = Game.from_board(session.board)
    game.headers.update(session.pgn_headers(language))
    return write_game(review.annotate(game), notation=notation)


def review_router(app: FastAPI, hub: GameHub, store: Store, records: RecordSandbox) -> APIRouter:
    """The review routes (module doc) for the server ``app``; its :class:`ReviewManager` (behind
    ``hub.player.gate``, results in ``store``'s database) becomes ``app.state.reviews`` and is
    closed when the app shuts down."""
    manager = ReviewManager(ReviewStore(store.engine), hub.player.gate, workers=REVIEW_WORKERS)
    app.state.reviews = manager
    tries = threading.BoundedSemaphore(MAX_TRIES)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        await asyncio.to_thread(manager.close)

    router = APIRouter(route_class=StrictJSONRoute, lifespan=lifespan)

    def job_or_404(job_id: str):
        job = manager.get(job_id)
        if job is None:
            raise HTTPException(404, _UNKNOWN.format(job_id))
        return job

    @router.post("/api/review")
    async def start_review(req: ReviewRequest, request: Request) -> dict[str, Any]:
        if req.engine is not None:  # an added engine: this machine's own requests only (web/security.py)
            this_machine_only(request)
        if req.library_id is not None:
            src = await asyncio.to_thread(_library_source, store, req.library_id, req.depth, hub.language())
        elif req.current:
            s = hub.session
            src = ReviewSource(game_key(s.id), s.start_fen, tuple(m.iccs for m in s.moves),
                               s.pgn_headers(hub.language()), req.depth)
        else:
            line = await records.run(review_record_job, req.pgn, req.game_index or 0)
            src = ReviewSource(record_key(line["start_fen"], line["moves"]), line["start_fen"],
                               tuple(line["moves"]), line["headers"], req.depth, errors=tuple(line["errors"]))
        if not src.moves:
            raise HTTPException(400, "nothing to review: the game has no moves yet")
        if req.engine is not None:
            from xiangqi.app.opponents.engines import EngineSetupError

            registry = getattr(app.state, "engines", None)
            if registry is None:
                raise HTTPException(404, f"{req.engine}: there are no added engines on this server")
            try:
                await asyncio.to_thread(registry.spec, req.engine)
            except EngineSetupError as exc:
                raise HTTPException(404, str(exc)) from None
            src = dataclasses.replace(src, engine=req.engine)
        try:
            job = await asyncio.to_thread(manager.submit, src)
        except ReviewQueueFull as exc:
            raise HTTPException(429, str(exc)) from None
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        return job.to_dict()

    @router.get("/api/review/{job_id}")
    async def review_status(job_id: JobId) -> dict[str, Any]:
        return job_or_404(job_id).to_dict()

    @router.delete("/api/review/{job_id}")
    async def review_cancel(job_id: JobId) -> dict[str, Any]:
        job = manager.cancel(job_id)
        if job is None:
            raise HTTPException(404, _UNKNOWN.format(job_id))
        return {"job": job.id, "status": "cancelled" if job.status == "running" else job.status}

    @router.post("/api/review/{job_id}/try")
    async def review_try(job_id: JobId, req: TryRequest) -> dict[str, Any]:
        job = job_or_404(job_id)
        if job.review is None:
            raise HTTPException(409, f"review {job_id} is {job.status}, not done: "
                                     "tries need a finished review")
        if not tries.acquire(blocking=False):
            raise HTTPException(429, f"{MAX_TRIES} tries are being judged already; try again in a moment")
        try:
            review = job.review
            def judge() -> dict[str, Any]:
                hub.player.gate.wait_idle(TRY_WAIT_S)  # the game's computer first, as for the reviews
                return try_move(review, req.ply, req.move)

            try:
                return await asyncio.to_thread(judge)
            except ValueError as exc:
                raise HTTPException(400, str(exc)) from None
        finally:
            tries.release()

    @router.get("/api/review/{job_id}/puzzles")
    async def review_puzzles(job_id: JobId, side: Literal["red", "black", "both"] = "both") -> dict[str, Any]:
        job = job_or_404(job_id)
        if job.review is None:
            raise HTTPException(409, f"review {job_id} is {job.status}, not done: "
                                     "practice needs a finished review")
        sides = ("red", "black") if side == "both" else (side,)
        puzzles = await asyncio.to_thread(practice_puzzles, job.review, sides)
        return {"job": job.id, "side": side, "puzzles": puzzles}

    @router.get("/api/library/{row_id}/review")
    async def library_review(row_id: RowId) -> dict[str, Any]:
        _, review = await asyncio.to_thread(_stored_library_review, manager, store, row_id)
        return review.to_dict()

    return router


def annotated_response(text: str, row_id: int) -> Response:
    """The download response of an annotated library PGN."""
    return Response(text, media_type="application/x-chess-pgn; charset=utf-8",
                    headers={"Content-Disposition":
                             f'attachment; filename="xiangqi-library-{row_id}-review.pgn"'})
