"""Numba move generation: pseudo-legal moves, the legality filter, attacks and perft.

Position layout inside the kernels (numpy only, DESIGN.md decision 2):

* ``bd``: ``int8[90]``, square ``rank * 9 + file`` as in the core; Red pieces
  positive, Black negative, ``abs`` = piece type (KING=1 … PAWN=7).
* ``side``: 0 = Red to move, 1 = Black to move.
* ``ks``: ``int64[2]``, the king squares of Red (index 0) and Black (index 1).
* A move is an int ``from_square << 7 | to_square`` (14 bits).

Lookup tables are module-level arrays (read as compile-time constants by the
kernels). Every table follows the geometry of :mod:`xiangqi.core.board`, and the
perft counts are checked against the core and the published counts of
chessprogramming.org's "Chinese Chess Perft Results" (tests/engine/test_movegen.py).
"""

from __future__ import annotations

import numpy as np

from xiangqi.engine._numba import njit, njit_sig
from xiangqi.engine.consts import MAX_MOVES, MAX_PLY

KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, PAWN = range(1, 8)
__all__ = ["MAX_MOVES", "MAX_PLY", "perft", "gen_moves", "gen_legal", "is_legal_move", "king_attacked"]


def _on(f: int, r: int) -> bool:
    return 0 <= f < 9 and 0 <= r < 10


def _palace(f: int, r: int, red: bool) -> bool:
    return 3 <= f <= 5 and (r <= 2 if red else r >= 7)


def _build():
    ray = np.full((90, 4, 9), -1, np.int64)
    ray_n = np.zeros((90, 4), np.int64)
    h_to = np.zeros((90, 8), np.int64)
    h_leg = np.zeros((90, 8), np.int64)
    h_n = np.zeros(90, np.int64)
    ha_from = np.zeros((90, 8), np.int64)
    ha_leg = np.zeros((90, 8), np.int64)
    ha_n = np.zeros(90, np.int64)
    e_to = np.zeros((90, 4), np.int64)
    e_eye = np.zeros((90, 4), np.int64)
    e_n = np.zeros(90, np.int64)
    a_to = np.zeros((90, 4), np.int64)
    a_n = np.zeros(90, np.int64)
    k_to = np.zeros((90, 4), np.int64)
    k_n = np.zeros(90, np.int64)
    p_to = np.zeros((2, 90, 3), np.int64)
    p_n = np.zeros((2, 90), np.int64)
    for sq in range(90):
        f, r = sq % 9, sq // 9
        red_half = r <= 4
        for d, (df, dr) in enumerate(((0, 1), (0, -1), (1, 0), (-1, 0))):
            nf, nr = f + df, r + dr
            while _on(nf, nr):
                ray[sq, d, ray_n[sq, d]] = nr * 9 + nf
                ray_n[sq, d] += 1
                nf, nr = nf + df, nr + dr
        for df, dr in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            nf, nr = f + df, r + dr
            if _on(nf, nr) and _palace(nf, nr, red_half) and _palace(f, r, red_half):
                k_to[sq, k_n[sq]] = nr * 9 + nf
                k_n[sq] += 1
        for df, dr in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            nf, nr = f + df, r + dr
            if _on(nf, nr) and _palace(nf, nr, red_half) and _palace(f, r, red_half):
                a_to[sq, a_n[sq]] = nr * 9 + nf
                a_n[sq] += 1
        for df, dr in ((2, 2), (2, -2), (-2, 2), (-2, -2)):
            nf, nr = f + df, r + dr
            if _on(nf, nr) and ((nr <= 4) == red_half):
                e_to[sq, e_n[sq]] = nr * 9 + nf
                e_eye[sq, e_n[sq]] = (r + dr // 2) * 9 + f + df // 2
                e_n[sq] += 1
        for df, dr in ((1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (2, -1), (-2, 1), (-2, -1)):
            nf, nr = f + df, r + dr
            if not _on(nf, nr):
                continue
            lf = f + (df // 2 if abs(df) == 2 else 0)
            lr = r + (dr // 2 if abs(dr) == 2 else 0)
            h_to[sq, h_n[sq]] = nr * 9 + nf
            h_leg[sq, h_n[sq]] = lr * 9 + lf
            h_n[sq] += 1
            # a horse standing on (nf, nr) attacks sq through the leg next to itself
            af = nf - (df // 2 if abs(df) == 2 else 0)
            ar = nr - (dr // 2 if abs(dr) == 2 else 0)
            ha_from[sq, ha_n[sq]] = nr * 9 + nf
            ha_leg[sq, ha_n[sq]] = ar * 9 + af
            ha_n[sq] += 1
        for side in (0, 1):
            red = side == 0
            fr = r + 1 if red else r - 1
            if 0 <= fr <= 9:
                p_to[side, sq, p_n[side, sq]] = fr * 9 + f
                p_n[side, sq] += 1
            crossed = (r >= 5) if red else (r <= 4)
            if crossed:
                if f > 0:
                    p_to[side, sq, p_n[side, sq]] = sq - 1
                    p_n[side, sq] += 1
                if f < 8:
                    p_to[side, sq, p_n[side, sq]] = sq + 1
                    p_n[side, sq] += 1
    return (ray, ray_n, h_to, h_leg, h_n, ha_from, ha_leg, ha_n, e_to, e_eye, e_n, a_to, a_n,
            k_to, k_n, p_to, p_n)


(RAY, RAY_N, H_TO, H_LEG, H_N, HA_FROM, HA_LEG, HA_N, E_TO, E_EYE, E_N, A_TO, A_N,
 K_TO, K_N, P_TO, P_N) = _build()

# Squares diagonally next to each square (the horse legs that can uncover an attack on a king there).
DIAG = np.zeros((90, 90), np.bool_)
for _s in range(90):
    for _df, _dr in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        _nf, _nr = _s % 9 + _df, _s // 9 + _dr
        if _on(_nf, _nr):
            DIAG[_s, _nr * 9 + _nf] = True


@njit
def king_attacked(bd, ksq, side):
    """True if the king of ``side`` (0 Red, 1 Black) on ``ksq`` is attacked or faces the other king."""
    es = 1 if side == 1 else -1  # sign of the enemy pieces
    e_rook = ROOK * es
    e_cannon = CANNON * es
    e_king = KING * es
    for d in range(4):
        n = RAY_N[ksq, d]
        screened = False
        for i in range(n):
            t = RAY[ksq, d, i]
            p = bd[t]
            if p == 0:
                continue
            if not screened:
                if p == e_rook or p == e_king:
                    return True
                screened = True
            else:
                if p == e_cannon:
                    return True
                break
    e_horse = HORSE * es
    for i in range(HA_N[ksq]):
        if bd[HA_FROM[ksq, i]] == e_horse and bd[HA_LEG[ksq, i]] == 0:
            return True
    e_pawn = PAWN * es
    front = ksq + 9 if side == 0 else ksq - 9
    if 0 <= front < 90 and bd[front] == e_pawn:
        return True
    f = ksq % 9
    if f > 0 and bd[ksq - 1] == e_pawn:
        return True
    if f < 8 and bd[ksq + 1] == e_pawn:
        return True
    return False


@njit
def square_attacked(bd, sq, by):
    """True if a piece of side ``by`` (0 Red, 1 Black) attacks square ``sq`` (any piece type).

    The king attacks its palace neighbours (the flying-general rule is left to
    :func:`king_attacked`); used to tell defended targets in capture ordering.
    """
    s = 1 if by == 0 else -1
    rook = ROOK * s
    cannon = CANNON * s
    for d in range(4):
        screened = False
        for i in range(RAY_N[sq, d]):
            p = bd[RAY[sq, d, i]]
            if p == 0:
                continue
            if not screened:
                if p == rook:
                    return True
                screened = True
            else:
                if p == cannon:
                    return True
                break
    horse = HORSE * s
    for i in range(HA_N[sq]):
        if bd[HA_FROM[sq, i]] == horse and bd[HA_LEG[sq, i]] == 0:
            return True
    pawn = PAWN * s
    r = sq // 9
    f = sq % 9
    if by == 0:
        if sq >= 9 and bd[sq - 9] == pawn:
            return True
        side_ok = r >= 5
    else:
        if sq < 81 and bd[sq + 9] == pawn:
            return True
        side_ok = r <= 4
    if side_ok:
        if f > 0 and bd[sq - 1] == pawn:
            return True
        if f < 8 and bd[sq + 1] == pawn:
            return True
    adv = ADVISOR * s
    for i in range(A_N[sq]):
        if bd[A_TO[sq, i]] == adv:
            return True
    ele = ELEPHANT * s
    for i in range(E_N[sq]):
        if bd[E_TO[sq, i]] == ele and bd[E_EYE[sq, i]] == 0:
            return True
    king = KING * s
    for i in range(K_N[sq]):
        if bd[K_TO[sq, i]] == king:
            return True
    return False


@njit
def _add(moves, n, frm, to):
    moves[n] = (frm << 7) | to
    return n + 1


@njit
def gen_moves(bd, side, moves, caps_only):
    """Write the pseudo-legal moves of ``side`` into ``moves`` (int array); return their count.

    With ``caps_only`` only captures are generated (for quiescence).
    """
    n = 0
    us = 1 if side == 0 else -1
    for sq in range(90):
        p = bd[sq] * us
        if p <= 0:
            continue
        if p == ROOK:
            for d in range(4):
                for i in range(RAY_N[sq, d]):
                    t = RAY[sq, d, i]
                    q = bd[t] * us
                    if q == 0:
                        if not caps_only:
                            n = _add(moves, n, sq, t)
                    else:
                        if q < 0:
                            n = _add(moves, n, sq, t)
                        break
        elif p == CANNON:
            for d in range(4):
                screened = False
                for i in range(RAY_N[sq, d]):
                    t = RAY[sq, d, i]
                    q = bd[t] * us
                    if not screened:
                        if q == 0:
                            if not caps_only:
                                n = _add(moves, n, sq, t)
                        else:
                            screened = True
                    elif q != 0:
                        if q < 0:
                            n = _add(moves, n, sq, t)
                        break
        elif p == HORSE:
            for i in range(H_N[sq]):
                if bd[H_LEG[sq, i]] == 0:
                    t = H_TO[sq, i]
                    q = bd[t] * us
                    if q < 0 or (q == 0 and not caps_only):
                        n = _add(moves, n, sq, t)
        elif p == PAWN:
            for i in range(P_N[side, sq]):
                t = P_TO[side, sq, i]
                q = bd[t] * us
                if q < 0 or (q == 0 and not caps_only):
                    n = _add(moves, n, sq, t)
        elif p == ELEPHANT:
            for i in range(E_N[sq]):
                if bd[E_EYE[sq, i]] == 0:
                    t = E_TO[sq, i]
                    q = bd[t] * us
                    if q < 0 or (q == 0 and not caps_only):
                        n = _add(moves, n, sq, t)
        elif p == ADVISOR:
            for i in range(A_N[sq]):
                t = A_TO[sq, i]
                q = bd[t] * us
                if q < 0 or (q == 0 and not caps_only):
                    n = _add(moves, n, sq, t)
        else:  # KING
            for i in range(K_N[sq]):
                t = K_TO[sq, i]
                q = bd[t] * us
                if q < 0 or (q == 0 and not caps_only):
                    n = _add(moves, n, sq, t)
    return n


@njit
def needs_check(frm, to, ksq, in_check):
    """False when a non-king move from ``frm`` to ``to`` cannot expose the own king on ``ksq``.

    A move can only uncover a rook/cannon/king line through ``frm``, add a cannon
    screen on ``to`` (same file or rank as the king), or open a horse leg, which
    is a square diagonally next to the king. Pawn attacks cannot be uncovered.
    """
    if in_check:
        return True
    kf = ksq % 9
    kr = ksq // 9
    if frm % 9 == kf or frm // 9 == kr or to % 9 == kf or to // 9 == kr:
        return True
    return DIAG[ksq, frm]


@njit
def is_legal_move(bd, ks, side, m, in_check):
    """True if the pseudo-legal move ``m`` does not leave ``side``'s king attacked (board restored)."""
    frm = m >> 7
    to = m & 127
    p = bd[frm]
    is_king = p == KING or p == -KING
    if not is_king and not needs_check(frm, to, ks[side], in_check):
        return True
    cap = bd[to]
    bd[to] = p
    bd[frm] = 0
    ksq = to if is_king else ks[side]
    bad = king_attacked(bd, ksq, side)
    bd[frm] = p
    bd[to] = cap
    return not bad


@njit
def gen_legal_known(bd, ks, side, moves, in_check):
    """:func:`gen_legal` with ``in_check`` (``side``'s king attacked now) already known (the
    tablebase generator's pass 0 has it from the other side's legality test); returns the count."""
    n = gen_moves(bd, side, moves, False)
    k = 0
    for i in range(n):
        m = moves[i]
        if is_legal_move(bd, ks, side, m, in_check):
            moves[k] = m
            k += 1
    return k


@njit
def gen_legal(bd, ks, side, moves):
    """Legal moves of ``side`` written into ``moves``; returns the count."""
    return gen_legal_known(bd, ks, side, moves, king_attacked(bd, ks[side], side))


@njit_sig("int64(int8[::1], int64[::1], int64, int64, int64[:, ::1], int64)")
def _perft(bd, ks, side, depth, buf, ply):
    moves = buf[ply]
    n = gen_moves(bd, side, moves, False)
    in_check = king_attacked(bd, ks[side], side)
    if depth == 1:
        c = 0
        for i in range(n):
            if is_legal_move(bd, ks, side, moves[i], in_check):
                c += 1
        return c
    total = 0
    for i in range(n):
        m = moves[i]
        if not is_legal_move(bd, ks, side, m, in_check):
            continue
        frm = m >> 7
        to = m & 127
        p = bd[frm]
        cap = bd[to]
        bd[to] = p
        bd[frm] = 0
        if p == KING or p == -KING:
            ks[side] = to
        total += _perft(bd, ks, 1 - side, depth - 1, buf, ply + 1)
        if p == KING or p == -KING:
            ks[side] = frm
        bd[frm] = p
        bd[to] = cap
    return total


@njit
def perft_kernel(bd, ks, side, depth):
    """Leaf count of the legal move tree of ``depth`` plies (``depth >= 1``)."""
    buf = np.zeros((depth + 1, MAX_MOVES), np.int64)
    return _perft(bd, ks, side, depth, buf, depth - depth)  # run-time 0, not a literal (see search.negamax)


def board_arrays(board) -> tuple[np.ndarray, np.ndarray, int]:
    """``(bd, ks, side)`` kernel arrays for a core :class:`~xiangqi.core.board.Board`."""
    bd = np.array(board.squares, dtype=np.int8)
    ks = np.array([board.king(True), board.king(False)], dtype=np.int64)
    return bd, ks, 0 if board.turn else 1


def perft(board, depth: int) -> int:
    """Number of leaf nodes of the legal move tree of ``board`` to ``depth`` plies (Numba kernel).

    ``board`` is a :class:`xiangqi.core.board.Board`; it is not modified. Depth 0
    gives 1. Raises :class:`ValueError` for a negative depth. Counts equal
    :meth:`Board.perft` (the pure-Python reference) on every row of
    tests/data/perft.tsv.
    """
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, got {depth}")
    if depth == 0:
        return 1
    bd, ks, side = board_arrays(board)
    return int(perft_kernel(bd, ks, side, depth))


def move_to_int(move) -> int:
    """Kernel move code of a core :class:`~xiangqi.core.board.Move`."""
    return (move.from_square << 7) | move.to_square


def int_to_move(m: int):
    """Core :class:`~xiangqi.core.board.Move` of a kernel move code."""
    from xiangqi.core.board import Move

    return Move(int(m) >> 7, int(m) & 127)
