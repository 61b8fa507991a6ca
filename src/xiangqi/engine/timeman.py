"""Time management: how long to think about one move.

:func:`budget` turns a :class:`~xiangqi.engine.Limit` into two numbers (seconds):
the *optimum* (do not start another iteration after about half of it) and the
*maximum* (the search is stopped there). Rules, in the style of Stockfish's
``timeman``:

* ``time`` (fixed move time): both are that time minus a small overhead.
* game time ``wtime``/``btime`` with increment ``winc``/``binc``: spend
  ``left / movestogo + 0.8 * inc`` (``movestogo`` defaults to 30 moves still to
  play), never more than 40 % of the time left; the maximum is 3× the optimum,
  capped at 60 % of the time left.
* ``byoyomi``: added on top (minus the overhead) since it is given again every move;
  with no main time left the move takes the byo-yomi period.

The overhead (communication, Python) is 30 ms, or less when the time is tiny.
"""

from __future__ import annotations

from typing import Any

MOVE_OVERHEAD = 0.03
DEFAULT_MOVES_TO_GO = 30


def budget(limit: Any, red_to_move: bool) -> tuple[float | None, float | None]:
    """``(optimum, maximum)`` seconds for this move, or ``(None, None)`` when no time limit applies."""
    if limit.infinite:
        return None, None
    if limit.time is not None:
        t = max(0.005, limit.time - min(MOVE_OVERHEAD, limit.time * 0.1))
        return t, t
    left = limit.wtime if red_to_move else limit.btime
    inc = (limit.winc if red_to_move else limit.binc) or 0.0
    byo = limit.byoyomi or 0.0
    if left is None:
        if byo > 0:
            t = max(0.005, byo - min(MOVE_OVERHEAD, byo * 0.1))
            return t, t
        return None, None
    left = max(0.0, left)
    mtg = limit.movestogo if limit.movestogo and limit.movestogo > 0 else DEFAULT_MOVES_TO_GO
    mtg = min(mtg, DEFAULT_MOVES_TO_GO)
    overhead = min(MOVE_OVERHEAD, left * 0.05 + byo * 0.1)
    opt = left / mtg + 0.8 * inc
    opt = min(opt, left * 0.4)
    mx = min(opt * 3.0, left * 0.6)
    if mtg == 1:
        opt = mx = max(0.0, left * 0.9 - overhead)
    if byo > 0:
        opt += byo - overhead
        mx += byo - overhead
    opt = max(0.005, opt - overhead)
    mx = max(opt, mx - overhead)
    return opt, mx
