"""Record files opened as the game (``POST /api/game/open``) and converted on the command line: every
format the reader knows opens, a record that cannot be read is a 400 that says why (never an empty
game from the standard start), and the command line names the file it could not read."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.webclient import api_client

from xiangqi.cli import main
from xiangqi.core.records import read_records
from xiangqi.web.server import create_app

DATA = Path(__file__).parent.parent / "data" / "records"
BROKEN_UBB = (b"[DhtmlXQ]\n[DhtmlXQ_binit]zzzz[/DhtmlXQ_binit]\n"
              b"[DhtmlXQ_movelist]77470919xx[/DhtmlXQ_movelist]\n[/DhtmlXQ]\n")


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
        yield c


def _open(client, data: bytes):
    return client.post("/api/game/open", content=data, headers={"Content-Type": "application/octet-stream"})


@pytest.mark.parametrize("path", [DATA / "xqf" / "xqbase_SAMPLE.XQF",
                                  DATA / "dhtmlxq" / "cchess_test_ubb_mainline.txt"], ids=lambda p: p.name)
def test_an_xqf_or_ubb_record_opens_as_the_game(client, path):
    """Before: the route read PGN only (an XQF file was "the PGN could not be read: … 'XQ'")."""
    want = [m.iccs() for m in read_records(path)[0].mainline_moves()]
    assert want  # the sample has moves
    r = _open(client, path.read_bytes())
    assert r.status_code == 200, r.text
    assert [m["iccs"] for m in r.json()["moves"]] == want[:len(r.json()["moves"])]
    assert len(r.json()["moves"]) == len(want) or r.json()["result"] is not None


@pytest.mark.parametrize(("data", "words"), [
    (BROKEN_UBB, "the record could not be read: movelist: not a list of 4-digit moves: '77470919xx'"),
    (b'[FEN "rnbakabnr/9/zzz w"]\n\n1. \xe7\x82\xae\xe4\xba\x8c\xe5\xb9\xb3\xe4\xba\x94 *\n',
     "FEN tag: bad FEN board"),
    (b"XQ\x0a\x00\x00garbage", "not an XQF file: 12 bytes"),
    (bytes(range(256)) * 8, "neither UTF-8, GB18030/GBK nor Big5"),
])
def test_a_record_that_cannot_be_read_is_refused_and_the_game_kept(client, data, words):
    """Before: the broken UBB record opened as a game of no moves from the standard start (200)."""
    r = _open(client, data)
    assert r.status_code == 400 and words in r.json()["detail"], r.text
    assert [m["iccs"] for m in client.get("/api/game").json()["moves"]] == ["h2e2"]


def test_convert_names_the_file_it_cannot_read(tmp_path, capsys):
    bad = tmp_path / "noise.xqf"
    bad.write_bytes(bytes(range(256)) * 8)
    assert main(["convert", str(bad), str(tmp_path / "out.pgn")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"xiangqi convert: error: {bad}: the data is neither UTF-8, GB18030/GBK nor Big5 text: 16 "
                   "of its 2048 bytes cannot be read as gb18030 (the closest), the first at byte 128 (line "
                   "2: 0x80); a text record may hold at most 2 such bytes"]


def test_game_socket_refuses_unknown_fields_and_bad_versions(client):
    """Before: ``{"type": "resign", "extra": {}}`` resigned and a move's ``"version": "x"`` was ignored."""
    gid = client.get("/api/game").json()["id"]
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        assert ws.receive_json()["type"] == "state"
        for msg, detail in [({"type": "resign", "extra": {}},
                             "resign message: unknown field(s) 'extra' (it takes none)"),
                            ({"type": "move", "move": "h9g7", "verison": 3},
                             "move message: unknown field(s) 'verison' (it takes move, version)"),
                            ({"type": "move", "move": "h9g7", "version": "x"},
                             "'version' must be the integer version of the state shown, got 'x'")]:
            ws.send_json(msg)
            got = ws.receive_json()
            assert got["type"] == "error" and got["detail"] == detail, got
        ws.send_json({"type": "move", "move": "h9g7"})
        assert ws.receive_json()["type"] == "state"
    st = client.get("/api/game").json()
    assert st["result"] is None and [m["iccs"] for m in st["moves"]] == ["h2e2", "h9g7"]
