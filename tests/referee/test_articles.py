"""One test per article of the rule book (CXA 2020 第24条 术语, 棋例通则; RULES.md §5,
RULES_CXA.md §1-§3), on small positions built for the article (not the rule-book
figures). Each article is shown both ways where it has two sides: the position where
it applies and a neighbour where it does not. Squares in the comments are ICCS.
"""

from __future__ import annotations

import inspect

import pytest

from xiangqi.core import classify
from xiangqi.core.board import CANNON, HORSE, ROOK, Board, Move
from xiangqi.core.classify import (
    ARTICLES,
    BY_VALUE,
    CHASE,
    CHECK,
    CHECK_WIN,
    IDLE,
    JOINT,
    KILL,
    KILL_DEPTH,
    UNROOTED,
    classify_move,
    mates_by_checks,
)


def cls(fen: str, move: str, rules: str = "cxa") -> classify.MoveClass:
    return classify_move(Board(fen), Move.from_iccs(move), rules)


def test_every_article_has_a_procedure_that_cites_it():
    for article, (_term, name) in ARTICLES.items():
        fn = getattr(classify, name)
        src = inspect.getsource(fn)
        number = article.split()[0].split("/")[0]
        assert number in src, f"{name} does not cite {article}"
        assert "图" not in (fn.__doc__ or ""), f"{name}'s docstring cites a figure"


def test_24_1_check():
    # 24.1 "走子后能够造成直接攻击对方将(帅)的着法": the rook to the king's rank checks.
    fen = "3k5/9/9/9/9/9/9/9/4A3R/4K4 w - - 0 1"
    assert cls(fen, "i1i9").cls == CHECK
    assert cls(fen, "i1h1").cls == IDLE


def test_24_3_chase_of_an_unprotected_piece_and_not_of_a_protected_one():
    # 24.3 捉: after the move the moved piece can take a piece of value next move with a gain.
    # The rook attacks a lone horse: 捉. The same horse protected by a free advisor: a rook for a
    # horse loses, so it is no chase (闲).
    mc = cls("4k4/4a4/3n5/9/9/9/9/9/9/R4K3 w - - 0 1", "a0a7")
    assert mc.cls == IDLE
    mc = cls("4k4/9/3n5/9/9/9/9/9/9/R2K5 w - - 0 1", "a0a7")
    assert mc.cls == CHASE and mc.chases[0].kind == UNROOTED


def test_24_15_false_root_pinned_protector():
    # 24.15 / 假根: "looks like a protector but cannot really protect … it is pinned". The advisor
    # on e8 protects d7 but is pinned to its king by the rook on e1: the horse is still chased.
    mc = cls("4k4/4a4/3n5/9/9/9/9/9/4R4/R4K3 w - - 0 1", "a0a7")
    assert mc.cls == CHASE and mc.chases[0].kind == UNROOTED


def test_24_4_exchange_offer_is_not_a_chase_but_value_gain_is():
    # 24.4 兑: offering a same-type exchange (both rooks protected: the rook on a7 by the rook on
    # a0, the rook on d7 by the advisor) is 闲. 子力价值 (25.3): a horse attacking the same
    # protected rook wins material (车 = 2 马), so that is 捉.
    assert cls("4k4/4a4/3r5/9/9/9/9/9/R8/R4K3 w - - 0 1", "a1a7").cls == IDLE
    mc = cls("4k4/4a4/3r5/9/9/N8/9/9/9/5K3 w - - 0 1", "a4c5")
    assert mc.cls == CHASE and mc.chases[0].kind == BY_VALUE


def test_24_3_joint_chase_two_pieces_win_what_neither_wins_alone():
    # 24.3 "使另一子可以与之联合吃子" (联合捉): the rook alone on the protected horse (elephant on
    # e7) loses a rook for a horse: 闲. The cannon brought behind the rook (the rook its screen)
    # makes the exchange win: 捉 of kind JOINT.
    assert cls("4k4/9/4b4/9/2n6/9/9/9/R8/3K5 w - - 0 1", "a1c1").cls == IDLE
    mc = cls("4k4/9/4b4/9/2n6/9/9/9/2R6/C2K5 w - - 0 1", "a0c0")
    assert mc.cls == CHASE and mc.chases[0].kind == JOINT


def test_24_3_check_that_wins_material_against_every_defence():
    # 24.3 "可以下一着开始运用照将…得子" (抽将): 车一平五 puts the rook behind the horse on the
    # e-file. Red, to move again, plays 马五进六 (a discovered check that also attacks the rook on
    # b5); whatever Black answers (the king steps aside, the advisor or the elephant blocks), the
    # horse takes the rook: 捉, of kind CHECK_WIN. Before the move no check won anything (the rook
    # on i1 gives no check: the elephant on g9 covers the rank).
    mc = cls("4kab2/9/9/9/1rp6/4N4/9/9/8R/5K3 w - - 0 1", "i1e1")
    assert mc.cls == CHASE and [(c.kind, c.target_type) for c in mc.chases] == [(CHECK_WIN, ROOK)]
    # The same, but the black horse on c2 can answer every discovered check by taking the checking
    # rook on e1 (the horse then takes a rook for a rook): the checks win nothing against that
    # defence, so it is not 捉.
    assert cls("4kab2/9/9/9/1rp6/4N4/9/2n6/8R/5K3 w - - 0 1", "i1e1").cls == IDLE


def test_24_2_kill_needing_five_consecutive_checks():
    # 24.2 杀: "一着或连续照将将死对方". After 车一平五 the discovered checks of the horse and the
    # rook mate in five checking moves (none in four); before it there is no such mate.
    fen = "3r5/4k4/9/3n5/9/4N4/9/9/R8/5K3 w - - 0 1"
    after = Board(fen)
    after.push(Move.from_iccs("a1e1"))
    after.turn = not after.turn
    assert KILL_DEPTH >= 5
    assert not mates_by_checks(after, 4) and mates_by_checks(after, 5)
    assert cls(fen, "a1e1").cls == KILL


def test_kill_search_budget_proves_nothing_when_exhausted():
    # The node budget bounds the search: with too few nodes the mate is not proven (False).
    after = Board("3r5/4k4/9/3n5/9/4N4/9/9/R8/5K3 w - - 0 1")
    after.push(Move.from_iccs("a1e1"))
    after.turn = not after.turn
    classify._MATE_CACHE.clear()
    assert not mates_by_checks(after, 5, nodes=3)
    assert mates_by_checks(after, 5)


def test_29_2_chase_to_chase_is_idle():
    # 29.2 "从没捉到捉": the rook already attacks the lone horse; a king move, or the rook moving
    # on without changing the attack (从捉到捉), creates no chase: 闲.
    fen = "4k4/9/R2n5/9/9/9/9/9/9/3K5 w - - 0 1"
    assert cls(fen, "d0d1").cls == IDLE
    assert cls(fen, "a7b7").cls == IDLE


def test_general_1_2_king_alone_idle_king_support_chase():
    # 通则 1: the king attacking a lone cannon by itself is 闲.
    assert cls("5k3/9/9/9/9/9/9/3c5/4K4/9 w - - 0 1", "e1d1").cls == IDLE
    # 通则 2 借帅之力: the rook attacks the cannon on d2, protected by the rook on d7; the exchange
    # wins only because the king on d1 takes back (车吃炮, 车吃车, 帅吃车): 捉. Without the king next
    # to d2 the rook would lose itself for a cannon: 闲.
    assert cls("4k4/9/3r5/9/9/R8/9/3c5/3K5/9 w - - 0 1", "a4a2").cls == CHASE
    assert cls("4k4/9/3r5/9/9/R8/9/3c5/9/5K3 w - - 0 1", "a4a2").cls == IDLE


@pytest.mark.parametrize("fen, chased", [
    # The red horse on e4 attacks the black horse on f6, whose own leg (f5) is blocked by a pawn:
    # it cannot take back, so this is no exchange but a chase.
    ("4k4/9/9/5n3/5p3/9/2N6/9/9/3K5 w - - 0 1", True),
    # The same with the leg free: the black horse can take back: an exchange, not a chase.
    ("4k4/9/9/5n3/9/9/2N6/9/9/3K5 w - - 0 1", False),
])
def test_axf_exchange_between_horses_judged_on_the_targets_leg(fen, chased):
    # AXF (RULES.md §5.5, FSF model): attacks between two pieces of one type are exchanges when the
    # target can take back; a lame horse (蹩马腿, RULES.md §2: the leg is next to the moving horse)
    # cannot.
    mc = cls(fen, "c3e4", "axf")
    assert (mc.cls == CHASE) == chased


def test_cli_outcome_explain_names_each_move_class_and_article(capsys):
    # The referee explains itself: every move of the cycle with its class and article, then the
    # verdict of each side (24.13 禁止着法 / 24.14 允许着法). 图2 of the rule book: the horse's
    # two moves are 捉 (the second by 卧槽 check winning the rook, 抽将).
    from xiangqi.cli import main as cli_main

    fen = "1r2kab1r/2c1a4/n1c1b1n2/4p2N1/p1p6/1C4P2/P1P1P4/2N1B3C/4A4/1RBAK2R1 w - - 0 1"
    moves = "h6i4 i9h9 i4h6 h9i9 h6i4 i9h9 i4h6 h9i9".split()
    assert cli_main(["outcome", "--explain", "--fen", fen, *moves]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "black"
    assert out[2] == "红 马二退一: 捉 车 (第24.3条, 无根子)"
    assert out[4] == "红 马一进二: 捉 车 (第24.3条, 抽将)"
    assert out[3].startswith("黑 车9平8: 闲 (")
    assert out[10] == "红方: 长捉 — 禁止着法 (第24.13/24.14条)"
    assert len(out) == 2 + 8 + 2 + 1


def test_general_5_exchange_offer_that_also_chases_is_a_chase():
    # 通则 5 从重 (兑兼捉 → 捉) with 24.4: the horse to d5 offers itself to the black horse on f6
    # (both protected: by the rook on a5 and the rook on f9) — 兑 — and also attacks the lone
    # cannon on c7: the heavier nature decides, 捉. Without the cannon it is a plain 兑: 闲.
    mc = cls("4kr3/9/2c6/5n3/R8/9/2N6/9/9/3K5 w - - 0 1", "c3d5")
    assert mc.cls == CHASE and [c.target_type for c in mc.chases] == [6]  # the cannon
    assert cls("4kr3/9/9/5n3/R8/9/2N6/9/9/3K5 w - - 0 1", "c3d5").cls == IDLE


def test_29_2_answer_to_a_check_chases_only_what_it_creates():
    # 29.2 (the chase must arise from the move just played): the rook on a7 already attacked the
    # lone horse on d7 before Black's rook checked; the horse that blocks on e2 takes no part in
    # that attack, so the answer to the check is 闲 (not a chase "created" by parrying the check).
    assert cls("5k3/9/R2n5/9/4r4/9/2N6/9/4K4/9 w - - 0 1", "c3e2").cls == IDLE
    # The same block uncovers the rook on c0, which now attacks the lone cannon on c7: a discovered
    # attack created by the answer, 捉.
    mc = cls("5k3/9/2c6/9/4r4/9/2N6/9/4K4/2R6 w - - 0 1", "c3e2")
    assert mc.cls == CHASE and mc.chases[0].target_type == 6


def test_26_5_pinned_capturer_does_not_chase():
    # 26.5 被牵子捉子 / 29.4 (legal moves only): the horse brought to e3 attacks the lone cannon on
    # d5, but it is pinned to its king by the rook on e7 (taking would expose the king): 闲.
    # Without the pinning rook the same move is 捉.
    assert cls("5k3/9/4r4/9/3c5/9/9/2N6/4K4/9 w - - 0 1", "c2e3").cls == IDLE
    mc = cls("5k3/9/9/9/3c5/9/9/2N6/4K4/9 w - - 0 1", "c2e3")
    assert mc.cls == CHASE and mc.chases[0].kind == UNROOTED


def test_24_15_false_root_cannon_whose_screen_is_the_capturer():
    # 24.15 假根: the cannon on d9 "protects" the horse on d7 only over the rook on d8; when the rook
    # takes, the screen is gone and the cannon cannot take back: the horse is chased (捉). With a
    # screen of its own (the horse on d8) the cannon really protects: a rook for a horse, 闲.
    mc = cls("3ck4/R8/3n5/9/9/9/9/9/9/5K3 w - - 0 1", "a8d8")
    assert mc.cls == CHASE and mc.chases[0].target_type == 4 and mc.chases[0].kind == UNROOTED
    assert cls("3ck4/3n5/3n5/9/9/9/9/9/9/R4K3 w - - 0 1", "a0a7").cls == IDLE


def test_24_4_offered_rook_is_not_won_by_a_check_either():
    # 24.4 兑: 车四平五 puts the rook (protected by the horse on g3) next to the black rook on e5:
    # an offer to exchange, 闲 — although, were Red to move again, 炮五平四 (check over the cannon
    # on f7) and 车五进一 would win the rook: Black, to move, exchanges first, so no 抽将 chase.
    # The same move against a horse on e5 (no exchange possible) chases it: 捉.
    assert cls("5k3/9/5c3/4C4/4r4/5R3/6N2/9/9/3K5 w - - 0 1", "f4e4").cls == IDLE
    mc = cls("5k3/9/5c3/4C4/4n4/5R3/6N2/9/9/3K5 w - - 0 1", "f4e4")
    assert mc.cls == CHASE and mc.chases[0].target_type == 4


def test_24_3_complete_exchange_that_wins_more_than_the_even_trade():
    # 24.3 "完整互吃交换后得子": 马八进九 attacks the cannon on c5 (protected by the elephant on e7: a
    # horse for a cannon is an even trade). But when the elephant takes back it leaves g5's horse
    # without its protector and the rook on g0 takes it: the exchange played out on every square
    # wins a piece, so the move chases (two pieces together: 联合捉).
    mc = cls("4k4/9/4b4/9/2c3n2/9/9/1N7/9/3K2R2 w - - 0 1", "b2a4")
    assert mc.cls == CHASE and [(c.target_type, c.kind) for c in mc.chases] == [(CANNON, JOINT)]
    assert mc.article == "第24.3条, 联合捉"
    # The rook on h0 (no line to g5): the even trade wins nothing more: 闲.
    assert cls("4k4/9/4b4/9/2c3n2/9/9/1N7/9/3K3R1 w - - 0 1", "b2a4").cls == IDLE
    # The rook on e0 instead: the elephant cannot take back at all (it would uncover the black king
    # to the rook: a pinned protector, 假根 24.15), so the cannon is simply unrooted.
    mc = cls("4k4/9/4b4/9/2c3n2/9/9/1N7/9/3KR4 w - - 0 1", "b2a4")
    assert mc.cls == CHASE and mc.chases[0].kind == UNROOTED


def test_24_4_horses_attacking_each_other_offer_an_exchange():
    # 24.4 兑: the horse brought to a4 attacks the black horse on c5, which can take it back (its leg
    # b5 is free): the moved piece offers a same-type exchange, 闲, whatever the complete exchange.
    mc = cls("4k4/9/4b4/9/2n3c2/9/9/1N7/9/3K2R2 w - - 0 1", "b2a4")
    assert mc.cls == IDLE and mc.article == "第24.4条, 兑"


def test_25_3_floating_pawn_value():
    # 25.3 子力价值: 车 = 2 马 = 2 炮, 马 = 炮, 士 = 相; a crossed pawn's value floats: one pawn for
    # several pieces, or one piece for several pawns, is no gain either way.
    P, A, C, H, R = classify.PAWN, classify.ADVISOR, CANNON, HORSE, ROOK
    assert classify._balance([R], [H]) == 2 and classify._balance([H], [C]) == 0
    assert classify._balance([A, C], [P]) == 0 and classify._balance([P], [A, C]) == 0
    assert classify._balance([H], [P, P]) == 0 and classify._balance([P, P], [H]) == 0
    assert classify._balance([H], [P]) == 1  # one pawn for one piece: by the values
    assert classify._balance([P], []) == 1  # a crossed pawn won for nothing is a gain


def test_25_3_uncrossed_pawn_is_no_material():
    # 25.3 子力: a pawn that has not crossed the river is no 子力: the rook attacking a lone black pawn
    # on its own side of the river chases nothing; across the river it does (捉).
    assert cls("4k4/9/9/p8/9/9/9/9/9/R2K5 w - - 0 1", "a0a1").cls == IDLE
    mc = cls("4k4/9/9/9/9/p8/9/9/9/1R1K5 w - - 0 1", "b0a0")
    assert mc.cls == CHASE and mc.chases[0].target_type == classify.PAWN


def test_every_class_names_its_article():
    # The explanation's article comes from the procedure that decided the class.
    assert cls("3k5/9/9/9/9/9/9/9/4A3R/4K4 w - - 0 1", "i1i9").article == "第24.1条"
    assert cls("4k4/9/R2n5/9/9/9/9/9/9/3K5 w - - 0 1", "a7b7").article == "第29.2条, 从捉到捉"
    assert cls("4k4/9/9/9/9/9/9/9/9/R2K5 w - - 0 1", "a0a1").article == "第24.8条"


def test_24_3_material_won_by_a_series_of_checks():
    # 24.3 "可以下一着开始运用照将或连续照将得子": 车九进五 checks (the king can only step to e8), then
    # 车九退一 checks along rank 8 and, when the king steps off it, the rook takes the horse on g8
    # behind it. One check wins nothing; the series of two wins the horse against every defence.
    b = Board("4k4/6n2/9/9/1n7/R8/1c7/9/3N5/5K3 w - - 0 1")
    assert classify._win_by_checks(b, 1, classify._Budget(600))[0] == 0
    gain, frm, won = classify._win_by_checks(b, 2, classify._Budget(600))
    assert (gain, frm, won) == (2, 36, 78)  # a horse (2), by the rook from a4, the horse on g8
    assert classify.CHECK_WIN_DEPTH >= 2
    [(sq, chase)] = classify._check_wins(b).items()
    assert sq == 78 and chase.kind == CHECK_WIN and chase.target_type == HORSE


def test_26_5_an_independent_counter_capture_of_equal_value_leaves_a_chase():
    # 26.5 (各吃各子: a complete exchange that ends equal or better is 捉): 车九平八 attacks the lone
    # horse on b7; Black's rook on d5 can take the red cannon on d3 in answer (a piece for a
    # piece), but that was Black's threat anyway: the chase stands. When Black's answer is worth
    # more than the horse (the red rook on h5 instead of the cannon) the capture loses: 闲.
    mc = cls("4k4/9/1n7/9/3r5/9/3C5/9/9/R4K3 w - - 0 1", "a0b0")
    assert mc.cls == CHASE and mc.chases[0].target_type == HORSE
    assert cls("4k4/9/1n7/9/3r3R1/9/9/9/9/R4K3 w - - 0 1", "a0b0").cls == IDLE


def test_24_3_joint_capture_needs_the_moved_piece_in_the_exchange():
    # 24.3 "使另一子可以与之联合吃子" (联合捉): 车八进八 puts the rook on b9 as the screen of the cannon
    # on a9, which can then take the advisor on d9; the king on e9 cannot take back because the
    # rook covers d9. Both pieces take part in the exchange: JOINT.
    mc = cls("C2ak4/9/9/9/9/9/9/9/1R7/3K5 w - - 0 1", "b1b9")
    assert mc.cls == CHASE and [(c.target_type, c.kind) for c in mc.chases] == [(classify.ADVISOR, JOINT)]
    # 24.3 "使另一子可以吃子": a horse brought to b9 is only the cannon's screen (it does not attack
    # d9) and the advisor has no protector: a plain chase of an unrooted piece.
    mc = cls("C2a1k3/9/2N6/9/9/9/9/9/9/3K5 w - - 0 1", "c7b9")
    assert mc.cls == CHASE and mc.chases[0].kind == UNROOTED


def test_29_4_a_capture_answered_by_mate_wins_nothing():
    # 29.4 / 24.3 (the winner must not be mated on the immediate reply): 车六退四 attacks the lone
    # horse on e1. With the black king on e8, 车六平五 takes it safely: 捉. With the king on f8,
    # the capture is met by 车6进6 mate (the red king cannot take f0: it would face the black king
    # on the open f-file; d0 is covered along rank 0): no material is won, 闲.
    mc = cls("9/4k4/9/5r3/3R5/9/9/9/4n4/4K4 w - - 0 1", "d5d1")
    assert mc.cls == CHASE and mc.chases[0].target_type == HORSE
    assert cls("9/5k3/9/5r3/3R5/9/9/9/4n4/4K4 w - - 0 1", "d5d1").cls == IDLE


def test_24_3_a_counter_check_is_a_defence_against_a_check_that_wins_material():
    # 24.3 抽将 "against every defence": 炮三平五 checks over the horse on e6; if the king steps
    # aside, the horse takes the rook on f8 (a rook for the horse at worst: +2). With the black
    # cannon on i4 Black can also block on e4,
    # and the block checks the red king over the red cannon (a counter-check, 还将): that defence
    # saves the rook, so no check wins material. Without the black cannon the check wins the rook.
    with_block = Board("9/4kr3/9/3nN4/9/8c/6C2/9/9/4K4 w - - 0 1")
    assert classify._win_by_checks(with_block, classify.CHECK_WIN_DEPTH, classify._Budget(600))[0] == 0
    without = Board("9/4kr3/9/3nN4/9/9/6C2/9/9/4K4 w - - 0 1")
    assert classify._check_wins(without) == {
        77: classify.Chase(77, ROOK, 33, CANNON, CHECK_WIN, 2)}  # the rook on f8, by the cannon g3's check
