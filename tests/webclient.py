"""One way for the tests to talk to the app in-process: :func:`api_client`.

Every test that drives :func:`xiangqi.web.server.create_app` through Starlette's
TestClient builds it here, so that what a real page sends (a local ``Host``, the
page's ``Origin`` and whatever credentials the server hands its own page) is sent
by every test client in one place.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

#: The address the test client pretends the server listens on.
BASE_URL = "http://127.0.0.1:8765"


def api_client(app: Any, **kw: Any) -> TestClient:
    """A TestClient for ``app`` that behaves like the server's own page (``kw`` go to TestClient)."""
    kw.setdefault("base_url", BASE_URL)
    return TestClient(app, **kw)
