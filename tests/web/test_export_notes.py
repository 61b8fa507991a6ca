"""The XQF exports tell the page what the file could not keep (X-Xiangqi-Warnings, web/export_notes.py)."""

from __future__ import annotations

import json

import pytest
from tests.webclient import api_client

from xiangqi.core.records import read_records
from xiangqi.core.xqf import xqf_losses
from xiangqi.web.export_notes import HEADER, MAX_BYTES, warnings_header
from xiangqi.web.server import create_app

#: A record with what XQF cannot hold: a Round and an ECCO tag (no field), a Red name of 8 characters
#: (16 GBK bytes; the field holds 15) and a date with its time (19 bytes).
RECORD = """[Game "Chinese Chess"]
[Event "全国个人赛"]
[Round "7"]
[Date "1999.12.09 14:30:00"]
[Red "许银川许银川许银"]
[Black "吕钦"]
[Result "*"]
[ECCO "B00"]

1. 炮二平五 马8进7 *
""".encode()


@pytest.fixture
def client(tmp_path):
    def first(board, level):
        return min(board.legal_moves, key=lambda m: m.iccs())

    with api_client(create_app(tmp_path, move_provider=first, warmup=False, engine_delay_s=0)) as c:
        yield c


def notes(r) -> list[str]:
    return json.loads(r.headers[HEADER]) if HEADER in r.headers else []


def test_record_export_to_xqf_lists_dropped_and_cut_headers(client):
    r = client.post("/api/record/export", params={"name": "r.pgn", "fmt": "xqf"}, content=RECORD)
    assert r.status_code == 200 and r.content[:2] == b"XQ"
    r.headers[HEADER].encode("ascii")  # HTTP headers are Latin-1: the JSON is escaped ASCII
    assert notes(r) == [
        "XQF has no field for Round, ECCO: dropped",
        "Date cut to the 15 bytes of its XQF field: '1999.12.09 14:30:00' -> '1999.12.09 14:3'",
        "Red cut to the 15 bytes of its XQF field: '许银川许银川许银' -> '许银川许银川许'",
    ]
    # PGN keeps everything: no header
    r = client.post("/api/record/export", params={"name": "r.pgn", "fmt": "pgn"}, content=RECORD)
    assert r.status_code == 200 and HEADER not in r.headers


def test_game_and_analysis_export_to_xqf_carry_the_notes(client):
    client.post("/api/game/new", json={"red": "human", "black": "human"}).raise_for_status()
    client.post("/api/game/move", json={"move": "h2e2"}).raise_for_status()
    r = client.get("/api/game/export", params={"fmt": "xqf"})
    assert r.status_code == 200 and r.content[:2] == b"XQ"
    # the game's own headers: every one has an XQF field or is not lost (Game, FEN, Result)
    assert notes(r) == xqf_losses(read_records(client.get("/api/game/export").content)[0])
    body = {"start_fen": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
            "nodes": [{"parent": None, "move": None, "comment": ""},
                      {"parent": 0, "move": "h2e2", "comment": ""}],
            "headers": {"Event": "x", "Round": "3", "ECCO": "B00", "Opening": "中炮"}, "fmt": "xqf"}
    r = client.post("/api/analysis/export", json=body)
    assert r.status_code == 200, r.text
    assert notes(r) == ["XQF has no field for Round, ECCO, Opening: dropped"]


def test_warnings_header_is_bounded():
    assert warnings_header([]) == {}
    many = [f"Red cut to the 15 bytes of its XQF field: {'棋' * 40!r} -> '棋棋棋棋棋棋棋'"] * 200
    value = warnings_header(many)[HEADER]
    assert len(value) <= MAX_BYTES
    items = json.loads(value)
    assert items[-1].endswith("more not shown") and int(items[-1].split()[0]) == 200 - (len(items) - 1)
