"""The NNUE evaluation (xiangqi.engine.nnue, tools/nnue_train.py; issue 16 step 2): the incremental
accumulator, quantisation, symmetry, and the engine playing it (the default; ``XIANGQI_EVAL=texel`` or
``Engine.evaluation = "texel"`` plays the tables)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from xiangqi.core.board import Board
from xiangqi.engine import Engine, Limit, nnue, search
from xiangqi.engine.evaluate import evaluate, material_state
from xiangqi.engine.movegen import board_arrays, gen_moves, is_legal_move, king_attacked

ROOT = Path(__file__).resolve().parents[2]


def _legal(bd, ks, side) -> list[int]:
    moves = np.zeros(256, np.int64)
    n = gen_moves(bd, side, moves, False)
    chk = king_attacked(bd, ks[side], side)
    return [int(moves[i]) for i in range(n) if is_legal_move(bd, ks, side, moves[i], chk)]


def _random_positions(n: int, seed: int) -> list[tuple[np.ndarray, int]]:
    """``n`` (board, side) pairs from random games from the start (captures preferred half the time)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        bd, ks, side = board_arrays(Board())
        st = np.zeros(8, np.int64)
        st[0] = side
        rk = np.zeros(512, np.int64)
        rf = np.zeros(512, np.int64)
        for _ply in range(rng.randrange(4, 120)):
            legal = _legal(bd, ks, int(st[0]))
            if not legal:
                break
            caps = [m for m in legal if bd[m & 127] != 0]
            m = rng.choice(caps) if caps and rng.random() < 0.5 else rng.choice(legal)
            search.make_move(bd, ks, st, rk, rf, m)
            st[5] = 0
        out.append((bd.copy(), int(st[0])))
    return out


def _flip_colours(bd: np.ndarray) -> np.ndarray:
    out = np.zeros(90, np.int8)
    for sq in range(90):
        out[(9 - sq // 9) * 9 + sq % 9] = -bd[sq]
    return out


def _mirror(bd: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(bd.reshape(10, 9)[:, ::-1].reshape(90))


def test_shipped_net_loads_with_the_engine_shapes() -> None:
    net = nnue.load_net(nnue.SHIPPED_NET)
    assert net["ft_w"].shape == (1260, 128) and net["ft_w"].dtype == np.int16
    assert net["l1_w"].shape == (32, 128) and net["l1_w"].dtype == np.int16
    # the mirror pairs: neuron j + 64 is neuron j on the mirrored squares
    mir = nnue.mirror_permutation()
    assert np.array_equal(net["ft_w"][:, 64:], net["ft_w"][mir, :64])
    assert np.array_equal(net["ft_b"][64:], net["ft_b"][:64])
    # the int16 accumulator cannot overflow: 32 pieces of the largest weights plus the bias
    assert 32 * int(np.abs(net["ft_w"]).max()) + int(np.abs(net["ft_b"]).max()) < 32767


def test_incremental_accumulator_equals_refresh_through_make_and_unmake() -> None:
    """Random walks with the search's own make/unmake (captures, take-backs, a 60-ply stack)."""
    rng = random.Random(7)
    bd, ks, side = board_arrays(Board())
    st = nnue.new_state()
    st[0] = side
    nnue.refresh(bd, st)
    ref = nnue.new_state()
    rk = np.zeros(4096, np.int64)
    rf = np.zeros(4096, np.int64)
    stack: list[tuple[int, int]] = []
    captures = unmakes = 0
    for _step in range(1200):
        legal = _legal(bd, ks, int(st[0]))
        if stack and (not legal or len(stack) >= 60 or rng.random() < 0.3):
            m, cap = stack.pop()
            search.unmake_move(bd, ks, st, m, cap)
            unmakes += 1
        elif legal:
            caps = [m for m in legal if bd[m & 127] != 0]
            m = rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(legal)
            cap = search.make_move(bd, ks, st, rk, rf, m)
            captures += cap != 0
            stack.append((m, cap))
        else:
            break
        assert st[nnue.ST_SP] == len(stack)
        nnue.refresh(bd, ref)
        a = st.view(np.int16)
        o = nnue.ACC_OFF16 + len(stack) * nnue.ENTRY
        b = ref.view(np.int16)[nnue.ACC_OFF16:nnue.ACC_OFF16 + nnue.ENTRY]
        assert np.array_equal(a[o:o + nnue.ENTRY], b)
        assert nnue.forward(st, int(st[0])) == nnue.forward(ref, int(st[0]))
    assert captures > 30 and unmakes > 200


def test_quantised_forward_matches_the_float_network() -> None:
    """The engine's quantised forward pass against the trainer's float network: within 3 cp on every
    position, 0.7 cp on average (the int16 weights' rounding and the output's rounding to 1 cp)."""
    params = nnue.float_params(nnue.SHIPPED_NET)
    pos = _random_positions(120, seed=3)
    bds = np.stack([p[0] for p in pos])
    sides = np.array([p[1] for p in pos])
    f = nnue.float_forward(params, bds, sides)
    st = nnue.new_state()
    q = np.array([nnue.evaluate_board(b, s, st) for b, s in pos], float)
    diff = np.abs(q - f)
    assert diff.max() <= 3, diff.max()
    assert diff.mean() <= 0.7, diff.mean()
    assert f.std() > 50  # the network tells positions apart (random games: material swings)


def test_network_is_symmetric_under_colour_flip_and_mirror() -> None:
    st = nnue.new_state()
    values = set()
    for bd, side in _random_positions(60, seed=11):
        v = nnue.evaluate_board(bd, side, st)
        values.add(v)
        assert nnue.evaluate_board(_flip_colours(bd), 1 - side, st) == v
        assert nnue.evaluate_board(_mirror(bd), side, st) == v
        assert nnue.evaluate_board(_flip_colours(_mirror(bd)), 1 - side, st) == v
    assert len(values) > 40


def test_network_knows_material() -> None:
    """A rook more is worth several hundred centipawns to the side that has it."""
    bd, _ks, side = board_arrays(Board())
    st = nnue.new_state()
    even = nnue.evaluate_board(bd, 0, st)
    bd[89] = 0  # Black's i9 rook gone
    up = nnue.evaluate_board(bd, 0, st)
    down = nnue.evaluate_board(bd, 1, st)
    assert abs(even) < 100
    assert up - even > 250 and down < -200


@pytest.fixture()
def nnue_engine(monkeypatch) -> Engine:
    monkeypatch.setenv("XIANGQI_EVAL", "nnue")
    return Engine(hash_mb=16)


def test_engine_with_the_network_finds_mate_in_two(nnue_engine: Engine) -> None:
    b = Board("4k4/9/4b4/9/9/9/9/9/3R5/3RK4 w")
    res = nnue_engine.search(b, Limit(depth=6))
    assert res.mate == 2
    b.push(res.move)
    for r in list(b.legal_moves):
        b.push(r, validate=False)
        assert any(not list(_after(b, m).legal_moves) for m in b.legal_moves)
        b.pop()


def _after(b: Board, m) -> Board:
    c = b.copy()
    c.push(m, validate=False)
    return c


def test_engine_with_the_network_plays_legal_moves_and_own_scores(nnue_engine: Engine, monkeypatch) -> None:
    b = Board()
    for _ in range(12):
        res = nnue_engine.search(b, Limit(depth=4))
        assert res.move in list(b.legal_moves)
        b.push(res.move)
    # the network, not the tables, scored it: the same search with the Texel tables differs
    nn = Engine(hash_mb=16).search(b, Limit(depth=3))
    monkeypatch.setenv("XIANGQI_EVAL", "texel")
    tex = Engine(hash_mb=16).search(b, Limit(depth=3))
    assert (nn.score_cp, nn.nodes) != (tex.score_cp, tex.nodes)
    # the network is the default (XIANGQI_EVAL unset), and Engine.evaluation overrides the environment
    monkeypatch.delenv("XIANGQI_EVAL")
    default = Engine(hash_mb=16).search(b, Limit(depth=3))
    assert (default.score_cp, default.nodes) == (nn.score_cp, nn.nodes)
    e = Engine(hash_mb=16)
    e.evaluation = "texel"
    got = e.search(b, Limit(depth=3))
    assert (got.score_cp, got.nodes) == (tex.score_cp, tex.nodes)
    bd, ks, side = board_arrays(b)
    assert e.static_evaluation(b) == int(evaluate(bd, ks, side, *material_state(bd)))
    e.evaluation = "nnue"
    assert e.static_evaluation(b) == nnue.evaluate_board(bd, side, nnue.new_state())
    assert e.static_evaluation(b) != int(evaluate(bd, ks, side, *material_state(bd)))
    e.evaluation = "hand"
    with pytest.raises(ValueError, match="evaluation must be one of nnue, texel"):
        e.search(b, Limit(depth=1))


def test_trainer_gradients_match_finite_differences() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import nnue_train

    rng = np.random.default_rng(0)
    p = {k: v.astype(np.float64) for k, v in nnue_train.init_params(rng).items()}
    p["c1"][:] = 0.3
    pos = _random_positions(24, seed=5)
    data = {"bd": np.ascontiguousarray(np.stack([q[0] for q in pos])), "side": np.array([q[1] for q in pos])}
    idx = np.arange(24)
    y = rng.random(24)
    k = 0.0064
    _, g = nnue_train.forward(p, data, idx, k, y)
    for name, ij in [("wh", (nnue.feature(0, 5, 0), 3)), ("bh", (5,)), ("a1", (3, 70)), ("c1", (4,)),
                     ("a2", (7,)), ("c2", (0,))]:
        q = {kk: vv.copy() for kk, vv in p.items()}
        q[name][ij] += 1e-5
        lp, _ = nnue_train.forward(q, data, idx, k, y)
        q[name][ij] -= 2e-5
        lm, _ = nnue_train.forward(q, data, idx, k, y)
        num = (lp - lm) / 2e-5
        assert abs(num - g[name][ij]) <= 1e-3 * abs(num) + 1e-7, (name, num, g[name][ij])
