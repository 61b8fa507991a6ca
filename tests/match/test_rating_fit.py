"""The joint Elo fit of bench/calibrate_levels.py (``xiangqi.match.runner.fit_ratings``) and the
level ratings file that ``xiangqi.engine.levels`` reads."""

from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
from pathlib import Path

import pytest

from xiangqi.engine import levels as levels_mod
from xiangqi.match.runner import ELO_SCALE, MatchError, fit_ratings


def expected(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


TRUE = {"A": 1250.0, "B": 1520.0, "C": 1810.0, "X": 1350.0, "Y": 1600.0, "Z": 1900.0}
ANCHORS = {"X": 1350.0, "Y": 1600.0, "Z": 1900.0}
PAIRS = [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y"), ("B", "Z"), ("C", "Y"), ("C", "Z"), ("A", "B"),
         ("B", "C")]


def test_expected_scores_give_back_the_true_ratings_exactly():
    # each pairing scores exactly its expectation: the maximum-likelihood ratings are the true ones
    games = [(a, b, expected(TRUE[a], TRUE[b])) for a, b in PAIRS for _ in range(10)]
    fit = fit_ratings(games, ANCHORS, prior_draws=0)
    for p in TRUE:
        assert fit[p].elo == pytest.approx(TRUE[p], abs=0.01)
    assert {p: fit[p].error for p in ANCHORS} == {"X": 0.0, "Y": 0.0, "Z": 0.0}
    assert (fit["A"].games, fit["B"].games, fit["X"].games) == (30, 50, 20)


def test_one_player_against_one_anchor_has_the_textbook_error_bar():
    # 7 wins, 3 losses against a 1500 anchor: p = 0.7, +147.2 Elo; SE = 400/ln10 / sqrt(n p (1-p))
    games = [("P", "X", 1.0)] * 7 + [("P", "X", 0.0)] * 3
    fit = fit_ratings(games, {"X": 1500}, prior_draws=0)
    assert fit["P"].elo == pytest.approx(1500 - 400 * math.log10(1 / 0.7 - 1), abs=1e-6)
    assert fit["P"].error == pytest.approx(1.959964 * ELO_SCALE / math.sqrt(10 * 0.7 * 0.3), rel=1e-6)
    assert fit["P"].error == pytest.approx(234.95, abs=0.01)


def test_random_games_recover_known_ratings_within_their_error_bars():
    rng = random.Random(20261129)
    games = []
    for a, b in PAIRS:
        p = expected(TRUE[a], TRUE[b])
        for _ in range(300):
            u = rng.random()
            # a third of the games that are not clear results are draws (half a point)
            s = 1.0 if u < p - 0.1 else 0.0 if u > p + 0.1 else 0.5
            games.append((a, b, s))
    fit = fit_ratings(games, ANCHORS)
    for p in ("A", "B", "C"):
        assert abs(fit[p].elo - TRUE[p]) < fit[p].error, (p, fit[p])
        assert 15 < fit[p].error < 60
    assert fit["A"].elo < fit["B"].elo < fit["C"].elo


def test_a_clean_sweep_stays_finite_and_unreachable_players_are_left_out():
    games = [("P", "X", 1.0)] * 10 + [("Q", "R", 0.5)] * 4
    fit = fit_ratings(games, {"X": 1500})
    # one virtual draw: 10.5 / 11 points
    assert fit["P"].elo == pytest.approx(1500 - 400 * math.log10(11 / 10.5 - 1), abs=1e-6)
    assert set(fit) == {"P", "X"}
    with pytest.raises(MatchError, match="no anchored player"):
        fit_ratings(games, {"Y": 1500})
    with pytest.raises(MatchError, match="between 0 and 1"):
        fit_ratings([("P", "X", 2.0)], {"X": 1500})
    for bad in (-1.0, float("nan")):  # -1 was a numpy LinAlgError (singular matrix)
        with pytest.raises(MatchError, match="prior_draws must be >= 0"):
            fit_ratings([("P", "X", 1.0)] * 3, {"X": 1500}, prior_draws=bad)


# -- the ratings file ----------------------------------------------------------------------------------

def test_levels_read_their_elo_from_the_file(tmp_path):
    f = tmp_path / "level_elo.json"
    f.write_text(json.dumps({"levels": {"beginner": {"elo": 1149.6, "error": 61.2, "games": 40},
                                        "master": {"elo": 2210, "error": 95, "games": 12},
                                        "advanced": {"elo": None}, "unknown": {"elo": 1500}},
                             "date": "2026-11-29"}), encoding="utf-8")
    table = levels_mod.load_elos(f)
    assert table == {"beginner": {"elo": 1150, "error": 61, "games": 40},
                     "master": {"elo": 2210, "error": 95, "games": 12},
                     "unknown": {"elo": 1500, "error": None, "games": 0}}
    lv = levels_mod.with_elos(levels_mod.BASE_LEVELS, table)
    assert (lv["beginner"].elo, lv["beginner"].elo_error, lv["beginner"].elo_games) == (1150, 61, 40)
    assert (lv["beginner"].rank_zh, lv["master"].rank_zh) == ("县丞", "太尉")
    assert (lv["advanced"].elo, lv["advanced"].rank_zh) == (None, None)
    assert lv["master"].time == levels_mod.BASE_LEVELS["master"].time  # only the rating changes
    assert list(lv) == ["novice", "beginner", "intermediate", "advanced", "master"]


@pytest.mark.parametrize("text", [None, "", "{not json", "[]", '{"levels": []}',
                                  '{"levels": {"beginner": 3}}',
                                  '{"levels": {"beginner": {"elo": "1200"}}}',
                                  '{"levels": {"beginner": {"elo": NaN}}}',
                                  '{"levels": {"beginner": {"elo": true}}}'])
def test_a_missing_or_broken_ratings_file_means_no_elo(tmp_path, text):
    f = tmp_path / "level_elo.json"
    if text is not None:
        f.write_text(text, encoding="utf-8")
    assert levels_mod.load_elos(f) == {}
    assert all(lv.elo is None for lv in levels_mod.with_elos(levels_mod.BASE_LEVELS, {}).values())


@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000,  # once a RecursionError at import
                                 b'{"levels": {"beginner": {"elo": 0.4}}}',  # rounds to Elo 0
                                 b'{"levels": {"beginner": {"elo": 1e30}}}',  # no GUI's spin takes it
                                 b'{"levels": {"beginner": {"elo": 5001}}}'])
def test_a_damaged_ratings_file_gives_no_elo_and_never_raises(tmp_path, raw):
    f = tmp_path / "level_elo.json"
    f.write_bytes(raw)
    assert levels_mod.load_elos(f) == {}


def test_ratings_file_edge_values(tmp_path):
    f = tmp_path / "level_elo.json"
    # a byte-order mark (an editor's UTF-8) is fine; absurd error bars and game counts are dropped
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps({"levels": {
        "beginner": {"elo": 1, "error": 1e9, "games": 1e300},
        "master": {"elo": 5000, "error": 80, "games": 12}}}).encode())
    assert levels_mod.load_elos(f) == {"beginner": {"elo": 1, "error": None, "games": 0},
                                       "master": {"elo": 5000, "error": 80, "games": 12}}


def test_the_shipped_ratings_file_is_read_when_present():
    table = levels_mod.load_elos()
    if not levels_mod.ELO_FILE.exists():
        assert table == {}
        return
    assert set(table) <= set(levels_mod.BASE_LEVELS) and table
    for key, m in table.items():
        assert levels_mod.LEVELS[key].elo == m["elo"] and 0 < m["elo"] < 4000


# -- the calibration tool's helpers ------------------------------------------------------------------------

def _tool():
    path = Path(__file__).resolve().parents[2] / "bench" / "calibrate_levels.py"
    spec = importlib.util.spec_from_file_location("calibrate_levels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_anchor_elos_sit_on_stockfish_skill_level_steps():
    tool = _tool()
    assert tool.ANCHOR_ELOS[:4] == (1350, 1491, 1598, 1695)
    assert [tool.skill_level(e) for e in tool.ANCHOR_ELOS] == list(range(19))
    assert all(tool.skill_level(e - 1) < lv for lv, e in enumerate(tool.ANCHOR_ELOS) if lv > 1)
    assert tool.bracket(1650, 2) == [1598, 1695]
    assert tool.bracket(1200, 3) == [1350, 1491, 1598]


def test_the_tool_fits_only_games_of_this_engine_and_these_settings(tmp_path):
    tool = _tool()
    f = tmp_path / "games.jsonl"
    setup = {"beginner": "b-settings", "fsf1350": "f-settings"}
    good = {"red": "beginner", "black": "fsf1350", "result": "1-0", "engine": "abc", "setup": setup}
    lines = [json.dumps(good), json.dumps({**good, "result": "0-1", "red": "fsf1350", "black": "beginner"}),
             json.dumps({**good, "engine": "old"}), json.dumps({**good, "setup": {**setup, "beginner": "x"}}),
             "garbage", json.dumps({"red": "beginner"})]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    recs = tool.read_results(f)
    assert len(recs) == 4
    cur = [r for r in recs if tool.valid(r, "abc", setup)]
    assert len(cur) == 2
    # beginner won both (as Red and as Black); with one virtual draw: 2.5 / 3 points
    fit = tool.fit(cur, {"fsf1350": 1350})
    assert fit["beginner"].elo == pytest.approx(1350 + 400 * math.log10(2.5 / 0.5), abs=1e-6)
    assert fit["beginner"].games == 2


@pytest.mark.parametrize("bad, message", [
    (["--fsf-elos", "beginner=900"], "--fsf-elos: Fairy-Stockfish's UCI_Elo goes from 1350 to 2850, got 900"),
    (["--fsf-elos", "beginner=1350,abc"], "--fsf-elos: expected a whole number, got 'abc'"),
    (["--levels", "grandmaster"], "--levels: unknown level 'grandmaster'"),
    (["--games-for", "master=x"], "--games-for: expected a whole number, got 'x'"),
    (["--bracket", "-1"], "--bracket: must be >= 0, got -1"),
    (["--concurrency", "0"], "--concurrency: must be >= 1, got 0"),
    (["--prior-draws", "-1"], "--prior-draws: must be >= 0, got -1.0"),
])
def test_the_tool_refuses_bad_arguments_with_a_message(tmp_path, bad, message):
    # an out-of-range UCI_Elo used to be passed on: Fairy-Stockfish ignores it and plays at 1350,
    # while the fit anchored those games at the asked value; the other cases were tracebacks
    tool = _tool()
    results = tmp_path / "games.jsonl"
    with pytest.raises(SystemExit) as info:
        tool.main(["--dry-run", "--results", str(results), *bad])
    assert str(info.value).startswith(message)
    assert not results.exists()
    assert tool.main(["--dry-run", "--results", str(results), "--levels", "初级", "--no-level-pairs",
                      "--fsf-elos", "beginner=1350,2850"]) == 0


@pytest.mark.parametrize("bad, message", [
    (["--fsf-full", "grandmaster"], "--fsf-full: unknown level 'grandmaster'"),
    (["--full-vs", "3000"], "--full-vs: Fairy-Stockfish's UCI_Elo goes from 1350 to 2850, got 3000"),
])
def test_the_full_strength_options_refuse_bad_values(tmp_path, bad, message):
    tool = _tool()
    with pytest.raises(SystemExit) as info:
        tool.main(["--dry-run", "--results", str(tmp_path / "g.jsonl"), *bad])
    assert str(info.value).startswith(message)


def test_full_strength_fairy_stockfish_links_a_level_above_the_scale(tmp_path, capsys, monkeypatch):
    # 大师 beats every UCI_Elo anchor, so it plays Fairy-Stockfish at full strength (fsffull, no
    # anchor), and fsffull plays the anchor fsf2820: the fit places fsffull from those games and
    # 大师 from fsffull
    monkeypatch.delenv("XIANGQI_EVAL", raising=False)
    tool = _tool()
    tc = tool.TimeControl.parse("200ms")
    master = tool.level_player(levels_mod.LEVELS["master"], 64)
    full = tool.fsf_full_player(tool.FSF, tc)
    f2820 = tool.fsf_player(2820, tool.FSF, tc)
    assert "UCI_LimitStrength" not in full.setup and full.anchor is None
    fp = tool.engine_fingerprint()

    def rec(red, black, result, engine=fp):
        return {"red": red.id, "black": black.id, "result": result, "engine": engine,
                "setup": {red.id: red.setup, black.id: black.setup}}

    games = [rec(master, full, "1-0"), rec(full, master, "0-1"), rec(master, full, "0-1"),
             rec(full, master, "1/2-1/2"), rec(full, f2820, "1-0"), rec(f2820, full, "0-1"),
             rec(full, f2820, "1-0"), rec(f2820, full, "1/2-1/2"), rec(full, f2820, "1-0", engine="old")]
    results = tmp_path / "games.jsonl"
    results.write_text("".join(json.dumps(g) + "\n" for g in games), encoding="utf-8")
    args = ["--results", str(results), "--levels", "master", "--bracket", "0", "--games", "4",
            "--fsf-full", "master", "--full-vs", "2820"]
    assert tool.main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "8 with engine" in out  # the game of another engine does not count
    assert "master (3s/move) vs fsffull      (0.2s/move): 4/4 played" in out
    assert "fsffull (0.2s/move) vs fsf2820      (0.2s/move): 4/4 played" in out
    elo_file = tmp_path / "level_elo.json"
    assert tool.main([*args, "--fit-only", "--write", "--elo-file", str(elo_file), "--note", "load 2"]) == 0
    want = tool.fit(games[:8], {"fsf2820": 2820})
    # fsffull: 3.5 of 4 against fsf2820 (+1 virtual draw: 4 / 5); 大师: 2.5 of 4 against fsffull
    assert want["fsffull"].elo == pytest.approx(2820 + 400 * math.log10(4.0 / 1.0), abs=1e-6)
    assert want["master"].elo == pytest.approx(want["fsffull"].elo + 400 * math.log10(3.0 / 2.0), abs=1e-6)
    data = json.loads(elo_file.read_text(encoding="utf-8"))
    m = want["master"]
    assert data["levels"] == {"master": {"elo": round(m.elo), "error": round(m.error), "games": 4,
                                         "evaluation": "nnue", "engine": fp}}
    assert data["conditions"].endswith("; load 2") and data["engine"] == fp
    assert "Fairy-Stockfish full strength (fsffull)   3061" in capsys.readouterr().out
