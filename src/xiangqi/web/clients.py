"""The game's WebSocket clients: a bounded send queue per page and the message loop.

Every page connected to ``/ws/game/{id}`` is a :class:`Client`. What the server
sends it goes into the client's own queue, drained by its own sender task, so a
page that stops reading (a frozen tab, a dead network) delays no one: when its
queue is full or one send takes longer than :data:`SEND_TIMEOUT_S`, it is dropped
(the socket closed with 1013 "try again later"); the page reconnects and gets the
current state. :func:`serve` runs one page's message loop after the handshake.

Messages from the page (JSON objects with a string ``type``):
``{"type": "move", "move": "h2e2"}``, ``{"type": "undo", "version": N}`` (``version``: the state
version the page showed; optional), ``{"type": "resign"}``, ``{"type": "draw"}``,
``{"type": "hint"}``, ``{"type": "retry"}`` (let the computer try again after it failed) and
``{"type": "state"}`` (send the current state: a page that saw a version gap asks for it).

Messages to the page: ``{"type": "state", "state": {..., "version": N}}`` after every change,
``{"type": "hint", "hint": {...}}`` (or ``"hint": null`` with ``"cancelled": true`` and the
``version`` it was asked at when the hint was dropped), ``{"type": "replaced", "id", "old"}`` and
``{"type": "error", "detail", "request"}`` (a refused undo also carries ``"version"``, the current
one, and is followed by the state).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from fastapi import WebSocket, WebSocketDisconnect

from xiangqi.app.play.hub import Encoded
from xiangqi.app.play.session import SessionError, StaleVersionError
from xiangqi.core.errors import XiangqiError

if TYPE_CHECKING:
    from xiangqi.app.play.hub import GameHub

log = logging.getLogger(__name__)

#: Messages that may wait for one page; one more drops it (a state message is a few kB).
SEND_QUEUE_LIMIT = 64
#: Seconds one message may take to go out before the page counts as dead and is dropped.
SEND_TIMEOUT_S = 15.0
#: Seconds the close handshake of a dropped page may take before its socket is left to itself.
CLOSE_TIMEOUT_S = 2.0
#: WebSocket close code for a dropped page (1013: try again later).
DROPPED_CODE = 1013


class Client:
    """One connected page: its socket, a bounded send queue and the task that drains it.

    ``on_drop(client)`` is called once when the client is dropped (queue full, a send too slow
    or failed, :meth:`drop`). Create it on the event loop that serves the socket.
    """

    def __init__(self, ws: WebSocket, *, on_drop: Any = None, queue_limit: int = SEND_QUEUE_LIMIT,
                 send_timeout_s: float = SEND_TIMEOUT_S) -> None:
        self.ws = ws
        self.dropped = False
        self.reason = ""
        self._on_drop = on_drop
        self._send_timeout_s = send_timeout_s
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=queue_limit)
        self._sender = asyncio.get_running_loop().create_task(self._drain())
        self.tasks: set[asyncio.Task[None]] = set()  # hints and draw offers being answered
        self._closing: asyncio.Task[None] | None = None

    def send(self, msg: dict[str, Any]) -> bool:
        """Queue ``msg`` for this page without waiting; False (and the page dropped) when it cannot
        keep up."""
        if self.dropped:
            return False
        try:
            self._queue.put_nowait(msg)
        except asyncio.QueueFull:
            self.drop(f"{self._queue.qsize()} messages waiting: the page does not read")
            return False
        return True

    @property
    def pending(self) -> int:
        """Messages queued and not yet sent."""
        return self._queue.qsize()

    async def _drain(self) -> None:
        while True:
            msg = await self._queue.get()
            try:
                async with asyncio.timeout(self._send_timeout_s):
                    if isinstance(msg, Encoded):
                        await self.ws.send_text(msg.text())
                    else:
                        await self.ws.send_json(msg)
            except TimeoutError:
                self.drop(f"a message took more than {self._send_timeout_s:g} s to send")
                return
            except Exception as exc:  # the socket is closed
                self.drop(f"send failed: {type(exc).__name__}")
                return

    def drop(self, reason: str) -> None:
        """Stop serving this page: forget it, cancel its sends and tasks, close its socket (in the
        background, bounded by :data:`CLOSE_TIMEOUT_S`). Idempotent."""
        if self.dropped:
            return
        self.dropped = True
        self.reason = reason
        log.info("dropping a game page: %s", reason)
        if self._on_drop is not None:
            self._on_drop(self)
        current = asyncio.current_task()
        if self._sender is not current:
            self._sender.cancel()
        for t in list(self.tasks):
            if t is not current:
                t.cancel()
        self._closing = asyncio.get_running_loop().create_task(self._close())

    async def _close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(code=DROPPED_CODE), CLOSE_TIMEOUT_S)

    def spawn(self, coro: Any) -> None:
        """Answer a long request (hint, draw offer) from a task, so that this page's next messages
        (a move, an undo) are not queued behind it."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def close(self) -> None:
        """End the client after its page disconnected: the sender and tasks are stopped."""
        self.dropped = True
        for t in [self._sender, *self.tasks]:
            t.cancel()
        for t in [self._sender, *list(self.tasks)]:
            with contextlib.suppress(BaseException):
                await t


async def read_message(ws: WebSocket) -> Any:
    """The next message of the page, parsed by :func:`xiangqi.web.limits.receive_json_message`
    (strict JSON, bounded size and nesting). Raises :class:`~xiangqi.web.limits.BadJSON` (a
    ValueError; the socket stays usable) for a frame that is not strict JSON text,
    WebSocketDisconnect when the page went."""
    from xiangqi.web.limits import receive_json_message

    return await receive_json_message(ws)


async def serve(hub: GameHub, ws: WebSocket, game_id: str | None = None) -> None:
    """Serve one page on an accepted WebSocket until it disconnects or is dropped. ``game_id``: the game
    the socket was opened for; once another game replaces it, the socket's requests that act on a
    game are refused (:data:`ACTIONS`, see :func:`handle`)."""
    client = Client(ws, on_drop=hub.remove_client)
    hub.add_client(client)
    try:
        client.send({"type": "state", "state": hub.state()})
        while not client.dropped:
            try:
                msg = await read_message(ws)
            except ValueError as exc:  # BadJSON says what is wrong and where
                client.send({"type": "error", "detail": str(exc)})
                continue
            await handle(hub, client, msg, game_id)
    except WebSocketDisconnect:
        pass
    except RuntimeError:  # the socket was closed under us (dropped)
        if not client.dropped:
            raise
    finally:
        hub.remove_client(client)
        await client.close()


async def _send_hint(hub: GameHub, client: Client) -> None:
    from xiangqi.app.play.hub import HintCancelledError

    try:
        msg: dict[str, Any] = {"type": "hint", "hint": await hub.hint(client)}
    except HintCancelledError as exc:
        msg = {"type": "hint", "hint": None, "cancelled": True, "detail": str(exc), "version": exc.version}
    except XiangqiError as exc:
        msg = {"type": "error", "detail": str(exc), "request": "hint"}
    client.send(msg)


async def _send_draw(hub: GameHub, client: Client) -> None:
    try:
        await hub.offer_draw()  # its answer reaches every page with the state
    except XiangqiError as exc:
        client.send({"type": "error", "detail": str(exc), "request": "draw"})


def _version(msg: dict[str, Any]) -> int | None:
    v = msg.get("version")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise SessionError(f"'version' must be the integer version of the state shown, got {v!r}")
    if not 0 <= v <= MAX_VERSION:  # no state has it; not echoed whole (a 4000-digit number was)
        shown = str(v) if len(str(v)) <= 24 else f"a number of {len(str(v))} digits"
        raise SessionError(f"'version' must be a state version from 0 to {MAX_VERSION}, got {shown}")
    return v


#: The largest state version a message may name (SQLite's 64-bit integer).
MAX_VERSION = 2**63 - 1


#: The fields each message of the game socket may carry besides ``type`` (anything else is refused,
#: as the REST bodies refuse an unknown field: a misspelt ``verison`` must not be ignored silently).
MESSAGE_FIELDS: dict[str, frozenset[str]] = {
    "move": frozenset({"move", "version"}), "undo": frozenset({"version"}), "resign": frozenset(),
    "draw": frozenset(), "hint": frozenset(), "retry": frozenset(), "state": frozenset()}


#: The messages that act on the game: refused on a socket whose game another game has replaced (the
#: page was told ``replaced`` and reconnects; meanwhile a click there must not resign or move in a game
#: it does not show).
ACTIONS = frozenset({"move", "undo", "resign", "draw", "hint", "retry"})


async def handle(hub: GameHub, client: Client, msg: Any, game_id: str | None = None) -> None:
    """Act on one message of ``client``'s page; a refused request is answered with an error.
    ``game_id``: the game of the socket (None: whatever game is current)."""
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        client.send({"type": "error", "detail": "message must be an object with a string 'type'"})
        return
    kind = msg["type"]
    unknown = sorted(set(msg) - {"type"} - MESSAGE_FIELDS.get(kind, frozenset(set(msg) - {"type"})))
    if unknown:
        client.send({"type": "error", "request": kind,
                     "detail": f"{kind} message: unknown field(s) {', '.join(map(repr, unknown))}"
                               + (f" (it takes {', '.join(sorted(MESSAGE_FIELDS[kind]))})"
                                  if MESSAGE_FIELDS[kind] else " (it takes none)")})
        return
    if game_id is not None and kind in ACTIONS and hub.session.id != game_id:
        client.send({"type": "error", "request": kind,
                     "detail": f"this socket is for game {game_id}, which another game replaced: nothing was "
                               "done (reconnect to the current game)"})
        return
    try:
        if kind == "move":
            mv = msg.get("move")
            if not isinstance(mv, str):
                raise SessionError("move message needs a string 'move' in ICCS, e.g. h2e2")
            _version(msg)  # checked for its type; a move is judged against the game as it is now
            await hub.move(mv)
        elif kind == "undo":
            await hub.undo(_version(msg))
        elif kind == "resign":
            await hub.resign()
        elif kind == "draw":
            client.spawn(_send_draw(hub, client))
        elif kind == "hint":
            client.spawn(_send_hint(hub, client))
        elif kind == "retry":
            await hub.retry_engine()
        elif kind == "state":
            client.send({"type": "state", "state": hub.state()})
        else:
            raise SessionError(f"unknown message type {kind!r} "
                               "(move, undo, resign, draw, hint, retry, state)")
    except StaleVersionError as exc:
        client.send({"type": "error", "detail": str(exc), "request": kind, "version": exc.current})
        client.send({"type": "state", "state": hub.state()})
    except XiangqiError as exc:
        client.send({"type": "error", "detail": str(exc), "request": kind})
