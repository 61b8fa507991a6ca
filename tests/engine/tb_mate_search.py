"""An exhaustive mate search, independent of the tablebase generator (tests only).

It walks the real game tree with the engine's legal move generator (captures
included, no tables; it uses :mod:`xiangqi.engine.movegen` only, which perft checks
against the core, and no code of :mod:`xiangqi.engine.tbgen`, whose tables it verifies)
and returns the value code of :mod:`xiangqi.engine.tbgen` when the mate is within
``depth`` plies, else 0.
"""

from __future__ import annotations

import numba
import numpy as np

from xiangqi.engine.movegen import board_arrays, gen_legal


@numba.njit(cache=False)
def _solve(bd, ks, side, d, win, buf, ply):
    """win: can ``side`` mate within ``d`` plies?  not win: is ``side`` mated within ``d`` plies?"""
    moves = buf[ply]
    n = gen_legal(bd, ks, side, moves)
    if n == 0:
        return not win
    if d <= 0:
        return False
    for i in range(n):
        m = moves[i]
        frm = m >> 7
        to = m & 127
        p = bd[frm]
        cap = bd[to]
        bd[to] = p
        bd[frm] = 0
        if p == 1 or p == -1:
            ks[side] = to
        r = _solve(bd, ks, 1 - side, d - 1, not win, buf, ply + 1)
        if p == 1 or p == -1:
            ks[side] = frm
        bd[frm] = p
        bd[to] = cap
        if win and r:
            return True
        if not win and not r:
            return False
    return not win


def mate_value(board, depth: int) -> int:
    """Value code of ``board`` (core Board) if a mate is within ``depth`` plies, else 0.

    Iterative deepening: the first odd ``d`` the side to move mates within is its
    win's DTM; the first even ``d`` it is mated within is its loss's DTM.
    """
    bd, ks, side = board_arrays(board)
    buf = np.zeros((depth + 2, 256), np.int64)
    for d in range(1, depth + 1, 2):
        if _solve(bd, ks, side, d, True, buf, 0):
            return d
    for d in range(0, depth + 1, 2):
        if _solve(bd, ks, side, d, False, buf, 0):
            return -(d + 1)
    return 0
