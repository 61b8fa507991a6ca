"""Malformed requests never crash the server nor lose the saved game (hypothesis fuzzing)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient  # noqa: F401 - type of api_client()
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.webclient import api_client

from xiangqi.web.server import create_app

OK = {200, 400, 404, 409, 413, 422}
_client: TestClient


@pytest.fixture(scope="module", autouse=True)
def client(tmp_path_factory):
    """One app for the module (hypothesis runs many examples per test); 500s are returned, not raised."""
    global _client
    app = create_app(tmp_path_factory.mktemp("fuzz"), warmup=False,
                     move_provider=lambda b, lv: min(b.legal_moves, key=lambda m: m.iccs()))
    with api_client(app, raise_server_exceptions=False) as c:
        _client = c
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
        yield c


scalars = (st.none() | st.booleans() | st.integers() | st.text()
           | st.floats(allow_nan=False, allow_infinity=False))
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
    max_leaves=12)


def _moves() -> list[str]:
    return [m["iccs"] for m in _client.get("/api/game").json()["moves"]]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=8))
def test_random_move_text(text):
    before = _moves()
    r = _client.post("/api/game/move", json={"move": text})
    assert r.status_code in OK, r.text
    if r.status_code == 200:
        _client.post("/api/game/undo")
    assert _moves() == before


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_json_bodies(body):
    before = _moves()
    for path in ("/api/game/move", "/api/position/validate", "/api/game/new"):
        if path == "/api/game/new" and isinstance(body, dict) and not body:
            continue  # an empty body is a valid new-game request
        r = _client.post(path, json=body)
        assert r.status_code in OK, (path, r.text)
        if path == "/api/game/new" and r.status_code == 200:  # a valid request: restore the test game
            _client.post("/api/game/new", json={"red": "human", "black": "human"})
            _client.post("/api/game/move", json={"move": "h2e2"})
            before = _moves()
    assert _moves() == before


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_pgn_uploads(data):
    r = _client.post("/api/game/open", content=data)
    assert r.status_code in OK, r.text
    if r.status_code == 200:  # it was a readable game: go back to the test game
        _client.post("/api/game/new", json={"red": "human", "black": "human"})
        _client.post("/api/game/move", json={"move": "h2e2"})
    assert _moves() == ["h2e2"]
