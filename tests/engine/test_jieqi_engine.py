"""The 揭棋 engine (xiangqi.engine.jieqi_search) and its matches (xiangqi.app.play.jieqi_match,
``xiangqi match --variant jieqi``): it takes what is free, mates, averages over reveals, and beats a
random mover."""

from __future__ import annotations

import random

import pytest

from xiangqi.app.play.jieqi_match import JieqiPlayer, play_jieqi_game, run_jieqi_match
from xiangqi.core.jieqi import JieqiBoard, JieqiMove, deal, parse_square, read_pgn
from xiangqi.engine.jieqi_search import VALUES, JieqiSearch, evaluate, representative


def test_it_takes_a_free_rook_and_mates_in_one():
    b = JieqiBoard("3k5/9/9/9/4r4/9/9/9/9/4RK3 w - - 0 1")  # Black's rook hangs on e5
    res = JieqiSearch(2, 10).search(b)
    assert res.move.iccs == "e0e5" and res.score > VALUES["R"] / 2
    b = JieqiBoard("4k4/R8/9/9/9/9/9/9/1R7/3K5 w - - 0 1")
    res = JieqiSearch(2, 10).search(b)
    assert res.score > 90_000  # b1b9 mates, b1f1 stalemates (a loss too); a8a9 lets the king out
    b.push(res.move)
    assert res.move.iccs in ("b1b9", "b1f1") and b.outcome().result() == "1-0"


def test_hidden_pieces_count_at_their_pools_mean(monkeypatch):
    monkeypatch.setattr("xiangqi.engine.jieqi_search._endgame", lambda board: False)  # material only here
    b = JieqiBoard("3k5/9/9/9/9/9/9/9/9/X3K4 R1P1 w - - 0 1")
    assert evaluate(b) == pytest.approx((VALUES["R"] + VALUES["P"]) / 2)
    assert representative(b, True) in ("R", "P")
    # a reveal is a chance node: the value of the move is the pool-weighted average of its outcomes
    s = JieqiSearch(1, 10)
    s._deadline = float("inf")
    v = s._child(b, JieqiMove(parse_square("a0"), parse_square("a1")), lambda: evaluate(b))
    after_r, after_p = b.copy(), b.copy()
    after_r.push(JieqiMove(parse_square("a0"), parse_square("a1"), "R"))
    after_p.push(JieqiMove(parse_square("a0"), parse_square("a1"), "P"))
    assert evaluate(after_r) != evaluate(after_p)
    assert v == pytest.approx(0.5 * -evaluate(after_r) + 0.5 * -evaluate(after_p))
    assert b.fen() == "3k5/9/9/9/9/9/9/9/9/X3K4 R1P1 w - - 0 1"  # left as it was


def test_the_engine_beats_a_random_mover():
    engine, rand = JieqiPlayer("builtin:1", "builtin", 1, 0.03), JieqiPlayer("random", "random")
    g = play_jieqi_game(engine, rand, deal(random.Random(2)), random.Random(9), ply_cap=300)
    assert g.score_for("builtin:1") == 1.0, (g.result, g.reason)


@pytest.mark.slow
@pytest.mark.ci
def test_the_engine_beats_a_random_mover_with_both_colours():
    rng = random.Random(2)
    engine, rand = JieqiPlayer("builtin:1", "builtin", 1, 0.2), JieqiPlayer("random", "random")
    for _ in range(2):
        d = deal(rng)
        for red, black in ((engine, rand), (rand, engine)):
            g = play_jieqi_game(red, black, d, random.Random(9), ply_cap=300)
            assert g.score_for("builtin:1") == 1.0, (g.result, g.reason)


def test_a_jieqi_match_pairs_games_on_one_deal():
    a, b = JieqiPlayer.parse("greedy"), JieqiPlayer.parse("random")
    res = run_jieqi_match(a, b, 2, seed=4, ply_cap=40)
    g1, g2 = res.games
    assert (g1.red, g1.black, g2.red, g2.black) == ("greedy", "random", "random", "greedy")
    assert g1.game.deals == g2.game.deals and g1.opening == g2.opening == "deal 1"
    rec = read_pgn(res.game_pgn(g1))
    assert rec.errors == [] and rec.board.fen() == g1.game.board.fen() and rec.result == g1.result


def test_match_cli_variant_jieqi(tmp_path, capsys):
    from xiangqi.cli import main

    pgn = tmp_path / "m.pgn"
    assert (
        main(
            [
                "match",
                "greedy",
                "random",
                "--variant",
                "jieqi",
                "--games",
                "2",
                "--seed",
                "3",
                "--ply-cap",
                "30",
                "--pgn",
                str(pgn),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Game 1: greedy vs random (deal 1)" in out and "Game 2: random vs greedy (deal 1)" in out
    assert "Score of greedy vs random:" in out
    texts = pgn.read_text(encoding="utf-8").split("\n\n[")
    assert len(texts) == 2 and all(read_pgn(("[" if i else "") + t).errors == [] for i, t in enumerate(texts))
    assert main(["match", "fairy-stockfish", "random", "--variant", "jieqi", "--games", "1"]) != 0
    assert "cannot play 揭棋" in capsys.readouterr().err


def test_it_mates_a_bare_king_instead_of_drawing_by_the_move_limit():
    # a position a depth-1 engine once drew by the 120-ply rule (Red has everything, Black a bare king)
    fen = "1B3P3/3kCR3/4N3B/3NC4/PPP3P2/6RA1/7A1/9/9/4K4 - b - - 0 105"
    from xiangqi.app.play.jieqi_game import JieqiGame

    g = JieqiGame(red="engine", black="engine", board=JieqiBoard(fen), deals={})
    rand, search = random.Random(1), JieqiSearch(1, 3600)
    while not g.is_over and len(g.board.moves) < 40:
        if g.board.turn:
            g.play(search.search(g.view(True)).move.iccs)
        else:
            g.play(rand.choice(g.board.legal_moves()).iccs)
    assert g.outcome is not None and g.outcome.result() == "1-0"
