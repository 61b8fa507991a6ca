"""The computer resigns and offers draws through the game hub, by the tendency setting."""

from __future__ import annotations

import random
import time

import pytest
from tests.webclient import api_client

from xiangqi.app.play.conduct import MIN_PLY_TO_RESIGN
from xiangqi.engine.api import SearchResult
from xiangqi.web.server import create_app


def scored(cp, mate):
    """A computer that plays its first legal move (ICCS order) and reports (cp, mate) for itself."""
    def provider(board, level):
        mv = min(board.legal_moves, key=lambda m: m.iccs())
        return SearchResult(mv, cp, mate, 1, 1, 0.0, [mv])
    return provider


def play_until(client, plies, rng=None):
    """The human (Red) plays until the game has ``plies`` plies or is over: its first legal move
    (ICCS order), or with ``rng`` a random quiet move (so that the game does not repeat)."""
    from xiangqi.core.board import Board

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        st = client.get("/api/game").json()
        if (st["result"] or len(st["moves"]) >= plies) and not st["thinking"]:
            return st
        if st["turn"] != "red" or st["thinking"]:
            time.sleep(0.02)
            continue
        b = Board(st["fen"])
        legal = sorted(b.legal_moves, key=lambda m: m.iccs())
        quiet = [m for m in legal if not b.is_capture(m)] or legal
        mv = rng.choice(quiet) if rng else legal[0]
        r = client.post("/api/game/move", json={"move": mv.iccs()})
        assert r.status_code == 200, r.text
    raise AssertionError("the game did not get there in time")


@pytest.mark.parametrize("tendency,resigns", [("normal", True), ("stubborn", False)])
def test_the_computer_resigns_a_lost_game_unless_stubborn(tmp_path, tendency, resigns):
    app = create_app(tmp_path, move_provider=scored(None, -2), warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        assert client.put("/api/settings", json={"computer_tendency": tendency}).status_code == 200
        assert client.post("/api/game/new", json={"red": "human", "black": "engine",
                                                   "level": "beginner"}).status_code == 200
        st = play_until(client, MIN_PLY_TO_RESIGN + 4)
        if resigns:  # the first chance: the computer's move that makes the game 20 plies long
            res = st["result"]
            assert res["result"] == "1-0" and len(st["moves"]) == MIN_PLY_TO_RESIGN
            assert res["reason_zh"] == "红胜 — 黑方（电脑）认输"
            assert res["reason_en"] == "Red wins — Black (the computer) resigns"
            lib = client.get("/api/library").json()
            assert lib[0]["result"] == "1-0" and lib[0]["reason_zh"] == res["reason_zh"]
        else:
            assert st["result"] is None and len(st["moves"]) >= MIN_PLY_TO_RESIGN + 4


def test_the_computer_offers_a_draw_the_player_takes_it_or_plays_on(tmp_path):
    app = create_app(tmp_path, move_provider=scored(0, None), warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        client.put("/api/settings", json={"computer_tendency": "compliant"})
        client.post("/api/game/new", json={"red": "human", "black": "engine", "level": "beginner"})
        rng = random.Random(3)
        st = play_until(client, 50, rng)  # compliant: level for 5 of its moves and 50 plies played
        assert st["computer_draw_offer"] is True and st["result"] is None and len(st["moves"]) == 50
        # playing on declines it; then it waits before offering again
        st = play_until(client, 52, rng)
        assert st["computer_draw_offer"] is False
        for plies in range(54, 72, 2):  # OFFER_GAP of its moves (20 plies) after the decline at ply 51
            st = play_until(client, plies, rng)
            assert st["computer_draw_offer"] is False, plies
        st = play_until(client, 72, rng)
        assert st["computer_draw_offer"] is True and len(st["moves"]) == 72
        r = client.post("/api/game/draw")
        assert r.status_code == 200 and r.json()["accepted"] is True
        st = client.get("/api/game").json()
        assert st["result"]["result"] == "1/2-1/2"
        assert st["result"]["reason_zh"] == "和棋 — 电脑提和，双方同意"
