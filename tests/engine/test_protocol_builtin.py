"""``xiangqi engine`` as a real process: UCI and UCCI conversations and our own client against it.

The first ``isready`` waits for the Numba kernels (compiled once per cache dir,
loaded from the cache afterwards), hence the generous first timeout.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.engine.client import Limit, Score, SimpleEngine

ENGINE = [sys.executable, "-m", "xiangqi.cli", "engine"]
MATE_IN_ONE = "3k5/9/9/9/9/9/9/9/7R1/4K4 w - - 0 1"  # h1d1 mates (the e file is the red king's)
FIRST_READY = 600.0


class Proc:
    """The engine process with a line queue."""

    def __init__(self) -> None:
        self.p = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.q: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.q.put(line.rstrip("\n"))

    def send(self, *lines: str) -> None:
        assert self.p.stdin is not None
        for line in lines:
            self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def until(self, first_word: str, timeout: float = 60.0) -> list[str]:
        """All lines up to and including the first one starting with ``first_word``."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            out.append(line)
            if line.split()[:1] == [first_word]:
                return out

    def close(self) -> int:
        self.send("quit")
        return self.p.wait(30)


@pytest.fixture(scope="module")
def uci():
    e = Proc()
    e.send("uci")
    lines = e.until("uciok")
    assert lines[0] == "id name pyxiangqi"
    e.send("isready")
    assert e.until("readyok", FIRST_READY) == ["readyok"]
    yield e
    assert e.close() == 0


def test_uci_options_are_announced(uci):
    uci.send("uci")
    lines = uci.until("uciok")
    names = [x.split(" type ")[0][len("option name "):] for x in lines if x.startswith("option")]
    assert {"Hash", "MultiPV", "Level", "Skill Level", "Ponder"} <= set(names)
    assert "option name Level type combo default full var full var beginner var intermediate var advanced " \
           "var master" in lines
    # UCI_Elo spans the measured levels of the shipped ratings file (none: no such options)
    from xiangqi.engine.levels import load_elos

    elos = [m["elo"] for m in load_elos().values()]
    elo_lines = [x for x in lines if "UCI_Elo" in x or "UCI_LimitStrength" in x]
    if elos:
        lo, hi = min(elos), max(elos)
        assert elo_lines == ["option name UCI_LimitStrength type check default false",
                             f"option name UCI_Elo type spin default {hi} min {lo} max {hi}"]
    else:
        assert elo_lines == []


def test_uci_go_depth_gives_full_info_and_a_legal_bestmove(uci):
    uci.send("ucinewgame", "position startpos moves h2e2 h9g7", "go depth 5")
    lines = uci.until("bestmove")
    infos = [x.split() for x in lines if x.startswith("info depth")]
    assert [int(x[2]) for x in infos] == [1, 2, 3, 4, 5]
    last = infos[-1]
    for key in ("seldepth", "multipv", "score", "nodes", "nps", "time", "pv"):
        assert key in last, key
    assert last[last.index("score") + 1] in ("cp", "mate")
    board = Board()
    for m in ("h2e2", "h9g7"):
        board.push_iccs(m)
    best = lines[-1].split()
    assert board.is_legal(Move.from_iccs(best[1]))
    assert best[1] == last[last.index("pv") + 1]


def test_uci_stop_ends_an_infinite_search(uci):
    uci.send("position startpos", "go infinite")
    first = uci.until("info", 30)
    assert first[-1].startswith("info depth")
    uci.send("stop")
    best = uci.until("bestmove", 30)[-1].split()
    assert Board().is_legal(Move.from_iccs(best[1]))
    uci.send("isready")
    assert uci.until("readyok") == ["readyok"]


def test_uci_finds_mate_in_one_and_reports_it(uci):
    uci.send(f"position fen {MATE_IN_ONE}", "go depth 4")
    lines = uci.until("bestmove")
    assert lines[-1].split()[1] == "h1d1"
    assert " score mate 1 " in [x for x in lines if x.startswith("info depth")][-1]


def test_go_perft_and_display(uci):
    uci.send("position startpos moves h2e2", "go perft 2", "isready")
    lines = uci.until("readyok")
    board = Board()
    board.push_iccs("h2e2")
    divide = {x.split()[2].rstrip(":"): int(x.split()[3]) for x in lines
              if x.startswith("info string ") and x.split()[2].endswith(":")}
    expected = {}
    for m in board.legal_moves:  # the pure-Python core as the reference
        board.push(m)
        expected[m.iccs()] = len(board.legal_moves)
        board.pop()
    assert divide == expected
    assert lines[-2].startswith(f"info string perft 2 nodes {sum(expected.values())} time ")
    uci.send("d", "isready")
    lines = uci.until("readyok")
    assert lines[-2] == f"info string Fen: {board.fen()}"


def test_uci_bad_input_is_answered_and_survived(uci):
    uci.send("position startpos moves h2e2 h2e3", "isready")
    lines = uci.until("readyok")
    assert lines[0].startswith("info string error: move 2 of the move list ('h2e3')")
    uci.send("go depth nine", "frobnicate", "isready")
    lines = uci.until("readyok")
    assert lines[:2] == ["info string error: 'depth' needs a number, got 'nine'",
                         "info string error: unknown command 'frobnicate'"]


def test_ucci_conversation():
    e = Proc()
    try:
        e.send("ucci")
        lines = e.until("ucciok")
        assert "option usemillisec type check default false" in lines
        e.send("isready")
        assert e.until("readyok", FIRST_READY) == ["readyok"]
        e.send("setoption usemillisec true", "position startpos moves h2e2",
               "go time 2000 opptime 2000 depth 4")
        lines = e.until("bestmove")
        info = [x.split() for x in lines if x.startswith("info depth")][-1]
        assert "seldepth" not in info and "cp" not in info and "score" in info
        board = Board()
        board.push_iccs("h2e2")
        assert board.is_legal(Move.from_iccs(lines[-1].split()[1]))
        e.send(f"position fen {MATE_IN_ONE}", "banmoves h1d1", "go depth 3")
        assert e.until("bestmove")[-1].split()[1] != "h1d1"
        e.send(f"position fen {MATE_IN_ONE}", "go depth 3")
        lines = e.until("bestmove")
        assert lines[-1].split()[1] == "h1d1"
        assert [x for x in lines if x.startswith("info depth")][-1].split()[4] == "9999"  # mate in 1 ply
        e.send("quit")
        assert e.until("bye") == ["bye"]
        assert e.p.wait(30) == 0
    finally:
        if e.p.poll() is None:
            e.p.kill()


@pytest.mark.parametrize("protocol", ["uci", "ucci", "auto"])
def test_our_client_drives_our_engine(protocol):
    with SimpleEngine.popen(ENGINE, protocol, timeout=FIRST_READY) as eng:
        assert eng.protocol == ("ucci" if protocol == "ucci" else "uci")
        board = Board()
        for m in ("h0g2", "h9g7", "g2h0", "g7h9") * 2:  # a repetition in the history (R20)
            board.push_iccs(m)
        res = eng.play(board, Limit(depth=4))
        assert board.is_legal(res.move)
        info = eng.analyse(Board(MATE_IN_ONE), Limit(depth=4))
        assert info["score"] == Score(mate=1)
        assert info["pv"][0] == Move.from_iccs("h1d1")
        sent = [x for x in eng.transcript if x.startswith("> position")]
        assert sent[0] == "> position startpos moves " + " ".join(["h0g2", "h9g7", "g2h0", "g7h9"] * 2)


def test_bytes_that_are_not_utf8_get_an_error_line():
    import os

    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run(ENGINE, input=b"uci\n\xff\xfe bad\nisready\nquit\n", capture_output=True, env=env,
                          timeout=FIRST_READY)
    lines = done.stdout.decode("utf-8").splitlines()
    assert done.returncode == 0
    assert lines[-2:] == ["info string error: unknown command '\ufffd\ufffd'", "readyok"]
