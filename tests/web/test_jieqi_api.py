"""揭棋 through the API: a game against the computer to its end, saved to the library, replayed
and exported; the capturer-only rule in what the page is told; strict bodies."""

from __future__ import annotations

import random

from tests.webclient import api_client

from xiangqi.core.jieqi import JieqiBoard, read_pgn
from xiangqi.web.server import create_app


def test_a_jieqi_game_to_its_end_in_the_library(tmp_path):
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    rng = random.Random(3)
    with api_client(app) as client:
        assert client.get("/api/jieqi").json() == {"game": None}
        st = client.post("/api/jieqi/new", json={"red": "human", "black": "engine", "level": "1"}).json()[
            "game"
        ]
        assert st["fen"].startswith("xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX ")
        assert st["pools"]["red"] == {"A": 2, "B": 2, "N": 2, "R": 2, "C": 2, "P": 5}
        assert len([t for ts in st["dests"].values() for t in ts]) == 44
        assert client.post("/api/jieqi/engine").json()["game"]["moves"] == []  # not the computer's turn
        while st["result"] is None and len(st["moves"]) < 12:
            frm = rng.choice(sorted(st["dests"]))
            mv = frm + rng.choice(st["dests"][frm])
            st = client.post("/api/jieqi/move", json={"move": mv, "game_id": st["id"]}).json()["game"]
            assert st["moves"][-1]["iccs"] == mv
            if st["result"] is None:
                assert (
                    client.post("/api/jieqi/move", json={"move": mv}).status_code == 409
                )  # the computer's turn
                st = client.post("/api/jieqi/engine").json()["game"]
                assert st["turn"] == "red" and len(st["moves"]) % 2 == 0
        if st["result"] is None:
            st = client.post("/api/jieqi/resign").json()["game"]
            assert st["result"]["result"] == "0-1" and "认输" in st["result"]["reason_zh"]
        rows = client.get("/api/library").json()
        assert len(rows) == 1 and rows[0]["variant"] == "jieqi" and not rows[0]["damaged"]
        assert rows[0]["plies"] == len(st["moves"])
        rp = client.get(f"/api/library/{rows[0]['id']}/replay").json()
        assert rp["variant"] == "jieqi" and len(rp["fens"]) == len(st["moves"]) + 1
        assert rp["fens"][0].split()[0] == "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX"
        pgn = client.get(f"/api/library/{rows[0]['id']}/pgn").text
        assert '[Variant "jieqi"]' in pgn
        rec = read_pgn(pgn)
        assert rec.errors == [] and rec.board.fen().split()[0] == rp["fens"][-1].split()[0]
        assert [m.iccs for m in rec.board.moves] == [m["iccs"] for m in st["moves"]]
        r = client.post("/api/review", json={"library_id": rows[0]["id"]})
        assert r.status_code == 409 and "揭棋" in r.text  # replay only, no engine review
        # the game survives a restart of the server
    app2 = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app2) as client:
        again = client.get("/api/jieqi").json()["game"]
        assert again["id"] == st["id"] and again["fen"] == st["fen"]


def test_captured_hidden_pieces_seen_by_the_capturer_only(tmp_path):
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        client.post("/api/jieqi/new", json={"red": "human", "black": "human", "capture_reveal": "capturer"})
        game = app.state.jieqi["game"]
        st = client.post("/api/jieqi/move", json={"move": "b2b9"}).json()["game"]  # Red's cannon takes b9
        taken, reveal = game.deals[1 + 9 * 9], game.deals[1 + 2 * 9]
        # Black is to move at this one board and sees it: it does not know what it lost
        assert st["viewer"] == "black" and st["moves"][0]["token"] == f"b2b9={reveal}"
        assert st["moves"][0]["chinese"].endswith("×?")
        assert sum(st["pools"]["black"].values()) == 15  # its reveals are still drawn from all 15
        assert sum(JieqiBoard(st["fen"]).pool[False].values()) == 15
        red = game.state(True)  # Red took it and sees it
        assert red["moves"][0]["token"] == f"b2b9={reveal}x{taken}"
        assert (
            sum(red["pools"]["black"].values()) == 14
            and red["pools"]["black"].get(taken, 0)
            == {"A": 2, "B": 2, "N": 2, "R": 2, "C": 2, "P": 5}[taken] - 1
        )
        client.post("/api/jieqi/new", json={"red": "human", "black": "human", "capture_reveal": "both"})
        st = client.post("/api/jieqi/move", json={"move": "b2b9"}).json()["game"]
        game = app.state.jieqi["game"]
        assert st["moves"][0]["token"] == f"b2b9={game.deals[19]}x{game.deals[82]}"  # both see it
        assert sum(st["pools"]["black"].values()) == 14


def test_jieqi_bodies_are_strict(tmp_path):
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        assert client.post("/api/jieqi/new", json={"red": "robot"}).status_code == 422
        assert client.post("/api/jieqi/new", json={"level": 2}).status_code == 422
        assert client.post("/api/jieqi/new", json={"colour": "red"}).status_code == 422
        assert client.post("/api/jieqi/move", json={"move": "h2e2"}).status_code == 404  # no game yet
        client.post("/api/jieqi/new", json={})
        assert client.post("/api/jieqi/move", json={"move": "z9z9"}).status_code == 422
        assert client.post("/api/jieqi/move", json={"move": "h2h8"}).status_code == 400  # illegal
