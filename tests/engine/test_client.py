"""The external-engine client against scripted engines (fake_engine.py) and Fairy-Stockfish / Sjaak II.

R19 (an empty PV in ``info`` must not stop us from taking ``bestmove``) and R20
(the engine gets the whole move history) come from tests/data/reported.md.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.engine.uci.client import (
    EngineError,
    EngineTerminatedError,
    EngineTimeoutError,
    IllegalEngineMoveError,
    Limit,
    Score,
    SimpleEngine,
)

FAKE = str(Path(__file__).with_name("fake_engine.py"))
FAIRY = shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish"
SJAAK = shutil.which("sjaakii") or "/usr/games/sjaakii"
needs_fairy = pytest.mark.skipif(not os.access(FAIRY, os.X_OK), reason="fairy-stockfish is not installed")
needs_sjaak = pytest.mark.skipif(not os.access(SJAAK, os.X_OK), reason="sjaakii is not installed")


def fake(mode: str, protocol: str = "uci", **kw) -> SimpleEngine:
    return SimpleEngine.popen([sys.executable, FAKE, mode], protocol, **kw)


def board_after(*moves: str, fen: str | None = None) -> Board:
    b = Board(fen) if fen else Board()
    for m in moves:
        b.push_iccs(m)
    return b


def test_r19_bestmove_is_taken_even_when_info_has_an_empty_pv():
    with fake("empty-pv") as eng:
        res = eng.play(Board(), Limit(depth=2))
    assert res.move == Move.from_iccs("h2e2")
    assert res.ponder is None
    assert res.info == {"depth": 2, "seldepth": 3, "score": Score(cp=15), "nodes": 100, "time": 0.005,
                        "pv": []}


def test_r20_the_whole_history_is_sent_after_a_repetition():
    shuffle = ["h0g2", "h9g7", "g2h0", "g7h9"] * 2
    board = board_after(*shuffle)
    assert board.fen().split()[0] == Board().fen().split()[0]  # the start position, third time
    with fake("echo") as eng:
        res = eng.play(board, Limit(depth=1))
        got = [x for x in eng.transcript if x.startswith("< info string got")]
    expected = "position startpos moves " + " ".join(shuffle)
    assert got == [f"< info string got {expected}"]  # what the engine itself received
    assert res.move == Move.from_iccs("h0g2")
    assert res.info["score"] == Score(mate=-2)


def test_r20_history_from_a_fen_root_is_sent_with_that_fen():
    fen = "4k4/9/9/9/9/9/9/9/4R4/3K5 w - - 0 1"
    board = board_after("e1e2", "e9f9", "e2f2", "f9e9", fen=fen)
    with fake("echo") as eng:
        eng.analyse(board, Limit(depth=1))  # analyse: the fake's fixed bestmove is not legal here
        got = [x for x in eng.transcript if x.startswith("< info string got")]
    assert got == [f"< info string got position fen {fen} moves e1e2 e9f9 e2f2 f9e9"]


def test_a_dead_engine_gives_a_clear_error():
    with fake("die") as eng:
        with pytest.raises(EngineTerminatedError, match=r"the engine exited \(status 3\) while we waited for "
                                                        r"'bestmove'"):
            eng.play(Board(), Limit(depth=1))
        with pytest.raises(EngineTerminatedError, match="cannot send"):
            eng.play(Board(), Limit(depth=1))


def test_a_hung_engine_times_out_after_stop():
    with fake("hang") as eng:
        with pytest.raises(EngineTimeoutError, match="no 'bestmove' even after 'stop'"):
            eng.play(Board(), Limit(time=0.1), grace=0.3)
        assert eng.transcript[-1] == "> stop"


def test_an_illegal_engine_move_is_refused():
    with fake("illegal") as eng:
        with pytest.raises(IllegalEngineMoveError, match="illegal move 'e0e5'") as info:
            eng.play(Board(), Limit(depth=1))
    assert info.value.text == "e0e5"


def test_a_missing_program_is_reported():
    with pytest.raises(EngineError, match="cannot start engine '/nonexistent/engine'"):
        SimpleEngine.popen("/nonexistent/engine")


def test_auto_detects_a_ucci_only_engine_and_converts_ucci_scores_and_times():
    # like ElephantEye, the fake exits when the first command is not 'ucci'
    with fake("ucci-only", "auto") as eng:
        assert eng.protocol == "ucci"
        assert eng.use_millisec
        board = board_after("h2e2")
        assert eng.go_command(board, Limit(wtime=60, btime=30, winc=1, binc=2)) == \
            "go time 30000 increment 2000 opptime 60000 oppincrement 1000"
        assert eng.go_command(board, Limit(time=0.5)) == "go time 500 movestogo 1"
        eng.use_millisec = False  # an engine without the option gets whole seconds, never 0 for a real budget
        assert eng.go_command(board, Limit(time=0.3)) == "go time 1 movestogo 1"
        assert eng.go_command(board, Limit(btime=90.4, wtime=0, movestogo=5)) == \
            "go time 90 movestogo 5 opptime 0"
        eng.use_millisec = True
        res = eng.play(Board(), Limit(depth=3))
        assert "> setoption usemillisec true" in eng.transcript
        assert "< info string got go depth 3" in eng.transcript
    assert res.move == Move.from_iccs("h2e2")
    assert res.info["score"] == Score(mate=2)  # 9997 = mate in 3 plies


def test_variant_engines_use_ranks_1_to_10():
    with fake("variant") as eng:
        assert eng.rank_offset == 1
        assert "> setoption name UCI_Variant value xiangqi" in eng.transcript
        board = board_after("h2e2", "h9g7")
        assert eng.position_command(board) == "position startpos moves h3e3 h10g8"
        res = eng.play(Board(), Limit(depth=1))
    assert (res.move, res.ponder) == (Move.from_iccs("h2e2"), Move.from_iccs("h9g7"))
    assert res.info["pv"] == [Move.from_iccs("h2e2"), Move.from_iccs("h9g7")]


def test_uci_go_command_units():
    with fake("echo") as eng:
        b = Board()
        assert eng.go_command(b, Limit(depth=5)) == "go depth 5"
        assert eng.go_command(b, Limit(time=0.2)) == "go movetime 200"
        assert eng.go_command(b, Limit(wtime=60, btime=59.5, winc=1, binc=1, movestogo=20)) == \
            "go wtime 60000 btime 59500 winc 1000 binc 1000 movestogo 20"
        with pytest.raises(EngineError, match="infinite"):
            eng.play(b, Limit(infinite=True))
        with pytest.raises(EngineError, match=r"no option 'Threads' \(it has: Hash, MultiPV\)"):
            eng.configure({"Threads": 2})


def test_parse_info_keeps_only_the_legal_part_of_a_pv():
    with fake("echo") as eng:
        info = eng.parse_info("depth 3 score cp -7 upperbound nodes 5 pv h2e2 h9g7 e2e9 b0c2", Board())
    assert info == {"depth": 3, "score": Score(cp=-7), "upperbound": True, "nodes": 5,
                    "pv": [Move.from_iccs("h2e2"), Move.from_iccs("h9g7")]}


@needs_fairy
def test_fairy_stockfish_plays_legal_moves_in_our_coordinates():
    with SimpleEngine.popen(FAIRY) as eng:
        assert eng.protocol == "uci"
        assert eng.id["name"].startswith("Fairy-Stockfish")
        assert eng.rank_offset == 1
        board = board_after("h2e2", "h9g7", "h0g2")
        res = eng.play(board, Limit(depth=6))
        assert board.is_legal(res.move)
        assert eng.transcript[-1].startswith("< bestmove ")
        assert res.info["depth"] == 6
        # a position given by FEN (not startpos), Black to move
        b2 = Board(board.fen())
        assert b2.is_legal(eng.play(b2, Limit(nodes=2000)).move)


@needs_fairy
def test_fairy_stockfish_finds_a_mate_in_one():
    # Rh1-d1 mates: the black king on d9 cannot step to the e file, where it would face the red king
    board = Board("3k5/9/9/9/9/9/9/9/7R1/4K4 w - - 0 1")
    with SimpleEngine.popen(FAIRY) as eng:
        info = eng.analyse(board, Limit(depth=5))
        res = eng.play(board, Limit(depth=5))
    assert info["score"] == Score(mate=1)
    assert info["pv"][0] == Move.from_iccs("h1d1")
    after = board.copy()
    after.push(res.move)
    assert after.is_checkmate()


@needs_fairy
def test_fairy_stockfish_multipv_analysis():
    with SimpleEngine.popen(FAIRY) as eng:
        lines = eng.analyse(Board(), Limit(depth=5), multipv=3)
        eng.play(Board(), Limit(depth=3))
        sent = [x for x in eng.transcript if x.startswith("> setoption name MultiPV")]
    assert sent == ["> setoption name MultiPV value 3", "> setoption name MultiPV value 1"]
    assert [x["multipv"] for x in lines] == [1, 2, 3]
    firsts = {x["pv"][0] for x in lines}
    assert len(firsts) == 3 and all(Board().is_legal(m) for m in firsts)


@needs_sjaak
def test_sjaakii_speaks_uci_with_he_letters_and_ranks_1_to_10():
    with SimpleEngine.popen(SJAAK) as eng:
        assert eng.protocol == "uci"
        assert (eng.rank_offset, eng.fen_letters) == (1, "he")
        board = Board(board_after("h2e2").fen())  # a FEN root, so the FEN is sent
        assert eng.position_command(board).startswith("position fen rheakaehr/9/1c5c1/")
        res = eng.play(board, Limit(depth=4))
    assert board.is_legal(res.move)
