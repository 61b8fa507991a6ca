"""A time limit on the arrival of each HTTP request (headers and body), for uvicorn.

uvicorn closes a keep-alive connection that stays idle after a response (``timeout_keep_alive``, 5 s),
but it waits for ever for a request that has begun: a client that opens connections and sends a header
line now and then (a "slow loris"), or a body one byte at a time, keeps each connection, its socket
and its buffers as long as it likes. On the public server (``xiangqi serve --public``) anyone can do
that until the process runs out of file descriptors and no player can connect. Measured before this
module on uvicorn 0.54 with httptools: a connection that sent half a request line was still open after
40 s, and so was one that had sent 4 of its 100 promised body bytes.

:class:`TimedHttpToolsProtocol` (uvicorn's httptools protocol plus a timer) gives every request
:data:`REQUEST_TIMEOUT_S` seconds from the connection's opening, or from the end of the previous
response, until its last body byte has arrived. A request that is late gets ``408 Request Timeout``
with a JSON ``detail`` naming the limit and the part that did not arrive (the request line and headers,
or the body), and the connection is closed; the route of a request whose body is late sees a
disconnect. A request that has arrived whole may take as long as its route needs (the timer stops
there), and a WebSocket is not timed once its handshake has arrived.
"""

from __future__ import annotations

import json
from typing import Any

#: Seconds a client has to send one whole request (request line, headers and body). The page's
#: largest request is a 2 MB record upload (``limits.MAX_UPLOAD_BYTES``): 20 s is 100 KB/s.
REQUEST_TIMEOUT_S = 20.0

try:  # uvicorn[standard] brings httptools on CPython; without it uvicorn's default protocol is used
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools missing
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


def timeout_response(seconds: float, part: str) -> bytes:
    """The raw ``408`` HTTP/1.1 response for a request whose ``part`` did not arrive within ``seconds``."""
    body = json.dumps({"detail": f"the request's {part} did not arrive within {seconds:g} s: "
                                 "the connection is closed (send each request whole, without pauses)"})
    data = body.encode("utf-8")
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(data)).encode("ascii") + b"\r\n"
            b"connection: close\r\ncache-control: no-store\r\n\r\n" + data)


if HttpToolsProtocol is not None:

    class TimedHttpToolsProtocol(HttpToolsProtocol):  # type: ignore[misc,valid-type]
        """uvicorn's httptools protocol with the request time limit of this module
        (``request_timeout_s`` seconds; a subclass with another value: :func:`http_protocol`)."""

        request_timeout_s: float = REQUEST_TIMEOUT_S
        _request_timer: Any = None
        _headers_done: bool = False

        def _arm(self) -> None:
            self._disarm()
            self._headers_done = False
            self._request_timer = self.loop.call_later(self.request_timeout_s, self._request_timed_out)

        def _disarm(self) -> None:
            if self._request_timer is not None:
                self._request_timer.cancel()
                self._request_timer = None

        def connection_made(self, transport: Any) -> None:  # noqa: D102 - uvicorn's interface
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:  # noqa: D102
            self._disarm()
            super().connection_lost(exc)

        def on_headers_complete(self) -> None:  # noqa: D102
            self._headers_done = True
            super().on_headers_complete()

        def on_message_complete(self) -> None:  # noqa: D102 - the whole request is here
            self._disarm()
            super().on_message_complete()

        def handle_websocket_upgrade(self) -> None:  # noqa: D102 - the socket's protocol takes over
            self._disarm()
            super().handle_websocket_upgrade()

        def on_response_complete(self) -> None:  # noqa: D102 - the next request's time starts
            pipelined = bool(self.pipeline)  # a request already read whole starts now: not timed
            super().on_response_complete()
            if not pipelined and not self.transport.is_closing():
                self._arm()

        def _request_timed_out(self) -> None:
            self._request_timer = None
            if self.transport.is_closing():
                return
            cycle = self.cycle
            waiting = cycle is not None and not cycle.response_complete and self._headers_done
            if waiting:  # the route is waiting for the rest of the body: it sees a disconnect
                if cycle.response_started:
                    self.transport.close()
                    return
                cycle.disconnected = True
                cycle.message_event.set()
            part = "body" if waiting else "request line and headers"
            self.transport.write(timeout_response(self.request_timeout_s, part))
            self.transport.close()

else:  # pragma: no cover
    TimedHttpToolsProtocol = None  # type: ignore[assignment,misc]


def http_protocol(seconds: float = REQUEST_TIMEOUT_S) -> Any:
    """The ``http`` argument for :class:`uvicorn.Config`: the timed protocol with a limit of ``seconds``,
    or ``"auto"`` (uvicorn's choice, no limit) when httptools is not installed."""
    if TimedHttpToolsProtocol is None:  # pragma: no cover
        return "auto"
    if seconds == REQUEST_TIMEOUT_S:
        return TimedHttpToolsProtocol
    return type("TimedHttpToolsProtocol", (TimedHttpToolsProtocol,), {"request_timeout_s": float(seconds)})
