"""The opponents' styles: what a move does (features) and how each style chooses among near-equal lines."""

from __future__ import annotations

import dataclasses
import random

from xiangqi.app.opponents.persona_style import STYLES, aimed_at_palace, features, mobility
from xiangqi.core.board import RED, Board, Move
from xiangqi.engine.levels import LEVELS


def mv(text):
    return Move.from_iccs(text)


def test_features_of_opening_moves():
    b = Board()
    cannon = features(b, mv("h2e2"))  # 炮二平五: one more piece on the black king's file
    assert cannon.aim == 1 and not cannon.defender and not cannon.check
    assert features(b, mv("g0e2")).defender  # 相三进五
    assert features(b, mv("i0i1")).mobility == 8  # 车九进一 frees the rook: eight more moves
    assert aimed_at_palace(b, RED) == 0 and mobility(b, RED) == 4 + 4  # two rooks' 2 + two horses' 2 each


def test_trade_and_sacrifice_from_the_line():
    b = Board("4k4/9/9/9/1n7/9/r8/9/9/R3K4 w - - 0 1")  # a rook for a rook: the horse takes back
    rook_for_rook = features(b, mv("a0a3"), [mv("a0a3"), mv("b5a3")])
    assert rook_for_rook.trade and not rook_for_rook.sacrifice
    assert not features(b, mv("a0a3"), [mv("a0a3")]).trade  # nothing takes back: a rook won, no trade
    b = Board("3ak4/9/9/9/9/4p4/3p5/9/9/2R1K4 w - - 0 1")
    line = [mv("c0c3"), mv("d3c3")]  # the rook steps where a pawn takes it, nothing takes back
    assert features(b, line[0], line).sacrifice


def test_each_style_picks_its_own_move_within_the_margin():
    b = Board()
    lines = [(10, None, [mv("h2e2")]), (5, None, [mv("g0e2")]), (0, None, [mv("i0i1")])]
    level = dataclasses.replace(LEVELS["intermediate"], margin_cp=30, temperature_cp=0.0)
    rng = random.Random(1)
    assert STYLES["attacking"].pick(b, lines, level, rng) == 0  # the central cannon
    assert STYLES["solid"].pick(b, lines, level, rng) == 1  # the elephant
    assert STYLES["positional"].pick(b, lines, level, rng) == 2  # the rook out
    narrow = dataclasses.replace(level, margin_cp=4)  # only the best line is inside the margin
    assert {s.pick(b, lines, narrow, rng) for s in STYLES.values()} == {0}
    mate = [(None, 3, [mv("h2e2")]), (900, None, [mv("i0i1")])]
    assert STYLES["positional"].pick(b, mate, level, rng) == 0  # a mate is always played
    wide_master = dataclasses.replace(STYLES["solid"], min_margin_cp=15)
    master = LEVELS["master"]  # margin 0: the style's own least margin gives it the choice
    assert master.margin_cp == 0 and wide_master.pick(b, lines, master, rng) == 1


def test_the_book_reweighted_by_style():
    class BM:
        def __init__(self, iccs):
            self.move = mv(iccs)

    choices = [(BM("h2e2"), 0.4), (BM("g0e2"), 0.3), (BM("b0c2"), 0.3)]
    attack = dict((m.move.iccs(), p) for m, p in STYLES["attacking"].book(Board(), choices))
    solid = dict((m.move.iccs(), p) for m, p in STYLES["solid"].book(Board(), choices))
    assert abs(sum(attack.values()) - 1) < 1e-9 and abs(sum(solid.values()) - 1) < 1e-9
    assert attack["h2e2"] > 0.6 > 0.4  # e^(20/10) more often than its share
    assert solid["h2e2"] < 0.2 and solid["g0e2"] > 0.3
