"""The games database routes (web/db_api.py): explorer, search of every kind, one game, the user's games.

The database is the data dir's games.db, filled before the app starts with the CCPD sample games
(tests/data/corpus/ccpd, 15 games: the counts are those of tests/db/test_db.py) and the eight
hand-made explorer games of tests/db/test_explore.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.db.test_explore import AFTER_H2E2, GAMES, _pgn
from tests.webclient import api_client

from xiangqi.db import connect, import_paths
from xiangqi.web.server import create_app

DATA = Path(__file__).resolve().parents[1] / "data"
CCPD = sorted((DATA / "corpus" / "ccpd").glob("*.pgn"))


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    engine = connect(f"sqlite:///{d / 'games.db'}")
    import_paths(engine, CCPD)
    folder = tmp_path_factory.mktemp("hand")
    for collection in ("master", "mine"):
        path = folder / f"{collection}.pgn"
        path.write_text("\n".join(_pgn(n, m, r, dt) for n, m, r, dt, c in GAMES if c == collection),
                        encoding="utf-8")
        import_paths(engine, [path], collection=collection)
    engine.dispose()
    return d


@pytest.fixture(scope="module")
def client(data_dir):
    app = create_app(data_dir, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        yield c


def test_explore(client):
    r = client.get("/api/explore", params={"moves": "h2e2"})
    assert r.status_code == 200, r.text
    d = r.json()
    # the hand-made games (7) and CCPD's five 炮二平五 openings (06 08 10 11 13) and mirrored 03
    assert d["fen"] == AFTER_H2E2 and d["games"] == 7 + 6
    assert (d["ecco"], d["opening"]) == ("B00", "中炮局")
    first = d["moves"][0]
    assert first["text"] == "马8进7" and first["games"] >= 6
    assert len(d["top"]) == 5 and all("next_text" in g for g in d["top"])
    mine = client.get("/api/explore", params={"fen": AFTER_H2E2, "source": "mine"}).json()
    assert mine["games"] == 1 and mine["moves"][0]["red_pct"] == 100.0 and mine["ecco"] is None


@pytest.mark.parametrize(("params", "field"), [
    ({"fen": "rnbak/9 w"}, "fen"), ({"moves": "h2e2 zz"}, "moves"), ({"source": "theirs"}, None),
    ({"top": 500}, None), ({"colour": "red"}, "unknown parameter 'colour'"),
])
def test_explore_bad_input(client, params, field):
    r = client.get("/api/explore", params=params)
    if field is None:
        assert r.status_code == 422
    else:
        assert r.status_code == 400 and r.json()["detail"].startswith(field), r.text


@pytest.mark.parametrize(("params", "total"), [
    ({"player": "胡榮華"}, 5), ({"red": "胡榮華"}, 3), ({"black": "胡榮華"}, 2), ({"event": "全國"}, 5),
    ({"date_from": "1990", "date_to": "1999"}, 4),  # ccpd 09, 10, G2 (1999) and G8 (1990)
    ({"result": "draw"}, 1 + 2), ({"result": "0-1"}, 7 + 2), ({"ecco": "C00-C99"}, 3),
    ({"ecco": "e"}, 3 + 1),  # + G5 (c3c4, 仙人指路): no tag, E00 computed from its moves
    ({"opening": "中炮"}, None), ({"comment": "zzz-nothing"}, 0),
    ({"source": "mine"}, 1), ({"source": "master"}, 15 + 7), ({"source": "both"}, 15 + 8),
    ({"fen": AFTER_H2E2}, 5 + 6), ({"fen": AFTER_H2E2, "mirror": "true"}, 6 + 7),
    ({"fen": AFTER_H2E2, "source": "mine"}, 1),
])
def test_search_kinds(client, params, total):
    r = client.get("/api/db/search", params={**params, "limit": 100})
    assert r.status_code == 200, r.text
    d = r.json()
    if total is not None:
        assert d["total"] == total and len(d["games"]) == total
    assert {"id", "red", "black", "date", "result", "ecco", "event", "collection"} <= set(d["games"][0]) \
        if d["games"] else True


def test_search_position_reports_ply_and_mirror(client):
    d = client.get("/api/db/search", params={"fen": AFTER_H2E2, "mirror": 1, "limit": 100}).json()
    assert all(g["ply"] == 1 for g in d["games"])
    mirrored = sorted((g["red"], g["event"]) for g in d["games"] if g["mirrored"])
    assert [red for red, _ in mirrored] == ["G4 red", "東北韓福德"]  # G4 and ccpd_03 open 炮八平五


def test_pagination(client):
    whole = client.get("/api/db/search", params={"limit": 100}).json()
    assert whole["total"] == 23
    ids = [g["id"] for off in (0, 10, 20)
           for g in client.get("/api/db/search", params={"limit": 10, "offset": off}).json()["games"]]
    assert ids == [g["id"] for g in whole["games"]]
    page = client.get("/api/db/search", params={"limit": 10, "offset": 10}).json()
    assert page["total"] == 23 and len(page["games"]) == 10
    assert client.get("/api/db/search", params={"offset": 50}).json() == \
        {"total": 23, "offset": 50, "limit": 20, "games": []}


def test_similar_search(client):
    d = client.get("/api/db/search", params={"similar": AFTER_H2E2, "limit": 3}).json()
    assert d["total"] is None and len(d["games"]) == 3 and d["games"][0]["similarity"] == 1.0


@pytest.mark.parametrize(("params", "start"), [
    ({"fen": "not a fen"}, "fen: bad FEN"), ({"similar": "9/9 w"}, "similar: bad FEN"),
    ({"date_from": "1998/3"}, "date_from"), ({"date_to": "May"}, "date_to"), ({"result": "won"}, "result"),
    ({"date_from": "2020-13-45"}, "date_from: date_from '2020-13-45': no such date"),
    ({"date_to": "2019-02-29"}, "date_to: date_to '2019-02-29': no such date"),
    ({"ecco": "F10"}, "ecco"), ({"fen": AFTER_H2E2, "similar": AFTER_H2E2}, "similar"),
    ({"players": "x"}, "unknown parameter 'players'"),
])
def test_search_bad_input_names_the_field(client, params, start):
    r = client.get("/api/db/search", params=params)
    assert r.status_code == 400 and r.json()["detail"].startswith(start), r.text


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 101}, {"offset": -1}, {"source": "x"},
                                    {"min_similarity": 2}, {"limit": "ten"}, {"player": "x" * 201}])
def test_search_bad_types_are_422(client, params):
    assert client.get("/api/db/search", params=params).status_code == 422


def test_one_game(client):
    (hit,) = client.get("/api/db/search", params={"red": "張雄飛"}).json()["games"]
    g = client.get(f"/api/db/games/{hit['id']}").json()
    assert g["headers"]["Red"] == "張雄飛" and g["plies"] == 76 and len(g["moves"]) == 76
    assert '[Red "張雄飛"]' in g["pgn"] and '[Result "0-1"]' in g["pgn"]
    from xiangqi.core.pgn import read_game

    back = read_game(g["pgn"])
    assert [m.iccs() for m in back.mainline_moves()] == g["moves"]
    assert client.get("/api/db/games/999999").status_code == 404
    assert client.get("/api/db/games/0").status_code == 422


def test_info(client):
    assert client.get("/api/db/info").json() == {"available": True, "games": 23, "master": 22, "mine": 1,
                                                 "indexing_error": None}


def test_missing_database_answers_empty(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    c = api_client(app)  # no lifespan: nothing is backfilled, the file is never created
    assert c.get("/api/db/search", params={"player": "x"}).json() == \
        {"total": 0, "offset": 0, "limit": 20, "games": []}
    d = c.get("/api/explore", params={"moves": "h2e2 h9g7"}).json()
    assert (d["games"], d["moves"], d["top"], d["ecco"]) == (0, [], [], "B05")
    assert c.get("/api/db/info").json()["available"] is False
    assert c.get("/api/db/search", params={"date_from": "x"}).status_code == 400  # still validated
    assert not (tmp_path / "games.db").exists()


def test_saved_games_are_indexed_as_mine_and_follow_the_library(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    gdb = app.state.games_db
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        for mv in ("h2e2", "h9g7", "h0g2"):
            assert c.post("/api/game/move", json={"move": mv}).status_code == 200
        c.post("/api/game/resign")  # black resigns: the game goes to the library
        assert gdb.wait_idle()
        (hit,) = c.get("/api/db/search", params={"source": "mine"}).json()["games"]
        assert (hit["collection"], hit["result"], hit["plies"]) == ("mine", "1-0", 3)
        lib_id = c.get("/api/library").json()[0]["id"]
        assert hit["source"] == f"library:{lib_id}"
        ex = c.get("/api/explore", params={"moves": "h2e2 h9g7", "source": "mine"}).json()
        assert [(m["text"], m["games"], m["red_pct"]) for m in ex["moves"]] == [("马二进三", 1, 100.0)]
        # a rename changes the copy in place (same id); the title is its Event
        c.patch(f"/api/library/{lib_id}", json={"title": "我的对局", "notes": "第三步很好"})
        assert gdb.wait_idle()
        (again,) = c.get("/api/db/search", params={"source": "mine", "comment": "第三步"}).json()["games"]
        assert (again["id"], again["event"]) == (hit["id"], "我的对局")
        c.delete(f"/api/library/{lib_id}")
        assert gdb.wait_idle()
        assert c.get("/api/db/search", params={"source": "mine"}).json()["total"] == 0
        assert c.get("/api/explore", params={"moves": "h2e2", "source": "mine"}).json()["games"] == 0


def test_backfill_of_games_saved_before(tmp_path):
    from xiangqi.app.play.session import GameSession
    from xiangqi.app.play.store import Store

    store = Store(tmp_path)
    for moves in (["h2e2", "h9g7"], ["c3c4"]):
        s = GameSession(red="human", black="human")
        for mv in moves:
            s.play(mv)
        store.save_finished(s, s.to_pgn("chinese", "zh"))
    store.close()
    assert not (tmp_path / "games.db").exists()
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        assert app.state.games_db.wait_idle()
        d = c.get("/api/db/search", params={"source": "mine"}).json()
        assert d["total"] == 2 and sorted(g["plies"] for g in d["games"]) == [1, 2]
        ex = c.get("/api/explore", params={"source": "mine"}).json()
        assert [(m["move"], m["games"]) for m in ex["moves"]] == [("c3c4", 1), ("h2e2", 1)]


def test_a_failing_index_never_loses_the_saved_game(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    gdb = app.state.games_db
    gdb.url = "postgresql+nosuchdriver://nobody@/nothing"  # the games database cannot be opened
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
        assert c.post("/api/game/resign").status_code == 200
        assert gdb.wait_idle()
        assert len(c.get("/api/library").json()) == 1  # the game is kept
        assert gdb.error and "nosuchdriver" in gdb.error
        r = c.get("/api/db/search")
        assert r.status_code == 503 and "games database" in r.json()["detail"]
