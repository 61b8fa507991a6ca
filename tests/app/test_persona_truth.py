"""A remark must be true of the position and of the record (the named opponents, app/opponents/persona.py).

Before: 周老伯 praised a plain cannon blunder as a sacrifice ("炮五进四，弃子？好胆量！") when his view
before the move was unknown (a book move), and a greeting said "又来啦？" before "我们是第一次交手吧？".
Now a sacrifice is material given that the search says is sound (both views known, the mover's side
at most SOUND_CP worse), and a greeting follows the stored games against that opponent.

The evaluations are the engine's own (depth 5, the computer's side's view), as the game's computer
would pass them to TalkService.observe; the positions are real: the opening blunder 炮五进四?? after
1. 炮二平五 马8进7, and the rook sacrifice 车三进一 of 陈松顺–杨官璘, 1953 (CCPD master game, in
tests/data/masters-sample.pgn.xz: its 7th game, ply 41; Black's elephant takes, Red keeps the edge).
"""

from __future__ import annotations

import pytest

from xiangqi.app.opponents.persona import OPPONENTS, SOUND_CP, TalkService, player_history
from xiangqi.app.play.session import GameSession
from xiangqi.app.play.store import Store
from xiangqi.core.board import BLACK, Board
from xiangqi.engine.api import Engine, Limit

#: 陈松顺–杨官璘 1953, after 20 moves of Red: Black (the computer here) to move; it plays d2d8, then
#: Red gives the rook: g8g9 (车三进一), taken by the elephant e7g9.
MASTER_FEN = "4kab2/4a1R2/2n1b4/p1p1p3p/9/P1P6/2N1P3P/2CcB2r1/4A4/3AK1B2 b - - 0 20"


@pytest.fixture(scope="module")
def engine():
    return Engine(hash_mb=16)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path)
    yield s
    s.close()


def black_view(engine, board: Board) -> int:
    """The engine's evaluation of ``board`` for Black (the computer in these games), centipawns."""
    r = engine.search(board, Limit(depth=5))
    s = r.score_cp if r.score_cp is not None else (10_000 if r.mate > 0 else -10_000)
    return s if board.turn == BLACK else -s


def kinds(talk, s):
    return [r["kind"] for r in talk.state(s)["remarks"]]


def test_a_plain_cannon_blunder_is_no_sacrifice(store, engine):
    talk = TalkService(store)
    s = GameSession(red="human", black="engine", level=OPPONENTS["zhou"].level)
    s.extras["opponent"] = "zhou"
    talk.saved(s)
    s.play("h2e2")
    s.play("h9g7")  # the computer's book move: no evaluation passed
    talk.saved(s)
    talk.observe(s, None, None)
    s.play("e2e6")  # 炮五进四?? the cannon takes a pawn and the horse takes the cannon
    s.play("g7e6")
    talk.saved(s)
    view = black_view(engine, s.board)
    assert view > 150  # the search: Black is clearly better (a cannon for a pawn)
    talk.observe(s, view, None)
    said = kinds(talk, s)
    assert "sacrifice_player" not in said, talk.state(s)["remarks"]
    assert not any("弃子" in r["zh"] for r in talk.state(s)["remarks"])


def test_a_blunder_seen_from_both_sides_is_a_blunder(store, engine):
    talk = TalkService(store)
    s = GameSession(red="human", black="engine", level=OPPONENTS["zhou"].level)
    s.extras["opponent"] = "zhou"
    talk.saved(s)
    s.play("h2e2")
    s.play("h9g7")
    talk.saved(s)
    talk.observe(s, black_view(engine, s.board), None)
    s.play("e2e6")
    s.play("g7e6")
    talk.saved(s)
    talk.observe(s, black_view(engine, s.board), None)
    assert "blunder_player" in kinds(talk, s) and "sacrifice_player" not in kinds(talk, s)


def test_a_sound_master_sacrifice_is_praised(store, engine):
    talk = TalkService(store)
    s = GameSession(red="human", black="engine", level=OPPONENTS["zhou"].level, fen=MASTER_FEN)
    s.extras["opponent"] = "zhou"
    talk.saved(s)
    s.play("d2d8")  # the computer's move of the game
    talk.saved(s)
    before = black_view(engine, s.board)
    talk.observe(s, before, None)
    s.play("g8g9")  # 车三进一: the rook is given
    s.play("e7g9")  # 象7进9 takes it
    talk.saved(s)
    after = black_view(engine, s.board)
    assert after - before <= SOUND_CP  # the search: Black, a rook up, is no better than before
    talk.observe(s, after, None)
    praise = [r["zh"] for r in talk.state(s)["remarks"] if r["kind"] == "sacrifice_player"]
    assert len(praise) == 1 and "车三进一" in praise[0]


def test_greetings_follow_the_stored_games(store):
    # no game against 阿福 yet: never "又来啦？", and "our first game"
    for _ in range(12):  # several game ids: every wording the hash may pick
        talk = TalkService(store)
        s = GameSession(red="human", black="engine", level=OPPONENTS["afu"].level)
        s.extras["opponent"] = "afu"
        talk.saved(s)
        greet = [r["zh"] for r in talk.state(s)["remarks"] if r["kind"] in ("greet", "history")]
        assert not any("又来啦" in g for g in greet), greet
        assert any("第一次交手" in g for g in greet)
    # one unfinished game against him stored: he knows the player, and does not call it a first game
    g = GameSession(red="human", black="engine", level=OPPONENTS["afu"].level)
    g.extras["opponent"] = "afu"
    g.play("h2e2")
    store.save_game(GameSession(), abandoned=g)  # replaced by a new game: kept in the library unfinished
    assert player_history(store, "afu").vs_games == 1
    seen = set()
    for _ in range(12):
        talk = TalkService(store)
        s = GameSession(red="human", black="engine", level=OPPONENTS["afu"].level)
        s.extras["opponent"] = "afu"
        talk.saved(s)
        greet = [r["zh"] for r in talk.state(s)["remarks"] if r["kind"] in ("greet", "history")]
        assert not any("第一次交手" in x for x in greet), greet
        seen.update(greet)
    assert any("又来啦" in x for x in seen)  # the "again" wording is now among the choices
