"""The web API: REST and the game WebSocket, driven through Starlette's TestClient.

The computer player is replaced by a fast deterministic one (the first legal
move in ICCS order) so these tests do not depend on engine timing.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient  # noqa: F401 - type of api_client()
from tests.webclient import api_client

from xiangqi.core.board import Board
from xiangqi.core.pgn import read_game
from xiangqi.web.server import create_app

DATA = Path(__file__).parent.parent / "data"
GAME_1982 = DATA / "records" / "pgn" / "xiangqijs_readme_iccs_1982.pgn"


def first_move(board: Board, level: str):
    """Deterministic stand-in for the engine: the first legal move in ICCS order."""
    return min(board.legal_moves, key=lambda m: m.iccs())


def make_client(path: Path) -> TestClient:
    return api_client(create_app(path, move_provider=first_move, warmup=False, engine_delay_s=0))


@pytest.fixture
def client(tmp_path):
    with make_client(tmp_path) as c:
        yield c


def new_game(client, **body):
    r = client.post("/api/game/new", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def wait_for(ws, pred, limit=20):
    """Read messages until one satisfies ``pred``; returns it."""
    for _ in range(limit):
        msg = ws.receive_json()
        if pred(msg):
            return msg
    raise AssertionError("expected message did not arrive")


def test_index_and_static_files(client):
    r = client.get("/")
    assert r.status_code == 200 and 'id="board"' in r.text and "/static/js/app.js" in r.text
    for path in ("/static/js/app.js", "/static/js/board.js", "/static/js/i18n.js", "/static/css/app.css"):
        assert client.get(path).status_code == 200, path
    assert client.get("/static/nope.js").status_code == 404


def test_new_game_and_levels(client):
    st = new_game(client, red="human", black="engine", level="intermediate")
    assert st["players"] == {"red": "human", "black": "engine"} and st["level"] == "intermediate"
    assert st["moves"] == [] and st["turn"] == "red" and len(st["legal"]) == 16
    levels = client.get("/api/levels").json()
    assert [lv["key"] for lv in levels] == ["novice", "beginner", "intermediate", "advanced", "master"]
    assert [lv["name_zh"] for lv in levels] == ["入门", "初级", "中级", "高级", "大师"]
    assert levels[0]["name_en"] == "Novice"
    st = new_game(client, red="human", black="engine", level="novice")  # the weakest level can be chosen
    assert st["level"] == "novice"


def test_levels_carry_their_measured_elo_and_rank_name(client, tmp_path, monkeypatch):
    import json

    import xiangqi.engine
    from xiangqi.engine import levels as lv

    f = tmp_path / "level_elo.json"
    f.write_text(json.dumps({"levels": {"beginner": {"elo": 1150, "error": 64, "games": 30},
                                        "master": {"elo": 2235, "error": 110, "games": 10}}}),
                 encoding="utf-8")
    monkeypatch.setattr(xiangqi.engine, "LEVELS", lv.with_elos(lv.BASE_LEVELS, lv.load_elos(f)))
    levels = {x["key"]: x for x in client.get("/api/levels").json()}
    assert levels["beginner"] == {"key": "beginner", "name_zh": "初级", "name_en": "Beginner", "elo": 1150,
                                  "elo_error": 64, "elo_games": 30, "rank_zh": "县丞"}
    assert (levels["master"]["elo"], levels["master"]["rank_zh"]) == (2235, "太尉")
    assert levels["intermediate"] == {"key": "intermediate", "name_zh": "中级", "name_en": "Intermediate",
                                      "elo": None, "elo_error": None, "elo_games": 0, "rank_zh": None}


def test_rest_moves_and_clear_errors(client):
    new_game(client, red="human", black="human")
    r = client.post("/api/game/move", json={"move": "h2e2"})
    assert r.status_code == 200 and r.json()["moves"][0]["chinese"] == "炮二平五"
    r = client.post("/api/game/move", json={"move": "a0a5"})  # black to move; and blocked anyway
    assert r.status_code == 400 and "illegal move a0a5" in r.json()["detail"]
    r = client.post("/api/game/move", json={"move": "zz99"})
    assert r.status_code == 400 and "not an ICCS move" in r.json()["detail"]
    r = client.post("/api/game/move", json={"mov": "h9g7"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "move"]
    detail = r.json()["detail"]
    assert "body field 'move' is missing" in detail and "unknown field 'mov'" in detail
    r = client.post("/api/game/move", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    r = client.post("/api/game/new", json={"red": "robot"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "red"]
    r = client.post("/api/game/new", json={"fen": "rnbakabnr/9/9 w"})
    assert r.status_code == 400 and "bad FEN board" in r.json()["detail"]
    r = client.post("/api/game/move", json={"move": "h9g7", "game_id": "not-this-one"})
    assert r.status_code == 404
    # Nothing of that changed the game.
    st = client.get("/api/game").json()
    assert [m["iccs"] for m in st["moves"]] == ["h2e2"]


def test_engine_answers_over_the_websocket(client):
    st = new_game(client, red="human", black="engine")
    with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
        assert ws.receive_json()["state"]["moves"] == []
        ws.send_json({"type": "move", "move": "h2e2"})
        msg = wait_for(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 2
                       and not m["state"]["thinking"])
        assert [m["iccs"] for m in msg["state"]["moves"]] == ["h2e2", "a6a5"]
        assert msg["state"]["turn"] == "red"
        ws.send_json({"type": "undo"})
        msg = wait_for(ws, lambda m: m["type"] == "state" and m["state"]["moves"] == [])
        assert msg["state"]["fen"].startswith("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w")
        for bad, expect in (({"type": "fly"}, "unknown message type"), ({"type": "move"}, "string 'move'"),
                            ({"type": "move", "move": "e0e2"}, "illegal move e0e2"), ([1, 2], "object")):
            ws.send_json(bad)
            msg = wait_for(ws, lambda m: m["type"] == "error")
            assert expect in msg["detail"]
        ws.send_text("not json")
        assert "JSON" in wait_for(ws, lambda m: m["type"] == "error")["detail"]


def test_human_cannot_move_for_the_engine(tmp_path):
    release = threading.Event()

    def slow(board, level):
        release.wait(60)
        return first_move(board, level)

    with api_client(create_app(tmp_path, move_provider=slow, warmup=False)) as client:
        st = new_game(client, red="engine", black="human")
        assert client.get("/api/game").json()["thinking"] is True
        r = client.post("/api/game/move", json={"move": "h2e2"})
        assert r.status_code == 409 and "computer's turn" in r.json()["detail"]
        assert client.post("/api/game/hint").status_code == 409
        release.set()
        with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
            wait_for(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 1)


def test_computer_plays_first_when_human_takes_black(tmp_path):
    with make_client(tmp_path) as client:
        st = new_game(client, red="engine", black="human")
        with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
            msg = wait_for(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 1)
            assert msg["state"]["moves"][0]["iccs"] == "a0a1" and msg["state"]["turn"] == "black"


def test_stale_websocket_is_told_its_game_was_replaced(client):
    new_game(client, red="human", black="human")
    with client.websocket_connect("/ws/game/old-id") as ws:
        msg = ws.receive_json()
        assert msg == {"type": "replaced", "old": "old-id"}  # not the current id: the page asks GET /api/game


def test_save_and_open_pgn(client):
    new_game(client, red="human", black="human")
    for mv in ("h2e2", "h9g7", "h0g2", "i9h9"):
        assert client.post("/api/game/move", json={"move": mv}).status_code == 200
    r = client.get("/api/game/pgn", params={"notation": "chinese"})
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    assert "1. 炮二平五 马8进7 2. 马二进三 车9平8" in r.text
    for tag in ("Game", "Event", "Date", "Red", "Black", "Result"):
        assert re.search(rf'^\[{tag} "', r.text, re.M), tag
    iccs = client.get("/api/game/pgn", params={"notation": "iccs"}).text
    assert client.get("/api/game/pgn", params={"notation": "xyz"}).status_code == 422
    new_game(client, red="human", black="human")
    st = client.post("/api/game/open", content=iccs.encode("utf-8")).json()
    assert [m["chinese"] for m in st["moves"]] == ["炮二平五", "马8进7", "马二进三", "车9平8"]
    # A GB18030 file (the usual encoding of Chinese records) is sniffed.
    st = client.post("/api/game/open", content=r.text.encode("gb18030")).json()
    assert len(st["moves"]) == 4
    assert client.post("/api/game/open", content=b"").status_code == 400
    bad = client.post("/api/game/open", content=b"[Event \"x\"]\n\n1. h2h2 *")
    assert bad.status_code == 400 and bad.json()["detail"]
    assert client.post("/api/game/open", content=b"x" * (3 * 1024 * 1024)).status_code == 413
    assert len(client.get("/api/game").json()["moves"]) == 4  # the failed opens left the game alone


def test_the_1982_game_through_the_web_api(client):
    game = read_game(GAME_1982.read_text(encoding="utf-8"))
    moves = [m.iccs() for m in game.mainline_moves()]
    assert len(moves) == 125
    new_game(client, red="human", black="human")
    for i, mv in enumerate(moves):
        r = client.post("/api/game/move", json={"move": mv})
        assert r.status_code == 200, (i, mv, r.text)
    st = r.json()
    assert st["fen"] == "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b - - 16 63"
    assert st["moves"][-1] == {"iccs": "b5a5", "chinese": "兵八平九", "capture": False, "check": False,
                              "wxf": "P8.9"}
    assert st["result"] is None  # the final position has occurred twice only: no ruling yet
    # Opening the record itself reaches the recorded result: a draw by repetition.
    st = client.post("/api/game/open", content=GAME_1982.read_bytes()).json()
    assert len(st["moves"]) == 125
    assert st["result"]["result"] == "1/2-1/2" and st["result"]["termination"] == "repetition"
    pgn = client.get("/api/game/pgn", params={"notation": "iccs"}).text
    assert '[Result "1/2-1/2"]' in pgn and '[Red "柳大华"]' in pgn


def test_game_is_restored_after_a_restart(tmp_path):
    with make_client(tmp_path) as c1:
        st = new_game(c1, red="human", black="engine", level="advanced")
        with c1.websocket_connect(f"/ws/game/{st['id']}") as ws:
            ws.send_json({"type": "move", "move": "b2e2"})
            wait_for(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 2
                     and not m["state"]["thinking"])
    with make_client(tmp_path) as c2:
        back = c2.get("/api/game").json()
    assert back["id"] == st["id"] and back["level"] == "advanced"
    assert [m["iccs"] for m in back["moves"]] == ["b2e2", "a6a5"]


def test_resign_draw_library_and_settings(client):
    new_game(client, red="human", black="human")
    client.post("/api/game/move", json={"move": "h2e2"})
    r = client.post("/api/game/draw")
    assert r.status_code == 200 and r.json()["accepted"] is True
    assert r.json()["state"]["result"]["reason_zh"] == "和棋 — 双方议和"
    assert client.post("/api/game/resign").status_code == 409
    new_game(client, red="human", black="engine", level="master")
    client.post("/api/game/move", json={"move": "h2e2"})
    st = client.post("/api/game/resign").json()
    assert st["result"]["reason_zh"] == "黑胜 — 红方认输"
    lib = client.get("/api/library").json()
    assert [g["result"] for g in lib] == ["0-1", "1/2-1/2"]
    gid = lib[0]["id"]
    assert client.patch(f"/api/library/{gid}", json={"title": "认输局"}).json()["title"] == "认输局"
    assert client.get("/api/library", params={"search": "认输局"}).json()[0]["id"] == gid
    assert client.delete(f"/api/library/{gid}").json() == {"deleted": gid}
    assert client.get(f"/api/library/{gid}").status_code == 404
    assert client.put("/api/settings", json={"theme": "flat"}).json()["theme"] == "flat"
    assert client.get("/api/settings").json() == {"theme": "flat"}
    assert client.put("/api/settings", json=[1, 2]).status_code == 422
    r = client.put("/api/settings", json={"theme": "x" * 5000})
    assert r.status_code == 400 and "too long" in r.json()["detail"]


def test_position_validation_endpoint(client):
    r = client.post("/api/position/validate", json={"fen": "4k4/9/9/9/9/9/9/c8/9/R2B1K3 r - - 0 1"})
    body = r.json()
    assert body["ok"] is False and body["problems"] == [{
        "zh": "红相在d0：相（象）只能在本方的七个象位上",
        "en": "the red elephant on d0 stands on a square no elephant can reach", "square": "d0"}]
    body = client.post("/api/position/validate", json={"fen": "3k5/9/9/9/9/9/9/9/4R4/4K4 w"}).json()
    assert body == {"ok": True, "fen": "3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1", "problems": [],
                    "game_over": None}
    body = client.post("/api/position/validate", json={"fen": "3k5/4R4/4R4/9/9/9/9/9/9/4K4 b"}).json()
    assert body["ok"] and body["game_over"]["reason_zh"] == "红胜 — 黑方困毙"  # possible, but over
    body = client.post("/api/position/validate", json={"fen": "9/9 w"}).json()
    assert not body["ok"] and body["fen"] is None and "bad FEN board" in body["problems"][0]["en"]
    assert client.post("/api/position/validate", json={"fen": "x" * 300}).status_code == 422
    r = client.post("/api/game/new", json={"red": "human", "black": "human",
                                           "fen": "4k4/9/9/9/9/9/9/c8/9/R2B1K3 r - - 0 1"})
    assert r.status_code == 400 and "impossible start position: the red elephant on d0" in r.json()["detail"]
    st = new_game(client, red="human", black="human", fen="3k5/9/9/9/9/9/9/9/4R4/4K4 w")
    assert st["start_fen"] == "3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1"


def test_clock_requests_and_timeout(client):
    r = client.post("/api/game/new", json={"clock": {"kind": "sundial"}})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "clock", "kind"]
    assert r.json()["detail"].startswith("body field 'clock.kind': Input should be 'none'")
    r = client.post("/api/game/new", json={"clock": {"kind": "per_move", "per_move_s": 0}})
    assert r.status_code == 400 and "per_move_s must be 1-36000" in r.json()["detail"]
    st = new_game(client, red="human", black="human", clock={"kind": "per_move", "per_move_s": 1})
    assert st["clock"]["kind"] == "per_move" and st["clock"]["running"] == "red"
    with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
        msg = wait_for(ws, lambda m: m["type"] == "state" and m["state"]["result"] is not None)
    assert msg["state"]["result"]["reason_zh"] == "黑胜 — 红方超时"
    assert client.get("/api/library").json()[0]["reason_zh"] == "黑胜 — 红方超时"


def test_library_replay_and_export(client):
    new_game(client, red="human", black="human")
    for mv in ("h2e2", "h9g7"):
        client.post("/api/game/move", json={"move": mv})
    client.post("/api/game/resign")
    gid = client.get("/api/library").json()[0]["id"]
    rp = client.get(f"/api/library/{gid}/replay").json()
    assert [m["chinese"] for m in rp["moves"]] == ["炮二平五", "马8进7"]
    assert len(rp["fens"]) == 3
    assert rp["fens"][1].startswith("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/")
    assert rp["result"]["reason_zh"] == "黑胜 — 红方认输"
    assert (rp["red"], rp["black"], rp["level"]) == ("棋手", "棋手", "beginner")  # the library game's players
    pgn = client.get(f"/api/library/{gid}/pgn", params={"notation": "iccs"})
    assert pgn.status_code == 200 and '[Result "0-1"]' in pgn.text
    assert "1. h2e2 h9g7" in pgn.text.lower().replace("-", "")
    assert client.get("/api/library/999/replay").status_code == 404
    assert client.get("/api/library/abc").status_code == 422


def test_undo_while_the_computer_thinks_discards_its_move(tmp_path):
    release = threading.Event()
    calls = []

    def gated(board, level):
        calls.append(board.fen())
        release.wait(60)
        return first_move(board, level)

    with api_client(create_app(tmp_path, move_provider=gated, warmup=False)) as client:
        st = new_game(client, red="human", black="engine")
        with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
            ws.send_json({"type": "move", "move": "h2e2"})
            wait_for(ws, lambda m: m["type"] == "state" and m["state"]["thinking"])
            ws.send_json({"type": "undo"})
            msg = wait_for(ws, lambda m: m["type"] == "state" and m["state"]["moves"] == [])
            assert msg["state"]["thinking"] is False and msg["state"]["turn"] == "red"
            release.set()
            ws.send_json({"type": "move", "move": "b2e2"})
            msg = wait_for(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 2
                           and not m["state"]["thinking"])
        # The search started for h2e2 was thrown away; the reply is to b2e2.
        assert [m["iccs"] for m in msg["state"]["moves"]] == ["b2e2", "a6a5"]
        assert len(calls) == 2


def test_engine_time_is_capped_by_the_clock(monkeypatch):
    import xiangqi.engine
    from xiangqi.app.opponents.players import EnginePlayer
    from xiangqi.core.board import Move

    monkeypatch.setattr(xiangqi.engine, "is_ready", lambda: True)  # else 初级 is answered in Python

    seen = []

    class FakeEngine:
        def play(self, board, level):
            seen.append(level)
            return type("R", (), {"move": Move.from_iccs("h2e2")})()

    p = EnginePlayer()
    p._engine = FakeEngine()
    assert p.choose(Board(), "master", time_s=0.4) == Move.from_iccs("h2e2")
    assert seen[-1].key == "master" and seen[-1].time == 0.4
    p.choose(Board(), "beginner", time_s=60)  # more than the level's own time: the level's limit stays
    from xiangqi.engine import get_level

    assert seen[-1].key == "beginner" and seen[-1].time == get_level("beginner").time
    p.choose(Board(), "intermediate")
    assert seen[-1] == "intermediate"


def test_hint_is_a_legal_move_for_the_current_position(client):
    st = new_game(client, red="human", black="human", fen="3k5/1R7/R8/9/9/9/9/9/9/4K4 w")
    hint = client.post("/api/game/hint").json()
    assert hint["fen"] == st["fen"]
    assert hint["move"] == "a7a9" and hint["mate"] == 1  # mate in one (a move, not plies)
    assert (hint["chinese"], hint["wxf"]) == ("车九进二", "R9+2")  # the text the side panel shows
    client.post("/api/game/move", json={"move": "a7a9"})
    r = client.post("/api/game/hint")
    assert r.status_code == 400 and "game is over" in r.json()["detail"]


def test_pgn_names_and_event_follow_the_interface_language(client):
    new_game(client, red="human", black="engine", level="beginner")
    client.post("/api/game/move", json={"move": "h2e2"})
    zh = client.get("/api/game/pgn").text  # no language set: Chinese
    for tag in ('[Event "象棋对局"]', '[Red "棋手"]', '[Black "电脑·初级"]'):
        assert tag in zh, tag
    client.put("/api/settings", json={"language": "en"})
    en = client.get("/api/game/export", params={"fmt": "pgn"}).text
    for tag in ('[Event "Xiangqi game"]', '[Red "Player"]', '[Black "Computer (Beginner)"]'):
        assert tag in en, tag
    zh = client.get("/api/game/pgn", params={"lang": "zh"}).text  # the page's language wins
    assert '[Black "电脑·初级"]' in zh
    assert client.get("/api/game/pgn", params={"lang": "fr"}).status_code == 422
    xqf = client.get("/api/game/export", params={"fmt": "xqf", "lang": "zh"})
    assert xqf.status_code == 200 and "电脑·初级".encode("gbk") in xqf.content
    st = client.post("/api/game/resign").json()
    assert (st["result"]["headline_en"], st["result"]["why_en"]) == ("Black wins", "Red resigns")
    assert client.get("/api/library").json()[0]["black"] == "Computer (Beginner)"


def test_undo_after_resignation_reopens_the_game(client):
    new_game(client, red="human", black="engine")
    st = client.post("/api/game/move", json={"move": "h2e2"}).json()
    with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
        wait_for(ws, lambda m: m.get("type") == "state" and len(m["state"]["moves"]) == 2)
    st = client.post("/api/game/resign").json()
    assert st["result"]["why_zh"] == "红方认输" and st["can_undo"] is True
    st = client.post("/api/game/undo").json()  # the resignation is withdrawn; the moves stay
    assert st["result"] is None and len(st["moves"]) == 2 and st["legal"] and st["can_undo"] is True
    assert client.post("/api/game/move", json={"move": "b0c2"}).status_code == 200
