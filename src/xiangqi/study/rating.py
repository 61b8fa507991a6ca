"""Glicko-2 ratings of a player: a small implementation of Glickman's system.

Source: Mark E. Glickman, "Example of the Glicko-2 system" (Boston University, 2013 revision,
http://www.glicko.net/glicko/glicko2.pdf). The steps below are numbered as in that paper:

1. A new player starts at rating 1500, RD 350, volatility 0.06 (:data:`DEFAULT_RATING`, …);
   the system constant ``tau`` (:data:`TAU`) limits how fast the volatility changes (the paper
   suggests 0.3 to 1.2; we use its example's 0.5).
2. Ratings go to the Glicko-2 scale: ``mu = (r - 1500) / 173.7178``, ``phi = RD / 173.7178``
   (:data:`SCALE`; 173.7178 = 400 / ln 10).
3. ``v``, the estimated variance of the rating from the game outcomes alone.
4. ``delta``, the estimated improvement: ``v · Σ g(phi_j) (s_j - E(mu, mu_j, phi_j))``.
5. The new volatility ``sigma'`` solves ``f(x) = 0`` for ``x = ln(sigma'^2)``, found by the
   Illinois variant of regula falsi (the paper's "Illinois algorithm", tolerance
   :data:`EPSILON` = 0.000001).
6. ``phi* = sqrt(phi^2 + sigma'^2)``, the pre-period RD.
7. ``phi' = 1 / sqrt(1 / phi*^2 + 1 / v)``, ``mu' = mu + phi'^2 · Σ g(phi_j)(s_j - E_j)``.
8. Back to the Glicko scale: ``r' = 173.7178 mu' + 1500``, ``RD' = 173.7178 phi'``.

A rating period without games only widens the RD (step 6 with the old volatility):
:func:`update` with no results.

How the app uses it (:mod:`xiangqi.app.play.ratings`): every rated game against the computer is one
rating period with one result, the opponent being the level's measured Elo (``level_elo.json``)
with an RD of its 95 % error bar divided by 1.96 (the bar's half-width is 1.96 standard
deviations). The Elo of the levels is on Fairy-Stockfish's ``UCI_Elo`` scale (DESIGN.md, "Level
ratings"), so the player's rating is on that scale too; Glicko's 1500 and the Elo scale share the
logistic curve with 400 points per factor of ten in odds, so no conversion is made.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

__all__ = ["SCALE", "TAU", "EPSILON", "DEFAULT_RATING", "DEFAULT_RD", "DEFAULT_VOLATILITY", "MAX_RD",
           "Rating", "Result", "update", "expected_score", "rd_from_error"]

#: Glicko-2 scale factor (step 2): 400 / ln(10).
SCALE = 173.7178
#: System constant: how much the volatility may change in a period (the paper's example: 0.5).
TAU = 0.5
#: Convergence tolerance of the volatility iteration (step 5).
EPSILON = 0.000001
#: A new player's rating, rating deviation and volatility (step 1).
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
#: The RD never grows past a new player's (an unknown player is no less known than a new one).
MAX_RD = 350.0


@dataclasses.dataclass(frozen=True)
class Rating:
    """A Glicko-2 rating on the Glicko scale: ``rating`` (e.g. 1500), ``rd`` (rating deviation,
    Elo points; about 68 % of the true strengths lie within one RD), ``volatility`` (sigma, on the
    Glicko-2 scale, e.g. 0.06)."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    @property
    def mu(self) -> float:
        """The rating on the Glicko-2 scale (step 2)."""
        return (self.rating - DEFAULT_RATING) / SCALE

    @property
    def phi(self) -> float:
        """The RD on the Glicko-2 scale (step 2)."""
        return self.rd / SCALE


@dataclasses.dataclass(frozen=True)
class Result:
    """One game of a rating period: the opponent's ``rating`` and ``rd`` (Glicko scale) and the
    player's ``score`` (1 win, 0.5 draw, 0 loss). Raises :class:`ValueError` for another score or
    a non-positive RD."""

    rating: float
    rd: float
    score: float

    def __post_init__(self) -> None:
        if self.score not in (0, 0.5, 1):
            raise ValueError(f"a game's score is 0, 0.5 or 1, got {self.score!r}")
        if not (self.rd > 0 and math.isfinite(self.rd)):
            raise ValueError(f"the opponent's RD must be a positive number, got {self.rd!r}")


def _g(phi: float) -> float:
    """Step 3's ``g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2)``: how much an uncertain opponent counts."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    """Step 3's expected score ``E(mu, mu_j, phi_j)`` against opponent ``j``."""
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(player: Rating, opponent_rating: float, opponent_rd: float) -> float:
    """The player's expected score (0..1) against an opponent of ``opponent_rating`` ± ``opponent_rd``
    (Glicko scale), as Glicko-2 counts it (step 3's ``E``)."""
    return _e(player.mu, (opponent_rating - DEFAULT_RATING) / SCALE, opponent_rd / SCALE)


def _volatility(phi: float, sigma: float, delta: float, v: float, tau: float) -> float:
    """Step 5: the new volatility by the Illinois algorithm on ``f(x)``, ``x = ln(sigma'^2)``."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    for _ in range(200):  # converges in a handful of steps; the bound only guards against a bad input
        if abs(big_b - big_a) <= EPSILON:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: Iterable[Result], tau: float = TAU) -> Rating:
    """The player's rating after one rating period with ``results`` (steps 3-8 of the paper).

    With no results only the RD grows (step 6 with the old volatility), capped at :data:`MAX_RD`.
    Raises :class:`ValueError` for ``tau`` not positive.
    """
    if not tau > 0:
        raise ValueError(f"tau must be positive, got {tau!r}")
    games = list(results)
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not games:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return Rating(player.rating, min(MAX_RD, phi_star * SCALE), sigma)
    inv_v = 0.0
    total = 0.0
    for r in games:
        mu_j, phi_j = (r.rating - DEFAULT_RATING) / SCALE, r.rd / SCALE
        g, e = _g(phi_j), _e(mu, mu_j, phi_j)
        inv_v += g * g * e * (1.0 - e)
        total += g * (r.score - e)
    v = 1.0 / inv_v
    delta = v * total
    sigma2 = _volatility(phi, sigma, delta, v, tau)
    phi_star = math.sqrt(phi * phi + sigma2 * sigma2)
    phi2 = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu2 = mu + phi2 * phi2 * total
    return Rating(SCALE * mu2 + DEFAULT_RATING, min(MAX_RD, SCALE * phi2), sigma2)


def rd_from_error(error95: float | None, fallback: float = 100.0) -> float:
    """An opponent's RD from the half-width of its 95 % interval (``error95 / 1.96``); ``fallback``
    (Elo points) when the error bar is unknown or not positive."""
    if error95 is None or not error95 > 0:
        return fallback
    return float(error95) / 1.96
