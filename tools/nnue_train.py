"""Train the small NNUE of xiangqi.engine.nnue on the quiet master-game positions (numpy + Numba, CPU).

Data: the chunks of tools/texel_data.py (1,378,067 quiet positions of 27,153 CCPD master games,
docs/ENGINE.md; CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen (2026)"). One command, resumable
(a rerun with the same ``--out`` continues from the last finished epoch's checkpoint)::

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 nice -n 10 python tools/nnue_train.py \
        --data /work/tune-data --out /work/nnue-data/run1

* **Split by game** as tools/texel_tune.py does (a game goes to validation when its hash % 10 == 0),
  so the validation games are games the shipped Texel tables were not fitted on either.
* **Labels**: for the side to move, ``lam · sigmoid(K · texel) + (1 − lam) · result`` (``--lam``,
  default 0.5): the game's result blended with the win chance of the shipped Texel evaluation of
  the position (a teacher that knows material; the result alone is a noisy label). ``K`` is fitted
  on the training games for the Texel evaluation (golden-section search) and is also the network's
  logistic scale, so the network's output is in the Texel evaluation's centipawns.
* **Loss**: Texel's mean squared error between ``sigmoid(K · out)`` and the label. Reported on the
  validation games against the **game results alone** (the comparison with the Texel evaluation:
  the same positions, labels and scale), and against the blended label.
* **Optimiser**: Adam (own numpy code), mini-batches of ``--batch``, ``--epochs`` epochs with the
  learning rate decayed by ``--decay`` per epoch; the sparse first layer's forward and backward
  passes are Numba kernels (at most 32 pieces per position), the dense layers numpy.
* **Parameters** (xiangqi.engine.nnue's architecture): ``wh`` [1260, 64] and ``bh`` [64] the first
  neuron of each mirror pair (the second uses the mirrored squares), ``a1`` [32, 128] on the pooled
  pairs, ``c1``, ``a2`` [32], ``c2``; ``wh`` and ``bh`` are kept within ±0.96 and ``a1`` within
  ±32767/8192 so the int16 accumulator (1.0 = 1016) cannot overflow and ``a1`` fits int16.
* Output in ``--out``: ``ckpt.npz`` (after every epoch: parameters, Adam moments, epoch, best),
  ``nnue.npz`` (the best epoch by validation loss: quantised ``ft_w``/``ft_b``/``l1_w``/``l1_b``/
  ``l2_w``/``l2_b`` for the engine and the float ``f_*`` parameters), ``report.json``.

``--report`` only scores a weights file (``--net``, default the run's ``nnue.npz``) and the Texel
evaluation on the validation games, the quantised network through the engine's own kernels.
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

from xiangqi.engine import nnue  # noqa: E402
from xiangqi.engine._numba import njit  # noqa: E402
from xiangqi.engine.evaluate import evaluate, material_state  # noqa: E402

NH = nnue.N_HALF
NA = nnue.N_ACC


@njit
def texel_scores(bds, sides):
    """The shipped Texel evaluation of every board, from Red's view (int64 [n])."""
    n = bds.shape[0]
    out = np.zeros(n, np.int64)
    ks = np.zeros(2, np.int64)
    bd = np.zeros(90, np.int8)
    for i in range(n):
        for sq in range(90):
            bd[sq] = bds[i, sq]
            if bd[sq] == 1:
                ks[0] = sq
            elif bd[sq] == -1:
                ks[1] = sq
        mg, eg, ph = material_state(bd)
        e = evaluate(bd, ks, sides[i], mg, eg, ph)
        out[i] = e if sides[i] == 0 else -e
    return out


@njit
def engine_scores(bds, sides, st):
    """The quantised network's score (side to move) of every board through the engine's kernels."""
    n = bds.shape[0]
    out = np.zeros(n, np.int64)
    bd = np.zeros(90, np.int8)
    for i in range(n):
        for sq in range(90):
            bd[sq] = bds[i, sq]
        out[i] = nnue.evaluate_board(bd, sides[i], st)
    return out


@njit
def acc_forward(bds, sides, idx, w, b, out):
    """``out[i, 0]`` = accumulator of the side to move, ``out[i, 1]`` the other's, for rows ``idx``."""
    for i in range(idx.shape[0]):
        r = idx[i]
        s = sides[r]
        for q in range(2):
            persp = s if q == 0 else 1 - s
            for j in range(w.shape[1]):
                out[i, q, j] = b[j]
            for sq in range(90):
                p = bds[r, sq]
                if p != 0:
                    f = nnue.feature(persp, p, sq)
                    for j in range(w.shape[1]):
                        out[i, q, j] += w[f, j]


@njit
def acc_backward(bds, sides, idx, g, gw):
    """Add the gradient of the accumulators ``g`` [B, 2, 128] into ``gw`` [1260, 128]."""
    for i in range(idx.shape[0]):
        r = idx[i]
        s = sides[r]
        for q in range(2):
            persp = s if q == 0 else 1 - s
            for sq in range(90):
                p = bds[r, sq]
                if p != 0:
                    f = nnue.feature(persp, p, sq)
                    for j in range(gw.shape[1]):
                        gw[f, j] += g[i, q, j]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def fit_k(e: np.ndarray, y: np.ndarray, lo: float = 1e-4, hi: float = 0.05) -> float:
    """The K minimising mean((sigmoid(K e) − y)²) (golden-section search)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)

    def f(k):
        return float(np.mean((sigmoid(k * e) - y) ** 2))

    fc, fd = f(c), f(d)
    for _ in range(60):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (a + b) / 2


def init_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random start: small first-layer weights (≈ 30 active features) around a bias of 0.25."""
    return {
        "wh": rng.normal(0, 0.04, (nnue.N_FEAT, NH)).astype(np.float32),
        "bh": np.full(NH, 0.25, np.float32),
        "a1": rng.normal(0, 1 / math.sqrt(2 * NH), (nnue.N_L1, NA)).astype(np.float32),
        "c1": np.zeros(nnue.N_L1, np.float32),
        "a2": rng.normal(0, 1 / math.sqrt(nnue.N_L1), nnue.N_L1).astype(np.float32),
        "c2": np.zeros(1, np.float32),
    }


MIR = nnue.mirror_permutation()


def full_ft(p):
    """The full feature transformer [1260, 128] and bias [128] from the mirror-pair parameters."""
    return (np.ascontiguousarray(np.concatenate([p["wh"], p["wh"][MIR]], axis=1)),
            np.concatenate([p["bh"], p["bh"]]))


def forward(p, data, idx, k, want_grad_y=None):
    """Loss pieces for rows ``idx``: returns ``(prob, cache)``; with ``want_grad_y`` (labels) also
    the gradients ``(loss, grads)``."""
    w, b = full_ft(p)
    acc = np.empty((len(idx), 2, NA), w.dtype)
    acc_forward(data["bd"], data["side"], idx, w, b, acc)
    h = np.clip(acc, 0.0, 1.0)
    pooled = (h[:, :, :NH] + h[:, :, NH:]).reshape(len(idx), NA)
    z = pooled @ p["a1"].T + p["c1"]
    h2 = np.clip(z, 0.0, 1.0)
    cp = nnue.SCALE * (h2 @ p["a2"] + p["c2"][0])
    prob = sigmoid(k * cp)
    if want_grad_y is None:
        return prob, cp
    y = want_grad_y
    n = len(idx)
    loss = float(np.mean((prob - y) ** 2))
    g_cp = (2.0 / n) * (prob - y) * k * prob * (1 - prob)
    g_o = (nnue.SCALE * g_cp).astype(w.dtype)
    grads = {"a2": h2.T @ g_o, "c2": np.array([g_o.sum()], w.dtype)}
    g_z = np.outer(g_o, p["a2"]) * ((z > 0) & (z < 1))
    grads["a1"] = g_z.T @ pooled
    grads["c1"] = g_z.sum(axis=0)
    g_pool = (g_z @ p["a1"]).reshape(n, 2, NH)
    g_acc = np.concatenate([g_pool, g_pool], axis=2) * ((acc > 0) & (acc < 1))
    g_acc = np.ascontiguousarray(g_acc, dtype=w.dtype)
    gw = np.zeros((nnue.N_FEAT, NA), w.dtype)
    acc_backward(data["bd"], data["side"], idx, g_acc, gw)
    gb = g_acc.sum(axis=(0, 1))
    grads["wh"] = gw[:, :NH] + gw[MIR, NH:]
    grads["bh"] = gb[:NH] + gb[NH:]
    return loss, grads


def predict(p, data, idx, k, batch=16384):
    out = np.empty(len(idx))
    for s in range(0, len(idx), batch):
        out[s:s + batch] = forward(p, data, idx[s:s + batch], k)[0]
    return out


def clip_params(p):
    # 33 × 0.96 × 1016 < 32767: the int16 accumulator of 32 pieces and the bias cannot overflow
    np.clip(p["wh"], -0.96, 0.96, out=p["wh"])
    np.clip(p["bh"], -0.96, 0.96, out=p["bh"])
    np.clip(p["a1"], -32767 / nnue.QB, 32767 / nnue.QB, out=p["a1"])


def quantise(p) -> dict[str, np.ndarray]:
    """The engine's integer arrays (xiangqi.engine.nnue.load_net) of float parameters ``p``."""
    w, b = full_ft(p)
    qa, qb, qo = nnue.QA, nnue.QB, nnue.QO
    return {
        "ft_w": np.round(w * qa).astype(np.int16),
        "ft_b": np.round(b * qa).astype(np.int16),
        "l1_w": np.clip(np.round(p["a1"] * qb), -32767, 32767).astype(np.int16),
        "l1_b": np.round(p["c1"] * qa * qb).astype(np.int32),
        "l2_w": np.round(nnue.SCALE * p["a2"] * qo).astype(np.int32),
        "l2_b": np.round(nnue.SCALE * p["c2"] * qo * qa * qb).astype(np.int64).reshape(1),
    }


def save_net(path: Path, p, meta: dict) -> None:
    arrays = quantise(p)
    arrays.update({"f_" + k: v for k, v in p.items()})
    arrays["meta"] = np.array(json.dumps(meta))
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)


def prepare(data_dir: str, out: Path, lam: float):
    """Data, split, Texel scores (cached in ``out``), K and labels."""
    d = load(data_dir)
    d["bd"] = np.ascontiguousarray(d["bd"])
    d["side"] = d["side"].astype(np.int64)
    n = len(d["side"])
    cache = out / "texel_scores.npy"
    if cache.exists() and np.load(cache).shape == (n,):
        e = np.load(cache)
    else:
        t = time.time()
        e = texel_scores(d["bd"], d["side"])
        np.save(cache, e)
        print(f"texel scores of {n} positions in {time.time() - t:.0f} s", flush=True)
    va = (d["game"] % 10) == 0
    tr_idx = np.nonzero(~va)[0]
    va_idx = np.nonzero(va)[0]
    k = fit_k(e[tr_idx].astype(np.float64), d["result"][tr_idx].astype(np.float64))
    y_red = lam * sigmoid(k * e) + (1 - lam) * d["result"]
    stm = d["side"] == 0
    d["y"] = np.where(stm, y_red, 1 - y_red).astype(np.float32)
    d["y_result"] = np.where(stm, d["result"], 1 - d["result"]).astype(np.float32)
    d["texel_stm"] = np.where(stm, e, -e)
    return d, tr_idx, va_idx, k


def texel_loss(d, idx, k) -> float:
    return float(np.mean((sigmoid(k * d["texel_stm"][idx]) - d["y_result"][idx]) ** 2))


def train(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    d, tr_idx, va_idx, k = prepare(args.data, out, args.lam)
    print(f"{len(d['side'])} positions: train {len(tr_idx)}, validation {len(va_idx)}; K = {k:.6f}; "
          f"Texel validation loss (results) {texel_loss(d, va_idx, k):.6f}", flush=True)
    ckpt = out / "ckpt.npz"
    rng = np.random.default_rng(args.seed)
    names = ("wh", "bh", "a1", "c1", "a2", "c2")
    history: list[dict] = []
    if ckpt.exists():
        with np.load(ckpt, allow_pickle=False) as z:
            p = {n: z["p_" + n].copy() for n in names}
            m = {n: z["m_" + n].copy() for n in names}
            v = {n: z["v_" + n].copy() for n in names}
            epoch0 = int(z["epoch"])
            step = int(z["step"])
            history = json.loads(str(z["history"]))
        print(f"resumed after epoch {epoch0}", flush=True)
    else:
        p = init_params(rng)
        m = {n: np.zeros_like(a) for n, a in p.items()}
        v = {n: np.zeros_like(a) for n, a in p.items()}
        epoch0, step = 0, 0
    best = min(history, key=lambda h: h["val_result"]) if history else None
    b1, b2, eps = 0.9, 0.999, 1e-8
    for epoch in range(epoch0 + 1, args.epochs + 1):
        t0 = time.time()
        lr = args.lr * args.decay ** (epoch - 1)
        perm = np.random.default_rng(args.seed + epoch).permutation(tr_idx)
        run = 0.0
        nb = 0
        for s in range(0, len(perm) - args.batch + 1, args.batch):
            idx = perm[s:s + args.batch]
            loss, g = forward(p, d, idx, k, d["y"][idx])
            step += 1
            for n in names:
                m[n] = b1 * m[n] + (1 - b1) * g[n]
                v[n] = b2 * v[n] + (1 - b2) * g[n] * g[n]
                mh = m[n] / (1 - b1 ** step)
                vh = v[n] / (1 - b2 ** step)
                p[n] -= (lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)
            clip_params(p)
            run += loss
            nb += 1
            if nb % 50 == 0:
                print(f"  epoch {epoch} batch {nb}: train loss {run / nb:.6f} ({time.time() - t0:.0f} s)",
                      flush=True)
        pv = predict(p, d, va_idx, k)
        val_result = float(np.mean((pv - d["y_result"][va_idx]) ** 2))
        val_label = float(np.mean((pv - d["y"][va_idx]) ** 2))
        h = {"epoch": epoch, "lr": lr, "train": run / max(nb, 1), "val_result": val_result,
             "val_label": val_label, "seconds": round(time.time() - t0, 1)}
        history.append(h)
        print(f"epoch {epoch}: train {h['train']:.6f} validation (results) {val_result:.6f} "
              f"(labels) {val_label:.6f}, {h['seconds']} s", flush=True)
        meta = {"K": k, "lam": args.lam, "epoch": epoch, "val_result": val_result, "val_label": val_label,
                "texel_val_result": texel_loss(d, va_idx, k), "train_positions": int(len(tr_idx)),
                "validation_positions": int(len(va_idx))}
        if best is None or val_result <= best["val_result"]:
            best = h
            save_net(out / "nnue.npz", p, meta)
        arrays = {"p_" + n: p[n] for n in names}
        arrays.update({"m_" + n: m[n] for n in names})
        arrays.update({"v_" + n: v[n] for n in names})
        tmp = out / "ckpt.tmp.npz"
        np.savez(tmp, epoch=epoch, step=step, history=json.dumps(history), **arrays)
        tmp.replace(ckpt)
        (out / "report.json").write_text(json.dumps({"K": k, "lam": args.lam, "history": history,
                                                     "best": best, **meta}, indent=1))


def report(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    d, tr_idx, va_idx, k = prepare(args.data, out, args.lam)
    net = args.net or str(out / "nnue.npz")
    params = nnue.float_params(net)
    p = {n: params[n].astype(np.float32) for n in params}
    pf = predict(p, d, va_idx, k)
    st = nnue.new_state()
    # the engine's kernels play the shipped file unless XIANGQI_NNUE names this one
    q = engine_scores(d["bd"][va_idx], d["side"][va_idx], st)
    pq = sigmoid(k * q)
    y = d["y_result"][va_idx]
    res = {
        "net": net, "engine_net": nnue.net_path(), "K": k, "validation_positions": int(len(va_idx)),
        "texel_val_result": texel_loss(d, va_idx, k),
        "net_float_val_result": float(np.mean((pf - y) ** 2)),
        "net_engine_val_result": float(np.mean((pq - y) ** 2)),
        "constant_half_val_result": float(np.mean((0.5 - y) ** 2)),
    }
    print(json.dumps(res, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/tune-data", help="tools/texel_data.py's chunk directory")
    ap.add_argument("--out", required=True, help="run directory (checkpoint, nnue.npz, report.json)")
    ap.add_argument("--epochs", type=int, default=10, help="epochs in all (a resumed run continues to this)")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=2e-3, help="Adam's step size in the first epoch")
    ap.add_argument("--decay", type=float, default=0.75, help="learning-rate factor per epoch")
    ap.add_argument("--lam", type=float, default=0.5, help="weight of the Texel win chance in the label")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", action="store_true", help="only score --net and the Texel evaluation")
    ap.add_argument("--requantise", action="store_true",
                    help="rewrite --net's integer arrays from its float ones (after a change of the scales)")
    ap.add_argument("--net", default=None, help="weights file for --report (default: OUT/nnue.npz)")
    args = ap.parse_args()
    if args.requantise:
        net = Path(args.net or str(Path(args.out) / "nnue.npz"))
        with np.load(net) as z:
            meta = json.loads(str(z["meta"]))
        params = nnue.float_params(str(net))
        save_net(net, {k: v.astype(np.float32) for k, v in params.items()}, meta)
        return
    report(args) if args.report else train(args)


if __name__ == "__main__":
    main()
