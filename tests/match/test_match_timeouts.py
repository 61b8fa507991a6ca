"""The match tool's start and isready limits: generous by default, configurable, and a limit that
passes names the engine and the option that raises it (tests/engine/fake_engine.py's slow modes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xiangqi.cli import build_parser
from xiangqi.engine.uci.client import EngineTimeoutError
from xiangqi.match.runner import (
    DEFAULT_PING_TIMEOUT,
    DEFAULT_START_TIMEOUT,
    PlayerSpec,
    TimeControl,
    run_match,
)

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")


def spec(mode: str, delay: float, name: str, **kw) -> PlayerSpec:
    return PlayerSpec(name, [sys.executable, FAKE, mode, str(delay)], "uci", **kw)


def test_defaults_are_generous_and_the_cli_uses_them() -> None:
    assert DEFAULT_START_TIMEOUT >= 300 and DEFAULT_PING_TIMEOUT >= 120
    args = build_parser().parse_args(["match", "a", "b"])
    assert (args.start_timeout, args.ping_timeout) == (DEFAULT_START_TIMEOUT, DEFAULT_PING_TIMEOUT)
    assert PlayerSpec("x", ["x"]).start_timeout == DEFAULT_START_TIMEOUT
    args = build_parser().parse_args(["match", "a", "b", "--start-timeout", "900", "--ping-timeout", "30"])
    assert (args.start_timeout, args.ping_timeout) == (900.0, 30.0)


def test_a_slow_start_within_the_limit_plays() -> None:
    # 1.5 s of silence before the first answer, 60 s allowed (a loaded machine adds seconds of its
    # own to the start): the game is played to the ply cap
    slow = spec("slow-start", 1.5, "slowpoke", start_timeout=60.0)
    quick = spec("first", 0.0, "quick")
    # depth 1, not a movetime: a move's time is no part of this test, and a 0.05 s movetime lets an
    # engine only 2 s of grace before it forfeits (a loaded machine can hold a process that long)
    res = run_match(slow, quick, 1, TimeControl(depth=1), ply_cap=6)
    assert [(g.red, g.result, g.reason, len(g.board.move_stack)) for g in res.games] == [
        ("slowpoke", "1/2-1/2", "Draw — ply cap of 6 reached", 6)]


def test_a_start_past_the_limit_names_the_engine_and_the_option() -> None:
    slow = spec("slow-start", 3.0, "slowpoke", start_timeout=1.0)
    with pytest.raises(EngineTimeoutError) as exc:
        slow.start()
    assert str(exc.value) == ("slowpoke: no 'uciok' within the time allowed, while starting (the start "
                              "limit, 1 s: an engine may compile for minutes on a loaded machine; raise it "
                              "with --start-timeout)")


def test_a_slow_readyok_after_a_new_game_uses_the_ping_limit() -> None:
    # every readyok takes 0.4 s: the start (limit 60 s) passes; the ping after ucinewgame with a limit
    # of 0.1 s fails, and the match names the engine, the limit and --ping-timeout
    slow = spec("slow-ready", 0.4, "laggard", start_timeout=60.0, ping_timeout=0.1)
    eng = slow.start()
    try:
        assert eng.ping_timeout == 0.1
        with pytest.raises(EngineTimeoutError, match=r"^laggard: no 'readyok' within 0.1 s of 'isready'$"):
            eng.new_game()
    finally:
        eng.close(0.5)
    with pytest.raises(EngineTimeoutError) as exc:
        run_match(slow, spec("first", 0.0, "quick"), 1, TimeControl(movetime=0.05), ply_cap=6)
    assert str(exc.value) == ("laggard: no 'readyok' within 0.1 s of 'isready', after ucinewgame (the limit "
                              "of each later isready, 0.1 s; raise it with --ping-timeout)")
    # with a limit above the delay the same engine plays a game
    ok = spec("slow-ready", 0.4, "laggard", start_timeout=60.0, ping_timeout=60.0)
    res = run_match(ok, spec("first", 0.0, "quick"), 1, TimeControl(depth=1), ply_cap=6)
    assert [(g.result, g.reason) for g in res.games] == [("1/2-1/2", "Draw — ply cap of 6 reached")]
