"""The review's second pass (``refine_line``) and reviews by an external engine (``xiangqi analyse
--engine``, ``ClientSearcher``).

The known game: 1. 炮二平五 马2进3 2. 炮五进四?? 马3进5 — the cannon takes the middle pawn where the
horse on c7 takes it back for nothing (a cannon for a pawn, the position after it is lost for Red
by ~250 of our centipawns, ~500 of Fairy-Stockfish's).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import types

import pytest

from xiangqi.cli import main
from xiangqi.core.board import Board, Move
from xiangqi.engine.api import Limit
from xiangqi.study import review as rv

FAIRY = shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish"
needs_fairy = pytest.mark.skipif(not os.access(FAIRY, os.X_OK), reason="fairy-stockfish is not installed")
HUNG = '[Event "hung cannon"]\n\n1. h2e2 b9c7 2. e2e6 c7e6 3. h0g2 *\n'


@pytest.fixture
def hung_game(tmp_path):
    p = tmp_path / "hung.pgn"
    p.write_text(HUNG, encoding="utf-8")
    return p


def _plies(out: str) -> tuple[dict, list[dict]]:
    (line,) = out.strip().splitlines()
    d = json.loads(line)
    return d, d["plies"]


@needs_fairy
def test_fairy_stockfish_as_the_reviewer_finds_the_hung_cannon(hung_game, capsys) -> None:
    assert main(["analyse", str(hung_game), "--engine", "fairy-stockfish", "--engine-option", "Hash=16",
                 "--depth", "12", "--json", "-q"]) == 0
    out = capsys.readouterr().out
    d, plies = _plies(out)
    assert d["limit"]["engine"].endswith("fairy-stockfish") and d["limit"]["depth"] == 12
    blunder, capture = plies[2], plies[3]
    assert blunder["move"] == "e2e6" and blunder["class"] == "blunder" and blunder["best"] != "e2e6"
    assert blunder["eval_before"] > -100 and blunder["eval"] < -200  # a cannon for a pawn
    assert capture["move"] == "c7e6" and capture["class"] == "best"
    assert blunder["depth"] == 12  # the engine's own depth, from its info lines
    assert sum(p["class"] == "blunder" for p in plies) == 1  # at depth 10, 1. h2e2 too (docs/REVIEW.md)
    # one thread and a cleared hash before each position: the same review again
    assert main(["analyse", str(hung_game), "--engine", "fairy-stockfish", "--engine-option", "Hash=16",
                 "--depth", "12", "--json", "-q"]) == 0
    assert capsys.readouterr().out == out


def test_our_engine_finds_the_hung_cannon(hung_game, capsys) -> None:
    assert main(["analyse", str(hung_game), "--depth", "6", "--json", "-q"]) == 0
    d, plies = _plies(capsys.readouterr().out)
    assert d["limit"]["depth"] == 6 and "engine" not in d["limit"]
    assert plies[2]["class"] == "blunder" and plies[2]["best"] != "e2e6"
    assert plies[3]["class"] == "best"
    assert sum(p["class"] == "blunder" for p in plies) == 1


def test_a_program_that_is_not_an_engine_is_a_clear_error(hung_game, capsys) -> None:
    code = main(["analyse", str(hung_game), "--engine", sys.executable, "--engine-arg=-c",
                 "--engine-arg", "print('hello')", "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert "not a usable UCI/UCCI engine" in err and "answered neither 'uci' nor 'ucci'" in err
    assert main(["analyse", str(hung_game), "--engine", "/no/such/engine", "-q"]) == 2
    assert "/no/such/engine" in capsys.readouterr().err
    assert main(["analyse", str(hung_game), "--engine-option", "Hash=16", "-q"]) == 2
    assert "go with --engine" in capsys.readouterr().err
    assert main(["analyse", str(hung_game), "--engine", sys.executable, "--engine-cp-scale", "0", "-q"]) == 2
    assert "--engine-cp-scale must be > 0" in capsys.readouterr().err


@needs_fairy
def test_an_option_the_engine_lacks_is_a_clear_error(hung_game, capsys) -> None:
    assert main(["analyse", str(hung_game), "--engine", "fairy-stockfish", "--engine-option", "Bogus=1",
                 "-q"]) == 2
    assert "no option 'Bogus'" in capsys.readouterr().err


# -- the second pass ------------------------------------------------------------------------------

class ScriptedSearcher:
    """Scores by (plies played, depth): ``table[(n, depth)]`` centipawns for the side to move; the best
    move is always the first legal move in ICCS order. Records every search."""

    def __init__(self, table: dict[tuple[int, int], int]) -> None:
        self.table = table
        self.calls: list[tuple[int, int]] = []

    def new_game(self) -> None:
        pass

    def search(self, board: Board, limit):
        n = len(board.move_stack)
        self.calls.append((n, limit.depth))
        move = sorted(board.legal_moves, key=lambda m: m.iccs())[0]
        return types.SimpleNamespace(move=move, score_cp=self.table.get((n, limit.depth), 0), mate=None,
                                     pv=[move], depth=limit.depth, nodes=1, tablebase=None)


def test_the_second_pass_searches_the_positions_around_each_candidate_again() -> None:
    moves = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0"]
    # depth 2: position 3 (Black to move) is +300 for Black, so Red's ply 3 (h0g2) seems to throw 300 cp
    # away and Black's ply 4 to give them back: positions 2, 3, 4 are searched again at depth 5. There
    # position 3 is only +40 for Black and position 4 +300 for Red, which makes Red's ply 5 (from
    # +300 to the depth-2 0 of position 5) a candidate: position 5 is searched again as well (a
    # second round); positions 0 and 1 never are.
    table = {(3, 2): 300, (3, 5): 40, (4, 5): 300}
    s = ScriptedSearcher(table)
    start = Board().fen()
    first = rv.evaluate_line(start, moves, 0, len(moves) + 1, 2, searcher=s)
    assert s.calls == [(i, 2) for i in range(6)]
    s.calls.clear()
    out = rv.refine_line(start, moves, first, 2, 5, searcher=s, min_drop=8.0)
    assert s.calls == [(2, 5), (3, 5), (4, 5), (5, 5)]
    assert [e.depth for e in out] == [2, 2, 5, 5, 5, 5]
    assert out[3].cp == -40 and out[4].cp == 300  # Red's view: Black to move at 3, Red at 4
    # not deeper than the first pass, or no deep depth: nothing is searched again
    s.calls.clear()
    assert rv.refine_line(start, moves, first, 2, 2, searcher=s) == first and s.calls == []
    assert rv.refine_line(start, moves, first, 2, None, searcher=s) == first and s.calls == []


def test_the_second_pass_limit_follows_the_first() -> None:
    assert rv._deep_limit(8, 12, None) == Limit(depth=12)
    assert rv._deep_limit(8, 8, None) is None and rv._deep_limit(8, None, None) is None
    assert rv._deep_limit(None, 12, 100) == Limit(time=0.4)
    with pytest.raises(ValueError, match="deep must be 1-60"):
        rv._deep_limit(8, 99, None)


def test_the_review_with_a_second_pass_is_the_same_for_any_jobs(tmp_path) -> None:
    from xiangqi.core.pgn import read_game

    g = read_game(HUNG)
    one = [r.to_dict() for r in rv.review_games([g, g], depth=3, deep=5, jobs=1)]
    two = [r.to_dict() for r in rv.review_games([g, g], depth=3, deep=5, jobs=2, chunk=2)]
    assert one == two
    assert one[0]["limit"] == {"depth": 3, "deep": 5, "hash_mb": rv.DEFAULT_HASH_MB}
    assert {p["depth"] for p in one[0]["plies"]} <= {3, 5}
    assert any(p["depth"] == 5 for p in one[0]["plies"])  # the hung cannon was searched again


def test_a_move_of_the_first_pass_is_no_candidate_when_it_is_the_engines() -> None:
    ev = rv.PositionEval(0, None, "h2e2", ("h2e2",), 2, 1)
    after = rv.PositionEval(-500, None, "h9g7", ("h9g7",), 2, 1)
    assert rv._mover_drops(Board().fen(), ["h2e2"], [ev, after]) == [None]
    other = rv.PositionEval(0, None, "b2e2", ("b2e2",), 2, 1)
    (d,) = rv._mover_drops(Board().fen(), ["h2e2"], [other, after])
    assert d == pytest.approx(-rv.win_chance(-500))
    assert Move.from_iccs("h2e2")  # the line is legal


def test_the_annotator_tag_names_the_engine_and_the_second_pass() -> None:
    assert rv._limit_text({"depth": 8, "hash_mb": 16}) == "depth 8"
    assert rv._limit_text({"depth": 8, "deep": 12, "hash_mb": 16}) == "depth 8, second pass depth 12"
    assert rv._limit_text({"depth": 10, "engine": "/usr/games/fairy-stockfish"}) == \
        "/usr/games/fairy-stockfish depth 10"
    assert rv._limit_text({"engine": "Pikafish", "movetime_s": 0.5}) == "Pikafish movetime 0.5 s"
