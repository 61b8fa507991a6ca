"""A small NNUE evaluation (efficiently updatable neural network): the engine's default evaluation
(``XIANGQI_EVAL=texel`` or the UCI option ``Evaluation`` plays the Texel tables instead).

Architecture (docs/NNUE.md; trained by ``tools/nnue_train.py``):

* **Features**, per perspective (Red's and Black's): one per (own/enemy, piece type, square) —
  2 × 7 × 90 = :data:`N_FEAT` = 1260 — the square seen from that side (Black's perspective flips
  the ranks, so a position and its colour-flipped twin give the same two accumulators, swapped).
* **Accumulator**: ``FT_B + Σ FT_W[feature]`` over the pieces on the board, :data:`N_ACC` = 128
  int16 per perspective (scale :data:`QA` = 1016 = 1.0), kept incrementally: a move adds the
  mover's new column, removes its old one and a captured piece's column, for both perspectives.
* **Mirror pairs**: accumulator neuron ``j + 64`` has the weights of neuron ``j`` on the
  left-right mirrored squares, and the next layer weighs the two of a pair alike, so the network
  is exactly left-right symmetric; the pair is pooled after the clipped ReLU:
  ``P[k] = crelu(acc[k]) + crelu(acc[k + 64])`` (64 per perspective, the side to move's first;
  ``crelu`` clips to 0 … 1016).
* **Layers**: ``P`` (128) → int16 weights (scale :data:`QB` = 8192) → 32 sums → clipped ReLU
  (0 … 1016 · 8192, not rounded) → int32 weights (scale :data:`QO` = 16 per centipawn) → 1
  output in centipawns for the side to move (the Texel evaluation's logistic
  scale, so the search's margins keep their meaning).

The accumulator stack lives in the search's state array ``st`` past its eight fields (an int16
view of :data:`STATE_SIZE` int64): ``st[ST_SP]`` is the stack pointer, each entry holds the two
perspectives; :func:`nnue_make`/:func:`nnue_unmake` are called by the search's make/unmake and do
nothing on the short ``st`` of eight fields the engine allocates when the network is not played
(:func:`selected`: a run-time choice, so one set of compiled kernels serves both evaluations).
The null move needs no update (the side to move picks the perspective).

Weights: ``data/nnue-2026-12-01.npz`` (:data:`SHIPPED_NET`) or the file named by
``XIANGQI_NNUE``; the Numba cache key includes the file (:mod:`._numba`).
"""

from __future__ import annotations

import os

import numba
import numpy as np

from xiangqi.engine._numba import njit
from xiangqi.engine.consts import MAX_PLY, S_EG, S_MG, S_PH, S_SIDE
from xiangqi.engine.evaluate import EVAL_ENV, evaluate

N_TYPES = 7
N_FEAT = 2 * N_TYPES * 90
N_ACC = 128
N_HALF = N_ACC // 2
N_L1 = 32
QA = 1016  # accumulator / first activation scale: float 1.0 = 1016 (33 × 0.96 × 1016 < 32767)
QB = 8192  # first dense layer's weight scale (int16: |a1| < 4)
QO = 16  # output layer's weight scale (per centipawn)
SCALE = 600.0  # centipawns per unit of the float network's output (the trainer's parameterisation)
EVAL_LIMIT = 20000  # |score| bound of the network's output (below the mate scores)

#: Environment variable naming another weights file than the shipped one (a training candidate).
NNUE_ENV = "XIANGQI_NNUE"
SHIPPED_NET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "nnue-2026-12-01.npz")

# the accumulator stack inside ``st`` (int64 slots; the int16 view has 4 per slot)
ST_SP = 8
ST_ACC = 16
ACC_STACK = MAX_PLY + 8
ENTRY = 2 * N_ACC  # int16 per stack entry: Red's perspective, then Black's
ACC_OFF16 = ST_ACC * 4
# scratch after the stack: the pooled activations as float32 (128 of them = one entry of int16)
P_OFF32 = (ACC_OFF16 + ACC_STACK * ENTRY) // 2
#: Length of the search's state array when the NNUE is played (:func:`new_state`).
STATE_SIZE = ST_ACC + (ACC_STACK + 1) * ENTRY // 4


#: The evaluations an engine can play (``Engine.evaluation``, the UCI option ``Evaluation``): the
#: network (the default since its SPRT against the tables, docs/ENGINE.md) or the Texel tables.
EVALUATIONS = ("nnue", "texel")


def selected() -> bool:
    """True when the engine plays the network by default: ``XIANGQI_EVAL`` unset, empty or ``nnue``
    (read at every search). ``XIANGQI_EVAL=texel`` (the shipped tables), ``hand`` or a tables file
    plays the tables instead; ``Engine.evaluation`` overrides this per engine."""
    return os.environ.get(EVAL_ENV, "") in ("", "nnue")


def net_path() -> str:
    """The weights file played: ``XIANGQI_NNUE`` or the shipped one."""
    return os.environ.get(NNUE_ENV) or SHIPPED_NET


def mirror_permutation() -> np.ndarray:
    """int64 [N_FEAT]: the feature of the left-right mirrored square (file f ↔ 8 − f)."""
    f = np.arange(N_FEAT)
    sq = f % 90
    return (f - sq) + (sq // 9) * 9 + (8 - sq % 9)


def load_net(path: str) -> dict[str, np.ndarray]:
    """The quantised arrays of a weights file: ``ft_w`` int16 [1260, 128], ``ft_b`` int16 [128],
    ``l1_w`` int16 [32, 128], ``l1_b`` int32 [32], ``l2_w`` int32 [32], ``l2_b`` int64 [1].

    Raises ValueError on a missing array or a wrong shape.
    """
    shapes = {"ft_w": (N_FEAT, N_ACC), "ft_b": (N_ACC,), "l1_w": (N_L1, N_ACC), "l1_b": (N_L1,),
              "l2_w": (N_L1,), "l2_b": (1,)}
    types = {"ft_w": np.int16, "ft_b": np.int16, "l1_w": np.int16, "l1_b": np.int32, "l2_w": np.int32,
             "l2_b": np.int64}
    out = {}
    with np.load(path) as z:
        for k, shp in shapes.items():
            if k not in z.files:
                raise ValueError(f"{path}: no array {k}")
            a = np.ascontiguousarray(z[k]).reshape(-1) if k == "l2_b" else np.ascontiguousarray(z[k])
            if a.shape != shp:
                raise ValueError(f"{path}: {k} has shape {a.shape}, expected {shp}")
            out[k] = a.astype(types[k])
    return out


def _played_net() -> dict[str, np.ndarray]:
    path = net_path()
    if os.path.exists(path) or selected():
        return load_net(path)  # a missing file is an error only when the network is played
    return {"ft_w": np.zeros((N_FEAT, N_ACC), np.int16), "ft_b": np.zeros(N_ACC, np.int16),
            "l1_w": np.zeros((N_L1, N_ACC), np.int16), "l1_b": np.zeros(N_L1, np.int32),
            "l2_w": np.zeros(N_L1, np.int32), "l2_b": np.zeros(1, np.int64)}


_NET = _played_net()
FT_W = _NET["ft_w"]
FT_B = _NET["ft_b"]
L1_W = _NET["l1_w"]
# the first dense layer's integer weights as float32 (forward)
L1_WF = np.ascontiguousarray(_NET["l1_w"].astype(np.float32))
L1_B = _NET["l1_b"]
L2_W = _NET["l2_w"]
L2_B = _NET["l2_b"]


@njit
def feature(persp, p, sq):
    """Feature index of piece code ``p`` (≠ 0) on ``sq`` for perspective ``persp`` (0 Red, 1 Black)."""
    own = (p > 0) == (persp == 0)
    t = (p if p > 0 else -p) - 1
    s = sq if persp == 0 else (9 - sq // 9) * 9 + sq % 9
    return ((0 if own else 7) + t) * 90 + s


def features_np(bd: np.ndarray, persp: int) -> np.ndarray:
    """The active features of one board (int8 [90]) for a perspective, as an int64 array (numpy)."""
    sqs = np.nonzero(bd)[0]
    p = bd[sqs].astype(np.int64)
    own = (p > 0) == (persp == 0)
    s = sqs if persp == 0 else (9 - sqs // 9) * 9 + sqs % 9
    return (np.where(own, 0, 7) + np.abs(p) - 1) * 90 + s


def new_state() -> np.ndarray:
    """A zeroed search state array long enough for the accumulator stack (int64 [STATE_SIZE])."""
    return np.zeros(STATE_SIZE, np.int64)


@njit
def refresh(bd, st):
    """Accumulator of ``bd`` from scratch into stack entry 0 (sets the stack pointer to 0)."""
    if st.shape[0] < STATE_SIZE:
        return
    a = st.view(np.int16)
    st[ST_SP] = 0
    base = ACC_OFF16
    for j in range(N_ACC):
        a[base + j] = FT_B[j]
        a[base + N_ACC + j] = FT_B[j]
    for sq in range(90):
        p = bd[sq]
        if p != 0:
            fr = feature(0, p, sq)
            fb = feature(1, p, sq)
            for j in range(N_ACC):
                a[base + j] += FT_W[fr, j]
            for j in range(N_ACC):
                a[base + N_ACC + j] += FT_W[fb, j]


@njit
def acc_push(st, p, frm, to, cap):
    """Push the accumulator after piece ``p`` moved ``frm`` → ``to`` capturing ``cap`` (0 = none)."""
    a = st.view(np.int16)
    sp = st[ST_SP]
    src = ACC_OFF16 + sp * ENTRY
    st[ST_SP] = sp + 1
    # row views and an explicit int16 result: the loops vectorise (8x faster than indexing ``a``)
    s = a[src:src + ENTRY]
    d = a[src + ENTRY:src + 2 * ENTRY]
    for persp in range(2):
        o = persp * N_ACC
        wa = FT_W[feature(persp, p, to)]
        wr = FT_W[feature(persp, p, frm)]
        if cap != 0:
            wc = FT_W[feature(persp, cap, to)]
            for j in range(N_ACC):
                d[o + j] = np.int16(s[o + j] + wa[j] - wr[j] - wc[j])
        else:
            for j in range(N_ACC):
                d[o + j] = np.int16(s[o + j] + wa[j] - wr[j])


@njit
def nnue_make(st, p, frm, to, cap):
    """The search's make-move hook: :func:`acc_push` when ``st`` carries the accumulator stack (the
    engine allocates it so when the network is played)."""
    if st.shape[0] >= STATE_SIZE:
        acc_push(st, p, frm, to, cap)


@njit
def nnue_unmake(st):
    """The search's unmake hook: pop the accumulator."""
    if st.shape[0] >= STATE_SIZE:
        st[ST_SP] -= 1


@numba.njit(cache=True, nogil=True, fastmath=True)
def forward(st, side):
    """The network's score (centipawns, side ``side`` to move) from the accumulator on top of the stack.

    The first dense layer runs in float32 on the integer activations and weights, its dot products
    vectorised (``fastmath`` lets LLVM reorder the sums; the inputs are integers, so only sums beyond
    2^24 can round, and a mirrored or colour-flipped position gives the same inputs in the same order).
    """
    a = st.view(np.int16)
    z = st.view(np.float32)
    base = ACC_OFF16 + st[ST_SP] * ENTRY
    pooled = z[P_OFF32:P_OFF32 + N_ACC]  # row views: the loops vectorise
    for persp in range(2):
        src = base + (side if persp == 0 else 1 - side) * N_ACC
        x = a[src:src + N_ACC]
        o = persp * N_HALF
        for k in range(N_HALF):
            v0 = np.int32(x[k])
            v1 = np.int32(x[N_HALF + k])
            pooled[o + k] = np.float32(min(max(v0, 0), QA) + min(max(v1, 0), QA))
    out = np.int64(L2_B[0])
    top = QA * QB
    for i in range(N_L1):
        w = L1_WF[i]
        acc = np.float32(0.0)
        for k in range(N_ACC):
            acc += pooled[k] * w[k]
        s = np.int64(acc) + L1_B[i]  # 1.0 = QA · QB, clipped without rounding
        if s < 0:
            s = 0
        elif s > top:
            s = top
        out += s * L2_W[i]
    d = QO * QA * QB
    v = (out + d // 2) // d
    if v > EVAL_LIMIT:
        return EVAL_LIMIT
    if v < -EVAL_LIMIT:
        return -EVAL_LIMIT
    return v


@njit
def static_eval(bd, ks, st):
    """The search's static evaluation for the side to move: the network when ``st`` holds the
    accumulator stack (:func:`new_state`), else the Texel evaluation
    (:func:`xiangqi.engine.evaluate.evaluate`)."""
    if st.shape[0] >= STATE_SIZE:
        return forward(st, st[S_SIDE])
    return evaluate(bd, ks, st[S_SIDE], st[S_MG], st[S_EG], st[S_PH])


@njit
def evaluate_board(bd, side, st):
    """The network's score of a board (``side`` to move) by a full refresh; ``st`` is scratch of
    :data:`STATE_SIZE` (for tests and tools)."""
    refresh(bd, st)
    return forward(st, side)


def float_params(path: str) -> dict[str, np.ndarray]:
    """The float network stored with the quantised one (``f_*`` arrays: the trainer's parameters)."""
    with np.load(path) as z:
        return {k[2:]: np.array(z[k], np.float64) for k in z.files if k.startswith("f_")}


def float_forward(params: dict[str, np.ndarray], bd: np.ndarray, side: np.ndarray) -> np.ndarray:
    """The float network's centipawns for boards ``bd`` int8 [n, 90], ``side`` [n] to move (numpy).

    ``params``: ``wh`` [1260, 64] (the first neuron of each mirror pair), ``bh`` [64], ``a1`` [32, 128],
    ``c1`` [32], ``a2`` [32], ``c2`` [1] (tools/nnue_train.py's parameterisation).
    """
    mir = mirror_permutation()
    w = np.concatenate([params["wh"], params["wh"][mir]], axis=1)
    b = np.concatenate([params["bh"], params["bh"]])
    out = np.zeros(len(bd))
    for i in range(len(bd)):
        accs = []
        for persp in (int(side[i]), 1 - int(side[i])):
            acc = b + w[features_np(bd[i], persp)].sum(axis=0)
            h = np.clip(acc, 0.0, 1.0)
            accs.append(h[:N_HALF] + h[N_HALF:])
        pooled = np.concatenate(accs)
        z = np.clip(params["a1"] @ pooled + params["c1"], 0.0, 1.0)
        out[i] = SCALE * (params["a2"] @ z + params["c2"][0])
    return out
