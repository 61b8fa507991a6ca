"""The computer's resignations and draw offers at both ends of the tendency setting."""

import pytest

from xiangqi.app.play.conduct import MIN_PLY_TO_RESIGN, OFFER_DRAW, OFFER_GAP, RESIGN, Conduct


def feed(c: Conduct, scores, wdl=None, start=0):
    """Observations at plies start, start+2, ... (the computer's moves); a verdict on the last one."""
    for i, s in enumerate(scores):
        cp, mate = s if isinstance(s, tuple) else (s, None)
        c.observe(start + 2 * i, cp, mate, wdl if i == len(scores) - 1 else None)


def test_stubborn_plays_every_game_out():
    c = Conduct("stubborn")
    feed(c, [-3000] * 10 + [(None, -1)])
    assert c.decide(ply=150, material_cp=-1800) is None
    c = Conduct("stubborn")
    feed(c, [0] * 40, wdl="draw")
    assert c.decide(ply=300, material_cp=0) is None


def test_normal_resigns_a_lost_game_only_with_the_material_to_match():
    c = Conduct("normal")
    feed(c, [-200, -850, -900, -1000])
    assert c.decide(ply=60, material_cp=-900) == RESIGN
    assert c.decide(ply=60, material_cp=-100) is None  # evaluation alone (an attack) is not enough
    c = Conduct("normal")
    feed(c, [-850, -300, -900])  # not three in a row
    assert c.decide(ply=60, material_cp=-900) is None


def test_mate_against_it_and_lost_tablebase_endings():
    c = Conduct("normal")
    feed(c, [(None, -3)])
    assert c.decide(ply=40, material_cp=0) == RESIGN
    c = Conduct("normal")
    feed(c, [(None, -9)])  # a long mate: normal plays on, compliant gives up
    assert c.decide(ply=40, material_cp=0) is None
    c = Conduct("compliant")
    feed(c, [(None, -9)])
    assert c.decide(ply=40, material_cp=0) == RESIGN
    c = Conduct("normal")
    feed(c, [100], wdl="loss", start=88)
    assert c.decide(ply=90, material_cp=-400) == RESIGN


def test_never_resigns_in_the_opening():
    c = Conduct("compliant")
    feed(c, [(None, -1)] * 3)
    assert c.decide(ply=MIN_PLY_TO_RESIGN - 1, material_cp=-2000) is None
    assert c.decide(ply=MIN_PLY_TO_RESIGN, material_cp=-2000) == RESIGN


def test_compliant_resigns_earlier_than_normal():
    scores = [-500, -500]
    normal, compliant = Conduct("normal"), Conduct("compliant")
    feed(normal, scores)
    feed(compliant, scores)
    assert normal.decide(ply=50, material_cp=-400) is None
    assert compliant.decide(ply=50, material_cp=-400) == RESIGN


def test_draw_offers_in_a_long_level_game_and_waits_after_a_decline():
    normal, compliant = Conduct("normal"), Conduct("compliant")
    feed(normal, [10, -5, 0, 15, -20, 5, 0, 10])
    feed(compliant, [40, -30, 45, 0, 10])
    assert normal.decide(ply=99, material_cp=0) is None  # too early for normal
    assert normal.decide(ply=100, material_cp=0) == OFFER_DRAW
    assert compliant.decide(ply=50, material_cp=0) == OFFER_DRAW
    normal.declined(101)
    for ply in range(102, 100 + 2 * OFFER_GAP, 2):
        normal.observe(ply, 0, None)
        assert normal.decide(ply=ply + 1, material_cp=0) is None
    normal.observe(121, 0, None)
    assert normal.decide(ply=122, material_cp=0) == OFFER_DRAW
    c = Conduct("normal")
    feed(c, [10, -5, 0, 15, -60, 5, 0, 10])  # one move out of the band
    assert c.decide(ply=120, material_cp=0) is None
    c = Conduct("normal")
    feed(c, [300], wdl="draw", start=48)
    assert c.decide(ply=50, material_cp=300) == OFFER_DRAW


def test_unknown_tendency():
    with pytest.raises(ValueError, match="stubborn, normal, compliant"):
        Conduct("grumpy")


def test_a_move_taken_back_replaces_its_evaluation():
    c = Conduct("normal")
    feed(c, [-900, -900, -900], start=30)  # plies 30, 32, 34
    assert c.decide(ply=35, material_cp=-900) == RESIGN
    c.observe(34, 0, None)  # the player took back; the computer's new move at ply 34 is fine
    assert c.decide(ply=35, material_cp=-900) is None
    assert c.decide(ply=33, material_cp=-900) is None  # only plies before 33 count: two of three
