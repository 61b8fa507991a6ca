"""The public server's online routes, its WebSockets and its guard (docs/ONLINE_API.md is the contract).

:func:`install` adds them to the app of ``xiangqi serve --public``: the :class:`OnlineService`
(``app.state.online``), the ``/api/online/…`` routes, ``/ws/online/lobby`` and
``/ws/online/game/{id}``, the index page with the browser's CSRF token, and :class:`PublicGuard`
in place of the local server's :class:`~xiangqi.web.security.LocalGuard`.

:class:`PublicGuard`, one ASGI middleware before every route:

1. A repeated ``Host``, ``Origin``, ``Cookie`` or token header: **400**.
2. Only the public paths answer (:data:`PUBLIC_PATHS`; GET only for the games database's read
   routes); the local game's routes, the settings, the library and the analysis engine are **404**:
   they belong to the person at the machine, not to the internet.
3. ``Sec-Fetch-Site`` ``cross-site``/``same-site``: **403**, except a top-level GET navigation
   (a challenge link opened from a message).
4. ``Origin``, when sent, must be the request's own (``http(s)://`` + its ``Host``): **403** otherwise.
   A WebSocket handshake must carry one (every browser sends it).
5. CSRF: every POST/PUT/PATCH/DELETE and every WebSocket carries the browser's token
   (``X-Xiangqi-Token`` header, or ``?token=`` on a WebSocket), which must be the HMAC of its
   ``xq_csrf`` cookie under the server's secret (signed double submit, OWASP's CSRF cheat sheet):
   **403** otherwise. A foreign page can neither read the token (it is in our HTML) nor set the
   header without a CORS preflight that is never granted; ``SameSite=Lax`` keeps the session cookie
   off its cross-site POSTs too.

Cookies are ``HttpOnly; SameSite=Lax; Path=/`` and ``Secure`` when the request came over https
(the scheme, or ``X-Forwarded-Proto: https`` from the proxy in front).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import sqlalchemy as sa
from fastapi import APIRouter, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import HTTPConnection

from xiangqi.core.board import RED
from xiangqi.core.errors import XiangqiError
from xiangqi.online.accounts import SESSION_DAYS, AccountError, RateLimited
from xiangqi.online.lobby import CATEGORIES, LobbyError
from xiangqi.online.rooms import OnlineConfig, OnlineRoom, OnlineService
from xiangqi.online.store import RETRY_AFTER_S, DatabaseUnavailable, is_outage
from xiangqi.web.clients import Client, read_message
from xiangqi.web.security import (
    TOKEN_HEADER,
    _without_token,
    counted_address,
    given_token,
    page_with_token,
    request_headers,
)

__all__ = ["install", "local_router", "PublicGuard", "PUBLIC_PATHS", "SESSION_COOKIE", "GUEST_COOKIE",
           "CSRF_COOKIE"]

STATIC_DIR = Path(__file__).parent / "static"
SESSION_COOKIE = "xq_session"
GUEST_COOKIE = "xq_guest"
CSRF_COOKIE = "xq_csrf"
#: Path prefixes a public server answers (any method); GET_ONLY: read-only extras.
PUBLIC_PATHS = ("/api/online/", "/ws/online/", "/static/")
GET_ONLY = ("/api/levels", "/api/db/", "/api/explore")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ACTIONS = ("move", "resign", "draw_offer", "draw_accept", "draw_decline", "takeback_request",
           "takeback_accept", "takeback_decline", "abort", "claim")


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in headers.get("cookie", "").split(";"):
        k, _, v = part.strip().partition("=")
        if k and k not in out:
            out[k] = v
    return out


class PublicGuard:
    """ASGI middleware of the public server (module text); ``service`` checks the CSRF tokens."""

    def __init__(self, app: Any, *, service: OnlineService) -> None:
        self.app = app
        self.service = service

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        """(status, reason) when ``scope`` must be refused, else None."""
        headers, repeated = request_headers(scope)
        if repeated & {"host", "origin", "cookie", TOKEN_HEADER.lower()}:
            return 400, f"repeated header(s): {', '.join(sorted(repeated))}"
        path = scope.get("path", "")
        method = scope.get("method", "GET").upper()
        websocket = scope["type"] == "websocket"
        public = path == "/" or path.startswith(PUBLIC_PATHS)
        if not public and not (method in SAFE_METHODS and not websocket
                               and (path in GET_ONLY or path.startswith(GET_ONLY))):
            return 404, "not available on a public server"
        site = headers.get("sec-fetch-site")
        if site is not None and site.strip().lower() not in ("same-origin", "none"):
            navigation = (headers.get("sec-fetch-mode", "").strip().lower() == "navigate"
                          and method in ("GET", "HEAD") and not websocket)
            if not navigation:
                return 403, f"requests from other web pages are refused (Sec-Fetch-Site {site!r})"
        host = headers.get("host", "").strip().lower()
        origin = headers.get("origin")
        if origin is not None:
            try:
                parts = urlsplit(origin.strip())
            except ValueError:
                parts = None
            if (parts is None or parts.scheme not in ("http", "https") or not host
                    or parts.netloc.lower() != host or parts.path or parts.query):
                return 403, f"requests from other web pages are refused (Origin {origin!r})"
        elif websocket:
            return 403, "a WebSocket handshake must carry its page's Origin"
        if websocket or method not in SAFE_METHODS:
            if not self.service.csrf_ok(_cookies(headers).get(CSRF_COOKIE), given_token(scope, headers)):
                return 403, ("missing or wrong CSRF token: send the page's token in the X-Xiangqi-Token "
                             "header (or ?token= on a WebSocket); GET /api/online/csrf gives it")
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if scope["type"] == "websocket":
            scope["query_string"] = _without_token(scope.get("query_string", b""))
        if refused is not None:
            status, detail = refused
            code = {400: "bad_request", 404: "not_found"}.get(status,
                                                              "csrf" if "CSRF" in detail else "origin")
            body = json.dumps({"detail": detail, "code": code}).encode()
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": status, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]})
                await send({"type": "http.response.body", "body": body})
            else:
                await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        host = next((v for k, v in scope.get("headers") or () if k.lower() == b"host"), b"").decode("latin-1")
        csp = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data: blob:; media-src 'self' data: blob:; font-src 'self' data:; "
               f"connect-src 'self' ws://{host} wss://{host}; object-src 'none'; base-uri 'none'; "
               "form-action 'self'; frame-ancestors 'none'")
        extra = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                 (b"referrer-policy", b"same-origin"), (b"cross-origin-resource-policy", b"same-origin"),
                 (b"cross-origin-opener-policy", b"same-origin"), (b"content-security-policy", csp.encode())]

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", ())}
                message = dict(message)
                message["headers"] = [*message.get("headers", ()), *(h for h in extra if h[0] not in have)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Credentials(_Strict):
    """Body of register and login."""

    username: str = Field(max_length=100)
    password: str = Field(max_length=200)


class SeekRequest(_Strict):
    """Body of ``POST /seeks`` and ``POST /challenges``."""

    time_control: str = Field(max_length=16)
    rated: bool = False
    color: Literal["red", "black", "random"] = "random"


class ComputerRequest(_Strict):
    """Body of ``POST /computer``."""

    level: str = Field(max_length=20)
    time_control: str = Field(max_length=16)
    color: Literal["red", "black", "random"] = "random"


class ActionRequest(_Strict):
    """Body of ``POST /games/{id}/{action}``."""

    move: str | None = Field(default=None, min_length=4, max_length=6)
    version: int | None = None


def _https(headers: Any, scheme: str) -> bool:
    return scheme in ("https", "wss") or headers.get("x-forwarded-proto", "").lower() == "https"


def _set_cookie(resp: Response, request: Request, name: str, value: str, days: int = SESSION_DAYS) -> None:
    resp.set_cookie(name, value, max_age=days * 86400, path="/", httponly=True, samesite="lax",
                    secure=_https(request.headers, request.url.scheme))


def _refused(exc: Exception) -> JSONResponse:
    headers = {}
    if isinstance(exc, RateLimited):
        status, code, retry = 429, "rate_limited", exc.retry_after
    elif isinstance(exc, LobbyError):
        status, code, retry = exc.status, exc.code, exc.retry_after
    elif isinstance(exc, AccountError):
        taken = "taken" in str(exc)
        status = 409 if taken else 400
        code = "taken" if taken else ("bad_login" if exc.field == "login" else "bad_request")
        retry = None
    else:
        status, code, retry = 400, "bad_request", None
    body: dict[str, Any] = {"detail": str(exc), "code": code}
    if isinstance(exc, AccountError) and not isinstance(exc, RateLimited):
        body["field"] = exc.field
    if retry is not None:
        body["retry_after"] = retry
        headers["Retry-After"] = str(retry)
    return JSONResponse(body, status_code=status, headers=headers)


#: WebSocket close code "Try Again Later" (RFC 6455 registry, IANA): the socket could not be served
#: because the database is unreachable; the page reconnects after the reason's delay.
WS_TRY_AGAIN = 1013


def _unavailable(exc: BaseException) -> DatabaseUnavailable:
    return exc if isinstance(exc, DatabaseUnavailable) else DatabaseUnavailable()


def unavailable_response(exc: BaseException) -> JSONResponse:
    """The answer to any request that met a database outage (:func:`~xiangqi.online.store.is_outage`),
    whatever the route: 503, ``Retry-After``, ``{"detail", "code": "db_unavailable", "retry_after"}``;
    logged as one line (no traceback). Another database error is not an outage and is raised on (a
    full SQLite disk: 507 through the store's errors)."""
    if not is_outage(exc):
        raise exc
    err = _unavailable(exc)
    cause = exc if not isinstance(exc, DatabaseUnavailable) else (exc.__cause__ or exc)
    orig = getattr(cause, "orig", None) or cause
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0][:200]
    logging.getLogger(__name__).warning("online: a request met a database outage: %s", first)
    return JSONResponse({"detail": str(err), "code": err.code, "retry_after": err.retry_after},
                        status_code=503, headers={"Retry-After": str(err.retry_after),
                                                  "Cache-Control": "no-store"})


async def _close_unavailable(ws: WebSocket) -> None:
    """Accept and close a socket that cannot be served for a database outage: code 1013 (try again
    later) and a reason that says so, never a reset connection."""
    with contextlib.suppress(Exception):
        await ws.accept()
    with contextlib.suppress(Exception):
        await ws.close(code=WS_TRY_AGAIN,
                       reason=f"the database is unreachable: try again in {RETRY_AFTER_S} s")


def _need(who: Any) -> Any:
    if who is None:
        raise LobbyError("log in or play as a guest first", 401, "login_required")
    return who


def install(app: FastAPI, config: OnlineConfig | None = None, *, data_dir: Any = None) -> OnlineService:
    """Make ``app`` a public server (module text); returns the service (also ``app.state.online``).
    Call it before the app's own ``/`` route is defined and before its LocalGuard would be added."""
    config = config or OnlineConfig()
    service = OnlineService(config, app.state.games, data_dir=data_dir,
                            games_db=getattr(app.state, "games_db", None))
    app.state.online = service
    app.add_exception_handler(LobbyError, lambda _r, e: _refused(e))
    app.add_exception_handler(AccountError, lambda _r, e: _refused(e))
    # Every route in one place: a database outage is a 503 with Retry-After, never a 500.
    for outage in (DatabaseUnavailable, sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError):
        app.add_exception_handler(outage, lambda _r, e: unavailable_response(e))
    app.add_middleware(PublicGuard, service=service)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any):
        redis_bus = None
        if config.redis_url:
            from xiangqi.online.bus import RedisBus

            redis_bus = RedisBus(config.redis_url)
            await redis_bus.start()
            service.bus = redis_bus
        await service.start_shared()
        n = service.resume_playing()
        if n:
            logging.getLogger(__name__).info("took up %d online games again", n)
        if not service.shared:  # (the shared mode's sweep does it every few seconds)
            service.spawn(service.settle_at_start())
        yield
        await service.shutdown()
        if redis_bus is not None:
            await redis_bus.close()

    router = APIRouter(lifespan=lifespan)

    def who_of(request: Request) -> Any:  # for the plain def routes (FastAPI's thread pool)
        return service.identity(request.cookies)

    async def who_async(request: Request) -> Any:  # for the async ones (the session off the loop)
        return await service.identity_async(request.cookies)

    def address(conn: HTTPConnection) -> str:  # what its limits count by: an IPv6 client's /64
        return counted_address(conn.client.host) if conn.client else "?"

    # -- the page -------------------------------------------------------------------------------

    def csrf_cookie(request: Request) -> tuple[str, bool]:
        value = request.cookies.get(CSRF_COOKIE)
        if value and 20 <= len(value) <= 100:
            return value, False
        return secrets.token_urlsafe(24), True

    @router.get("/", include_in_schema=False)
    async def index(request: Request) -> HTMLResponse:
        value, new = csrf_cookie(request)
        page = page_with_token((STATIC_DIR / "index.html").read_text(encoding="utf-8"),
                               service.csrf_token(value))
        resp = HTMLResponse(page, headers={"Cache-Control": "no-store"})
        if new:
            _set_cookie(resp, request, CSRF_COOKIE, value, 365)
        return resp

    @router.get("/api/online/csrf")
    async def csrf(request: Request) -> JSONResponse:
        value, new = csrf_cookie(request)
        resp = JSONResponse({"token": service.csrf_token(value)}, headers={"Cache-Control": "no-store"})
        if new:
            _set_cookie(resp, request, CSRF_COOKIE, value, 365)
        return resp

    @router.get("/api/online/config")
    def get_config(request: Request) -> dict[str, Any]:
        return {"public": True, "me": service.me(who_of(request)),
                "time_controls": [p.view() for p in service.presets.values()], "categories": list(CATEGORIES),
                "computers": service.computers(),
                "limits": {"seeks_per_minute": config.seeks_per_minute,
                           "sockets_per_ip": config.sockets_per_ip}}

    # -- accounts (argon2 in the thread pool: plain def routes) -------------------------------------

    def logged_in(request: Request, user: Any, token: str, status: int = 200) -> JSONResponse:
        resp = JSONResponse(service.me(service.user_identity(user)), status_code=status)
        _set_cookie(resp, request, SESSION_COOKIE, token)
        return resp

    @router.post("/api/online/register", status_code=201)
    def register(req: Credentials, request: Request) -> JSONResponse:
        user, token = service.register(req.username, req.password, address(request))
        return logged_in(request, user, token, 201)

    @router.post("/api/online/login")
    def login(req: Credentials, request: Request) -> JSONResponse:
        user, token = service.login(req.username, req.password, address(request))
        return logged_in(request, user, token)

    @router.post("/api/online/logout")
    def logout(request: Request) -> JSONResponse:
        service.accounts.logout(request.cookies.get(SESSION_COOKIE))
        resp = JSONResponse({"ok": True})
        resp.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax",
                           secure=_https(request.headers, request.url.scheme))
        return resp

    @router.post("/api/online/guest")
    def guest(request: Request) -> JSONResponse:
        who = who_of(request)
        if who is not None:
            return JSONResponse(service.me(who))
        ident, cookie = service.guest_cookie()
        resp = JSONResponse(service.me(ident))
        _set_cookie(resp, request, GUEST_COOKIE, cookie)
        return resp

    @router.get("/api/online/me")
    def me(request: Request) -> dict[str, Any]:
        return service.me(who_of(request))

    # -- lobby ----------------------------------------------------------------------------------------

    @router.get("/api/online/lobby")
    def lobby() -> dict[str, Any]:
        return service.lobby_view()

    @router.post("/api/online/seeks", status_code=201)
    async def create_seek(req: SeekRequest, request: Request) -> dict[str, Any]:
        return await service.create_seek_async(_need(await who_async(request)), req.time_control,
                                               req.rated, req.color, address(request))

    @router.delete("/api/online/seeks/{seek_id}")
    async def cancel_seek(seek_id: str, request: Request) -> dict[str, Any]:
        await service.cancel_seek(_need(await who_async(request)), seek_id)
        return {"ok": True}

    @router.post("/api/online/seeks/{seek_id}/accept")
    async def accept_seek(seek_id: str, request: Request) -> dict[str, Any]:
        return {"game_id": await service.accept_seek(_need(await who_async(request)), seek_id,
                                                     address(request))}

    @router.post("/api/online/computer")
    async def computer(req: ComputerRequest, request: Request) -> dict[str, Any]:
        return {"game_id": await service.computer_game(_need(await who_async(request)), req.level,
                                                       req.time_control, req.color, address(request))}

    @router.post("/api/online/challenges", status_code=201)
    async def create_challenge(req: SeekRequest, request: Request) -> dict[str, Any]:
        return await service.create_challenge(_need(await who_async(request)), req.time_control, req.rated,
                                              req.color, address(request))

    @router.get("/api/online/challenges/{challenge_id}")
    async def get_challenge(challenge_id: str) -> dict[str, Any]:
        return await service.challenge(challenge_id)

    @router.post("/api/online/challenges/{challenge_id}/accept")
    async def accept_challenge(challenge_id: str, request: Request) -> dict[str, Any]:
        return {"game_id": await service.accept_challenge(_need(await who_async(request)), challenge_id,
                                                          address(request))}

    @router.delete("/api/online/challenges/{challenge_id}")
    async def cancel_challenge(challenge_id: str, request: Request) -> dict[str, Any]:
        await service.cancel_challenge(_need(await who_async(request)), challenge_id)
        return {"ok": True}

    # -- games ---------------------------------------------------------------------------------------------

    async def room_of(game_id: str) -> OnlineRoom:
        room = await service.room_async(game_id)
        if room is None:
            raise LobbyError(f"no online game {game_id!r}", 404, "not_found")
        return room

    @router.get("/api/online/games/{game_id}")
    async def game_state(game_id: str) -> dict[str, Any]:
        return (await room_of(game_id)).state()

    @router.post("/api/online/games/{game_id}/{action}")
    async def game_action(game_id: str, action: str, request: Request,
                          req: ActionRequest | None = None) -> Any:
        room = await room_of(game_id)
        if action not in ACTIONS:
            raise LobbyError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}", 404, "not_found")
        msg = {} if req is None else req.model_dump(exclude_none=True)
        try:
            await room.act(await who_async(request), action, msg)
        except LobbyError as exc:
            if exc.code == "stale_version":
                resp = _refused(exc)
                body = json.loads(resp.body)
                body["state"] = room.state()
                return JSONResponse(body, status_code=409)
            raise
        except DatabaseUnavailable:
            raise  # (503 with Retry-After: unavailable_response)
        except XiangqiError as exc:  # a storage failure or a session refusal
            status = getattr(exc, "status", 409)
            return JSONResponse({"detail": str(exc), "code": "conflict"}, status_code=status)
        return room.state()

    @router.get("/api/online/games/{game_id}/pgn")
    async def game_pgn(game_id: str) -> PlainTextResponse:
        room = await room_of(game_id)
        return PlainTextResponse(room.session.to_pgn("chinese", "zh"), headers={
            "Content-Disposition": f'attachment; filename="xiangqi-online-{game_id[:8]}.pgn"'})

    # -- players -------------------------------------------------------------------------------------------

    @router.get("/api/online/leaderboard")
    def leaderboard(category: Literal["bullet", "blitz", "rapid", "classical"] = "blitz",
                    limit: int = Query(50, ge=1, le=200)) -> dict[str, Any]:
        return service.leaderboard(category, limit)

    @router.get("/api/online/players/{username}")
    def player(username: str) -> dict[str, Any]:
        if len(username) > 100:
            raise LobbyError("no such player", 404, "not_found")
        return service.profile(username)

    # -- WebSockets ---------------------------------------------------------------------------------------

    async def opened(ws: WebSocket) -> str | None:
        addr = address(ws)
        try:
            await service.socket_opened_async(addr)
        except LobbyError:
            await ws.accept()
            await ws.close(code=4429, reason="too many connections from this address")
            return None
        return addr

    @router.websocket("/ws/online/lobby")
    async def lobby_socket(ws: WebSocket) -> None:
        addr = await opened(ws)
        if addr is None:
            return
        try:
            try:
                who = await service.identity_async(ws.cookies)
            except sa.exc.SQLAlchemyError as exc:
                if not is_outage(exc):
                    raise
                await _close_unavailable(ws)
                return
            await ws.accept()
            client = Client(ws)
            subs = [service.bus.subscribe("lobby", client.send)]
            if who is not None:
                subs.append(service.bus.subscribe(f"user:{who.id}", client.send))
            try:  # (read after subscribing: a change meanwhile comes as a message, none is missed)
                view = await service.lobby_view_async()
            except sa.exc.SQLAlchemyError as exc:
                for sub in subs:
                    sub.close()
                await client.close()
                if not is_outage(exc):
                    raise
                await _close_unavailable(ws)
                return
            client.send({"type": "lobby", "lobby": view})
            try:
                while not client.dropped:
                    try:
                        msg = await read_message(ws)
                    except ValueError as exc:
                        client.send({"type": "error", "detail": str(exc), "code": "bad_request"})
                        continue
                    if isinstance(msg, dict) and msg.get("type") == "ping":
                        client.send({"type": "pong"})
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                for sub in subs:
                    sub.close()
                await client.close()
                if who is not None and service.bus.subscribers(f"user:{who.id}") == 0:
                    await service.drop_seeks_of(who.id)  # nobody left to play the seek
        finally:
            service.socket_closed(addr)

    @router.websocket("/ws/online/game/{game_id}")
    async def game_socket(ws: WebSocket, game_id: str) -> None:
        addr = await opened(ws)
        if addr is None:
            return
        try:
            try:
                room = await service.room_async(game_id)
                who = None if room is None else await service.identity_async(ws.cookies)
            except sa.exc.SQLAlchemyError as exc:
                if not is_outage(exc):
                    raise
                await _close_unavailable(ws)
                return
            if room is None:
                await ws.accept()
                await ws.close(code=4404, reason="no such game")
                return
            await ws.accept()
            await serve_game(room, who, ws)
        finally:
            service.socket_closed(addr)

    async def serve_game(room: OnlineRoom, who: Any, ws: WebSocket) -> None:
        client = Client(ws)
        if service.shared:  # this process's copy of the room sends to its own sockets (from hello on)
            sub = None
            color = room.connect(who)
            room.add_client(client)
        else:
            sub = service.bus.subscribe(room.channel, client.send)
            color = room.connect(who)
        pings: dict[int, float] = {}

        async def pinger() -> None:
            n = 0
            while True:
                await asyncio.sleep(config.ping_s)
                n += 1
                pings[n] = time.monotonic()
                for k in [k for k in pings if k < n - 5]:
                    del pings[k]
                client.send({"type": "ping", "id": n, "server": True})

        ping_task = asyncio.get_running_loop().create_task(pinger()) if color is not None else None
        try:
            you = None if color is None else ("red" if color == RED else "black")
            client.send({"type": "hello", "you": you, "game_id": room.session.id})
            client.send({"type": "state", "state": room.state()})  # the whole game: the updates follow on
            await room.broadcast()  # the watch count or the presence changed: the others see it
            while not client.dropped:
                try:
                    msg = await read_message(ws)
                except ValueError as exc:
                    client.send({"type": "error", "detail": str(exc), "code": "bad_request"})
                    continue
                if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
                    client.send({"type": "error", "detail": "a message is an object with a string 'type'",
                                 "code": "bad_request"})
                    continue
                kind = msg["type"]
                if kind == "pong":
                    sent = pings.pop(msg.get("id"), None) if isinstance(msg.get("id"), int) else None
                    if sent is not None and color is not None:
                        room.note_rtt(color, time.monotonic() - sent)
                    continue
                if kind == "ping":
                    client.send({"type": "pong", "id": msg.get("id")})
                    continue
                if kind == "state":
                    client.send({"type": "state", "state": room.state()})
                    continue
                try:
                    await room.act(who, kind, msg)
                except DatabaseUnavailable as exc:  # refused, nothing changed; the socket stays open
                    client.send({"type": "error", "detail": str(exc), "code": exc.code,
                                 "retry_after": exc.retry_after, "request": kind})
                    client.send({"type": "state", "state": room.state()})
                except LobbyError as exc:
                    client.send({"type": "error", "detail": str(exc), "code": exc.code, "request": kind})
                    if exc.code == "stale_version":
                        client.send({"type": "state", "state": room.state()})
                except XiangqiError as exc:
                    client.send({"type": "error", "detail": str(exc), "code": "conflict", "request": kind})
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            if ping_task is not None:
                ping_task.cancel()
            if sub is not None:
                sub.close()
            room.remove_client(client)
            room.disconnect(who, color)
            await client.close()
            with contextlib.suppress(Exception):
                await room.broadcast()

    app.include_router(router)
    return service



def local_router() -> APIRouter:
    """The one online route of the local server: ``GET /api/online/config`` → ``{"public": false}``
    (the page then shows no online features)."""
    router = APIRouter()

    @router.get("/api/online/config")
    async def config() -> dict[str, Any]:
        return {"public": False}

    return router
