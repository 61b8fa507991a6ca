"""Repetition cycles built from the CXA rule book's wording (shared RULES_CXA.md), not from its
figures: one or more per clause, each a legal position and a 4-ply cycle played twice so that the
start position occurs a third time. Every move is checked legal by :class:`Board` (``push``
validates), the repetition is checked, and the plain perpetual-check / plain-chase cases are also
compared with pyffish (whose simplified rules agree there). Squares in comments are ICCS.
"""

from __future__ import annotations

import pytest

from xiangqi.core.board import BLACK, RED, Board, Move
from xiangqi.core.referee import CXA, explain_cycle, repetition_cycle


def _play(fen: str, cycle: str) -> Board:
    """Play the 4-ply ``cycle`` twice from ``fen`` (each move validated) and check that the start
    position is back for the third time with a cycle found."""
    b = Board(fen)
    start = b.fen().split()[:2]
    for m in (cycle.split()) * 2:
        b.push(Move.from_iccs(m))
    assert b.fen().split()[:2] == start
    assert repetition_cycle(b)
    return b


def _fsf(fen: str, cycle: str) -> str | None:
    sf = pytest.importorskip("pyffish")
    moves = [f"{t[0]}{int(t[1]) + 1}{t[2]}{int(t[3]) + 1}" for t in cycle.split() * 2]
    ended, value = sf.is_optional_game_end("xiangqi", fen, moves)
    if not ended:
        return None
    if value == 0:
        return "draw"
    return "red" if (value > 0) == (Board(fen).turn == RED) else "black"


CASES = [
    # id, fen, cycle, expected winner (None = draw), pyffish comparable, a line of the explanation
    ("24.11_plain_chase_of_an_unrooted_cannon",
     "5k3/9/1c7/9/9/R8/9/9/9/3K5 w - - 0 1", "a4b4 b7a7 b4a4 a7b7", BLACK, True,
     "红 车九平八: 捉 炮 (第24.3条, 无根子)"),
    ("24.9_perpetual_check_by_a_rook_against_king_moves",
     "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1", "a8a9 e9e8 a9a8 e8e9", BLACK, True, "红方: 长将"),
    ("24.3_value_a_horse_chasing_a_rooted_rook_is_zhuo",
     "2b2k3/4a4/3r5/2N6/9/4P4/9/9/9/4K4 w - - 0 1", "c6e5 d7e7 e5c6 e7d7", BLACK, False,
     "捉 车 (第24.3条, 子力价值)"),
    ("24.15_false_root_advisor_pinned_by_the_facing_kings",
     "4k4/4a4/3c5/9/9/9/5R3/9/9/4K4 w - - 0 1", "f3d3 d7f7 d3f3 f7d7", BLACK, False,
     "红 车四平六: 捉 炮 (第24.3条, 无根子)"),
    ("24.15_true_root_same_but_a_pawn_between_the_kings",
     "4k4/4a4/3c5/4p4/9/9/5R3/9/9/4K4 w - - 0 1", "f3d3 d7f7 d3f3 f7d7", None, False,
     "红 车四平六: 闲"),
    ("24.4_24.12_perpetual_exchange_offer_of_rook_for_rook_is_allowed",
     "2b2k3/4a4/3r5/9/5P3/9/4R4/1N4N2/9/5K3 w - - 0 1", "e3d3 d7e7 d3e3 e7d7", None, False,
     "闲 (第24.4条, 兑)"),
    ("general_1_king_chasing_by_itself_is_idle",
     "5k3/9/9/9/9/9/9/4K4/3c5/8R w - - 0 1", "e2e1 d1d2 e1e2 d2d1", None, False,
     "闲 (通则1, 帅单独捉子为闲)"),
    ("25.3_uncrossed_pawns_are_not_material_so_cannot_be_chased",
     "4k4/9/9/3pp4/1N7/9/9/9/9/3K5 w - - 0 1", "b5d4 e9e8 d4b5 e8e9", None, False, "红方: 闲"),
    # 24.13 lists 一将一捉 among the forbidden cycles: the rook checks on rank 9, then leaves to
    # attack the lone cannon on c7 from a7; the black king only steps e9/e8.
    ("24.13_one_check_one_chase_against_idle_moves",
     "4k4/9/R1c6/9/9/9/9/9/9/3K5 w - - 0 1", "a7a9 e9e8 a9a7 e8e9", BLACK, False, "红方: 一将一捉"),
    # 24.5 献: the cannon steps a3/a4 in front of the black rook, guarded by the rook on a0 (taking
    # it loses the rook); it attacks nothing (no screen). 献 is 闲 (24.8), 长献 allowed (24.12/14).
    ("24.5_24.12_perpetual_offer_of_a_guarded_cannon_is_allowed",
     "4k4/9/r8/9/9/9/C8/9/9/R2K5 w - - 0 1", "a3a4 e9e8 a4a3 e8e9", None, False, "红方: 闲"),
    # 24.11 长捉 "一子或数子" on both sides: the red rook steps a4/b4 onto the lone cannon a7 and
    # the lone horse b8 in turn, the black rook i5/h5 onto the lone cannon i2 and horse h1. Both
    # sides forbidden, neither 长将: 总则 3, a draw.
    ("general_3_both_sides_chase_one_piece_after_another_draw",
     "5k3/1n7/c8/9/8r/R8/9/8C/7N1/3K5 w - - 0 1", "a4b4 i5h5 b4a4 h5i5", None, False,
     "双方不变作和"),
]


@pytest.mark.parametrize("fen,cycle,winner,fsf,line", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_outside_case(fen, cycle, winner, fsf, line):
    """The ruling is the one the article in the id gives, for the reason the explanation cites."""
    b = _play(fen, cycle)
    assert any(line in x for x in explain_cycle(b, CXA)), explain_cycle(b, CXA)
    out = b.outcome(CXA)
    assert out is not None
    assert out.winner == winner, out.reason_en
    if fsf:
        want = {None: "draw", RED: "red", BLACK: "black"}[winner]
        assert _fsf(fen, cycle) == want
