"""The built-in engine: mates found, legal moves only, repetition rules, limits, stop, levels."""

from __future__ import annotations

import dataclasses
import random
import threading

import numpy as np
import pytest
from tests.conftest import cxa_case

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.engine import LEVELS, Engine, Limit, SearchInfo, get_level, rank_name
from xiangqi.engine import consts as K
from xiangqi.engine.timeman import budget


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(hash_mb=16)


def _mates_in_one(b: Board) -> list[Move]:
    out = []
    for m in list(b.legal_moves):
        b.push(m, validate=False)
        if not any(True for _ in b.legal_moves):  # mate or stalemate (困毙): both lose
            out.append(m)
        b.pop()
    return out


MATE_IN_1 = [
    "3k5/9/9/9/9/9/9/9/4R4/4K4 w",  # Rd1: e9 is covered by the flying general
    "4ka3/4a4/9/9/9/9/9/9/R8/R3K4 w",  # Ra9 on the back rank
    "5k3/9/9/9/9/9/9/9/3R5/2R1K4 w",
    "4k4/9/9/9/9/9/9/9/4r4/3K5 b",  # Black mates: Rd1
]
MATE_IN_2 = [
    "4k4/9/4b4/9/9/9/9/9/3R5/3RK4 w",
    "3k1a3/4a4/9/9/9/9/9/2N6/9/R3K4 w",
]
# Found by a random search of sparse endings and proved below with the core rules (no shorter mate).
MATE_IN_3 = [
    "3k5/4a4/9/9/3P5/8C/2R6/9/3K5/9 w",
    "2b3b2/3Ck4/9/9/1R7/9/5R3/9/5K3/9 w",
    "3k1a3/9/9/6R2/9/4N1R2/9/9/9/5K3 w",
]


def _mates_within(b: Board, n: int) -> bool:
    """True if the side to move mates (or stalemates, 困毙) in at most ``n`` moves: core brute force."""
    for m in list(b.legal_moves):
        b.push(m, validate=False)
        replies = list(b.legal_moves)
        ok = not replies
        if not ok and n > 1:
            ok = True
            for r in replies:
                b.push(r, validate=False)
                ok = _mates_within(b, n - 1)
                b.pop()
                if not ok:
                    break
        b.pop()
        if ok:
            return True
    return False


@pytest.mark.parametrize("fen", MATE_IN_1)
def test_finds_mate_in_one(engine: Engine, fen: str) -> None:
    b = Board(fen)
    res = engine.search(b, Limit(depth=4))
    assert res.mate == 1
    assert res.score_cp is None
    assert res.move in _mates_in_one(b)


@pytest.mark.parametrize("fen", MATE_IN_2)
def test_finds_mate_in_two(engine: Engine, fen: str) -> None:
    b = Board(fen)
    assert not _mates_in_one(b)
    res = engine.search(b, Limit(depth=6))
    assert res.mate == 2
    # every reply to the engine's move allows a mate in one (checked with the core rules)
    b.push(res.move)
    replies = list(b.legal_moves)
    assert replies
    for r in replies:
        b.push(r, validate=False)
        assert _mates_in_one(b), f"after {res.move} {r} there is no mate"
        b.pop()


@pytest.mark.parametrize("fen", MATE_IN_3)
def test_finds_mate_in_three(engine: Engine, fen: str) -> None:
    b = Board(fen)
    assert not _mates_within(b, 2)
    res = engine.search(b, Limit(depth=8))
    assert res.mate == 3
    # every reply to the engine's move still allows a mate in two (checked with the core rules)
    b.push(res.move)
    for r in list(b.legal_moves):
        b.push(r, validate=False)
        assert _mates_within(b, 2), f"after {res.move} {r} there is no mate in two"
        b.pop()


def test_mated_side_reports_mate_against(engine: Engine) -> None:
    # Black to move after Red's Rd1 in MATE_IN_1[0]'s line is not mated yet: use a mate-in-1-against.
    b = Board("3k5/9/9/9/9/9/9/9/4R4/4K4 b")
    res = engine.search(b, Limit(depth=5))
    assert res.mate == -1


def test_no_legal_move_returns_none(engine: Engine) -> None:
    b = Board("3k5/9/9/9/9/9/9/9/4R4/4K4 w")
    b.push(Move.from_iccs("e1d1"))
    res = engine.search(b, Limit(depth=3))
    assert res.move is None and res.mate == 0 and res.pv == []


def test_illegal_position_is_a_clear_error(engine: Engine) -> None:
    with pytest.raises(XiangqiError, match="Black is in check but it is not Black's move"):
        engine.search(Board("3k5/4a4/9/9/9/9/9/9/4R4/3RK4 w"), Limit(depth=2))


def test_bad_arguments(engine: Engine) -> None:
    with pytest.raises(TypeError):
        engine.search(Board(), {"depth": 2})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="multipv"):
        engine.search(Board(), Limit(depth=2), multipv=0)
    with pytest.raises(ValueError, match="Limit.time"):
        engine.search(Board(), Limit(time=-1))
    with pytest.raises(ValueError, match="hash size"):
        Engine(hash_mb=0)


def _random_position(rng: random.Random) -> Board:
    while True:
        b = Board()
        for _ in range(rng.randrange(2, 120)):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(rng.choice(moves), validate=False)
        if any(True for _ in b.legal_moves):
            return b


def test_never_returns_an_illegal_move_in_200_random_positions() -> None:
    rng = random.Random(2026)
    eng = Engine(hash_mb=4)
    for _ in range(200):
        b = _random_position(rng)
        fen = b.fen()
        res = eng.search(b, Limit(depth=2, nodes=3000))
        assert res.move is not None
        assert b.is_legal(res.move), fen
        assert b.fen() == fen  # the board is not modified
        # the PV is a legal line
        c = b.copy()
        for m in res.pv:
            assert c.is_legal(m)
            c.push(m)


def test_info_per_iteration_and_pv(engine: Engine) -> None:
    infos: list[SearchInfo] = []
    res = engine.search(Board(), Limit(depth=5), on_info=infos.append)
    assert [i.depth for i in infos] == [1, 2, 3, 4, 5]
    assert res.depth == 5
    assert infos[-1].pv[0] == res.move
    assert all(i.nodes > 0 and i.seldepth >= i.depth and i.multipv == 1 for i in infos)
    assert res.nodes >= infos[-1].nodes
    assert res.ponder == (res.pv[1] if len(res.pv) > 1 else None)


def test_multipv_lines_are_distinct_and_ordered(engine: Engine) -> None:
    infos: list[SearchInfo] = []
    engine.search(Board(), Limit(depth=3), on_info=infos.append, multipv=3)
    last = [i for i in infos if i.depth == 3]
    assert [i.multipv for i in last] == [1, 2, 3]
    firsts = [i.pv[0] for i in last]
    assert len(set(firsts)) == 3
    scores = [i.score_cp for i in last]
    assert scores == sorted(scores, reverse=True)


def test_node_limit(engine: Engine) -> None:
    res = engine.search(Board(), Limit(nodes=20000))
    assert res.move is not None
    assert res.nodes <= 20000 + 1024  # the limit is checked every 1024 nodes


def test_time_limit_stops_search(engine: Engine) -> None:
    res = engine.search(Board(), Limit(time=0.3))
    assert res.move is not None and Board().is_legal(res.move)
    assert res.depth >= 1


def test_stop_ends_infinite_search() -> None:
    from xiangqi.engine import warmup

    warmup(background=False)  # the kernels first (a compile in a fresh cache takes minutes under load)
    eng = Engine(hash_mb=4)
    out: list = []
    searching = threading.Event()
    deeper = threading.Event()  # it went on past its first lines: the search does not end by itself

    def on_info(info) -> None:
        searching.set()
        if info.depth >= 4:
            deeper.set()

    t = threading.Thread(
        target=lambda: out.append(eng.search(Board(), Limit(infinite=True), on_info=on_info)), daemon=True)
    t.start()
    # stop() before the search has begun is a no-op (search() clears the flag): wait for its first
    # line instead of a fixed sleep, which a loaded machine can outlast; then for a deeper one (an
    # event, not a pause: the search still runs after reporting it)
    assert searching.wait(60), "the search never reported a line"
    assert deeper.wait(120), "the search never reached depth 4"
    assert t.is_alive()  # an infinite search waits for stop()
    eng.stop()
    t.join(60)
    assert not t.is_alive()
    assert out and out[0].move is not None and Board().is_legal(out[0].move)


def test_avoids_losing_perpetual_check(engine: Engine) -> None:
    # Red (a rook against two rooks) could check forever: f5e5+ e9f9 e5f5+ f9e9 ...
    # One-sided perpetual check loses (RULES.md §5.4.1), so Red must vary once the
    # cycle is in the game history; without the history the check is Red's choice.
    fen = "r3k3r/9/9/9/5R3/9/9/9/4A4/2BK1AB2 w"
    engine.new_game()
    assert engine.search(Board(fen), Limit(depth=5)).move == Move.from_iccs("f5e5")
    b = Board(fen)
    for m in ("f5e5", "e9f9", "e5f5", "f9e9"):
        b.push_iccs(m)
    engine.new_game()
    res = engine.search(b, Limit(depth=5))
    assert res.move != Move.from_iccs("f5e5")
    assert res.score_cp is not None and res.score_cp > -K.REP_WIN


def test_repetition_rulings_in_kernel() -> None:
    from xiangqi.engine.search import repetition

    rk = np.zeros(16, np.int64)
    rf = np.zeros(16, np.int64)
    # positions 0..4: A B C D A (side to move at 4 = side to move at 0)
    rk[:5] = [11, 22, 33, 44, 11]
    rf[0] = 2
    # no checks at all: draw
    assert repetition(rk, rf, 4) == (True, 0)
    # moves into 2 and 4 were by the side that just moved (checking), into 1 and 3 by the side to move
    rf[1:5] = [0, 1, 0, 1]
    assert repetition(rk, rf, 4) == (True, K.REP_WIN)  # the opponent checked perpetually: we win
    rf[1:5] = [1, 0, 1, 0]
    assert repetition(rk, rf, 4) == (True, -K.REP_WIN)
    rf[1:5] = [1, 1, 1, 1]
    assert repetition(rk, rf, 4) == (True, 0)  # both check perpetually: draw
    rf[1:5] = [0, 0, 2, 0]  # a capture inside: no repetition
    assert repetition(rk, rf, 4) == (False, 0)


def test_levels_lookup() -> None:
    assert list(LEVELS) == ["novice", "beginner", "intermediate", "advanced", "master"]
    assert [lv.name_zh for lv in LEVELS.values()] == ["入门", "初级", "中级", "高级", "大师"]
    assert get_level("大师") is LEVELS["master"]
    assert get_level("Beginner") is LEVELS["beginner"]
    assert get_level(" intermediate ") is LEVELS["intermediate"]
    with pytest.raises(ValueError, match="unknown level"):
        get_level("grandmaster")
    assert rank_name(1450) == "校尉" and rank_name(50) == "草民" and rank_name(None) is None


def test_play_levels_return_legal_moves_and_seed_repeats() -> None:
    b = Board()
    b.push_iccs("h2e2")
    for key in LEVELS:
        if key == "master":
            continue
        # without the time cap the search is deterministic, so the seed alone decides
        lv = dataclasses.replace(LEVELS[key], time=None, depth=LEVELS[key].depth or 5)
        moves = {Engine(hash_mb=2).play(b, lv, seed=5).move for _ in range(2)}
        assert len(moves) == 1  # same seed, same move
        assert b.is_legal(moves.pop())


def test_beginner_varies_among_good_moves() -> None:
    b = Board()
    seen = set()
    eng = Engine(hash_mb=2)
    for seed in range(12):
        eng.new_game()
        seen.add(eng.play(b, "beginner", seed=seed).move)
    assert len(seen) >= 2
    # and never an outright blunder: a quiet opening move, no piece left en prise
    for m in seen:
        assert b.is_legal(m)


def test_time_budget() -> None:
    assert budget(Limit(time=2.0), True) == pytest.approx((1.97, 1.97))
    assert budget(Limit(depth=3), True) == (None, None)
    opt, mx = budget(Limit(wtime=60, btime=10, winc=1, binc=0), True)
    assert opt == pytest.approx(60 / 30 + 0.8 - 0.03)
    assert mx == pytest.approx(min(3 * (2 + 0.8), 36) - 0.03)
    opt_b, _ = budget(Limit(wtime=60, btime=10, winc=1, binc=0), False)
    assert opt_b == pytest.approx(10 / 30 - 0.03)
    opt, mx = budget(Limit(wtime=0, btime=0, byoyomi=5), True)
    assert 4.9 < opt <= 5 and mx >= opt
    opt, mx = budget(Limit(wtime=10, movestogo=1), True)
    assert opt == mx and 8.5 < opt < 9


def test_warmup_in_background_and_ready() -> None:
    from xiangqi.engine import is_ready, warmup

    t = warmup(background=True)
    assert t is not None
    t.join(300)
    assert not t.is_alive()
    assert is_ready()
    assert warmup(background=False) is None


def test_cache_dir_is_keyed_by_kernel_sources(tmp_path, monkeypatch) -> None:
    from xiangqi.engine import _numba

    monkeypatch.setenv("XIANGQI_NUMBA_CACHE_BASE", str(tmp_path))
    path = _numba.cache_dir()
    assert path.startswith(str(tmp_path))
    assert path.rsplit("-", 1)[1] == _numba._sources_digest() and len(_numba._sources_digest()) == 16


def test_does_not_complete_a_forbidden_chase() -> None:
    # CXA 2020 图12: Black's last move of the cycle completes its perpetual chase (长捉) and loses.
    b, losing = cxa_case("CXA-fig12")
    res = Engine(hash_mb=4).search(b, Limit(depth=3))
    assert res.move is not None and res.move != losing


def test_completes_the_opponents_forbidden_repetition() -> None:
    # CXA 2020 图2: Red chases perpetually; Black's h9i9 repeats the position a third time and wins.
    b, winning = cxa_case("CXA-fig02")
    res = Engine(hash_mb=4).search(b, Limit(depth=3))
    assert res.move == winning


# A match game (ours as Black vs Sjaak II, 200 ms a move) that the engine lost by 长捉: its rook went g5f5 and
# Red's f6g6 then completed the third occurrence, ruled against Black although Red made the last move.
CHASE_LOST_LINE = ("b0c2 h9g7 c3c4 b7e7 c2d4 b9c7 d4f5 a9b9 b2c2 c7e8 h0g2 b9b5 f5e7 h7e7 c2c6 i9h9 "
                   "i0h0 h9h3 a0a2 h3g3 h2h8 b5g5 h0h2 e7e3 a2d2 e3e4 h8g8 g3i3 h2h4 i3e3 g2e1 e4e1 "
                   "d0e1 g5f5 h4d4 e8d6 d4d6 f9e8 g8g6 g9e7 c0e2 f5g5 g6f6 g5f5 f6g6 f5g5 g6f6")


def test_avoids_a_move_after_which_the_opponent_completes_our_forbidden_chase() -> None:
    b = Board()
    for m in CHASE_LOST_LINE.split():
        b.push_iccs(m)
    trap = b.copy()
    trap.push_iccs("g5f5")
    trap.push_iccs("f6g6")
    out = trap.outcome()
    assert out is not None and out.winner is True and "长捉" in out.reason_zh
    res = Engine(hash_mb=16).search(b, Limit(depth=6))
    assert res.move != Move.from_iccs("g5f5")
