"""Numba kernels of the endgame tablebase generator (the Python side is :mod:`xiangqi.engine.tablebase`).

Method: iterative *forward probing* (not un-move generation). Pass ``n`` visits
every unresolved position, generates its legal moves with the kernels of
:mod:`xiangqi.engine.movegen` and looks up each child: in the table being built,
or, after a capture, in a sub-ending table generated before. An odd pass finds
the wins in ``n`` plies (a child lost in ``n - 1``), an even pass the losses in
``n`` plies (every child won in at most ``n - 1``). Cost: one move generation and
one child lookup per move, per unresolved position, per pass; the passes number
about the longest mate.

Value codes (int16, one per position and side to move, :data:`INVALID` for an
index that is no legal position):

* ``0``: draw (no forced mate; also "not resolved yet" while generating);
* ``+n``: the side to move mates in ``n`` plies (``n`` odd);
* ``-(n + 1)``: the side to move is mated in ``n`` plies (``n`` even; ``-1`` =
  checkmated or stalemated now, 困毙 loses).

Layout arrays describe each table: pieces are *slots* (0 = Red king, 1 = Black
king, then the groups of identical pieces); a group's squares are chosen from a
square list (:data:`SQL`) and ranked as a combination; the index is the mixed
radix number of the group ranks. The Red king's list holds files d–e only: a
position with the Red king on file f is mirrored left–right first.
"""

from __future__ import annotations

import numpy as np

from xiangqi.engine._numba import njit
from xiangqi.engine.consts import MAX_MOVES
from xiangqi.engine.movegen import gen_legal, king_attacked

INVALID = -32768

# square lists: 0 Red king (files d-e, mirror-reduced), 1 Black king, 2/3 advisors, 4/5 elephants,
# 6/7 pawns (Red/Black), 8 the whole board
L_RKING, L_BKING, L_RADV, L_BADV, L_RELE, L_BELE, L_RPAWN, L_BPAWN, L_ANY = range(9)


def _flip(sq: int) -> int:
    return (9 - sq // 9) * 9 + sq % 9


def _build_lists():
    red_king = [r * 9 + f for r in range(3) for f in (3, 4)]
    black_king = [r * 9 + f for r in range(7, 10) for f in (3, 4, 5)]
    red_adv = [3, 5, 13, 21, 23]
    red_ele = [2, 6, 18, 22, 26, 38, 42]
    red_pawn = [r * 9 + f for r in (3, 4) for f in (0, 2, 4, 6, 8)] + list(range(45, 90))
    lists = [red_king, black_king, red_adv, sorted(_flip(s) for s in red_adv), red_ele,
             sorted(_flip(s) for s in red_ele), sorted(red_pawn), sorted(_flip(s) for s in red_pawn),
             list(range(90))]
    sql = np.full((len(lists), 90), -1, np.int64)
    sqn = np.zeros(len(lists), np.int64)
    sqpos = np.full((len(lists), 90), -1, np.int64)
    for i, squares in enumerate(lists):
        squares = sorted(squares)
        sqn[i] = len(squares)
        for j, s in enumerate(squares):
            sql[i, j] = s
            sqpos[i, s] = j
    return sql, sqn, sqpos


SQL, SQN, SQPOS = _build_lists()

BINOM = np.zeros((91, 8), np.int64)
for _n in range(91):
    BINOM[_n, 0] = 1
    for _k in range(1, 8):
        BINOM[_n, _k] = (BINOM[_n - 1, _k - 1] + BINOM[_n - 1, _k]) if _n > 0 else 0


@njit
def flip_sq(sq):
    """The square seen from the other side (rank ``r`` -> ``9 - r``): Red and Black swap roles."""
    return (9 - sq // 9) * 9 + sq % 9


@njit
def encode(t, sqs, ng, gstart, gcnt, glist, radix, scratch):
    """Index of the position with slot squares ``sqs`` in table ``t`` (``-1`` if a piece is off its list).

    Mirrors left-right when the Red king (slot 0) stands on files f-i; sorts
    identical pieces (a group is ranked as a combination).
    """
    mirror = (sqs[0] % 9) > 4
    idx = 0
    for g in range(ng[t]):
        st = gstart[t, g]
        c = gcnt[t, g]
        lst = glist[t, g]
        for i in range(c):
            sq = sqs[st + i]
            if mirror:
                f = sq % 9
                sq = sq - f + 8 - f
            pos = SQPOS[lst, sq]
            if pos < 0:
                return -1
            j = i
            while j > 0 and scratch[j - 1] > pos:
                scratch[j] = scratch[j - 1]
                j -= 1
            scratch[j] = pos
        r = 0
        for i in range(c):
            r += BINOM[scratch[i], i + 1]
        idx = idx * radix[t, g] + r
    return idx


@njit
def decode(t, idx, sqs, ng, gstart, gcnt, glist, radix):
    """Write the slot squares of index ``idx`` of table ``t`` into ``sqs`` (inverse of :func:`encode`)."""
    for g in range(ng[t] - 1, -1, -1):
        rad = radix[t, g]
        r = idx % rad
        idx //= rad
        c = gcnt[t, g]
        lst = glist[t, g]
        st = gstart[t, g]
        p = SQN[lst] - 1
        for i in range(c - 1, -1, -1):
            while BINOM[p, i + 1] > r:
                p -= 1
            r -= BINOM[p, i + 1]
            sqs[st + i] = SQL[lst, p]
            p -= 1


@njit
def _setup(sqs, nslots, piece, bd, slot_of, ks):
    """Put the pieces on ``bd``; False when two pieces share a square."""
    ok = True
    for k in range(nslots):
        s = sqs[k]
        if bd[s] != 0:
            ok = False
        bd[s] = piece[k]
        slot_of[s] = k
    ks[0] = sqs[0]
    ks[1] = sqs[1]
    return ok


@njit
def _clear(sqs, nslots, bd, slot_of):
    for k in range(nslots):
        bd[sqs[k]] = 0
        slot_of[sqs[k]] = -1


@njit
def child_value(s, m, sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart, gcnt, glist, radix, nsl,
                off, size, subvals, cap_sub, cap_flip, cap_src, scratch):
    """Value (for the side to move there) of the child after side ``s`` plays ``m``.

    Quiet moves stay in table 0 (``cur``); a capture of slot ``j`` goes to
    sub-table ``cap_sub[j]`` (``-1``: no mating material left, a draw), with the
    colours swapped when ``cap_flip[j]``.
    """
    frm = m >> 7
    to = m & 127
    for k in range(nslots):
        csq[k] = sqs[k]
    csq[slot_of[frm]] = to
    if bd[to] == 0:
        return cur[1 - s, encode(0, csq, ng, gstart, gcnt, glist, radix, scratch)]
    j = slot_of[to]
    t = cap_sub[j]
    if t < 0:
        return 0
    flip = cap_flip[j]
    for k in range(nsl[t]):
        q = csq[cap_src[j, k]]
        sub[k] = flip_sq(q) if flip else q
    side = s if flip else 1 - s
    cidx = encode(t, sub, ng, gstart, gcnt, glist, radix, scratch)
    return subvals[off[t] + side * size[t] + cidx]


@njit
def init_table(cur, piece, nslots, ng, gstart, gcnt, glist, radix):
    """Pass 0: mark illegal indices :data:`INVALID` (pieces on one square, the side not to move in
    check or the kings facing) and positions without a legal move lost now (``-1``).
    Returns the number of legal positions (both sides to move)."""
    N = cur.shape[1]
    sqs = np.zeros(nslots, np.int64)
    bd = np.zeros(90, np.int8)
    slot_of = np.full(90, -1, np.int64)
    ks = np.zeros(2, np.int64)
    moves = np.zeros(MAX_MOVES, np.int64)
    legal = 0
    for idx in range(N):
        decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
        ok = _setup(sqs, nslots, piece, bd, slot_of, ks)
        if not ok:
            cur[0, idx] = INVALID
            cur[1, idx] = INVALID
            bd[:] = 0
            slot_of[:] = -1
            continue
        for s in range(2):
            if king_attacked(bd, ks[1 - s], 1 - s):
                cur[s, idx] = INVALID
                continue
            legal += 1
            if gen_legal(bd, ks, s, moves) == 0:
                cur[s, idx] = -1
            else:
                cur[s, idx] = 0
        _clear(sqs, nslots, bd, slot_of)
    return legal


@njit
def run_pass(n, cur, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals,
             cap_sub, cap_flip, cap_src):
    """Pass ``n >= 1``: resolve the wins (odd ``n``) or losses (even ``n``) in ``n`` plies.

    Returns the number of positions resolved.
    """
    N = cur.shape[1]
    sqs = np.zeros(nslots, np.int64)
    csq = np.zeros(nslots, np.int64)
    sub = np.zeros(nslots, np.int64)
    scratch = np.zeros(8, np.int64)
    bd = np.zeros(90, np.int8)
    slot_of = np.full(90, -1, np.int64)
    ks = np.zeros(2, np.int64)
    moves = np.zeros(MAX_MOVES, np.int64)
    odd = n % 2 == 1
    changed = 0
    for idx in range(N):
        if cur[0, idx] != 0 and cur[1, idx] != 0:
            continue
        decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
        _setup(sqs, nslots, piece, bd, slot_of, ks)
        for s in range(2):
            if cur[s, idx] != 0:
                continue
            nm = gen_legal(bd, ks, s, moves)
            res = 0 if odd else -(n + 1)
            for i in range(nm):
                v = child_value(s, moves[i], sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart, gcnt,
                                glist, radix, nsl, off, size, subvals, cap_sub, cap_flip, cap_src, scratch)
                if odd:
                    if v == -n:
                        res = n
                        break
                elif not (0 < v <= n - 1):
                    res = 0
                    break
            if res != 0:
                cur[s, idx] = res
                changed += 1
        _clear(sqs, nslots, bd, slot_of)
    return changed
