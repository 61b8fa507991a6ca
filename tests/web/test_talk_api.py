"""The named opponents through the server: the list, a new game against one, remarks in the state."""

from __future__ import annotations

import time

from tests.webclient import api_client

from xiangqi.app.opponents.persona import OPPONENTS
from xiangqi.engine.api import SearchResult
from xiangqi.engine.levels import LEVELS
from xiangqi.web.server import create_app


def scores(*values):
    """A computer that plays its first legal move and reports the given evaluations in turn."""
    seen = []

    def provider(board, level):
        seen.append(level)
        mv = min(board.legal_moves, key=lambda m: m.iccs())
        cp = values[min(len(seen) - 1, len(values) - 1)]
        return SearchResult(mv, cp, None, 1, 1, 0.0, [mv])

    provider.seen = seen
    return provider


def wait_turn(client, plies):
    deadline = time.monotonic() + 60  # "eventually": a poll; the bound ends a hung test only
    while time.monotonic() < deadline:
        st = client.get("/api/game").json()
        if len(st["moves"]) >= plies and not st["thinking"]:
            return st
        time.sleep(0.02)
    raise AssertionError(f"the game did not reach {plies} plies")


def test_the_opponents_carry_their_levels_measured_elo(tmp_path):
    with api_client(create_app(tmp_path, move_provider=scores(0), warmup=False)) as client:
        ops = client.get("/api/talk/opponents").json()["opponents"]
    assert [o["key"] for o in ops] == list(OPPONENTS) and len(ops) == 5
    for o in ops:
        lv = LEVELS[o["level"]]
        assert o["elo"] == lv.elo and o["elo_error"] == lv.elo_error and o["rank_zh"] == lv.rank_zh
    assert {o["style"] for o in ops} == {"attacking", "solid", "positional"}


def test_a_game_against_an_opponent_talks_and_its_record_names_it(tmp_path):
    provider = scores(0, 0, 500)
    app = create_app(tmp_path, move_provider=provider, warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        r = client.post("/api/talk/new", json={"red": "human", "black": "engine", "opponent": "zhou"})
        assert r.status_code == 200, r.text
        st = r.json()
        assert st["level"] == "intermediate" and st["talk"]["opponent"]["name_zh"] == "周老伯"
        assert [x["kind"] for x in st["talk"]["remarks"]] == ["greet", "history"]
        for i, mv in enumerate(("h2e2", "h0g2", "i0h0")):
            assert client.post("/api/game/move", json={"move": mv}).status_code == 200
            st = wait_turn(client, 2 * (i + 1))
        kinds = [x["kind"] for x in st["talk"]["remarks"]]
        assert "blunder_player" in kinds  # the computer's view went from 0 to +500 after i0h0
        blunder = next(x for x in st["talk"]["remarks"] if x["kind"] == "blunder_player")
        assert blunder["ply"] == 6 and "车一平二" in blunder["zh"]
        assert provider.seen == ["intermediate"] * 3  # the opponent's level plays
        assert client.post("/api/game/resign").status_code == 200
        lib = client.get("/api/library").json()
        assert lib[0]["black"] == "周老伯（中级）" and lib[0]["red"] == "棋手"
        st = client.get("/api/game").json()
        assert st["talk"]["remarks"][-1]["kind"] == "end_win"


def test_switched_off_in_the_settings(tmp_path):
    app = create_app(tmp_path, move_provider=scores(0, 900), warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        assert client.put("/api/settings", json={"talk": "off"}).status_code == 200
        st = client.post("/api/talk/new", json={"red": "human", "black": "engine", "opponent": "afu"}).json()
        assert st["talk"]["enabled"] is False and st["talk"]["remarks"] == []
        for i, mv in enumerate(("h2e2", "h0g2")):
            client.post("/api/game/move", json={"move": mv})
            st = wait_turn(client, 2 * (i + 1))
        assert st["talk"]["remarks"] == [] and st["talk"]["opponent"]["key"] == "afu"
        assert client.put("/api/settings", json={"talk": "maybe"}).status_code == 400


def test_bad_requests(tmp_path):
    with api_client(create_app(tmp_path, move_provider=scores(0), warmup=False)) as client:
        r = client.post("/api/talk/new", json={"red": "human", "black": "human", "opponent": "afu"})
        assert r.status_code == 400 and "one side" in r.json()["detail"]
        r = client.post("/api/talk/new", json={"opponent": "nobody"})
        assert r.status_code == 422 and "opponent" in r.json()["detail"]
        r = client.post("/api/talk/new", json={"opponent": "afu", "level": "master"})
        assert r.status_code == 422  # the opponent decides the level
        r = client.post("/api/talk/new", json={"opponent": "afu", "fen": "9/9/9/9/9/9/9/9/9/9 w"})
        assert r.status_code == 400
