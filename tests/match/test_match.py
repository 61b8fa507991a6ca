"""Matches: time controls, Elo with error bars, adjudication by our referee, forfeits, PGN output."""

from __future__ import annotations

import math
import os
import shutil
import sys
from pathlib import Path

import pytest

from xiangqi.core.board import Board
from xiangqi.engine.uci.client import Limit, SimpleEngine
from xiangqi.match.runner import (
    OPENINGS,
    MatchError,
    PlayerSpec,
    TimeControl,
    elo_difference,
    elo_from_score,
    opening_board,
    play_game,
    run_match,
)

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")
FAIRY = shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish"


def fake_spec(mode: str, name: str | None = None) -> PlayerSpec:
    return PlayerSpec(name or mode, [sys.executable, FAKE, mode], "uci")


def fake(mode: str, name: str | None = None) -> SimpleEngine:
    return fake_spec(mode, name).start()


@pytest.mark.parametrize("text,tc", [
    ("200ms", TimeControl(movetime=0.2)),
    ("0.2", TimeControl(movetime=0.2)),
    ("1.5s", TimeControl(movetime=1.5)),
    ("60+0.5", TimeControl(base=60.0, inc=0.5)),
    ("40/60", TimeControl(base=60.0, moves=40)),
    ("40/120+2", TimeControl(base=120.0, inc=2.0, moves=40)),
    ("depth=6", TimeControl(depth=6)),
    ("nodes=20000", TimeControl(nodes=20000)),
])
def test_time_control_parse(text, tc):
    assert TimeControl.parse(text) == tc


@pytest.mark.parametrize("text", ["", "fast", "0", "depth=0", "nodes=x", "60+", "-1"])
def test_time_control_errors(text):
    with pytest.raises(MatchError, match="bad time control"):
        TimeControl.parse(text)


def test_elo_and_error_bar_follow_the_documented_formula():
    # W=10 D=5 L=5: p = 0.625, per-game sd = sqrt(3.4375/20) = 0.41458, 95% p-interval
    # 0.625 ± 1.96*0.41458/sqrt(20) = [0.44331, 0.80669] -> Elo [-39.56, +248.18]
    elo, err = elo_difference(10, 5, 5)
    assert elo == pytest.approx(88.74, abs=0.01)
    assert err == pytest.approx(143.87, abs=0.01)
    # 100 games, 50-50 without draws: the well-known ±69 Elo
    assert elo_difference(50, 0, 50) == (pytest.approx(0.0), pytest.approx(68.99, abs=0.01))
    assert elo_difference(3, 0, 0)[0] == math.inf and elo_difference(3, 0, 0)[1] == math.inf
    assert math.isnan(elo_difference(0, 0, 0)[0])
    assert elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)


def test_openings_are_legal_distinct_and_balanced_in_length():
    seen = set()
    for _name, moves in OPENINGS:
        board = opening_board(moves)
        assert 1 <= len(board.move_stack) <= 7
        assert board.outcome() is None
        seen.add(board.fen())
    assert len(seen) == len(OPENINGS) >= 12
    with pytest.raises(MatchError, match="opening 'h2e2 h2e3'"):
        opening_board("h2e2 h2e3")


def test_player_specs():
    b = PlayerSpec.parse("builtin:大师", hash_mb=32)
    assert b.name == "builtin:master"
    assert b.command[-3:] == ["-m", "xiangqi.cli", "engine"]
    assert b.options == {"Hash": 32, "Level": "master"}
    assert PlayerSpec.parse("builtin").options == {}
    f = PlayerSpec.parse("/usr/games/fairy-stockfish", ["UCI_LimitStrength=true", "UCI_Elo=1500"])
    assert f.name == "fairy-stockfish(UCI_LimitStrength=true,UCI_Elo=1500)"
    assert f.options == {"UCI_LimitStrength": "true", "UCI_Elo": "1500"}
    with pytest.raises(MatchError, match="unknown level 'grandmaster'"):
        PlayerSpec.parse("builtin:grandmaster")
    with pytest.raises(MatchError, match="must look like Name=Value"):
        PlayerSpec.parse("fairy-stockfish", ["UCI_Elo"])


def test_a_ucci_peer_runs_in_its_folder_and_gets_the_hash_as_hashsize(tmp_path):
    # ElephantEye 3.31 (UCCI) has no 'Hash' but 'hashsize', and reads its book beside it
    spec = PlayerSpec.parse(f"{sys.executable} {FAKE} eleeye-331", hash_mb=64)
    spec.cwd = str(tmp_path)
    eng = spec.start()
    try:
        assert eng.protocol == "ucci"
        assert "> setoption hashsize 64" in eng.transcript
        assert not any("Hash" in x for x in eng.transcript if x.startswith(">"))
        eng.play(Board(), Limit(time=0.2))
        said = [x for x in eng.transcript if x.startswith("< info string")]
    finally:
        eng.quit()
    assert said == [f"< info string cwd {tmp_path}", "< info string got setoption hashsize 64"]


def test_the_referee_adjudicates_a_threefold_repetition():
    red, black = fake("first", "R"), fake("first", "B")
    try:
        g = play_game(red, black, ("start", ""), TimeControl(depth=1))
    finally:
        red.quit()
        black.quit()
    # Red shuffles a rook, Black walks its a-pawn into it; then rook and horse shuffles until the
    # position occurs a third time
    assert " ".join(m.iccs() for m in g.board.move_stack) == (
        "a0a1 a6a5 a1a0 a5a4 a0a1 a4a3 a1a0 a3a2 a0a1 a2a1 b0a2 a1a0 a2b0 a0b0 b2a2 a9a2 c0a2 b0a0 "
        "a2c0 a0b0 c0a2 b0a0 a2c0 a0b0 c0a2")
    out = g.board.outcome()
    assert out is not None and out.winner is None
    assert (g.result, g.reason) == ("1/2-1/2", out.reason_en)  # the referee's own ruling
    assert (len(g.move_times["R"]), len(g.move_times["B"])) == (13, 12)


def test_ply_cap_illegal_move_crash_and_time_forfeit():
    first, illegal = fake("first"), fake("illegal")
    try:
        other = fake("first", "other")
        g = play_game(first, other, ("中炮", "h2e2"), TimeControl(depth=1), ply_cap=3)
        other.quit()
        assert (g.result, g.reason, len(g.board.move_stack)) == ("1/2-1/2", "Draw — ply cap of 3 reached", 3)
        g = play_game(illegal, first, ("start", ""), TimeControl(depth=1))
        assert g.result == "0-1" and "illegal move 'e0e5'" in g.reason
        dead = fake("die")
        g = play_game(first, dead, ("start", ""), TimeControl(depth=1))
        assert g.result == "1-0" and "exited (status 3)" in g.reason
        slow = fake("slow")
        g = play_game(slow, first, ("start", ""), TimeControl(base=0.2, inc=0.0), time_margin=0.05)
        assert (g.result, g.reason) == ("0-1", "slow lost on time")
        slow.quit()
    finally:
        first.quit()
        illegal.quit()


def test_a_match_swaps_colours_and_writes_pgn(tmp_path):
    seen = []
    res = run_match(fake_spec("first", "A"), fake_spec("first", "B"), 4, TimeControl(depth=1),
                    openings=OPENINGS[:2], ply_cap=12, on_game=lambda g, r: seen.append(g.round))
    assert seen == [1, 2, 3, 4]
    assert [(g.red, g.black, g.opening) for g in res.games] == [
        ("A", "B", OPENINGS[0][0]), ("B", "A", OPENINGS[0][0]),
        ("A", "B", OPENINGS[1][0]), ("B", "A", OPENINGS[1][0])]
    assert (res.wins, res.draws, res.losses) == (0, 4, 0)
    assert res.summary().splitlines() == ["Score of A vs B: 0 - 0 - 4 [50.0%] 4 games, depth 1",
                                          "Elo difference: 0 +/- 0 (95%)"]
    pgn = res.pgn()
    assert pgn.count('[Game "Chinese Chess"]') == 4
    assert '[Round "2"]' in pgn and '[Red "B"]' in pgn and '[Format "ICCS"]' in pgn
    assert f'[Opening "{OPENINGS[1][0]}"]' in pgn
    from xiangqi.core.pgn import read_games

    games = read_games(pgn)
    assert len(games) == 4
    assert [m.iccs() for m in games[1].mainline_moves()][:4] == OPENINGS[0][1].split()


def test_a_crashed_engine_is_restarted_for_the_next_game():
    res = run_match(fake_spec("first", "ok"), fake_spec("die", "dies"), 2, TimeControl(depth=1),
                    openings=OPENINGS[:1])
    assert [g.result for g in res.games] == ["1-0", "0-1"]  # 'dies' lost both, as Black then as Red
    assert res.summary().splitlines() == ["Score of ok vs dies: 2 - 0 - 0 [100.0%] 2 games, depth 1",
                                          "Elo difference: +inf +/- inf (95%)"]


@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.skipif(not os.access(FAIRY, os.X_OK), reason="fairy-stockfish is not installed")
def test_tiny_match_builtin_master_vs_fairy_stockfish(tmp_path):
    out = tmp_path / "m.pgn"
    from xiangqi.cli import main

    status = main(["match", "builtin:master", FAIRY, "--games", "2", "--tc", "50ms", "--ply-cap", "40",
                   "--hash", "16", "--pgn", str(out)])
    assert status == 0
    from xiangqi.core.pgn import read_pgn_file

    games = read_pgn_file(str(out))
    assert len(games) == 2
    for g in games:
        board = g.board()
        for m in g.mainline_moves():
            board.push(m)  # every move legal
        assert g.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
    assert {games[0].headers["Red"], games[1].headers["Black"]} == {"builtin:master"}
    assert Board().is_legal(games[0].mainline_moves()[0])


def test_cli_match_prints_games_score_and_elo(tmp_path, capsys):
    from xiangqi.cli import main

    out = tmp_path / "games.pgn"
    cmd = f"{sys.executable} {FAKE} first"
    status = main(["match", cmd, cmd, "--games", "2", "--tc", "depth=1", "--ply-cap", "10", "--openings", "1",
                   "--pgn", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert status == 0
    name = os.path.basename(sys.executable)
    assert lines == [
        f"Game 1: {name} vs {name}#2 (中炮对屏风马): 1/2-1/2 Draw — ply cap of 10 reached  [0 - 0 - 1]",
        f"Game 2: {name}#2 vs {name} (中炮对屏风马): 1/2-1/2 Draw — ply cap of 10 reached  [0 - 0 - 2]",
        f"Score of {name} vs {name}#2: 0 - 0 - 2 [50.0%] 2 games, depth 1",
        "Elo difference: 0 +/- 0 (95%)",
        f"PGN: {out}",
    ]
    assert out.read_text(encoding="utf-8").count("[Round ") == 2


def test_cli_match_in_the_random_mode_plays_each_shuffle_with_colours_swapped(tmp_path, capsys):
    """``--variant random``: a 随机开局 shuffle per pair of games (the same for both colours), the
    engines told the start by FEN, and each game's PGN saying which shuffle."""
    from xiangqi.cli import main
    from xiangqi.core.pgn import read_games
    from xiangqi.core.variants import STANDARD_SHUFFLE, random_start_fen

    out = tmp_path / "random.pgn"
    cmd = f"{sys.executable} {FAKE} first"
    status = main(["match", cmd, cmd, "--variant", "random", "--seed", "5", "--games", "4",
                   "--tc", "depth=1", "--ply-cap", "6", "--pgn", str(out)])
    assert status == 0, capsys.readouterr().err
    games = read_games(out.read_text(encoding="utf-8"))
    assert len(games) == 4
    shuffles = [int(g.headers["Shuffle"]) for g in games]
    assert all(g.headers["Variant"] == "random" for g in games)
    assert shuffles[0] == shuffles[1] and shuffles[2] == shuffles[3] and STANDARD_SHUFFLE not in shuffles
    for g, n in zip(games, shuffles, strict=True):
        assert g.headers["FEN"] == random_start_fen(n) and g.headers["Opening"] == f"随机开局 {n}"
        assert len(list(g.mainline_moves())) == 6  # every move legal from the shuffled start
    # the same seed gives the same shuffles
    again = tmp_path / "again.pgn"
    main(["match", cmd, cmd, "--variant", "random", "--seed", "5", "--games", "4", "--tc", "depth=1",
          "--ply-cap", "6", "--pgn", str(again)])
    replayed = read_games(again.read_text(encoding="utf-8"))
    assert [g.headers["Shuffle"] for g in replayed] == [str(n) for n in shuffles]
    assert [g.headers["Shuffle"] for g in replayed] == [str(n) for n in shuffles]


def test_cli_match_bad_settings_exit_with_status_2(capsys):
    from xiangqi.cli import main

    assert main(["match", "builtin", "builtin", "--tc", "soon"]) == 2
    assert "bad time control 'soon'" in capsys.readouterr().err
    assert main(["match", "/nonexistent/engine", "builtin", "--tc", "depth=1", "--pgn", ""]) == 2
    assert "engine A (/nonexistent/engine): /nonexistent/engine: no such file" in capsys.readouterr().err


def test_cli_bench_counts_perft_and_compares_with_a_peer(capsys):
    from xiangqi.cli import main

    args = ["bench", "--perft-depth", "3", "--search-depth", "3"]
    if os.access(FAIRY, os.X_OK):
        args += ["--peer", FAIRY]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("perft 3 (start position): 79666 nodes in ")
    if os.access(FAIRY, os.X_OK):
        assert out[1].startswith(f"perft 3 by {FAIRY}: 79666 nodes in ")
        assert out[2].startswith(f"perft speed ratio (ours / {FAIRY}): ")
    assert out[-1].startswith("search depth 3: ")
    assert len([x for x in out if x.startswith("  ") and " depth 3 best " in x]) == 3


def _game_key(g):
    return (g.round, g.red, g.black, g.opening, g.result, g.reason, [m.iccs() for m in g.board.move_stack])


def test_concurrent_games_give_the_sequential_results_in_the_same_order():
    openings = OPENINGS[:3]
    kw = dict(openings=openings, ply_cap=14)
    seq = run_match(fake_spec("first", "A"), fake_spec("first", "B"), 6, TimeControl(depth=1), **kw)
    seen = []
    par = run_match(fake_spec("first", "A"), fake_spec("first", "B"), 6, TimeControl(depth=1), concurrency=3,
                    on_game=lambda g, r: seen.append((g.round, len(r.games))), **kw)
    assert seen == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)]
    assert [_game_key(g) for g in par.games] == [_game_key(g) for g in seq.games]
    assert [g.opening for g in par.games] == [openings[k // 2][0] for k in range(6)]
    assert par.pgn() == seq.pgn()


def test_concurrency_overlaps_games(monkeypatch):
    """Two games at once are played at the same time: each game, once begun, waits at a barrier
    for the other to begin too. Played one after the other, the first would wait for a second that
    begins only after it ended: the barrier breaks (its 60 s bound ends a hung test only). An order,
    not spans of time (before: the second's start before the first's end, which a loaded machine
    starting the second game's engines for seconds could turn round)."""
    import threading

    from xiangqi.match import runner as match

    both = threading.Barrier(2, timeout=60)
    order: list[str] = []
    real_play = match.play_game

    def play(*args, **kw):
        order.append("begin")
        both.wait()
        try:
            return real_play(*args, **kw)
        finally:
            order.append("end")

    monkeypatch.setattr(match, "play_game", play)
    res = run_match(fake_spec("first", "S"), fake_spec("first", "T"), 2, TimeControl(depth=1),
                    openings=[("start", "")], ply_cap=5, concurrency=2)
    assert order[:2] == ["begin", "begin"] and order.count("end") == 2
    assert [(g.round, g.red, g.reason) for g in res.games] == [
        (1, "S", "Draw — ply cap of 5 reached"), (2, "T", "Draw — ply cap of 5 reached")]


def test_a_match_continues_from_a_later_game_index():
    res = run_match(fake_spec("first", "A"), fake_spec("first", "B"), 2, TimeControl(depth=1),
                    openings=OPENINGS[:3], ply_cap=8, first=3)
    assert [(g.round, g.red, g.opening) for g in res.games] == [
        (4, "B", OPENINGS[1][0]), (5, "A", OPENINGS[2][0])]
    with pytest.raises(MatchError, match="concurrency must be >= 1"):
        run_match(fake_spec("first", "A"), fake_spec("first", "B"), 2, TimeControl(depth=1), concurrency=0)


def test_each_side_keeps_its_own_time_control():
    # A moves under a depth limit; B (0.4 s a move) has a 0.2 s clock and loses on time as Black and as Red
    res = run_match(fake_spec("first", "A"), fake_spec("slow", "B"), 2, TimeControl(depth=1),
                    tc_b=TimeControl(base=0.2), openings=[("start", "")], time_margin=0.05, concurrency=2)
    assert [(g.red, g.result, g.reason) for g in res.games] == [
        ("A", "1-0", "B lost on time"), ("B", "0-1", "B lost on time")]
    assert res.summary().splitlines()[0] == "Score of A vs B: 2 - 0 - 0 [100.0%] 2 games, depth 1 / 0.2+0"
    assert '[TimeControl "depth 1 / 0.2+0"]' in res.pgn()


def test_cli_match_concurrency_keeps_the_game_order(tmp_path, capsys):
    from xiangqi.cli import main

    cmd = f"{sys.executable} {FAKE} first"
    outs = []
    for n in ("1", "2"):
        out = tmp_path / f"games{n}.pgn"
        assert main(["match", cmd, cmd, "--games", "4", "--tc", "depth=1", "--ply-cap", "10",
                     "--openings", "2", "--pgn", str(out), "--concurrency", n]) == 0
        outs.append((capsys.readouterr().out.splitlines()[:-1], out.read_text(encoding="utf-8")))
    assert outs[0] == outs[1]
    assert [line.split(":")[0] for line in outs[1][0][:4]] == ["Game 1", "Game 2", "Game 3", "Game 4"]
    assert main(["match", cmd, cmd, "--tc", "depth=1", "--pgn", "", "--concurrency", "0"]) == 2
    assert "concurrency must be >= 1" in capsys.readouterr().err


def test_concurrent_match_raises_when_an_engine_cannot_start():
    from xiangqi.engine.uci.client import EngineError

    with pytest.raises(EngineError, match="cannot start engine"):
        run_match(fake_spec("first", "A"), PlayerSpec("nope", ["/nonexistent/engine"]), 4,
                  TimeControl(depth=1), concurrency=2)


@pytest.mark.parametrize("bad, message", [
    (["--concurrency", "0"], "--concurrency must be >= 1, got 0"),
    (["--games", "0"], "--games must be >= 1, got 0"),
    (["--tc-b", ""], "bad time control ''"),
    (["--tc-b", "0ms"], "bad time control '0ms'"),
])
def test_cli_match_bad_arguments_keep_an_existing_pgn(tmp_path, capsys, bad, message):
    # a typo must not wipe the games of an earlier match (the file used to be emptied first)
    from xiangqi.cli import main

    cmd = f"{sys.executable} {FAKE} first"
    pgn = tmp_path / "match.pgn"
    pgn.write_text("earlier games\n", encoding="utf-8")
    assert main(["match", cmd, cmd, "--tc", "depth=1", "--pgn", str(pgn), *bad]) == 2
    assert message in capsys.readouterr().err
    assert pgn.read_text(encoding="utf-8") == "earlier games\n"
    assert main(["match", cmd, "/nonexistent/engine", "--tc", "depth=1", "--pgn", str(pgn)]) == 2
    assert "engine B (/nonexistent/engine): /nonexistent/engine: no such file" in capsys.readouterr().err
    assert pgn.read_text(encoding="utf-8") == "earlier games\n"


def test_cli_match_replaces_the_pgn_once_a_game_ends_and_warns_of_too_many_games_at_once(
        tmp_path, capsys, monkeypatch):
    from xiangqi.cli import main

    monkeypatch.setattr("os.cpu_count", lambda: 1)
    cmd = f"{sys.executable} {FAKE} first"
    pgn = tmp_path / "match.pgn"
    pgn.write_text("earlier games\n", encoding="utf-8")
    assert main(["match", cmd, cmd, "--games", "2", "--tc", "depth=1", "--ply-cap", "6", "--pgn", str(pgn),
                 "--concurrency", "2"]) == 0
    err = capsys.readouterr().err
    assert "warning: 2 games at once on 1 CPUs" in err
    text = pgn.read_text(encoding="utf-8")
    assert "earlier games" not in text and text.count('[Round "') == 2


def test_a_failing_concurrent_match_ends_the_games_still_running(monkeypatch):
    """The caller's on_game fails after game 1 while game 2 (or 3) is being played: the engines still
    running are terminated at once (SIGTERM), not left to play their game out and quit (before, they
    played on for seconds after run_match had raised). Which engines ran is taken when on_game
    fails, after game 2 has begun (a barrier, not a clock), and how each ended is its exit status."""
    import signal
    import threading
    import time

    from xiangqi.match import runner as match

    started: list[SimpleEngine] = []
    real_start = PlayerSpec.start
    games_begun = threading.Semaphore(0)
    real_play = match.play_game

    def start(self):
        eng = real_start(self)
        started.append(eng)
        return eng

    def play(*args, **kw):
        games_begun.release()
        return real_play(*args, **kw)

    monkeypatch.setattr(PlayerSpec, "start", start)
    monkeypatch.setattr(match, "play_game", play)
    running: list[SimpleEngine] = []

    def fail(g, res):
        assert games_begun.acquire(timeout=60) and games_begun.acquire(timeout=60)  # games 1 and 2
        running.extend(e for e in started if e.process.poll() is None)
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        run_match(fake_spec("first", "A"), fake_spec("slow", "B"), 4, TimeControl(depth=1),
                  openings=[("start", "")], ply_cap=16, concurrency=2, on_game=fail)
    assert len(running) >= 2  # the other game's two engines at least
    end = time.monotonic() + 60  # "eventually": a poll; the bound ends a hung test only
    while any(e.process.poll() is None for e in running) and time.monotonic() < end:
        time.sleep(0.05)
    assert [e.process.poll() for e in running] == [-signal.SIGTERM] * len(running)
