"""Concurrency of the game server: the engine thread, many clients, hints and versioned state.

These tests drive :class:`xiangqi.app.play.hub.GameHub` on an event loop of their own (``asyncio.run``),
with move providers and fake engines whose timing is fixed, so they assert orderings and counts,
not milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.webclient import api_client, run_coroutine

from xiangqi.app.opponents.players import EnginePlayer
from xiangqi.app.play.hub import GameHub, HintCancelledError
from xiangqi.app.play.store import Store
from xiangqi.core.board import Board, Move
from xiangqi.web.server import create_app


class QuietStore(Store):
    """A real store whose saves are skipped: these tests are about threads, not disks."""

    def save_current(self, session, slot="current"):
        pass

    def save_finished(self, session, pgn, language="zh"):
        return 0


def consistent(board: Board) -> bool:
    """Whether ``board``'s squares, kings and side to move are what its own move history gives."""
    try:
        ref = Board(board.starting_fen())
        for mv in board.move_stack:
            ref.push(mv)
    except Exception:
        return False
    return (ref.squares == board.squares and ref.turn == board.turn
            and ref._kings == board._kings and ref.halfmove_clock == board.halfmove_clock)


def test_engine_never_sees_a_board_that_state_is_changing(tmp_path):
    """The event loop answers state() (legal-move marks, forbidden moves: they make and take back
    moves) all the time while the engine plays both sides, with the interpreter switching threads
    often: every board the engine gets is consistent and every move it picks is played (no
    "illegal move", no stalled game)."""
    target = 2000
    seen = {"copies": 0, "corrupt": 0, "stalls": 0}
    rng = random.Random(7)

    def provider(board: Board, level: str):
        seen["copies"] += 1
        if not consistent(board):
            seen["corrupt"] += 1
        return rng.choice(list(board.legal_moves))

    async def run() -> None:
        hub = GameHub(QuietStore(tmp_path), move_provider=provider, engine_delay_s=0)
        stop = False

        async def hammer() -> None:  # pages asking for the state between any two engine steps
            while not stop:
                hub.state()
                await asyncio.sleep(0)

        ham = asyncio.get_running_loop().create_task(hammer())
        deadline = time.monotonic() + 150  # about 10 s on an idle machine
        await hub.new_game(red="engine", black="engine", level="beginner")
        while seen["copies"] < target and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
            idle = hub._engine_task is None or hub._engine_task.done()
            if not hub.session.is_over and idle:
                seen["stalls"] += 1  # the engine loop gave up on a game that goes on
            if hub.session.is_over or idle:
                await hub.new_game(red="engine", black="engine", level="beginner")
        stop = True
        await ham
        await hub.shutdown()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-3)  # switch threads often: a copy lands inside a make/unmake if it can
    try:
        run_coroutine(run())
    finally:
        sys.setswitchinterval(interval)
    assert seen["corrupt"] == 0, f"{seen['corrupt']} of {seen['copies']} boards the engine got were corrupt"
    assert seen["stalls"] == 0, f"{seen['stalls']} games stalled in {seen['copies']} engine moves"
    assert seen["copies"] >= target


# -- a page that stops reading -------------------------------------------------------------------

DATA = Path(__file__).parent.parent / "data"
GAME_1982 = DATA / "records" / "pgn" / "xiangqijs_readme_iccs_1982.pgn"  # 125 plies: ~13 kB states


@contextlib.contextmanager
def live_server(tmp_path: Path, **kw):
    """``create_app`` served by uvicorn in a thread; yields ``(base_url, app)``. The listening socket
    has a small send buffer (accepted sockets inherit it), so a page that does not read backs up
    after a few messages instead of after the kernel's megabytes."""
    import uvicorn

    app = create_app(tmp_path, warmup=False, engine_delay_s=0, **kw)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        listener.close()


def test_a_page_that_never_reads_does_not_block_other_moves(tmp_path, monkeypatch):
    """A WebSocket whose reader stopped (small buffers, nothing read): the server's sends to it back
    up. Another page's undos and moves (REST here) must still be answered, every time, and the stuck
    page is dropped because its queue filled (it would reconnect and get the current state).

    No clock decides: a send to the stuck page never times out here (the send time-out is set to an
    hour), so a server that waited for that page would never answer the first undo (the client's
    60 s is only the bound of a hung test), and the page can only be dropped for its full queue
    (:data:`xiangqi.web.clients.SEND_QUEUE_LIMIT` messages waiting)."""
    import httpx
    from websockets.sync.client import connect

    from xiangqi.web import clients

    monkeypatch.setitem(clients.Client.__init__.__kwdefaults__, "send_timeout_s", 3600.0)
    with live_server(tmp_path) as (base, app):
        token = app.state.token
        http = httpx.Client(base_url=base, timeout=60, headers={"Origin": base, "X-Xiangqi-Token": token})
        r = http.post("/api/game/new", json={"red": "human", "black": "human"})
        assert r.status_code == 200, r.text
        st = http.post("/api/game/open", content=GAME_1982.read_bytes()).json()
        assert len(st["moves"]) == 125
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        stuck = connect(base.replace("http", "ws") + f"/ws/game/{st['id']}?token={token}", sock=sock,
                        max_queue=1, origin=base, open_timeout=60)
        try:
            hub = app.state.hub
            deadline = time.monotonic() + 60  # "eventually": the socket is served (a poll, no bound)
            while len(hub.clients) != 1:
                assert time.monotonic() < deadline, "the stuck page was never served"
                time.sleep(0.01)
            (page,) = list(hub.clients)
            last = st["moves"][-1]["iccs"]
            answered = 0
            for i in range(120):  # ~13 kB of state for the stuck page per request
                try:
                    r = http.post("/api/game/undo") if i % 2 == 0 else http.post(
                        "/api/game/move", json={"move": last})
                except httpx.TimeoutException:
                    raise AssertionError(f"request {i} blocked: the server waits for a page that does "
                                         "not read") from None
                assert r.status_code == 200, r.text
                answered += 1
            assert answered == 120
            assert page.dropped and "messages waiting: the page does not read" in page.reason, page.reason
            assert len(hub.clients) == 0  # the stuck page was dropped
        finally:
            with contextlib.suppress(Exception):
                stuck.close()


# -- a computer player that fails ----------------------------------------------------------------

def first_move(board: Board, level: str) -> Move:
    return min(board.legal_moves, key=lambda m: m.iccs())


#: How long a read waits for the next message before it calls the game stalled: the bound of a hung
#: test, not a measure (each message here comes in milliseconds on an idle machine; a stalled game
#: sends nothing ever), so generous for a loaded one.
STALL_S = 60.0


def receive_within(ws, seconds: float = STALL_S):
    """The next JSON message of a TestClient WebSocket, or AssertionError after ``seconds`` (a game
    that stalls sends nothing more: the test must fail, not hang)."""
    import anyio

    async def get():
        with anyio.fail_after(seconds):
            return await ws._send_rx.receive()  # the session's own receive, with a deadline

    try:
        message = ws.portal.call(get)
    except TimeoutError:
        raise AssertionError(f"no message within {seconds:g} s: the game stalled") from None
    ws._raise_on_close(message)
    return json.loads(message["text"])


def read_until(ws, pred, limit=50, seconds=STALL_S):
    """WebSocket messages until one satisfies ``pred``; returns it."""
    for _ in range(limit):
        msg = receive_within(ws, seconds)
        if pred(msg):
            return msg
    raise AssertionError("the expected message did not arrive")


def test_an_engine_that_fails_once_is_retried_and_the_game_goes_on(tmp_path, caplog):
    calls = []

    def flaky(board, level):
        calls.append(board.fen())
        if len(calls) == 1:
            raise RuntimeError("search blew up")
        return first_move(board, level)

    with api_client(create_app(tmp_path, move_provider=flaky, warmup=False, engine_delay_s=0)) as client:
        st = client.post("/api/game/new", json={"red": "human", "black": "engine"}).json()
        with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
            ws.send_json({"type": "move", "move": "h2e2"})
            msg = read_until(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 2)
    assert msg["state"]["engine_error"] is None and not msg["state"]["thinking"]
    assert len(calls) == 2 and calls[0] == calls[1]  # the same position, asked again
    assert any("search blew up" in r.getMessage() or "search blew up" in str(r.exc_info)
               for r in caplog.records if r.levelname in ("ERROR", "CRITICAL"))


class TooSlow:
    """A computer that answers only when the test lets it: every call waits for its own gate, so it
    is later than the hub's time-out however loaded the machine is. The first ``released`` calls
    may answer (late: their answers must be ignored), the others wait until :meth:`close`."""

    def __init__(self) -> None:
        self.gates: list[threading.Event] = []
        self.answered: list[int] = []  # the calls that answered (late), by number
        self._lock = threading.Lock()

    def __call__(self, board, level):
        with self._lock:
            gate = threading.Event()
            self.gates.append(gate)
            n = len(self.gates)
        gate.wait(600)
        self.answered.append(n)
        return first_move(board, level)

    def release(self, n: int) -> None:
        """Let the first ``n`` calls answer."""
        for gate in self.gates[:n]:
            gate.set()

    def close(self) -> None:
        for gate in self.gates:
            gate.set()


@pytest.mark.parametrize("make", [
    pytest.param(lambda: lambda b, lv: 1 / 0, id="raises"),
    pytest.param(lambda: lambda b, lv: Move.from_iccs("d4c4"), id="illegal"),  # no piece on d4
    pytest.param(lambda: lambda b, lv: None, id="no-move"),
    pytest.param(TooSlow, id="too-slow"),
])
def test_a_failing_engine_never_stalls_the_game(tmp_path, make):
    """The computer fails twice (the try and its retry): the page is told (``engine_error`` in the
    state and an ``error`` text), and the player may retry it or make the computer's move. A too
    slow computer's answers that come after its time-out are ignored (they come here while the page
    shows the failure: the position stays)."""
    provider = make()
    calls = []

    def counted(board, level):
        calls.append(1)
        return provider(board, level)

    app = create_app(tmp_path, move_provider=counted, warmup=False, engine_delay_s=0)
    app.state.hub.engine_timeout_s = 0.2
    try:
        with api_client(app) as client:
            st = client.post("/api/game/new", json={"red": "human", "black": "engine"}).json()
            with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
                ws.send_json({"type": "move", "move": "h2e2"})
                msg = read_until(ws, lambda m: m["type"] == "state" and m["state"].get("engine_error"))
                failed = msg["state"]
                assert not failed["thinking"] and failed["turn"] == "black" and len(failed["moves"]) == 1
                assert failed["engine_error"]["attempts"] == 2 and len(calls) == 2
                assert msg["error"]
                assert failed["engine_error"]["detail_en"].startswith("The computer could not")
                # the player asks for another try: it fails again, and says so again
                ws.send_json({"type": "retry"})
                read_until(ws, lambda m: m["type"] == "state" and m["state"]["engine_error"] is None)
                read_until(ws, lambda m: m["type"] == "state" and m["state"].get("engine_error"))
                assert len(calls) == 4
                if isinstance(provider, TooSlow):  # the four late answers arrive now: none is played
                    provider.release(4)
                    deadline = time.monotonic() + 60  # "eventually" (a poll): the threads answer
                    while len(provider.answered) < 4:
                        assert time.monotonic() < deadline, provider.answered
                        time.sleep(0.01)
                    now = client.get("/api/game").json()
                    assert len(now["moves"]) == 1 and now["engine_error"] is not None
                # ... then makes the computer's move for it; the game goes on
                ws.send_json({"type": "move", "move": "h7e7"})
                msg = read_until(ws, lambda m: m["type"] == "state" and len(m["state"]["moves"]) == 2)
                assert msg["state"]["engine_error"] is None and msg["state"]["turn"] == "red"
                assert [m["iccs"] for m in msg["state"]["moves"]] == ["h2e2", "h7e7"]
                ws.send_json({"type": "move", "move": "b2c2"})
                msg = read_until(ws, lambda m: m["type"] == "state" and m["state"].get("engine_error"))
                assert len(msg["state"]["moves"]) == 3  # the computer was asked again for its next move
            assert client.get("/api/game").json()["engine_error"] is not None
            assert client.post("/api/game/retry").status_code == 200
    finally:
        if isinstance(provider, TooSlow):
            provider.close()


# -- hints never delay the computer's move -------------------------------------------------------

class TimedEngine:
    """Stands in for the kernel engine: every search takes ``seconds`` unless stopped, and is logged
    as ``(event, kind, stopped)``; like the real engine, a stop before a search begins is lost."""

    def __init__(self, seconds: float, query_seconds: float | list[float] | None = None) -> None:
        self.seconds = seconds
        #: a query's seconds, or a list: the first query's, the second's, ... (the last one repeats)
        self.query_seconds = seconds if query_seconds is None else query_seconds
        self.log: list[tuple[str, str, bool]] = []
        self._stop = threading.Event()
        self._queries = 0

    def stop(self) -> None:
        self._stop.set()

    def _query_time(self) -> float:
        q = self.query_seconds
        self._queries += 1
        return q[min(self._queries, len(q)) - 1] if isinstance(q, list) else q

    def _run(self, kind: str, board: Board):
        self._stop.clear()
        self.log.append(("start", kind, False))
        stopped = self._stop.wait(self._query_time() if kind == "query" else self.seconds)
        self.log.append(("end", kind, stopped))
        return first_move(board, "")

    def play(self, board, level):
        return type("R", (), {"move": self._run("move", board)})()

    def search(self, board, limit):
        mv = self._run("query", board)
        return type("R", (), {"move": mv, "score_cp": 0, "mate": None, "pv": [mv]})()


class ReadyPlayer(EnginePlayer):
    """An EnginePlayer around a :class:`TimedEngine`, its kernels "compiled"."""

    def __init__(self, engine: TimedEngine) -> None:
        super().__init__()
        self._engine = engine

    @staticmethod
    def kernels_ready() -> bool:
        return True


async def until(pred, seconds: float = 60.0) -> None:
    """Wait (polling) until ``pred()``: "eventually", the bound only ends a hung test."""
    deadline = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


def test_forty_hints_do_not_delay_the_computers_move(tmp_path):
    """40 hints are asked for at once, then the player moves: the computer's search starts while
    the first hint runs (that one is stopped), the other 39 never search (their position is gone),
    and every one of the 40 callers gets an answer (a cancelled hint) instead of hanging. A hint
    searches until stopped (60 s), so that a loaded machine cannot let it end before the move."""
    eng = TimedEngine(0.5, query_seconds=60)

    async def run():
        hub = GameHub(QuietStore(tmp_path), player=ReadyPlayer(eng), engine_delay_s=0)
        await hub.new_game(red="human", black="engine", level="beginner")
        hints = [asyncio.get_running_loop().create_task(hub.hint()) for _ in range(40)]
        await until(lambda: eng.log[:1] == [("start", "query", False)])
        await hub.move("h2e2")
        await until(lambda: len(hub.session.moves) == 2)
        answers = await asyncio.gather(*hints, return_exceptions=True)
        await hub.shutdown()
        return answers

    answers = run_coroutine(run())
    first_move_start = eng.log.index(("start", "move", False))
    assert [e for e in eng.log[:first_move_start] if e[0] == "start"] == [("start", "query", False)]
    assert ("end", "query", True) in eng.log[:first_move_start]  # the running hint was stopped
    assert sum(1 for e in eng.log if e == ("start", "query", False)) == 1
    assert ("end", "move", False) in eng.log  # the computer searched its full time
    assert all(isinstance(a, HintCancelledError) for a in answers), answers
    assert "position changed" in str(answers[0])


def test_a_new_hint_from_the_same_page_cancels_its_older_one(tmp_path):
    # the first hint searches until stopped (60 s; 0.3 s could end before the second request on a
    # loaded machine), the others 0.3 s
    eng = TimedEngine(0.3, query_seconds=[60, 0.3])

    async def run():
        hub = GameHub(QuietStore(tmp_path), player=ReadyPlayer(eng), engine_delay_s=0)
        await hub.new_game(red="human", black="engine", level="beginner")
        page, other = object(), object()
        first = asyncio.get_running_loop().create_task(hub.hint(page))
        theirs = asyncio.get_running_loop().create_task(hub.hint(other))
        await until(lambda: eng.log[:1] == [("start", "query", False)])
        second = await hub.hint(page)
        out = await asyncio.gather(first, theirs, return_exceptions=True)
        await hub.shutdown()
        return out, second

    (first, theirs), second = run_coroutine(run())
    assert isinstance(first, HintCancelledError) and "newer hint request" in str(first)
    assert theirs["move"] == second["move"] == "a0a1"  # another page's hint is not touched
    assert eng.log[:2] == [("start", "query", False), ("end", "query", True)]  # stopped at once
    assert eng.log.count(("end", "query", False)) == 2


# -- versioned state -----------------------------------------------------------------------------

def settled(n):
    """A predicate: a state message with ``n`` plies and the computer not thinking."""
    return lambda m: (m["type"] == "state" and len(m["state"]["moves"]) == n
                      and not m["state"]["thinking"])


def test_two_tabs_pressing_undo_once_each_take_back_one_move(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        st = client.post("/api/game/new", json={"red": "human", "black": "engine"}).json()
        with client.websocket_connect(f"/ws/game/{st['id']}") as a, \
                client.websocket_connect(f"/ws/game/{st['id']}") as b:
            seen = [read_until(a, lambda m: m["type"] == "state")["state"]["version"]]
            for i, mv in enumerate(("h2e2", "b2c2")):
                a.send_json({"type": "move", "move": mv})
                while True:  # every state message, each one version further
                    msg = read_until(a, lambda m: m["type"] == "state")
                    seen.append(msg["state"]["version"])
                    if settled(2 * i + 2)(msg):
                        break
            assert seen == list(range(seen[0], seen[0] + len(seen))), seen
            shown = read_until(b, settled(4))["state"]["version"]
            assert shown == seen[-1]
            a.send_json({"type": "undo", "version": shown})
            b.send_json({"type": "undo", "version": shown})  # pressed on the same position
            after = read_until(a, settled(2))["state"]
            assert after["version"] > shown
            err = read_until(b, lambda m: m["type"] == "error")
            assert err["request"] == "undo" and err["version"] == after["version"]
            assert "undo refused" in err["detail"] and f"version {shown}" in err["detail"]
            msg = read_until(b, lambda m: m["type"] == "state" and m["state"]["version"] == after["version"])
            assert len(msg["state"]["moves"]) == 2  # one full move taken back, not two
            b.send_json({"type": "undo", "version": "7"})
            assert "integer" in read_until(b, lambda m: m["type"] == "error")["detail"]
        # the same over REST: an optional version, 409 with the current state when stale
        r = client.post("/api/game/undo", json={"version": shown})
        assert r.status_code == 409 and r.json()["state"]["version"] == after["version"]
        assert len(client.get("/api/game").json()["moves"]) == 2
        r = client.post("/api/game/undo", json={"version": after["version"]})
        assert r.status_code == 200 and r.json()["moves"] == []
        assert client.post("/api/game/undo").status_code == 400  # no version: no check; nothing left


def test_the_version_counts_the_computers_thinking_too(tmp_path):
    """A page that receives "thinking" and then the reply sees two versions; an undo pressed while
    the computer thinks (before its reply arrived) is refused once the reply has been played."""
    gate = threading.Event()

    def gated(board, level):
        gate.wait(60)
        return first_move(board, level)

    app = create_app(tmp_path, move_provider=gated, warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        st = client.post("/api/game/new", json={"red": "human", "black": "engine"}).json()
        moved = client.post("/api/game/move", json={"move": "h2e2"}).json()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            thinking = client.get("/api/game").json()
            if thinking["thinking"]:
                break
            time.sleep(0.01)
        assert thinking["thinking"] and thinking["version"] == moved["version"] + 1 > st["version"]
        gate.set()
        with client.websocket_connect(f"/ws/game/{st['id']}") as ws:
            read_until(ws, settled(2))
        r = client.post("/api/game/undo", json={"version": thinking["version"]})
        assert r.status_code == 409 and len(r.json()["state"]["moves"]) == 2


class FakeSocket:
    """A WebSocket stand-in: ``stuck`` ones never finish a send (a page that stopped reading)."""

    def __init__(self, stuck: bool = False) -> None:
        self.stuck = stuck
        self.sent: list[dict] = []
        self.closed: int | None = None

    async def send_json(self, msg):
        if self.stuck:
            await asyncio.Event().wait()
        self.sent.append(msg)

    async def close(self, code=1000):
        self.closed = code


def test_a_full_send_queue_drops_only_that_page(tmp_path):
    from xiangqi.web.clients import DROPPED_CODE, Client

    async def run():
        hub = GameHub(QuietStore(tmp_path), move_provider=first_move, engine_delay_s=0)
        await hub.new_game(red="human", black="human", level="beginner")
        stuck_ws, good_ws = FakeSocket(stuck=True), FakeSocket()
        stuck = Client(stuck_ws, on_drop=hub.remove_client, queue_limit=4)
        good = Client(good_ws, on_drop=hub.remove_client, queue_limit=4)
        hub.add_client(stuck)
        hub.add_client(good)
        for i in range(6):  # each change is one state for every page; the stuck one holds them all
            await asyncio.wait_for(hub.move("h2e2") if i % 2 == 0 else hub.undo(), 60)
            await asyncio.sleep(0.01)
        await until(lambda: len(good_ws.sent) >= 6)  # the good page's sender has sent them all
        await hub.shutdown()
        return hub, stuck, stuck_ws, good, good_ws

    hub, stuck, stuck_ws, good, good_ws = run_coroutine(run())
    assert stuck.dropped and "messages waiting" in stuck.reason and stuck_ws.closed == DROPPED_CODE
    versions = [m["state"]["version"] for m in good_ws.sent]
    assert len(versions) == 6 and versions == sorted(versions)  # the other page got every change
