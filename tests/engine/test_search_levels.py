"""The levels are ordered by strength: short in-process matches (slow; CI runs them)."""

from __future__ import annotations

import dataclasses

import pytest

from xiangqi.core.board import Board
from xiangqi.engine import LEVELS, Engine, Level
from xiangqi.engine.evaluate import VALUE_EG

PLY_CAP = 120


def _material(b: Board) -> int:
    """Red's material minus Black's (endgame values), for adjudicating capped games."""
    return sum(int(VALUE_EG[abs(c)]) * (1 if c > 0 else -1) for c in b.squares if c)


def _game(red: Level, black: Level, opening: list[str], seed: int) -> float:
    """Score of Red (1, 0.5, 0) in one game; capped games are adjudicated by a material lead of a horse."""
    b = Board()
    for m in opening:
        b.push_iccs(m)
    engines = {True: Engine(hash_mb=8), False: Engine(hash_mb=8)}
    levels = {True: red, False: black}
    for ply in range(PLY_CAP):
        out = b.outcome()
        if out is not None:
            return 0.5 if out.winner is None else (1.0 if out.winner else 0.0)
        res = engines[b.turn].play(b, levels[b.turn], seed=seed + ply)
        assert res.move is not None and b.is_legal(res.move)
        b.push(res.move)
    diff = _material(b)
    return 1.0 if diff >= 300 else 0.0 if diff <= -300 else 0.5


@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.parametrize(("strong", "weak"), [("master", "beginner"), ("advanced", "intermediate")])
def test_stronger_level_wins_short_match(strong: str, weak: str) -> None:
    # time caps shortened for CI; the depth limits and randomness of the weak levels are unchanged
    s = dataclasses.replace(LEVELS[strong], time=0.15)
    w = LEVELS[weak]
    score = 0.0
    for i, opening in enumerate((["h2e2", "h9g7"], ["c3c4", "b9c7"])):
        score += _game(s, w, opening, seed=i)
        score += 1.0 - _game(w, s, opening, seed=i)
    assert score >= 3.0, f"{strong} scored only {score}/4 against {weak}"
