"""One way for the tests to talk to the app in-process: :func:`api_client`.

Every test that drives :func:`xiangqi.web.server.create_app` through Starlette's
TestClient builds it here, so that what a real page sends (a local ``Host``, the
page's ``Origin`` and the session token the server hands its own page) is sent
by every test client in one place. :func:`bare_client` sends none of the page's
credentials: a forged request from a foreign page, or a script that has not read
the token yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urljoin

from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from xiangqi.web.security import TOKEN_HEADER

#: The address the test client pretends the server listens on.
BASE_URL = "http://127.0.0.1:8765"
#: The peer address of the test clients' connections (the ASGI ``client``): this machine, as for the
#: page in the user's own browser. A test of another machine passes ``client=(address, port)``.
LOCAL_PEER = ("127.0.0.1", 50000)


class _Client(TestClient):
    """TestClient whose WebSockets go to its base URL's host (Starlette's go to ``testserver``)."""

    def websocket_connect(self, url: str, subprotocols: Sequence[str] | None = None,
                          **kw: Any) -> WebSocketTestSession:
        base = f"ws://{self.base_url.netloc.decode('ascii')}"
        return super().websocket_connect(urljoin(base, url), subprotocols, **kw)


def api_client(app: Any, **kw: Any) -> TestClient:
    """A TestClient for ``app`` that behaves like the server's own page (``kw`` go to TestClient).

    Its connections come from :data:`LOCAL_PEER` (this machine). It sends the page's ``Origin``
    (:data:`BASE_URL`) and the session token (``app.state.token``,
    the value the page reads from its ``<meta name="xiangqi-token">``) in the ``X-Xiangqi-Token``
    header on every request and WebSocket handshake.
    """
    kw.setdefault("base_url", BASE_URL)
    kw.setdefault("client", LOCAL_PEER)
    kw["headers"] = {"Origin": BASE_URL, TOKEN_HEADER: app.state.token, **kw.get("headers", {})}
    return _Client(app, **kw)


def bare_client(app: Any, **kw: Any) -> TestClient:
    """A TestClient for ``app`` at :data:`BASE_URL` without Origin and token (``kw`` go to TestClient)."""
    kw.setdefault("base_url", BASE_URL)
    kw.setdefault("client", LOCAL_PEER)
    return _Client(app, **kw)


def run_coroutine(coro: Any) -> Any:
    """Run ``coro`` to its end on a fresh event loop in a thread of its own and return its result.

    Tests that call an ASGI app or middleware directly use this instead of ``asyncio.run``: the browser
    tests (pytest-playwright's sync API) leave an event loop running in the main thread, where
    ``asyncio.run`` refuses to start.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
