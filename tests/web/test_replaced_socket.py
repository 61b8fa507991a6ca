"""A game socket acts only on the game it was opened for. When another game replaces it, the socket
is told ``replaced`` (the page then reconnects to the new game); a move, undo, resign, draw, hint or
retry sent on it meanwhile (a second tab, a click in that moment) is refused and changes nothing.
Before, a resignation sent on the old game's socket resigned the new game."""

from __future__ import annotations

import pytest
from tests.webclient import api_client

from xiangqi.web.server import create_app


@pytest.fixture
def client(tmp_path):
    with api_client(create_app(tmp_path, warmup=False, engine_delay_s=0)) as c:
        yield c


def _new(client) -> str:
    assert client.post("/api/game/new", json={"red": "human", "black": "human"}).status_code == 200
    return client.get("/api/game").json()["id"]


@pytest.mark.parametrize(("message", "kind"), [({"type": "resign"}, "resign"),
                                               ({"type": "move", "move": "h2e2"}, "move"),
                                               ({"type": "draw"}, "draw"), ({"type": "undo"}, "undo")])
def test_the_old_games_socket_cannot_act_on_the_new_game(client, message, kind) -> None:
    old = _new(client)
    with client.websocket_connect(f"/ws/game/{old}") as ws:
        assert ws.receive_json()["state"]["id"] == old
        new = _new(client)
        assert ws.receive_json() == {"type": "replaced", "id": new, "old": old}
        ws.send_json(message)
        answer = ws.receive_json()
        assert answer == {"type": "error", "request": kind,
                          "detail": f"this socket is for game {old}, which another game replaced: nothing "
                                    "was done (reconnect to the current game)"}
    state = client.get("/api/game").json()
    assert state["id"] == new and state["result"] is None and state["moves"] == []


def test_the_current_games_socket_still_acts(client) -> None:
    gid = _new(client)
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        ws.receive_json()
        ws.send_json({"type": "move", "move": "h2e2"})
        assert ws.receive_json()["state"]["moves"][0]["iccs"] == "h2e2"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["type"] == "state"


def test_an_impossible_version_is_refused_without_echoing_it(client) -> None:
    """Before: a 4000-digit ``version`` came back whole in "undo refused: it was pressed at version …"."""
    gid = _new(client)
    with client.websocket_connect(f"/ws/game/{gid}") as ws:
        ws.receive_json()
        ws.send_text('{"type": "undo", "version": ' + "9" * 4000 + "}")
        assert ws.receive_json() == {"type": "error", "request": "undo", "detail":
                                     "'version' must be a state version from 0 to 9223372036854775807, "
                                     "got a number of 4000 digits"}
        ws.send_json({"type": "move", "move": "h2e2", "version": -1})
        assert ws.receive_json()["detail"].endswith("got -1")
    assert client.get("/api/game").json()["moves"] == []


def test_rest_undo_refuses_an_impossible_version(client) -> None:
    _new(client)
    r = client.post("/api/game/undo", json={"version": int("9" * 30)})
    assert r.status_code == 422
    assert r.json()["detail"] == ("body field 'version': Input should be less than or equal to "
                                  "9223372036854775807")
