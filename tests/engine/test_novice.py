"""入门 (novice), the level below 初级, and the greedy test opponent (issue 16)."""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.engine import LEVELS, Engine, get_level
from xiangqi.engine.levels import EXTRA_LEVELS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import greedy_engine  # noqa: E402

# Red's rook on a0 can take Black's undefended rook on a4 (or the pawn on e3 with its cannon)
FREE_ROOK = "3k5/9/9/9/9/9/r8/4p4/4C4/R3K4 w - - 0 1"


def test_greedy_takes_the_most_valuable_piece():
    b = Board(FREE_ROOK)
    assert greedy_engine.choose(b, random.Random(1)).iccs() == "a0a3"
    # from the start a cannon takes a horse (the two captures of the same value, at random)
    start = Board()
    assert {greedy_engine.choose(start, random.Random(s)).iccs() for s in range(20)} == {"b2b9", "h2h9"}
    # nothing to take: a random legal move, the same for the same seed
    quiet = Board("3k5/9/9/9/9/9/9/9/9/RNBAKABNR w - - 0 1")
    a = [greedy_engine.choose(quiet, random.Random(7)).iccs() for _ in range(3)]
    assert len(set(a)) == 1 and Move.from_iccs(a[0]) in set(quiet.legal_moves)
    seen = {greedy_engine.choose(quiet, random.Random(s)).iccs() for s in range(40)}
    assert len(seen) > 10


def test_novice_is_a_level_below_beginner():
    lv = get_level("入门")
    assert lv.key == "novice" and lv.name_en == "Novice" and get_level("Novice") is lv
    # the engine, the match tool and the app's level list (weakest first) know it
    assert list(LEVELS)[0] == "novice" and "novice" not in EXTRA_LEVELS
    from xiangqi.engine.uci.server import EngineServer
    from xiangqi.match.runner import PlayerSpec

    assert PlayerSpec.parse("builtin:入门").options == {"Level": "novice"}
    assert "var novice" in dict(EngineServer(write=lambda _: None)._options())["Level"]
    assert lv.miss_threat > 0 and lv.miss_capture > 0
    assert get_level("novice").depth < get_level("beginner").depth


@pytest.fixture(scope="module")
def engine():
    return Engine(hash_mb=8)


def test_novice_sometimes_misses_a_free_rook_but_plays_no_nonsense(engine):
    b = Board(FREE_ROOK)
    picks = Counter()
    for seed in range(60):
        engine.new_game()
        picks[engine.play(b, "novice", seed=seed).move.iccs()] += 1
    # it takes the rook most of the time, and misses it some of the time
    assert 30 <= picks["a0a3"] <= 57, picks
    # what else it plays are moves a beginner makes: other captures, or quiet moves that keep
    # the material (the full-strength search never plays any of these here, it takes the rook)
    engine.new_game()
    assert engine.play(b, "master", seed=1).move.iccs() == "a0a3"
    assert len(picks) <= 12


def test_novice_sees_mate_in_one(engine):
    # Rb9 mates: the a8 rook covers e8, the b9 rook d9 and f9 (the red king covers the d-file too)
    b = Board("4k4/R8/9/9/9/9/9/9/9/1R1K5 w - - 0 1")
    mates = set()
    for m in b.legal_moves:
        c = b.copy()
        c.push(m)
        if c.is_checkmate():
            mates.add(m.iccs())
    assert mates == {"b0b9"}
    for seed in range(10):
        engine.new_game()
        assert engine.play(b, "novice", seed=seed).move.iccs() == "b0b9"
