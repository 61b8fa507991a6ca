"""SPRT of matches (issue 16): bounds, the generalized-SPRT LLR, the Elo interval, and the CLI stop."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from xiangqi.match.runner import PlayerSpec, TimeControl, elo_difference, run_match
from xiangqi.match.sprt import (
    PENTANOMIAL_SCORES,
    TRINOMIAL_SCORES,
    Sprt,
    bounds,
    elo_interval,
    expected_score,
    llr,
    llr_approx,
    mle_pdf,
)

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")


def test_wald_bounds():
    # log(0.05 / 0.95) = -log(19) = -2.944439; log(0.95 / 0.05) = +2.944439
    lo, hi = bounds(0.05, 0.05)
    assert lo == pytest.approx(-2.944439, abs=1e-6) and hi == pytest.approx(2.944439, abs=1e-6)
    # alpha 0.05, beta 0.1: log(0.1 / 0.95) = -2.251292, log(0.9 / 0.05) = 2.890372
    assert bounds(0.05, 0.1) == (pytest.approx(-2.251292, abs=1e-6), pytest.approx(2.890372, abs=1e-6))
    with pytest.raises(ValueError):
        bounds(0.6, 0.5)


def test_expected_score():
    assert expected_score(0) == 0.5
    # 400 log10(3) = 190.849 Elo is a 3:1 score
    assert expected_score(400 * math.log10(3)) == pytest.approx(0.75)


def test_llr_of_wins_and_losses_only_is_the_binomial_ratio():
    # two outcomes (scores 0 and 1): the distribution with mean s is (1 - s, s) itself, so
    # LLR = W log(s1/s0) + L log((1-s1)/(1-s0)); W = 30, L = 10, s0 = 0.5, s1 = 0.75:
    # 30 log 1.5 + 10 log 0.5 = 12.163953 - 6.931472 = 5.232481
    elo1 = 400 * math.log10(3)
    assert llr([10, 30], (0.0, 1.0), 0.0, elo1) == pytest.approx(5.232481, abs=1e-5)


def test_trinomial_llr_against_a_brute_force_maximum_likelihood():
    counts = np.array([20, 20, 60])  # L, D, W
    elo0, elo1 = 0.0, 400 * math.log10(3)  # s0 = 0.5, s1 = 0.75

    def best_loglik(s):
        # distributions (pL, pD, pW) with pD/2 + pW = s: one free parameter pD, searched on a grid
        pd = np.linspace(1e-9, 1, 2_000_001)
        pw = s - pd / 2
        pl = 1 - pw - pd
        ok = (pw > 0) & (pl > 0)
        ll = counts[0] * np.log(pl[ok]) + counts[1] * np.log(pd[ok]) + counts[2] * np.log(pw[ok])
        return ll.max()

    expected = best_loglik(0.75) - best_loglik(0.5)
    assert llr(counts, TRINOMIAL_SCORES, elo0, elo1) == pytest.approx(expected, abs=1e-4)
    # the quadratic approximation: mu = 0.7, var = 0.6*0.09 + 0.2*0.04 + 0.2*0.49 = 0.16,
    # 100 * 0.25 * (1.4 - 1.25) / (2 * 0.16) = 11.71875 (the exact LLR is 9.62: far apart for a
    # 190 Elo gap); for a small gap near the expected score 0.5 they agree: W300 D400 L300,
    # elo 0 against 5: s1 - s0 = 0.0071951, mu = 0.5, var = 0.15, LLR = -1000 * 0.0071951^2 / 0.3
    assert llr_approx(counts, TRINOMIAL_SCORES, elo0, elo1) == pytest.approx(11.71875)
    assert expected == pytest.approx(9.6194, abs=1e-3)
    d = expected_score(5.0) - 0.5
    assert d == pytest.approx(0.0071951, abs=1e-7)
    assert llr([300, 400, 300], TRINOMIAL_SCORES, 0, 5) == pytest.approx(-1000 * d * d / 0.3, rel=1e-3)


def test_pentanomial_mle_is_feasible_and_a_maximum():
    counts = np.array([3, 10, 40, 25, 7], float)
    pdf = list(zip(PENTANOMIAL_SCORES, counts / counts.sum(), strict=True))
    a = np.array(PENTANOMIAL_SCORES)
    q = np.array(mle_pdf(pdf, 0.55))
    assert q.sum() == pytest.approx(1.0) and (q * a).sum() == pytest.approx(0.55)
    ll = (counts * np.log(q)).sum()
    # every feasible direction (sum 0, mean change 0) lowers the likelihood
    rng = np.random.default_rng(1)
    basis = np.linalg.svd(np.vstack([np.ones(5), a]))[2][2:]
    for _ in range(200):
        d = rng.normal(size=3) @ basis
        d *= 1e-3 / np.abs(d).max()
        assert (counts * np.log(q + d)).sum() < ll


def test_elo_interval_matches_the_match_tools_formula():
    # W60 D20 L20: mu 0.7, var 0.16: the same interval as elo_difference (cutechess's formula)
    elo, lo, hi = elo_interval([20, 20, 60], TRINOMIAL_SCORES)
    e2, err = elo_difference(60, 20, 20)
    assert elo == pytest.approx(e2) and (hi - lo) / 2 == pytest.approx(err)
    assert elo == pytest.approx(147.19, abs=0.01)


def test_sprt_pairs_games_and_stops_at_the_first_crossing():
    s = Sprt(0.0, 100.0)
    for g in (1.0, 0.5, 0.0, 0.0, 1.0):
        s.add(g)
    assert s.wdl == [2, 1, 2] and s.pairs == [1, 0, 0, 1, 0]  # 1.5, 0 and an open pair
    s = Sprt(0.0, 100.0)
    history = []
    while s.status() == "continue":
        s.add(1.0)
        s.add(0.5)  # every pair 1.5 points of 2
        history.append(s.llr())
    assert s.status() == "H1" and history[-1] >= s.upper > history[-2]
    t = Sprt(0.0, 100.0, model="trinomial")
    while t.status() == "continue":
        t.add(0.0)
    assert t.status() == "H0" and t.llr() <= t.lower
    assert "H0 accepted" in t.summary() and "LLR" in t.summary() and "-2.944, 2.944" in t.summary()
    with pytest.raises(ValueError):
        Sprt(5.0, 0.0)


def test_run_match_stops_when_a_bound_is_crossed():
    # 'first' against 'nobestmove': every game is a forfeit win for A, so H1 is accepted early
    a = PlayerSpec("A", [sys.executable, FAKE, "first"], "uci")
    b = PlayerSpec("B", [sys.executable, FAKE, "nobestmove"], "uci")
    s = Sprt(0.0, 200.0)

    def until(res):
        s.add(res.games[-1].score_for("A"))
        return s.status() != "continue" and len(res.games) % 2 == 0

    res = run_match(a, b, 100, TimeControl(depth=1), until=until)
    assert s.status() == "H1" and len(res.games) < 100 and res.wins == len(res.games)
    assert len(res.games) % 2 == 0


def test_sprt_state_from_a_match_pgn():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    import sprt_pgn

    pgn = "".join(f'[Event "x"]\n[Red "{r}"]\n[Black "{b}"]\n[Result "{res}"]\n\n1. h2e2 *\n\n'
                  for r, b, res in [("A", "B", "1-0"), ("B", "A", "1/2-1/2"), ("A", "B", "0-1"),
                                    ("B", "A", "0-1"), ("A", "C", "1-0")])
    # every game PLAYER played counts (a match file holds one pairing)
    assert sprt_pgn.scores(pgn, "A") == [1.0, 0.5, 0.0, 1.0, 1.0]
    assert sprt_pgn.scores(pgn, "B") == [0.0, 0.5, 1.0, 0.0]
