"""Transposition table (TT) in numpy arrays, and the Zobrist keys it is indexed by.

One entry = two int64 words: the full Zobrist key and a packed data word::

    bits  0-13  best move (from << 7 | to), 0 = none
    bits 14-21  depth (0-255)
    bits 22-23  bound: 1 upper (fail-low), 2 lower (fail-high), 3 exact
    bits 24-39  score + 32768
    bits 40-47  generation (search counter, for replacement)

The size is a power of two of entries (16 bytes each) fitting the Hash setting in MB
(allocated by :class:`xiangqi.engine.Engine`).
"""

from __future__ import annotations

import numpy as np

from xiangqi.engine._numba import njit

BOUND_UPPER = 1
BOUND_LOWER = 2
BOUND_EXACT = 3

_rng = np.random.default_rng(20261129)
#: Zobrist keys, index ``[piece_code + 7, square]``.
ZOB = _rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(15, 90), dtype=np.int64)
ZOB[7, :] = 0  # empty square
#: Key of "Black to move".
ZOB_SIDE = np.int64(_rng.integers(1, np.iinfo(np.int64).max, dtype=np.int64))


@njit
def key_of(bd, side):
    """Zobrist key of a board (``int8[90]``) with ``side`` (0 Red, 1 Black) to move."""
    k = np.int64(0)
    for sq in range(90):
        p = bd[sq]
        if p != 0:
            k ^= ZOB[p + 7, sq]
    if side == 1:
        k ^= ZOB_SIDE
    return k


@njit
def tt_probe(tk, td, key):
    """Packed data word for ``key``, or -1 when the table has no entry for it."""
    idx = key & (tk.shape[0] - 1)
    if tk[idx] == key and td[idx] != 0:
        return td[idx]
    return -1


@njit
def tt_store(tk, td, key, move, depth, bound, score, gen):
    """Store an entry; keeps a deeper entry of the current search and an older best move."""
    idx = key & (tk.shape[0] - 1)
    old = td[idx]
    if tk[idx] == key:
        if move == 0:
            move = old & 0x3FFF
    elif old != 0:
        old_gen = (old >> 40) & 0xFF
        old_depth = (old >> 14) & 0xFF
        if old_gen == gen and old_depth > depth + 3:
            return
    if depth < 0:
        depth = 0
    if depth > 255:
        depth = 255
    tk[idx] = key
    td[idx] = (move & 0x3FFF) | (depth << 14) | (bound << 22) | ((score + 32768) << 24) | ((gen & 0xFF) << 40)


@njit
def tt_move(data):
    """Best move of a packed entry (0 = none)."""
    return data & 0x3FFF


@njit
def tt_depth(data):
    """Depth of a packed entry."""
    return (data >> 14) & 0xFF


@njit
def tt_bound(data):
    """Bound type of a packed entry (BOUND_UPPER / BOUND_LOWER / BOUND_EXACT)."""
    return (data >> 22) & 0x3


@njit
def tt_score(data):
    """Score of a packed entry (mate scores still relative to the stored node)."""
    return ((data >> 24) & 0xFFFF) - 32768
