"""The puzzle mode's API: attempts, judging (the solution, an engine-confirmed alternative, a wrong
move), hints, the solution, ratings and progress in the store, bad input."""

from __future__ import annotations

import pytest
from tests.webclient import api_client

from xiangqi.app.training.puzzles import Trainer
from xiangqi.study.puzzles import Puzzle
from xiangqi.web.server import create_app

# Mate in 2 with two rooks against the bare king (several first moves mate in 2: the engine decides).
TWO_ROOKS = Puzzle(id="t-rooks", fen="4k4/9/9/9/9/9/9/9/R7R/3K5 w - - 0 1", solution=["a1a8", "e9f9", "i1i9"],
                   goal="mate", mate=2, themes=["mateIn2"], source="test/constructed", ref={}, rating=1500,
                   check={})
# 闷宫 mate in one (see tests/study/test_puzzles.py).
MEN_GONG = Puzzle(id="t-mengong", fen="3aka3/3cn4/9/9/C8/9/9/9/4A4/5K3 w - - 0 1", solution=["a5a9"],
                  goal="mate", mate=1, themes=["mateIn1", "menGong"], source="test/other", ref={},
                  rating=1400, check={})


@pytest.fixture()
def client(tmp_path):
    app = create_app(tmp_path)
    app.state.puzzle_trainer = Trainer(app.state.store.engine, puzzles=[TWO_ROOKS, MEN_GONG], seed=1)
    with api_client(app) as c:
        yield c


def start(client, pid):
    r = client.post("/api/puzzles/start", json={"id": pid})
    assert r.status_code == 200, r.text
    return r.json()


def test_catalog(client):
    d = client.get("/api/puzzles").json()
    assert d["count"] == 2 and d["solved"] == 0
    assert d["themes"] == {"mate": 2, "mateIn1": 1, "mateIn2": 1, "menGong": 1}
    assert d["sources"] == {"test/constructed": 1, "test/other": 1}
    assert d["player"]["rating"] == 1500 and d["player"]["streak"] == 0
    assert client.get("/api/puzzles", params={"theme": "menGong"}).json()["count"] == 1


def test_solve_along_the_solution_raises_the_rating(client):
    a = start(client, "t-rooks")
    assert a["goal_zh"] == "红先 · 二步杀" and a["moves"] == 2 and "a1" in a["dests"]
    r = client.post(f"/api/puzzles/attempt/{a['attempt']}/move", json={"move": "a1a8"}).json()
    assert r["verdict"] == "right" and r["reply"] == "e9f9" and r["played"] == ["a1a8", "e9f9"]
    r = client.post(f"/api/puzzles/attempt/{a['attempt']}/move", json={"move": "i1i9"}).json()
    assert r["verdict"] == "solved" and r["done"] and r["clean"]
    ch = r["rating_change"]
    assert ch["score"] == 1.0 and ch["after"] > ch["before"] == 1500 and ch["streak"] == 1
    assert ch["puzzle_after"] < ch["puzzle_before"] == 1500
    d = client.get("/api/puzzles").json()
    assert d["solved"] == 1 and d["player"]["streak"] == 1
    assert d["player"]["rating"] == pytest.approx(ch["after"], abs=0.1)
    # solved puzzles are not offered again while others are left
    for _ in range(5):
        assert client.post("/api/puzzles/next", json={}).json()["id"] == "t-mengong"
    # a finished attempt takes no more moves
    assert client.post(f"/api/puzzles/attempt/{a['attempt']}/move", json={"move": "d0d1"}).status_code == 409


def test_wrong_move_is_refused_then_retry_and_the_rating_falls(client):
    a = start(client, "t-rooks")
    aid = a["attempt"]
    r = client.post(f"/api/puzzles/attempt/{aid}/move", json={"move": "d0d1"}).json()
    assert r["verdict"] == "wrong" and r["fen"] == TWO_ROOKS.fen and not r["clean"]
    r = client.post(f"/api/puzzles/attempt/{aid}/move", json={"move": "a1a9"}).json()  # mates in 3, not 2
    assert r["verdict"] == "wrong"
    # an alternative the engine confirms (mate in 2 as well): the engine defends
    r = client.post(f"/api/puzzles/attempt/{aid}/move", json={"move": "a1e1"}).json()
    assert r["verdict"] == "right" and r["reply"] in ("e9f9", "e9d9") and r["played"][0] == "a1e1"
    mate = {"e9f9": ["i1f1", "e1e9"], "e9d9": ["i1d1", "e1e9"]}[r["reply"]]
    r2 = None
    for mv in mate:  # one of these mates at once
        r2 = client.post(f"/api/puzzles/attempt/{aid}/move", json={"move": mv}).json()
        if r2["verdict"] == "solved":
            break
    assert r2["verdict"] == "solved" and not r2["clean"]
    ch = r2["rating_change"]
    assert ch["score"] == 0.0 and ch["after"] < ch["before"] and ch["streak"] == 0
    assert client.get("/api/puzzles").json()["player"]["failed"] == 1


def test_any_mate_is_accepted_and_hint_and_solution(client):
    a = start(client, "t-mengong")
    h = client.post(f"/api/puzzles/attempt/{a['attempt']}/hint").json()
    assert h == {"from": "a5", "piece": "C", "hints": 1}
    h = client.post(f"/api/puzzles/attempt/{a['attempt']}/hint").json()
    assert (h["move"], h["text"], h["text_en"]) == ("a5a9", "炮九进四", "C9+4")
    s = client.post(f"/api/puzzles/attempt/{a['attempt']}/solution").json()
    assert s["solution"] == ["a5a9"] and s["rest"] == ["a5a9"] and s["done"]
    assert s["rating_change"]["score"] == 0.0
    # the solution is rated once only
    s2 = client.post(f"/api/puzzles/attempt/{a['attempt']}/solution").json()
    assert s2["rating_change"] == s["rating_change"]


def test_next_near_the_rating_and_filters(client):
    got = {client.post("/api/puzzles/next", json={"source": "test/other"}).json()["id"] for _ in range(3)}
    assert got == {"t-mengong"}
    assert client.post("/api/puzzles/next", json={"theme": "winRook"}).status_code == 404


@pytest.mark.parametrize("path,body,status", [
    ("/api/puzzles/start", {"id": "nope"}, 404),
    ("/api/puzzles/start", {"id": "../etc"}, 422),
    ("/api/puzzles/start", {"id": 5}, 422),
    ("/api/puzzles/start", {"id": "t-rooks", "x": 1}, 422),
    ("/api/puzzles/next", {"theme": "a b"}, 422),
    ("/api/puzzles/attempt/abc123/move", {"move": "a1a8"}, 404),
    ("/api/puzzles/attempt/zz/move", {"move": "a1a8"}, 422),
    ("/api/puzzles/attempt/abc123/hint", None, 404),
])
def test_bad_input(client, path, body, status):
    r = client.post(path, json=body) if body is not None else client.post(path)
    assert r.status_code == status, r.text
    assert "detail" in r.json()


def test_bad_moves(client):
    aid = start(client, "t-rooks")["attempt"]
    for bad, status in (("a1b2", 422), ("z9z9", 422), ("a1a8x", 422), (18, 422)):
        r = client.post(f"/api/puzzles/attempt/{aid}/move", json={"move": bad})
        assert r.status_code == status, (bad, r.text)
    assert client.post(f"/api/puzzles/attempt/{aid}/move", json={}).status_code == 422


def test_the_page_offers_the_shipped_and_the_mined_puzzles(tmp_path):
    import json

    from xiangqi.study.puzzles import load_puzzles

    shipped = load_puzzles()
    (tmp_path / "puzzles").mkdir()
    mined = {**MEN_GONG.to_dict(), "id": "mined-game7", "source": "mined/db"}
    (tmp_path / "puzzles" / "mined.jsonl").write_text(json.dumps(mined) + "\n", encoding="utf-8")
    app = create_app(tmp_path)
    with api_client(app) as c:
        d = c.get("/api/puzzles").json()
        assert d["count"] == len(shipped) + 1 and d["sources"]["mined/db"] == 1
        a = c.post("/api/puzzles/next", json={"source": "mined"}).json()
        assert a["id"] == "mined-game7" and a["goal_zh"] == "红先 · 一步杀"
