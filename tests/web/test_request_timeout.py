"""Each HTTP request must arrive whole within the server's time limit (xiangqi.web.timeouts): a client
sending its headers or its body slowly (a "slow loris") gets 408 and its connection closed, instead of
holding a socket for ever. Before, uvicorn kept such connections open as long as the client liked."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
import uvicorn

from xiangqi.web import timeouts
from xiangqi.web.timeouts import http_protocol

LIMIT_S = 0.6


async def echo_app(scope, receive, send):
    """Answers an HTTP request with the length of its body; accepts a WebSocket and echoes text."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            await send({"type": "websocket.send", "text": message.get("text") or ""})
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/slow":  # a route that takes longer than the limit, once its request is whole
        import asyncio

        await asyncio.sleep(LIMIT_S * 2)
    data = json.dumps({"got": len(body)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})


@pytest.fixture
def server():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    config = uvicorn.Config(echo_app, log_level="warning", lifespan="on", http=http_protocol(LIMIT_S))
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the test server did not start"
        time.sleep(0.02)
    yield port
    srv.should_exit = True
    thread.join(timeout=10)


#: How long a test's client waits for the server to answer or close: the bound of a hung test, not a
#: measure (the server closes a slow request after LIMIT_S; a server that does not never closes).
PATIENT_S = 60.0


def _read_all(conn: socket.socket, seconds: float = PATIENT_S) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed (s from now;
    ``inf`` when it had not closed after ``seconds``)."""
    conn.settimeout(seconds)
    start = time.monotonic()
    data = b""
    while True:
        try:
            chunk = conn.recv(4096)
        except TimeoutError:
            return data, float("inf")
        if not chunk:
            return data, time.monotonic() - start
        data += chunk


def _request(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(raw)
        return _read_all(conn)[0]


def test_slow_headers_get_408_and_the_connection_closes(server) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never the blank line
        data, closed_after = _read_all(conn)
    assert closed_after < float("inf")  # the server closed it (no bound: the 408 says why)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 Request Timeout")
    assert json.loads(body)["detail"].startswith(
        f"the request's request line and headers did not arrive within {LIMIT_S:g} s")


def test_a_silent_connection_is_closed(server) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        data, closed_after = _read_all(conn)
    assert closed_after < float("inf")  # the server closed it (no bound: the 408 says why)
    assert data.startswith(b"HTTP/1.1 408")


def test_slow_body_gets_408(server) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"mo")
        data, closed_after = _read_all(conn)
    assert closed_after < float("inf")  # the server closed it (no bound: the 408 says why)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["detail"].startswith(f"the request's body did not arrive within {LIMIT_S:g} s")


def test_whole_requests_are_not_timed(server) -> None:
    # a route slower than the limit, once the request has arrived, answers normally
    answer = _request(server, b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                              b"Connection: close\r\n\r\nabc")
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"got": 3}')
    # keep-alive: two requests on one connection, the second sent once the connection is older than
    # the limit (the first one's route took twice the limit): each request has its own time, counted
    # from its start, not from the connection's (no pause of the test's own to race the limit)
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.settimeout(PATIENT_S)
        conn.sendall(b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _read_all(conn)[0].startswith(b"HTTP/1.1 200")


def test_a_websocket_outlives_the_limit(server) -> None:
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{server}/ws") as ws:
        time.sleep(LIMIT_S * 2.5)
        ws.send("still here")
        assert ws.recv(timeout=PATIENT_S) == "still here"


def test_serve_uses_the_timed_protocol(tmp_path, monkeypatch) -> None:
    from xiangqi.web import run

    seen = {}

    def fake_run(self, *args, **kwargs):
        seen["http"] = self.config.http

    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    assert run.serve(0, data_dir=str(tmp_path)) == 0
    assert seen["http"] is timeouts.TimedHttpToolsProtocol
    assert timeouts.TimedHttpToolsProtocol.request_timeout_s == timeouts.REQUEST_TIMEOUT_S == 20.0
