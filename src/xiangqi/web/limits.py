"""Limits on what one request may make the server do: body size (counted while the body arrives),
strict JSON (UTF-8 only, no NaN/Infinity, no lone surrogates, bounded nesting, no duplicate keys)
and the error answers for them.

Every JSON body of a REST route and every WebSocket message goes through :func:`loads_strict`:
REST routes through :class:`StrictJSONRoute` (the app's route class), WebSocket messages through
:func:`receive_json_message`. :class:`BodyLimitMiddleware` refuses a body past its route's limit
with 413, from ``Content-Length`` before reading anything and else as soon as the bytes read pass
the limit, so a 400 MB upload costs at most the limit in memory. Errors are ``{"detail": "..."}``
naming what was wrong and where (offset, field, limit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Body limit of a JSON route (bytes): far above any request the page sends (a from_record line of
#: 2000 moves is about 16 KB).
JSON_BODY_LIMIT = 64 * 1024
#: Body limit of a record upload (bytes).
MAX_UPLOAD_BYTES = 2 * 1024 * 1024
#: Size limit of one WebSocket message (bytes of text).
WS_MESSAGE_LIMIT = 64 * 1024
#: uvicorn's WebSocket options for the app's servers (``xiangqi serve``/``play``, bench/bench_online.py):
#: the sans-I/O implementation on the ``websockets`` library (what uvicorn's ``auto`` picks today, named so
#: that no other install changes it; the older ``websockets`` one is deprecated and cost 40 % more CPU a
#: message) and no permessage-deflate: compressing each frame of a game (about 1 kB of JSON) cost more
#: than a third of the stack's CPU a message (a receive and two sends: 70 against 100-130 us) and a
#: compressor and decompressor per socket (about 75 kB each connection), for bytes a game hardly
#: needs (docs/DESIGN.md, "Load").
WS_SERVER_OPTIONS: dict[str, object] = {"ws": "websockets-sansio", "ws_per_message_deflate": False}
#: Deepest nesting of arrays/objects a JSON document may have (the page sends at most 3).
MAX_JSON_DEPTH = 32

_BRACKETS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_SURROGATE = re.compile("[\ud800-\udfff]")


class BadJSON(ValueError):
    """A JSON document refused by :func:`loads_strict`; ``str()`` says what and where."""


def _reject_constant(name: str) -> Any:
    raise BadJSON(f"{name} is not a JSON number (NaN and Infinity are not allowed)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BadJSON(f"number {text[:40]} is too large (it overflows to infinity)")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise BadJSON(f"duplicate key {key[:64]!r}")
        out[key] = value
    return out


def _check_depth(text: str, limit: int) -> None:
    depth = 0
    for m in _BRACKETS.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                raise BadJSON(f"nested too deeply at offset {m.start()} (limit {limit} levels)")
        elif ch in "]}":
            depth -= 1


def _check_strings(value: Any, path: str = "") -> None:
    """Raise :class:`BadJSON` naming the place of the first string (or key) with a lone surrogate."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise BadJSON(f"string at {path or 'top level'} holds a lone UTF-16 surrogate "
                          r"(an unpaired \ud800-\udfff escape)")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_strings(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                raise BadJSON(f"key at {path or 'top level'} holds a lone UTF-16 surrogate")
            _check_strings(item, f"{path}.{key}" if path else key)


def loads_strict(data: bytes | str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value in ``data`` (UTF-8 bytes, or text), parsed strictly.

    Refused with :class:`BadJSON` (its text names the offset or the place): bytes that are not
    UTF-8 (UTF-16/32 included; RFC 8259 §8.1), nesting deeper than ``max_depth``, ``NaN`` /
    ``Infinity`` / numbers overflowing to infinity, integers longer than Python's limit, lone
    UTF-16 surrogates (``"\\ud800"``), duplicate keys, and anything ``json`` refuses. A UTF-8 BOM
    is skipped. Never raises RecursionError.
    """
    if isinstance(data, bytes | bytearray):
        if data[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(data) >= 2 and b"\x00" in data[:4]):
            raise BadJSON("is not UTF-8 (it looks like UTF-16 or UTF-32): JSON must be sent as UTF-8")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadJSON(f"is not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                          f"({exc.reason})") from None
    else:
        text = data
        if _SURROGATE.search(text):
            raise BadJSON("holds a lone UTF-16 surrogate character")
    if text.startswith("\ufeff"):
        text = text[1:]
    # the nesting cannot pass the number of brackets that open (those inside strings included): a
    # message with few of them (every message of a game) needs no scan
    if text.count("[") + text.count("{") > max_depth:
        _check_depth(text, max_depth)
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                           object_pairs_hook=_no_duplicates)
    except BadJSON:
        raise
    except json.JSONDecodeError as exc:
        raise BadJSON(f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} "
                      f"(offset {exc.pos})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
        raise BadJSON(f"is not acceptable JSON: {exc}") from None
    # a lone surrogate in a parsed string comes from a \u escape (the text itself has none: checked
    # above, and UTF-8 decoding refuses them): without a backslash there is nothing to look for
    if "\\" in text:
        _check_strings(value)
    return value


class StrictJSONRequest(Request):
    """A request whose :meth:`json` is :func:`loads_strict`; a refused body is a 422 naming why (422
    as FastAPI answers JSON it cannot decode)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = loads_strict(await self.body())
            except BadJSON as exc:
                raise HTTPException(422, f"request body {exc}") from None
        return self._json


class StrictJSONRoute(APIRoute):
    """The app's route class: FastAPI parses JSON bodies through :class:`StrictJSONRequest`."""

    def get_route_handler(self) -> Callable[[Request], Any]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Any:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict_handler


async def receive_json_message(ws: Any, limit: int = WS_MESSAGE_LIMIT) -> Any:
    """The next WebSocket message of ``ws`` parsed by :func:`loads_strict`: a text frame, or a
    binary frame holding UTF-8 JSON (read the same way; tests/web/test_bad_input.py).

    Raises :class:`starlette.websockets.WebSocketDisconnect` when the client has gone and
    :class:`BadJSON` (a ``ValueError``; the socket stays usable) for a message that is too long
    (``limit`` bytes), not UTF-8 or not strict JSON.
    """
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        from starlette.websockets import WebSocketDisconnect

        raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
    text = message.get("text")
    data: bytes | str = text if text is not None else (message.get("bytes") or b"")
    # a character is at most 4 bytes of UTF-8: a short text needs no encoding to be measured
    if isinstance(data, bytes) or 4 * len(data) > limit:
        size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise BadJSON(f"message too large: {size} bytes (limit {limit})")
    try:
        return loads_strict(data)
    except BadJSON as exc:
        raise BadJSON(f"message {exc}") from None


class BodyTooLarge(HTTPException):
    """413: a request body past its route's limit (raised while the body is being read)."""

    def __init__(self, limit: int, size: int | None = None) -> None:
        got = f"{size} bytes" if size is not None else f"more than {limit} bytes"
        # Connection: close, so that the server stops reading (and the client stops sending) the rest
        super().__init__(413, f"request body too large: {got} (limit {limit} bytes for this route)",
                         headers={"Connection": "close"})


class BodyLimitMiddleware:
    """ASGI middleware: the body of an HTTP request to ``path`` may have at most ``routes[path]``
    bytes (``default`` for other paths).

    A ``Content-Length`` past the limit is answered 413 before anything is read (a malformed one
    400); otherwise ``receive`` counts the bytes as they arrive and raises :class:`BodyTooLarge`
    (answered 413 by the app's exception handling) the moment the count passes the limit.
    """

    def __init__(self, app: ASGIApp, *, default: int = JSON_BODY_LIMIT,
                 routes: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.default = default
        self.routes = dict(routes or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.routes.get(scope.get("path", ""), self.default)
        declared = [v for k, v in scope.get("headers", []) if k == b"content-length"]
        if declared:
            try:
                size = int(declared[0])
                if size < 0 or len(declared) > 1 and len(set(declared)) > 1:
                    raise ValueError
            except ValueError:
                await _answer(send, 400, f"bad Content-Length header {declared[0][:40]!r}")
                return
            if size > limit:
                await _answer(send, 413, BodyTooLarge(limit, size).detail)
                return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watch(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watch)
        except BodyTooLarge as exc:  # raised outside the app's own handlers (e.g. by a middleware)
            if started:
                raise
            await _answer(send, 413, exc.detail)


async def _answer(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _where(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    if not parts:
        return "request"
    kind, rest = parts[0], parts[1:]
    name = ".".join(rest)
    if kind == "body":
        return f"body field {name!r}" if name else "body"
    if kind in ("path", "query", "header", "cookie"):
        return f"{kind} parameter {name!r}"
    return ".".join(parts)


def describe_validation_error(exc: RequestValidationError) -> dict[str, Any]:
    """``{"detail": "<where>: <what>; …", "errors": [{"loc", "msg", "type"}]}`` for a 422: the text
    names each field (an unknown one as such); the input values are never echoed back."""
    errors = []
    texts = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        kind = str(err.get("type", ""))
        msg = str(err.get("msg", ""))
        if kind == "extra_forbidden":
            field = ".".join(str(p) for p in loc[1:])
            text = f"unknown field {field!r} in the {loc[0] if loc else 'request'}"
        elif kind == "missing":
            text = f"{_where(loc)} is missing"
        else:
            text = f"{_where(loc)}: {msg}"
        texts.append(text)
        errors.append({"loc": loc, "msg": msg, "type": kind})
    shown = "; ".join(texts[:5]) + (f"; and {len(texts) - 5} more" if len(texts) > 5 else "")
    return {"detail": shown or "invalid request", "errors": errors}


async def validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Exception handler for :class:`RequestValidationError`: 422 with :func:`describe_validation_error`."""
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(describe_validation_error(exc), status_code=422)
