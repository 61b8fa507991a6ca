"""Numba kernels that judge a repetition found inside the search: perpetual check and perpetual chase.

The core referee (:mod:`xiangqi.core.referee`, :mod:`xiangqi.core.classify`) rules the game; these
kernels are the search's fast model of the same rulings (RULES.md §5, RULES_CXA.md §1-§4), computed
only when the search path repeats a position, so that the search neither walks into a perpetual
chase (长捉) that loses nor misses the opponent's.

The cycle is read from the repetition arrays of :mod:`.search`: ``rk[i]`` the key of position
``i``, ``rf[i]`` its flags (bit 0: the move into it gave check, bit 1: irreversible) and, from bit
8, the move that led into it (``from << 7 | to``; 0 = not known). The moves of a cycle are never
captures, so the kernels walk the board back to the first position of the cycle and replay it,
classifying each move on the board it was played on.

**A chase (捉, RULES.md §5.1, RULES_CXA §1 24.3 and the 29.x conditions)**, as modelled here: after
the move, with the mover to move again, one of its pieces can capture an enemy 子力 (rook, horse,
cannon, advisor, elephant, or a pawn that has crossed the river; never the king or an uncrossed
pawn) by a legal capture that

* is **new** (29.2, 从捉到捉 is 闲): that piece did not attack that square before the move, and
  no piece of the mover could already win the target before the move;
* **wins material** (25.3 values rook 4, horse 2, cannon 2, advisor 1, elephant 1, crossed pawn
  1): the target is worth more than the capturer (a horse or cannon on a rook), or it has no
  real protector: no legal recapture on its square after the capture (a pinned protector, a
  cannon whose screen was the capturer, a king that would face the other king do not protect:
  真根/假根, 24.15);
* is not an **exchange offer** (兑, 24.4): a capturer of the target's type that the target could
  take back (a rook facing a rook) does not chase.

The capturer is not the king (the king chasing by itself is 闲, 通则 1; it still protects and
recaptures); a pawn chasing by itself is 闲 under both rule sets (CXA 通则 3 "兵（卒）本身允许长捉";
AXF allows pawn chases; 通则 3's 相互长打 exception is left to the referee). A king move that
answers a check is 闲 (通则 2). Moves that uncover an attack (a rook line, a horse leg, a cannon's
new screen) are chases too: every capturer of every target is compared before and after the move.

**The rulings** (referee.rule_cycle): a side whose every move checks loses unless both do (check
before chase, RULES_CXA §4.1). Otherwise, under CXA a side whose every move checks or chases, one
piece or several (24.11, 24.13: 一将一捉 is forbidden too), is forbidden; under AXF a side that
chases **the same piece** with every move (identities followed through the cycle) is forbidden.
One side forbidden loses; both, or neither, is a draw.

Where the model stops (a draw where the referee may rule a loss, never the reverse on purpose):
杀 (mate threats) are not detected, nor chases won by checks (抽将), joint chases (联合捉), the
complete exchange on a protected square (完整互吃交换), 26.5's weighing of the opponent's counter
threats, 29.4 (the capturer mated at once), and the 2020 responsibility comparison of two
forbidden sides (RULES_CXA §4.4) is a draw here. The root keeps asking the referee
(``Engine._drop_forbidden``), so a move the referee forbids is never played.
"""

from __future__ import annotations

import numpy as np

from xiangqi.engine._numba import njit, njit_sig
from xiangqi.engine.consts import MAX_MOVES, REP_WIN, RULES_AXF, RULES_CHECKS
from xiangqi.engine.movegen import (
    A_N,
    A_TO,
    ADVISOR,
    CANNON,
    E_EYE,
    E_N,
    E_TO,
    ELEPHANT,
    HA_FROM,
    HA_LEG,
    HA_N,
    HORSE,
    KING,
    PAWN,
    RAY,
    RAY_N,
    ROOK,
    gen_moves,
    is_legal_move,
    king_attacked,
)

__all__ = ["CHASE_VALUE", "cycle_verdict", "find_cycle", "move_chases", "perpetual_checks"]

#: 子力价值 of RULES.md §5.1 / RULES_CXA 25.3 by piece type (index 0 unused, the king's a sentinel).
CHASE_VALUE = np.array([0, 100, 1, 1, 2, 4, 2, 1], np.int64)
#: 杀 (24.2): checking moves of the mate-threat search and its node budget (a kill needing more is
#: not found). The core's classifier searches 5 checks deep (classify.KILL_DEPTH).
KILL_DEPTH = 3
KILL_NODES = 3000
MAX_TARGETS = 16  # enemy 子力 at most: 2 rooks, horses, cannons, advisors, elephants and 5 pawns
MAX_ATTACKERS = 32  # capturers of one square: 4 rook + 4 cannon lines, 8 horses, 3 pawns, advisors, elephants


@njit
def find_cycle(rk, rf, hp):
    """Index ``j`` of the latest earlier occurrence of position ``hp`` (same side to move) since
    the last irreversible move, or -1."""
    key = rk[hp]
    j = hp
    while j > 0:
        if rf[j] & 2:
            break
        j -= 1
        if (hp - j) % 2 == 0 and rk[j] == key:
            return j
    return -1


@njit
def perpetual_checks(rf, j, hp):
    """``(opp, us)``: whether every move of the side that just moved (``opp``) and of the side to
    move at ``hp`` (``us``) in the cycle ``j`` .. ``hp`` gave check (bit 0 of the flags ``rf``)."""
    opp = True
    us = True
    for i in range(j + 1, hp + 1):
        chk = (rf[i] & 1) != 0
        if (hp - i) % 2 == 0:
            opp = opp and chk
        else:
            us = us and chk
    return opp, us


@njit
def _crossed(sq, side):
    """True if a pawn of ``side`` (0 Red, 1 Black) on ``sq`` has crossed the river."""
    return sq // 9 >= 5 if side == 0 else sq // 9 <= 4


@njit
def _attackers(bd, t, by, out):
    """Squares of the pieces of ``by`` (0 Red, 1 Black), kings left out, that could capture on ``t``
    by the piece rules (legality not tested); written into ``out``, returns their count."""
    s = 1 if by == 0 else -1
    n = 0
    for d in range(4):
        screened = False
        for i in range(RAY_N[t, d]):
            q = RAY[t, d, i]
            p = bd[q]
            if p == 0:
                continue
            if not screened:
                if p == ROOK * s:
                    out[n] = q
                    n += 1
                screened = True
            else:
                if p == CANNON * s:
                    out[n] = q
                    n += 1
                break
    for i in range(HA_N[t]):
        q = HA_FROM[t, i]
        if bd[q] == HORSE * s and bd[HA_LEG[t, i]] == 0:
            out[n] = q
            n += 1
    r = t // 9
    f = t % 9
    if by == 0:
        if t >= 9 and bd[t - 9] == PAWN:
            out[n] = t - 9
            n += 1
        sideways = r >= 5
    else:
        if t < 81 and bd[t + 9] == -PAWN:
            out[n] = t + 9
            n += 1
        sideways = r <= 4
    if sideways:
        if f > 0 and bd[t - 1] == PAWN * s:
            out[n] = t - 1
            n += 1
        if f < 8 and bd[t + 1] == PAWN * s:
            out[n] = t + 1
            n += 1
    for i in range(A_N[t]):
        q = A_TO[t, i]
        if bd[q] == ADVISOR * s:
            out[n] = q
            n += 1
    for i in range(E_N[t]):
        q = E_TO[t, i]
        if bd[q] == ELEPHANT * s and bd[E_EYE[t, i]] == 0:
            out[n] = q
            n += 1
    return n


@njit
def _can_take(bd, ks, side, frm, to, scratch):
    """True if ``side`` can legally capture from ``frm`` on ``to`` (the piece rules included)."""
    n = gen_moves(bd, side, scratch, True)
    m = (frm << 7) | to
    for i in range(n):
        if scratch[i] == m:
            return is_legal_move(bd, ks, side, m, king_attacked(bd, ks[side], side))
    return False


@njit
def _wins(bd, ks, a, t, mover, scratch):
    """True if the capture of the piece on ``t`` by the mover's piece on ``a`` (which attacks it by
    the piece rules) is legal and wins material (see the module docstring)."""
    m = (a << 7) | t
    if not is_legal_move(bd, ks, mover, m, king_attacked(bd, ks[mover], mover)):
        return False
    at = abs(bd[a])
    tt = abs(bd[t])
    victim = 1 - mover
    if at == tt and _can_take(bd, ks, victim, t, a, scratch):
        return False  # 兑: an exchange offered, not a chase
    # the victim's captures before the capture (pseudo-legal targets), for 被牵子捉子 below
    nb = gen_moves(bd, victim, scratch, True)
    before = np.zeros(90, np.bool_)
    for i in range(nb):
        before[scratch[i] & 127] = True
    # the capture made: a legal recapture on t (a real protector), and what the capture opens
    p = bd[a]
    cap = bd[t]
    bd[t] = p
    bd[a] = 0
    in_check = king_attacked(bd, ks[victim], victim)
    n = gen_moves(bd, victim, scratch, True)
    rooted = False
    opened = 0
    for i in range(n):
        mv = scratch[i]
        to = mv & 127
        if (to == t or not before[to]) and is_legal_move(bd, ks, victim, mv, in_check):
            if to == t:
                rooted = True
            elif CHASE_VALUE[abs(bd[to])] > opened:
                opened = CHASE_VALUE[abs(bd[to])]
    bd[a] = p
    bd[t] = cap
    gain = CHASE_VALUE[tt] - (CHASE_VALUE[at] if rooted else 0)
    # 26.5 得不偿失: a capture that opens a capture of as much for the victim (the capturer was
    # pinned, or it was the root of another piece) wins nothing
    if opened >= gain:
        return False
    return gain > 0


@njit
def _chaser_ok(bd, sq, moved_to, pawn_chases):
    """The piece on ``sq`` may be counted as a chaser: not a king; a pawn only if it just moved and
    the rules count pawn chases."""
    p = abs(bd[sq])
    if p == KING:
        return False
    if p == PAWN:
        return pawn_chases and sq == moved_to
    return True


@njit
def move_chases(bd, ks, frm, to, mover, pawn_chases, out, scratch):
    """Play the non-capturing move ``frm`` → ``to`` of ``mover`` (0 Red, 1 Black) on ``bd``/``ks``
    and write into ``out`` the squares of the enemy pieces it chases; returns their count.

    The move stays played. ``scratch`` is a move buffer (``MAX_MOVES`` int64). See the module
    docstring for what counts as a chase.
    """
    victim = 1 - mover
    vs = -1 if mover == 0 else 1  # sign of the victim's pieces
    tsq = np.empty(MAX_TARGETS, np.int64)
    nt = 0
    for sq in range(90):
        p = bd[sq] * vs
        if p <= 0 or p == KING:
            continue
        if p == PAWN and not _crossed(sq, victim):
            continue
        if nt < MAX_TARGETS:
            tsq[nt] = sq
            nt += 1
    moved = bd[frm]
    if nt == 0:
        bd[to] = moved
        bd[frm] = 0
        if abs(moved) == KING:
            ks[mover] = to
        return 0
    bef = np.empty((MAX_TARGETS, MAX_ATTACKERS), np.int64)
    befn = np.empty(MAX_TARGETS, np.int64)
    for k in range(nt):
        befn[k] = _attackers(bd, tsq[k], mover, bef[k])
    bd[to] = moved
    bd[frm] = 0
    if abs(moved) == KING:
        ks[mover] = to
    aft = np.empty(MAX_ATTACKERS, np.int64)
    nc = 0
    for k in range(nt):
        t = tsq[k]
        na = _attackers(bd, t, mover, aft)
        hit = False
        for i in range(na):
            a = aft[i]
            if not _chaser_ok(bd, a, to, pawn_chases):
                continue
            orig = frm if a == to else a
            old = False
            for b in range(befn[k]):
                if bef[k, b] == orig:
                    old = True
                    break
            if old:
                continue  # this capture existed before the move (从捉到捉)
            if _wins(bd, ks, a, t, mover, scratch):
                hit = True
                break
        if not hit:
            continue
        out[nc] = t
        nc += 1
    return nc


@njit_sig("boolean(int8[::1], int64[::1], int64, int64, int64[:, ::1], int64, int64[::1])")
def mates_by_checks(bd, ks, side, depth, buf, ply, budget):
    """True if ``side`` (to move) mates within ``depth`` of its moves, every one a check, against
    every defence (杀, RULES_CXA 24.2 "一着或连续照将将死对方"). ``buf`` [2 * depth + 2, MAX_MOVES]:
    move buffers by ``ply``; ``budget[0]``: checking moves left to try (when it runs out the
    answer is False: no mate proven). ``bd``/``ks`` are restored."""
    moves = buf[ply]
    n = gen_moves(bd, side, moves, False)
    opp = 1 - side
    in_chk = king_attacked(bd, ks[side], side)
    for i in range(n):
        if budget[0] <= 0:
            return False
        m = moves[i]
        if not is_legal_move(bd, ks, side, m, in_chk):
            continue
        frm = m >> 7
        to = m & 127
        p = bd[frm]
        cap = bd[to]
        bd[to] = p
        bd[frm] = 0
        if abs(p) == KING:
            ks[side] = to
        mated = False
        if king_attacked(bd, ks[opp], opp):
            budget[0] -= 1
            mated = True
            replies = buf[ply + 1]
            nr = gen_moves(bd, opp, replies, False)
            for r in range(nr):
                rm = replies[r]
                if not is_legal_move(bd, ks, opp, rm, True):
                    continue
                if depth <= 1:
                    mated = False
                    break
                rf_ = rm >> 7
                rt = rm & 127
                q = bd[rf_]
                rc = bd[rt]
                bd[rt] = q
                bd[rf_] = 0
                if abs(q) == KING:
                    ks[opp] = rt
                sub = mates_by_checks(bd, ks, side, depth - 1, buf, ply + 2, budget)
                bd[rf_] = q
                bd[rt] = rc
                if abs(q) == KING:
                    ks[opp] = rf_
                if not sub:
                    mated = False
                    break
        bd[frm] = p
        bd[to] = cap
        if abs(p) == KING:
            ks[side] = frm
        if mated:
            return True
    return False


@njit
def _is_kill(bd, ks, frm, to, mover, buf):
    """True if the non-capturing move ``frm`` → ``to`` (not yet played) creates a mate threat by
    checks (杀, 24.2: with the mover to move again it mates, and it could not before)."""
    budget = np.empty(1, np.int64)
    budget[0] = KILL_NODES
    p = bd[frm]
    bd[to] = p
    bd[frm] = 0
    if abs(p) == KING:
        ks[mover] = to
    after = mates_by_checks(bd, ks, mover, KILL_DEPTH, buf, 0, budget)
    bd[frm] = p
    bd[to] = 0
    if abs(p) == KING:
        ks[mover] = frm
    if not after:
        return False
    budget[0] = KILL_NODES
    return not mates_by_checks(bd, ks, mover, KILL_DEPTH, buf, 0, budget)


@njit
def _shift(bd, ks, frm, to):
    """Move the piece on ``frm`` to the empty point ``to`` (a recorded quiet move, played or taken
    back), keeping the king squares ``ks`` (index 0 Red's, 1 Black's) right."""
    p = bd[frm]
    bd[to] = p
    bd[frm] = 0
    if p == KING:
        ks[0] = to
    elif p == -KING:
        ks[1] = to


@njit
def _undo_to(bd, ks, rf, j, hp):
    """Take back the recorded non-capturing moves into positions ``hp`` … ``j + 1``; False (board
    unchanged) if the record does not fit the board (a key collision)."""
    for i in range(hp, j, -1):
        m = rf[i] >> 8
        frm = m >> 7
        to = m & 127
        p = bd[to]
        if p == 0 or bd[frm] != 0:
            _replay(bd, ks, rf, i + 1, hp)
            return False
        _shift(bd, ks, to, frm)
    return True


@njit
def _attacks_every_move(bd, ks, side, rf, j, hp, who):
    """True if every move of one side of the cycle (``who``: 0 the side to move at ``hp``, 1 the
    other) checks, chases or threatens mate (杀): the CXA test of a forbidden cycle, kills
    included. ``bd``/``ks`` hold position ``hp`` and are restored."""
    if not _undo_to(bd, ks, rf, j, hp):
        return False
    out = np.empty(MAX_TARGETS, np.int64)
    scratch = np.empty(MAX_MOVES, np.int64)
    buf = np.empty((2 * KILL_DEPTH + 2, MAX_MOVES), np.int64)
    attacks = True
    for i in range(j + 1, hp + 1):
        m = rf[i] >> 8
        frm = m >> 7
        to = m & 127
        w = 1 if (hp - i) % 2 == 0 else 0
        mover = 1 - side if w == 1 else side
        p = bd[frm]
        if attacks and w == who and (rf[i] & 1) == 0:
            answers = abs(p) == KING and (rf[i - 1] & 1) != 0
            kill = not answers and _is_kill(bd, ks, frm, to, mover, buf)
            nc = 0
            if not answers and not kill:
                nc = move_chases(bd, ks, frm, to, mover, False, out, scratch)
                _shift(bd, ks, to, frm)  # move_chases played it: take it back, the replay below plays it
            if not kill and nc == 0:
                attacks = False
        _shift(bd, ks, frm, to)
    return attacks


@njit
def _replay(bd, ks, rf, i0, i1):
    """Play the recorded non-capturing moves into positions ``i0..i1`` on ``bd``/``ks``."""
    for i in range(i0, i1 + 1):
        m = rf[i] >> 8
        frm = m >> 7
        to = m & 127
        _shift(bd, ks, frm, to)


@njit
def cycle_verdict(bd, ks, side, rk, rf, j, hp, rules):
    """The score, for ``side`` to move at ``hp``, of the repetition of position ``j`` at ``hp``.

    ``bd``/``ks`` hold position ``hp`` (restored on return). ``rules``: ``RULES_CXA``,
    ``RULES_AXF`` or ``RULES_CHECKS`` (checks only, chases not judged). Returns ``REP_WIN`` when
    the opponent's moves of the cycle are forbidden and ours are not, ``-REP_WIN`` for the
    reverse, else 0 (draw); see the module docstring.
    """
    # perpetual check first (RULES_CXA §4.1: 长将 must change against anything)
    opp_chk, us_chk = perpetual_checks(rf, j, hp)
    if opp_chk and not us_chk:
        return REP_WIN
    if us_chk and not opp_chk:
        return -REP_WIN
    if opp_chk or rules == RULES_CHECKS:
        return 0
    for i in range(j + 1, hp + 1):
        if (rf[i] >> 8) == 0:
            return 0  # a move of the cycle is not recorded: judged by checks only
    # walk back to position j (every move of the cycle is a non-capture)
    if not _undo_to(bd, ks, rf, j, hp):
        return 0
    axf = rules == RULES_AXF
    ident = np.empty(90, np.int64)  # identity of the piece on each square: its square at position j
    for sq in range(90):
        ident[sq] = sq
    common = np.zeros((2, 90), np.int64)  # per side (0 us, 1 opp): chases of each identity
    nmov = np.zeros(2, np.int64)
    alive = np.ones(2, np.bool_)  # every move so far checks or chases
    out = np.empty(MAX_TARGETS, np.int64)
    scratch = np.empty(MAX_MOVES, np.int64)
    for i in range(j + 1, hp + 1):
        m = rf[i] >> 8
        frm = m >> 7
        to = m & 127
        who = 1 if (hp - i) % 2 == 0 else 0
        mover = 1 - side if who == 1 else side
        nmov[who] += 1
        p = bd[frm]
        judge = alive[who] and (axf or (rf[i] & 1) == 0)
        if judge and abs(p) == KING and (rf[i - 1] & 1) != 0:
            alive[who] = False  # a king move answering a check is 闲 (通则 2)
            judge = False
        if judge:
            nc = move_chases(bd, ks, frm, to, mover, False, out, scratch)
            if nc == 0:
                alive[who] = False
            elif axf:
                for c in range(nc):
                    common[who, ident[out[c]]] += 1
        else:
            _shift(bd, ks, frm, to)
        ident[to] = ident[frm]
    forb = np.zeros(2, np.bool_)
    for w in range(2):
        if alive[w]:
            if axf:
                for sq in range(90):
                    if common[w, sq] == nmov[w]:
                        forb[w] = True
                        break
            else:
                forb[w] = True
    if forb[0] != forb[1] and not axf:
        # the side found allowed may still attack on every move with mate threats (杀), which
        # this first pass does not look for (a costlier search): then both are forbidden, a draw
        w = 0 if forb[1] else 1
        if _attacks_every_move(bd, ks, side, rf, j, hp, w):
            return 0
    if forb[1] and not forb[0]:
        return REP_WIN
    if forb[0] and not forb[1]:
        return -REP_WIN
    return 0
