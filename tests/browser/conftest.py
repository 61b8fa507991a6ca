"""Browser-test fixtures: Debian's Chromium for Playwright and a live game server in a thread.

Playwright never downloads a browser here (DESIGN.md, "Browser tests on these
machines"): the fixtures point it at ``/usr/bin/chromium``. Every test gets its
own server on a free port with its own data dir (``XIANGQI_DATA_DIR`` style),
so tests never see each other's games.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import expect

from xiangqi.app.opponents.players import EnginePlayer
from xiangqi.web.server import create_app

CHROMIUM = "/usr/bin/chromium"

#: How long a browser test waits for anything (an ``expect``, a ``wait_for_*``, a click's target):
#: the bound of a hung test, not a measure. Playwright's defaults (5 s for ``expect``, 30 s for the
#: rest) are speed limits on a loaded 2-core machine (CI with two xdist workers, a Chromium and a
#: server each, and other people's work): a page took longer than 15 s to show a move or a dialog,
#: and the README's run under load failed a 30 s wait. A longer wait changes nothing for a test that
#: passes (it returns as soon as the condition holds); explicit ``timeout=`` arguments are only for
#: waits that are longer still (a whole engine match, tables being generated).
WAIT_MS = 60_000
expect.set_options(timeout=WAIT_MS)

# One engine for the whole session: its kernels compile once (warmup in the background).
_ENGINE = EnginePlayer(hash_mb=16)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM}


@pytest.fixture
def context(context):
    """pytest-playwright's context, its pages waiting :data:`WAIT_MS` for what they wait for."""
    context.set_default_timeout(WAIT_MS)
    return context


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    # bypass_csp: Playwright evaluates wait_for_function's string predicates with eval(), which the
    # page's Content Security Policy forbids; tests/browser/test_security.py runs the page with it.
    return {**browser_context_args, "viewport": {"width": 1200, "height": 900}, "accept_downloads": True,
            "bypass_csp": True}


def listening_socket(port: int = 0) -> socket.socket:
    """A TCP socket listening on 127.0.0.1:``port`` (0: a free port the OS picks), for uvicorn's
    ``Server.run(sockets=[...])``. Held from the start, the port cannot be taken by another test's
    server between "found free" and "bound" (:func:`xiangqi.web.run.free_port` closes its probe)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def wait_started(server: uvicorn.Server, thread: threading.Thread, seconds: float = 60.0) -> None:
    """Wait until ``server`` (run by ``thread``) serves; RuntimeError when it fails or takes longer
    than ``seconds`` (generous: the app's start-up migrates its databases, seconds under load)."""
    deadline = time.monotonic() + seconds
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)


class LiveServer:
    """A uvicorn server in a thread serving ``create_app(data_dir)``; ``restart()`` keeps the data dir."""

    def __init__(self, data_dir: Path, move_provider: Callable | None = None,
                 warmup: bool | None = None, wrap: Callable | None = None) -> None:
        self.data_dir = data_dir
        #: an ASGI layer between uvicorn and the app (e.g. :func:`from_peer`), or None
        self.wrap = wrap
        self.move_provider = move_provider
        #: compile the engine kernels at start (default: when the real engine plays)
        self.warmup = move_provider is None if warmup is None else warmup
        self._sock: socket.socket | None = listening_socket()
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = None

    def start(self) -> None:
        # With a stand-in computer player the engine kernels are not needed: skip their warmup.
        self.app = create_app(self.data_dir, move_provider=self.move_provider, player=_ENGINE,
                              warmup=self.warmup, engine_delay_s=0.05, port=self.port)
        served = self.app if self.wrap is None else self.wrap(self.app)
        config = uvicorn.Config(served, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="on")
        self._server = uvicorn.Server(config)
        sock = self._sock or listening_socket(self.port)  # a restart listens on the same port again
        self._sock = None  # the server closes it when it stops
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        wait_started(self._server, self._thread)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=20)
            self._server = None

    def restart(self) -> None:
        self.stop()
        self.start()


def from_peer(address: str) -> Callable:
    """An ASGI layer (for :class:`LiveServer`'s ``wrap``) that gives every connection the peer
    ``address`` (the ASGI ``client``): the page in this machine's browser is then served as the
    server serves a device at ``address`` on the network, with no packet leaving the loopback."""
    def wrap(app: Callable) -> Callable:
        async def served(scope, receive, send):
            if scope["type"] in ("http", "websocket"):
                scope = {**scope, "client": (address, 50000)}
            await app(scope, receive, send)
        return served
    return wrap


@pytest.fixture(scope="session")
def engine_ready() -> None:
    """Compile (or load from the Numba cache) the engine kernels before a test that needs the engine.

    Tests on :func:`quick_server` skip the server's background warm-up, yet a hint or a draw offer
    still runs the real engine: its first search compiles every kernel inside the request. In a
    fresh ``NUMBA_CACHE_DIR`` that takes about 17 s on an idle 2-core machine and well over the
    page's 20 s wait on a loaded one (test_hint_arrow_is_a_legal_move was flaky for that). Paying
    the compile here, in the fixture, leaves the test's own waits for the search itself.
    """
    from xiangqi.engine import warmup

    warmup(background=False)


@pytest.fixture
def live_server(tmp_path, engine_ready) -> Iterator[LiveServer]:
    """A running server with the built-in engine (kernels compiled) and a fresh data dir."""
    srv = LiveServer(tmp_path / "data")
    srv.start()
    yield srv
    srv.stop()


def first_move(board, level):
    """A fast deterministic computer player: the first legal move in ICCS order."""
    return min(board.legal_moves, key=lambda m: m.iccs())


def failing_first(times: int):
    """A computer player that raises ``RuntimeError("engine crashed")`` on its first ``times`` moves,
    then plays :func:`first_move` (the engine-failure tests)."""
    calls = []

    def broken(board, level):
        calls.append(1)
        if len(calls) <= times:
            raise RuntimeError("engine crashed")
        return first_move(board, level)

    return broken


@pytest.fixture
def quick_server(tmp_path) -> Iterator[LiveServer]:
    """A running server whose computer plays :func:`first_move` at once (no engine timing)."""
    srv = LiveServer(tmp_path / "data", move_provider=first_move)
    srv.start()
    yield srv
    srv.stop()


#: A POST from the page (its token in the header): ``page.evaluate(POST, [path, body])`` gives the status.
POST = """async ([path, body]) => {
  const token = document.querySelector('meta[name=xiangqi-token]').content;
  const headers = {'Content-Type': 'application/json', 'X-Xiangqi-Token': token};
  const r = await fetch(path, {method: 'POST', headers, body: JSON.stringify(body)});
  return r.status; }"""


class Driver:
    """Drives the page the way a player does: by clicking the board and the buttons."""

    def __init__(self, page) -> None:
        self.page = page

    def open(self, url: str) -> None:
        """Load the game page and wait until it has its state and its WebSocket."""
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1'][data-connected='1']")

    def top_action(self, selector: str) -> None:
        """Click the top bar's action ``selector`` as a player does: directly when it is shown, else
        through the 更多 (more) menu first (at phone size most actions are in that menu)."""
        if not self.page.locator(selector).is_visible():
            self.page.click("#btn-more")
        self.page.click(selector)

    def state(self) -> dict:
        """The game state the page shows (as the server sent it)."""
        return self.page.evaluate("window.xq.state")

    def plies(self) -> int:
        return int(self.page.get_attribute("body", "data-plies"))

    def click_move(self, iccs: str) -> None:
        """Wait until the piece on the from-square may move, click it, check its destination is
        marked, click the to-square. (Clicked before its legal moves have arrived, e.g. in a position
        being browsed, the piece would not be selected: no destination mark, ever.)"""
        from playwright.sync_api import expect

        self.page.wait_for_selector(f".xq-board[data-movable-from~='{iccs[:2]}']", state="attached")
        self.page.click(f".xq-hit[data-sq='{iccs[:2]}']")
        expect(self.page.locator(f".xq-dest[data-sq='{iccs[2:4]}']")).to_have_count(1)
        self.page.click(f".xq-hit[data-sq='{iccs[2:4]}']")

    def wait_plies(self, n: int, timeout: float = WAIT_MS) -> None:
        """Wait until the game has ``n`` plies and the computer is not thinking."""
        self.page.wait_for_selector(f"body[data-plies='{n}'][data-thinking='0']", timeout=timeout)

    def play(self, iccs: str, expect_plies: int) -> None:
        self.click_move(iccs)
        self.wait_plies(expect_plies)

    def post(self, path: str, body: dict) -> int:
        """POST ``body`` (JSON) to ``path`` from the page, with its token; the HTTP status."""
        return self.page.evaluate(POST, [path, body])

    def play_by_api(self, iccs: str, expect_plies: int) -> None:
        """Play ``iccs`` through the REST API (a quick stand-in for clicks, where the clicks are not
        what a test is about: the page still gets and shows the move over its WebSocket)."""
        status = self.post("/api/game/move", {"move": iccs})
        assert status == 200, f"{iccs}: {status}"
        self.wait_plies(expect_plies)

    def new_game(self, mode: str = "red", level: str = "beginner") -> None:
        """Start a new game from the dialog; ``mode`` is red, black, two or cvc."""
        old = self.page.get_attribute("body", "data-game-id")
        self.page.click("#btn-new")
        self.page.check(f"#dlg-new input[name=mode][value={mode}]")
        self.page.select_option("#sel-level", level)
        self.page.click("#btn-start")
        self.page.wait_for_function(
            f"document.body.dataset.gameId !== '{old}' && document.body.dataset.connected === '1'")

    def submit_new_game(self) -> None:
        """Click Start in the open new-game dialog and wait until the page shows the new game."""
        old = self.page.get_attribute("body", "data-game-id")
        self.page.click("#btn-start")
        self.page.wait_for_function(
            f"document.body.dataset.gameId !== '{old}' && document.body.dataset.connected === '1'")

    def move_texts(self) -> list[str]:
        """The move list as shown, one entry per ply."""
        return self.page.locator("#move-list .mv:not(.skip)").all_inner_texts()

    def until(self, pred: Callable[[], object], what: str, seconds: float = 60.0) -> None:
        """Wait until ``pred()`` is true, polling every 50 ms through the page's own wait (so the
        page's routes and events are served meanwhile); fails with ``what`` after ``seconds``, the
        bound of a hung test, not a measure (a condition of the server or of a route handler, which
        ``expect`` cannot wait for)."""
        deadline = time.monotonic() + seconds
        while not pred():
            assert time.monotonic() < deadline, f"never: {what}"
            self.page.wait_for_timeout(50)


@pytest.fixture
def driver(page) -> Driver:
    return Driver(page)


@pytest.fixture
def gated_server(tmp_path) -> Iterator[tuple[LiveServer, threading.Event]]:
    """A server whose computer thinks until the test sets the returned event."""
    release = threading.Event()

    def gated(board, level):
        release.wait(30)
        return first_move(board, level)

    srv = LiveServer(tmp_path / "data", move_provider=gated)
    srv.start()
    yield srv, release
    release.set()
    srv.stop()
