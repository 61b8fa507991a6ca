"""The Texel tuning pipeline (tools/texel_data.py, tools/texel_tune.py; issue 16).

Data: the 15 CCPD master games of tests/data/ecco (CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen
(2026)", see tests/data/SOURCES.md), packed here into a small archive laid out like the corpus.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from xiangqi.core.board import Board
from xiangqi.core.records import read_records

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import texel_data  # noqa: E402
import texel_tune  # noqa: E402

GAMES = sorted((ROOT / "tests/data/ecco").glob("ccpd_ecco_*.pgn"))


def make_corpus(path: Path) -> Path:
    """A .tar.gz with the 15 games under Dataset/對局/大師對局/, the first three filed twice
    (the collection files games under the player and the tournament), and one non-master file."""
    with tarfile.open(path, "w:gz") as tar:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        for i, p in enumerate(GAMES):
            add(f"Dataset/對局/大師對局/以棋手分類/{i:08d}.pgn", p.read_bytes())
        for i, p in enumerate(GAMES[:3]):
            add(f"Dataset/對局/大師對局/以賽事分類/{i:08d}.pgn", p.read_bytes())
        add("Dataset/殘局/00000001.pgn", GAMES[0].read_bytes())
    return path


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("texel")
    corpus = make_corpus(tmp / "corpus.tar.gz")
    out = tmp / "chunks"
    texel_data.generate(str(corpus), out, chunk=4, min_ply=10, limit_chunks=None)
    return corpus, out


def test_chunks_hold_every_game_once(data_dir):
    _, out = data_dir
    assert len(GAMES) == 15
    chunks = sorted(out.glob("chunk-*.npz"))
    assert [c.name for c in chunks] == [f"chunk-{k:04d}.npz" for k in range(5)]  # 18 files, 4 a chunk
    data = texel_data.load(out)
    games = np.unique(data["game"])
    assert len(games) == 15  # the three copies are dropped
    assert set(np.unique(data["result"])) <= {0.0, 0.5, 1.0}
    assert data["ply"].min() >= 10
    # each row is a real position of its game: side to move and ply agree
    assert np.all((data["ply"] % 2 == 1) == (data["side"] == 1))


def _fen(bd, side) -> str:
    sym = {1: "k", 2: "a", 3: "b", 4: "n", 5: "r", 6: "c", 7: "p"}
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(9):
            p = int(bd[r * 9 + f])
            if p == 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += sym[abs(p)].upper() if p > 0 else sym[abs(p)]
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows) + (" w" if side == 0 else " b") + " - - 0 1"


def test_positions_are_quiet(data_dir):
    _, out = data_dir
    data = texel_data.load(out)
    quiet = texel_data.QuietTest()
    for i in range(0, len(data["side"]), 5):
        b = Board(_fen(data["bd"][i], data["side"][i]))
        assert not b.is_check()
        assert quiet(b)[0]
    # of the 15 games' positions from ply 10 on, the test drops some (checks, open captures)
    plies = sum(len(read_records(p.read_bytes())[0].mainline_moves()) - 9 for p in GAMES)
    assert 0.5 * plies < len(data["side"]) < plies


@pytest.mark.parametrize("fen,quiet", [
    ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1", True),  # the start
    # Red's rook can take an undefended black rook: not quiet
    ("3k5/9/9/9/r8/9/9/9/9/R3K4 w - - 0 1", False),
    # Red is in check: not quiet
    ("3k5/9/9/9/9/9/9/9/9/r3K4 w - - 0 1", False),
    # both sides have a piece en prise: Black's Rxb4 is answered by Rxg2, so the capture wins
    # nothing and the position is the quiescence search's own leaf (a CCPD game position)
    ("3akab2/9/4b4/p3p3p/3P2P2/1N2c4/Pr7/4BRn1C/4A4/2BK1A3 b - - 0 1", True),
])
def test_the_quiet_test(fen, quiet):
    assert texel_data.QuietTest()(Board(fen))[0] is quiet


def test_a_run_goes_on_where_it_stopped(data_dir):
    corpus, out = data_dir
    before = texel_data.load(out)
    (out / "chunk-0002.npz").unlink()
    (out / "chunk-0004.npz").unlink()
    texel_data.generate(str(corpus), out, chunk=4, min_ply=10, limit_chunks=None)
    after = texel_data.load(out)
    # the missing chunks come back; the duplicate test still sees the chunks on disk
    assert len(np.unique(after["game"])) == 15
    assert sorted(after["game"].tolist()) == sorted(before["game"].tolist())


def test_the_linear_model_is_the_engines_evaluation(data_dir):
    _, out = data_dir
    worst = texel_tune.check(str(out), 2_000)
    assert worst <= 2.0  # the engine rounds down twice (phase blend, pattern scale)


def test_tables_round_trip():
    from xiangqi.engine.evaluate import PST_EG, PST_MG, W

    mg, eg, w = texel_tune.tables(texel_tune.initial_theta())
    assert np.array_equal(mg, PST_MG) and np.array_equal(eg, PST_EG) and np.array_equal(w, W)


def test_k_is_recovered_from_synthetic_results():
    # results drawn with P(Red wins) = sigmoid(0.004 e): the fitted K comes back near 0.004
    rng = np.random.default_rng(3)
    n = 200_000
    e = rng.normal(0, 300, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-0.004 * e))).astype(float)

    class Fixed:
        def __init__(self):
            self.y = y

        def evals(self, th):
            return e

    assert texel_tune.fit_k(Fixed(), None) == pytest.approx(0.004, rel=0.05)


def test_split_is_by_game():
    games = np.array([10, 10, 11, 20, 20, 20, 33])
    tr, va = texel_tune.split(games)
    assert va.tolist() == [0, 1, 3, 4, 5] and tr.tolist() == [2, 6]


def test_the_engine_loads_tuned_tables(tmp_path):
    from xiangqi.engine.evaluate import PST_EG, PST_MG, W

    w = W.copy()
    w[11] = 57  # tempo
    path = tmp_path / "cand.npz"
    np.savez(path, PST_MG=PST_MG, PST_EG=PST_EG, W=w)
    code = ("from xiangqi.core.board import Board; from xiangqi.engine.movegen import board_arrays; "
            "from xiangqi.engine.evaluate import evaluate, material_state; "
            "bd, ks, side = board_arrays(Board()); print(evaluate(bd, ks, side, *material_state(bd)))")
    # NUMBA_DISABLE_JIT: the kernels run as Python in these children. What is tested is which tables
    # they read, not the compiled code; compiling the kernels for a new table file cost ~10 s a child
    env = {**__import__("os").environ, "XIANGQI_EVAL": str(path), "NUMBA_DISABLE_JIT": "1"}
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    env.pop("XIANGQI_EVAL")
    base = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(got.stdout) - int(base.stdout) == 57 - int(W[11])
    bad = tmp_path / "bad.npz"
    np.savez(bad, PST_MG=PST_MG, W=w)
    env["XIANGQI_EVAL"] = str(bad)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "no array PST_EG (expected" in r.stderr


def test_the_shipped_tables_are_played_and_the_hand_set_ones_on_request():
    from xiangqi.engine import evaluate

    # the package plays the tuned file (candidate1 of 2026-12-01: docs/ENGINE.md, data/EVAL-README.md)
    assert evaluate.tables_source() == evaluate.SHIPPED_TABLES or "XIANGQI_EVAL" in __import__("os").environ
    mg, eg, w = evaluate.load_tables(evaluate.SHIPPED_TABLES)
    assert w.tolist() == [4, 13, -26, 21, 40, 20, -20, -12, 12, 6, 20, -2, 0, 0, 0, 0, 0]  # king attack: 0
    vm, ve = evaluate.load_material(evaluate.SHIPPED_TABLES)
    assert vm.tolist() == [0, 0, 134, 132, 80, 253, 235, 22] and ve[5] == 1087  # rook: midgame, endgame
    assert mg[5 + 7, 4] == -mg[-5 + 7, 85]  # Black's tables mirror Red's
    code = ("import numpy as np; from xiangqi.engine import evaluate as e, _numba; "
            "print(e.tables_source(), np.array_equal(e.PST_MG, e.HAND_PST_MG), "
            "np.array_equal(e.W, e.HAND_W), int(e.PST_MG[5 + 7, 0]), _numba.cache_dir())")
    env = {**__import__("os").environ, "NUMBA_DISABLE_JIT": "1"}  # which tables, not the compiled code
    env.pop("XIANGQI_EVAL", None)
    shipped = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True).stdout.split()
    env["XIANGQI_EVAL"] = "hand"
    hand = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.split()
    assert shipped[:4] == [evaluate.SHIPPED_TABLES, "False", "False", str(int(mg[5 + 7, 0]))]
    assert hand[:4] == ["hand", "True", "True", str(int(evaluate.HAND_PST_MG[5 + 7, 0]))]
    assert shipped[4] != hand[4]  # kernels compiled for other tables live in another cache directory


# 马后炮 and 卧槽马 against the king on e9 (Black to move, in check from the c8 horse), and the same
# mirrored against Red's king
KING_ATTACK_RED = "4k4/2N1N4/9/9/9/4C4/9/9/9/4K4 b"
KING_ATTACK_BLACK = "4k4/9/9/9/4c4/9/9/9/2n1n4/4K4 w"


def test_king_attack_counts_the_attackers_screens_and_horses():
    from xiangqi.engine.evaluate import king_attack
    from xiangqi.engine.movegen import board_arrays

    bd, ks, _ = board_arrays(Board(KING_ATTACK_RED))
    # zone: both horses (c8, e8); gathering: one beyond the first; the e4 cannon aims at e9 through
    # one screen, the e8 horse (马后炮); the c8 horse is on a 卧槽 square
    assert king_attack(bd, 1, ks[1]) == (2, 1, 1, 1, 1)
    assert king_attack(bd, -1, ks[0]) == (0, 0, 0, 0, 0)
    bd, ks, _ = board_arrays(Board(KING_ATTACK_BLACK))
    assert king_attack(bd, -1, ks[0]) == (2, 1, 1, 1, 1)
    assert king_attack(bd, 1, ks[1]) == (0, 0, 0, 0, 0)
    # a second screen: no longer a cannon with its screen
    bd, ks, _ = board_arrays(Board("4k4/2N1N4/9/4P4/9/4C4/9/9/9/4K4 b"))
    assert king_attack(bd, 1, ks[1]) == (3, 2, 0, 0, 1)  # the e6 pawn is in the zone too


def test_the_tuner_sees_the_king_attack_features():
    from xiangqi.engine.evaluate import KA_FIRST, KA_N
    from xiangqi.engine.movegen import board_arrays

    rows = [board_arrays(Board(f))[0].astype(np.int8) for f in (KING_ATTACK_RED, KING_ATTACK_BLACK)]
    data = {"bd": np.stack(rows), "side": np.array([1, 0], np.int8)}
    pat = texel_tune.build_features(data)["pat"]
    assert pat.shape[1] == texel_tune.NPAT == KA_FIRST + KA_N
    assert pat[0, KA_FIRST:].tolist() == [2, 1, 1, 1, 1]  # Red's counts minus Black's
    assert pat[1, KA_FIRST:].tolist() == [-2, -1, -1, -1, -1]
    assert pat[0, texel_tune.TEMPO] == -1 and pat[1, texel_tune.TEMPO] == 1
