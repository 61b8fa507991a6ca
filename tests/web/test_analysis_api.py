"""The analysis board's routes (web/analysis_api.py): positions and moves of the tree, saved
variations (stored as PGN, read back by our reader), export, and the engine panel's WebSocket:
bad messages are errors (the socket stays open), the number of analyses is bounded, the search
stops when asked and gives way to the game's computer."""

from __future__ import annotations

import time

import pytest
from tests.webclient import api_client

from xiangqi.core import pgn
from xiangqi.web import analysis_api
from xiangqi.web.server import create_app

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        yield c


def test_position_and_play(client):
    r = client.post("/api/analysis/position", json={"fen": START})
    assert r.status_code == 200
    body = r.json()
    assert body["turn"] == "red" and body["check"] is None and body["over"] is None
    assert sum(len(v) for v in body["legal"].values()) == 44
    assert "h2e2" in body["legal"]["h2"]
    r = client.post("/api/analysis/play", json={"fen": START, "move": "h2e2"})
    assert r.status_code == 200
    node = r.json()
    assert node["text"] == {"chinese": "炮二平五", "wxf": "C2.5", "iccs": "H2-E2"}
    assert node["fen"].startswith("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b")
    # a check is named by the king's square
    fen = "3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1"
    assert client.post("/api/analysis/play", json={"fen": fen, "move": "e1d1"}).json()["check"] == "d9"


def test_line(client):
    r = client.post("/api/analysis/line", json={"fen": START, "moves": ["h2e2", "h9g7", "h0g2"]})
    assert [n["text"]["chinese"] for n in r.json()["nodes"]] == ["炮二平五", "马8进7", "马二进三"]
    assert r.json()["nodes"][2]["fen"].split(" ")[1] == "b"
    r = client.post("/api/analysis/line", json={"fen": START, "moves": ["h2e2", "h2e2"]})
    assert r.status_code == 400 and r.json()["detail"].startswith("move 2: h2e2 is not a legal move")
    assert client.post("/api/analysis/line", json={"fen": START, "moves": []}).status_code == 422


def test_position_and_play_refuse_bad_input(client):
    assert client.post("/api/analysis/position", json={"fen": "xyz"}).status_code == 400
    r = client.post("/api/analysis/play", json={"fen": START, "move": "a0a5"})
    assert r.status_code == 400 and "not a legal move" in r.json()["detail"]
    assert client.post("/api/analysis/play", json={"fen": START, "move": "zz99"}).status_code == 400
    assert client.post("/api/analysis/play", json={"fen": START, "move": 12}).status_code == 422
    assert client.post("/api/analysis/position", json={"fen": START, "x": 1}).status_code == 422


def tree_of(view):
    """The page's flat form of a tree view (nodes in id order: parents first, main child first)."""
    return {"start_fen": view["nodes"][0]["fen"],
            "nodes": [{"parent": n["parent"], "move": n["move"], "comment": n["comment"]}
                      for n in view["nodes"]]}


def test_variations_of_the_current_game_are_saved_and_read_back(client, tmp_path):
    client.post("/api/game/new", json={"red": "human", "black": "human"})
    for mv in ("h2e2", "h9g7", "h0g2"):
        assert client.post("/api/game/move", json={"move": mv}).status_code == 200
    view = client.get("/api/analysis/tree/current").json()
    assert [n["move"] for n in view["nodes"]] == [None, "h2e2", "h9g7", "h0g2"]
    assert view["variations"] == 0
    tree = tree_of(view)
    # a branch after 炮二平五: 炮8平5 instead of 马8进7, then 马二进三; and a comment on it
    tree["nodes"] += [{"parent": 1, "move": "h7e7", "comment": "顺炮"},
                      {"parent": 4, "move": "h0g2", "comment": ""}]
    r = client.put("/api/analysis/tree/current", json=tree)
    assert r.status_code == 200 and r.json() == {"saved": True, "variations": 1, "nodes": 6}
    again = client.get("/api/analysis/tree/current").json()
    assert again["variations"] == 1
    root_children = again["nodes"][1]["children"]
    assert [again["nodes"][c]["move"] for c in root_children] == ["h9g7", "h7e7"]
    alt = again["nodes"][root_children[1]]
    assert alt["comment"] == "顺炮" and alt["text"]["chinese"] == "炮8平5"
    # the stored text is PGN with a variation, and our reader reads it back
    from xiangqi.app.library.trees import TreeStore

    gid = client.get("/api/game").json()["id"]
    stored = TreeStore(client.app.state.store.engine)
    with stored.engine.connect() as conn:
        text = conn.exec_driver_sql("SELECT pgn FROM analysis_trees WHERE game_id = ?", (gid,)).scalar_one()
    assert "( 1... 炮8平5 {顺炮} 2. 马二进三 )" in text
    game = pgn.read_game(text)
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h9g7", "h0g2"]
    assert [v.move.iccs() for v in game.variations[0].variations] == ["h9g7", "h7e7"]
    # the game goes on: the main line follows it and the branch stays
    client.post("/api/game/move", json={"move": "h7h0"})
    view = client.get("/api/analysis/tree/current").json()
    assert [view["nodes"][c]["move"] for c in view["nodes"][1]["children"]] == ["h9g7", "h7e7"]
    assert view["variations"] == 1


def test_tree_put_refuses_a_tree_that_is_not_the_game(client):
    client.post("/api/game/new", json={"red": "human", "black": "human"})
    client.post("/api/game/move", json={"move": "h2e2"})
    other = {"start_fen": START, "nodes": [{"parent": None, "move": None}, {"parent": 0, "move": "b2e2"}]}
    r = client.put("/api/analysis/tree/current", json=other)
    assert r.status_code == 400 and "main line" in r.json()["detail"]
    bad = {"start_fen": START, "nodes": [{"parent": None}, {"parent": 0, "move": "h2e2"},
                                            {"parent": 5, "move": "h9g7"}]}
    r = client.put("/api/analysis/tree/current", json=bad)
    assert r.status_code == 400 and "node 2" in r.json()["detail"]
    illegal = {"start_fen": START, "nodes": [{"parent": None}, {"parent": 0, "move": "h2e2"},
                                            {"parent": 1, "move": "h2e2"}]}
    assert "not a legal move" in client.put("/api/analysis/tree/current", json=illegal).json()["detail"]
    twice = {"start_fen": START, "nodes": [{"parent": None}, {"parent": 0, "move": "h2e2"},
                                            {"parent": 0, "move": "h2e2"}]}
    assert "twice" in client.put("/api/analysis/tree/current", json=twice).json()["detail"]
    assert client.put("/api/analysis/tree/current", json={"start_fen": START, "nodes": []}).status_code == 422
    assert client.put("/api/analysis/tree/library/99", json=other).status_code == 404


def test_export_writes_the_variations(client):
    tree = {"start_fen": START, "nodes": [{"parent": None}, {"parent": 0, "move": "h2e2"},
                                           {"parent": 0, "move": "b2e2", "comment": "过宫炮? 不，中炮"},
                                           {"parent": 1, "move": "h9g7"}],
            "headers": {"Event": "test"}, "notation": "wxf"}
    r = client.post("/api/analysis/export", json=tree)
    assert r.status_code == 200
    game = pgn.read_game(r.content.decode("utf-8"))
    assert game.headers["Event"] == "test"
    assert [v.move.iccs() for v in game.variations] == ["h2e2", "b2e2"]
    assert game.variations[1].comment == "过宫炮? 不，中炮"
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h9g7"]


def test_library_tree_routes(client):
    client.post("/api/game/new", json={"red": "human", "black": "human"})
    client.post("/api/game/move", json={"move": "h2e2"})
    client.post("/api/game/resign")
    row = client.get("/api/library").json()[0]
    view = client.get(f"/api/analysis/tree/library/{row['id']}").json()
    assert view["library_id"] == row["id"] and [n["move"] for n in view["nodes"]] == [None, "h2e2"]
    tree = tree_of(view)
    tree["nodes"].append({"parent": 0, "move": "b2e2", "comment": ""})
    assert client.put(f"/api/analysis/tree/library/{row['id']}", json=tree).json()["variations"] == 1
    assert client.get(f"/api/analysis/tree/library/{row['id']}").json()["variations"] == 1
    assert client.get("/api/analysis/tree/library/12345").status_code == 404


def receive_until(ws, kind, limit=400):
    """Messages from the analysis socket up to the first of type ``kind`` (returned last)."""
    seen = []
    for _ in range(limit):
        msg = ws.receive_json()
        seen.append(msg)
        if msg["type"] == kind:
            return seen
    raise AssertionError(f"no {kind!r} message in {seen[-5:]}")


def test_analysis_socket_bad_messages_are_errors_not_crashes(client):
    with client.websocket_connect("/ws/analysis") as ws:
        s = START
        for bad, words in [("not json", "message"), ('{"type": 1}', "must be"), ('{"type": "go"}', "must be"),
                           ('{"type": "start"}', "fen"), ('{"type": "start", "fen": "xyz"}', "start message"),
                           (f'{{"type": "start", "fen": "{s}", "multipv": 4}}', "multipv"),
                           (f'{{"type": "start", "fen": "{s}", "multipv": "2"}}', "multipv"),
                           (f'{{"type": "start", "fen": "{s}", "moves": ["a0a5"]}}', "move 1"),
                           (f'{{"type": "start", "fen": "{s}", "extra": 1}}', "extra"),
                           ("[1, 2]", "must be")]:
            ws.send_text(bad)
            msg = ws.receive_json()
            assert msg["type"] == "error" and words in msg["detail"], (bad, msg)
        ws.send_json({"type": "stop"})  # nothing runs: answered all the same, the socket still works
        assert ws.receive_json() == {"type": "stopped", "reason": "idle"}
        ws.send_json({"type": "start", "fen": START, "multipv": 1})
        assert ws.receive_json()["type"] == "started"


def test_analysis_socket_streams_lines_and_stops(client):
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "start", "fen": START, "multipv": 2})
        assert ws.receive_json() == {"type": "started", "id": 1}
        infos = [m for m in receive_until(ws, "info")]
        info = infos[-1]
        while info["depth"] < 5:
            info = receive_until(ws, "info")[-1]
        assert info["fen"] == START and info["turn"] == "red" and info["nodes"] > 0
        assert len(info["lines"]) == 2
        first, second = info["lines"]
        assert first["multipv"] == 1 and second["multipv"] == 2 and first["pv"][0] != second["pv"][0]
        assert len(first["chinese"]) == min(len(first["pv"]), 12) and first["red_cp"] == first["score_cp"]
        ws.send_json({"type": "stop"})
        seen = receive_until(ws, "stopped")
        assert seen[-1]["reason"] == "stopped"
        # nothing more comes for the stopped search: the next message answers the next request
        ws.send_json({"type": "start", "fen": START.replace(" w ", " b "), "multipv": 1})
        msgs = receive_until(ws, "started")
        assert all(m["type"] != "info" for m in msgs)
        info = receive_until(ws, "info")[-1]
        assert info["turn"] == "black" and info["lines"][0]["red_cp"] == -info["lines"][0]["score_cp"]


def test_analysis_socket_number_is_bounded(client):
    assert analysis_api.MAX_ANALYSES == 2
    with client.websocket_connect("/ws/analysis") as a, client.websocket_connect("/ws/analysis") as b, \
            client.websocket_connect("/ws/analysis") as c:
        for ws in (a, b):
            ws.send_json({"type": "start", "fen": START})
            assert receive_until(ws, "started")[-1]["type"] == "started"
        c.send_json({"type": "start", "fen": START})
        msg = c.receive_json()
        assert msg["type"] == "error" and "too many analyses" in msg["detail"]
        a.send_json({"type": "stop"})  # a stopped panel frees its slot
        receive_until(a, "stopped")
        c.send_json({"type": "start", "fen": START})
        assert receive_until(c, "started")[-1]["type"] == "started"


def test_analysis_gives_way_to_the_games_computer(client):
    gate = client.app.state.hub.player.gate
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "start", "fen": START})
        receive_until(ws, "info")
        with gate.foreground():
            seen = receive_until(ws, "paused")
            # while the foreground holds, no new lines come and the analysis does not resume: the
            # socket's messages are in order, so a second start's "started" comes after anything
            # sent before it (an order: the pause lasts as long as the foreground, however long)
            ws.send_json({"type": "start", "fen": START.replace(" w ", " b ")})
            msgs = receive_until(ws, "started")
            time.sleep(0.3)  # time to misbehave (a wrong resume would be sent meanwhile)
            ws.send_json({"type": "start", "fen": START.replace(" w ", " b ")})
            msgs += receive_until(ws, "started")
            assert all(m["type"] not in ("info", "resumed") for m in msgs), msgs
        seen = receive_until(ws, "resumed")
        assert all(m["type"] != "info" for m in seen), seen
        info = receive_until(ws, "info")[-1]
        assert info["turn"] == "black"



class _SearchUntilStopped:
    """A stand-in for the built-in engine (no kernels to load): searches until ``stop()``."""

    made: list = []

    def __init__(self, **_kw):
        import threading

        self.made.append(self)
        self.tablebase = None
        self._stop = threading.Event()
        self.searching = threading.Event()

    def set_tablebase_path(self, _path):
        pass

    def stop(self):
        self._stop.set()

    def search(self, board, limit, on_info=None, multipv=1):
        self.searching.set()
        self._stop.wait(60)
        self._stop.clear()


def test_server_shutdown_ends_the_analysis_threads_of_open_sockets(tmp_path, monkeypatch):
    """The server stops while an engine panel's socket is open and its analysis searches: the socket's
    task is cancelled (level-triggered, as anyio's cancel scopes do) while the event loop's executor
    is busy, then the lifespan shuts down. No analysis thread may be left running (before: the
    socket's ``finally`` awaited ``to_thread(close)``, the cancellation dropped the queued close, and
    the shutdown did not know the analyses)."""
    import asyncio
    import contextlib
    import json
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from tests.webclient import run_coroutine

    import xiangqi.engine

    monkeypatch.setattr(xiangqi.engine, "Engine", _SearchUntilStopped)
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    before = set(threading.enumerate())
    blocker = threading.Event()
    pool = ThreadPoolExecutor(2)

    async def main():
        try:
            return await stop_while_searching()
        finally:
            blocker.set()  # asyncio.run waits for its executor's jobs

    async def stop_while_searching():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(pool)
        life_in: asyncio.Queue = asyncio.Queue()
        life_out: asyncio.Queue = asyncio.Queue()
        life = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                       life_in.get, life_out.put))
        await life_in.put({"type": "lifespan.startup"})
        assert (await life_out.get())["type"] == "lifespan.startup.complete"
        ws_in: asyncio.Queue = asyncio.Queue()
        ws_out: asyncio.Queue = asyncio.Queue()
        scope = {"type": "websocket", "path": "/ws/analysis", "raw_path": b"/ws/analysis",
                 "query_string": f"token={app.state.token}".encode(), "root_path": "",
                 "headers": [(b"host", b"127.0.0.1:8765"), (b"origin", b"http://127.0.0.1:8765")],
                 "server": ("127.0.0.1", 8765), "client": ("127.0.0.1", 5000), "scheme": "ws",
                 "subprotocols": [], "asgi": {"version": "3.0"}}
        sock = asyncio.create_task(app(scope, ws_in.get, ws_out.put))
        await ws_in.put({"type": "websocket.connect"})
        assert (await ws_out.get())["type"] == "websocket.accept"
        await ws_in.put({"type": "websocket.receive", "text": json.dumps({"type": "start", "fen": START})})
        msg = await asyncio.wait_for(ws_out.get(), 60)
        assert json.loads(msg["text"])["type"] == "started"
        mine = [t for t in threading.enumerate() if t not in before and t.name == "xiangqi-live-analysis"]
        for _ in range(500):  # it searches
            if _SearchUntilStopped.made and _SearchUntilStopped.made[-1].searching.is_set():
                break
            await asyncio.sleep(0.01)
        # the executor's threads are busy (other requests' work): a queued job waits
        busy = [loop.run_in_executor(None, blocker.wait) for _ in range(2)]
        for _ in range(50):  # the server stops: the socket's task is cancelled, again and again
            if sock.done():
                break
            sock.cancel()
            await asyncio.sleep(0.01)
        with contextlib.suppress(asyncio.CancelledError):
            await sock
        blocker.set()  # the other work ends; the cancelled socket's queued jobs were dropped
        await asyncio.gather(*busy)
        await life_in.put({"type": "lifespan.shutdown"})
        assert (await asyncio.wait_for(life_out.get(), 60))["type"] == "lifespan.shutdown.complete"
        await life
        return mine, [t for t in mine if t.is_alive()]

    try:
        mine, alive = run_coroutine(main())
    finally:
        pool.shutdown(wait=False)
    assert len(mine) == 1
    assert alive == [], "the analysis thread still runs after the server stopped"
    assert len(app.state.analyses) == 0


def test_a_position_where_the_king_can_be_taken_is_refused(client):
    """Before: the board offered d8d9 (taking the black king) and answered a kingless position."""
    fen = "3k5/3R5/9/9/9/9/9/9/9/4K4 w - - 0 1"  # Black's king in check, Red to move
    for path, body in [("/api/analysis/position", {"fen": fen}),
                       ("/api/analysis/play", {"fen": fen, "move": "d8d9"}),
                       ("/api/analysis/line", {"fen": fen, "moves": ["d8d9"]})]:
        r = client.post(path, json=body)
        assert r.status_code == 400, (path, r.text)
        assert r.json()["detail"] == (f"impossible position {fen}: the side not to move is in check (d9): "
                                      "the side to move could take the king")
    r = client.post("/api/analysis/position", json={"fen": "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1"})
    assert r.status_code == 400 and "the kings face each other (e9)" in r.json()["detail"]
    # a position with a check on the side to move is fine
    r = client.post("/api/analysis/position", json={"fen": "3k5/3R5/9/9/9/9/9/9/9/4K4 b - - 0 1"})
    assert r.status_code == 200 and r.json()["check"] == "d9"


def test_the_analysis_socket_refuses_a_position_where_the_king_can_be_taken(client):
    """Before: the engine panel's socket started a search there although the REST routes gave 400."""
    fen = "3k5/3R5/9/9/9/9/9/9/9/4K4 w - - 0 1"  # Black's king in check, Red to move
    with client.websocket_connect("/ws/analysis") as ws:
        for bad, why in [(fen, "the side not to move is in check (d9): the side to move could take the king"),
                         ("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "the kings face each other (e9)")]:
            ws.send_json({"type": "start", "fen": bad, "moves": []})
            msg = ws.receive_json()
            assert msg["type"] == "error", msg
            assert msg["detail"].startswith(f"start message: fen: impossible position {bad}: ")
            assert why in msg["detail"]
    assert len(client.app.state.analyses) == 0  # no search was started
