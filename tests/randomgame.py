"""Random legal games for tests: seeded, so a test replays the same game every run."""

from __future__ import annotations

import random

from xiangqi.core.board import Board


def random_game(plies: int, seed: int) -> list[str]:
    """ICCS moves of a random legal game of exactly ``plies`` plies that has not ended before its last
    one (no mate, stalemate or referee's result on the way), from the standard start; the first of up to
    200 tries of ``random.Random(seed)``. Raises AssertionError when none is that long."""
    rng = random.Random(seed)
    for _ in range(200):
        b, out = Board(), []
        while len(out) < plies and b.outcome() is None:
            moves = list(b.legal_moves)
            if not moves:
                break
            m = rng.choice(moves)
            b.push(m)
            out.append(m.iccs())
        if len(out) == plies:
            return out
    raise AssertionError("no random game that long")
