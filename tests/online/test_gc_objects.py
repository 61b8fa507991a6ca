"""What one game costs the server's garbage collector: a game session (the rules, the clock, the move
list and the state the pages get) of N plies keeps one tracked object a ply (its ``MoveRecord``) and
a few dozen for the game, not three a ply as before (a ``Move`` and an undo record object a ply in the
board; DESIGN.md, "Load on a quiet machine")."""

from __future__ import annotations

import gc

from tests.fresh import run_fresh
from tests.randomgame import random_game

from xiangqi.app.play.session import GameSession


def _session(moves: list[str]) -> GameSession:
    s = GameSession(red="human", black="human")
    for m in moves:
        s.play(m)
    s.state()  # the state the pages get, cached with the session
    return s


def _added(moves: list[str]) -> int:
    gc.collect()
    before = len(gc.get_objects())
    kept = _session(moves)
    gc.collect()
    n = len(gc.get_objects()) - before
    assert len(kept.moves) == len(moves)
    return n


def measure_session() -> dict[str, int]:
    """The tracked objects a new game session keeps and one of 120 plies (run by
    :func:`tests.fresh.run_fresh` in a new interpreter)."""
    moves = random_game(120, seed=3)
    _session(moves)  # imports, memos and the shared Move objects made once
    _added(moves)
    return {"empty": _added([]), "full": _added(moves)}


def test_a_game_session_keeps_one_tracked_object_a_ply() -> None:
    got = run_fresh(__file__, "measure_session")
    empty, full = got["empty"], got["full"]
    # Measured: 29 for a new game, 145 at 120 plies (120 MoveRecords); the old core made 385
    assert empty <= 40
    assert full - empty <= 120 + 10, f"120 plies add {full - empty} tracked objects"
