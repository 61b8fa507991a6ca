"""The named opponents' remarks: each fired by a real moment of the game or by the player's record."""

from __future__ import annotations

import pytest

from xiangqi.app.opponents.persona import (
    BLUNDER_CP,
    OPPONENTS,
    PHRASES,
    TalkService,
    history_facts,
    material_offered,
    player_history,
)
from xiangqi.app.play.session import GameSession
from xiangqi.app.play.store import Store
from xiangqi.core.board import Board, Move


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path)
    yield s
    s.close()


def game(opponent="afu", *, red="human", black="engine", fen=None):
    kw = {"fen": fen} if fen else {}
    s = GameSession(red=red, black=black, level=OPPONENTS[opponent].level, **kw)
    s.extras["opponent"] = opponent
    return s


def kinds(talk, s):
    return [r["kind"] for r in talk.state(s)["remarks"]]


def texts(talk, s, kind):
    return [r["zh"] for r in talk.state(s)["remarks"] if r["kind"] == kind]


def test_a_blunder_by_the_player_is_told_with_its_move(store):
    talk = TalkService(store)
    s = game()
    talk.saved(s)
    assert kinds(talk, s) == ["greet", "history"]
    for mv in ("h2e2", "h7e7"):
        s.play(mv)
        talk.saved(s)
    talk.observe(s, 20, None)  # the computer's view after its move at ply 2
    s.play("h0g2")  # the player's move ...
    s.play("e7e3")  # ... and the computer's reply, which now sees it far better
    talk.saved(s)
    talk.observe(s, 20 + BLUNDER_CP, None)
    assert "blunder_player" in kinds(talk, s)
    zh = texts(talk, s, "blunder_player")[0]
    assert "马二进三" in zh  # the player's move h0g2 in Chinese notation
    en = next(r["en"] for r in talk.state(s)["remarks"] if r["kind"] == "blunder_player")
    assert "H2+3" in en  # and in WXF in English


def test_a_small_swing_is_no_blunder_and_a_drop_is_the_computers_own(store):
    talk = TalkService(store)
    s = game()
    for mv in ("h2e2", "h7e7"):
        s.play(mv)
    talk.observe(s, 0, None)
    s.play("h0g2")
    s.play("h9g7")
    talk.observe(s, BLUNDER_CP - 1, None)
    assert "blunder_player" not in kinds(talk, s)
    s.play("i0h0")
    s.play("i9h9")
    talk.observe(s, -10, None)  # 259 cp down from its last view: its previous move was bad
    assert "blunder_self" in kinds(talk, s)
    assert "马8进7" in texts(talk, s, "blunder_self")[0] or "车一平二" in texts(talk, s, "blunder_self")[0]


def test_the_players_colour_streak_from_the_library(store):
    for _ in range(8):
        g = game("zhou", red="engine", black="human")
        g.play("h2e2")
        g.play("h7e7")
        g.resign(False)  # Black (the player) resigns
        store.save_finished(g, g.to_pgn())
    h = player_history(store, "zhou")
    assert h.colours == [False] * 8 and h.results == [0.0] * 8 and h.vs == (0, 0, 8)
    talk = TalkService(store)
    s = game("zhou", red="engine", black="human")
    talk.saved(s)
    hist = texts(talk, s, "history")
    assert hist and hist[0].startswith("你已经连续执黑八盘了，这盘还是黑棋。")
    assert "你连输八盘了" in hist[0]
    en = next(r["en"] for r in talk.state(s)["remarks"] if r["kind"] == "history")
    assert en.startswith("You have played Black 8 games in a row")


def test_history_facts_record_against_the_opponent_and_favourite_opening():
    from xiangqi.app.opponents.persona import History

    h = History(colours=[True, False, True, True], results=[1.0, 0.5, 0.0, None], vs=(1, 1, 1), vs_last=1.0,
                openings_red=["中炮局", "中炮局", "中炮对屏风马", "中炮局"])
    facts = [zh for zh, _ in history_facts(h, True, OPPONENTS["yan"])]
    assert facts[0] == "我们下过三盘：你赢一盘、和一盘、输一盘。上次你赢了我，这次可没那么容易。"
    assert facts[1] == "你执红最爱走「中炮局」，三盘都是它，今天还走吗？"
    assert history_facts(History(), True, None) == []  # nothing to say without a record


#: Both a-files open: Red's rook a0 and Black's rook a9 face each other.
ROOKS = "r3kabn1/9/1c5c1/2p1p1p1p/9/9/2P1P1P1P/1C5C1/9/RNBAKABNR"


def test_a_captured_rook_either_way(store):
    talk = TalkService(store)
    s = game(fen=ROOKS + " w - - 0 1")  # the player (Red) takes the computer's rook
    talk.saved(s)
    s.play("a0a9")
    talk.saved(s)
    assert texts(talk, s, "rook_lost")[0] in PHRASES["rook_lost"][0]
    assert "rook_won" not in kinds(talk, s)
    s2 = game(fen=ROOKS + " b - - 0 1")  # the computer (Black) takes the player's rook
    s2.play("a9a0")
    talk.saved(s2)
    assert texts(talk, s2, "rook_won")[0] in PHRASES["rook_won"][0]
    assert "rook_lost" not in kinds(talk, s2)


def test_perpetual_check_warning_before_the_rules_rule(store):
    talk = TalkService(store)
    s = game(fen="3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1")
    talk.saved(s)
    for red, black in (("a0a9", "d9d8"), ("a9a8", "d8d9"), ("a8a9", "d9d8"), ("a9a8", "d8d9")):
        s.play(red)
        talk.saved(s)
        assert "perpetual" not in kinds(talk, s)  # only on the player's turn
        s.play(black)
        talk.saved(s)
    assert s.outcome is None
    assert "perpetual" in kinds(talk, s)  # four checks in a row and the position repeats
    assert texts(talk, s, "perpetual")[0] in PHRASES["perpetual"][0]


def test_the_opening_name_once_known(store):
    talk = TalkService(store)
    s = game()
    talk.saved(s)
    s.play("h2e2")
    talk.saved(s)
    op = [r for r in talk.state(s)["remarks"] if r["kind"] == "opening"]
    assert op and "B00" in op[0]["zh"] and "中炮局" in op[0]["zh"] and "ECCO B00" in op[0]["en"]


def test_switched_off_it_says_nothing(store):
    store.set_settings({"talk": "off"})
    talk = TalkService(store)
    s = game()
    talk.saved(s)
    for mv in ("h2e2", "h7e7"):
        s.play(mv)
        talk.saved(s)
    talk.observe(s, 0, None)
    s.play("h0g2")
    s.play("e7e3")
    talk.saved(s)
    talk.observe(s, 2000, None)
    st = talk.state(s)
    assert st["enabled"] is False and st["remarks"] == [] and "talk" not in s.extras
    store.set_settings({"talk": "on"})  # on again: it speaks from here, with nothing made up for the past
    talk.saved(s)
    assert "blunder_player" not in kinds(talk, s)


def test_a_move_taken_back_takes_its_remarks(store):
    talk = TalkService(store)
    s = game(fen=ROOKS + " w - - 0 1")
    talk.saved(s)
    s.play("a0a9")
    talk.saved(s)
    s.play("e9e8")  # out of the check
    talk.saved(s)
    assert "rook_lost" in kinds(talk, s)
    s.undo()
    talk.saved(s)
    assert "rook_lost" not in kinds(talk, s) and kinds(talk, s)[0] == "greet"


def test_no_opponent_no_talk(store):
    talk = TalkService(store)
    s = GameSession()
    talk.saved(s)
    assert talk.state(s)["opponent"] is None and talk.state(s)["remarks"] == []


def test_material_offered():
    b = Board("4k4/9/9/9/4p4/9/9/4R4/9/4K4 w - - 0 1")
    assert material_offered(b, Move.from_iccs("e2e5")) == 0  # takes a pawn that nobody defends
    b = Board("3ak4/9/9/9/9/4p4/3p5/9/9/2R1K4 w - - 0 1")
    assert material_offered(b, Move.from_iccs("c0c3")) == 900  # the rook steps where a pawn takes it


def test_a_failing_remark_never_stops_the_game(store, monkeypatch, caplog):
    talk = TalkService(store)
    s = game()
    monkeypatch.setattr(TalkService, "_greet", lambda *a: 1 / 0)
    talk.saved(s)  # logged, not raised
    assert "the opponent's remark failed (saved)" in caplog.text
    monkeypatch.setattr(TalkService, "_state", lambda *a: 1 / 0)
    assert talk.state(s) == {"enabled": False, "speech": False, "opponent": None, "remarks": []}
