"""The pure-Python 2-ply search that plays 初级 while the Numba kernels compile (xiangqi.engine.pysearch)."""

from __future__ import annotations

import random

import pytest
from tests.conftest import cxa_case

from xiangqi.core import referee
from xiangqi.core.board import Board, Move
from xiangqi.engine import pysearch
from xiangqi.engine.evaluate import PHASE_MAX, PHASE_W, PST_EG, PST_MG, W


def _random_positions(n: int, seed: int) -> list[Board]:
    """``n`` positions reached by random legal moves (10-60 plies) from the start, game not over."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        b = Board()
        for _ in range(rng.randrange(10, 60)):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(rng.choice(moves))
        if b.outcome() is None:
            out.append(b)
    return out


def test_moves_are_legal_and_the_board_is_left_alone():
    for i, b in enumerate(_random_positions(12, seed=7)):
        fen, stack = b.fen(), list(b.move_stack)
        res = pysearch.play(b, "beginner", seed=i)
        assert res.move is not None and b.is_legal(res.move), b.fen()
        assert res.depth == 2 and res.pv == [res.move]
        assert b.fen() == fen and b.move_stack == stack


def test_no_legal_move_gives_none():
    b = Board("3k5/3R5/3R5/9/9/9/9/9/9/4K4 b")  # mated: the rook on d8 is defended by the one on d7
    assert not list(b.legal_moves)
    res = pysearch.play(b, "beginner")
    assert res.move is None and res.mate == 0


def test_takes_a_free_piece():
    b = Board("4k4/9/9/9/n8/9/9/9/9/R2K5 w")  # the black horse on a5 is undefended
    for seed in range(10):
        assert pysearch.play(b, "beginner", seed=seed).move == Move.from_iccs("a0a5")
    best = pysearch.best_move(b)
    assert best.move == Move.from_iccs("a0a5") and best.score_cp > 250


def test_does_not_take_a_defended_pawn_with_the_rook():
    b = Board("4k4/9/1n7/9/p8/9/9/9/9/R2K5 w")  # the horse on b7 guards the pawn on a5
    for seed in range(10):
        assert pysearch.play(b, "beginner", seed=seed).move != Move.from_iccs("a0a5")


def test_saves_an_attacked_piece():
    b = Board("2r1k4/9/9/9/9/2N6/P3P3P/9/9/3K5 w")  # the black rook on c9 attacks the horse on c4
    for seed in range(10):
        mv = pysearch.play(b, "beginner", seed=seed).move
        after = b.copy()
        after.push(mv)
        horse = next(sq for sq, code in enumerate(after.squares) if code == 4)  # Red's horse
        assert not any(m.to_square == horse for m in after.legal_moves), mv.iccs()


def test_finds_mate_in_one():
    b = Board("3k5/1R7/R8/9/9/9/9/9/9/4K4 w")
    res = pysearch.best_move(b)
    assert res.move == Move.from_iccs("a7a9") and res.mate == 1
    assert pysearch.play(b, "beginner", seed=3).move == Move.from_iccs("a7a9")


def test_start_position_is_a_small_search():
    # ~2,600 nodes: far below the node cap, i.e. well under a second of CPython at ~50k nodes/s.
    lines, depth, nodes = pysearch.search_lines(Board(), 2, margin_cp=90)
    assert depth == 2 and 1000 < nodes < 10_000 < pysearch.DEFAULT_NODE_LIMIT
    assert len(lines) >= 5 and all(v >= lines[0][0] - 90 for v, _ in lines)
    assert lines[0][1] in Board().legal_moves


def test_node_limit_keeps_the_completed_iteration():
    d1, d1_depth, d1_nodes = pysearch.search_lines(Board(), 1, margin_cp=None)
    assert d1_depth == 1 and len(d1) == 44
    # stopped before the first 2-ply root move is done: the 1-ply scores are used
    lines, depth, nodes = pysearch.search_lines(Board(), 2, margin_cp=None, node_limit=d1_nodes + 2)
    assert (lines, depth, nodes) == (d1, 1, d1_nodes + 2)
    # stopped later: the root moves searched to 2 plies so far
    lines, depth, nodes = pysearch.search_lines(Board(), 2, margin_cp=None, node_limit=1000)
    assert depth == 2 and nodes == 1000 and 0 < len(lines) < 44
    # depth 1 is never cut short, whatever the limit
    lines, depth, _ = pysearch.search_lines(Board(), 2, margin_cp=None, node_limit=1)
    assert (lines, depth) == (d1, 1)


def test_evaluation_uses_the_engine_tables():
    # the start position is symmetric: material + PST cancel, the score is the tempo bonus
    assert pysearch._Search(Board(), 1000, None).evaluate() == int(W[11])
    # a Red rook against the bare king: its table value, blended by the game phase, for either side
    b = Board("3k5/9/9/9/9/9/9/9/9/R3K4 w")
    ph = int(PHASE_W[5])
    mg = int(PST_MG[5 + 7, 0] + PST_MG[1 + 7, 4] + PST_MG[-1 + 7, 84])
    eg = int(PST_EG[5 + 7, 0] + PST_EG[1 + 7, 4] + PST_EG[-1 + 7, 84])
    red_view = (mg * ph + eg * (PHASE_MAX - ph)) // PHASE_MAX
    assert red_view > 600
    assert pysearch._Search(b, 1000, None).evaluate() == red_view + int(W[11])
    b.turn = False
    assert pysearch._Search(b, 1000, None).evaluate() == -red_view + int(W[11])
    # the sums follow make/unmake: a capture removes the piece's table value and phase weight
    b = Board("3k5/9/9/9/r8/9/9/9/9/R3K4 w")
    s = pysearch._Search(b, 1000, None)
    before = (s.mg, s.eg, s.ph)
    s.make(Move.from_iccs("a0a5"))
    assert s.ph == before[2] - ph
    assert s.mg == int(PST_MG[5 + 7, 45] + PST_MG[1 + 7, 4] + PST_MG[-1 + 7, 84])
    s.unmake()
    assert (s.mg, s.eg, s.ph) == before and b.fen().startswith("3k5/9/9/9/r8/")


def test_never_completes_a_forbidden_repetition(monkeypatch):
    # CXA 2020 图12: Black's last move of the cycle completes its perpetual chase (长捉) and loses.
    b, losing = cxa_case("CXA-fig12")
    assert losing in referee.forbidden_moves(b) and losing not in pysearch.root_moves(b)
    assert all(pysearch.play(b, "beginner", seed=s).move != losing for s in range(30))
    # without the referee's filter the move is among 初级's candidates (so the check above can fail)
    monkeypatch.setattr(referee, "forbidden_moves", lambda board, rules=None: {})
    assert any(pysearch.play(b, "beginner", seed=s).move == losing for s in range(30))


def test_all_moves_forbidden_still_moves(monkeypatch):
    b = Board()
    everything = lambda board, rules=None: dict.fromkeys(board.legal_moves)  # noqa: E731
    monkeypatch.setattr(referee, "forbidden_moves", everything)
    assert len(pysearch.root_moves(b)) == 44
    assert pysearch.play(b, "beginner", seed=1).move in b.legal_moves


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="unknown level"):
        pysearch.play(Board(), "grandmaster")
