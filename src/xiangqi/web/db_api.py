"""The games database over HTTP: the opening explorer, the database browser's search, one game.

- ``GET /api/explore?fen=&moves=&source=both&mirror=1&top=5`` — the opening explorer
  (:func:`xiangqi.db.explore.explore`) for the position after ``moves`` (space-separated ICCS) from
  ``fen`` (default the standard start): ``{fen, source, mirror, games, ended, moves: [{move, text,
  games, red, draw, black, unknown, red_pct, draw_pct, black_pct, avg_year}], top: [game hit + next_move,
  next_text], ecco, opening, opening_en}``. ``ecco``/``opening`` (English: ``opening_en``) are named from
  the moves when they start at the standard start (:func:`xiangqi.study.ecco.classify`).
- ``GET /api/db/search?…`` — games by ``player``, ``red``, ``black``, ``event`` (in simplified or
  traditional characters alike, :func:`xiangqi.db.names.search_key`), ``site``,
  ``date_from``/``date_to`` (``YYYY[-MM[-DD]]``), ``result`` (red, black, draw, unknown or the PGN
  tokens), ``ecco`` (code, prefix or range), ``opening`` (name), ``comment`` (text), ``source``
  (master, mine, both), by position (``fen``, with ``mirror``) or by similar position (``similar``: a
  FEN, with ``mirror``, ``min_similarity``); paginated with ``limit`` (1–100) and ``offset``. Answer
  ``{total, offset, limit, games: [hit]}`` (:meth:`xiangqi.db.search.GameHit.to_dict`); ``total`` is
  None for a similar-position search (ranked, not counted).
- ``GET /api/db/games/{id}`` — one game: its hit fields, ``headers`` (every tag of the source), the
  ``moves`` (ICCS), the ``comments`` and ``pgn`` (the main line with its tags, in Chinese notation;
  the stored comments are not placed on moves, so they are given apart). The page opens the PGN in
  its record viewer.
- ``GET /api/db/info`` — ``{available, games, master, mine, indexing_error}``.

On the public server (``xiangqi serve --public``, ``app.state.public``) these routes show every
collection but ``mine``: the ``mine`` games are the library of whoever runs the server (the games
they played on this data dir, with their notes), not the players'. There ``source=mine`` is a 404,
``both`` means ``master``, a ``mine`` game by id is a 404 and ``/api/db/info`` counts no ``mine``.

Validation is strict: an unknown query parameter is a 400 naming it; a bad FEN, date, result, ECCO
code or source is a 400 whose detail starts with the field's name; a badly typed value is the usual
422. The database is the data dir's ``games.db`` (:class:`xiangqi.app.library.database.GamesDatabase`), opened
on first use in a worker thread; every query runs in a worker thread (at most two at a time), so the
event loop and the game never wait for it. A database that does not exist yet answers with empty
lists; one that cannot be opened is a 503 naming the problem.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam

from xiangqi.app.library.database import GamesDatabase

__all__ = ["create_db_router", "SEARCH_FIELDS"]

#: Header filters of ``/api/db/search`` (the :class:`xiangqi.db.search.Filters` fields it accepts).
SEARCH_FIELDS = ("player", "red", "black", "event", "site", "date_from", "date_to", "result", "ecco",
                 "opening", "comment")
_SEARCH_PARAMS = {*SEARCH_FIELDS, "source", "fen", "mirror", "similar", "min_similarity", "limit", "offset"}
_EXPLORE_PARAMS = {"fen", "moves", "source", "mirror", "top"}
Source = Literal["master", "mine", "both"]
Text = Annotated[str | None, Query(max_length=200)]
GameId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="games database id")]


def _only(request: Request, allowed: set[str]) -> None:
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise HTTPException(400, f"unknown parameter {unknown[0]!r}: expected {', '.join(sorted(allowed))}")


def _bad(field: str, exc: Exception) -> HTTPException:
    return HTTPException(400, f"{field}: {exc}")


def _check_fen(field: str, fen: str | None) -> None:
    if fen is None:
        return
    from xiangqi.core.board import Board
    from xiangqi.core.errors import excerpt

    try:
        Board(fen)
    except ValueError as exc:  # FenError is a XiangqiError, a ValueError
        raise _bad(field, f"bad FEN {excerpt(fen)}: {exc}") from None


def create_db_router(app: Any, store: Any, url: str | None = None) -> APIRouter:
    """The router of the games database routes for ``app`` (whose library is ``store``).

    Sets ``app.state.games_db`` (:class:`~xiangqi.app.library.database.GamesDatabase`, at ``url`` or the data
    dir's ``games.db``), hooks it to the library (``store.library_listeners``), syncs the user's games
    at start-up (the backfill) and stops it at shutdown.
    """
    gdb = GamesDatabase(store, url)
    app.state.games_db = gdb
    store.library_listeners.append(gdb.schedule)
    gate = asyncio.Semaphore(2)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any):
        gdb.schedule()  # the backfill: library games saved before the database (or while it failed)
        yield
        await asyncio.to_thread(gdb.close)

    router = APIRouter(lifespan=lifespan)
    public = bool(getattr(app.state, "public", False))  # set by create_app before this router

    def shown_source(source: str) -> str:
        """``source`` as this server may answer it (module text: no ``mine`` on a public server)."""
        if not public:
            return source
        if source == "mine":
            raise HTTPException(404, "source: the 'mine' games (the server's own library) are not "
                                     "available on a public server")
        return "master"

    async def run(fn, *args, **kwargs):
        """``fn(engine, …)`` in a worker thread, None when the database does not exist yet; a database
        that cannot be opened or read (a damaged file) is a 503 with one line saying why."""
        from xiangqi.db.database import DatabaseError, database_errors
        from xiangqi.db.search import SearchError

        def job():
            if not gdb.exists():
                return None
            with database_errors(gdb.url):
                return fn(gdb.engine(), *args, **kwargs)

        async with gate:
            try:
                return await asyncio.to_thread(job)
            except SearchError as exc:
                raise HTTPException(400, str(exc)) from None
            except DatabaseError as exc:
                raise HTTPException(503, f"the games database cannot be used: {exc}") from None

    @router.get("/api/explore")
    async def explore_route(request: Request, fen: Text = None,
                            moves: Annotated[str, Query(max_length=3000)] = "",
                            source: Source = "both", mirror: bool = True,
                            top: Annotated[int, Query(ge=0, le=50)] = 5) -> dict[str, Any]:
        from xiangqi.db.explore import explore, position_of
        from xiangqi.db.search import SearchError

        _only(request, _EXPLORE_PARAMS)
        source = shown_source(source)
        _check_fen("fen", fen)
        line = moves.split()
        try:
            board, _played = position_of(fen, line)
        except SearchError as exc:
            raise _bad("moves", exc) from None
        found = await run(explore, fen, line, source=source, mirror=mirror, top=top)
        if found is None:  # no database yet: the position, no games (the opening is still named)
            from xiangqi.db.explore import Exploration, opening_of

            ecco, name = opening_of(fen, line)
            found = Exploration(fen=board.fen(), source=source, mirror=mirror, games=0, ended=0, moves=[],
                                top=[], top_moves=[], ecco=ecco, opening=name)
        return found.to_dict()

    @router.get("/api/db/search")
    async def search_route(request: Request, player: Text = None, red: Text = None, black: Text = None,
                           event: Text = None, site: Text = None, date_from: Text = None,
                           date_to: Text = None,
                           result: Text = None, ecco: Text = None, opening: Text = None, comment: Text = None,
                           source: Source = "both", fen: Text = None, mirror: bool = False,
                           similar: Text = None,
                           min_similarity: Annotated[float, Query(ge=0.0, le=1.0)] = 0.6,
                           limit: Annotated[int, Query(ge=1, le=100)] = 20,
                           offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0) -> dict[str, Any]:
        from xiangqi.db.search import Filters, SearchError, count_games, search_games, similar_games

        _only(request, _SEARCH_PARAMS)
        source = shown_source(source)
        given = {k: v for k, v in (("player", player), ("red", red), ("black", black), ("event", event),
                                   ("site", site), ("date_from", date_from), ("date_to", date_to),
                                   ("result", result), ("ecco", ecco), ("opening", opening),
                                   ("comment", comment)) if v not in (None, "")}
        for field, value in given.items():  # each alone, so that the 400 names the field
            try:
                Filters(**{field: value}).clauses()
            except SearchError as exc:
                raise _bad(field, exc) from None
        _check_fen("fen", fen)
        _check_fen("similar", similar)
        if fen and similar:
            raise HTTPException(400, "similar: give fen or similar, not both")
        filters = Filters(**given, source=source)

        def query(engine):
            if similar:
                hits = similar_games(engine, similar, filters, mirror=mirror, min_similarity=min_similarity,
                                     limit=limit, offset=offset)
                return None, hits
            hits = search_games(engine, filters, fen=fen or None, mirror=mirror, limit=limit, offset=offset)
            total = len(hits) + offset if len(hits) < limit and (hits or offset == 0) else \
                count_games(engine, filters, fen=fen or None, mirror=mirror)
            return total, hits

        out = await run(query)
        total, hits = out if out is not None else (0, [])
        return {"total": total, "offset": offset, "limit": limit, "games": [h.to_dict() for h in hits]}

    @router.get("/api/db/games/{game_id}")
    async def game_route(game_id: GameId) -> dict[str, Any]:
        found = await run(_game, game_id)
        if found is not None and public and found["collection"] == "mine":
            found = None  # the server's own library (module text)
        if found is None:
            raise HTTPException(404, f"no game with id {game_id} in the games database")
        return found

    @router.get("/api/db/info")
    async def info_route() -> dict[str, Any]:
        def counts(engine):
            from sqlalchemy import func, select

            from xiangqi.db.schema import games
            from xiangqi.db.search import MINE

            with engine.connect() as conn:
                rows = dict(conn.execute(select(games.c.collection == MINE, func.count())
                                         .group_by(games.c.collection == MINE)).all())
            return {"master": int(rows.get(False, 0)), "mine": int(rows.get(True, 0))}

        c = await run(counts) or {"master": 0, "mine": 0}
        if public:
            c["mine"] = 0
        return {"available": gdb.exists(), "games": c["master"] + c["mine"], **c,
                "indexing_error": gdb.error}

    return router


def _game(engine, game_id: int) -> dict[str, Any] | None:
    """One stored game as the ``/api/db/games/{id}`` answer, or None."""
    from sqlalchemy import select

    from xiangqi.core.board import Move
    from xiangqi.core.pgn import Game, write_game
    from xiangqi.db.schema import games
    from xiangqi.db.search import _HIT_COLUMNS, GameHit

    with engine.connect() as conn:
        extra = (games.c.headers, games.c.fen, games.c.moves, games.c.comments)
        row = conn.execute(select(*_HIT_COLUMNS, *extra).where(games.c.id == game_id)).first()
    if row is None:
        return None
    n = len(_HIT_COLUMNS)
    hit = GameHit(*row[:n]).to_dict()
    headers_json, fen, moves, comments = row[n:]
    try:
        headers = {str(k): str(v) for k, v in json.loads(headers_json or "{}").items()}
    except (ValueError, AttributeError):
        headers = {}
    game = Game({k: v for k, v in headers.items() if k not in ("FEN", "Format")})
    if fen:
        game.setup(fen)
    node = game
    for text in moves.split():
        node = node.add_variation(Move.from_iccs(text))
    if game.headers.get("Result") not in ("1-0", "0-1", "1/2-1/2", "*"):
        game.headers["Result"] = hit["result"]
    return {**hit, "headers": headers, "moves": moves.split(), "comments": comments,
            "pgn": write_game(game, notation="chinese")}
