"""Glicko-2 (xiangqi.study.rating) against the worked example of Glickman's "Example of the
Glicko-2 system": a 1500/200/0.06 player beats a 1400/30 player, loses to 1550/100 and 1700/300,
tau 0.5 → r' = 1464.06, RD' = 151.52, sigma' = 0.05999 (the paper rounds its intermediate values,
hence the tolerances of a few hundredths)."""

from __future__ import annotations

import math

import pytest

from xiangqi.study import rating as g

EXAMPLE = [g.Result(1400, 30, 1), g.Result(1550, 100, 0), g.Result(1700, 300, 0)]


def test_glickmans_worked_example() -> None:
    r = g.update(g.Rating(1500, 200, 0.06), EXAMPLE, tau=0.5)
    assert r.rating == pytest.approx(1464.06, abs=0.02)
    assert r.rd == pytest.approx(151.52, abs=0.01)
    assert r.volatility == pytest.approx(0.05999, abs=0.00001)  # 0.0599960 exactly
    # the paper's Glicko-2-scale values: mu' = -0.2069, phi' = 0.8722
    assert r.mu == pytest.approx(-0.2069, abs=0.0001)
    assert r.phi == pytest.approx(0.8722, abs=0.0001)


def test_paper_intermediate_quantities() -> None:
    # step 3: v = 1.7785; step 4: delta = -0.4834 (g and E of the paper's table)
    p = g.Rating(1500, 200, 0.06)
    gs = [g._g(x.rd / g.SCALE) for x in EXAMPLE]
    assert [round(x, 4) for x in gs] == [0.9955, 0.9531, 0.7242]
    es = [g._e(p.mu, (x.rating - 1500) / g.SCALE, x.rd / g.SCALE) for x in EXAMPLE]
    assert [round(x, 3) for x in es] == [0.639, 0.432, 0.303]
    v = 1 / sum(gg * gg * e * (1 - e) for gg, e in zip(gs, es, strict=True))
    assert v == pytest.approx(1.7785, abs=0.001)  # 1.77898 unrounded
    delta = v * sum(gg * (x.score - e) for gg, e, x in zip(gs, es, EXAMPLE, strict=True))
    assert delta == pytest.approx(-0.4834, abs=0.001)


def test_no_games_widens_the_rd_only() -> None:
    r = g.update(g.Rating(1500, 200, 0.06), [])
    assert r.rating == 1500 and r.volatility == 0.06
    assert r.rd == pytest.approx(math.hypot(200 / g.SCALE, 0.06) * g.SCALE)
    assert g.update(g.Rating(1500, 349.9, 0.06), []).rd == g.MAX_RD


def test_win_raises_loss_lowers_draw_between() -> None:
    p = g.Rating()
    win = g.update(p, [g.Result(1500, 60, 1)]).rating
    draw = g.update(p, [g.Result(1500, 60, 0.5)]).rating
    loss = g.update(p, [g.Result(1500, 60, 0)]).rating
    assert loss < draw < win
    assert draw == pytest.approx(1500, abs=1e-6)
    assert win - 1500 == pytest.approx(1500 - loss)


def test_expected_score_and_error_bar() -> None:
    assert g.expected_score(g.Rating(1500, 50), 1500, 50) == pytest.approx(0.5)
    assert g.expected_score(g.Rating(1700, 50), 1500, 50) > 0.7
    assert g.rd_from_error(196) == pytest.approx(100)
    assert g.rd_from_error(None) == 100.0


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="score"):
        g.Result(1500, 100, 2)
    with pytest.raises(ValueError, match="RD"):
        g.Result(1500, 0, 1)
    with pytest.raises(ValueError, match="tau"):
        g.update(g.Rating(), EXAMPLE, tau=0)
