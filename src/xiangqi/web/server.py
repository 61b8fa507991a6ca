"""The local web server: FastAPI app with REST + one WebSocket per game, serving the static front end.

REST (JSON unless noted; errors are ``{"detail": "..."}`` naming what and where, with 400 for bad
input such as an illegal move or a refused setting, 404 for an unknown game, 409 for a request the
game's state forbids, 413 for a body past its route's limit (64 KB for JSON, 2 MB for a record
file; refused while it arrives), 422 for a malformed request: a body that is not strict UTF-8 JSON
(:mod:`xiangqi.web.limits`), an unknown field or a bad value (``errors`` lists each), or a record
too complex to read within its time budget (records are read in a child process:
:mod:`xiangqi.app.library.sandbox`):

- ``GET  /api/game`` — state of the current game (see ``GameSession.state``).
- ``POST /api/game/new`` ``{red, black, level, fen?}`` — new game.
- ``POST /api/game/move`` ``{move, game_id?}`` — a human move in ICCS (``h2e2``).
- ``POST /api/game/undo`` ``{version?}`` — take back a move; with ``version`` (the state version the
  page showed) it is refused with 409 and the current ``state`` when the game changed since.
- ``POST /api/game/resign``, ``/draw``, ``/hint``; ``POST /api/game/retry`` — the computer tries its
  move again after it failed (``engine_error`` in the state).
- ``POST /api/game/open`` — body: the PGN file's bytes (UTF-8/GB18030/Big5 sniffed).
- ``GET  /api/game/pgn?notation=chinese|iccs|wxf&lang=zh|en`` — the game as a PGN download (tags such
  as Event and the player names in ``lang``, default: the ``language`` setting).
- ``GET  /api/game/export?fmt=pgn|xqf&notation=…&lang=…`` — the game as a PGN or XQF download.
- ``POST /api/record/open?name=&index=&first_readable=`` — body: a record file's bytes or pasted
  FEN/PGN/UBB text; returns the record's tree for browsing (:func:`xiangqi.app.library.records.open_record`;
  ``first_readable=true``: the first game from ``index`` on that can be shown) and leaves the
  current game alone. ``POST /api/record/export?name=&index=&fmt=&notation=`` — the same bytes
  converted (all variations and comments kept). ``POST /api/game/from_record`` ``{fen, moves, red,
  black, level, headers?}`` — play on from a record position (replaces the current game).
- ``GET  /api/levels``: ``[{key, name_zh, name_en, elo, elo_error, elo_games, rank_zh}]`` (Elo measured
  by matches with its 95 % error bar, None while unmeasured; rank name of DESIGN.md);
  ``GET/PUT /api/settings``; ``GET /api/library`` …
- The analysis board's routes and its engine socket ``/ws/analysis``: :mod:`xiangqi.web.analysis_api`.
- The games database (opening explorer, database browser): ``/api/explore``, ``/api/db/…``, in
  :mod:`xiangqi.web.db_api`.

WebSocket ``/ws/game/{game_id}?token=…``: the server sends ``{"type": "state", "state": …}``
on connect and after every change, ``{"type": "replaced", "id": new}`` when another
game replaces this one, ``{"type": "error", "detail": …}`` for a refused message.
A socket opened for a game that is not the current one gets ``{"type": "replaced",
"old": game_id}`` (without the current id: the page asks ``GET /api/game``) and is closed.
Clients send ``{"type": "move", "move": "h2e2"}``, ``{"type": "undo", "version": N}``,
``{"type": "resign"}``, ``{"type": "draw"}``, ``{"type": "hint"}``, ``{"type": "retry"}`` or
``{"type": "state"}``; the message loop and the per-page send queues are in :mod:`xiangqi.web.clients`.

Security (:mod:`xiangqi.web.security`, one middleware before every route): only
requests whose ``Host`` names this server are answered (421 otherwise), a foreign
``Origin`` is refused (403), and every POST/PUT/PATCH/DELETE and every WebSocket
needs the per-start token (403 without it). The page gets the token in
``<meta name="xiangqi-token" content="…">`` of ``GET /``. A script (a
non-browser client on this machine) authenticates the same way: read the token
from ``GET /``, send it as the ``X-Xiangqi-Token`` header on every request and on
the WebSocket (header or ``?token=``), and send no ``Origin`` or this server's own::

    import re, httpx
    base = "http://127.0.0.1:PORT"
    token = re.search(r'name="xiangqi-token" content="([^"]+)"', httpx.get(base + "/").text)[1]
    api = httpx.Client(base_url=base, headers={"X-Xiangqi-Token": token})
    api.post("/api/game/move", json={"move": "h2e2"})

The token changes at every start of the server; a request with an old one gets 403.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import threading
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request, WebSocket
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import Field, StringConstraints

from xiangqi.app.library.sandbox import (
    RECORD_BUDGET_S,
    RecordSandbox,
    RecordTooComplex,
    convert_record_job,
    open_game_job,
    open_record_job,
)
from xiangqi.app.library.sandbox import prestart as prestart_records
from xiangqi.app.opponents.engines import is_engine_key
from xiangqi.app.opponents.players import DEFAULT_BOOK, EnginePlayer, levels
from xiangqi.app.play.clock import TimeControl
from xiangqi.app.play.hub import GameHub, GameRegistry, HintCancelledError, MoveProvider
from xiangqi.app.play.position import validate_position
from xiangqi.app.play.session import (
    DEFAULT_LEVEL,
    GameOverError,
    GameSession,
    NotYourTurnError,
    StaleVersionError,
)
from xiangqi.app.play.settings import SettingsError
from xiangqi.app.play.store import StorageError, Store
from xiangqi.core.errors import XiangqiError
from xiangqi.web import clients
from xiangqi.web.db_api import create_db_router
from xiangqi.web.export_notes import warnings_header
from xiangqi.web.limits import (
    JSON_BODY_LIMIT,
    MAX_UPLOAD_BYTES,
    BodyLimitMiddleware,
    StrictJSONRoute,
    validation_error_handler,
)
from xiangqi.web.models import ClockRequest, LevelKey, PlayerKind, StrictModel, check_position
from xiangqi.web.review_api import annotated_library_pgn, annotated_response, review_router
from xiangqi.web.security import LocalGuard, new_token, page_with_token, program_refusal

STATIC_DIR = Path(__file__).parent / "static"
#: A library row id: SQLite's INTEGER is 64-bit signed, so larger ids are refused here (422), not
#: by an overflow inside SQLite (500).
RowId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="library row id")]
#: Routes whose body is a record file (bytes): they may be MAX_UPLOAD_BYTES long; JSON routes
#: JSON_BODY_LIMIT (limits.BodyLimitMiddleware).
RECORD_ROUTES = ("/api/game/open", "/api/record/open", "/api/record/export")
_FILE_BODY = {"requestBody": {"required": True, "content": {
    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}}


class NewGameRequest(StrictModel):
    """Body of ``POST /api/game/new``."""

    red: PlayerKind = "human"
    black: PlayerKind = "engine"
    level: LevelKey = "beginner"
    fen: str | None = Field(default=None, max_length=200)
    clock: ClockRequest | None = None


class MoveRequest(StrictModel):
    """Body of ``POST /api/game/move``: ``move`` in ICCS; ``game_id`` guards against a stale page."""

    move: str = Field(min_length=4, max_length=6)
    game_id: str | None = Field(default=None, max_length=64)


class UndoRequest(StrictModel):
    """Body of ``POST /api/game/undo`` (optional): ``version`` of the state the page showed."""

    version: int | None = Field(default=None, ge=0, le=2**63 - 1)


class FromRecordRequest(StrictModel):
    """Body of ``POST /api/game/from_record``: the record's start FEN, the ICCS moves to the chosen node."""

    fen: str = Field(max_length=200)
    moves: list[str] = Field(default_factory=list, max_length=2000)
    red: PlayerKind = "human"
    black: PlayerKind = "engine"
    level: LevelKey = "beginner"
    headers: dict[Annotated[str, StringConstraints(max_length=64)], str] = Field(default_factory=dict,
                                                                                 max_length=50)


class PositionRequest(StrictModel):
    """Body of ``POST /api/position/validate``."""

    fen: str = Field(max_length=200)


class LibraryUpdate(StrictModel):
    """Body of ``PATCH /api/library/{id}``."""

    title: str | None = Field(default=None, max_length=200)
    notes: str | None = Field(default=None, max_length=10000)


def _http_error(exc: Exception) -> HTTPException:
    if isinstance(exc, StorageError):  # 507 disk full, 409 damaged game, 503 read-only / I/O error
        return HTTPException(exc.status, str(exc))
    if isinstance(exc, GameOverError | NotYourTurnError | StaleVersionError | HintCancelledError):
        return HTTPException(409, str(exc))
    if isinstance(exc, RecordTooComplex):
        return HTTPException(422, str(exc))
    return HTTPException(400, str(exc))


def _quietly(fn: Any) -> None:
    """Run ``fn()`` and swallow its error (a start-up helper whose failure shows later, where it matters)."""
    with contextlib.suppress(Exception):
        fn()


def create_app(data_dir: str | os.PathLike[str] | None = None, *, move_provider: MoveProvider | None = None,
               player: EnginePlayer | None = None, warmup: bool = True,
               engine_delay_s: float = 0.3, record_budget_s: float = RECORD_BUDGET_S,
               port: int | None = None, host: str = "127.0.0.1", token: str | None = None,
               public: bool = False, online: Any = None, trust_proxy: tuple[str, ...] = ()) -> FastAPI:
    """The ASGI app. ``data_dir`` holds the SQLite file (default: ``$XIANGQI_DATA_DIR`` or the user
    data dir). ``move_provider`` replaces the engine's move choice (tests); ``warmup`` starts compiling
    the engine kernels in the background at start-up so the page shows before compilation ends.
    ``record_budget_s`` is the time one uploaded record may take to read (then 422, "too complex").

    ``port`` and ``host``: where the server listens, for the Host and Origin checks of
    :class:`xiangqi.web.security.LocalGuard` (``port`` None: the port each request arrived on).
    ``token``: the per-start secret (default: a fresh random one), also ``app.state.token``.
    ``public``: the public server of ``xiangqi serve --public`` (accounts and online play,
    :mod:`xiangqi.web.online_api`, ``online`` its :class:`~xiangqi.online.rooms.OnlineConfig`);
    the local game's routes are then closed (its guard is :class:`~xiangqi.web.online_api.PublicGuard`).
    ``trust_proxy``: the reverse proxies in front (IP addresses or networks,
    :func:`xiangqi.web.security.trusted_proxies`) whose ``X-Forwarded-For``/``-Proto`` name the
    client (uvicorn's :class:`~uvicorn.middleware.proxy_headers.ProxyHeadersMiddleware`, outermost);
    none by default: the client is the connection's peer, whatever a header says."""
    store = Store(data_dir)
    player = player or EnginePlayer(book=DEFAULT_BOOK)  # the game's computer opens from the book
    player.tablebase_dir = store.data_dir / "tablebases"  # the endgame tables of this data dir
    records = RecordSandbox(record_budget_s)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        if warmup:
            player.warmup()
            # in the background: the page is served at once; a failure shows at the first upload (4xx)
            threading.Thread(target=_quietly, args=(prestart_records,), name="xiangqi-records",
                             daemon=True).start()
        hub.kick_engine()
        hub.arm_clock()
        yield
        await app.state.games.shutdown()
        await asyncio.to_thread(app.state.analyses.close_all)  # engine panels still searching
        with contextlib.suppress(Exception):
            app.state.tournaments.close()  # a round-robin's games (web/tournament_api.py)
        with contextlib.suppress(Exception):
            app.state.engines.close()  # the added engines' processes (web/engines_api.py)
        store.close()

    # No /docs, /redoc or /openapi.json: the page is the server's only client; the schema stays
    # available in process (app.openapi(), used by the bad-input tests).
    app = FastAPI(title="pyxiangqi", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.router.route_class = StrictJSONRoute  # every JSON body parsed strictly (limits.loads_strict)
    app.add_middleware(BodyLimitMiddleware, default=JSON_BODY_LIMIT,
                       routes={path: MAX_UPLOAD_BYTES for path in RECORD_ROUTES})
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.state.token = token or new_token()
    app.state.public = public  # what only a local server offers (added engines, matches) checks this
    # Added last, so it is the outermost layer: no body is read and no route runs before it.
    if not public:  # the public server's guard: online_api.PublicGuard, installed below
        app.add_middleware(LocalGuard, token=app.state.token, port=port, host=host)
    hub = GameHub(store, player=player, move_provider=move_provider, engine_delay_s=engine_delay_s)
    app.state.hub = hub
    app.state.games = GameRegistry(hub)  # the rooms of this server; the local game is one of them
    app.state.store = store
    app.include_router(review_router(app, hub, store, records))  # review jobs: app.state.reviews
    from xiangqi.web.analysis_api import create_router as analysis_routes

    analysis_router = analysis_routes(hub, store)
    app.state.analyses = analysis_router.analyses  # the engine panels' threads: ended at shutdown
    app.include_router(analysis_router)  # analysis board and engine panel
    from xiangqi.web.coach_api import create_router as coach_router

    app.include_router(coach_router(hub))
    from xiangqi.web.talk_api import create_router as talk_router

    app.include_router(talk_router(hub))  # named opponents and their remarks

    app.include_router(create_db_router(app, store))  # the games database: explorer, browser (db_api.py)
    if not public:  # setup from the page: import the master games, make the tables (jobs_api.py)
        from xiangqi.web.jobs_api import create_router as jobs_router

        app.include_router(jobs_router(app, hub, store))
    if public:  # accounts, lobby, online rooms (online_api.py); before the index route: it owns "/"
        from xiangqi.web.online_api import install as install_online

        install_online(app, online, data_dir=store.data_dir)
    else:
        from xiangqi.web.online_api import local_router as online_local

        app.include_router(online_local())  # GET /api/online/config: {"public": false}
    from xiangqi.web import jieqi_api

    app.include_router(jieqi_api.create_router(app, store, hub.language))  # 揭棋 (jieqi_api.py)

    @app.exception_handler(XiangqiError)
    async def _xiangqi_error(_request: Request, exc: XiangqiError) -> JSONResponse:
        e = _http_error(exc)
        body: dict[str, Any] = {"detail": e.detail}
        if isinstance(exc, StaleVersionError):  # the page shows what the game is now
            body["state"] = hub.state()
        return JSONResponse(body, status_code=e.status_code)

    from xiangqi.web.puzzle_api import router as puzzle_router

    app.include_router(puzzle_router)
    from xiangqi.web.engines_api import create_router as engines_router

    app.include_router(engines_router(app, hub, store))  # Settings → engines: added UCI/UCCI engines
    from xiangqi.web.tournament_api import create_router as tournament_router

    app.include_router(tournament_router(app, hub, store))  # engine matches: round-robin, cross table
    if trust_proxy:  # outermost (added last): every layer and route sees the client the proxy names
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(trust_proxy))

    # -- pages -------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        page = page_with_token((STATIC_DIR / "index.html").read_text(encoding="utf-8"), app.state.token)
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    # -- game --------------------------------------------------------------

    @app.get("/api/game")
    async def get_game() -> dict[str, Any]:
        return hub.state()

    @app.post("/api/game/new")
    async def new_game(req: NewGameRequest) -> dict[str, Any]:
        tc = TimeControl(**req.clock.model_dump()) if req.clock else None
        if req.fen:
            check_position(req.fen, "start position")
        return await hub.new_game(red=req.red, black=req.black, level=req.level, fen=req.fen, time_control=tc)

    @app.post("/api/game/move")
    async def move(req: MoveRequest) -> dict[str, Any]:
        if req.game_id is not None and req.game_id != hub.session.id:
            raise HTTPException(404, f"game {req.game_id!r} is not the current game ({hub.session.id})")
        return await hub.move(req.move)

    @app.post("/api/game/undo")
    async def undo(req: UndoRequest | None = None) -> dict[str, Any]:
        return await hub.undo(None if req is None else req.version)

    @app.post("/api/game/resign")
    async def resign() -> dict[str, Any]:
        return await hub.resign()

    @app.post("/api/game/draw")
    async def draw() -> dict[str, Any]:
        return await hub.offer_draw()

    @app.post("/api/game/hint")
    async def hint() -> dict[str, Any]:
        return await hub.hint()

    @app.post("/api/game/retry")
    async def retry_engine() -> dict[str, Any]:
        return await hub.retry_engine()

    @app.post("/api/game/open", openapi_extra=_FILE_BODY)
    async def open_pgn(request: Request) -> dict[str, Any]:
        body = await request.body()  # at most MAX_UPLOAD_BYTES (BodyLimitMiddleware)
        if not body.strip():
            raise HTTPException(400, "empty upload: send the PGN file's bytes as the request body")
        cur = hub.session
        level = cur.level
        if is_engine_key(level) and program_refusal(request) is not None:
            level = DEFAULT_LEVEL  # an added engine's games are started from this machine only
        session = await records.run(open_game_job, body, cur.players[True], cur.players[False], level)
        return await hub.replace(session)

    @app.get("/api/game/pgn")
    async def save_pgn(notation: Literal["chinese", "iccs", "wxf"] = "chinese",
                       lang: Literal["zh", "en"] | None = None) -> Response:
        text = hub.session.to_pgn(notation, lang or hub.language())
        name = f"xiangqi-{hub.session.created.replace('.', '')}-{hub.session.id[:6]}.pgn"
        return Response(text, media_type="application/x-chess-pgn; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/api/game/export")
    async def export_current(fmt: Literal["pgn", "xqf"] = "pgn",
                             notation: Literal["chinese", "iccs", "wxf"] = "chinese",
                             lang: Literal["zh", "en"] | None = None) -> Response:
        from xiangqi.app.library.records import export_game

        losses: list[str] = []
        data, media, ext = export_game(hub.session, fmt, notation, lang or hub.language(), warnings=losses)
        name = f"xiangqi-{hub.session.created.replace('.', '')}-{hub.session.id[:6]}.{ext}"
        return Response(data, media_type=media,
                        headers={"Content-Disposition": f'attachment; filename="{name}"',
                                 **warnings_header(losses)})

    @app.post("/api/record/open", openapi_extra=_FILE_BODY)
    async def record_open(request: Request, name: str = Query("", max_length=255),
                          index: int = Query(0, ge=0, le=100000),
                          first_readable: bool = Query(False)) -> Response:
        body = await request.body()  # at most MAX_UPLOAD_BYTES (BodyLimitMiddleware)
        return Response(await records.run(open_record_job, body, name, index, first_readable),
                        media_type="application/json")

    @app.post("/api/record/export", openapi_extra=_FILE_BODY)
    async def record_export(request: Request, name: str = Query("", max_length=255),
                            index: int = Query(0, ge=0, le=100000), fmt: Literal["pgn", "xqf"] = "pgn",
                            notation: Literal["chinese", "iccs", "wxf"] = "chinese") -> Response:
        body = await request.body()  # at most MAX_UPLOAD_BYTES (BodyLimitMiddleware)
        data, media, ext, losses = await records.run(convert_record_job, body, name, index, fmt, notation)
        from urllib.parse import quote

        stem = Path(name).stem if name else "record"
        disposition = (f'attachment; filename="record-saved.{ext}"; '
                       f"filename*=UTF-8''{quote(stem + '-saved.' + ext)}")
        return Response(data, media_type=media, headers={"Content-Disposition": disposition,
                                                         **warnings_header(losses)})

    @app.post("/api/game/from_record")
    async def from_record(req: FromRecordRequest) -> dict[str, Any]:
        from xiangqi.app.library.records import session_from_line

        check_position(req.fen, "record position")  # as strict as /api/game/new
        session = await asyncio.to_thread(session_from_line, req.fen, req.moves, red=req.red, black=req.black,
                                          level=req.level, headers=req.headers)
        if req.moves:
            check_position(session.board.fen(), f"position after the record's {len(req.moves)} moves")
        return await hub.replace(session)

    @app.post("/api/position/validate")
    async def position_validate(req: PositionRequest) -> dict[str, Any]:
        board, problems = validate_position(req.fen)
        over = None
        if board is not None and not problems:
            out = board.outcome()
            over = None if out is None else {"reason_zh": out.reason_zh, "reason_en": out.reason_en}
        return {"ok": not problems, "fen": board.fen() if board is not None else None,
                "problems": [{"zh": p.zh, "en": p.en, "square": p.square} for p in problems],
                "game_over": over}

    @app.get("/api/levels")
    async def get_levels() -> list[dict[str, Any]]:
        return [dataclasses.asdict(lv) for lv in levels()]

    @app.get("/api/variants/random")
    async def random_start_position() -> dict[str, Any]:
        """A 随机开局 start (:mod:`xiangqi.core.variants`): ``{"number": 0-89, "fen"}``."""
        from xiangqi.core.variants import random_start

        number, board = random_start()
        return {"number": number, "fen": board.fen()}

    # -- settings and library ---------------------------------------------------

    @app.get("/api/settings")
    async def get_settings() -> dict[str, Any]:
        return store.get_settings()

    @app.put("/api/settings")
    async def put_settings(values: dict[str, Any]) -> dict[str, Any]:
        """Change some settings (``{name: value}``; names and values:
        :data:`xiangqi.app.play.settings.SCHEMA`);
        400 naming the first unknown setting or bad value, and then nothing is stored."""
        try:
            return store.set_settings(values)
        except SettingsError as exc:
            raise HTTPException(400, str(exc)) from None

    @app.get("/api/library")
    async def library(response: Response, search: str = Query("", max_length=200),
                      result: str = Query("", max_length=16),
                      abandoned: bool = Query(False)) -> list[dict[str, Any]]:
        """The 我的对局 rows (:meth:`Store.list_games`) matching ``search`` / ``result``. Abandoned
        starts (:func:`xiangqi.app.play.store.is_abandoned`: unfinished, under 2 plies, unnamed) are left out
        unless ``abandoned=1``; the header ``X-Library-Abandoned`` always gives how many matched."""
        rows = store.list_games(search=search, result=result)
        response.headers["X-Library-Abandoned"] = str(sum(r["abandoned"] for r in rows))
        return rows if abandoned else [r for r in rows if not r["abandoned"]]

    @app.get("/api/library/{row_id}")
    async def library_game(row_id: RowId) -> dict[str, Any]:
        g = store.get_game(row_id)
        if g is None:
            raise HTTPException(404, f"no saved game with id {row_id}")
        return g

    @app.get("/api/library/{row_id}/replay")
    async def library_replay(row_id: RowId) -> dict[str, Any]:
        g = store.get_game(row_id)
        if g is None:
            raise HTTPException(404, f"no saved game with id {row_id}")
        if jieqi_api.is_jieqi_record(g["record"]):
            return jieqi_api.library_replay(row_id, g)
        s = GameSession.from_record(g["record"])
        board = s.board.root()
        fens = [board.fen()]
        for m in s.moves:
            board.push_iccs(m.iccs)
            fens.append(board.fen())
        out = s.outcome
        # red/black: the players' names as the library stored them (in the language of the day the
        # game was saved: 棋手, 电脑·初级 or Player, Computer (Beginner)); the page shows them.
        return {"id": row_id, "title": g["title"], "notes": g["notes"], "fens": fens,
                "red": g["red"], "black": g["black"], "level": g["level"],
                "moves": [{"iccs": m.iccs, "chinese": m.chinese, **({"book": True} if m.book else {})}
                          for m in s.moves],
                "opening": s.opening(),  # ECCO {code, name} from the moves, or None
                "result": None if out is None else {"result": out.result(), "reason_zh": out.reason_zh,
                                                    "reason_en": out.reason_en}}

    @app.get("/api/library/{row_id}/pgn")
    async def library_pgn(row_id: RowId, notation: Literal["chinese", "iccs", "wxf"] = "chinese",
                          lang: Literal["zh", "en"] | None = None, annotated: bool = False) -> Response:
        if annotated:  # the stored review written in (web/review_api.py); 404 when not reviewed
            text = await asyncio.to_thread(annotated_library_pgn, app, row_id, notation,
                                           lang or hub.language())
            return annotated_response(text, row_id)
        g = store.get_game(row_id)
        if g is None:
            raise HTTPException(404, f"no saved game with id {row_id}")
        if jieqi_api.is_jieqi_record(g["record"]):
            return jieqi_api.library_pgn(row_id, g, lang or hub.language())
        text = GameSession.from_record(g["record"]).to_pgn(notation, lang or hub.language())
        name = f"xiangqi-library-{row_id}.pgn"
        return Response(text, media_type="application/x-chess-pgn; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.patch("/api/library/{row_id}")
    async def library_update(row_id: RowId, req: LibraryUpdate) -> dict[str, Any]:
        if not store.update_game(row_id, title=req.title, notes=req.notes):
            raise HTTPException(404, f"no saved game with id {row_id}")
        return store.get_game(row_id) or {}

    @app.delete("/api/library/{row_id}")
    async def library_delete(row_id: RowId) -> dict[str, Any]:
        if not store.delete_game(row_id):
            raise HTTPException(404, f"no saved game with id {row_id}")
        return {"deleted": row_id}

    # -- WebSocket -------------------------------------------------------------

    @app.websocket("/ws/game/{game_id}")
    async def game_socket(ws: WebSocket, game_id: str) -> None:
        await ws.accept()
        # never name the current game here: the page asks GET /api/game
        if app.state.games.get(game_id) is not hub:
            await ws.send_json({"type": "replaced", "old": game_id})
            await ws.close(code=4404)
            return
        await clients.serve(hub, ws, game_id)  # its requests act on this game only

    return app
