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
  checkmated or stalemated now, 困毙 loses);
* ``RULE + d`` / ``-(RULE + d)`` (:data:`RULE` = 30000, tables of the ``cxa-check`` model only):
  the side to move wins / loses by the rule that one-sided perpetual check (长将) loses, ``d``
  plies before the loser stands in a perpetual core (see :func:`perpetual_core`); no mate.

Layout arrays describe each table: pieces are *slots* (0 = Red king, 1 = Black
king, then the groups of identical pieces); a group's squares are chosen from a
square list (:data:`SQL`) and ranked as a combination; the index is the mixed
radix number of the group ranks. The Red king's list holds files d–e only: a
position with the Red king on file f is mirrored left–right first.
"""

from __future__ import annotations

import numpy as np

from xiangqi.engine._numba import njit
from xiangqi.engine.consts import MAX_MOVES, REP_WIN
from xiangqi.engine.movegen import gen_legal, gen_legal_known, king_attacked

INVALID = -32768
#: Codes of the repetition rule (one-sided perpetual check 长将 loses, RULES.md 5.4.1): ``RULE + d``
#: (``d`` odd) the side to move wins by the rule, ``-(RULE + d)`` (``d`` even) it loses by the rule;
#: ``d`` is the number of plies until the loser stands in a *perpetual core* (``d = 0``: there now).
RULE = 30000
MAX_DTM = RULE - 1  # the longest mate a table can hold (plies)
#: A draw marked as a candidate of the perpetual core while :func:`perpetual_core` searches (never in
#: a file; rule distances stay far below ``CAND - RULE``).
CAND = 32767

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
                off, size, subvals, sublut, cap_sub, cap_flip, cap_src, scratch):
    """Value (for the side to move there) of the child after side ``s`` plays ``m``.

    Quiet moves stay in table 0 (``cur``); a capture of slot ``j`` goes to
    sub-table ``cap_sub[j]`` (``-1``: no mating material left, a draw), with the
    colours swapped when ``cap_flip[j]``. ``subvals`` holds the sub-tables' codes, or (``sublut``
    not empty) one byte per entry, ``sublut[byte]`` its code (see ``tablebase._load_subtables``).
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
    v = subvals[off[t] + side * size[t] + cidx]
    if sublut.shape[0] > 0:
        return sublut[v]
    return v


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
def run_pass(n, cur, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals, sublut,
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
                                glist, radix, nsl, off, size, subvals, sublut,
                                cap_sub, cap_flip, cap_src, scratch)
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


# ---------------------------------------------------------------------------------------------
# Un-move (retrograde) generation. Pass n re-examines only the positions that can change at n:
# the parents (found by un-moves) of the positions resolved at pass n - 1, and the positions
# whose capture into a sub-ending decides them at n (their "trigger", computed once). The
# re-examination is the forward test of run_pass, so the values are exactly those of the
# forward scan (tested); only the work differs.

# (rank, file) steps of the un-moves by piece type: king, advisor, elephant (with its eye), horse
# (with the leg next to the origin square)
_KSTEP = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.int64)
_ASTEP = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], np.int64)
# horse: origin offset (dr, df) from the target, and the leg square as an offset from the origin
_HSTEP = np.array([[2, 1, -1, 0], [2, -1, -1, 0], [-2, 1, 1, 0], [-2, -1, 1, 0],
                   [1, 2, 0, -1], [-1, 2, 0, -1], [1, -2, 0, 1], [-1, -2, 0, 1]], np.int64)


@njit
def _unmove_origins(bd, to, p, out):
    """Squares a piece ``p`` (signed code) on ``to`` can have come from by a quiet move (a superset
    where a list check follows in :func:`encode`). Writes them into ``out``; returns the count."""
    r = to // 9
    f = to % 9
    t = p if p > 0 else -p
    n = 0
    if t == 1:
        for i in range(4):
            rr = r + _KSTEP[i, 0]
            ff = f + _KSTEP[i, 1]
            if 0 <= rr <= 9 and 3 <= ff <= 5 and bd[rr * 9 + ff] == 0:
                out[n] = rr * 9 + ff
                n += 1
    elif t == 2:
        for i in range(4):
            rr = r + _ASTEP[i, 0]
            ff = f + _ASTEP[i, 1]
            if 0 <= rr <= 9 and 3 <= ff <= 5 and bd[rr * 9 + ff] == 0:
                out[n] = rr * 9 + ff
                n += 1
    elif t == 3:
        for i in range(4):
            rr = r + 2 * _ASTEP[i, 0]
            ff = f + 2 * _ASTEP[i, 1]
            if 0 <= rr <= 9 and 0 <= ff <= 8 and bd[rr * 9 + ff] == 0 and \
                    bd[(r + _ASTEP[i, 0]) * 9 + f + _ASTEP[i, 1]] == 0:
                out[n] = rr * 9 + ff
                n += 1
    elif t == 4:
        for i in range(8):
            rr = r + _HSTEP[i, 0]
            ff = f + _HSTEP[i, 1]
            if 0 <= rr <= 9 and 0 <= ff <= 8 and bd[rr * 9 + ff] == 0 and \
                    bd[(rr + _HSTEP[i, 2]) * 9 + ff + _HSTEP[i, 3]] == 0:
                out[n] = rr * 9 + ff
                n += 1
    elif t == 5 or t == 6:
        for i in range(4):
            rr = r + _KSTEP[i, 0]
            ff = f + _KSTEP[i, 1]
            while 0 <= rr <= 9 and 0 <= ff <= 8 and bd[rr * 9 + ff] == 0:
                out[n] = rr * 9 + ff
                n += 1
                rr += _KSTEP[i, 0]
                ff += _KSTEP[i, 1]
    elif t == 7:
        fwd = 1 if p > 0 else -1
        rr = r - fwd
        if 0 <= rr <= 9 and bd[rr * 9 + f] == 0:
            out[n] = rr * 9 + f
            n += 1
        crossed = r >= 5 if p > 0 else r <= 4
        if crossed:
            for df in (-1, 1):
                ff = f + df
                if 0 <= ff <= 8 and bd[r * 9 + ff] == 0:
                    out[n] = r * 9 + ff
                    n += 1
    return n


@njit
def _resolve(n, s, sqs, csq, sub, cur, bd, slot_of, ks, moves, nslots, ng, gstart, gcnt, glist, radix,
             nsl, off, size, subvals, sublut, cap_sub, cap_flip, cap_src, scratch):
    """The forward test of pass ``n`` for side ``s`` of the position on ``bd``: its new code, or 0."""
    odd = n % 2 == 1
    nm = gen_legal(bd, ks, s, moves)
    res = 0 if odd else -(n + 1)
    for i in range(nm):
        v = child_value(s, moves[i], sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart, gcnt,
                        glist, radix, nsl, off, size, subvals, sublut, cap_sub, cap_flip, cap_src, scratch)
        if odd:
            if v == -n:
                return n
        elif not (0 < v <= n - 1):
            return 0
    return res


@njit
def _fold_capture(v, win, lose):
    """One capture's child value ``v`` (the opponent's, after the capture) folded into a
    position's ``(win, lose)`` capture summary: ``win`` the shortest win through a capture
    (0: none yet), ``lose`` one more than the longest capture that loses (-1: some capture
    does not lose, or is decided by the repetition rule, so no mate trigger)."""
    if v >= RULE or v <= -RULE:
        return win, -1
    if v < 0:
        if win == 0 or -v < win:
            win = -v
        return win, lose
    if v > 0:
        if lose >= 0 and v + 1 > lose:
            lose = v + 1
        return win, lose
    return win, -1


@njit
def _capture_trigger(win, lose, ncap):
    """The pass at which captures decide a position (see :func:`capture_triggers`), from its
    :func:`_fold_capture` summary over ``ncap`` captures."""
    if win == 0 and ncap > 0 and lose > 0:
        return lose
    return win


@njit
def capture_triggers(cur, trig, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals,
                     sublut, cap_sub, cap_flip, cap_src):
    """For every unresolved legal position: the pass at which its captures can decide it.

    ``trig[s, idx]``: the shortest win through a capture (a capture into a sub-ending
    position lost in ``k`` plies wins in ``k + 1``), else, when every capture wins for
    the opponent, one more than the longest of them (the position cannot be lost
    earlier), else 0. Returns the largest trigger.
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
    top = 0
    for idx in range(N):
        if cur[0, idx] != 0 and cur[1, idx] != 0:
            continue
        decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
        _setup(sqs, nslots, piece, bd, slot_of, ks)
        for s in range(2):
            if cur[s, idx] != 0:
                continue
            nm = gen_legal(bd, ks, s, moves)
            win = 0
            lose = 0
            ncap = 0
            for i in range(nm):
                m = moves[i]
                if bd[m & 127] == 0:
                    continue
                ncap += 1
                v = child_value(s, m, sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart, gcnt,
                                glist, radix, nsl, off, size, subvals, sublut,
                                cap_sub, cap_flip, cap_src, scratch)
                win, lose = _fold_capture(v, win, lose)
            t = _capture_trigger(win, lose, ncap)
            trig[s, idx] = t
            if t > top:
                top = t
        _clear(sqs, nslots, bd, slot_of)
    return top


@njit
def _mark_parents(s, sqs, csq, cur, dirty, bd, piece, nslots, ng, gstart, gcnt, glist, radix, scratch,
                  orig):
    """Mark (in ``dirty``) the unresolved parents, side ``1 - s`` to move, of the position ``sqs``
    (side ``s`` to move) by a quiet un-move; with the Red king on the centre file both mirror images."""
    p = 1 - s
    for k in range(nslots):
        code = piece[k]
        if (code > 0) != (p == 0):
            continue
        to = sqs[k]
        no = _unmove_origins(bd, to, code, orig)
        for j in range(no):
            for q in range(nslots):
                csq[q] = sqs[q]
            csq[k] = orig[j]
            pidx = encode(0, csq, ng, gstart, gcnt, glist, radix, scratch)
            if pidx < 0:
                continue
            if cur[p, pidx] == 0:
                dirty[p, pidx] = 1
            if csq[0] % 9 == 4:
                for q in range(nslots):
                    f = csq[q] % 9
                    csq[q] = csq[q] - f + 8 - f
                pidx = encode(0, csq, ng, gstart, gcnt, glist, radix, scratch)
                if pidx >= 0 and cur[p, pidx] == 0:
                    dirty[p, pidx] = 1


@njit
def retro_pass(n, cur, trig, dirty, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals,
               sublut, cap_sub, cap_flip, cap_src):
    """Pass ``n >= 1`` by un-moves: the same result as :func:`run_pass`, visiting only the parents of
    the positions resolved at pass ``n - 1`` and the positions triggered at ``n``.

    Returns ``(resolved, examined)``.
    """
    N = cur.shape[1]
    sqs = np.zeros(nslots, np.int64)
    csq = np.zeros(nslots, np.int64)
    sub = np.zeros(nslots, np.int64)
    scratch = np.zeros(8, np.int64)
    orig = np.zeros(32, np.int64)
    bd = np.zeros(90, np.int8)
    slot_of = np.full(90, -1, np.int64)
    ks = np.zeros(2, np.int64)
    moves = np.zeros(MAX_MOVES, np.int64)
    # the codes resolved at pass n - 1: lost in n - 1 (code -n) before a win pass, won in n - 1 before
    # a loss pass
    last = -n if n % 2 == 1 else n - 1
    for idx in range(N):
        a = cur[0, idx]
        b = cur[1, idx]
        if trig[0, idx] == n and a == 0:
            dirty[0, idx] = 1
        if trig[1, idx] == n and b == 0:
            dirty[1, idx] = 1
        if a != last and b != last:
            continue
        decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
        _setup(sqs, nslots, piece, bd, slot_of, ks)
        for s in range(2):
            if cur[s, idx] == last:
                _mark_parents(s, sqs, csq, cur, dirty, bd, piece, nslots, ng, gstart, gcnt, glist, radix,
                              scratch, orig)
        _clear(sqs, nslots, bd, slot_of)
    changed = 0
    examined = 0
    for idx in range(N):
        if dirty[0, idx] == 0 and dirty[1, idx] == 0:
            continue
        decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
        _setup(sqs, nslots, piece, bd, slot_of, ks)
        for s in range(2):
            if dirty[s, idx] == 0:
                continue
            dirty[s, idx] = 0
            if cur[s, idx] != 0:
                continue
            examined += 1
            res = _resolve(n, s, sqs, csq, sub, cur, bd, slot_of, ks, moves, nslots, ng, gstart, gcnt, glist,
                           radix, nsl, off, size, subvals, sublut, cap_sub, cap_flip, cap_src, scratch)
            if res != 0:
                cur[s, idx] = res
                changed += 1
        _clear(sqs, nslots, bd, slot_of)
    return changed, examined


# ---------------------------------------------------------------------------------------------
# The repetition rule (model "cxa-check"): one-sided perpetual check loses for the checker. Run on
# the values of the mate passes; only draws change. A *perpetual core* is a greatest fixpoint of
# drawn positions (side X to move) where every move of X that does not lose otherwise is a quiet
# check staying in the table, and after each of them the opponent has a quiet move giving no check
# back into the core: X can hold only by checking for ever while the opponent never checks, so X
# loses (code -RULE). rule_pass then spreads the result backwards like the mate passes (wins by
# the rule at odd distances, losses at even ones), and the core is sought again among the draws
# left, until nothing changes.


@njit
def _qmove(bd, slot_of, sqs, ks, frm, to):
    """Play the quiet move ``frm -> to`` on the kernel board and the slot squares."""
    k = slot_of[frm]
    bd[to] = bd[frm]
    bd[frm] = 0
    slot_of[to] = k
    slot_of[frm] = -1
    sqs[k] = to
    if k < 2:
        ks[k] = to


@njit
def _drawing_checks(s, sqs, csq, sub, cur, bd, slot_of, ks, moves, out, nslots, ng, gstart, gcnt, glist,
                    radix, nsl, off, size, subvals, sublut, cap_sub, cap_flip, cap_src, scratch):
    """The moves of side ``s`` (to move on ``bd``) whose child is a draw, written into ``out``; their
    number, or -1 when one of them is a capture, gives no check or when a child is lost for the
    opponent (then the position cannot be in a perpetual core)."""
    nm = gen_legal(bd, ks, s, moves)
    k = 0
    for i in range(nm):
        m = moves[i]
        v = child_value(s, m, sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart, gcnt, glist, radix, nsl,
                        off, size, subvals, sublut, cap_sub, cap_flip, cap_src, scratch)
        if v == CAND:
            v = 0  # a candidate of the core being searched: a draw
        if v > 0:
            continue  # the opponent wins there: not a way to hold
        if v < 0:
            return -1
        frm = m >> 7
        to = m & 127
        if bd[to] != 0:
            return -1
        _qmove(bd, slot_of, sqs, ks, frm, to)
        chk = king_attacked(bd, ks[1 - s], 1 - s)
        _qmove(bd, slot_of, sqs, ks, to, frm)
        if not chk:
            return -1
        out[k] = m
        k += 1
    return k


@njit
def _quiet_return(y, cur, sqs, bd, slot_of, ks, moves, ng, gstart, gcnt, glist, radix, scratch):
    """True when side ``y`` (to move on ``bd``) has a quiet move that gives no check and leads to a
    candidate of the perpetual core (code :data:`CAND` in ``cur``, the other side to move)."""
    x = 1 - y
    nm = gen_legal(bd, ks, y, moves)
    for i in range(nm):
        m = moves[i]
        frm = m >> 7
        to = m & 127
        if bd[to] != 0:
            continue
        _qmove(bd, slot_of, sqs, ks, frm, to)
        found = False
        if not king_attacked(bd, ks[x], x):
            j = encode(0, sqs, ng, gstart, gcnt, glist, radix, scratch)
            found = j >= 0 and cur[x, j] == CAND
        _qmove(bd, slot_of, sqs, ks, to, frm)
        if found:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Probing inside the search. The tables an engine has are packed into two arrays (built by
# tablebase.pack_tables): ``tbv`` int16, the values of every table one after the other (row 0
# Red to move, then row 1), and ``tbd`` int64 [tables, TBD_WIDTH], one row per table:
TBD_KEY, TBD_OFF, TBD_N, TBD_NG, TBD_NSLOTS = range(5)
TBD_SLOT = 5  # 15 entries: first slot of each signed piece code (code + 7), -1 if absent
TBD_GROUP = 20  # 4 entries per group: start slot, count, square list, radix
TBD_WIDTH = TBD_GROUP + 4 * 8
NO_TB = -32768 - 1  # tb_code: no table holds the position


@njit
def material_key(counts_red, counts_black):
    """Key of a material balance: 3 bits per piece type (advisor..pawn) and colour."""
    key = 0
    for t in range(2, 8):
        key |= counts_red[t] << (3 * (t - 2))
        key |= counts_black[t] << (18 + 3 * (t - 2))
    return key


@njit
def tb_code(bd, side, tbv, tbd):
    """The table code (:data:`INVALID`-free, side to move's view) of the kernel position ``bd`` with
    ``side`` to move (0 Red), or :data:`NO_TB` when it has more than 8 pieces or no table is packed
    for its material. A position with the stronger side Black is looked up turned round."""
    nt = tbd.shape[0]
    if nt == 0:
        return NO_TB
    cr = np.zeros(8, np.int64)
    cb = np.zeros(8, np.int64)
    npieces = 0
    for sq in range(90):
        p = bd[sq]
        if p != 0:
            npieces += 1
            if npieces > 8:
                return NO_TB
            if p > 0:
                cr[p] += 1
            else:
                cb[-p] += 1
    k0 = material_key(cr, cb)
    k1 = material_key(cb, cr)
    row = -1
    flip = False
    for t in range(nt):
        if tbd[t, TBD_KEY] == k0:
            row = t
            break
        if tbd[t, TBD_KEY] == k1:
            row = t
            flip = True
            break
    if row < 0:
        return NO_TB
    nslots = tbd[row, TBD_NSLOTS]
    sqs = np.zeros(nslots, np.int64)
    fill = np.zeros(15, np.int64)
    for sq in range(90):
        p = bd[sq]
        if p == 0:
            continue
        q = -p if flip else p
        s = flip_sq(sq) if flip else sq
        sqs[tbd[row, TBD_SLOT + q + 7] + fill[q + 7]] = s
        fill[q + 7] += 1
    mirror = (sqs[0] % 9) > 4
    scratch = np.zeros(8, np.int64)
    idx = 0
    for g in range(tbd[row, TBD_NG]):
        base = TBD_GROUP + 4 * g
        st = tbd[row, base]
        c = tbd[row, base + 1]
        lst = tbd[row, base + 2]
        for i in range(c):
            sq = sqs[st + i]
            if mirror:
                f = sq % 9
                sq = sq - f + 8 - f
            pos = SQPOS[lst, sq]
            if pos < 0:
                return NO_TB
            j = i
            while j > 0 and scratch[j - 1] > pos:
                scratch[j] = scratch[j - 1]
                j -= 1
            scratch[j] = pos
        r = 0
        for i in range(c):
            r += BINOM[scratch[i], i + 1]
        idx = idx * tbd[row, base + 3] + r
    s2 = 1 - side if flip else side
    v = tbv[tbd[row, TBD_OFF] + s2 * tbd[row, TBD_N] + idx]
    if v == INVALID:
        return NO_TB
    return v


@njit
def tb_score(bd, side, ply, tbv, tbd, mate):
    """Search score of the position from the tables (mate-distance scores: ``mate - ply - plies`` for a
    win; a win by the repetition rule ``REP_WIN - ply - d``, the search's own score of a won
    repetition less the distance to the perpetual core), or :data:`NO_TB`."""
    v = tb_code(bd, side, tbv, tbd)
    if v == NO_TB:
        return NO_TB
    if v >= RULE:  # a win by the repetition rule: below every mate, the nearer the better
        return REP_WIN - ply - (v - RULE)
    if v <= -RULE:
        return -(REP_WIN - ply - (-v - RULE))
    if v > 0:
        return mate - ply - v
    if v < 0:
        return -(mate - ply - (-v - 1))
    return 0


# ---------------------------------------------------------------------------------------------
# Counter passes (method "count", the default): no move generation after pass 0. Pass 0 counts, for
# every position, its quiet legal moves (children in this table) plus one when a capture leads to
# a child that is not won for the opponent (that capture can never let the position be lost); it
# also computes the capture trigger above. Pass n odd: every exact parent (by un-moves) of a
# position lost at n - 1 is won in n (it has a child lost at n - 1), and so is every position
# whose trigger is n. Pass n even: every exact parent of a position won at n - 1 loses one from its
# counter; at zero every child is won, the last one at n - 1, so the parent is lost in n unless a
# capture wins for the opponent later (its trigger, even, is then the pass of the loss). Same values
# as the forward scan (tested), one un-move generation per resolved position instead of one move
# generation per re-examined one. The passes run in parallel (numba prange over blocks of indices);
# a counter is decremented atomically, every other write sets an unresolved code to the value of the
# pass, the same whichever thread writes it.

import numba as _nb  # noqa: E402
from llvmlite import ir as _ir  # noqa: E402
from numba.core import cgutils as _cgutils  # noqa: E402
from numba.extending import intrinsic as _intrinsic  # noqa: E402

BLOCK = 4096  # indices per parallel work item


def _pjit(func):
    return _nb.njit(cache=True, nogil=True, parallel=True)(func)


# Packed entries of the counter method: while the mate passes run, an unresolved entry of ``cur``
# (int16) holds its counter and its capture trigger, ``PK_BASE + (trigger << PK_CBITS) + counter``
# (counter 0..PK_CMAX, trigger 0..PK_TMAX: the range PK_BASE..PK_TOP, below every code a pass
# writes); a resolved entry holds its final code, INVALID stays INVALID. One array of 2 bytes per
# index and side to move instead of values, counters and triggers apart (4-6 bytes); the unresolved
# entries become draws (0) after the last pass (:func:`unpack_draws`).
PK_BASE = -32767
PK_CBITS = 6
PK_CMAX = (1 << PK_CBITS) - 1  # 63: the most children counted (quiet legal moves + 1)
PK_TMAX = 255  # the largest trigger (one more than the longest mate of a sub-table)
PK_TOP = PK_BASE + (PK_TMAX << PK_CBITS) + PK_CMAX  # -16384
PK_MAX_PASS = -(PK_TOP + 1) - 1  # 16382: a loss code -(n + 1) must stay above PK_TOP


@_intrinsic
def _atomic_dec_i16(typingctx, arr, i, j):
    """``arr[i, j] -= 1`` atomically on a C-contiguous 2-D int16 array; returns the old value."""
    sig = _nb.types.int16(arr, i, j)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = _cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]])
        return builder.atomic_rmw("sub", ptr, _ir.Constant(_ir.IntType(16), 1), "monotonic")

    return sig, codegen


@_pjit
def init_counts(cur, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals, sublut,
                cap_sub, cap_flip, cap_src, lo, hi, out):
    """Pass 0 of the counter method over the indices ``lo <= idx < hi`` (a range, so that a long pass 0
    can be checkpointed between ranges): :func:`init_table`, :func:`capture_triggers` and the
    counters in one scan (one move generation per position). An unresolved entry is packed
    (``PK_BASE + (trigger << PK_CBITS) + counter``; counter: quiet legal moves plus one when a
    capture's child is not won for the opponent). ``out[0]`` receives the legal positions,
    ``out[1]`` the largest trigger, ``out[2]`` the largest counter, ``out[3]`` the entries whose
    counter or trigger did not fit (the caller refuses the table then)."""
    nblocks = (hi - lo + BLOCK - 1) // BLOCK
    legal_b = np.zeros(nblocks, np.int64)
    top_b = np.zeros(nblocks, np.int64)
    cmax_b = np.zeros(nblocks, np.int64)
    over_b = np.zeros(nblocks, np.int64)
    for b in _nb.prange(nblocks):
        sqs = np.zeros(nslots, np.int64)
        csq = np.zeros(nslots, np.int64)
        sub = np.zeros(nslots, np.int64)
        scratch = np.zeros(8, np.int64)
        bd = np.zeros(90, np.int8)
        slot_of = np.full(90, -1, np.int64)
        ks = np.zeros(2, np.int64)
        moves = np.zeros(MAX_MOVES, np.int64)
        legal = 0
        top = 0
        cmax = 0
        over = 0
        for idx in range(lo + b * BLOCK, min(hi, lo + (b + 1) * BLOCK)):
            decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
            ok = _setup(sqs, nslots, piece, bd, slot_of, ks)
            if not ok:
                cur[0, idx] = INVALID
                cur[1, idx] = INVALID
                bd[:] = 0
                slot_of[:] = -1
                continue
            att0 = king_attacked(bd, ks[0], 0)  # the Red king attacked: Black to move is no position
            att1 = king_attacked(bd, ks[1], 1)
            for s in range(2):
                if att1 if s == 0 else att0:
                    cur[s, idx] = INVALID
                    continue
                legal += 1
                nm = gen_legal_known(bd, ks, s, moves, att0 if s == 0 else att1)
                if nm == 0:
                    cur[s, idx] = -1
                    continue
                quiet = 0
                block = 0
                win = 0
                lose = 0
                ncap = 0
                for i in range(nm):
                    m = moves[i]
                    if bd[m & 127] == 0:
                        quiet += 1
                        continue
                    ncap += 1
                    v = child_value(s, m, sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart, gcnt, glist,
                                    radix, nsl, off, size, subvals, sublut, cap_sub, cap_flip, cap_src,
                                    scratch)
                    if not (0 < v < RULE):
                        block = 1
                    win, lose = _fold_capture(v, win, lose)
                t = _capture_trigger(win, lose, ncap)
                c = quiet + block
                if t > top:
                    top = t
                if c > cmax:
                    cmax = c
                if t > PK_TMAX or c > PK_CMAX:
                    over += 1
                    t = min(t, PK_TMAX)
                    c = min(c, PK_CMAX)
                cur[s, idx] = PK_BASE + (t << PK_CBITS) + c
            _clear(sqs, nslots, bd, slot_of)
        legal_b[b] = legal
        top_b[b] = top
        cmax_b[b] = cmax
        over_b[b] = over
    out[0] = legal_b.sum()
    out[1] = top_b.max() if nblocks > 0 else 0
    out[2] = cmax_b.max() if nblocks > 0 else 0
    out[3] = over_b.sum()


@njit
def _exact_parents(n, s, sqs, csq, cur, bd, piece, slot_of, ks, nslots, ng, gstart, gcnt, glist,
                   radix, scratch, orig):
    """For the position ``sqs`` (side ``s`` to move, just resolved) visit every parent, side ``p = 1 - s``
    to move, once per quiet legal move of the parent into this index: the positions that encode to
    it (itself, and its mirror image when the Red king stands on file d) un-moved by a piece of
    ``p``, kept when the Red king stays on files d-e (the stored image). Odd ``n``: an unresolved
    parent is won in ``n``. Even ``n``: its counter (the low bits of its packed entry) is
    decremented; at zero it is lost in ``n`` when its trigger allows. ``bd`` holds the position on
    entry and on return."""
    p = 1 - s
    images = 2 if sqs[0] % 9 == 3 else 1
    for im in range(images):
        if im == 1:
            _clear(sqs, nslots, bd, slot_of)
            for q in range(nslots):
                f = sqs[q] % 9
                sqs[q] = sqs[q] - f + 8 - f
            _setup(sqs, nslots, piece, bd, slot_of, ks)
        for k in range(nslots):
            code = piece[k]
            if (code > 0) != (p == 0):
                continue
            no = _unmove_origins(bd, sqs[k], code, orig)
            for j in range(no):
                if k == 0 and orig[j] % 9 > 4:
                    continue
                for q in range(nslots):
                    csq[q] = sqs[q]
                csq[k] = orig[j]
                if csq[0] % 9 > 4:
                    continue
                pidx = encode(0, csq, ng, gstart, gcnt, glist, radix, scratch)
                if pidx < 0:
                    continue
                w = cur[p, pidx]
                if w < PK_BASE or w > PK_TOP:
                    continue  # resolved or invalid
                if n % 2 == 1:
                    cur[p, pidx] = n
                else:
                    old = np.int64(_atomic_dec_i16(cur, p, pidx)) - PK_BASE
                    if (old & PK_CMAX) == 1 and (old >> PK_CBITS) <= n:
                        cur[p, pidx] = -(n + 1)
        if im == 1:
            _clear(sqs, nslots, bd, slot_of)
            for q in range(nslots):
                f = sqs[q] % 9
                sqs[q] = sqs[q] - f + 8 - f
            _setup(sqs, nslots, piece, bd, slot_of, ks)


@_pjit
def count_pass(n, cur, piece, nslots, ng, gstart, gcnt, glist, radix):
    """Pass ``n >= 1`` of the counter method (see above) on the packed ``cur``. The codes it writes
    are ``n`` (odd) or ``-(n + 1)`` (even); count them with :func:`count_code`. Returns the
    positions it started from (resolved at ``n - 1``)."""
    N = cur.shape[1]
    nblocks = (N + BLOCK - 1) // BLOCK
    last = -n if n % 2 == 1 else n - 1
    src_b = np.zeros(nblocks, np.int64)
    for b in _nb.prange(nblocks):
        sqs = np.zeros(nslots, np.int64)
        csq = np.zeros(nslots, np.int64)
        scratch = np.zeros(8, np.int64)
        orig = np.zeros(32, np.int64)
        bd = np.zeros(90, np.int8)
        slot_of = np.full(90, -1, np.int64)
        ks = np.zeros(2, np.int64)
        src = 0
        for idx in range(b * BLOCK, min(N, (b + 1) * BLOCK)):
            a = cur[0, idx]
            c = cur[1, idx]
            if a != last and c != last:
                continue
            decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
            _setup(sqs, nslots, piece, bd, slot_of, ks)
            for s in range(2):
                if cur[s, idx] == last:
                    src += 1
                    _exact_parents(n, s, sqs, csq, cur, bd, piece, slot_of, ks, nslots, ng, gstart,
                                   gcnt, glist, radix, scratch, orig)
            _clear(sqs, nslots, bd, slot_of)
        src_b[b] = src
    # the captures that decide at n (after the un-moves: a position whose counter reached zero in this
    # pass and whose trigger is n is lost in n either way)
    for b in _nb.prange(nblocks):
        for idx in range(b * BLOCK, min(N, (b + 1) * BLOCK)):
            for s in range(2):
                w = cur[s, idx]
                if w < PK_BASE or w > PK_TOP:
                    continue
                u = np.int64(w) - PK_BASE
                if (u >> PK_CBITS) == n:
                    if n % 2 == 1:
                        cur[s, idx] = n
                    elif (u & PK_CMAX) == 0:
                        cur[s, idx] = -(n + 1)
    return src_b.sum()


@_pjit
def unpack_draws(cur):
    """After the last pass of the counter method: every entry still packed (unresolved) is a draw (0)."""
    N = cur.shape[1]
    nblocks = (N + BLOCK - 1) // BLOCK
    for b in _nb.prange(nblocks):
        for idx in range(b * BLOCK, min(N, (b + 1) * BLOCK)):
            for s in range(2):
                w = cur[s, idx]
                if PK_BASE <= w <= PK_TOP:
                    cur[s, idx] = 0


@_pjit
def count_code(cur, code):
    """The number of entries of ``cur`` equal to ``code``."""
    N = cur.shape[1]
    nblocks = (N + BLOCK - 1) // BLOCK
    tot = 0
    for b in _nb.prange(nblocks):
        k = 0
        for idx in range(b * BLOCK, min(N, (b + 1) * BLOCK)):
            k += (cur[0, idx] == code) + (cur[1, idx] == code)
        tot += k
    return tot


@_pjit
def rule_pass(n, cur, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals, sublut,
              cap_sub, cap_flip, cap_src):
    """Pass ``n >= 1`` of the repetition rule over the drawn positions: odd ``n``, a win by the rule
    in ``n`` (a child lost by the rule at ``n - 1``: code ``RULE + n``); even ``n``, a loss by the
    rule (every child won for the opponent, by mate at any distance or by the rule at most
    ``n - 1``: code ``-(RULE + n)``). Returns the number of positions resolved.

    Parallel over blocks of indices: a position written in this pass (``RULE + n`` or
    ``-(RULE + n)``) decides no other position in the same pass, exactly like the draw it was, so
    the order of the blocks does not matter."""
    N = cur.shape[1]
    nblocks = (N + BLOCK - 1) // BLOCK
    changed_b = np.zeros(nblocks, np.int64)
    odd = n % 2 == 1
    target = -(RULE + n - 1)
    for b in _nb.prange(nblocks):
        sqs = np.zeros(nslots, np.int64)
        csq = np.zeros(nslots, np.int64)
        sub = np.zeros(nslots, np.int64)
        scratch = np.zeros(8, np.int64)
        bd = np.zeros(90, np.int8)
        slot_of = np.full(90, -1, np.int64)
        ks = np.zeros(2, np.int64)
        moves = np.zeros(MAX_MOVES, np.int64)
        changed = 0
        for idx in range(b * BLOCK, min(N, (b + 1) * BLOCK)):
            if cur[0, idx] != 0 and cur[1, idx] != 0:
                continue
            decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
            _setup(sqs, nslots, piece, bd, slot_of, ks)
            for s in range(2):
                if cur[s, idx] != 0:
                    continue
                nm = gen_legal(bd, ks, s, moves)
                res = 0 if odd else -(RULE + n)
                for i in range(nm):
                    v = child_value(s, moves[i], sqs, csq, sub, cur, bd, slot_of, nslots, ng, gstart,
                                    gcnt, glist, radix, nsl, off, size, subvals, sublut,
                                    cap_sub, cap_flip, cap_src,
                                    scratch)
                    if odd:
                        if v == target:
                            res = RULE + n
                            break
                    elif not ((0 < v < RULE) or (RULE <= v <= RULE + n - 1)):
                        res = 0
                        break
                if res != 0:
                    cur[s, idx] = res
                    changed += 1
            _clear(sqs, nslots, bd, slot_of)
        changed_b[b] = changed
    return changed_b.sum()


@_pjit
def _core_scan(cur, can_check, thin, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size,
               subvals, sublut, cap_sub, cap_flip, cap_src):
    """One parallel scan of :func:`perpetual_core`: ``thin`` False, mark the candidates (code
    :data:`CAND` in ``cur``); True, drop the candidates that fail (back to 0, a draw; the greatest
    fixpoint does not depend on the order in which they are dropped). Returns the candidates
    marked, or the number dropped."""
    N = cur.shape[1]
    nblocks = (N + BLOCK - 1) // BLOCK
    count_b = np.zeros(nblocks, np.int64)
    for b in _nb.prange(nblocks):
        sqs = np.zeros(nslots, np.int64)
        csq = np.zeros(nslots, np.int64)
        sub = np.zeros(nslots, np.int64)
        scratch = np.zeros(8, np.int64)
        bd = np.zeros(90, np.int8)
        slot_of = np.full(90, -1, np.int64)
        ks = np.zeros(2, np.int64)
        moves = np.zeros(MAX_MOVES, np.int64)
        replies = np.zeros(MAX_MOVES, np.int64)
        dm = np.zeros(MAX_MOVES, np.int64)
        count = 0
        for idx in range(b * BLOCK, min(N, (b + 1) * BLOCK)):
            if thin:
                if cur[0, idx] != CAND and cur[1, idx] != CAND:
                    continue
            else:
                a = cur[0, idx] == 0 and can_check[0]
                c = cur[1, idx] == 0 and can_check[1]
                if not a and not c:
                    continue
            decode(0, idx, sqs, ng, gstart, gcnt, glist, radix)
            _setup(sqs, nslots, piece, bd, slot_of, ks)
            for s in range(2):
                if thin:
                    if cur[s, idx] != CAND:
                        continue
                elif cur[s, idx] != 0 or not can_check[s]:
                    continue
                k = _drawing_checks(s, sqs, csq, sub, cur, bd, slot_of, ks, moves, dm, nslots, ng, gstart,
                                    gcnt, glist, radix, nsl, off, size, subvals, sublut, cap_sub, cap_flip,
                                    cap_src, scratch)
                if not thin:
                    if k > 0:
                        cur[s, idx] = CAND
                        count += 1
                    continue
                ok = k > 0
                for i in range(k):
                    frm = dm[i] >> 7
                    to = dm[i] & 127
                    _qmove(bd, slot_of, sqs, ks, frm, to)
                    back = _quiet_return(1 - s, cur, sqs, bd, slot_of, ks, replies, ng, gstart, gcnt, glist,
                                         radix, scratch)
                    _qmove(bd, slot_of, sqs, ks, to, frm)
                    if not back:
                        ok = False
                        break
                if not ok:
                    cur[s, idx] = 0
                    count += 1
            _clear(sqs, nslots, bd, slot_of)
        count_b[b] = count
    return count_b.sum()


def perpetual_core(cur, can_check, info, piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size,
                   subvals, sublut, cap_sub, cap_flip, cap_src):
    """Mark the perpetual cores of both sides (``-RULE``: lost by the rule, in the core) among the
    drawn positions of ``cur``; ``can_check[s]``: side ``s`` has a piece that can give check
    (else its core is empty); ``info[0]`` receives the number of candidates, ``info[1]`` the
    rounds of thinning. Returns the number of positions marked.

    A drawn position with X to move is a candidate when every move of X whose child is not won
    for the opponent is a quiet check into a drawn position of the table. The candidates are then
    thinned to a greatest fixpoint: one is dropped when after one of those checks the opponent has
    no quiet reply without check into a candidate. The cores of Red and Black are found together
    (a position on one side's cycle is never a candidate of the other: it has a quiet drawing move).
    The scans run in parallel (:func:`_core_scan`); the rounds counted depend on the order of the
    blocks, the core does not. The candidates are marked in ``cur`` itself (code :data:`CAND`, read
    as a draw by the scans), so the search needs no memory beyond the table.
    """
    args = (piece, nslots, ng, gstart, gcnt, glist, radix, nsl, off, size, subvals, sublut, cap_sub,
            cap_flip, cap_src)
    ncand = int(_core_scan(cur, can_check, False, *args))
    info[0] = ncand
    rounds = 0
    changed = ncand > 0
    while changed:
        rounds += 1
        changed = int(_core_scan(cur, can_check, True, *args)) > 0
    info[1] = rounds
    marked = _mark_core(cur)
    return marked


@njit
def _mark_core(cur):
    N = cur.shape[1]
    marked = 0
    for idx in range(N):
        for s in range(2):
            if cur[s, idx] == CAND:
                cur[s, idx] = -RULE
                marked += 1
    return marked
