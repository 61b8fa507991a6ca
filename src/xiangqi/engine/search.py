"""Search kernels (Numba): PVS negamax with quiescence, TT, null move, LMR, futility, LMP, repetition.

Everything here runs inside ``@njit(cache=True, nogil=True)`` kernels on numpy
arrays (DESIGN.md decision 2); :mod:`xiangqi.engine.api` drives them (iterative
deepening, aspiration windows, multi-PV, time management).

Arrays shared by the kernels (one set per :class:`~xiangqi.engine.Engine`):

* ``bd`` int8[90], ``ks`` int64[2]: board and king squares (see :mod:`.movegen`).
* ``st`` int64[8]: side to move, incremental midgame/endgame material+PST sums,
  phase, Zobrist key, and the index of the current position in the history.
* ``rk``/``rf`` int64[HISTORY]: Zobrist key of every position of the game and of
  the search path, and flags: bit 0 = the move into it gave check, bit 1 = the
  move into it was irreversible (capture, null move, or the start of the record),
  bits 8 and up = the move into it (0: none or not known), for the chase rulings.
* ``tk``/``td``: the TT (:mod:`.tt`). ``killers`` [MAX_PLY, 3]: per ply the two killer moves and the
  static eval (for the *improving* test). ``hist`` [15, 90]: history scores by (piece, to square).
* ``mbuf``/``sbuf`` [MAX_PLY, MAX_MOVES]: the preallocated move and score buffer per ply.
* ``pv`` [MAX_PLY, MAX_PLY], ``pvl`` [MAX_PLY]: the triangular PV table.
* ``ctl`` int64[16]: stop flag, node counter, node limit, seldepth, TT generation,
  best root move/score; the stop flag is written by other threads.

Scores: centipawns; a mate is ``MATE - ply`` (mate-distance scores), a lost
perpetual check or perpetual chase ``-REP_WIN`` (RULES.md §5.4: one-sided perpetual
check loses, then a one-sided perpetual attack: :mod:`.chase`), other repetitions 0 (draw).
Stalemate (困毙) loses like mate (RULES.md §3).
"""

from __future__ import annotations

import math

import numpy as np

from xiangqi.engine._numba import njit, njit_sig
from xiangqi.engine.chase import cycle_verdict, find_cycle, perpetual_checks
from xiangqi.engine.consts import (
    C_BEST,
    C_BEST_SCORE,
    C_GEN,
    C_NODE_LIMIT,
    C_NODES,
    C_QCHECK,
    C_ROOT_DONE,
    C_RULES,
    C_SELDEPTH,
    C_STOP,
    HISTORY,
    INF,
    MATE,
    MATE_BOUND,
    REP_WIN,
    S_EG,
    S_HP,
    S_KEY,
    S_MG,
    S_PH,
    S_SIDE,
)
from xiangqi.engine.evaluate import ORDER_VALUE, PHASE_W, PST_EG, PST_MG
from xiangqi.engine.movegen import (
    CANNON,
    HORSE,
    KING,
    MAX_PLY,
    ROOK,
    gen_moves,
    is_legal_move,
    king_attacked,
    square_attacked,
)
from xiangqi.engine.nnue import nnue_make, nnue_unmake, static_eval  # XIANGQI_EVAL=nnue hook
from xiangqi.engine.tbgen import NO_TB, tb_score
from xiangqi.engine.tt import (
    BOUND_EXACT,
    BOUND_LOWER,
    BOUND_UPPER,
    ZOB,
    ZOB_SIDE,
    tt_bound,
    tt_depth,
    tt_move,
    tt_probe,
    tt_score,
    tt_store,
)

__all__ = ["HISTORY", "INF", "MATE", "MATE_BOUND", "REP_WIN", "negamax", "qsearch", "repetition_rules",
           "search_root"]

LMR = np.zeros((64, 64), np.int64)
for _d in range(1, 64):
    for _i in range(1, 64):
        LMR[_d, _i] = int(0.5 + math.log(_d) * math.log(_i) / 2.0)
FUTILITY_MARGIN = np.array([0, 150, 260, 380, 500, 620], np.int64)  # parent futility, depth 1-5
# late move pruning: quiet moves tried at depth 1-5, [not improving, improving] ((5 + d^2)(1 + i) / 2)
LMP_COUNT = np.array([[0, 0], [3, 6], [4, 9], [7, 14], [10, 21], [15, 30]], np.int64)
PRUNE_DEPTH = 5  # futility and late move pruning up to this depth
TRIED_QUIET = -(1 << 50)  # marks, in the score buffer, a quiet move searched without a cut-off
RFP_MARGIN = 90  # reverse futility (static null move) margin per ply of depth
RFP_DEPTH = 6
NO_EVAL = -INF - 1  # the static eval slot of a ply whose side was in check


@njit
def make_move(bd, ks, st, rk, rf, m):
    """Play move ``m`` on the kernel position; returns the captured piece code (0 = none)."""
    frm = m >> 7
    to = m & 127
    p = bd[frm]
    cap = bd[to]
    key = st[S_KEY] ^ ZOB[p + 7, frm] ^ ZOB[p + 7, to] ^ ZOB_SIDE
    st[S_MG] += PST_MG[p + 7, to] - PST_MG[p + 7, frm]
    st[S_EG] += PST_EG[p + 7, to] - PST_EG[p + 7, frm]
    if cap != 0:
        key ^= ZOB[cap + 7, to]
        st[S_MG] -= PST_MG[cap + 7, to]
        st[S_EG] -= PST_EG[cap + 7, to]
        st[S_PH] -= PHASE_W[abs(cap)]
    nnue_make(st, p, frm, to, cap)
    bd[to] = p
    bd[frm] = 0
    if p == KING:
        ks[0] = to
    elif p == -KING:
        ks[1] = to
    st[S_KEY] = key
    st[S_SIDE] = 1 - st[S_SIDE]
    hp = st[S_HP] + 1
    st[S_HP] = hp
    rk[hp] = key
    rf[hp] = (m << 8) | (2 if cap != 0 else 0)  # the move (for chase rulings) and the irreversible flag
    return cap


@njit
def unmake_move(bd, ks, st, m, cap):
    """Take back move ``m`` that captured ``cap``."""
    frm = m >> 7
    to = m & 127
    p = bd[to]
    key = st[S_KEY] ^ ZOB[p + 7, frm] ^ ZOB[p + 7, to] ^ ZOB_SIDE
    st[S_MG] -= PST_MG[p + 7, to] - PST_MG[p + 7, frm]
    st[S_EG] -= PST_EG[p + 7, to] - PST_EG[p + 7, frm]
    if cap != 0:
        key ^= ZOB[cap + 7, to]
        st[S_MG] += PST_MG[cap + 7, to]
        st[S_EG] += PST_EG[cap + 7, to]
        st[S_PH] += PHASE_W[abs(cap)]
    bd[frm] = p
    bd[to] = cap
    if p == KING:
        ks[0] = frm
    elif p == -KING:
        ks[1] = frm
    st[S_KEY] = key
    st[S_SIDE] = 1 - st[S_SIDE]
    st[S_HP] -= 1
    nnue_unmake(st)


@njit
def repetition(rk, rf, hp):
    """``(found, score)`` for the position at ``hp`` repeating an earlier one (same side to move).

    The cycle's moves are classified by check only (RULES.md §5.4.1): if every
    move of the side that just moved gave check and not every move of the side to
    move did, the side to move wins (+REP_WIN); the reverse loses (-REP_WIN);
    anything else is a draw (0). The search rules at the second occurrence.
    """
    j = find_cycle(rk, rf, hp)
    if j < 0:
        return False, 0
    opp_all, us_all = perpetual_checks(rf, j, hp)
    if opp_all and not us_all:
        return True, REP_WIN
    if us_all and not opp_all:
        return True, -REP_WIN
    return True, 0


@njit
def repetition_rules(bd, ks, st, rk, rf, ctl):
    """``(found, score)`` for the position at ``st[S_HP]`` repeating an earlier one, ruled with
    perpetual check and perpetual chase (:mod:`.chase`; ``ctl[C_RULES]`` names the rule set).

    The chase judgement (a replay of the cycle) runs only when a repetition is found and no side
    checked on every move. The search rules at the second occurrence.
    """
    hp = st[S_HP]
    j = find_cycle(rk, rf, hp)
    if j < 0:
        return False, 0
    return True, cycle_verdict(bd, ks, st[S_SIDE], rk, rf, j, hp, ctl[C_RULES])


@njit
def _bad_capture(bd, frm, to, side):
    """A capture by a more valuable piece of a defended target (a cheap stand-in for SEE < 0)."""
    return ORDER_VALUE[abs(bd[frm])] > ORDER_VALUE[abs(bd[to])] and square_attacked(bd, to, 1 - side)


@njit
def _score_moves(bd, side, moves, scores, n, ttm, k1, k2, hist):
    """Ordering: TT move, good captures (MVV-LVA), killers, quiet moves by history, bad captures."""
    for i in range(n):
        m = moves[i]
        frm = m >> 7
        to = m & 127
        cap = bd[to]
        if m == ttm:
            scores[i] = 1 << 40
        elif cap != 0:
            scores[i] = ORDER_VALUE[abs(cap)] * 64 - ORDER_VALUE[abs(bd[frm])] // 16
            if _bad_capture(bd, frm, to, side):
                scores[i] -= 1 << 30
            else:
                scores[i] += 1 << 30
        elif m == k1:
            scores[i] = (1 << 29) + 1
        elif m == k2:
            scores[i] = 1 << 29
        else:
            scores[i] = hist[bd[frm] + 7, to]


@njit
def _pick(moves, scores, i, n):
    """Move the best-scored move of ``i..n-1`` to index ``i`` (selection sort step)."""
    b = i
    bs = scores[i]
    for j in range(i + 1, n):
        if scores[j] > bs:
            bs = scores[j]
            b = j
    if b != i:
        t = moves[i]
        moves[i] = moves[b]
        moves[b] = t
        t2 = scores[i]
        scores[i] = scores[b]
        scores[b] = t2
    return moves[i]


@njit
def _count_nodes(ctl):
    ctl[C_NODES] += 1
    if (ctl[C_NODES] & 1023) == 0 and ctl[C_NODE_LIMIT] > 0 and ctl[C_NODES] >= ctl[C_NODE_LIMIT]:
        ctl[C_STOP] = 1


@njit_sig("int64(int8[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[:, ::1], int64[:, ::1], "
          "int64[::1], int64, int64, int64, int64)")
def qsearch(bd, ks, st, rk, rf, mbuf, sbuf, ctl, alpha, beta, ply, qply):
    """Quiescence search: captures, and all evasions while in check (first ``ctl[C_QCHECK]`` q-plies)."""
    _count_nodes(ctl)
    if ply > ctl[C_SELDEPTH]:
        ctl[C_SELDEPTH] = ply
    side = st[S_SIDE]
    in_check = king_attacked(bd, ks[side], side)
    if ply >= MAX_PLY - 2:
        return static_eval(bd, ks, st)
    evasions = in_check and qply < ctl[C_QCHECK]
    stand = -INF
    if not evasions:
        stand = static_eval(bd, ks, st)
        if stand >= beta:
            return stand
        if stand > alpha:
            alpha = stand
    moves = mbuf[ply]
    scores = sbuf[ply]
    n = gen_moves(bd, side, moves, not evasions)
    for i in range(n):
        m = moves[i]
        cap = bd[m & 127]
        if cap != 0:
            scores[i] = ORDER_VALUE[abs(cap)] * 64 - ORDER_VALUE[abs(bd[m >> 7])] // 16 + 1000000
        else:
            scores[i] = 0
    best = stand if not evasions else -MATE + ply
    legal = 0
    for i in range(n):
        m = _pick(moves, scores, i, n)
        if not is_legal_move(bd, ks, side, m, in_check):
            continue
        legal += 1
        cap = bd[m & 127]
        if not evasions:
            if stand + ORDER_VALUE[abs(cap)] + 150 <= alpha:
                continue  # delta pruning: even winning this piece cannot lift alpha
            if _bad_capture(bd, m >> 7, m & 127, side):
                continue  # losing capture
        cap = make_move(bd, ks, st, rk, rf, m)
        s = -qsearch(bd, ks, st, rk, rf, mbuf, sbuf, ctl, -beta, -alpha, ply + 1, qply + 1)
        unmake_move(bd, ks, st, m, cap)
        if ctl[C_STOP] != 0:
            return 0
        if s > best:
            best = s
            if s > alpha:
                alpha = s
                if s >= beta:
                    return s
    return best


@njit
def _has_big_pieces(bd, side):
    """True if ``side`` has a rook, or two horses/cannons: null move is then considered safe."""
    us = 1 if side == 0 else -1
    n = 0
    for sq in range(90):
        p = bd[sq] * us
        if p == ROOK:
            return True
        if p == HORSE or p == CANNON:
            n += 1
    return n >= 2


@njit_sig("int64(int8[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], "
          "int64[:, ::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], int64[::1], "
          "int64[::1], int16[::1], int64[:, ::1], int64, int64, int64, int64, boolean)")
def negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd, depth, alpha, beta,
            ply, null_ok):
    """Principal variation search; returns the score for the side to move, within (alpha, beta) bounds."""
    pvl[ply] = 0
    # Recursive calls pass run-time values, never literals: a call typed with a literal
    # (e.g. Literal[bool](False)) becomes a symbol that a cached kernel cannot resolve.
    yes = ply >= 0
    no = ply < 0
    q0 = ply - ply
    side = st[S_SIDE]
    hp = st[S_HP]
    in_check = king_attacked(bd, ks[side], side)
    if in_check:
        rf[hp] |= 1
    found, rs = repetition_rules(bd, ks, st, rk, rf, ctl)
    if found:
        return rs
    # mate-distance pruning
    if alpha < -MATE + ply:
        alpha = -MATE + ply
    if beta > MATE - ply - 1:
        beta = MATE - ply - 1
    if alpha >= beta:
        return alpha
    # endgame tables (tbgen.tb_score): probed where the material can have changed (after a capture)
    # and at ply 1, the exact score of a position they hold (pure mate, docs/TABLEBASES.md)
    if tbd.shape[0] > 0 and (ply == 1 or (rf[hp] & 2) != 0):
        tbs = tb_score(bd, side, ply, tbv, tbd, MATE)
        if tbs != NO_TB:
            return tbs
    if depth <= 0:
        return qsearch(bd, ks, st, rk, rf, mbuf, sbuf, ctl, alpha, beta, ply, q0)
    _count_nodes(ctl)
    if ctl[C_STOP] != 0:
        return 0
    if ply > ctl[C_SELDEPTH]:
        ctl[C_SELDEPTH] = ply
    if ply >= MAX_PLY - 2:
        return static_eval(bd, ks, st)
    pv_node = beta - alpha > 1
    key = st[S_KEY]
    ttm = 0
    data = tt_probe(tk, td, key)
    if data >= 0:
        ttm = tt_move(data)
        if not pv_node and tt_depth(data) >= depth:
            s = tt_score(data)
            if s > MATE_BOUND:
                s -= ply
            elif s < -MATE_BOUND:
                s += ply
            b = tt_bound(data)
            if b == BOUND_EXACT or (b == BOUND_LOWER and s >= beta) or (b == BOUND_UPPER and s <= alpha):
                return s
    ev = 0
    improving = 0
    killers[ply, 2] = NO_EVAL
    if not in_check:
        ev = static_eval(bd, ks, st)
        killers[ply, 2] = ev
        # improving: the static eval rose since our previous move (not known after a check: count it)
        if ply < 2 or killers[ply - 2, 2] == NO_EVAL or ev > killers[ply - 2, 2]:
            improving = 1
        # reverse futility pruning (static null move)
        if not pv_node and depth <= RFP_DEPTH and beta < MATE_BOUND and beta > -MATE_BOUND and \
                ev - RFP_MARGIN * (depth - improving) >= beta:
            return ev
        # null move pruning, not in endgames where zugzwang (e.g. 困毙) is a real danger
        if not pv_node and null_ok and depth >= 2 and ev >= beta and _has_big_pieces(bd, side):
            r = 3 + depth // 4 + min((ev - beta) // 200, 2)
            st[S_KEY] = key ^ ZOB_SIDE
            st[S_SIDE] = 1 - side
            st[S_HP] = hp + 1
            rk[hp + 1] = st[S_KEY]
            rf[hp + 1] = 2
            s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                         depth - 1 - r, -beta, -beta + 1, ply + 1, no)
            st[S_KEY] = key
            st[S_SIDE] = side
            st[S_HP] = hp
            if ctl[C_STOP] != 0:
                return 0
            if s >= beta:
                if s > MATE_BOUND:
                    s = beta
                return s
    moves = mbuf[ply]
    scores = sbuf[ply]
    n = gen_moves(bd, side, moves, False)
    if ttm == 0 and depth >= 4:
        depth -= 1  # internal iterative reduction: no TT move to guide this node
    _score_moves(bd, side, moves, scores, n, ttm, killers[ply, 0], killers[ply, 1], hist)
    # no futility or late-move pruning once alpha is a mate score: then only a mate can raise it, and a
    # mate may be a quiet move that gives no check (困毙, the stalemate that wins)
    shallow = not pv_node and not in_check and depth <= PRUNE_DEPTH and alpha < MATE_BOUND
    futile = shallow and ev + FUTILITY_MARGIN[depth] <= alpha and alpha > -MATE_BOUND
    best = -INF
    best_move = 0
    legal = 0
    orig_alpha = alpha
    for i in range(n):
        m = _pick(moves, scores, i, n)
        if not is_legal_move(bd, ks, side, m, in_check):
            continue
        legal += 1
        quiet = bd[m & 127] == 0
        cap = make_move(bd, ks, st, rk, rf, m)
        gives_check = king_attacked(bd, ks[1 - side], 1 - side)
        # check extension for safe checks only (the checking piece cannot be taken at once):
        # xiangqi is full of cheap checks, and extending all of them bloats the tree
        ext = 1 if gives_check and not square_attacked(bd, m & 127, 1 - side) else 0
        if quiet and legal > 1 and not gives_check and (
                futile or (shallow and legal > LMP_COUNT[depth, improving] and best > -MATE_BOUND)):
            unmake_move(bd, ks, st, m, cap)  # futility / late move pruning
            continue
        if legal == 1:
            s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                         depth - 1 + ext, -beta, -alpha, ply + 1, yes)
        else:
            r = 0
            if depth >= 3 and quiet and not in_check and not gives_check and legal > 3 \
                    and m != killers[ply, 0] and m != killers[ply, 1]:
                r = LMR[min(depth, 63), min(legal, 63)]
                if pv_node:
                    r -= 1
                if not improving:
                    r += 1
                if r > depth - 2:
                    r = depth - 2
                if r < 0:
                    r = 0
            s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                         depth - 1 + ext - r, -alpha - 1, -alpha, ply + 1, yes)
            if s > alpha and r > 0:
                s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                             depth - 1 + ext, -alpha - 1, -alpha, ply + 1, yes)
            if s > alpha and s < beta:
                s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                             depth - 1 + ext, -beta, -alpha, ply + 1, yes)
        unmake_move(bd, ks, st, m, cap)
        if ctl[C_STOP] != 0:
            return 0
        if s > best:
            best = s
            best_move = m
            if s > alpha:
                alpha = s
                pv[ply, 0] = m
                k = pvl[ply + 1]
                for j in range(k):
                    pv[ply, j + 1] = pv[ply + 1, j]
                pvl[ply] = k + 1
                if s >= beta:
                    if quiet:
                        if killers[ply, 0] != m:
                            killers[ply, 1] = killers[ply, 0]
                            killers[ply, 0] = m
                        pc = bd[m >> 7] + 7
                        hist[pc, m & 127] += depth * depth
                        # history malus for the quiet moves tried before this one
                        for j in range(i):
                            if scores[j] == TRIED_QUIET:
                                mj = moves[j]
                                hist[bd[mj >> 7] + 7, mj & 127] -= depth * depth
                        if hist[pc, m & 127] > (1 << 24):
                            for a in range(15):
                                for b2 in range(90):
                                    hist[a, b2] //= 2
                    break
        if quiet:
            scores[i] = TRIED_QUIET
    if legal == 0:
        return -MATE + ply  # mate, or stalemate (困毙), both lose
    if best == -INF:  # every legal move was pruned as futile
        return alpha
    bound = BOUND_EXACT
    if best >= beta:
        bound = BOUND_LOWER
    elif best <= orig_alpha:
        bound = BOUND_UPPER
    s = best
    if s > MATE_BOUND:
        s += ply
    elif s < -MATE_BOUND:
        s -= ply
    tt_store(tk, td, key, best_move, depth, bound, s, ctl[C_GEN])
    return best


@njit
def search_root(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd, root_moves,
                n_root, root_scores, depth, alpha, beta):
    """Search the ``n_root`` legal moves of ``root_moves`` (in that order) to ``depth``.

    Returns the best score; ``ctl[C_BEST]``/``ctl[C_BEST_SCORE]`` hold the best
    move found so far (also when stopped midway), ``pv[0, :pvl[0]]`` its PV and
    ``ctl[C_ROOT_DONE]`` how many root moves were searched completely. ``tbv``/``tbd``: the packed
    endgame tables probed inside the search (``tablebase.pack_tables``; zero rows: none).
    """
    side = st[S_SIDE]
    hp = st[S_HP]
    if king_attacked(bd, ks[side], side):
        rf[hp] |= 1
    one = depth - depth + 1  # run-time values for the recursive calls (see negamax)
    yes = depth >= 0
    best = -INF
    ctl[C_ROOT_DONE] = 0
    ctl[C_BEST] = 0
    pvl[0] = 0
    for i in range(n_root):
        m = root_moves[i]
        cap = make_move(bd, ks, st, rk, rf, m)
        if i == 0:
            s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                         depth - 1, -beta, -alpha, one, yes)
        else:
            s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                         depth - 1, -alpha - 1, -alpha, one, yes)
            if s > alpha and s < beta and ctl[C_STOP] == 0:
                s = -negamax(bd, ks, st, rk, rf, tk, td, killers, hist, mbuf, sbuf, pv, pvl, ctl, tbv, tbd,
                             depth - 1, -beta, -alpha, one, yes)
        unmake_move(bd, ks, st, m, cap)
        if ctl[C_STOP] != 0:
            break
        root_scores[i] = s
        ctl[C_ROOT_DONE] = i + 1
        if s > best:
            best = s
            ctl[C_BEST] = m
            ctl[C_BEST_SCORE] = s
            pv[0, 0] = m
            k = pvl[1]
            for j in range(k):
                pv[0, j + 1] = pv[1, j]
            pvl[0] = k + 1
            if s > alpha:
                alpha = s
                if s >= beta:
                    break
    if ctl[C_STOP] == 0 and best > -INF:
        bound = BOUND_EXACT
        if best >= beta:
            bound = BOUND_LOWER
        tt_store(tk, td, st[S_KEY], ctl[C_BEST], depth, bound, best, ctl[C_GEN])
    return best
