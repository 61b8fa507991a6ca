"""Record endpoints: open any record format for browsing (the current game untouched), export the
current game as PGN/XQF, save a browsed record whole, play on from a record position."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient  # noqa: F401 - type of api_client()
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.webclient import api_client

from xiangqi.core.records import read_records
from xiangqi.web.server import create_app

DATA = Path(__file__).parent.parent / "data" / "records"
ALL_SAMPLES = sorted(p for p in DATA.glob("*/*") if p.is_file())


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


@pytest.fixture
def client(tmp_path):
    with api_client(create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)) as c:
        yield c


def two_player_game(client, moves):
    client.post("/api/game/new", json={"red": "human", "black": "human"}).raise_for_status()
    for mv in moves:
        client.post("/api/game/move", json={"move": mv}).raise_for_status()
    return client.get("/api/game").json()


@pytest.mark.parametrize("path", ALL_SAMPLES, ids=lambda p: p.name)
def test_every_sample_opens_and_leaves_the_game_alone(client, path):
    before = two_player_game(client, ["h2e2"])
    r = client.post("/api/record/open", params={"name": path.name}, content=path.read_bytes())
    assert r.status_code == 200, r.text
    view = r.json()
    game = read_records(path)[0]
    assert len(view["nodes"]) == game.count_nodes() + 1
    assert view["count"] == len(read_records(path))
    after = client.get("/api/game").json()
    assert after["id"] == before["id"] and after["moves"] == before["moves"]


def test_variations_and_comments_in_the_view(client):
    path = DATA / "xqf" / "cchess_game_varations.xqf"
    view = client.post("/api/record/open", params={"name": path.name}, content=path.read_bytes()).json()
    assert view["lines"] == 6 and view["branches"] == 5  # samples/SOURCES.md: 6 branches
    root = view["nodes"][0]
    first = view["nodes"][root["children"][0]]
    assert first["text"] == {"chinese": "炮二平五", "wxf": "C2.5", "iccs": "H2-E2"}
    assert [view["nodes"][c]["move"] for c in first["children"]] == ["h7e7", "h9g7"]
    sample = DATA / "xqf" / "xqbase_SAMPLE.XQF"
    view = client.post("/api/record/open", params={"name": sample.name}, content=sample.read_bytes()).json()
    assert view["comment"].startswith("象棋让九子原属茶余饭后的娱乐")
    n2 = view["nodes"][view["nodes"][view["nodes"][0]["children"][0]]["children"][0]]
    assert n2["comment"] == "红方首着架中炮必走之着，聂棋圣还架中炮拼兑子力，战术对头。"


def test_bad_records_get_clear_errors(client):
    two_player_game(client, ["h2e2"])
    cases = [
        (b"", "x.pgn", "x.pgn: empty: nothing to open"),
        (b"XQ\x12" + b"\0" * 10, "x.xqf", "x.xqf: not an XQF file: 13 bytes, the header alone is 1024"),
        (b"hello world", "", "pasted text: no game found"),
        (b"\xff\xfe\x00garbage", "x.epd", "x.epd:"),
    ]
    for body, name, message in cases:
        r = client.post("/api/record/open", params={"name": name}, content=body)
        assert r.status_code == 400, (name, r.text)
        assert r.json()["detail"].startswith(message)
    r = client.post("/api/record/open", params={"index": 3}, content=b"1. h2e2 *")
    assert r.status_code == 400 and "holds 1 game(s); there is no game 4" in r.json()["detail"]
    assert client.post("/api/record/open", content=b"x" * (3 * 1024 * 1024)).status_code == 413
    assert [m["iccs"] for m in client.get("/api/game").json()["moves"]] == ["h2e2"]


def test_a_ubb_record_without_a_start_position_is_not_shown_from_the_standard_start(client):
    """Before: the page showed the standard start and offered 从此处续下 (play on) from it."""
    ubb = ("[DhtmlXQ]\n[DhtmlXQ_binit]" + "9" * 64 + "[/DhtmlXQ_binit]\n"
           "[DhtmlXQ_movelist]7747[/DhtmlXQ_movelist]\n[/DhtmlXQ]\n").encode()
    r = client.post("/api/record/open", params={"name": "bad.ubb"}, content=ubb)
    assert r.status_code == 400, r.text
    assert r.json()["detail"] == ("bad.ubb: the record's start position is bad: "
                                  "bad FEN board at character 0: red must have exactly one king, found 0")


def test_pasted_texts(client):
    fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/9/1C5C1/9/RN2K2NR w - - 0 1"
    view = client.post("/api/record/open", content=fen.encode()).json()
    assert view["nodes"][0]["fen"] == fen and len(view["nodes"]) == 1
    ubb = "[DhtmlXQ_movelist]77477242[/DhtmlXQ_movelist]"
    view = client.post("/api/record/open", content=ubb.encode()).json()
    assert [n["text"]["chinese"] for n in view["nodes"][1:]] == ["炮二平五", "炮8平5"]


def test_export_current_game_pgn_and_xqf(client):
    two_player_game(client, ["h2e2", "h9g7", "h0g2"])
    r = client.get("/api/game/export", params={"fmt": "pgn", "notation": "wxf"})
    assert r.status_code == 200 and "1. C2.5 H8+7" in r.text and "2. H2+3" in r.text
    r = client.get("/api/game/export", params={"fmt": "xqf"})
    assert r.headers["content-disposition"].endswith('.xqf"') and r.content[:2] == b"XQ"
    game = read_records(r.content, fmt="xqf")[0]
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h9g7", "h0g2"]
    assert client.get("/api/game/export", params={"fmt": "doc"}).status_code == 422


def test_save_browsed_record_keeps_variations(client):
    path = DATA / "xqf" / "cchess_game_varations.xqf"
    r = client.post("/api/record/export", params={"name": path.name, "fmt": "pgn", "notation": "iccs"},
                    content=path.read_bytes())
    assert r.status_code == 200
    assert "filename*=UTF-8''cchess_game_varations-saved.pgn" in r.headers["content-disposition"]
    game = read_records(r.content, fmt="pgn")[0]
    assert game.count_nodes() == 24 and game.count_branches() == 5
    sample = DATA / "pgn" / "xqbase_SAMPLE_chinese_gbk.PGN"
    r = client.post("/api/record/export", params={"name": "许银川.pgn", "fmt": "xqf"},
                    content=sample.read_bytes())
    assert r.status_code == 200
    back = read_records(r.content, fmt="xqf")[0]
    assert back.comment.startswith("象棋让九子原属茶余饭后的娱乐")


def test_play_on_from_a_record_position(client):
    fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/9/1C5C1/9/RN2K2NR w - - 0 1"
    st = client.post("/api/game/from_record", json={"fen": fen, "moves": ["b2e2", "h7e7"], "red": "human",
                                                    "black": "engine", "headers": {"Event": "让九子"}}).json()
    assert st["start_fen"] == fen and [m["iccs"] for m in st["moves"]] == ["b2e2", "h7e7"]
    assert st["moves"][1]["wxf"] == "C8.5" and st["turn"] == "red"
    bad = client.post("/api/game/from_record", json={"fen": fen, "moves": ["b2e2", "a0a1"]})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("move 2 (a0a1) cannot be played")
    assert client.get("/api/game").json()["id"] == st["id"]  # the refused request changed nothing


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_records_give_a_view_or_a_clear_error(client, data):
    path = data.draw(st.sampled_from(ALL_SAMPLES))
    raw = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(raw)))
    r = client.post("/api/record/open", params={"name": path.name}, content=bytes(raw[:cut]))
    assert r.status_code in (200, 400), r.text
    if r.status_code == 400:
        assert r.json()["detail"].startswith(path.name)
