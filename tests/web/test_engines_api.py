"""Settings → engines (web/engines_api.py, app/opponents/engines.py): an added UCI/UCCI engine is checked by
its handshake, plays as the computer and analyses on the analysis board; bad programs and options
are refused with the reason; a public server refuses the whole list.

The scripted engine is tests/engine/fake_engine.py (run with this Python); Fairy-Stockfish, when
Debian's package is installed (.ci/run installs it), is the real engine."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from tests.webclient import api_client

from xiangqi.app.opponents.engines import EngineSetupError, is_engine_key, resolve_command
from xiangqi.core.board import STARTING_FEN, Board
from xiangqi.web.security import PUBLIC_NO_PROGRAMS
from xiangqi.web.server import create_app

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")
FSF = shutil.which("fairy-stockfish", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/games"]))


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        yield c


def _add(client, mode: str, **extra) -> dict:
    r = client.post("/api/engines", json={"command": sys.executable, "args": [FAKE, mode], **extra})
    assert r.status_code == 200, r.text
    return r.json()


def _wait_state(client, pred, timeout: float = 60.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        st = client.get("/api/game").json()
        if pred(st) or time.monotonic() > end:
            return st
        time.sleep(0.05)


def test_programs_are_resolved_or_refused_with_the_reason(tmp_path):
    assert resolve_command(sys.executable, ["-u"]) == [os.path.abspath(sys.executable), "-u"]
    with pytest.raises(EngineSetupError, match="no program named"):
        resolve_command("no-such-engine-xq")
    with pytest.raises(EngineSetupError, match="no such file"):
        resolve_command(str(tmp_path / "missing"))
    with pytest.raises(EngineSetupError, match="folder"):
        resolve_command(str(tmp_path))
    plain = tmp_path / "engine.txt"
    plain.write_text("not a program")
    with pytest.raises(EngineSetupError, match="not executable"):
        resolve_command(str(plain))
    with pytest.raises(EngineSetupError, match="empty"):
        resolve_command("  ")
    assert is_engine_key("engine:12") and not is_engine_key("engine:0") and not is_engine_key("master")


def test_check_reports_name_protocol_and_options_without_saving(client):
    r = client.post("/api/engines/check", json={"command": sys.executable, "args": [FAKE, "first"]})
    assert r.status_code == 200, r.text
    info = r.json()
    assert info["name"] == "FakeEngine" and info["author"] == "tests" and info["protocol"] == "uci"
    hash_option = {"name": "Hash", "type": "spin", "default": "16", "min": 1, "max": 1024, "var": []}
    assert hash_option in info["options"]
    assert client.get("/api/engines").json() == {"engines": [], "allowed": True}
    # a UCCI-only engine (ElephantEye's dialect) is found by the automatic protocol
    r = client.post("/api/engines/check", json={"command": sys.executable, "args": [FAKE, "ucci-only"]})
    assert r.status_code == 200 and r.json()["protocol"] == "ucci" and r.json()["name"] == "FakeUCCI"


def test_bad_engines_and_options_are_refused(client):
    r = client.post("/api/engines/check", json={"command": "/no/such/engine"})
    assert r.status_code == 422 and "no such file" in r.json()["detail"]
    # a program that is no engine: it never says uciok nor ucciok
    r = client.post("/api/engines/check", json={"command": "/bin/cat", "args": ["/dev/null"]})
    assert r.status_code == 422 and "handshake" in r.json()["detail"]
    for options, words in [({"Hash": 5000}, "outside 1…1024"), ({"Hash": "big"}, "whole number"),
                           ({"Nope": 1}, "no option 'Nope'")]:
        r = client.post("/api/engines", json={"command": sys.executable, "args": [FAKE, "first"],
                                              "options": options})
        assert r.status_code == 422 and words in r.json()["detail"], (options, r.text)
    r = client.post("/api/engines", json={"command": sys.executable, "movetime_s": 0})
    assert r.status_code == 422  # the model's bounds
    assert client.get("/api/engines").json()["engines"] == []
    assert client.delete("/api/engines/7").status_code == 404
    assert client.post("/api/engines/game", json={"engine": 7}).status_code == 404


def test_an_added_engine_is_listed_changed_and_removed(client):
    added = _add(client, "first", options={"Hash": 32}, movetime_s=0.2)
    assert added["key"] == f"engine:{added['id']}" and added["options"] == {"Hash": 32}
    assert added["command"] == os.path.abspath(sys.executable) and added["args"] == [FAKE, "first"]
    changed = client.patch(f"/api/engines/{added['id']}", json={"options": {"MultiPV": 2}, "movetime_s": 0.5})
    assert changed.status_code == 200
    assert changed.json()["options"] == {"Hash": 32, "MultiPV": 2} and changed.json()["movetime_s"] == 0.5
    assert [e["id"] for e in client.get("/api/engines").json()["engines"]] == [added["id"]]
    assert client.delete(f"/api/engines/{added['id']}").json() == {"removed": added["id"]}
    assert client.get("/api/engines").json()["engines"] == []


def test_the_added_engine_plays_as_the_computer(client):
    eng = _add(client, "first", movetime_s=0.1)
    st = client.post("/api/engines/game",
                     json={"engine": eng["id"], "red": "human", "black": "engine"}).json()
    assert st["level"] == eng["key"] and st["players"] == {"red": "human", "black": "engine"}
    client.post("/api/game/move", json={"move": "h2e2"})
    st = _wait_state(client, lambda s: len(s["moves"]) == 2)
    b = Board(STARTING_FEN)
    b.push_iccs("h2e2")
    first = sorted(m.iccs() for m in b.legal_moves)[0]  # what the scripted engine plays
    assert [m["iccs"] for m in st["moves"]] == ["h2e2", first]
    assert "book" not in st["moves"][1]  # its own move, not our opening book
    pgn = client.get("/api/game/pgn").text
    assert '[Black "FakeEngine"]' in pgn


def test_a_failing_engine_shows_the_computer_failure_and_can_be_retried(client):
    eng = _add(client, "die", movetime_s=0.1)
    client.post("/api/engines/game", json={"engine": eng["id"], "red": "engine", "black": "human"})
    st = _wait_state(client, lambda s: s.get("engine_error") is not None)
    assert st["engine_error"] is not None and st["moves"] == []


def test_the_analysis_board_analyses_with_the_added_engine(client):
    eng = _add(client, "variant")  # ranks 1-10 and UCI_Variant, like Fairy-Stockfish
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "start", "fen": STARTING_FEN, "multipv": 1, "engine": eng["key"]})
        assert ws.receive_json()["type"] == "started"
        while (msg := ws.receive_json())["type"] != "info":
            pass
        line = msg["lines"][0]
        assert line["pv"] == ["h2e2", "h9g7"] and line["chinese"] == ["炮二平五", "马8进7"]
        assert line["score_cp"] == 30 and line["red_cp"] == 30
        ws.send_json({"type": "start", "fen": STARTING_FEN, "engine": "engine:999"})
        msg = ws.receive_json()
        while msg["type"] == "info":
            msg = ws.receive_json()
        assert msg["type"] == "error" and "not an added engine" in msg["detail"]


def test_a_public_server_refuses_added_engines(tmp_path):
    app = create_app(tmp_path, warmup=False)
    with api_client(app) as c:
        _add(c, "first")
        app.state.public = True
        listed = c.get("/api/engines").json()
        assert listed == {"engines": [], "allowed": False, "refused": PUBLIC_NO_PROGRAMS}
        r = c.post("/api/engines/check", json={"command": sys.executable, "args": [FAKE, "first"]})
        assert r.status_code == 403 and r.json()["detail"] == PUBLIC_NO_PROGRAMS
        assert c.post("/api/engines/game", json={"engine": 1}).status_code == 403
        assert c.post("/api/engines/1/analyse", json={}).status_code == 403


@pytest.mark.skipif(FSF is None, reason="Debian's fairy-stockfish is not installed")
def test_fairy_stockfish_as_opponent_and_analyser(client):
    r = client.post("/api/engines", json={"command": "fairy-stockfish", "movetime_s": 0.2,
                                          "options": {"Hash": 16}})
    assert r.status_code == 200, r.text
    eng = r.json()
    assert eng["name"].startswith("Fairy-Stockfish") and eng["protocol"] == "uci"
    client.post("/api/engines/game", json={"engine": eng["id"], "red": "human", "black": "engine"})
    client.post("/api/game/move", json={"move": "h2e2"})
    st = _wait_state(client, lambda s: len(s["moves"]) == 2)
    assert len(st["moves"]) == 2 and st.get("engine_error") is None
    b = Board(STARTING_FEN)
    b.push_iccs("h2e2")
    legal = {m.iccs() for m in b.legal_moves}
    assert st["moves"][1]["iccs"] in legal
    r = client.post(f"/api/engines/{eng['id']}/analyse",
                    json={"moves": ["h2e2"], "multipv": 2, "time_s": 0.3})
    lines = r.json()["lines"]
    assert r.status_code == 200 and len(lines) == 2 and lines[0]["move"] != lines[1]["move"]
    assert {ln["move"] for ln in lines} <= legal and lines[0]["depth"] >= 1


def _review_job(client, body: dict) -> dict:
    r = client.post("/api/review", json=body)
    assert r.status_code == 200, r.text
    job = r.json()["job"]
    end = time.monotonic() + 60
    while (st := client.get(f"/api/review/{job}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < end, st
        time.sleep(0.1)
    return st | {"job": job}


def test_the_review_can_be_done_by_the_added_engine(client):
    """POST /api/review with ``engine``: the added engine searches every position (through
    ``ClientSearcher``, the path of ``xiangqi analyse --engine``), the review says which engine made
    it, and it is stored apart from a review by ours."""
    eng = _add(client, "scored", movetime_s=0.1)
    pgn = '[Event "t"]\n\n1. h2e2 h9g7 2. h0g2 *\n'
    st = _review_job(client, {"pgn": pgn, "engine": eng["key"], "depth": 2})
    assert st["status"] == "done", st
    job = st["job"]
    review = st["review"]
    assert review["limit"]["engine"] == "FakeEngine"
    b = Board(STARTING_FEN)
    for ply, mv in zip(review["plies"], ["h2e2", "h9g7", "h0g2"], strict=True):
        assert ply["best"] == sorted(m.iccs() for m in b.legal_moves)[0]  # what the scripted engine plays
        assert ply["eval_before"] == 0 and ply["depth"] == 1  # its info line
        b.push_iccs(mv)
    # ours reviews the same game as another job; an unknown engine and bad keys are refused
    ours = client.post("/api/review", json={"pgn": pgn, "depth": 2}).json()
    assert ours["job"] != job
    assert client.post("/api/review", json={"pgn": pgn, "engine": "engine:77"}).status_code == 404
    assert client.post("/api/review", json={"pgn": pgn, "engine": "fairy"}).status_code == 422


def test_a_review_by_an_engine_that_sends_no_score_fails_with_the_reason(client):
    """An engine that answers with a bone ``bestmove`` (no ``info … score``) cannot judge a move: the
    job fails saying so (before: every position was scored 0 and the review looked valid)."""
    eng = _add(client, "first", movetime_s=0.1)
    st = _review_job(client, {"pgn": '[Event "t"]\n\n1. h2e2 h9g7 *\n', "engine": eng["key"]})
    assert st["status"] == "failed", st
    assert "FakeEngine" in st["error"] and "no score" in st["error"]


def test_relative_paths_are_taken_from_the_folder_the_engine_was_added_from(client, tmp_path, monkeypatch):
    """An engine given as ``python engines/fake.py first`` from the folder the server was started in
    (relative script, ``--book=`` value, a program ``./run-fake``) is found and plays, though it runs
    in its program's folder and the server's working folder changes later (before: the handshake
    failed, python could not open ``engines/fake.py`` in its own bin folder)."""
    home = tmp_path / "user"
    (home / "engines").mkdir(parents=True)
    shutil.copy(FAKE, home / "engines" / "fake.py")
    (home / "book.dat").write_text("book")
    script = home / "run-fake"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} engines/fake.py \"$@\"\n")
    script.chmod(0o755)
    monkeypatch.chdir(home)
    r = client.post("/api/engines/check", json={"command": sys.executable,
                                                "args": ["engines/fake.py", "first", "--book=book.dat"]})
    assert r.status_code == 200, r.text
    assert r.json()["args"] == [str(home / "engines" / "fake.py"), "first", f"--book={home / 'book.dat'}"]
    eng = _add(client, "first")  # the absolute FAKE path stays as it was
    assert eng["args"] == [FAKE, "first"]
    r = client.post("/api/engines", json={"command": sys.executable, "args": ["engines/fake.py", "first"],
                                          "movetime_s": 0.1})
    assert r.status_code == 200, r.text
    rel = r.json()
    assert rel["args"] == [str(home / "engines" / "fake.py"), "first"]
    assert resolve_command("./run-fake")[0] == str(script)
    assert resolve_command("run-fake", base=home)[0] == str(script)  # not on the PATH: the folder's
    monkeypatch.chdir(tmp_path)  # the server's folder is no longer the user's
    client.post("/api/engines/game", json={"engine": rel["id"], "red": "human", "black": "engine"})
    client.post("/api/game/move", json={"move": "h2e2"})
    st = _wait_state(client, lambda s: len(s["moves"]) == 2 or s.get("engine_error") is not None)
    assert st.get("engine_error") is None and len(st["moves"]) == 2


@pytest.mark.parametrize(("mode", "fen", "result", "zh", "en"), [
    # bestmove resign: the engine (Black) resigns
    ("resign", None, "1-0", "黑方（FakeEngine）认输", "Black (FakeEngine) resigns"),
    # nobestmove at the start: no draw rule is met, the claimant loses
    ("nobestmove", None, "1-0", "黑方（FakeEngine）提和无效，判负", "claimed a draw the rules do not give"),
    # bestmove (none) with its next move reaching the 60-move limit: the referee's draw
    ("none", "r2k5/9/9/9/9/9/9/9/9/4K3R b - - 119 80", "1/2-1/2",
     "60回合未吃子，判和（提和成立）（FakeEngine提和）",
     "60 moves without a capture with the claimant's next move (claimed by FakeEngine)"),
])
def test_an_engine_that_gives_no_move_ends_the_game_by_the_referee(client, mode, fen, result, zh, en):
    """An added engine that resigns or claims a draw ends the game with the result and reason a
    match gives (match.runner.judge_claim), not a computer failure (before: ``engine_error``)."""
    eng = _add(client, mode, movetime_s=0.1)
    body = {"engine": eng["id"], "red": "human", "black": "engine"}
    if fen:
        body["fen"] = fen
    st = client.post("/api/engines/game", json=body).json()
    if not fen:
        client.post("/api/game/move", json={"move": "h2e2"})
    st = _wait_state(client, lambda s: s["result"] is not None or s.get("engine_error") is not None)
    assert st.get("engine_error") is None, st.get("engine_error")
    assert st["result"]["result"] == result
    assert zh in st["result"]["reason_zh"] and en in st["result"]["reason_en"], st["result"]
    assert not st["thinking"]
    assert f'[Result "{result}"]' in client.get("/api/game/pgn").text
