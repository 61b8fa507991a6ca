"""Before the engine kernels are ready: 初级 answers through the server at once, stronger levels say
the engine is warming up (the page's status text), hints come from the quick search."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient  # noqa: F401 - type of api_client()
from tests.webclient import api_client

import xiangqi.engine
from xiangqi.app.opponents.players import EnginePlayer
from xiangqi.core.board import Board, Move
from xiangqi.web.server import create_app


class GatedEngine:
    """The kernel engine's stand-in: ``play`` waits for ``release`` (the compile), then answers."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def play(self, board, level):
        self.calls += 1
        self.release.wait(60)
        return type("R", (), {"move": min(board.legal_moves, key=lambda m: m.iccs())})()


@pytest.fixture
def served(tmp_path, monkeypatch):
    ready = {"value": False}
    monkeypatch.setattr(xiangqi.engine, "is_ready", lambda: ready["value"])
    monkeypatch.setattr(xiangqi.engine, "warmup", lambda background=True: None)
    player = EnginePlayer()
    player._engine = GatedEngine()
    with api_client(create_app(tmp_path, player=player, warmup=False, engine_delay_s=0)) as client:
        yield client, player._engine, ready


def _wait(ws, pred, limit=20):
    for _ in range(limit):
        msg = ws.receive_json()
        if msg["type"] == "state" and pred(msg["state"]):
            return msg["state"]
    raise AssertionError("expected state did not arrive")


def test_beginner_replies_without_the_kernels(served):
    client, engine, _ = served
    st = client.post("/api/game/new", json={"red": "human", "black": "engine", "level": "beginner"}).json()
    with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
        ws.send_json({"type": "move", "move": "h2e2"})
        thinking = _wait(ws, lambda s: s["thinking"])
        assert thinking["engine_warming"] is False  # 初级 does not wait: the page says "thinking"
        done = _wait(ws, lambda s: len(s["moves"]) == 2 and not s["thinking"])
    b = Board()
    b.push_iccs("h2e2")
    assert Move.from_iccs(done["moves"][1]["iccs"]) in b.legal_moves
    assert engine.calls == 0 and done["engine_warming"] is False


def test_stronger_level_shows_warming_up_until_the_kernels_answer(served):
    client, engine, ready = served
    st = client.post("/api/game/new", json={"red": "human", "black": "engine", "level": "master"}).json()
    with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
        ws.send_json({"type": "move", "move": "h2e2"})
        warming = _wait(ws, lambda s: s["thinking"])
        assert warming["engine_warming"] is True
        ready["value"] = True
        engine.release.set()
        done = _wait(ws, lambda s: len(s["moves"]) == 2 and not s["thinking"])
    assert engine.calls == 1 and done["engine_warming"] is False


def test_hint_is_quick_while_warming_up(served):
    client, engine, _ = served
    client.post("/api/game/new", json={"red": "human", "black": "human", "level": "advanced",
                                       "fen": "3k5/1R7/R8/9/9/9/9/9/9/4K4 w"})
    hint = client.post("/api/game/hint").json()
    assert (hint["move"], hint["mate"], hint["quick"]) == ("a7a9", 1, True)
    assert hint["chinese"] == "车九进二" and engine.calls == 0
