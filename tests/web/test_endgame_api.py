"""Endgame practice against the tablebase: random won positions, the longest resistance, a move that
throws the win away (and its undo), the distance to mate on request, bad input."""

from __future__ import annotations

import pytest
from tests.webclient import api_client

from xiangqi.core.board import Board, Move
from xiangqi.engine import tablebase as tb
from xiangqi.web.server import create_app


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    for name in ("KRK", "KRKA"):
        tb.generate(name, d / "tablebases")
    return d


@pytest.fixture()
def client(tables):
    with api_client(create_app(tables)) as c:
        yield c


def test_endings_listed(client):
    assert client.get("/api/endgames").json() == {"endings": [{"name": "KRK", "zh": "单车对将"},
                                                              {"name": "KRKA", "zh": "车对士"}]}


def test_play_to_mate_against_the_longest_resistance(client, tables):
    table = tb.Tablebase(tables / "tablebases")
    v = client.post("/api/endgames/start", json={"ending": "KRKA"}).json()
    assert v["verdict"] == "win" and v["red"] is True and v["ending"] == "KRKA" and v["dests"]
    d = client.get(f"/api/endgames/{v['session']}/dtm").json()
    assert d["wdl"] == "win" and d["dtm"] >= 9 and d["mate_in"] == (d["dtm"] + 1) // 2
    sid = v["session"]
    for _ in range(40):
        d = client.get(f"/api/endgames/{sid}/dtm").json()
        b = Board(v["fen"])
        b.push(Move.from_iccs(d["best"][0]))
        defence = table.probe(b) if any(True for _ in b.legal_moves) else None
        v = client.post(f"/api/endgames/{sid}/move", json={"move": d["best"][0]}).json()
        if v["over"]:
            break
        assert v["verdict"] == "win" and v["before"] == "win"
        assert v["reply"] == sorted(defence.best)[0]  # the slowest loss
        after = table.probe(Board(v["fen"]))
        assert after.wdl == "win" and after.dtm == d["dtm"] - 2
    assert v["over"] == "mate" and v["dests"] == {}
    assert client.post(f"/api/endgames/{sid}/move", json={"move": "a0a1"}).status_code == 409


def test_every_random_start_is_a_long_win_and_both_wings_occur(tables):
    from xiangqi.app.training.endgames import MIN_DTM, EndgameTrainer

    table = tb.Tablebase(tables / "tablebases")
    trainer = EndgameTrainer(tables / "tablebases", seed=7)
    files = set()
    for _ in range(60):
        b = trainer.random_position("KRKA")
        pr = table.probe(b)
        assert b.turn and not b.is_check() and pr.wdl == "win" and pr.dtm >= MIN_DTM
        files.add(next(sq % 9 for sq in range(90) if b.squares[sq] == 1))
    assert files & {3, 4} and 5 in files  # the Red king on either wing (the table keeps it on a-e)
    # 车 vs 将 has no mate as long as MIN_DTM: its longest wins are the ones drawn
    longest = int(table._values("KRK")[0].max())
    assert longest < MIN_DTM
    assert table.probe(trainer.random_position("KRK")).dtm == longest


def test_a_move_that_throws_the_win_away_and_undo(client, tables):
    table = tb.Tablebase(tables / "tablebases")
    fen = "4k4/4a4/3R5/9/9/9/9/9/9/3K5 w - - 0 1"  # 车 vs 士: 车 d7-d9?? is taken (士 or 将): a draw
    assert table.probe(Board(fen)).wdl == "win"
    v = client.post("/api/endgames/start", json={"fen": fen}).json()
    r = client.post(f"/api/endgames/{v['session']}/move", json={"move": "d7d9"}).json()
    assert r["before"] == "win" and r["reply"] in ("e8d9", "e9d9")
    assert r["verdict"] == "draw" and r["over"] == "draw"
    u = client.post(f"/api/endgames/{v['session']}/undo").json()
    assert u["fen"] == fen and u["verdict"] == "win" and u["moves"] == [] and u["over"] is None
    assert client.post(f"/api/endgames/{v['session']}/undo").status_code == 409


def test_start_from_fen_and_bad_input(client):
    v = client.post("/api/endgames/start", json={"fen": "4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1"}).json()
    assert v["ending"] == "KRK" and v["verdict"] == "win"
    cases = [({"ending": "KXK"}, 422), ({"ending": "KNK"}, 404), ({}, 422),
             ({"ending": "KRK", "fen": "4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1"}, 422),
             ({"fen": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"}, 422),
             ({"fen": "4k4/9/9/9/9/9/9/9/r8/3K5 w - - 0 1"}, 422), ({"ending": 5}, 422), ({"x": 1}, 422)]
    for body, status in cases:
        r = client.post("/api/endgames/start", json=body)
        assert r.status_code == status, (body, r.text)
    assert client.get("/api/endgames/abcdef/dtm").status_code == 404
    assert client.post("/api/endgames/abcdef/move", json={"move": "a0a1"}).status_code == 404


def test_praise_only_for_progress_not_for_shuffling_the_rook(client, tables):
    """``progress`` (issue 31): a best move of the table brings the mate two plies closer (True); a
    move that keeps the win without shortening the distance to mate, here the rook shuffled sideways
    (车四平三), is no progress (False), though the verdict is still a win."""
    table = tb.Tablebase(tables / "tablebases")
    fen = "9/4aR3/4k4/9/9/9/9/3K5/9/9 w - - 0 1"  # 车 vs 士, Red mates in 7 plies
    before = table.probe(Board(fen))
    assert before.wdl == "win" and before.dtm == 7 and "f8g8" not in before.best
    sid = client.post("/api/endgames/start", json={"fen": fen}).json()["session"]
    r = client.post(f"/api/endgames/{sid}/move", json={"move": "f8g8"}).json()
    assert r["verdict"] == "win" and r["progress"] is False
    assert table.probe(Board(r["fen"])).dtm == 7  # as far from mate as before
    client.post(f"/api/endgames/{sid}/undo")
    r = client.post(f"/api/endgames/{sid}/move", json={"move": before.best[0]}).json()
    assert r["verdict"] == "win" and r["progress"] is True
    assert table.probe(Board(r["fen"])).dtm == 5
