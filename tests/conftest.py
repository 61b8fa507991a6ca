"""Shared test helpers: paths to the project's own test data, playing its rows (also used by bench/)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


#: Compiles (or loads) the engine's kernels and the tablebase generator's, each in a process of its
#: own: the Numba cache the workers and their child processes then load from.
_WARM_UP = (
    "from xiangqi.engine.api import warmup; warmup(background=False)",
    "import tempfile\nfrom pathlib import Path\nfrom xiangqi.engine import tablebase as tb\n"
    "with tempfile.TemporaryDirectory() as d:\n    tb.generate('KRK', Path(d))\n",
)


def pytest_configure(config):
    """With xdist workers (``-n N``), fill the Numba cache once before they start. Without it every
    worker, and every ``xiangqi serve`` or engine process a test starts before a cache file is
    written, compiled the same kernels on its own: ~50 CPU seconds each time on this 2-core machine,
    where a cache hit costs ~2 s. One process (no ``-n``) compiles on first use as before."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if config.option.collectonly:
        return
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for code in _WARM_UP]
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:  # the tests that need the kernels will say what is wrong
            print(f"numba warm-up failed ({proc.returncode}): {err.decode(errors='replace')[-500:]}",
                  file=sys.stderr)


#: Seconds a test's socket waits for the server's next message before the test fails. Starlette's
#: TestClient waits forever: a message that never comes (a lost update, a server that stopped sending)
#: hung the whole run until CI's time ran out, instead of failing the one test with a traceback.
SOCKET_RECEIVE_TIMEOUT = 60.0


def _bound_socket_receive() -> None:
    """Make ``WebSocketTestSession.receive`` (and so ``receive_json``/``receive_text``) fail with
    ``TimeoutError`` after :data:`SOCKET_RECEIVE_TIMEOUT` seconds without a message."""
    try:
        import anyio
        from starlette.testclient import WebSocketTestSession
    except ImportError:  # the tests that need them say so
        return

    async def _within(rx, seconds):
        with anyio.fail_after(seconds):
            return await rx.receive()

    def receive(self):
        try:
            return self.portal.call(_within, self._send_rx, SOCKET_RECEIVE_TIMEOUT)
        except TimeoutError:
            raise TimeoutError(
                f"no message from the server's socket in {SOCKET_RECEIVE_TIMEOUT:.0f} s") from None

    WebSocketTestSession.receive = receive


_bound_socket_receive()


def pytest_collection_modifyitems(config, items):
    """Slow tests (matches, deep perft, whole-corpus runs) may take longer than the default run's
    per-test bound (``timeout`` in pyproject.toml): each gets an hour unless it sets its own."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(3600))


@pytest.fixture(autouse=True, scope="session")
def _own_data_dir(tmp_path_factory):
    """Point ``$XIANGQI_DATA_DIR`` at a directory of this test process for the whole session, so that
    nothing a test forgets to place (a Store(), the engine's endgame tables, a CLI command, a child
    process) reads or writes the user's data dir: shared by the xdist workers, its store lock would
    make two of them fail each other, and tables found there would change what the engine plays."""
    old = os.environ.get("XIANGQI_DATA_DIR")
    os.environ["XIANGQI_DATA_DIR"] = str(tmp_path_factory.mktemp("xiangqi-data"))
    yield
    if old is None:
        os.environ.pop("XIANGQI_DATA_DIR", None)
    else:
        os.environ["XIANGQI_DATA_DIR"] = old


def read_tsv(name: str) -> list[dict[str, str]]:
    """Rows of tests/data/<name> as dicts keyed by the header line."""
    with open(DATA / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def cxa_case(case_id: str):
    """``(board, last_move)`` of a repetition_cxa.tsv row: the board before the row's last move.

    Imports the core lazily so that this conftest stays cheap to load.
    """
    from xiangqi.core.board import Board, Move

    row = next(r for r in read_tsv("repetition_cxa.tsv") if r["id"] == case_id)
    b = Board(row["fen"])
    moves = row["moves"].split()
    for m in moves[:-1]:
        b.push_iccs(m)
    return b, Move.from_iccs(moves[-1])


def play(fen: str, moves: str):
    """The board after the space-separated ICCS ``moves`` from ``fen`` (a row of the repetition tables).

    fsf1191's FEN carries an empty pocket "[]" (Fairy-Stockfish's notation): the board is the same.
    """
    from xiangqi.core.board import Board, Move

    b = Board(fen.replace("[]", ""))
    for m in moves.split():
        b.push(Move.from_iccs(m))
    return b


def winner(board, rules: object) -> str:
    """``"red"``, ``"black"``, ``"draw"`` or ``"none"``: the board's outcome under ``rules``."""
    out = board.outcome(rules)
    return "none" if out is None else out.winner_name()
