"""Only this machine may make the server start a program (DESIGN.md, "Security"; web/security.py).

With ``xiangqi play --lan`` every device on the network gets the page and its token; before this
guard ``POST /api/engines/check {"command": "/bin/sh", "args": ["-c", "id > FILE"]}`` from any of
them ran the command as the server's user. Every route that starts a program (adding, checking,
changing or running an added engine, engine matches, a review or an analysis by an added engine)
is now refused with 403 unless the connection's peer address is this machine's loopback, whatever
the headers say. The requests below come from ``192.0.2.5`` (TEST-NET-1: Starlette's TestClient
sets the ASGI ``client`` address; no packet leaves the process) and carry everything the page
sends (its Origin, ``Host: 127.0.0.1:…`` and the token), so only the peer address differs.

"Nothing ran" is checked on the program itself: the commands would create a file, and the added
engine is a wrapper that writes one line to a log each time it is started.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from starlette.requests import HTTPConnection
from tests.webclient import api_client

from xiangqi.core.board import STARTING_FEN
from xiangqi.web.security import (
    PUBLIC_NO_PROGRAMS,
    THIS_MACHINE_ONLY,
    peer_is_this_machine,
    program_refusal,
)
from xiangqi.web.server import create_app

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")
LAN_PEER = ("192.0.2.5", 1234)


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


@pytest.fixture
def server(tmp_path):
    """(app, a client on this machine, a client on the LAN, the engine's start log, the added engine)."""
    app = create_app(tmp_path / "data", move_provider=first_move, warmup=False, engine_delay_s=0)
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "engine.py"
    wrapper.write_text(
        "import runpy, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write('started\\n')\n"
        f"sys.argv = [{FAKE!r}, 'first']\n"
        f"runpy.run_path({FAKE!r}, run_name='__main__')\n", encoding="utf-8")
    with api_client(app) as local:
        r = local.post("/api/engines", json={"command": sys.executable, "args": [str(wrapper)],
                                             "movetime_s": 0.1})
        assert r.status_code == 200, r.text
        lan = api_client(app, client=LAN_PEER)  # (not entered: the app's lifespan runs once, above)
        yield app, local, lan, log, r.json()


def starts(log: Path) -> int:
    return log.read_text().count("started") if log.exists() else 0


def refused_from_lan(r) -> None:
    assert r.status_code == 403, r.text
    assert r.json() == {"detail": THIS_MACHINE_ONLY}


def test_a_lan_peer_cannot_run_a_command_by_checking_or_adding_an_engine(server, tmp_path):
    _app, local, lan, _log, _eng = server
    proof = tmp_path / "ran"
    command = {"command": sys.executable, "args": ["-c", f"open({str(proof)!r}, 'w').write('ran')"]}
    refused_from_lan(lan.post("/api/engines/check", json=command))
    refused_from_lan(lan.post("/api/engines", json=command))
    refused_from_lan(lan.post("/api/engines", json={**command, "command": "/bin/sh",
                                                   "args": ["-c", f"id > {proof}"]}))
    assert not proof.exists()
    assert len(local.get("/api/engines").json()["engines"]) == 1  # nothing was added
    # the same request from this machine runs the program (it is no engine: 422, but it ran)
    r = local.post("/api/engines/check", json=command)
    assert r.status_code == 422 and proof.read_text() == "ran"


def test_a_lan_peer_cannot_change_remove_play_or_analyse_with_an_added_engine(server):
    _app, local, lan, log, eng = server
    before = starts(log)  # the handshake of the add
    assert before == 1
    game = local.get("/api/game").json()
    # an option naming a file (Fairy-Stockfish's "Debug Log File" writes where it is told)
    refused_from_lan(lan.patch(f"/api/engines/{eng['id']}", json={"options": {"Hash": 64}}))
    refused_from_lan(lan.delete(f"/api/engines/{eng['id']}"))
    refused_from_lan(lan.post("/api/engines/game", json={"engine": eng["id"], "black": "engine"}))
    refused_from_lan(lan.post(f"/api/engines/{eng['id']}/analyse", json={"fen": STARTING_FEN, "time_s": 0.1}))
    refused_from_lan(lan.post("/api/review", json={"current": True, "engine": eng["key"]}))
    assert starts(log) == before  # the engine was never started
    [listed] = local.get("/api/engines").json()["engines"]
    assert listed["options"] == eng["options"] and listed["id"] == eng["id"]
    assert local.get("/api/game").json()["id"] == game["id"]  # the game was not replaced
    # from this machine the same analysis starts the engine and answers
    r = local.post(f"/api/engines/{eng['id']}/analyse", json={"fen": STARTING_FEN, "time_s": 0.1})
    assert r.status_code == 200 and r.json()["engine"]["id"] == eng["id"], r.text
    assert starts(log) == before + 1


def test_a_lan_peer_cannot_run_an_engine_match(server):
    _app, local, lan, log, eng = server
    before = starts(log)
    body = {"players": [eng["key"], "novice"], "games_per_pair": 1, "movetime_s": 0.05}
    refused_from_lan(lan.post("/api/tournament", json=body))
    refused_from_lan(lan.get("/api/tournament"))
    refused_from_lan(lan.delete("/api/tournament"))
    assert local.get("/api/tournament").json() == {"status": "none"}
    assert starts(log) == before


def test_the_analysis_socket_of_a_lan_peer_analyses_with_the_built_in_engine_only(server):
    app, _local, lan, log, eng = server
    before = starts(log)
    with lan.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "start", "fen": STARTING_FEN, "multipv": 1, "engine": eng["key"]})
        msg = ws.receive_json()
        assert msg == {"type": "error", "detail": f"start message: {THIS_MACHINE_ONLY}"}
        ws.send_json({"type": "stop"})
        assert ws.receive_json() == {"type": "stopped", "reason": "idle"}  # no analysis was made
    assert starts(log) == before
    assert not app.state.engines._running  # no process of the added engine


def test_the_engine_list_tells_a_lan_peer_why_it_is_empty(server):
    _app, local, lan, _log, eng = server
    assert lan.get("/api/engines").json() == {"engines": [], "allowed": False, "refused": THIS_MACHINE_ONLY}
    got = local.get("/api/engines").json()
    assert got["allowed"] is True and [e["id"] for e in got["engines"]] == [eng["id"]]


def test_a_lan_peer_still_plays_and_manages_saved_games(server):
    """What the --lan warning says a peer can do, it can: a game, a move, resigning, deleting."""
    _app, _local, lan, _log, _eng = server
    assert lan.post("/api/game/new", json={"red": "human", "black": "human"}).status_code == 200
    assert lan.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
    assert lan.post("/api/game/undo").json()["moves"] == []
    assert lan.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
    assert lan.put("/api/settings", json={"sound": "off"}).json()["sound"] == "off"
    assert lan.post("/api/game/resign").status_code == 200
    [row] = lan.get("/api/library").json()
    assert lan.delete(f"/api/library/{row['id']}").json() == {"deleted": row["id"]}


@pytest.mark.parametrize("headers", [
    {"X-Forwarded-For": "127.0.0.1"},
    {"Forwarded": "for=127.0.0.1"},
    {"X-Real-IP": "127.0.0.1", "Host": "localhost:8765"},
])
def test_no_header_makes_a_lan_peer_this_machine(server, tmp_path, headers):
    app, _local, _lan, _log, _eng = server
    proof = tmp_path / "ran"
    command = {"command": sys.executable, "args": ["-c", f"open({str(proof)!r}, 'w')"]}
    with_headers = api_client(app, client=LAN_PEER, headers=headers)
    refused_from_lan(with_headers.post("/api/engines/check", json=command))
    assert not proof.exists()


def test_a_request_forwarded_by_a_proxy_on_this_machine_is_not_this_machines(server, tmp_path):
    """A loopback peer that says it forwards another client's request (a reverse proxy on this
    machine in front of a LAN server) is refused too: the guard only narrows on headers."""
    app, _local, _lan, _log, _eng = server
    proof = tmp_path / "ran"
    command = {"command": sys.executable, "args": ["-c", f"open({str(proof)!r}, 'w')"]}
    proxied = api_client(app, headers={"X-Forwarded-For": "192.0.2.5"})
    refused_from_lan(proxied.post("/api/engines/check", json=command))
    assert not proof.exists()


def _scope(client, headers=()):
    return {"type": "http", "client": client, "headers": list(headers)}


@pytest.mark.parametrize(("client", "local"), [
    (("127.0.0.1", 5), True), (("127.8.9.10", 5), True), (("::1", 5), True), (("::ffff:127.0.0.1", 5), True),
    (("192.0.2.5", 5), False), (("10.0.0.1", 5), False), (("::ffff:192.0.2.5", 5), False),
    (("fe80::1", 5), False), (("0.0.0.0", 5), False), (("testclient", 50000), False),  # noqa: S104
    (("localhost", 5), False), (None, False), ((), False),
])
def test_only_a_loopback_peer_address_is_this_machine(client, local):
    assert peer_is_this_machine(_scope(client)) is local


def test_a_public_server_starts_no_program_even_for_a_loopback_peer(tmp_path):
    """Behind a reverse proxy every peer of a public server is loopback: it refuses everyone."""
    app = create_app(tmp_path, warmup=False)
    app.state.public = True
    conn = HTTPConnection({**_scope(("127.0.0.1", 5)), "app": app})
    assert program_refusal(conn) == PUBLIC_NO_PROGRAMS
    app.state.public = False
    assert program_refusal(conn) is None
    assert program_refusal(HTTPConnection({**_scope(LAN_PEER), "app": app})) == THIS_MACHINE_ONLY


def test_a_record_a_lan_peer_opens_is_not_played_by_the_added_engine(server):
    """Opening a record keeps the current game's players and level; when this machine plays an added
    engine, a LAN peer's record must not become a new game of that engine (``POST /api/engines/game``
    is refused to it): the built-in computer plays it. From this machine it stays the added engine."""
    _app, local, lan, _log, eng = server
    r = local.post("/api/engines/game", json={"engine": eng["id"], "red": "human", "black": "human"})
    assert r.status_code == 200 and r.json()["level"] == eng["key"], r.text
    record = b'[Game "Chinese Chess"]\n\n1. h2e2 h9g7 *\n'
    r = lan.post("/api/game/open", content=record)
    assert r.status_code == 200, r.text
    assert r.json()["level"] == "beginner"
    r = local.post("/api/engines/game", json={"engine": eng["id"], "red": "human", "black": "human"})
    r = local.post("/api/game/open", content=record)
    assert r.status_code == 200 and r.json()["level"] == eng["key"], r.text
