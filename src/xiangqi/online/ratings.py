"""Ratings of online games: Glicko-2 (:mod:`xiangqi.study.rating`) per time-control category.

- Each rated game is one rating period for each of its two players, with one result against the
  other's rating and RD from before the game (Glickman's paper treats a period's opponents at their
  pre-period ratings; with one game per period both updates use the same pre-game values, so the
  order in which the two players are updated does not matter).
- A rating is *provisional* while its RD is above :data:`PROVISIONAL_RD` (110: lichess marks a rating
  provisional above that deviation; with a new player's RD of 350 that is about the first 10-15 games).
- The rank name is DESIGN.md decision 8 (:func:`xiangqi.engine.levels.rank_name`).
"""

from __future__ import annotations

from typing import Any

from xiangqi.engine.levels import rank_name
from xiangqi.study.rating import Rating, Result, update

__all__ = ["PROVISIONAL_RD", "rate_game", "rating_view"]

#: RD above which a rating is marked provisional (lichess's threshold).
PROVISIONAL_RD = 110.0


def rate_game(red: Rating, black: Rating, red_score: float) -> tuple[Rating, Rating]:
    """Both players' ratings after one game; ``red_score`` 1 (Red won), 0.5 or 0.
    Raises :class:`ValueError` for another score."""
    new_red = update(red, [Result(black.rating, black.rd, red_score)])
    new_black = update(black, [Result(red.rating, red.rd, 1.0 - red_score)])
    return new_red, new_black


def rating_view(category: str, r: Rating, games: int) -> dict[str, Any]:
    """The contract's RatingView: ``{category, rating, rd, provisional, games, rank_zh}`` (whole points)."""
    return {"category": category, "rating": round(r.rating), "rd": round(r.rd),
            "provisional": r.rd > PROVISIONAL_RD, "games": games, "rank_zh": rank_name(r.rating)}
