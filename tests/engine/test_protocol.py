"""UCI / UCCI conversations with the protocol layer, driven against a small fake engine.

The fake engine (defined here, for these tests only) has the built-in engine's API and
uses its Limit / SearchInfo / SearchResult types:
``search(board, limit, on_info=, multipv=)``, ``stop()``, ``new_game()``, ``set_hash()``,
``play(board, level)``. It ranks the legal moves by ICCS text, so every expected
reply below is exact. The same conversations against the real engine are in
test_protocol_builtin.py.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.engine.api import Limit as FakeLimit
from xiangqi.engine.api import SearchInfo as FakeInfo
from xiangqi.engine.api import SearchResult as FakeResult
from xiangqi.engine.uci.server import UCCI_MATE_VALUE, EngineServer, parse_position

MATED_FEN = "3k5/9/9/9/9/9/9/9/3R5/4K4 b - - 0 1"  # Black is mated (rook d1, flying general)


@dataclasses.dataclass(frozen=True)
class FakeLevel:
    name: str
    name_zh: str
    elo: int
    depth: int | None = None
    time: float | None = None


LEVELS = {"beginner": FakeLevel("beginner", "初级", 1000, depth=2, time=0.5),
          "master": FakeLevel("master", "大师", 1900, time=3.0)}


class FakeEngine:
    """Moves ranked by ICCS text; one info per depth and line; infinite searches wait for stop(),
    timed ones for stop() or their budget (``limit.time``, or 1/20 of the mover's clock, at least 0.05 s)."""

    def __init__(self, score_cp: int = 25, mate: int | None = None, fail: bool = False) -> None:
        self.score_cp = score_cp
        self.mate = mate
        self.fail = fail
        self.calls: list[tuple[str, object]] = []
        self._stop = threading.Event()
        self.searching = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def new_game(self) -> None:
        self.calls.append(("new_game", None))

    def set_hash(self, mb: int) -> None:
        self.calls.append(("set_hash", mb))

    def play(self, board: Board, level: object) -> FakeResult:
        self.calls.append(("play", level))
        moves = sorted(board.legal_moves, key=Move.iccs)
        return FakeResult(moves[-1], 0, None, 1, 1, 0.0, [moves[-1]])

    def search(self, board: Board, limit: FakeLimit, on_info=None, multipv: int = 1) -> FakeResult:
        self._stop.clear()  # like the real engine: a new search clears the stop flag
        self.calls.append(("search", limit))
        self.calls.append(("multipv", multipv))
        if self.fail:
            raise RuntimeError("boom")
        moves = sorted(board.legal_moves, key=Move.iccs)
        self.searching.set()
        depth = 0
        timed = limit.infinite or limit.wtime or limit.time
        max_depth = limit.depth or (10**9 if timed else 3)
        # a time limit is searched in full; a clock (wtime/btime), like a real engine, a twentieth of
        # the mover's time (0.05 s flat made a 10**6 s clock end on its own by depth 2 under load)
        clock = limit.wtime if board.turn else limit.btime
        budget = limit.time or max(0.05, (clock or 0.0) / 20)
        deadline = time.monotonic() + budget if not limit.infinite else float("inf")
        try:
            while depth < max_depth:
                if self._stop.is_set():
                    break
                depth += 1
                for k, m in enumerate(moves[:multipv], 1):
                    b2 = board.copy()
                    b2.push(m)
                    reply = sorted(b2.legal_moves, key=Move.iccs)[:1]
                    info = FakeInfo(depth, depth + 2, None if self.mate else self.score_cp - k,
                                    self.mate, 100 * depth, 50000, 0.002 * depth, [m, *reply], k)
                    if on_info:
                        on_info(info)
                if timed:
                    self._stop.wait(0.01)
                    if time.monotonic() > deadline:
                        break
        finally:
            self.searching.clear()
        best = moves[0] if moves else None
        pv = []
        if best is not None:
            b2 = board.copy()
            b2.push(best)
            pv = [best, *sorted(b2.legal_moves, key=Move.iccs)[:1]]
        return FakeResult(best, self.score_cp, self.mate, depth, 100 * depth, 0.01, pv)


class Conversation:
    """An EngineServer with captured output and helpers to wait for replies."""

    def __init__(self, engine: FakeEngine | None = None, warmup=None, **server_kw) -> None:
        self.engine = engine or FakeEngine()
        self.out: list[str] = []
        self.cv = threading.Condition()
        # no warm-up given: none runs, the engine is ready from the start
        self.server = EngineServer(self.engine, write=self._write, warmup=warmup,
                                   levels=LEVELS, limit_factory=FakeLimit, **server_kw)

    def _write(self, line: str) -> None:
        with self.cv:
            self.out.append(line)
            self.cv.notify_all()

    def send(self, *lines: str) -> bool:
        ok = True
        for line in lines:
            ok = self.server.handle(line)
        return ok

    def feed(self, *lines: str, timeout: float = 60.0) -> bool:
        """Like :meth:`send`, from a reader thread as a real stdin loop; fails if a line blocks the reader
        (for ``timeout`` s, the bound of a hung reader: the blocking perft in these tests holds a
        reader that waited for it until the test ends)."""
        result: list[bool] = []

        def run() -> None:
            result.append(self.send(*lines))

        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(timeout)
        assert not t.is_alive(), f"the reader is still inside {lines!r} after {timeout} s"
        return result[0]

    def after(self, n: int, *, depth_lines: bool = False) -> list[str]:
        """Output lines from index ``n`` on (without ``info depth`` lines unless asked)."""
        return [x for x in self.out[n:] if depth_lines or not x.startswith("info depth")]

    def wait_for(self, prefix: str, timeout: float = 60.0, start: int = 0) -> str:
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for line in self.out[start:]:
                    if line.split()[0:1] == prefix.split()[0:1] and line.startswith(prefix):
                        return line
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {prefix!r} line in ...{self.out[-5:]}")
                self.cv.wait(left)

    def errors(self) -> list[str]:
        return [x for x in self.out if x.startswith("info string error:")]

    def limits(self) -> list[FakeLimit]:
        return [v for k, v in self.engine.calls if k == "search"]


def test_uci_handshake_lists_options_and_ends_with_uciok():
    c = Conversation()
    c.send("uci")
    assert c.out[0] == "id name pyxiangqi"
    assert c.out[1].startswith("id author ")
    assert c.out[-1] == "uciok"
    opts = {x.split(" type ")[0][len("option name "):]: x for x in c.out if x.startswith("option")}
    assert opts["Hash"] == "option name Hash type spin default 64 min 1 max 4096"
    assert opts["MultiPV"] == "option name MultiPV type spin default 1 min 1 max 64"
    assert opts["Level"] == "option name Level type combo default full var full var beginner var master"
    assert opts["UCI_Elo"] == "option name UCI_Elo type spin default 1900 min 1000 max 1900"
    assert "Skill Level" in opts and "UCI_LimitStrength" in opts


def test_ucci_handshake_and_quit_says_bye():
    c = Conversation()
    c.send("ucci")
    assert c.out[-1] == "ucciok"
    assert "option usemillisec type check default false" in c.out
    assert "option hashsize type spin min 1 max 4096 default 64" in c.out
    assert c.send("quit") is False
    assert c.out[-1] == "bye"


class GatedWarmup:
    """A warm-up that runs until the test opens its gate (the kernels "compile" that long)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.finished = threading.Event()

    def __call__(self) -> None:
        self.started.set()
        self.gate.wait(30)
        self.finished.set()


def test_isready_is_answered_while_the_kernels_compile():
    warm = GatedWarmup()
    c = Conversation(warmup=warm)
    c.send("uci")
    assert c.out[-1] == "uciok"
    c.send("isready")
    assert warm.started.wait(60)
    assert c.out[-1] == "readyok"
    assert not warm.finished.is_set()  # readyok came while the warm-up was still running
    assert c.out[-2].startswith("info string search kernels still compiling")
    warm.gate.set()
    c.wait_for("info string search kernels ready")
    c.send("isready")
    assert c.out[-1] == "readyok" and "still compiling" not in c.out[-2]


def test_isready_waits_for_the_warmup_when_asked():
    done = threading.Event()

    def warm():
        time.sleep(0.2)
        done.set()

    c = Conversation(warmup=warm, wait_ready=True)
    c.send("uci", "isready")
    assert done.is_set()
    assert c.out[-1] == "readyok" and not any("compiling" in x for x in c.out)


def test_timed_go_while_compiling_is_answered_by_the_python_fallback():
    warm = GatedWarmup()
    c = Conversation(warmup=warm)
    try:
        c.send("uci", "isready", "position startpos moves h2e2", "go movetime 300")
        best = c.wait_for("bestmove")
        assert not warm.finished.is_set()  # answered before the kernels were ready
        assert c.server.fallback_searches == 1
        assert c.limits() == []  # the engine's own search was not called
        board = parse_position("startpos moves h2e2".split())
        assert board.is_legal(Move.from_iccs(best.split()[1]))
        assert any(x.startswith("info string search kernels still compiling: the Python fallback searches (")
                   for x in c.out)
        info = [x for x in c.out if x.startswith("info depth")][-1].split()
        assert int(info[info.index("depth") + 1]) >= 1 and info[info.index("pv") + 1] == best.split()[1]
    finally:
        warm.gate.set()
    c.wait_for("info string search kernels ready")
    assert "1 searches answered by the Python fallback" in c.out[-1]
    n = len(c.out)
    c.send("go movetime 300")
    c.wait_for("bestmove", start=n)
    assert c.server.fallback_searches == 1 and len(c.limits()) == 1  # now the engine searches


def test_depth_go_while_compiling_waits_for_the_kernels_and_stop_ends_the_wait():
    warm = GatedWarmup()
    c = Conversation(warmup=warm)
    c.send("uci", "position startpos", "go depth 3")
    assert warm.started.wait(60)
    assert c.server.searching and not any(x.startswith("bestmove") for x in c.out)
    warm.gate.set()
    c.wait_for("bestmove")
    assert c.limits() == [FakeLimit(depth=3)] and c.server.fallback_searches == 0

    warm2 = GatedWarmup()
    c2 = Conversation(warmup=warm2)
    try:
        c2.send("uci", "position startpos", "go infinite")
        assert warm2.started.wait(60)
        c2.send("stop")
        best = c2.wait_for("bestmove")
        assert not warm2.finished.is_set() and c2.server.fallback_searches == 1
        assert Board().is_legal(Move.from_iccs(best.split()[1]))
        assert c2.limits() == []
    finally:
        warm2.gate.set()


def test_go_depth_gives_info_lines_and_a_legal_bestmove():
    c = Conversation()
    c.send("uci", "position startpos moves h2e2 h9g7", "go depth 3")
    best = c.wait_for("bestmove")
    infos = [x for x in c.out if x.startswith("info depth")]
    assert [x.split()[2] for x in infos] == ["1", "2", "3"]
    assert infos[-1] == ("info depth 3 seldepth 5 multipv 1 score cp 24 nodes 300 nps 50000 time 6 "
                         "pv a0a1 a6a5")
    board = parse_position("startpos moves h2e2 h9g7".split())
    move = Move.from_iccs(best.split()[1])
    assert board.is_legal(move)
    assert best == "bestmove a0a1 ponder a6a5"
    assert c.limits()[-1] == FakeLimit(depth=3)


def test_go_clock_parameters_are_converted_to_seconds():
    c = Conversation()
    c.send("uci", "position startpos", "go wtime 60000 btime 30000 winc 1000 binc 2000 movestogo 20")
    c.wait_for("info depth 1")
    c.send("stop")
    c.wait_for("bestmove")
    assert c.limits()[-1] == FakeLimit(wtime=60.0, btime=30.0, winc=1.0, binc=2.0, movestogo=20)
    n = len(c.out)
    c.send("go movetime 250 nodes 5000")
    c.wait_for("bestmove", start=n)
    assert c.server.wait(60)
    assert c.limits()[-1] == FakeLimit(time=0.25, nodes=5000)


def test_ucci_time_is_seconds_unless_usemillisec_and_follows_the_side_to_move():
    c = Conversation()
    c.send("ucci", "position startpos moves h2e2", "go time 60 increment 2 opptime 30 oppincrement 1 depth 1")
    c.wait_for("bestmove")
    assert c.server.wait(60)
    assert c.limits()[-1] == FakeLimit(depth=1, btime=60.0, binc=2.0, wtime=30.0, winc=1.0)
    c.send("setoption usemillisec true", "position startpos", "go time 5000 movestogo 10 depth 1")
    assert c.server.wait(60)
    assert c.limits()[-1] == FakeLimit(depth=1, wtime=5.0, movestogo=10)


def test_stop_during_infinite_search_returns_bestmove():
    c = Conversation()
    c.send("uci", "position startpos", "go infinite")
    c.wait_for("info depth 2")
    assert c.server.searching
    c.send("stop")
    assert c.wait_for("bestmove") == "bestmove a0a1 ponder a6a5"
    assert c.server.wait(60)


def test_stop_right_after_go_is_not_lost():
    # 'stop' may arrive before the worker has entered engine.search (which clears the stop flag)
    for _ in range(20):
        c = Conversation()
        c.send("uci", "position startpos", "go infinite", "stop")
        c.wait_for("bestmove", timeout=60)  # a lost stop never ends the infinite search


def test_bad_lines_get_an_error_and_the_engine_keeps_working():
    c = Conversation()
    c.send("uci", "position startpos moves h2e2")
    c.send("position fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w")
    assert "bad FEN board" in c.errors()[-1]
    c.send("position startpos moves h2e2 h2e3")
    assert c.errors()[-1].startswith("info string error: move 2 of the move list ('h2e3'):")
    c.send("position startpos moves h2e2 zz99")
    assert "not an ICCS move" in c.errors()[-1]
    assert c.server.board is None  # a refused position leaves none (never the previous one)
    c.send("position startpos moves h2e2")
    c.send("go depth x")  # a go that cannot be carried out is still answered
    assert c.out[-2:] == ["info string error: 'depth' needs a number, got 'x'", "bestmove (none)"]
    c.send("go fly")
    assert c.out[-2:] == ["info string error: unknown 'go' parameter 'fly'", "bestmove (none)"]
    c.send("setoption name Hash value lots")
    assert c.errors()[-1] == "info string error: option 'Hash' needs a whole number, got 'lots'"
    c.send("setoption name Hash value 0")
    assert c.errors()[-1] == "info string error: option 'Hash' must be between 1 and 4096, got 0"
    c.send("setoption name Level value grandmaster")
    assert "unknown level 'grandmaster'" in c.errors()[-1]
    c.send("flyto e9", "position", "position middle", "\x00\xff garbage")
    assert c.errors()[-4] == "info string error: unknown command 'flyto'"
    assert len(c.errors()) == 12
    c.send("isready")
    assert c.out[-1] == "readyok"
    n = len(c.out)
    c.send("position startpos moves h2e2", "go depth 1")  # 'position middle' left no position: send one
    assert c.wait_for("bestmove", start=n) == "bestmove a6a5 ponder a0a1"  # Black to move after h2e2


def test_a_failing_search_still_answers_with_a_legal_move():
    c = Conversation(FakeEngine(fail=True))
    c.send("uci", "position startpos", "go depth 2")
    best = c.wait_for("bestmove")
    assert "search failed: RuntimeError: boom" in c.errors()[0]
    assert Board().is_legal(Move.from_iccs(best.split()[1]))


def test_no_legal_move_gives_bestmove_none_or_nobestmove():
    c = Conversation()
    c.send("uci", f"position fen {MATED_FEN}", "go depth 2")
    assert c.wait_for("bestmove") == "bestmove (none)"
    c.server.wait(60)
    c.send("ucci", f"position fen {MATED_FEN}", "go depth 2")
    assert c.wait_for("nobestmove") == "nobestmove"


def test_mate_scores_in_uci_and_ucci_form():
    c = Conversation(FakeEngine(mate=2))
    c.send("uci", "position startpos", "go depth 1")
    c.wait_for("bestmove")
    assert " score mate 2 " in [x for x in c.out if x.startswith("info depth")][0]
    c.server.wait(60)
    c2 = Conversation(FakeEngine(mate=-3))
    c2.send("ucci", "position startpos", "go depth 1")
    c2.wait_for("bestmove")
    line = [x for x in c2.out if x.startswith("info depth")][0]
    assert line == f"info depth 1 score {-(UCCI_MATE_VALUE - 6)} nodes 100 time 2 pv a0a1 a6a5"
    c3 = Conversation(FakeEngine(mate=2))
    c3.send("ucci", "position startpos", "go depth 1")
    c3.wait_for("bestmove")
    assert f" score {UCCI_MATE_VALUE - 3} " in [x for x in c3.out if x.startswith("info depth")][0]


def test_multipv_lines_are_numbered():
    c = Conversation()
    c.send("uci", "setoption name MultiPV value 3", "position startpos", "go depth 1")
    c.wait_for("bestmove")
    infos = [x.split()[6] for x in c.out if x.startswith("info depth")]
    assert infos == ["1", "2", "3"]
    assert ("multipv", 3) in c.engine.calls


def test_ucci_banmoves_excludes_the_best_move_and_renumbers_lines():
    c = Conversation()
    c.send("ucci", "position startpos", "banmoves a0a1", "go depth 2")
    assert c.wait_for("bestmove") == "bestmove a0a2 ponder a6a5"
    assert ("multipv", 2) in c.engine.calls
    assert all(" pv a0a1" not in x for x in c.out)
    c.server.wait(60)
    n = len(c.out)
    c.send("position startpos", "go depth 1")  # a new position clears the banned moves
    assert c.wait_for("bestmove", start=n) == "bestmove a0a1 ponder a6a5"
    c.send("banmoves e0e2")
    assert "banmoves: e0e2 is not a legal move" in c.errors()[-1]


def test_uci_searchmoves_restricts_the_root():
    c = Conversation()
    legal = [m.iccs() for m in Board().legal_moves]
    keep = [m for m in legal if m not in ("a0a1", "a0a2", "a3a4")]
    c.send("uci", "position startpos", "go depth 1 searchmoves h2e2")
    assert "at most 8 moves can be excluded" in c.errors()[-1]
    assert c.out[-1] == "bestmove (none)"
    n = len(c.out)
    c.send("go depth 1 searchmoves " + " ".join(keep))
    assert c.wait_for("bestmove", start=n).startswith("bestmove b0a2")


def test_ponder_waits_for_ponderhit_then_searches_with_the_real_limit():
    c = Conversation()
    c.send("uci", "setoption name Ponder value true", "position startpos moves h2e2 h9g7",
           "go ponder wtime 2000 btime 2000")
    c.wait_for("info depth 2")
    assert c.limits()[-1] == FakeLimit(infinite=True)
    assert not any(x.startswith("bestmove") for x in c.out)
    n = len(c.out)
    c.send("ponderhit")
    deadline = time.monotonic() + 30
    while len(c.limits()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert c.limits()[-1] == FakeLimit(wtime=2.0, btime=2.0)
    c.wait_for("info depth 1", start=n)
    c.send("stop")
    assert c.wait_for("bestmove") == "bestmove a0a1 ponder a6a5"


def test_stop_while_pondering_answers_from_the_ponder_search():
    c = Conversation()
    c.send("uci", "position startpos", "go ponder movetime 1000")
    c.wait_for("info depth 1")
    c.send("stop")
    c.wait_for("bestmove")
    assert c.limits() == [FakeLimit(infinite=True)]


def test_ucci_draw_offer_is_accepted_only_when_worse():
    bad = Conversation(FakeEngine(score_cp=-200))
    bad.send("ucci", "position startpos", "go draw depth 1")
    assert bad.wait_for("bestmove") == "bestmove a0a1 ponder a6a5 draw"
    good = Conversation(FakeEngine(score_cp=100))
    good.send("ucci", "position startpos", "go draw depth 1")
    assert good.wait_for("bestmove") == "bestmove a0a1 ponder a6a5"


def test_levels_and_skill_level_select_the_level_search():
    c = Conversation()
    c.send("uci", "setoption name Level value beginner", "position startpos", "go depth 3")
    assert c.wait_for("bestmove").startswith("bestmove i3i4")
    assert ("play", LEVELS["beginner"]) in c.engine.calls  # the level's depth 2 is below the GUI's 3
    assert c.out[-2] == "info depth 1 multipv 1 score cp 0 nodes 1 time 0 pv i3i4"
    c.server.wait(60)
    c.send("setoption name Level value master", "go movetime 200 depth 9")
    c.server.wait(60)
    assert ("play", FakeLevel("master", "大师", 1900, depth=9, time=0.2)) in c.engine.calls
    c.server.wait(60)
    c.send("setoption name Skill Level value 20")
    assert c.server.level == "full"
    c.send("setoption name Skill Level value 3")
    assert c.server.level == "beginner"
    c.send("setoption name Level value 大师")
    assert c.server.level == "master"
    c.send("setoption name UCI_LimitStrength value true", "setoption name UCI_Elo value 1500")
    assert c.server.effective_level() == "beginner"
    c.send("setoption name UCI_Elo value 3000")
    assert c.out[-1] == "info string option 'UCI_Elo' is measured between 1000 and 1900; 3000 is out of " \
                        "range, using 1900"
    assert c.server.effective_level() == "master"


def test_hash_newgame_probe_and_display():
    c = Conversation()
    c.send("uci", "setoption name Hash value 128", "ucinewgame", "setoption name Clear Hash")
    assert c.engine.calls == [("set_hash", 128), ("new_game", None), ("new_game", None)]
    c.send("ucci", "probe startpos moves h2e2")
    assert c.out[-1] == "pophash"
    c.send("position startpos moves h2e2", "d")
    fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
    assert c.out[-1] == f"info string Fen: {fen}"


def test_go_while_searching_is_refused():
    c = Conversation()
    c.send("uci", "position startpos", "go infinite")
    c.wait_for("info depth 1")
    c.send("go depth 1")
    assert c.errors()[-1] == "info string error: already searching; send 'stop' first"
    c.send("quit")
    assert c.server.wait(60)
    assert sum(1 for x in c.out if x.startswith("bestmove")) == 1


def test_end_of_input_stops_the_search():
    c = Conversation()
    status = c.server.run(iter(["uci\n", "position startpos\n", "go infinite\n"]))
    assert status == 0
    assert c.server.wait(60)
    assert c.out[-1].startswith("bestmove")


@pytest.mark.parametrize("tokens,fen", [
    ("startpos", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"),
    ("fen 3k5/9/9/9/9/9/9/9/9/4K4 w moves e0f0", "3k5/9/9/9/9/9/9/9/9/5K3 b - - 1 1"),
    ("fen rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w - - 0 1 moves h2e2 h7e7",
     "rnbakabnr/9/1c2c4/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2"),
])
def test_parse_position_keeps_the_history(tokens, fen):
    board = parse_position(tokens.split())
    assert board.fen() == fen
    expected = tokens.split("moves ")[1].split() if "moves" in tokens else []
    assert [m.iccs() for m in board.move_stack] == expected


def _server_with_levels(levels):
    out: list[str] = []
    server = EngineServer(FakeEngine(), write=out.append, warmup=lambda: None, levels=levels,
                          limit_factory=FakeLimit)
    return server, out


def test_uci_elo_comes_from_the_level_ratings_file(tmp_path):
    import json

    from xiangqi.engine import levels as lv

    f = tmp_path / "level_elo.json"
    f.write_text(json.dumps({"levels": {"beginner": {"elo": 1180, "error": 70, "games": 30},
                                        "intermediate": {"elo": 1420, "error": 60, "games": 30},
                                        "master": {"elo": 2050, "error": 120, "games": 8}}}),
                 encoding="utf-8")
    server, out = _server_with_levels(lv.with_elos(lv.BASE_LEVELS, lv.load_elos(f)))
    server.handle("uci")
    assert "option name UCI_LimitStrength type check default false" in out
    assert "option name UCI_Elo type spin default 2050 min 1180 max 2050" in out
    server.handle("setoption name UCI_LimitStrength value true")
    assert server.effective_level() == "master"  # UCI_Elo not sent yet: its default, the strongest level
    for elo, level in ((1180, "beginner"), (1419, "beginner"), (1420, "intermediate"), (2049, "intermediate"),
                       (2050, "master")):
        server.handle(f"setoption name UCI_Elo value {elo}")
        assert server.effective_level() == level, elo
    server.handle("setoption name UCI_LimitStrength value false")
    assert server.effective_level() == "full"  # the Level option again
    server.handle("setoption name UCI_Elo value abc")
    assert out[-1] == "info string error: option 'UCI_Elo' needs a whole number, got 'abc'"
    assert server.elo == 2050  # unchanged by the bad line


def test_uci_elo_outside_the_measured_range_is_clamped_not_ignored(tmp_path):
    # A request below the weakest level must give the weakest level, not the default (the strongest).
    from xiangqi.engine import levels as lv

    table = {"beginner": {"elo": 1180, "error": 70, "games": 30},
             "master": {"elo": 2050, "error": 99, "games": 8}}
    server, out = _server_with_levels(lv.with_elos(lv.BASE_LEVELS, table))
    server.handle("setoption name UCI_LimitStrength value true")
    server.handle("setoption name UCI_Elo value 100")
    assert out[-1] == "info string option 'UCI_Elo' is measured between 1180 and 2050; 100 is out of " \
                      "range, using 1180"
    assert server.elo == 1180
    assert server.effective_level() == "beginner"
    server.handle("setoption name UCI_Elo value 99999")
    assert out[-1].endswith("99999 is out of range, using 2050")
    assert server.effective_level() == "master"
    server.handle("setoption name UCI_Elo value -5")
    assert server.effective_level() == "beginner"
    assert not [x for x in out if "error" in x]


def test_uci_limitstrength_without_measured_levels_is_refused(tmp_path):
    from xiangqi.engine import levels as lv

    server, out = _server_with_levels(lv.with_elos(lv.BASE_LEVELS, lv.load_elos(tmp_path / "missing.json")))
    server.handle("setoption name UCI_LimitStrength value true")
    assert out[-1] == "info string error: UCI_LimitStrength is not available: the levels have no measured " \
                      "Elo yet"
    assert server.limit_strength is False
    server.handle("setoption name UCI_LimitStrength value false")  # switching it off is always fine
    assert out[-1].startswith("info string error: UCI_LimitStrength")  # no new line
    assert len([x for x in out if "error" in x]) == 1


def test_without_a_ratings_file_there_is_no_uci_elo(tmp_path):
    from xiangqi.engine import levels as lv

    server, out = _server_with_levels(lv.with_elos(lv.BASE_LEVELS, lv.load_elos(tmp_path / "missing.json")))
    server.handle("uci")
    assert not [x for x in out if "UCI_Elo" in x or "UCI_LimitStrength" in x]
    assert "option name Level type combo default full var full var novice var beginner var intermediate " \
           "var advanced var master" in out
    server.handle("setoption name UCI_Elo value 1500")
    assert out[-1] == "info string error: UCI_Elo is not available: the levels have no measured Elo yet"


# -- issue 10: bad positions, degenerate limits, perft in the background ------------------------------------

R30_OLD = "4k4/9/9/9/9/9/9/9/9/3K1R3 w - - 0 1"
R30_BAD = "position fen 3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1 moves a0a1 b0c2"
R30_LONG = "position fen 1Cba1rb2/4kn3/1R7/p2R4p/4p4/2p6/P1r5P/4B4/9/2BAKA3 w moves b7e7 b0c2 b9c7"
NONE = {"uci": "bestmove (none)", "ucci": "nobestmove"}


@pytest.mark.parametrize("protocol", ["uci", "ucci"])
def test_a_position_with_an_illegal_move_is_refused_whole_and_never_searched(protocol):
    # R30: neither the previous position nor the FEN plus the moves before the bad one is searched
    c = Conversation()
    c.send(protocol, f"position fen {R30_OLD}", "go depth 1")
    best = c.wait_for("bestmove")
    assert best.startswith("bestmove d0d1")  # the fake's first move of the position sent
    assert c.server.wait(60)
    n = len(c.out)
    c.send(R30_BAD)
    refused = ("move 2 of the move list ('b0c2'): illegal move b0c2 in 3k5/9/9/9/9/9/9/9/R8/4K4 b - - 1 1: "
               "no piece on b0")
    assert c.after(n) == [f"info string error: {refused}"]
    c.send("go depth 3")
    assert c.after(n + 1) == [f"info string error: no position to search: the last 'position' was refused "
                              f"({refused})", NONE[protocol]]
    assert len(c.limits()) == 1  # only the first, good position was ever searched
    n = len(c.out)
    c.send(R30_LONG, "go depth 1")
    refused = ("move 2 of the move list ('b0c2'): illegal move b0c2 in "
               "1Cba1rb2/4kn3/4R4/p2R4p/4p4/2p6/P1r5P/4B4/9/2BAKA3 b - - 1 1: no piece on b0")
    assert c.after(n) == [f"info string error: {refused}",
                          f"info string error: no position to search: the last 'position' was refused "
                          f"({refused})", NONE[protocol]]
    assert len(c.limits()) == 1
    n = len(c.out)
    c.send(R30_LONG.split(" moves")[0] + " moves b7e7", "go depth 1")  # a good line works again
    assert c.wait_for("bestmove", start=n).startswith("bestmove ")
    assert c.out[n:].count(NONE[protocol]) == 0


@pytest.mark.parametrize("bad", [
    "position fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x",  # bad side
    "position fen 4k4/9/9 w",  # R28
    "position fen 4k4/9/9/9/9/9/9/9/9/3KK4 w",  # two red kings
    "position fen 4K4/9/9/9/9/9/9/9/9/4k4 w - - 0 1",  # R27: kings outside their palaces
    "position startpos moves h2e2 h2e3",
    "position startpos moves",  # fine: an empty move list (the control)
])
def test_a_refused_position_after_a_good_one_never_searches_the_old_one(bad):
    c = Conversation()
    c.send("uci", "position startpos moves h2e2 h9g7", "go depth 1")
    assert c.wait_for("bestmove") == "bestmove a0a1 ponder a6a5"
    assert c.server.wait(60)
    n = len(c.out)
    c.send(bad, "go depth 1")
    if bad.endswith("moves"):
        assert c.wait_for("bestmove", start=n) == "bestmove a0a1 ponder a6a5"  # the start position
        return
    out = c.after(n)
    assert len(out) == 3 and out[0].startswith("info string error: ")
    assert out[1] == f"info string error: no position to search: the last 'position' was refused " \
                     f"({out[0][len('info string error: '):]})"
    assert out[2] == "bestmove (none)"
    assert len(c.limits()) == 1
    c.send("d", "banmoves a0a1")
    assert [x.split(":")[1] for x in c.out[-2:]] == [" no position to show", " no position for 'banmoves'"]
    c.send("ucinewgame", "go depth 1")  # ucinewgame sets the start position
    assert c.wait_for("bestmove", start=n + 3) == "bestmove a0a1 ponder a6a5"


@pytest.mark.parametrize("fen,why", [
    ("4k4/9/9/9/9/9/9/9/4R4/3K5 w - - 0 1", "Black is in check but it is not Black's move"),
    ("4k4/3r5/9/9/9/9/9/9/9/3K5 b - - 0 1", "Red is in check but it is not Red's move"),
    ("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "the kings face each other (e0 and e9)"),
    ("3k5/4a4/9/9/9/9/9/9/4A4/4K4 b - - 0 1", None),  # the control: a legal position
])
@pytest.mark.parametrize("protocol", ["uci", "ucci"])
def test_an_illegal_position_is_refused_at_position_and_go_answers_none(fen, why, protocol):
    c = Conversation()
    c.send(protocol, f"position fen {fen}")
    n = len(c.out)
    c.send("go depth 2")
    if why is None:
        assert c.wait_for("bestmove", start=n).startswith("bestmove ")
        assert not c.errors()
        return
    problem = f"illegal position {fen}: {why}; the side to move could take the king"
    assert c.out[:n][-1] == f"info string error: {problem}"
    assert c.after(n) == [f"info string error: no position to search: the last 'position' was refused "
                          f"({problem})", NONE[protocol]]
    assert c.limits() == []  # the engine never saw it
    if protocol == "ucci":
        c.send(f"probe fen {fen}")
        assert c.out[-2:] == [f"info string error: {problem}", "pophash"]  # every probe is answered


MIN_SEARCH = "searching to depth 1 (the minimum search)"


@pytest.mark.parametrize("protocol,go,warnings,limit", [
    ("uci", "go movetime -1", [f"'movetime -1' is not above 0: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go movetime 0", [f"'movetime 0' is not above 0: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go depth 0", [f"'depth 0' is below 1: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go depth -3", [f"'depth -3' is below 1: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go nodes 0", [f"'nodes 0' is below 1: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go depth 4 nodes -1", [f"'nodes -1' is below 1: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go wtime 0 btime 0", [f"no time left on the clock ('wtime 0'): {MIN_SEARCH}"],
     FakeLimit(depth=1)),
    ("uci", "go wtime -100 btime 5000 winc -5",
     ["'wtime -100' is negative; using 0", "'winc -5' is negative; using 0",
      f"no time left on the clock ('wtime 0'): {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("uci", "go wtime 1000 btime -1 winc -5 binc -5",
     ["'btime -1' is negative; using 0", "'winc -5' is negative; using 0", "'binc -5' is negative; using 0"],
     FakeLimit(wtime=1.0, btime=0.0, winc=0.0, binc=0.0)),
    ("uci", "go wtime 1000 btime 1000 movestogo 0", ["'movestogo 0' is below 1; ignored"],
     FakeLimit(wtime=1.0, btime=1.0)),
    ("uci", "go movetime 1e2", [], FakeLimit(time=0.1)),
    ("uci", "go nodes 99999999999999999999",
     ["'nodes 99999999999999999999' is more than 1000000000000000 nodes; using 1000000000000000 nodes"],
     FakeLimit(nodes=10**15)),
    ("uci", "go depth 999999", ["'depth 999999' is more than 1000 plies; using 1000 plies"],
     FakeLimit(depth=1000)),
    ("ucci", "go time 0 increment 3", [f"no time left on the clock ('time 0'): {MIN_SEARCH}"],
     FakeLimit(depth=1)),
    ("ucci", "go time -5 increment -1 opptime 60",
     ["'time -5' is negative; using 0", "'increment -1' is negative; using 0",
      f"no time left on the clock ('time 0'): {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("ucci", "go depth 0", [f"'depth 0' is below 1: {MIN_SEARCH}"], FakeLimit(depth=1)),
    ("ucci", "go time 60 opptime -60 oppincrement -2 depth 2",
     ["'opptime -60' is negative; using 0", "'oppincrement -2' is negative; using 0"],
     FakeLimit(depth=2, wtime=60.0, btime=0.0, binc=0.0)),
])
def test_degenerate_go_limits_are_clamped_and_answered_with_a_legal_move(protocol, go, warnings, limit):
    c = Conversation()
    c.send(protocol, "position startpos")
    n = len(c.out)
    c.feed(go)
    assert c.wait_for("bestmove", start=n) == "bestmove a0a1 ponder a6a5"
    assert c.after(n) == [f"info string warning: {w}" for w in warnings] + ["bestmove a0a1 ponder a6a5"]
    assert c.limits() == [limit]
    assert not c.errors()


@pytest.mark.parametrize("protocol,go,warning,limit", [
    ("uci", "go movetime 99999999999999999999",
     "'movetime 99999999999999999999' is more than 1000000000 ms; using 1000000000 ms",
     FakeLimit(time=10**6)),
    ("uci", "go wtime 99999999999999999999 btime 1",
     "'wtime 99999999999999999999' is more than 1000000000 ms; using 1000000000 ms",
     FakeLimit(wtime=10**6, btime=0.001)),
    ("ucci", "go time 99999999999999999999",
     "'time 99999999999999999999' is more than 1000000 s; using 1000000 s", FakeLimit(wtime=10**6)),
])
def test_huge_times_are_cut_and_the_search_ends_with_stop(protocol, go, warning, limit):
    c = Conversation()
    c.send(protocol, "position startpos")
    n = len(c.out)
    c.feed(go)
    assert c.out[n] == f"info string warning: {warning}"
    c.wait_for("info depth 2", start=n)
    c.feed("stop")
    assert c.wait_for("bestmove", start=n) == "bestmove a0a1 ponder a6a5"
    assert c.limits() == [limit]


@pytest.mark.parametrize("protocol", ["uci", "ucci"])
@pytest.mark.parametrize("go,error", [
    ("go fly", "unknown 'go' parameter 'fly'"),
    ("go depth", "'depth' needs a number after it"),
    ("go movetime nan", "'movetime' needs a finite number, got 'nan'"),
    ("go wtime inf", "'wtime' needs a finite number, got 'inf'"),
    ("go mate 3", "'go mate' is not supported"),
    ("go depth 2 searchmoves h2h8", "searchmoves: h2h8 is not legal in "
                                    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"),
])
def test_a_go_that_cannot_be_carried_out_is_answered_at_once(protocol, go, error):
    c = Conversation()
    c.send(protocol, "position startpos")
    n = len(c.out)
    c.send(go)
    assert c.after(n) == [f"info string error: {error}", NONE[protocol]]
    assert c.limits() == []
    assert not c.server.searching


@pytest.fixture()
def blocking_perft(monkeypatch):
    """The perft kernel replaced by an exact pure-Python count that waits for ``gate`` on every call."""
    from xiangqi.engine import movegen

    gate = threading.Event()
    calls: list[int] = []

    def count(board: Board, depth: int) -> int:
        calls.append(depth)
        gate.wait(3600)  # until the test (or its end) opens the gate: never by itself meanwhile
        return board.perft(depth)

    monkeypatch.setattr(movegen, "perft", count)
    yield gate, calls
    gate.set()


def test_go_perft_runs_in_the_background_isready_and_stop_are_answered(blocking_perft):
    gate, calls = blocking_perft
    c = Conversation()
    c.feed("uci", "position startpos", "go perft 2")  # returns while the count runs
    deadline = time.monotonic() + 30
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls == [1] and c.server.searching
    n = len(c.out)
    c.feed("isready")
    assert c.out[n:] == ["readyok"]  # answered while the perft is inside its first count
    c.feed("go depth 1")
    assert c.out[n + 1:] == ["info string error: already searching; send 'stop' first"]
    c.feed("stop")
    gate.set()
    line = c.wait_for("info string perft", start=n)
    assert line.startswith("info string perft 2 stopped after 1 of 44 moves: nodes ")
    divide = [x for x in c.out if x.startswith("info string ") and len(x.split()[2]) == 5
              and x.split()[2].endswith(":")]
    assert len(divide) == 1 and calls == [1]  # the first root move only: stop was seen before the second
    assert c.server.wait(60)
    n = len(c.out)
    c.feed("go depth 1")
    assert c.wait_for("bestmove", start=n) == "bestmove a0a1 ponder a6a5"


@pytest.mark.parametrize("protocol", ["uci", "ucci"])
def test_quit_during_go_perft_returns_at_once(blocking_perft, protocol):
    gate, calls = blocking_perft
    c = Conversation()
    c.feed(protocol, "position startpos", "go perft 3")
    deadline = time.monotonic() + 30
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls and not gate.is_set()
    assert c.feed("quit") is False  # the count is still blocked inside its kernel call (until the test ends)
    assert c.out[-1] == ("bye" if protocol == "ucci" else "uciok")  # nothing else: no bestmove, no wait
    assert c.server.searching  # the daemon thread is left inside its count; the process exits


def test_go_perft_counts_deep_trees_in_split_calls(monkeypatch):
    from xiangqi.engine import movegen

    calls: list[int] = []

    def count(board: Board, depth: int) -> int:
        calls.append(depth)
        return board.perft(depth)

    monkeypatch.setattr(movegen, "perft", count)
    c = Conversation()
    c.feed("uci", "position fen 4k4/9/9/9/9/9/9/4n4/3A5/3K5 w - - 0 1", "go perft 5")  # R1
    line = c.wait_for("info string perft")
    expected = Board("4k4/9/9/9/9/9/9/4n4/3A5/3K5 w - - 0 1").perft(5)
    assert line.startswith(f"info string perft 5 nodes {expected} time ")
    assert set(calls) == {3}  # depth 4 below each root move is split into depth-3 counts
    c.feed("go perft 0")
    assert c.server.wait(60)
    assert c.out[-1].startswith("info string perft 0 nodes 1 time ")
    c.feed("go perft -1")
    assert c.out[-1] == "info string error: 'perft' must be >= 0, got -1"


def test_clock_fields_without_a_limit_for_the_side_to_move_warn_and_search_until_stop():
    c = Conversation()
    c.send("ucci", "position startpos")
    n = len(c.out)
    c.feed("go opptime 0")
    assert c.wait_for("info string warning", start=n) == (
        "info string warning: 'go opptime 0' sets no limit for the side to move: searching until 'stop'")
    c.feed("stop")
    assert c.wait_for("bestmove", start=n).startswith("bestmove ")
    assert c.limits()[-1].infinite is True
