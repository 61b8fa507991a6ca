"""The CXA definitions of issue 28, one test per clause, each on a small position built for the
clause's wording (not a rule-book figure): 24.6 拦, 29.4 in a win by checks, 29.2 从捉到捉 for a
chaser that moves on, 通则 3 (a pawn chasing by itself, and the 相互长打 exception), 24.3 联合捉 by
checks, and the 2020 responsibility comparison's 长捉车. Each clause is shown both ways: where it
applies and a neighbour where it does not. Squares in the comments are ICCS.
"""

from __future__ import annotations

from xiangqi.core import classify
from xiangqi.core.board import BLACK, CANNON, ELEPHANT, HORSE, RED, ROOK, Board, Move
from xiangqi.core.classify import (
    CHASE,
    CHECK,
    CHECK_WIN,
    IDLE,
    JOINT,
    UNROOTED,
    Chase,
    MoveClass,
    classify_move,
)
from xiangqi.core.referee import CXA, explain_cycle, rule_cycle


def cls(fen: str, move: str, rules: str = "cxa") -> MoveClass:
    return classify_move(Board(fen), Move.from_iccs(move), rules)


def test_24_6_block_of_a_winning_capture():
    # 24.6 拦 "a move that blocks an opponent piece and has no attacking function": the red rook on
    # a7 attacks the lone black horse on e7; 炮7进2 (c9c7) stands in the rook's way: 闲, cited as 拦.
    fen = "2c2k3/9/R3n4/9/9/9/9/9/9/3K5 b - - 0 1"
    mc = cls(fen, "c9c7")
    assert (mc.cls, mc.article) == (IDLE, "第24.6条, 拦")
    # The cannon one step off the line blocks nothing; the horse running away is no block either.
    assert cls(fen, "c9c8").article == "第24.8条"
    assert cls(fen, "e7g8").article == "第24.8条"


def test_24_6_block_of_a_mate_threat():
    # 24.6 拦 against 24.2 杀: Red threatens 车一进九 mate (the horse on g7 covers e8 and f9, the
    # advisor on d9 stops the king). 炮8平1 (b5i5) puts the cannon on the rook's file: 拦.
    fen = "3ak4/9/6N2/9/1c7/9/9/9/9/5K2R b - - 0 1"
    before = Board(fen)
    before.turn = not before.turn
    assert classify.mates_by_checks(before, 1)
    mc = cls(fen, "b5i5")
    assert (mc.cls, mc.article) == (IDLE, "第24.6条, 拦")
    assert cls(fen, "b5b4").article == "第24.8条"


def test_29_4_a_capture_with_check_answered_by_a_discovered_mate_wins_nothing():
    # 29.4 (the winner must not be mated on the immediate reply), in a capture that checks: 车9平8
    # attacks the red cannon on h0, and 车8进8 would take it with check along rank 0. But Red
    # answers 车四退八: the rook blocks on f0 and uncovers the horse on g8 (its leg f8 is free),
    # mate. The capture wins nothing: 闲.
    fen = "3ak4/4aRN1r/9/9/9/9/9/9/9/4K2C1 b - - 0 1"
    assert cls(fen, "i8h8").cls == IDLE
    after = Board(fen)
    after.push(Move.from_iccs("i8h8"))
    after.turn = not after.turn
    assert classify._win_by_checks(after, classify.CHECK_WIN_DEPTH, classify._Budget(600))[0] == 0
    # Without the red horse the block uncovers nothing: the cannon is won (捉).
    mc = cls("3ak4/4aR2r/9/9/9/9/9/9/9/4K2C1 b - - 0 1", "i8h8")
    assert mc.cls == CHASE and mc.chases[0].target_type == CANNON


def test_29_2_a_chaser_that_moves_on_still_attacking_its_target_is_idle():
    # 29.2 从没捉到捉 / RULES.md §5.2.8 "a piece that was already chasing, moving again without
    # creating a new chase, is 闲": the rook on e3 attacks the lone elephant on e7, but taking it
    # would let the black rook take the cannon on i2. 车五退一 (e3e2) guards the cannon and still
    # attacks the elephant: the same chase by the same piece, 闲 (从捉到捉).
    mc = cls("5k2r/9/4b4/9/9/9/4R4/8C/9/3K5 w - - 0 1", "e3e2")
    assert (mc.cls, mc.article) == (IDLE, "第29.2条, 从捉到捉")
    # The rook coming to e2 from d2 did not attack the elephant before: a new chase, 捉.
    mc = cls("5k2r/9/4b4/9/9/9/9/3R4C/9/3K5 w - - 0 1", "d2e2")
    assert mc.cls == CHASE and mc.chases[0].target_type == ELEPHANT


def _play(fen: str, moves: str) -> Board:
    b = Board(fen)
    for m in moves.split():
        b.push(Move.from_iccs(m))
    return b


def test_general_3_a_pawn_chasing_by_itself_is_idle():
    # 通则 3 "兵（卒）本身允许长捉": the crossed pawn steps e6/d6, attacking the lone horse on e7 and
    # the lone cannon on d7 in turn, while the black king shuffles. The pawn's chases are 闲: both
    # sides play allowed moves, a draw (under AXF too: pawn chases are allowed).
    b = _play("5k3/9/3cn4/3P5/9/9/9/9/9/4K4 w - - 0 1", "d6e6 f9f8 e6d6 f8f9 " * 2)
    assert b.outcome(CXA).winner is None and b.outcome("axf").winner is None
    lines = explain_cycle(b, CXA)
    assert lines[0] == "红 兵六平五: 闲 (通则3, 兵卒本身捉子为闲)"
    assert lines[-3] == "红方: 闲 — 允许着法 (第24.13/24.14条)"


def _mc(side: bool, cls_: str, ply: int, chases=(), pawn=()) -> MoveClass:
    return MoveClass(Move(0, 1), side, cls_, ply=ply, chases=tuple(chases), pawn_chases=tuple(pawn))


def _chase(target_type: int, kind: str = UNROOTED, joint: bool = False) -> Chase:
    return Chase(40, target_type, 49, ROOK, kind, 2, joint)


def test_general_3_mutual_perpetual_attack_counts_the_pawns_chase():
    # 通则 3's exception "形成相互长打时，兵卒的捉按捉处理": Red checks, then its pawn chases by itself;
    # Black chases on every move. Both sides attack on every move (相互长打): the pawn's chase is 捉,
    # Red is 一将一捉 (forbidden) as Black is 长捉: both forbidden, a draw.
    pawn = (_chase(HORSE),)
    red_mixed = [_mc(RED, CHECK, 0), _mc(RED, IDLE, 2, pawn=pawn)]
    black_chases = [_mc(BLACK, CHASE, 1, (_chase(CANNON),)), _mc(BLACK, CHASE, 3, (_chase(CANNON),))]
    cycle = [red_mixed[0], black_chases[0], red_mixed[1], black_chases[1]]
    assert rule_cycle(cycle, CXA).winner is None
    # A pawn chasing by itself on every move stays 闲 against the same 长捉: Black loses.
    red_pawn = [_mc(RED, IDLE, 0, pawn=pawn), _mc(RED, IDLE, 2, pawn=pawn)]
    cycle = [red_pawn[0], black_chases[0], red_pawn[1], black_chases[1]]
    assert rule_cycle(cycle, CXA).winner == RED
    # Against idle moves there is no 相互长打: Red's 一将一闲 is allowed, a draw.
    black_idle = [_mc(BLACK, IDLE, 1), _mc(BLACK, IDLE, 3)]
    cycle = [red_mixed[0], black_idle[0], red_mixed[1], black_idle[1]]
    assert rule_cycle(cycle, CXA).winner is None


def test_24_3_joint_capture_by_checks():
    # 24.3 "使另一子可以与之联合吃子" in a win by checks: 车一平五 puts the rook behind the horse on
    # e4; the horse's discovered checks then win the rook on b5. The checking move is the horse's,
    # and without the rook on e1 no check wins anything: the two pieces win it together (joint).
    mc = cls("4kab2/9/9/9/1rp6/4N4/9/9/8R/5K3 w - - 0 1", "i1e1")
    assert mc.cls == CHASE and mc.chases[0].kind == CHECK_WIN and mc.chases[0].joint
    # A win by checks given by the moved piece itself is its own chase, not a joint one: the rook on
    # a4 checks twice and takes the horse on g8 (the horse on d1 takes no part).
    b = Board("4k4/6n2/9/9/1n7/R8/1c7/9/3N5/5K3 w - - 0 1")
    [(_sq, won)] = classify._check_wins(b).items()
    assert not classify._joint_check_win(b, won, 36)  # the rook, the checking piece
    assert not classify._joint_check_win(b, won, 12)  # the horse on d1: not needed


def test_2020_responsibility_a_rook_chase_is_zhuo_che_however_it_is_made():
    # RULES_CXA §4.4 (26.9.x "按长杀、长捉车、长捉无根子及联合捉责任比较"): a plain 长捉 against a
    # cycle with a joint chase (联合捉) of a horse must change. A joint chase of a rook is 长捉车: no heavier
    # responsibility than the other side's plain 长捉, a draw.
    red = [_mc(RED, CHASE, 0, (_chase(CANNON),)), _mc(RED, CHASE, 2, (_chase(CANNON),))]
    for target, winner in ((HORSE, BLACK), (ROOK, None)):
        black = [_mc(BLACK, CHASE, 1, (_chase(target, CHECK_WIN, joint=True),)),
                 _mc(BLACK, CHASE, 3, (_chase(target, JOINT),))]
        assert rule_cycle([red[0], black[0], red[1], black[1]], CXA).winner == winner, target


def test_24_4_an_uncovered_exchange_offer_and_an_offer_that_also_chases():
    # 24.4 兑 "if the opponent captures, the mover is not mated and does not lose material": 马六退八
    # (d5b4) uncovers the rook on d2, protected by the advisor, against the lone black rook on d9.
    # Black takes first and the advisor takes back: an even trade offered, 闲 (兑).
    mc = cls("3r1k3/9/9/9/3N5/9/9/3R5/4A4/4K4 w - - 0 1", "d5b4")
    assert (mc.cls, mc.article) == (IDLE, "第24.4条, 兑")
    # 通则 5 从重 (兑兼捉): with a cannon behind the rook, the cannon wins the black rook by itself
    # (over the rook as its screen): 捉.
    mc = cls("3r1k3/9/9/9/3N5/9/9/3R5/4A4/3CK4 w - - 0 1", "d5b4")
    assert mc.cls == CHASE and [(c.target_type, c.chaser_type) for c in mc.chases] == [(ROOK, CANNON)]
    # A win that needs the exchanging piece is the exchange itself: 炮九平六 offers the cannons (the
    # black one protected by the horse, the red one by the horse on e1); the rook on a7 wins the
    # cannon only together with the red cannon (炮吃炮, 马吃炮, 车吃马): still 兑.
    mc = cls("5k3/5n3/R2c5/9/3P5/9/C8/9/4N4/4K4 w - - 0 1", "a3d3")
    assert (mc.cls, mc.article) == (IDLE, "第24.4条, 兑")


def test_24_4_no_win_by_checks_that_starts_by_taking_an_offered_piece():
    # 24.4 兑 with 24.3 抽将: 车六平五 (d6e6) puts the rook between the cannons on e5 and e7, which now
    # attack each other over it: an offer to exchange (the black cannon is protected by the elephant
    # on g9, the red one by the rook). Were Red to move again, 炮五进二 would take the cannon with
    # check (over the advisor) and the rook would then take the rook on e4; but Black, to move,
    # exchanges the cannons first: no chase, 闲 (兑).
    mc = cls("4k1b2/4a4/4c4/3R5/4C4/4r4/9/9/9/5K3 w - - 0 1", "d6e6")
    assert (mc.cls, mc.article) == (IDLE, "第24.4条, 兑")
    # A horse on e7 cannot take the cannon back: no offer, and the check wins the rook: 捉 (抽将).
    mc = cls("4k1b2/4a4/4n4/3R5/4C4/4r4/9/9/9/5K3 w - - 0 1", "d6e6")
    assert mc.cls == CHASE and (mc.chases[0].kind, mc.chases[0].target_type) == (CHECK_WIN, ROOK)
