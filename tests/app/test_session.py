"""GameSession: moves through the core board, undo (悔棋), results, records."""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi.app.play.session import GameOverError, GameSession, SessionError
from xiangqi.core.board import BLACK, RED, STARTING_FEN
from xiangqi.core.errors import IllegalMoveError, InvalidMoveError

DATA = Path(__file__).parent.parent / "data"
MATE_IN_ONE = "3k5/1R7/R8/9/9/9/9/9/9/4K4 w - - 0 1"  # a7a9 mates (rook b8 guards rank 8)


def test_play_records_chinese_notation_and_state():
    s = GameSession(red="human", black="human")
    for mv in ("h2e2", "h9g7", "h0g2", "i9h9"):
        s.play(mv)
    assert [m.chinese for m in s.moves] == ["炮二平五", "马8进7", "马二进三", "车9平8"]
    st = s.state()
    assert st["turn"] == "red"
    assert st["last_move"] == "i9h9"
    assert st["check"] is None and st["result"] is None
    assert st["legal"]["b0"] == ["b0a2", "b0c2"] or sorted(st["legal"]["b0"]) == ["b0a2", "b0c2"]
    assert sum(len(v) for v in st["legal"].values()) == len(list(s.board.legal_moves))


def test_illegal_move_leaves_game_unchanged():
    s = GameSession()
    fen = s.board.fen()
    with pytest.raises(IllegalMoveError, match="a0a5"):
        s.play("a0a5")  # the rook is blocked by its own pawn on a3
    with pytest.raises(InvalidMoveError):
        s.play("z9z9")
    assert s.board.fen() == fen and s.moves == [] and s.version == 0


def test_undo_takes_back_the_full_move_against_the_engine():
    s = GameSession(red="human", black="engine")
    s.play("h2e2")
    s.play("h9g7")  # the engine's reply
    s.play("h0g2")
    assert s.undo() == 1  # engine has not answered: only the human move goes
    assert len(s.moves) == 2 and s.board.turn == RED
    assert s.undo() == 2  # engine reply and human move
    assert s.moves == [] and s.board.fen() == STARTING_FEN
    with pytest.raises(SessionError, match="nothing to undo"):
        s.undo()


def test_undo_when_human_plays_black():
    s = GameSession(red="engine", black="human")
    s.play("h2e2")
    s.play("h9g7")
    s.play("h0g2")
    assert s.undo() == 2
    assert [m.iccs for m in s.moves] == ["h2e2"] and s.board.turn == BLACK


def test_two_humans_undo_one_ply():
    s = GameSession(red="human", black="human")
    s.play("h2e2")
    s.play("h9g7")
    assert s.undo() == 1 and len(s.moves) == 1


def test_checkmate_ends_the_game_with_reason():
    s = GameSession(red="human", black="human", fen=MATE_IN_ONE)
    rec = s.play("a7a9")
    assert rec.check
    assert s.outcome is not None
    assert s.outcome.reason_zh == "红胜 — 将死"
    st = s.state()
    assert st["result"]["result"] == "1-0" and st["result"]["headline_zh"] == "红胜"
    assert st["legal"] == {}
    with pytest.raises(GameOverError):
        s.play("d9e9")
    s.undo()  # takes back the mating move; the game goes on
    assert s.outcome is None and s.board.turn == RED


def test_resign_and_agreed_draw():
    s = GameSession()
    s.play("h2e2")
    out = s.resign(BLACK)
    assert out.result() == "1-0" and out.reason_zh == "红胜 — 黑方认输"
    assert s.state()["result"]["termination"] == "resignation"
    s2 = GameSession(red="human", black="human")
    assert s2.agree_draw().result() == "1/2-1/2"
    with pytest.raises(GameOverError):
        s2.resign(RED)


def test_bad_players_and_levels_are_refused():
    with pytest.raises(SessionError, match="red player"):
        GameSession(red="robot")
    with pytest.raises(SessionError, match="level"):
        GameSession(level="grandmaster")


def test_record_round_trip_replays_through_the_board():
    s = GameSession(red="human", black="engine", level="intermediate")
    for mv in ("h2e2", "h9g7", "h0g2"):
        s.play(mv)
    s.resign(RED)
    s2 = GameSession.from_record(s.to_record())
    assert s2.id == s.id and s2.level == "intermediate"
    assert s2.board.fen() == s.board.fen()
    assert [m.chinese for m in s2.moves] == ["炮二平五", "马8进7", "马二进三"]
    assert s2.outcome.reason_zh == "黑胜 — 红方认输"
    with pytest.raises(SessionError, match="damaged"):
        GameSession.from_record({"moves": []})


def test_pgn_round_trip_iccs_and_chinese():
    s = GameSession(red="human", black="human")
    for mv in ("h2e2", "h9g7", "h0g2", "i9h9"):
        s.play(mv)
    for notation in ("iccs", "chinese", "wxf"):
        text = s.to_pgn(notation)
        assert '[Game "Chinese Chess"]' in text and '[Result "*"]' in text
        assert "[FEN" not in text
        back = GameSession.from_pgn(text)
        assert [m.iccs for m in back.moves] == ["h2e2", "h9g7", "h0g2", "i9h9"]
    assert "1. 炮二平五 马8进7 2. 马二进三 车9平8" in s.to_pgn("chinese")
    assert "1. h2e2 h9g7 2. h0g2 i9h9" in s.to_pgn("iccs").lower().replace("-", "")
    with pytest.raises(SessionError, match="notation"):
        s.to_pgn("san")


def test_pgn_of_a_position_game_has_fen_tag():
    s = GameSession(red="human", black="human", fen=MATE_IN_ONE)
    s.play("a7a9")
    text = s.to_pgn("iccs")
    assert f'[FEN "{MATE_IN_ONE}"]' in text and '[Result "1-0"]' in text
    back = GameSession.from_pgn(text)
    assert back.start_fen == MATE_IN_ONE and back.outcome.reason_zh == "红胜 — 将死"


def test_from_pgn_reports_bad_text():
    with pytest.raises(SessionError):
        GameSession.from_pgn("this is not a game record")


def test_the_1982_game_is_replayed_to_its_result():
    record = DATA / "records" / "pgn" / "xiangqijs_readme_iccs_1982.pgn"
    s = GameSession.from_pgn(record.read_text(encoding="utf-8"))
    assert len(s.moves) == 125
    assert s.moves[0].chinese == "炮八平五"
    assert s.board.fen() == "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b - - 16 63"
    # The record ends on the second occurrence of the final position (after 61. and 63. b5a5):
    # the referee rules at the third, so the recorded draw stands, named as a repetition.
    assert s.repetitions() == 2
    assert s.outcome.result() == "1/2-1/2"
    assert s.outcome.termination.value == "repetition"


def test_draw_offer_decision():
    from xiangqi.app.opponents.players import accepts_draw, material_balance
    from xiangqi.core.board import Board

    assert not accepts_draw(0, None, 0, in_opening=True)
    assert accepts_draw(10, None, 0, in_opening=False)
    assert not accepts_draw(120, None, 0, in_opening=False)  # the computer is better
    assert not accepts_draw(0, None, 400, in_opening=False)  # a horse up
    assert not accepts_draw(None, 3, 0, in_opening=False)  # it mates in 3
    assert accepts_draw(None, -3, 0, in_opening=False)  # it is being mated
    assert material_balance(Board()) == 0
    assert material_balance(Board("4k3r/9/9/9/9/9/9/9/9/3K5 w")) == -900


def test_undo_after_the_game_ended():
    """悔棋 after the end in casual play: a resignation or agreed draw is withdrawn first (the game goes
    on from the same position), a second 悔棋 takes back moves; a loss on time cannot be undone."""
    s = GameSession(red="human", black="engine")
    s.play("h2e2")
    s.play("h9g7")
    s.resign(RED)
    st = s.state()
    assert (st["result"]["headline_zh"], st["result"]["why_zh"]) == ("黑胜", "红方认输")
    assert (st["result"]["headline_en"], st["result"]["why_en"]) == ("Black wins", "Red resigns")
    assert s.can_undo() and st["can_undo"]
    assert s.undo() == 0 and s.outcome is None and len(s.moves) == 2 and s.board.turn == RED
    assert s.undo() == 2 and not s.can_undo()
    two = GameSession(red="human", black="human")
    two.play("h2e2")
    two.agree_draw()
    assert two.state()["result"]["why_zh"] == "双方议和"
    assert two.undo() == 0 and not two.is_over
    two.lose_on_time(BLACK)
    assert not two.can_undo() and two.state()["can_undo"] is False
    with pytest.raises(GameOverError, match="lost on time"):
        two.undo()
    cvc = GameSession(red="engine", black="engine")
    assert not cvc.can_undo()


def test_pgn_tags_in_the_interface_language():
    s = GameSession(red="engine", black="human", level="advanced")
    zh = s.pgn_headers()
    assert (zh["Event"], zh["Red"], zh["Black"]) == ("象棋对局", "电脑·高级", "棋手")
    assert zh["Game"] == "Chinese Chess"
    en = s.pgn_headers("en")
    assert (en["Event"], en["Red"], en["Black"]) == ("Xiangqi game", "Computer (Advanced)", "Player")
    assert '[Red "电脑·高级"]' in s.to_pgn("iccs") and '[Event "Xiangqi game"]' in s.to_pgn("wxf", "en")
    named = GameSession(headers={"Red": "胡荣华", "Event": "全国个人赛"})
    assert (named.pgn_headers("en")["Red"], named.pgn_headers("en")["Event"]) == ("胡荣华", "全国个人赛")
    with pytest.raises(SessionError, match="language must be zh or en"):
        s.pgn_headers("fr")


def test_state_is_computed_once_per_version_and_never_stale(monkeypatch):
    """Many pages polling one game cost one position computation per version; every change shows."""
    import xiangqi.app.play.session as session_mod

    calls = []
    real = session_mod.forbidden_moves

    def counting(board, rules=None):
        calls.append(board.fen())
        return real(board, rules)

    monkeypatch.setattr(session_mod, "forbidden_moves", counting)
    s = GameSession(red="human", black="human")
    first = [s.state() for _ in range(50)]
    assert len(calls) == 1 and all(st == first[0] for st in first)
    s.play("h2e2")
    st = s.state()
    assert len(calls) == 2 and st["moves"][-1]["iccs"] == "h2e2" and st["turn"] == "black"
    s.undo()
    assert s.state()["moves"] == () and len(calls) == 3
    s.resign(True)
    st = s.state()
    assert st["result"]["winner"] == "black" and st["legal"] == {} and st["can_undo"] is True
    s.undo()  # the resignation is withdrawn: the game goes on in the same position
    st = s.state()
    assert st["result"] is None and st["legal"] and st["version"] == s.version


def test_the_move_list_is_built_once_a_ply_and_follows_takebacks():
    """The state's move entries are kept from version to version (one dict built a ply), and the
    ICCS list and the book flags follow every takeback and replay (DESIGN.md "Load on a quiet machine")."""
    s = GameSession(red="human", black="human")
    for m in ("h2e2", "h9g7", "h0g2"):
        s.play(m)
    before = s.state()["moves"]
    s.play("i9h9")
    after = s.state()["moves"]
    assert isinstance(after, tuple) and all(a is b for a, b in zip(before, after[:3], strict=True))
    assert [m["iccs"] for m in after] == ["h2e2", "h9g7", "h0g2", "i9h9"] == s.iccs_moves()
    s.undo()
    s.undo()
    s.play("b0c2")  # a different third move: a new entry after the two that stay
    moves = s.state()["moves"]
    assert [m["iccs"] for m in moves] == ["h2e2", "h9g7", "b0c2"] == s.iccs_moves()
    assert moves[0] is before[0] and moves[2] is not before[2] and moves[2]["chinese"] == "马八进七"
    assert s.to_record()["moves"] == ["h2e2", "h9g7", "b0c2"] and "book" not in s.to_record()
    rec = dict(s.to_record(), book=[1])  # the record says ply 1 was a book move
    back = GameSession.from_record(rec)
    assert [m.get("book", False) for m in back.state()["moves"]] == [False, True, False]
    assert back.to_record()["book"] == [1]
    s.iccs_moves().append("x")  # a copy: the session's own list is not changed
    assert s.iccs_moves() == ["h2e2", "h9g7", "b0c2"]
