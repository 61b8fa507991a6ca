"""``xiangqi engine`` as a real process: UCI and UCCI conversations and our own client against it.

These engines run with ``XIANGQI_ENGINE_WAIT_READY=1``: the first ``isready`` waits for the Numba
kernels (compiled once per cache dir, loaded from the cache afterwards), hence the generous first
timeout. Without it (a GUI's engine) ``readyok`` comes at once: the last test, with an empty cache.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.engine.uci.client import Limit, Score, SimpleEngine

ENGINE = [sys.executable, "-m", "xiangqi.cli", "engine"]
MATE_IN_ONE = "3k5/9/9/9/9/9/9/9/7R1/4K4 w - - 0 1"  # h1d1 mates (the e file is the red king's)
FIRST_READY = 600.0
#: The engines of these tests answer isready once their kernels are ready.
WAIT_ENV = {**os.environ, "XIANGQI_ENGINE_WAIT_READY": "1"}


class Proc:
    """The engine process with a line queue."""

    def __init__(self, *, stderr: bool = False, env: dict[str, str] | None = None) -> None:
        self.p = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                  stderr=subprocess.PIPE if stderr else None, env=env or WAIT_ENV)
        self.q: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        if stderr:
            threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.q.put(line.rstrip("\n"))

    def _read_stderr(self) -> None:
        assert self.p.stderr is not None
        for line in self.p.stderr:
            self.stderr.append(line)

    def send(self, *lines: str) -> None:
        assert self.p.stdin is not None
        for line in lines:
            self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def _until_line(self, done, timeout: float) -> list[str]:
        out = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            out.append(line)
            if done(line):
                return out

    def until(self, first_word: str, timeout: float = 60.0) -> list[str]:
        """All lines up to and including the first one starting with ``first_word``."""
        return self._until_line(lambda line: line.split()[:1] == [first_word], timeout)

    def until_prefix(self, prefix: str, timeout: float = 60.0) -> list[str]:
        """All lines up to and including the first one starting with ``prefix``."""
        return self._until_line(lambda line: line.startswith(prefix), timeout)

    def close(self) -> int:
        self.send("quit")
        return self.p.wait(60)


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
    assert "option name Level type combo default full var full var novice var beginner var intermediate " \
           "var advanced var master" in lines
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
    first = uci.until("info", 60)
    assert first[-1].startswith("info depth")
    uci.send("stop")
    best = uci.until("bestmove", 60)[-1].split()
    assert Board().is_legal(Move.from_iccs(best[1]))
    uci.send("isready")
    assert uci.until("readyok") == ["readyok"]


def test_uci_finds_mate_in_one_and_reports_it(uci):
    uci.send(f"position fen {MATE_IN_ONE}", "go depth 4")
    lines = uci.until("bestmove")
    assert lines[-1].split()[1] == "h1d1"
    assert " score mate 1 " in [x for x in lines if x.startswith("info depth")][-1]


def test_go_perft_and_display(uci):
    uci.send("position startpos moves h2e2", "go perft 2")
    lines = uci.until_prefix("info string perft 2 ")
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
    assert lines[-1].startswith(f"info string perft 2 nodes {sum(expected.values())} time ")
    uci.send("d", "isready")
    lines = uci.until("readyok")
    assert lines[-2] == f"info string Fen: {board.fen()}"


def test_the_evaluation_option_switches_between_the_network_and_the_tables(uci):
    uci.send("uci")
    assert "option name Evaluation type combo default nnue var nnue var texel" in uci.until("uciok")

    def score(evaluation: str) -> str:
        uci.send(f"setoption name Evaluation value {evaluation}", "ucinewgame",
                 "position startpos moves h2e2 h9g7 h0g2", "go depth 1")
        info = [x.split() for x in uci.until("bestmove") if x.startswith("info depth")][-1]
        return " ".join(info[info.index("score"):info.index("score") + 3])

    nn, tex = score("nnue"), score("texel")
    assert nn != tex  # depth 1 from the same position: the evaluations' own numbers
    assert score("nnue") == nn and score("Texel") == tex
    uci.send("setoption name Evaluation value hand", "isready")
    assert uci.until("readyok")[0] == \
        "info string error: unknown evaluation 'hand'; expected one of nnue, texel"
    uci.send("setoption name Evaluation value nnue")


def test_uci_bad_input_is_answered_and_survived(uci):
    uci.send("position startpos moves h2e2 h2e3", "isready")
    lines = uci.until("readyok")
    assert lines[0].startswith("info string error: move 2 of the move list ('h2e3')")
    uci.send("position startpos", "go depth nine", "frobnicate", "isready")
    lines = uci.until("readyok")
    assert lines[:3] == ["info string error: 'depth' needs a number, got 'nine'", "bestmove (none)",
                         "info string error: unknown command 'frobnicate'"]


def test_ucci_conversation():
    e = Proc()
    try:
        e.send("ucci")
        lines = e.until("ucciok")
        assert "option usemillisec type check default false" in lines
        assert "option evaluation type combo var nnue var texel default nnue" in lines
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
        assert e.p.wait(60) == 0
    finally:
        if e.p.poll() is None:
            e.p.kill()


@pytest.mark.parametrize("protocol", ["uci", "ucci", "auto"])
def test_our_client_drives_our_engine(protocol):
    with SimpleEngine.popen(ENGINE, protocol, timeout=FIRST_READY, env=WAIT_ENV) as eng:
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
    env = {**WAIT_ENV, "PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run(ENGINE, input=b"uci\n\xff\xfe bad\nisready\nquit\n", capture_output=True, env=env,
                          timeout=FIRST_READY)
    lines = done.stdout.decode("utf-8").splitlines()
    assert done.returncode == 0
    assert lines[-2:] == ["info string error: unknown command '\ufffd\ufffd'", "readyok"]


# -- issue 10: refused positions, degenerate limits, perft in the background ------------------------------

def test_a_refused_position_is_never_searched(uci):
    # R30 (short version): the previous position must not be searched, nor the FEN plus the legal prefix
    uci.send("position fen 4k4/9/9/9/9/9/9/9/9/3K1R3 w - - 0 1", "go depth 3")
    assert uci.until("bestmove")[-1].startswith("bestmove ")
    uci.send("position fen 3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1 moves a0a1 b0c2", "go depth 3")
    refused = ("move 2 of the move list ('b0c2'): illegal move b0c2 in 3k5/9/9/9/9/9/9/9/R8/4K4 b - - 1 1: "
               "no piece on b0")
    assert uci.until("bestmove", 60) == [
        f"info string error: {refused}",
        f"info string error: no position to search: the last 'position' was refused ({refused})",
        "bestmove (none)"]
    # an illegal position (the kings face each other): refused at 'position', never "search failed"
    uci.send("position fen 4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "go depth 3")
    problem = ("illegal position 4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1: the kings face each other (e0 and e9); "
               "the side to move could take the king")
    assert uci.until("bestmove", 60) == [
        f"info string error: {problem}",
        f"info string error: no position to search: the last 'position' was refused ({problem})",
        "bestmove (none)"]
    uci.send("isready")
    assert uci.until("readyok") == ["readyok"]


@pytest.mark.parametrize("go", ["go movetime -1", "go movetime 0", "go depth 0", "go depth -3", "go nodes 0",
                                "go btime 0 wtime 0", "go wtime -100 btime -100 winc -5 binc -5"])
def test_degenerate_limits_answer_at_once_with_a_legal_move(uci, go):
    uci.send("position startpos moves h2e2", go)
    lines = uci.until("bestmove", 60)
    assert lines[0].startswith("info string warning: ")
    warnings = [x for x in lines if x.startswith("info string warning: ")]
    assert warnings[-1].endswith("searching to depth 1 (the minimum search)")
    depths = [x.split() for x in lines if x.startswith("info depth")]
    assert [d[2] for d in depths] == ["1"]  # one full iteration: the minimum search
    board = Board()
    board.push_iccs("h2e2")
    best = lines[-1].split()
    assert board.is_legal(Move.from_iccs(best[1]))
    assert best[1] == depths[0][depths[0].index("pv") + 1]


def test_ucci_refused_positions_and_degenerate_limits(uci):
    uci.send("ucci")
    uci.until("ucciok")
    try:
        uci.send("position fen 3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1 moves a0a1 b0c2", "banmoves a0a2",
                 "go time 5")
        lines = uci.until("nobestmove", 60)
        assert [x.split(":")[0] for x in lines] == ["info string error"] * 3 + ["nobestmove"]
        assert "no position for 'banmoves'" in lines[1]
        uci.send("position startpos moves h2e2", "go time 0 increment 2")
        lines = uci.until("bestmove", 60)
        assert lines[0] == ("info string warning: no time left on the clock ('time 0'): searching to "
                            "depth 1 (the minimum search)")
        board = Board()
        board.push_iccs("h2e2")
        assert board.is_legal(Move.from_iccs(lines[-1].split()[1]))
        uci.send("probe fen 4k4/9/9/9/9/9/9/9/9/4K4 w", "probe startpos moves h2e2")
        lines = uci.until("pophash", 60) + uci.until("pophash", 60)
        assert [x.split(":")[0] for x in lines] == ["info string error", "pophash", "pophash"]
    finally:
        uci.send("uci")
        uci.until("uciok")


def test_huge_limits_are_cut_and_end_with_stop_without_a_traceback():
    e = Proc(stderr=True)
    try:
        e.send("uci", "isready")
        e.until("readyok", FIRST_READY)
        for go in ("go movetime 99999999999999999999", "go nodes 99999999999999999999", "go depth 999999",
                   "go wtime 99999999999999999999 btime 99999999999999999999"):
            e.send("position startpos", go)
            lines = e.until_prefix("info depth 2 ", 60)
            assert lines[0].startswith(f"info string warning: '{go.split()[1]} ")
            e.send("stop")
            lines += e.until("bestmove", 60)
            assert not [x for x in lines if "error" in x], lines
            assert Board().is_legal(Move.from_iccs(lines[-1].split()[1]))
        assert e.close() == 0
        assert "Traceback" not in "".join(e.stderr)
    finally:
        if e.p.poll() is None:
            e.p.kill()


def test_go_perft_answers_isready_stop_and_quit():
    e = Proc()
    try:
        e.send("uci", "isready")
        e.until("readyok", FIRST_READY)
        e.send("position startpos", "go perft 7", "isready")  # perft 7 would take many minutes here
        lines = e.until("readyok", 60)
        assert not [x for x in lines if x.startswith("info string perft")]
        e.send("stop")
        lines = e.until_prefix("info string perft 7 ", 60)
        assert lines[-1].startswith("info string perft 7 stopped after ")
        e.send("isready")
        assert e.until("readyok", 60) == ["readyok"]
        e.send("go perft 7")
        time.sleep(0.5)
        e.send("quit")
        assert e.p.wait(60) == 0
    finally:
        if e.p.poll() is None:
            e.p.kill()


@pytest.mark.slow
def test_fresh_install_answers_readyok_at_once_and_a_timed_go_gets_a_legal_move(tmp_path):
    """An empty Numba cache (a fresh install, issue 27): readyok is sent while the kernels are still
    compiling (the server says so before it), and a timed go is answered by the Python fallback with a
    legal move, all before the kernels are ready (their "ready" note comes later, if at all)."""
    drop = ("XIANGQI_ENGINE_WAIT_READY", "XIANGQI_NUMBA_CACHE_BASE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")  # empty: every kernel must be compiled
    e = Proc(env=env)
    try:
        e.send("uci")
        e.until("uciok", 120)
        e.send("isready")
        lines = e.until("readyok", 120)
        assert lines[-2].startswith("info string search kernels still compiling")
        e.send("position startpos moves h2e2 h9g7", "go movetime 500")
        lines = e.until("bestmove", 300)
        assert not any(x.startswith("info string search kernels ready") for x in lines)
        note = "info string search kernels still compiling: the Python fallback"
        assert any(x.startswith(note) for x in lines)
        board = Board()
        for m in ("h2e2", "h9g7"):
            board.push_iccs(m)
        assert board.is_legal(Move.from_iccs(lines[-1].split()[1]))
    finally:
        e.p.kill()
        e.p.wait(60)
