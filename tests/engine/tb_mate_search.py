"""An exhaustive mate search, independent of the tablebase generator (tests only).

It walks the real game tree with the engine's legal move generator (captures
included, no tables) and returns the value code of :mod:`xiangqi.engine.tbgen`
when the mate is within ``depth`` plies, else 0.
"""

from __future__ import annotations

import numba
import numpy as np

from xiangqi.engine.movegen import gen_legal


@numba.njit(cache=False)
def _search(bd, ks, side, depth, buf, ply):
    moves = buf[ply]
    n = gen_legal(bd, ks, side, moves)
    if n == 0:
        return -1
    if depth == 0:
        return 0
    best_win = 0
    all_won = True
    longest = 0
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
        v = _search(bd, ks, 1 - side, depth - 1, buf, ply + 1)
        if p == 1 or p == -1:
            ks[side] = frm
        bd[frm] = p
        bd[to] = cap
        if v < 0:
            if best_win == 0 or -v < best_win:
                best_win = -v
        elif v > 0:
            if v > longest:
                longest = v
        else:
            all_won = False
    if best_win:
        return best_win
    if all_won:
        return -(longest + 2)
    return 0


def mate_value(board, depth: int) -> int:
    """Value code of ``board`` (core Board) if a mate is within ``depth`` plies, else 0."""
    bd = np.array(board.squares, dtype=np.int8)
    ks = np.array([board.king(True), board.king(False)], dtype=np.int64)
    buf = np.zeros((depth + 2, 256), np.int64)
    return int(_search(bd, ks, 0 if board.turn else 1, depth, buf, 0))
