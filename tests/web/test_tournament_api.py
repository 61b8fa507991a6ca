"""Engine matches in the page (web/tournament_api.py, app/opponents/tournament.py): a round-robin of three
added engines with its cross table, points and Elo, every game in the library; refusals.

The engines are tests/engine/fake_engine.py scripts whose games end at once and always the same
way: ``first`` plays the first legal move, ``illegal`` plays an illegal move (it loses), ``die``
exits when asked to move (it loses). So ``first`` wins all its games, and ``illegal`` and ``die``
win one game each against each other (whoever moves first in a game loses it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from tests.webclient import api_client

from xiangqi.web.server import create_app

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path, warmup=False)
    with api_client(app) as c:
        yield c


def add(client, mode: str) -> str:
    r = client.post("/api/engines", json={"command": sys.executable, "args": [FAKE, mode], "movetime_s": 0.1})
    assert r.status_code == 200, r.text
    return r.json()["key"]


def wait_done(client, timeout: float = 120.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        st = client.get("/api/tournament").json()
        if st["status"] not in ("queued", "running") or time.monotonic() > end:
            return st
        time.sleep(0.1)


def test_a_round_robin_of_three_engines_fills_its_cross_table(client):
    keys = [add(client, m) for m in ("first", "illegal", "die")]
    assert client.get("/api/tournament").json() == {"status": "none"}
    r = client.post("/api/tournament", json={"players": keys, "games_per_pair": 2, "movetime_s": 0.1})
    assert r.status_code == 200, r.text
    assert r.json()["players"] == ["FakeEngine", "FakeEngine#2", "FakeEngine#3"] and r.json()["total"] == 6
    st = wait_done(client)
    assert st["status"] == "done" and st["done"] == 6, st
    table = st["table"]
    assert table[0][0] is None
    assert {k: table[0][1][k] for k in ("wins", "draws", "losses")} == {"wins": 2, "draws": 0, "losses": 0}
    assert {k: table[0][2][k] for k in ("wins", "draws", "losses")} == {"wins": 2, "draws": 0, "losses": 0}
    assert {k: table[1][2][k] for k in ("wins", "draws", "losses")} == {"wins": 1, "draws": 0, "losses": 1}
    assert {k: table[2][1][k] for k in ("wins", "draws", "losses")} == {"wins": 1, "draws": 0, "losses": 1}
    assert table[1][2]["elo"] == 0  # one game each: an even pair
    standings = st["standings"]
    assert [(s["name"], s["points"], s["games"]) for s in standings] == [
        ("FakeEngine", 4.0, 4), ("FakeEngine#2", 1.0, 4), ("FakeEngine#3", 1.0, 4)]
    first = standings[0]
    assert first["elo"] == 0 and first["elo_error"] == 0  # the anchor
    assert standings[1]["elo"] < -100 and standings[1]["elo"] == standings[2]["elo"]
    # every game is in the library, with the engines' names and the reason of the adjudication
    rows = client.get("/api/library").json()
    rows = rows["games"] if isinstance(rows, dict) else rows
    assert len(rows) == 6
    names = {(g["red"], g["black"]) for g in rows}
    assert ("FakeEngine", "FakeEngine#2") in names and ("FakeEngine#2", "FakeEngine") in names
    assert {g["result"] for g in rows} <= {"1-0", "0-1"}


def test_round_robins_are_refused_with_the_reason(client):
    key = add(client, "first")
    for body, status, words in [
        ({"players": [key]}, 422, "at least 2"),
        ({"players": [key, key]}, 422, "twice"),
        ({"players": [key, "nolevel"]}, 422, "neither a level"),
        ({"players": [key, "engine:99"]}, 422, "no engine 99"),
        ({"players": [key, "beginner"], "games_per_pair": 0}, 422, "greater than or equal"),
        ({"players": [key, "beginner"], "movetime_s": 60}, 422, "less than or equal"),
    ]:
        r = client.post("/api/tournament", json=body)
        assert r.status_code == status and words in str(r.json()["detail"]), (body, r.text)


def test_a_running_round_robin_can_be_stopped(client):
    keys = [add(client, "slow"), add(client, "slow")]  # 0.4 s a move, draws by repetition at ply 8
    r = client.post("/api/tournament", json={"players": keys, "games_per_pair": 20, "movetime_s": 0.5})
    assert r.status_code == 200
    again = client.post("/api/tournament", json={"players": keys})
    assert again.status_code == 409 and "running" in again.json()["detail"]
    assert client.delete("/api/tournament").json()["status"] in ("running", "cancelled")
    st = wait_done(client, timeout=60)
    assert st["status"] == "cancelled" and st["done"] < 20


def test_a_round_robin_in_the_random_mode_keeps_its_shuffles(client):
    """``openings: random``: each pair of games starts from one 随机开局 shuffle, colours swapped, and
    the games in the library say which."""
    keys = [add(client, "first"), add(client, "first")]
    r = client.post("/api/tournament", json={"players": keys, "games_per_pair": 2, "movetime_s": 0.1,
                                             "openings": "random"})
    assert r.status_code == 200, r.text
    assert wait_done(client)["status"] == "done"
    rows = client.get("/api/library").json()
    rows = rows["games"] if isinstance(rows, dict) else rows
    pgns = [client.get(f"/api/library/{g['id']}/pgn").text for g in rows]
    shuffles = {line for p in pgns for line in p.splitlines() if line.startswith("[Shuffle ")}
    assert len(pgns) == 2 and all('[Variant "random"]' in p for p in pgns) and len(shuffles) == 1
    bad = client.post("/api/tournament", json={"players": keys, "openings": "mine"})
    assert bad.status_code == 422
