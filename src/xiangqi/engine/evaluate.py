"""Static evaluation: material and piece-square tables by game phase, plus xiangqi patterns.

Scores are centipawn-like integers (a pawn before the river is worth about 30,
a rook about 600) from Red's point of view inside the tables; :func:`evaluate`
returns the score for the side to move.

The material part (``MG``/``EG`` and ``PHASE``) is kept incrementally by the
search's make/unmake (see :mod:`xiangqi.engine.search`); :func:`evaluate` adds
the terms that depend on the whole board: king safety (advisors and elephants
present, enemy heavy pieces on open lines toward the king), mobility of rooks and
horses, a horse blocked at its leg, rooks on open files, the central cannon and
connected advisors/elephants.

The numbers the engine plays with are **tuned** (Texel's method on 1.38 M quiet positions of
27,153 CCPD master games, tools/texel_tune.py, docs/ENGINE.md): the shipped file
``data/eval-texel-2026-12-01.npz`` (:data:`SHIPPED_TABLES`; how it was made:
``data/EVAL-README.md``), accepted on an SPRT against the hand-set tables (+151 ± 66 Elo at
equal nodes). The hand-set tables below (:data:`HAND_PST_MG`, :data:`HAND_PST_EG`,
:data:`HAND_W`) are the tuner's reference point and stay playable with ``XIANGQI_EVAL=hand``.
Their shapes are our own, built by the formulas below from common xiangqi opening/endgame
principles (crossed pawns gain value, especially near the palace; horses want the centre and
the enemy side; the king wants its home square).
"""

from __future__ import annotations

import os

import numpy as np

from xiangqi.engine._numba import njit
from xiangqi.engine.movegen import (
    ADVISOR,
    CANNON,
    ELEPHANT,
    H_LEG,
    H_N,
    HORSE,
    PAWN,
    RAY,
    RAY_N,
    ROOK,
)

# Hand-set material, midgame / endgame (index = piece type); the played values are the tuned
# ones (VALUE_MG/VALUE_EG after the tables are loaded, below).
HAND_VALUE_MG = np.array([0, 0, 110, 110, 280, 620, 300, 35], np.int64)
HAND_VALUE_EG = np.array([0, 0, 120, 110, 310, 660, 270, 60], np.int64)
# Game phase: horse 1, rook 3, cannon 1, so the full set of both sides is 20; against
# PHASE_MAX = 24 the opening still blends in a sixth of the endgame values.
PHASE_W = np.array([0, 0, 0, 0, 1, 3, 1, 0], np.int64)
PHASE_MAX = 24
# Simple piece values for move ordering (MVV-LVA) and SEE-like decisions.
ORDER_VALUE = np.array([0, 10000, 120, 120, 300, 650, 300, 60], np.int64)


def _pst_red(piece_type: int, mg: bool) -> list[int]:
    """Table for a Red piece, indexed by square (rank 0 = Red's back rank)."""
    out = []
    for sq in range(90):
        f, r = sq % 9, sq // 9
        centre = 4 - abs(f - 4)  # 0 (edge) … 4 (central file)
        v = 0
        if piece_type == PAWN:
            if r <= 4:
                v = 0 if r <= 3 else 5
                if r == 4 and f in (2, 4, 6):
                    v += 5
            elif r == 9:
                v = 10 if mg else 20  # 老兵 on the last rank: little left to do
            else:
                v = (35 + (r - 5) * 8) if mg else (55 + (r - 5) * 10)
                v += centre * (4 if mg else 5)
                if 3 <= f <= 5 and 6 <= r <= 8:
                    v += 20 if mg else 25  # next to or inside the palace
        elif piece_type == HORSE:
            v = centre * 5 + (min(r, 7) * 4)
            if f in (0, 8):
                v -= 15
            if r == 0:
                v -= 10
            if 2 <= f <= 6 and 6 <= r <= 8:
                v += 15  # close to the enemy palace
            if not mg:
                v = v // 2 + 5
        elif piece_type == ROOK:
            v = centre * 2 + (10 if r >= 5 else 0) + (8 if r in (6, 7) else 0)
            if r == 0 and mg:
                v -= 10
            if not mg:
                v = v // 2
        elif piece_type == CANNON:
            if mg:
                v = (20 if f == 4 else centre * 2) + (6 if r in (2, 3) else 0)
                if r == 9:
                    v += 10  # 沉底炮
                if r in (5, 6):
                    v -= 5
            else:
                v = centre * 2 + (8 if r <= 2 else 0)
        elif piece_type == 1:  # king
            v = {0: 10, 1: -10, 2: -30}.get(r, 0) - (8 if f != 4 else 0)
            if not mg:
                v = {0: 0, 1: 0, 2: -10}.get(r, 0)
        elif piece_type == ADVISOR:
            v = {(4, 1): 10, (3, 0): 0, (5, 0): 0, (3, 2): -5, (5, 2): -5}.get((f, r), 0)
        elif piece_type == ELEPHANT:
            v = {(4, 2): 10, (2, 0): 2, (6, 0): 2, (0, 2): -5, (8, 2): -5, (2, 4): -2,
                 (6, 4): -2}.get((f, r), 0)
        out.append(v)
    return out


def _build_psts() -> tuple[np.ndarray, np.ndarray]:
    """The hand-set ``(PST_MG, PST_EG)`` of shape (15, 90): index ``code + 7``, value from Red's view
    incl. material."""
    mg = np.zeros((15, 90), np.int64)
    eg = np.zeros((15, 90), np.int64)
    for t in range(1, 8):
        tm = _pst_red(t, True)
        te = _pst_red(t, False)
        for sq in range(90):
            f, r = sq % 9, sq // 9
            mirror = (9 - r) * 9 + f
            mg[t + 7, sq] = HAND_VALUE_MG[t] + tm[sq]
            eg[t + 7, sq] = HAND_VALUE_EG[t] + te[sq]
            mg[-t + 7, mirror] = -(HAND_VALUE_MG[t] + tm[sq])
            eg[-t + 7, mirror] = -(HAND_VALUE_EG[t] + te[sq])
    return mg, eg


HAND_PST_MG, HAND_PST_EG = _build_psts()

#: Environment variable choosing other evaluation tables than the shipped ones: the path of an
#: ``.npz`` (``PST_MG``, ``PST_EG`` int (15, 90), ``W`` int (12,), as tools/texel_tune.py writes
#: them: how a tuning candidate is played against the shipped evaluation, ``xiangqi match
#: --sprt``, docs/ENGINE.md), ``hand`` for the hand-set tables of this module, ``texel`` for the shipped
#: tables, or ``nnue`` (the same as unset: the default) for the network of :mod:`xiangqi.engine.nnue`
#: in the search (the shipped tables elsewhere). Any value but ``nnue`` makes the search play tables.
#: The Numba cache directory includes the file's digest (:mod:`._numba`), so kernels compiled with
#: other tables are never reused.
EVAL_ENV = "XIANGQI_EVAL"
#: The tuned tables the engine plays by default (candidate1 of 2026-12-01; data/EVAL-README.md).
SHIPPED_TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "eval-texel-2026-12-01.npz")

# Pattern weights (centipawns), hand-set; the tuned ones are in SHIPPED_TABLES.
HAND_W = np.array([
    3,    # 0 rook mobility per reachable square
    4,    # 1 horse mobility per free leg/destination
    -25,  # 2 horse with no move at all (blocked at every leg)
    15,   # 3 rook on a file with no own pawn (open/half-open file)
    40,   # 4 central cannon with an open line to the enemy king (空头炮)
    20,   # 5 central cannon aiming at the king through one screen (中炮)
    -20,  # 6 per missing advisor while the enemy has attackers
    -12,  # 7 per missing elephant while the enemy has attackers
    12,   # 8 connected elephants
    8,    # 9 connected advisors (one on the palace centre)
    20,   # 10 enemy rook on an open line toward the king
    10,   # 11 tempo (side to move)
    # king attack (king_attack: 0 in the hand-set tables, fitted by tools/texel_tune.py)
    0,    # 12 per own rook/horse/cannon/pawn in the enemy king's zone (files c-g, the last 4 ranks)
    0,    # 13 per such attacker beyond the first (attackers gathering)
    0,    # 14 cannon aimed at the enemy king through exactly one screen (炮架), any line
    0,    # 15 ... whose screen is an own horse (马后炮)
    0,    # 16 own horse on the 卧槽 square (c8/g8 from the attacker's side)
], np.int64)
#: Index of the first king-attack weight in ``W`` and the number of them (:func:`king_attack`).
KA_FIRST, KA_N = 12, 5
#: Weights of a tables file from before the king-attack terms (12): those terms are then 0.
OLD_W_LEN = 12


def load_tables(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(PST_MG, PST_EG, W)`` from a tuned ``.npz`` (see :data:`EVAL_ENV`).

    A ``W`` of the 12 weights from before the king-attack terms gets those terms as 0. Raises
    ValueError when an array is missing or has the wrong shape.
    """
    with np.load(path) as z:
        missing = [k for k in ("PST_MG", "PST_EG", "W") if k not in z.files]
        if missing:
            raise ValueError(f"{path}: no array {', '.join(missing)} (expected PST_MG, PST_EG, W)")
        mg, eg, w = (np.ascontiguousarray(z[k], dtype=np.int64) for k in ("PST_MG", "PST_EG", "W"))
    if w.shape == (OLD_W_LEN,):
        w = np.concatenate([w, np.zeros(len(HAND_W) - OLD_W_LEN, np.int64)])
    if mg.shape != (15, 90) or eg.shape != (15, 90) or w.shape != HAND_W.shape:
        raise ValueError(f"{path}: shapes {mg.shape}, {eg.shape}, {w.shape}; expected (15, 90), (15, 90), "
                         f"{HAND_W.shape}")
    return mg, eg, w


def load_material(path: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(VALUE_MG, VALUE_EG)`` (int (8,), per piece type) stored with tuned tables, or None when the
    file has none (the tables include the material; these are the tuner's split of it)."""
    with np.load(path) as z:
        if "VALUE_MG" not in z.files or "VALUE_EG" not in z.files:
            return None
        return (np.ascontiguousarray(z["VALUE_MG"], dtype=np.int64),
                np.ascontiguousarray(z["VALUE_EG"], dtype=np.int64))


def tables_source() -> str:
    """What the engine plays by: ``"hand"``, or the path of the tables file (shipped or
    :data:`EVAL_ENV`)."""
    choice = os.environ.get(EVAL_ENV, "")
    if choice in ("nnue", "texel"):  # the network (engine/nnue.py, the default) or the shipped tables
        choice = ""
    return "hand" if choice == "hand" else (choice or SHIPPED_TABLES)


def _played_tables():
    src = tables_source()
    if src == "hand":
        return HAND_PST_MG, HAND_PST_EG, HAND_W, HAND_VALUE_MG, HAND_VALUE_EG
    mg, eg, w = load_tables(src)
    material = load_material(src)
    vm, ve = material if material is not None else (HAND_VALUE_MG, HAND_VALUE_EG)
    return mg, eg, w, vm, ve


#: The tables the engine plays by (see :func:`tables_source`): material + piece-square by phase
#: (15, 90), the pattern weights (12,), and the material split (8,) the tuner starts from.
PST_MG, PST_EG, W, VALUE_MG, VALUE_EG = _played_tables()


@njit
def material_state(bd):
    """``(mg, eg, phase)`` of a board from scratch (Red's view)."""
    mg = 0
    eg = 0
    ph = 0
    for sq in range(90):
        p = bd[sq]
        if p != 0:
            mg += PST_MG[p + 7, sq]
            eg += PST_EG[p + 7, sq]
            ph += PHASE_W[abs(p)]
    return mg, eg, ph


@njit
def _side_terms(bd, us, ksq_them, W):
    """Pattern terms of the side with sign ``us`` (+1 Red, -1 Black); ``ksq_them`` = enemy king.

    Returns ``(score, advisors, elephants, attackers)``: the pattern score without
    king safety, and the counts king safety needs (attackers = rooks, horses, cannons).
    """
    s = 0
    n_att = 0
    n_adv = 0
    n_ele = 0
    adv_centre = False
    ele0 = -1
    ele1 = -1
    for sq in range(90):
        p = bd[sq] * us
        if p <= 0:
            continue
        if p == ROOK:
            n_att += 1
            mob = 0
            for d in range(4):
                for i in range(RAY_N[sq, d]):
                    if bd[RAY[sq, d, i]] == 0:
                        mob += 1
                    else:
                        break
            s += W[0] * mob
            f = sq % 9
            own_pawn = False
            for r in range(10):
                if bd[r * 9 + f] == PAWN * us:
                    own_pawn = True
                    break
            if not own_pawn:
                s += W[3]
        elif p == HORSE:
            n_att += 1
            mob = 0
            for i in range(H_N[sq]):
                if bd[H_LEG[sq, i]] == 0:
                    mob += 1
            s += W[1] * mob
            if mob == 0:
                s += W[2]
        elif p == CANNON:
            n_att += 1
            if sq % 9 == 4 and ksq_them % 9 == 4:
                between = 0
                step = 9 if ksq_them > sq else -9
                t = sq + step
                while t != ksq_them:
                    if bd[t] != 0:
                        between += 1
                    t += step
                if between == 0:
                    s += W[4]
                elif between == 1:
                    s += W[5]
        elif p == ADVISOR:
            n_adv += 1
            if sq == 13 or sq == 76:
                adv_centre = True
        elif p == ELEPHANT:
            n_ele += 1
            if ele0 < 0:
                ele0 = sq
            else:
                ele1 = sq
    if n_adv == 2 and adv_centre:
        s += W[9]
    if ele1 >= 0 and ele0 // 9 == ele1 // 9 and abs(ele0 - ele1) == 4 and bd[(ele0 + ele1) // 2] == 0:
        s += W[8]
    elif ele1 >= 0 and abs(ele0 % 9 - ele1 % 9) == 2 and abs(ele0 // 9 - ele1 // 9) == 2:
        mid = (ele0 + ele1) // 2
        if bd[mid] == 0:
            s += W[8]
    return s, n_adv, n_ele, n_att


@njit
def king_attack(bd, us, ksq_them):
    """King-attack counts of the side with sign ``us`` against the enemy king on ``ksq_them``:
    ``(zone, gathering, screened_cannons, horse_screens, wocao_horses)``, the features of
    ``W[12..16]``.

    * ``zone``: own rooks, horses, cannons and pawns on files c-g (2-6) in the enemy's last four
      ranks (the palace, the rank before it and the river-side rank: ranks 6-9 counted from
      ``us``'s side), the pieces a mating attack is made of;
    * ``gathering``: ``zone - 1`` when at least two are there (one attacker alone mates rarely);
    * ``screened_cannons``: own cannons on the king's file or rank with exactly one piece between
      (a 炮 with its screen, 炮架: a check as soon as the screen moves or the king is pinned);
    * ``horse_screens``: those whose screen is an own horse (马后炮, the classic mate);
    * ``wocao_horses``: own horses on the 卧槽 squares c8/g8 (file 2 or 6 on the enemy's second
      rank), from where a horse checks the king on its home square and covers its flight squares.
    """
    zone = 0
    wocao = 0
    for sq in range(90):
        p = bd[sq] * us
        if p != ROOK and p != HORSE and p != CANNON and p != PAWN:
            continue
        f = sq % 9
        rr = sq // 9 if us == 1 else 9 - sq // 9
        if 2 <= f <= 6 and rr >= 6:
            zone += 1
        if p == HORSE and rr == 8 and (f == 2 or f == 6):
            wocao += 1
    screened = 0
    horse_screens = 0
    for d in range(4):
        screen = -1
        for i in range(RAY_N[ksq_them, d]):
            t = RAY[ksq_them, d, i]
            if bd[t] == 0:
                continue
            if screen < 0:
                screen = t
                continue
            if bd[t] == CANNON * us:
                screened += 1
                if bd[screen] == HORSE * us:
                    horse_screens += 1
            break
    return zone, (zone - 1 if zone >= 2 else 0), screened, horse_screens, wocao


@njit
def _rook_line_threat(bd, ksq, them):
    """Enemy (sign ``them``) rooks with an open file or rank line to the king square ``ksq``."""
    n = 0
    for d in range(4):
        for i in range(RAY_N[ksq, d]):
            p = bd[RAY[ksq, d, i]]
            if p == 0:
                continue
            if p == ROOK * them:
                n += 1
            break
    return n


@njit
def evaluate(bd, ks, side, mg, eg, phase):
    """Score in centipawns for ``side`` (0 Red, 1 Black) to move.

    ``mg``/``eg``/``phase`` are the incremental material+PST sums from Red's view
    (:func:`material_state`); the phase (0 … 24) blends them.
    """
    return evaluate_with(bd, ks, side, mg, eg, phase, W)


@njit
def evaluate_with(bd, ks, side, mg, eg, phase, W):
    """:func:`evaluate` with the pattern weights ``W`` given (the tuning script varies them)."""
    ph = phase if phase < PHASE_MAX else PHASE_MAX
    score = (mg * ph + eg * (PHASE_MAX - ph)) // PHASE_MAX
    red, red_adv, red_ele, red_att = _side_terms(bd, 1, ks[1], W)
    black, black_adv, black_ele, black_att = _side_terms(bd, -1, ks[0], W)
    # king safety: missing advisors/elephants count while the enemy has attackers
    if black_att > 0:
        red += W[6] * (2 - red_adv) + W[7] * (2 - red_ele)
    if red_att > 0:
        black += W[6] * (2 - black_adv) + W[7] * (2 - black_ele)
    pat = red - black
    if W[12] != 0 or W[13] != 0 or W[14] != 0 or W[15] != 0 or W[16] != 0:  # 0 in the shipped tables
        for us in (1, -1):
            z, g, c, hs, wc = king_attack(bd, us, ks[1] if us == 1 else ks[0])
            pat += us * (W[12] * z + W[13] * g + W[14] * c + W[15] * hs + W[16] * wc)
    pat -= W[10] * _rook_line_threat(bd, ks[0], -1)
    pat += W[10] * _rook_line_threat(bd, ks[1], 1)
    score += pat * (ph + 8) // (PHASE_MAX + 8)
    if side == 1:
        score = -score
    return score + W[11]

