"""Texel tuning of every term of the evaluation (xiangqi.engine.evaluate) on master-game positions.

Data: the chunks of tools/texel_data.py (quiet positions of the CCPD master games with their
results; CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen (2026)"). One command after the data::

    nice -n 19 python tools/texel_tune.py --data /work/tune-data --out /work/tune-data/candidate.npz

**The parameter vector** (every term :func:`xiangqi.engine.evaluate.evaluate_with` has):

* material ``VALUE_MG[t]``, ``VALUE_EG[t]`` and the piece-square offsets ``PSQ_MG[t, sq]``,
  ``PSQ_EG[t, sq]`` from Red's side (Black uses the mirrored square), for the piece types
  t = king … pawn; the engine's ``PST_MG``/``PST_EG`` tables are ``VALUE + PSQ`` (the king's
  material cancels and is left out);
* the pattern weights ``W[0..11]`` (mobility of rooks and horses, a horse blocked at every leg,
  rooks on files without an own pawn, the central cannon's two cases, king safety: missing
  advisors/elephants while the enemy has attackers and enemy rooks on open lines to the king,
  connected advisors/elephants, the tempo) and the king-attack weights ``W[12..16]``
  (:func:`xiangqi.engine.evaluate.king_attack`: attackers in the enemy king's zone, their
  gathering, cannons aimed at the king through one screen, 马后炮, 卧槽马).

The evaluation is linear in this vector given the board (phase blend ``ph/24`` and
``(24-ph)/24`` of the midgame and endgame sums, pattern sum scaled by ``(ph+8)/32``; the phase
weights themselves stay fixed), so each position becomes a sparse feature row once
(:func:`build_features`, cached next to the data) and the model ``e = X·θ`` reproduces the
engine's evaluation up to its integer rounding (``check`` verifies it on a sample).

**The fit**: the result for Red ``y`` (1 / ½ / 0) against ``sigmoid(K e)``; Texel's mean squared
error. The scale ``K`` is fitted first on the current evaluation (golden-section search on the
training games) and then held, so the tuned values stay in the engine's centipawns (the search's
margins are in centipawns). θ is then fitted by Adam (numpy + Numba; no other dependency; each
step on one of ``--shards`` fixed parts of the training games) with an L2 penalty ``lambda``
pulling the piece-square offsets and pattern weights toward the current values (squares seldom
visited cannot run away). The validation games (1/10 of the games, chosen by game hash, never
split across the sets) are scored every 25 steps and the step with the lowest validation error
is kept (early stopping; every 100 steps the best so far is written as a checkpoint).

Output: an ``.npz`` with ``PST_MG``, ``PST_EG`` (15 × 90, the engine's layout) and ``W``, rounded
to integers, which the engine loads instead of its own tables when ``XIANGQI_EVAL`` names it
(:mod:`xiangqi.engine.evaluate`), plus a ``.json`` report (K, errors, the material values).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from texel_data import load  # noqa: E402

from xiangqi.engine._numba import njit  # noqa: E402
from xiangqi.engine.evaluate import KA_FIRST, KA_N, PHASE_MAX, PHASE_W, PST_EG, PST_MG, W, king_attack  # noqa: E402
from xiangqi.engine.movegen import (  # noqa: E402
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

NT = 8  # piece type slots (0 unused, 1 king … 7 pawn)
NPSQ = NT * 90
NPAT = 17  # the engine's W: 12 patterns (11 = the tempo) and the 5 king-attack counts
TEMPO = 11  # the one pattern weight not scaled by the phase
# θ layout
O_VMG, O_VEG = 0, NT
O_PMG, O_PEG = 2 * NT, 2 * NT + NPSQ
O_W = 2 * NT + 2 * NPSQ
NPARAM = O_W + NPAT


def initial_theta() -> np.ndarray:
    """θ of the engine's current evaluation: ``VALUE_MG``/``VALUE_EG`` as the material and the
    tables minus it as the piece-square offsets (the king's material, which cancels, is 0)."""
    from xiangqi.engine.evaluate import VALUE_EG, VALUE_MG

    th = np.zeros(NPARAM)
    th[O_VMG:O_VMG + NT] = VALUE_MG
    th[O_VEG:O_VEG + NT] = VALUE_EG
    th[O_VMG + 1] = th[O_VEG + 1] = 0.0  # the king's material cancels
    for t in range(1, NT):
        th[O_PMG + t * 90:O_PMG + (t + 1) * 90] = PST_MG[t + 7] - th[O_VMG + t]
        th[O_PEG + t * 90:O_PEG + (t + 1) * 90] = PST_EG[t + 7] - th[O_VEG + t]
    th[O_W:O_W + NPAT] = W
    return th


def tables(th: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(PST_MG, PST_EG, W)`` in the engine's layout (15 × 90, code + 7; Black mirrored and
    negated), rounded to integers."""
    mg = np.zeros((15, 90), np.int64)
    eg = np.zeros((15, 90), np.int64)
    for t in range(1, NT):
        vm = np.rint(th[O_VMG + t] + th[O_PMG + t * 90:O_PMG + (t + 1) * 90]).astype(np.int64)
        ve = np.rint(th[O_VEG + t] + th[O_PEG + t * 90:O_PEG + (t + 1) * 90]).astype(np.int64)
        for sq in range(90):
            mirror = (9 - sq // 9) * 9 + sq % 9
            mg[t + 7, sq] = vm[sq]
            eg[t + 7, sq] = ve[sq]
            mg[-t + 7, mirror] = -vm[sq]
            eg[-t + 7, mirror] = -ve[sq]
    return mg, eg, np.rint(th[O_W:O_W + NPAT]).astype(np.int64)


@njit
def _side_feats(bd, us, ksq_them, f):
    """Pattern counts of the side ``us`` into ``f[0..10]`` (the terms of evaluate._side_terms);
    returns ``(advisors, elephants, attackers)``."""
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
            f[0] += mob
            fl = sq % 9
            own_pawn = False
            for r in range(10):
                if bd[r * 9 + fl] == PAWN * us:
                    own_pawn = True
                    break
            if not own_pawn:
                f[3] += 1
        elif p == HORSE:
            n_att += 1
            mob = 0
            for i in range(H_N[sq]):
                if bd[H_LEG[sq, i]] == 0:
                    mob += 1
            f[1] += mob
            if mob == 0:
                f[2] += 1
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
                    f[4] += 1
                elif between == 1:
                    f[5] += 1
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
        f[9] += 1
    if ele1 >= 0 and ele0 // 9 == ele1 // 9 and abs(ele0 - ele1) == 4 and bd[(ele0 + ele1) // 2] == 0:
        f[8] += 1
    elif ele1 >= 0 and abs(ele0 % 9 - ele1 % 9) == 2 and abs(ele0 // 9 - ele1 // 9) == 2:
        if bd[(ele0 + ele1) // 2] == 0:
            f[8] += 1
    return n_adv, n_ele, n_att


@njit
def _rook_lines(bd, ksq, them):
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
def _build(bd, side, off, psq, sgn, pat, phase):
    """Fill the sparse piece entries (``psq`` index t*90+sq from Red's side, ``sgn`` ±1, rows
    delimited by ``off``), the pattern features (Red minus Black, tempo ±1) and the phase."""
    n = bd.shape[0]
    k = 0
    fr = np.zeros(11, np.int64)
    fb = np.zeros(11, np.int64)
    for i in range(n):
        off[i] = k
        ph = 0
        ksq_r = -1
        ksq_b = -1
        for sq in range(90):
            p = bd[i, sq]
            if p == 0:
                continue
            ph += PHASE_W[abs(p)]
            if p > 0:
                psq[k] = p * 90 + sq
                sgn[k] = 1
                if p == 1:
                    ksq_r = sq
            else:
                psq[k] = -p * 90 + (9 - sq // 9) * 9 + sq % 9
                sgn[k] = -1
                if p == -1:
                    ksq_b = sq
            k += 1
        phase[i] = ph
        fr[:] = 0
        fb[:] = 0
        r_adv, r_ele, r_att = _side_feats(bd[i], 1, ksq_b, fr)
        b_adv, b_ele, b_att = _side_feats(bd[i], -1, ksq_r, fb)
        if b_att > 0:
            fr[6] += 2 - r_adv
            fr[7] += 2 - r_ele
        if r_att > 0:
            fb[6] += 2 - b_adv
            fb[7] += 2 - b_ele
        fr[10] += _rook_lines(bd[i], ksq_b, 1)
        fb[10] += _rook_lines(bd[i], ksq_r, -1)
        for j in range(11):
            pat[i, j] = fr[j] - fb[j]
        pat[i, TEMPO] = 1 if side[i] == 0 else -1
        kr = king_attack(bd[i], 1, ksq_b)
        kb = king_attack(bd[i], -1, ksq_r)
        for j in range(KA_N):
            pat[i, KA_FIRST + j] = kr[j] - kb[j]
    off[n] = k


def build_features(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Sparse features of every position of ``data`` (tools/texel_data.load)."""
    bd = np.ascontiguousarray(data["bd"])
    n = bd.shape[0]
    total = int(np.count_nonzero(bd))
    off = np.zeros(n + 1, np.int64)
    psq = np.zeros(total, np.int16)
    sgn = np.zeros(total, np.int8)
    pat = np.zeros((n, NPAT), np.int16)
    phase = np.zeros(n, np.int16)
    _build(bd, data["side"].astype(np.int64), off, psq, sgn, pat, phase)
    return {"off": off, "psq": psq, "sgn": sgn, "pat": pat, "phase": phase}


@njit
def _forward(off, psq, sgn, pat, phase, th, out):
    n = off.shape[0] - 1
    for i in range(n):
        ph = min(phase[i], PHASE_MAX)
        wm = ph / PHASE_MAX
        we = 1.0 - wm
        s = 0.0
        for k in range(off[i], off[i + 1]):
            q = psq[k]
            t = q // 90
            vm = th[O_VMG + t] + th[O_PMG + q]
            ve = th[O_VEG + t] + th[O_PEG + q]
            s += sgn[k] * (wm * vm + we * ve)
        ps = 0.0
        for j in range(NPAT):
            if j != TEMPO:
                ps += pat[i, j] * th[O_W + j]
        s += ps * (ph + 8) / (PHASE_MAX + 8) + pat[i, TEMPO] * th[O_W + TEMPO]
        out[i] = s


@njit
def _backward(off, psq, sgn, pat, phase, g_e, grad):
    """``grad += Σ_i g_e[i] · ∂e_i/∂θ``."""
    n = off.shape[0] - 1
    for i in range(n):
        gi = g_e[i]
        if gi == 0.0:
            continue
        ph = min(phase[i], PHASE_MAX)
        wm = ph / PHASE_MAX
        we = 1.0 - wm
        for k in range(off[i], off[i + 1]):
            q = psq[k]
            t = q // 90
            gm = gi * sgn[k] * wm
            ge = gi * sgn[k] * we
            grad[O_VMG + t] += gm
            grad[O_PMG + q] += gm
            grad[O_VEG + t] += ge
            grad[O_PEG + q] += ge
        sc = (ph + 8) / (PHASE_MAX + 8)
        for j in range(NPAT):
            if j != TEMPO:
                grad[O_W + j] += gi * pat[i, j] * sc
        grad[O_W + TEMPO] += gi * pat[i, TEMPO]


class Model:
    """The features of a subset of rows, with evaluation, error and gradient."""

    def __init__(self, feats: dict[str, np.ndarray], rows: np.ndarray, y: np.ndarray) -> None:
        off = feats["off"]
        starts, ends = off[rows], off[rows + 1]
        lens = ends - starts
        self.off = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lens, out=self.off[1:])
        idx = np.repeat(starts - self.off[:-1], lens) + np.arange(self.off[-1])
        self.psq = feats["psq"][idx].astype(np.int64)
        self.sgn = feats["sgn"][idx].astype(np.float64)
        self.pat = feats["pat"][rows].astype(np.float64)
        self.phase = feats["phase"][rows].astype(np.int64)
        self.y = y[rows].astype(np.float64)
        self.n = len(rows)

    def evals(self, th: np.ndarray) -> np.ndarray:
        """The evaluation of every row for θ (centipawns, Red's side)."""
        out = np.zeros(self.n)
        _forward(self.off, self.psq, self.sgn, self.pat, self.phase, th, out)
        return out

    def error(self, th: np.ndarray, k: float) -> float:
        """Texel's mean squared error of ``sigmoid(K e)`` against the results."""
        p = 1.0 / (1.0 + np.exp(-k * self.evals(th)))
        return float(np.mean((self.y - p) ** 2))

    def grad(self, th: np.ndarray, k: float) -> tuple[float, np.ndarray]:
        """``(error, d error / d θ)``."""
        p = 1.0 / (1.0 + np.exp(-k * self.evals(th)))
        r = p - self.y
        g_e = 2.0 * r * p * (1.0 - p) * k / self.n
        g = np.zeros_like(th)
        _backward(self.off, self.psq, self.sgn, self.pat, self.phase, g_e, g)
        return float(np.mean(r * r)), g


def fit_k(model: Model, th: np.ndarray, lo: float = 1e-4, hi: float = 0.05) -> float:
    """The scale K minimising the error of ``th`` (golden-section search; the error is unimodal in K)."""
    e = model.evals(th)
    y = model.y

    def err(k: float) -> float:
        return float(np.mean((y - 1.0 / (1.0 + np.exp(-k * e))) ** 2))

    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    for _ in range(80):
        if err(c) < err(d):
            b = d
        else:
            a = c
        c, d = b - g * (b - a), a + g * (b - a)
    return 0.5 * (a + b)


def split(games: np.ndarray, valid_mod: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``(train rows, validation rows)``: a game goes to validation when its hash % valid_mod == 0."""
    v = (games % valid_mod) == 0
    return np.flatnonzero(~v), np.flatnonzero(v)


def _write(out: str, th: np.ndarray, k: float, report: dict | None = None) -> None:
    mg, eg, w = tables(th)
    np.savez(out, PST_MG=mg, PST_EG=eg, W=w, K=k)
    if report is not None:
        Path(out).with_suffix(".json").write_text(json.dumps(report, indent=1))


def tune(data_dir: str, out: str, steps: int, lr: float, lam: float, seed: int, limit: int | None,
         shards: int = 1, lam_material: float = 0.0) -> dict:
    """Fit K, then θ (module docstring); write the candidate and its report; return the report."""
    t0 = time.time()
    data = load(data_dir)
    if limit:
        data = {k: v[:limit] for k, v in data.items()}
    cache = Path(data_dir) / "features.npz"
    n = len(data["result"])
    feats = None
    if cache.exists():
        with np.load(cache) as z:
            if int(z["n"]) == n and z["pat"].shape[1] == NPAT:  # else built before new features
                feats = {k: z[k] for k in ("off", "psq", "sgn", "pat", "phase")}
    if feats is None:
        feats = build_features(data)
        np.savez(cache, n=n, **feats)
    tr, va = split(data["game"])
    n_games = len(np.unique(data["game"]))
    print(f"{n} positions of {n_games} games: train {len(tr)}, validation {len(va)} "
          f"({time.time() - t0:.0f}s)", flush=True)
    mtr = Model(feats, tr, data["result"])
    mva = Model(feats, va, data["result"])
    # mini-batches: the training games in ``shards`` fixed parts, one part per step (stochastic Adam)
    rng = np.random.default_rng(seed)
    parts = [mtr] if shards <= 1 else [Model(feats, np.sort(p), data["result"])
                                       for p in np.array_split(rng.permutation(tr), shards)]
    th0 = initial_theta()
    k = fit_k(mtr, th0)
    e0_tr, e0_va = mtr.error(th0, k), mva.error(th0, k)
    print(f"K = {k:.6f} per cp; current evaluation: train {e0_tr:.6f}, validation {e0_va:.6f}", flush=True)
    # which parameters the data can move: material, the squares that occur, the pattern weights
    seen = np.bincount(mtr.psq, minlength=NPSQ) > 0
    frozen = np.zeros(NPARAM, bool)
    frozen[O_PMG:O_PMG + NPSQ] = ~seen
    frozen[O_PEG:O_PEG + NPSQ] = ~seen
    frozen[O_VMG + 1] = frozen[O_VEG + 1] = True  # the king's material cancels
    reg = np.zeros(NPARAM)
    reg[O_PMG:O_W + NPAT] = lam
    reg[O_VMG:O_VEG + NT] = lam_material
    th = th0.copy()
    m = np.zeros(NPARAM)
    v = np.zeros(NPARAM)
    b1, b2, eps = 0.9, 0.999, 1e-8
    best = (e0_va, th0.copy(), 0)
    hist = []
    for step in range(1, steps + 1):
        err, g = parts[step % len(parts)].grad(th, k)
        g += 2.0 * reg * (th - th0)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        th -= lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + eps)
        th[frozen] = th0[frozen]
        if step % 25 == 0 or step == steps:
            ev = mva.error(th, k)
            hist.append((step, err, ev))
            if ev < best[0]:
                best = (ev, th.copy(), step)
                if step % 100 == 0:
                    _write(out, th, k)  # a checkpoint: an interrupted run leaves its best so far
            if step % 100 == 0:
                print(f"step {step}: train {err:.6f} validation {ev:.6f} (best {best[0]:.6f} at {best[2]}; "
                      f"{time.time() - t0:.0f}s)", flush=True)
    th = best[1]
    mg, eg, w = tables(th)
    # the engine's rounded tables, scored again: what the engine would use
    th_r = initial_theta() * 0
    for t in range(1, NT):
        th_r[O_PMG + t * 90:O_PMG + (t + 1) * 90] = mg[t + 7]
        th_r[O_PEG + t * 90:O_PEG + (t + 1) * 90] = eg[t + 7]
    th_r[O_W:O_W + NPAT] = w
    report = {
        "positions": n, "games": n_games, "train": len(tr), "validation": len(va), "K": k,
        "lambda": lam, "lambda_material": lam_material, "lr": lr, "steps": steps, "shards": shards,
        "best_step": best[2],
        "error_before": {"train": e0_tr, "validation": e0_va},
        "error_after": {"train": mtr.error(th_r, k), "validation": mva.error(th_r, k)},
        "material_mg": [round(float(x), 1) for x in th[O_VMG:O_VMG + NT]],
        "material_eg": [round(float(x), 1) for x in th[O_VEG:O_VEG + NT]],
        "W_before": W.tolist(), "W_after": w.tolist(), "history": hist,
        "seconds": round(time.time() - t0),
    }
    _write(out, th, k, report)
    print(json.dumps({k_: v_ for k_, v_ in report.items() if k_ != "history"}, indent=1))
    return report


def check(data_dir: str, n: int) -> float:
    """Largest |linear model − engine evaluate| (cp) over ``n`` positions: the model is exact up
    to the engine's integer rounding."""
    from xiangqi.engine.evaluate import evaluate, material_state

    data = load(data_dir)
    sub = {k: v[:n] for k, v in data.items()}
    f = build_features(sub)
    mod = Model(f, np.arange(len(sub["result"])), sub["result"])
    e = mod.evals(initial_theta())
    worst = 0.0
    for i in range(len(e)):
        bd = sub["bd"][i]
        ks = np.array([int(np.flatnonzero(bd == 1)[0]), int(np.flatnonzero(bd == -1)[0])], np.int64)
        side = int(sub["side"][i])
        mg, eg, ph = material_state(bd)
        s = evaluate(bd, ks, side, mg, eg, ph)
        red = s if side == 0 else -s
        worst = max(worst, abs(red - e[i]))
    print(f"{len(e)} positions: largest difference {worst:.2f} cp")
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/tune-data", help="tools/texel_data.py's chunk directory")
    ap.add_argument("--out", default="/work/tune-data/candidate.npz", help="candidate parameters (.npz)")
    ap.add_argument("--steps", type=int, default=300, help="Adam steps")
    ap.add_argument("--lr", type=float, default=1.0, help="Adam step size (centipawns)")
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-6,
                    help="L2 pull of piece-square offsets and pattern weights toward the current values")
    ap.add_argument("--lambda-material", dest="lam_material", type=float, default=1e-6,
                    help="the same pull for the material values (0 = free; free material lets the "
                         "midgame/endgame split drift, see docs/ENGINE.md)")
    ap.add_argument("--shards", type=int, default=4,
                    help="training games split into this many mini-batches, one per step (1 = full batch)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N positions (a test run)")
    ap.add_argument("--check", type=int, default=0, metavar="N",
                    help="only compare the linear model with the engine's evaluate on N positions")
    args = ap.parse_args()
    if args.check:
        check(args.data, args.check)
    else:
        tune(args.data, args.out, args.steps, args.lr, args.lam, args.seed, args.limit, args.shards,
             args.lam_material)


if __name__ == "__main__":
    main()
