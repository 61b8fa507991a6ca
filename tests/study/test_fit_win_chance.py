"""tools/fit_win_chance.py: the maximum-likelihood fit recovers a known constant; a small real run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "ccpd" / "CCPD-Dataset-original-big5.tar.gz"


def _tool():
    spec = importlib.util.spec_from_file_location("fit_win_chance", ROOT / "tools" / "fit_win_chance.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fit_recovers_a_known_constant_with_draws_and_large_scores() -> None:
    tool = _tool()
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-600, 600, 20000), rng.uniform(2000, 3000, 200)])
    p = 1 / (1 + np.exp(-0.0065 * x))
    # scores 0 / ½ / 1 with expectation p: a draw with probability d, else a win with probability q
    d = 0.6 * (1 - np.abs(2 * p - 1))
    q = (p - 0.5 * d) / (1 - d)
    s = np.where(rng.random(x.size) < d, 0.5, (rng.random(x.size) < q).astype(float))
    assert abs(np.mean(s) - np.mean(p)) < 0.01 and np.mean(s == 0.5) > 0.2
    k = tool.fit_k(x, s)
    assert k == pytest.approx(0.0065, rel=0.06)
    a, k2 = tool.fit_k_intercept(x + 30, s)  # a shifted scale: the intercept takes the shift
    assert k2 == pytest.approx(k, rel=0.05) and a == pytest.approx(-30 * k2, abs=0.05)
    assert tool.log_loss(x, s, k) < tool.log_loss(x, s, 0.00368208) < tool.log_loss(x, s, 0.0)


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_file(), reason="the team corpus ../shared/corpus is not here")
def test_extract_and_fit_on_a_few_master_games(tmp_path, capsys) -> None:
    tool = _tool()
    out = tmp_path / "wc.tsv"
    tool.main(["extract", "--corpus", str(CORPUS), "--games", "5", "--depth", "2", "--plies", "16,30",
               "--out", str(out)])
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 10 and {r[1] for r in rows} == {"16", "30"}
    assert all(r[4] in ("1.0", "0.5", "0.0") for r in rows)
    tool.main(["fit", "--data", str(out), "--boot", "5"])
    assert "K = " in capsys.readouterr().out
