"""The computer's resignations and draw offers at both ends of the tendency setting."""

import pytest

from xiangqi.app.conduct import MIN_PLY_TO_RESIGN, OFFER_DRAW, OFFER_GAP, RESIGN, Conduct


def feed(c: Conduct, scores, wdl=None):
    for s in scores:
        c.observe(*s) if isinstance(s, tuple) else c.observe(s, None)
    if wdl:
        c.observe(None, None, wdl)


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
    feed(c, [100], wdl="loss")
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
    normal.declined()
    for _ in range(OFFER_GAP - 1):
        normal.observe(0, None)
        assert normal.decide(ply=120, material_cp=0) is None
    normal.observe(0, None)
    assert normal.decide(ply=120, material_cp=0) == OFFER_DRAW
    c = Conduct("normal")
    feed(c, [10, -5, 0, 15, -60, 5, 0, 10])  # one move out of the band
    assert c.decide(ply=120, material_cp=0) is None
    c = Conduct("normal")
    feed(c, [300], wdl="draw")
    assert c.decide(ply=50, material_cp=300) == OFFER_DRAW


def test_unknown_tendency():
    with pytest.raises(ValueError, match="stubborn, normal, compliant"):
        Conduct("grumpy")
