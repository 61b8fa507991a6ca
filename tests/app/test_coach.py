"""The rating service (xiangqi.app.play.ratings): which games are rated, the rating kept in the store
(counted once, taken back with the result), the adaptive level's settings and adjustment; and the
coach while playing (xiangqi.app.training.coach): its word on a move and the threat display."""

from __future__ import annotations

import pytest

from xiangqi.app.play import ratings
from xiangqi.app.play.session import ADAPTIVE, GameSession
from xiangqi.app.play.store import Store
from xiangqi.app.training import coach
from xiangqi.engine.levels import LEVELS
from xiangqi.study import rating as glicko

HANDICAP = "r1bakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def finished(level: str = "beginner", *, resign: bool = True, **extras) -> GameSession:
    s = GameSession(red="human", black="engine", level=level)
    s.extras.update(extras)
    s.play("h2e2")
    s.play("h9g7")
    if resign:
        s.resign(False)  # Black (the computer) resigns: the player wins
    return s


def test_rated_rules() -> None:
    assert ratings.rating_status(finished())["rated"] is True
    assert ratings.rating_status(GameSession(red="human", black="human"))["reason"] == "not_vs_computer"
    assert ratings.rating_status(GameSession(red="engine", black="engine"))["reason"] == "not_vs_computer"
    assert ratings.rating_status(GameSession(fen=HANDICAP))["reason"] == "not_start_position"
    assert ratings.rating_status(finished(coach=True))["reason"] == "coach"
    assert ratings.rating_status(finished(hints=1))["reason"] == "hint"
    assert ratings.rating_status(finished(threats=2))["reason"] == "hint"
    s = finished(resign=False)
    s.undo()
    assert s.extras == {"undos": 1}
    st = ratings.rating_status(s)
    assert st["reason"] == "takeback" and st["why_zh"] == "悔棋后不计等级分"
    # the player resigns before moving: not a rated game
    s = GameSession(red="human", black="engine")
    s.resign(True)
    assert ratings.rating_status(s)["reason"] == "unfinished"


def test_unmeasured_level_is_unrated(monkeypatch) -> None:
    import dataclasses

    monkeypatch.setitem(LEVELS, "advanced", dataclasses.replace(LEVELS["advanced"], elo=None, elo_error=None))
    st = ratings.rating_status(finished("advanced"))
    assert st == {"rated": False, "reason": "no_elo", "why_zh": "该难度没有测定的等级分，不计等级分",
                  "why_en": "this level has no measured Elo: unrated"}


def test_coach_takeback_is_not_an_undo() -> None:
    s = finished(resign=False)
    s.undo(coach=True)
    assert s.extras == {"coach_takebacks": 1}
    rec = GameSession.from_record(s.to_record())
    assert rec.extras == {"coach_takebacks": 1}
    assert "extras" not in GameSession().to_record()  # a plain game's record is as before


def test_rating_counted_once_and_taken_back(tmp_path) -> None:
    store = Store(tmp_path)
    try:
        s = finished()
        e1 = ratings.sync_rating(store, s)
        lv = LEVELS["beginner"]
        expect = glicko.update(glicko.Rating(), [glicko.Result(lv.elo, lv.elo_error / 1.96, 1)])
        assert e1["rating"] == pytest.approx(expect.rating) and e1["score"] == 1.0
        assert e1["rating_before"] == 1500 and e1["opponent_elo"] == lv.elo and e1["level"] == "beginner"
        assert ratings.sync_rating(store, s)["id"] == e1["id"]  # saved again: still one period
        assert store.get_rating()["games"] == 1
        assert store.get_rating()["rating"] == pytest.approx(expect.rating)
        # a second game, lost
        s2 = GameSession(red="human", black="engine")
        s2.play("h2e2")
        s2.resign(True)
        e2 = ratings.sync_rating(store, s2)
        assert e2["score"] == 0.0 and e2["rating"] < e2["rating_before"] == pytest.approx(expect.rating)
        # the loss is taken back (悔棋 after the resignation): unrated, the rating as before it
        s2.undo()
        assert ratings.sync_rating(store, s2) is None
        assert store.get_rating()["rating"] == pytest.approx(expect.rating)
        assert [h["game_id"] for h in store.rating_history()] == [s.id]
        prof = ratings.profile(store)
        assert prof["games"] == 1 and len(prof["history"]) == 1
        assert prof["rank"] == ratings.rank_name(expect.rating)
    finally:
        store.close()


def test_rating_tables_created_in_an_old_file(tmp_path) -> None:
    import sqlite3

    Store(tmp_path).close()
    con = sqlite3.connect(tmp_path / "xiangqi.db")
    con.execute("DROP TABLE rating_history")
    con.execute("DROP TABLE player_rating")
    con.commit()
    con.close()
    store = Store(tmp_path)  # an older file: the tables are created, nothing else changes
    try:
        assert store.get_rating() is None and store.rating_history() == []
    finally:
        store.close()


def test_profile_of_a_new_player(tmp_path) -> None:
    store = Store(tmp_path)
    try:
        p = ratings.profile(store)
        assert (p["rating"], p["rd"], p["games"], p["provisional"], p["rank"]) == (1500, 350, 0, True, "常侍")
    finally:
        store.close()


# -- the adaptive level ------------------------------------------------------------------------

def test_adaptive_interpolates_between_measured_levels() -> None:
    b, i = LEVELS["beginner"], LEVELS["intermediate"]
    mid = (b.elo + i.elo) / 2
    a = ratings.adaptive_level(mid)
    assert a["between"] == ["beginner", "intermediate"] and a["t"] == pytest.approx(0.5, abs=0.002)
    assert a["elo"] == round(mid)
    assert a["depth"] == round((b.depth + i.depth) / 2)
    assert a["temperature_cp"] == pytest.approx((b.temperature_cp + i.temperature_cp) / 2, abs=0.05)
    assert a["margin_cp"] == round((b.margin_cp + i.margin_cp) / 2)
    assert a["miss_threat"] == pytest.approx(b.miss_threat / 2, abs=0.001)  # 中级 has none
    # clamped to the measured range, whose bottom is 入门 with its blind spots
    low = ratings.adaptive_level(100)
    assert low["elo"] == LEVELS["novice"].elo and low["between"][0] == "novice"
    assert low["miss_threat"] == LEVELS["novice"].miss_threat
    assert ratings.engine_level(low).miss_capture == LEVELS["novice"].miss_capture
    top = ratings.adaptive_level(9000)
    assert top["elo"] == LEVELS["master"].elo and top["depth"] is None and top["multipv"] == 1
    lv = ratings.engine_level(a)
    assert (lv.key, lv.depth, lv.multipv, lv.elo) == (ADAPTIVE, a["depth"], a["multipv"], a["elo"])


def test_adaptive_offset_direction() -> None:
    assert ratings.adaptive_offset([]) == 0
    assert ratings.adaptive_offset([1.0]) == ratings.ADAPTIVE_STEP
    assert ratings.adaptive_offset([0.0, 0.0]) == -2 * ratings.ADAPTIVE_STEP
    assert ratings.adaptive_offset([1.0, 0.5, 0.0]) == 0
    assert ratings.adaptive_offset([1.0] * 50) == ratings.ADAPTIVE_MAX_OFFSET
    r = 1500.0
    assert ratings.adaptive_level(r, ratings.adaptive_offset([1.0]))["elo"] > ratings.adaptive_level(r)["elo"]
    assert ratings.adaptive_level(r, ratings.adaptive_offset([0.0]))["elo"] < ratings.adaptive_level(r)["elo"]


def test_adaptive_follows_the_players_games(tmp_path) -> None:
    store = Store(tmp_path)
    try:
        first = ratings.adaptive_for(store)
        assert first["elo"] == 1500 and first["offset"] == 0
        s = GameSession(red="human", black="engine", level=ADAPTIVE)
        s.extras["adaptive"] = first
        s.play("h2e2")
        s.play("h9g7")
        s.resign(False)  # the player wins
        store.save_game(s)
        assert ratings.rating_status(s)["rated"] is True
        ratings.sync_rating(store, s)
        after_win = ratings.adaptive_for(store)
        assert after_win["offset"] == ratings.ADAPTIVE_STEP
        assert after_win["elo"] > first["elo"] + ratings.ADAPTIVE_STEP  # the rating went up too
        # then a loss, as Black
        s2 = GameSession(red="engine", black="human", level=ADAPTIVE)
        s2.extras["adaptive"] = after_win
        s2.play("h2e2")
        s2.play("h9g7")
        s2.resign(False)  # Black (the player) resigns
        store.save_game(s2)
        ratings.sync_rating(store, s2)
        after_loss = ratings.adaptive_for(store)
        assert after_loss["offset"] == 0 and after_loss["elo"] < after_win["elo"]
        assert ratings.opponent(s2)["elo"] == after_win["elo"]
        assert s2.player_name(True) == f"电脑·自适应 {after_win['elo']}"
        assert s2.player_name(True, "en") == f"Computer (Adaptive {after_win['elo']})"
    finally:
        store.close()


def test_adaptive_game_plays_its_own_settings() -> None:
    from xiangqi.app.opponents.players import EnginePlayer

    s = GameSession(red="human", black="engine", level=ADAPTIVE)
    s.extras["adaptive"] = ratings.adaptive_level(1800)
    s.play("h2e2")
    snap = s.snapshot()
    lv = snap.engine_level
    # 1800 lies between 初级 (1069) and 中级 (1950) of the shipped ladder (both measured with the network):
    # t = 731 / 881 = 0.830, depth 2 + 0.830 * 2 -> 4, 5 - 0.830 -> 4 lines, 90 - 0.830 * 45 -> 53 cp
    assert (lv.depth, lv.multipv, lv.margin_cp, lv.elo) == (4, 4, 53, 1800)
    assert lv.miss_threat == pytest.approx(0.2 * (1 - 0.830), abs=0.002)
    mv = EnginePlayer(hash_mb=8).choose(snap.board, lv)  # the real engine at those settings
    assert snap.board.is_legal(mv)
    # a game opened with the adaptive level chosen but no settings plays a new player's level
    g = GameSession(level=ADAPTIVE)
    assert g.engine_level().elo == 1500 and g.extras["adaptive"]["elo"] == 1500
    assert GameSession(level="beginner").snapshot().engine_level is None


# -- the coach while playing (real engine at the coach's depth) ---------------------------------

# Red: king e0, rook b0; Black: king f9, horse c8 (tests/study/test_review.py's HANGING): b0b6 leaves
# the rook where the horse takes it.
HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"
# Black to move, the same idea mirrored: the black rook b9 to b3 is taken by Red's horse c1.
HANGING_BLACK = "1r2k4/9/9/9/9/9/9/9/2N6/5K3 b - - 0 1"
# Red mates in 2 (test_review.py's MATE_IN_2): a1a2 throws the win away.
MATE_IN_2 = "3k5/9/3a5/9/9/9/7rr/1R7/R8/4K4 w - - 0 1"


def test_coach_flags_the_rook_left_hanging() -> None:
    from xiangqi.core.board import Board

    note = coach.advise(Board(HANGING), "b0b6")
    assert note["warn"] is True and note["class"] == "blunder"
    assert note["refutation"] == "c8b6" and note["refutation_text"] == "马3进2"
    assert note["lost"] == "rook" and note["loss_cp"] == 900
    assert note["text_zh"] == "这步丢车：对方 马3进2 吃车"
    assert note["text_en"] == "This loses the rook: 马3进2"
    assert note["eval_before"] > 0 > note["eval_after"]


def test_coach_flags_black_losing_its_rook() -> None:
    from xiangqi.core.board import Board

    note = coach.advise(Board(HANGING_BLACK), "b9b3")
    assert note["warn"] and note["refutation"] == "c1b3" and note["refutation_text"] == "马七进八"
    assert note["text_zh"] == "这步丢车：对方 马七进八 吃车"


def test_coach_passes_a_good_move() -> None:
    from xiangqi.core.board import Board

    note = coach.advise(Board(HANGING), "b0b2")  # the rook stays safe
    assert note["warn"] is False and note["class"] in ("best", "good")
    assert note["text_zh"] == "" and note["lost"] is None


def test_coach_flags_a_missed_mate_by_the_drop() -> None:
    from xiangqi.core.board import Board

    note = coach.advise(Board(MATE_IN_2), "a1a2")
    # the quiet move throws the mate away and lets Black's two rooks mate instead
    assert note["warn"] is True and note["lost"] is None and note["drop"] >= 20
    assert note["mate"] is not None and note["text_zh"].startswith("这步让对方有杀：")
    assert note["text_en"].startswith(f"This allows mate in {note['mate']}: ")


def test_coach_names_the_drop_when_no_material_is_lost() -> None:
    from xiangqi.core.board import Board

    # an opening where Black has left a cannon to be won: a slow pawn move lets it escape
    b = Board("1rbakabr1/9/1cn3nc1/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKABR1 w - - 8 5")
    note = coach.advise(b, "c3c4")
    assert note["warn"] is True and note["lost"] is None and note["mate"] is None
    assert note["text_zh"].startswith(f"这步是{coach.CLASS_ZH[note['class']]}（局面 ")
    assert "→" in note["text_zh"] and note["text_zh"].endswith(f"：对方 {note['refutation_text']} 好")


def test_line_loss_counts_an_exchange_as_even() -> None:
    from xiangqi.core.board import Board

    # Red rook takes a pawn defended by the black rook: after the recapture Red is down a rook for
    # a pawn; a line where Red recaptures evens out
    b = Board("3k5/9/9/9/9/r8/p8/9/R8/4K4 w - - 0 1")
    start = coach._material(b, True)
    b.push_iccs("a1a3")  # takes the pawn
    lost = coach.line_loss(b, ["a4a3"], True, start)
    assert lost["loss"] == 900 - 100 and lost["piece"] == 5 and lost["capture_at"] == 0


def test_threat_names_the_capture() -> None:
    from xiangqi.core.board import Board

    # Red to move; Black's horse c8 would take the rook on b6 if Red passed
    b = Board("5k3/2n6/9/1R7/9/9/9/9/9/4K4 w - - 0 1")
    th = coach.threat(b)
    assert th["move"] == "c8b6" and th["captures"] == "rook" and th["real"] is True
    assert th["text_zh"] == "对方威胁：马3进2 吃车"
    assert coach.threat(Board("4k4/9/9/9/9/9/9/9/4r4/3K5 w - - 0 1"))["in_check"] is False
    inchk = coach.threat(Board("4k4/9/9/9/9/9/9/9/9/3Kr4 w - - 0 1"))
    assert inchk["in_check"] is True and inchk["text_zh"] == "你正被将军：先应将"


@pytest.mark.parametrize("true_elo", [1450, 1900, 2400])
def test_adaptive_level_settles_where_the_player_scores_half(true_elo: int) -> None:
    """A simulated player of ``true_elo`` against adaptive levels as strong as their estimate: the
    rating and the offset bring the level to the player, who then scores about half."""
    import random

    rng = random.Random(true_elo)
    r, results, levels = glicko.Rating(), [], []
    for _ in range(300):
        a = ratings.adaptive_level(r.rating, ratings.adaptive_offset(results[-ratings.ADAPTIVE_WINDOW:]))
        p_win = 1 / (1 + 10 ** ((a["elo"] - true_elo) / 400))
        s = 1.0 if rng.random() < p_win else 0.0
        r = glicko.update(r, [glicko.Result(a["elo"], glicko.rd_from_error(a["error"]), s)])
        results.append(s)
        levels.append(a["elo"])
    late = results[100:]
    assert abs(sum(late) / len(late) - 0.5) < 0.08
    assert abs(sum(levels[200:]) / 100 - true_elo) < 120
