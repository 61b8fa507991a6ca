"""Online games as a new player meets them: no clock runs before a side's first move (lichess's rule,
app/play/clock.py "First moves"), but that first move must come within its time (online/rooms.py,
FIRST_MOVE_S) or the game is aborted; and a player starting or accepting another game leaves no
unplayed game of theirs live beside it (online/rooms.py, OnlineService._abort_unplayed). Time is
the games' fake clock (tests/fakeclock.py), moved on by hand; the clock's check is the watchdog's
own step (GameHub.check_clock)."""

from __future__ import annotations

from tests.fakeclock import ManualTime
from tests.online.conftest import state_where, wait_for

from xiangqi.app.play.clock import GameClock, TimeControl
from xiangqi.core.board import BLACK, RED
from xiangqi.online.rooms import FIRST_MOVE_S, _ran_out

FIVE_THREE = TimeControl("fischer", base_s=300, increment_s=3)


def test_a_clock_with_free_first_moves_counts_each_side_from_its_second_turn():
    clk = GameClock(FIVE_THREE, free_first_moves=True)
    clk.start(RED, now=0.0)
    assert clk.view(now=100.0)["running"] is None  # Red thinks 100 s over its first move: not counted
    assert clk.left_ms(RED, now=100.0) == 300_000 and clk.deadline(now=100.0) is None
    assert clk.flagged(now=10_000.0) is None
    clk.switch(now=100.0)  # Red's first move: no charge, no increment
    assert clk.main_ms[RED] == 300_000 and clk.free == {BLACK}
    assert clk.left_ms(BLACK, now=150.0) == 300_000 and clk.deadline() is None
    clk.switch(now=150.0)  # Black's first move
    assert clk.free == set()
    assert clk.view(now=160.0)["running"] == "red" and clk.left_ms(RED, now=160.0) == 290_000
    assert clk.deadline() == 150.0 + 300.0
    clk.switch(now=160.0)  # Red's second move: charged 10 s, plus the increment
    assert clk.main_ms[RED] == 293_000
    # the record keeps who is still free, so a restart does not start the clock early
    clk2 = GameClock(FIVE_THREE, free_first_moves=True)
    clk2.start(RED, now=0.0)
    again = GameClock.from_record(clk2.to_record(now=50.0))
    assert again.free == {RED, BLACK} and again.main_ms[RED] == 300_000
    assert GameClock.from_record(GameClock(FIVE_THREE).to_record()).free == set()  # old records


def test_a_first_move_has_its_own_time_then_the_clocks_decide():
    clk = GameClock(FIVE_THREE, free_first_moves=True, first_move_s=25.0)
    clk.start(RED, now=0.0)
    assert clk.deadline() == 25.0 and clk.flagged(now=24.999) is None and clk.flagged(now=25.0) == RED
    assert clk.left_ms(RED, now=24.0) == 300_000  # the main time is not touched
    clk.switch(now=20.0)  # Red's first move: Black's 25 s run from it
    assert clk.deadline() == 45.0 and clk.flagged(now=44.9) is None and clk.flagged(now=45.0) == BLACK
    again = GameClock.from_record(clk.to_record(now=30.0))  # the limit goes with the record
    assert again.first_move_s == 25.0 and again.free == {BLACK}
    clk.switch(now=40.0)  # Black's first move: from now on only the clocks count
    assert clk.deadline() == 40.0 + 300.0 and clk.flagged(now=339.0) is None
    assert "first_move_s" not in clk.to_record(now=40.0)
    plain = GameClock(FIVE_THREE, first_move_s=25.0)  # no free first moves: no first-move limit
    plain.start(RED, now=0.0)
    assert plain.first_move_s is None and plain.deadline() == 300.0


def test_the_clock_reads_its_time_source():
    t = ManualTime()
    clk = GameClock(FIVE_THREE, source=t)
    clk.start(RED)
    t.advance(10.0)
    assert clk.now() == t.monotonic() and clk.left_ms(RED) == 290_000
    clk.switch()
    assert clk.main_ms[RED] == 293_000 and clk.started == t.monotonic()
    assert GameClock.from_record(clk.to_record(), t).source is t


def test_red_clock_stands_before_the_first_move_online(server, manual_time):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    room = server.online.rooms[gid]
    st = a.get(f"/games/{gid}").json()
    assert st["clock"]["running"] is None and st["clock"]["red_ms"] == 300_000
    manual_time.advance(FIRST_MOVE_S["blitz"] - 1)  # Red thinks over its first move: not charged
    st = a.get(f"/games/{gid}").json()
    assert st["clock"]["red_ms"] == 300_000 and server.run(room.check_clock) is None
    st = a.post(f"/games/{gid}/move", json={"move": "h2e2"}).json()
    assert st["clock"]["red_ms"] == 300_000 and st["clock"]["running"] is None  # Black's first: free too
    st = b.post(f"/games/{gid}/move", json={"move": "h9g7"}).json()
    assert st["clock"]["running"] == "red" and st["clock"]["black_ms"] == 300_000


def test_accepting_a_new_game_aborts_the_players_unplayed_one(server):
    a, b, c = server.player(), server.player(), server.player()
    a.register("first_friend")
    b.guest()
    c.guest()
    link = a.post("/challenges", json={"time_control": "10+5", "color": "red"}).json()
    old = b.post(f"/challenges/{link['id']}/accept").json()["game_id"]
    assert b.get(f"/games/{old}").json()["status"] == "playing"
    # b now accepts another player's seek: the challenge game, unplayed, is aborted
    new = server.game_between(c, b, rated=False)
    assert new != old
    gone = b.get(f"/games/{old}").json()
    assert gone["status"] == "aborted" and gone["result"]["termination"] == "aborted"
    assert [g for g in b.get("/me").json()["playing"]] == [new]
    # a game with moves on both sides is not touched by a newer one
    c.post(f"/games/{new}/move", json={"move": "h2e2"})
    b.post(f"/games/{new}/move", json={"move": "h9g7"})
    third = b.post("/computer", json={"level": "beginner", "time_control": "10+5", "color": "red"})
    assert third.status_code == 200
    assert b.get(f"/games/{new}").json()["status"] == "playing"


def test_a_game_whose_first_move_does_not_come_is_aborted_for_both(server, manual_time):
    """Red sits down and never moves: after its first move's time (blitz: 25 s) the game is aborted,
    not lost, unrated, and both players are told why (stored, so a rebuilt room says it too)."""
    a, b = server.player(), server.player()
    a.register("sitter")
    b.register("waiter")
    online = server.online
    limit = FIRST_MOVE_S["blitz"]
    gid = server.game_between(a, b, rated=True)  # 5+3: blitz
    room = online.rooms[gid]
    assert room.session.clock.first_move_s == limit
    with a.ws(f"/ws/online/game/{gid}") as wa, b.ws(f"/ws/online/game/{gid}") as wb:
        wa.receive_json()
        wb.receive_json()
        manual_time.advance(limit - 0.001)
        assert server.run(room.check_clock) is None and room.status == "playing"
        manual_time.advance(0.001)
        assert server.run(room.check_clock) in (True, False)  # (False: the watchdog was first)
        assert server.run(room.check_clock) is False
        for ws in (wa, wb):
            st = state_where(ws, lambda s: s["result"] is not None)
            assert st["status"] == "aborted" and st["result"]["termination"] == "aborted"
            assert st["result"]["winner"] is None and st["rating_change"] is None
            assert st["result"]["reason_en"] == "Red did not make a first move within 25 s"
            assert st["result"]["reason_zh"] == "红方未在25秒内走第一步"
            assert "first move" in st["result"]["why_en"]
            assert st["clock"]["red_ms"] == 300_000  # the main time was never touched
    late = a.post(f"/games/{gid}/move", json={"move": "h2e2"})
    assert late.status_code == 409 and late.json()["code"] == "game_over"
    wait_for(lambda: online.db.game(gid)["finished_at"] is not None)
    row = online.db.game(gid)
    assert row["status"] == "aborted" and row["result"] is None and row["termination"] == "aborted"
    assert row["reason_en"] == "Red did not make a first move within 25 s"
    assert row["rating_change"] is None and online.db.history(a.me["user"]["id"]) == {}
    # the room rebuilt from the store (a restart, an evicted room) tells the same
    server.run(_forget, online, gid)
    st = b.get(f"/games/{gid}").json()
    assert st["status"] == "aborted"
    assert st["result"]["reason_en"] == "Red did not make a first move within 25 s"


async def _forget(online, gid):
    room = online.rooms.pop(gid)
    online.registry.remove(gid)
    await room.shutdown()


def test_black_s_first_move_time_runs_from_red_s_first_move(server, manual_time):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, tc="1+0", rated=False)  # bullet: 20 s
    room = server.online.rooms[gid]
    limit = FIRST_MOVE_S["bullet"]
    manual_time.advance(limit - 1)  # Red takes its time, within the limit
    assert a.post(f"/games/{gid}/move", json={"move": "h2e2"}).status_code == 200
    manual_time.advance(limit - 0.001)
    assert server.run(room.check_clock) is None
    manual_time.advance(0.001)
    server.run(room.check_clock)
    st = a.get(f"/games/{gid}").json()
    assert st["status"] == "aborted"
    assert st["result"]["reason_en"] == "Black did not make a first move within 20 s"
    assert st["clock"]["black_ms"] == 60_000


def test_a_computer_game_has_no_first_move_limit(server, manual_time):
    a = server.player()
    a.guest()
    r = a.post("/computer", json={"level": "beginner", "time_control": "10+5", "color": "red"})
    assert r.status_code == 200, r.text
    room = server.online.rooms[r.json()["game_id"]]
    assert room.session.clock.first_move_s is None
    manual_time.advance(3600)
    assert server.run(room.check_clock) is None and room.status == "playing"


def test_the_sweep_sees_an_unplayed_game_whose_first_move_time_ran_out():
    """A stored game whose process died before Red's first move: the sweep of another process takes
    it up (its watchdog then aborts it) once the first move's time has run out, not before."""
    t = ManualTime()
    clk = GameClock(FIVE_THREE, free_first_moves=True, first_move_s=25.0, source=t)
    clk.start(RED)
    rec = {**clk.to_record(), "saved_at": t.wall()}
    row = {"plies": 0, "clock": rec}
    t.advance(24.9)
    assert not _ran_out(row, t)
    t.advance(0.1)
    assert _ran_out(row, t)
    old = {"plies": 0, "clock": {k: v for k, v in rec.items() if k != "first_move_s"}}
    assert not _ran_out(old, t)  # a record of before the limit: never runs out before a first move


def test_the_state_says_the_time_left_for_the_first_move(server, manual_time):
    """``first_move_ms`` (docs/ONLINE_API.md section 5): the side to move's time for its first move,
    from the games' clock; null once both sides have moved, and in a computer game."""
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)  # 5+3: blitz, 25 s
    assert a.get(f"/games/{gid}").json()["first_move_ms"] == 25_000
    manual_time.advance(7.25)
    assert b.get(f"/games/{gid}").json()["first_move_ms"] == 17_750  # the opponent sees it too
    assert a.post(f"/games/{gid}/move", json={"move": "h2e2"}).json()["first_move_ms"] == 25_000  # Black's
    manual_time.advance(3.5)
    assert a.get(f"/games/{gid}").json()["first_move_ms"] == 21_500
    st = b.post(f"/games/{gid}/move", json={"move": "h9g7"}).json()
    assert st["first_move_ms"] is None and st["clock"]["running"] == "red"
    manual_time.advance(10)
    assert a.get(f"/games/{gid}").json()["first_move_ms"] is None
    # an abort ends the countdown too
    gid2 = server.game_between(a, b, rated=False)
    assert a.post(f"/games/{gid2}/abort").json()["first_move_ms"] is None
    # a computer game: no first-move limit, no countdown
    c = server.player()
    c.guest()
    r = c.post("/computer", json={"level": "beginner", "time_control": "10+5", "color": "red"})
    assert r.status_code == 200, r.text
    assert c.get(f"/games/{r.json()['game_id']}").json()["first_move_ms"] is None


def test_a_clock_tells_the_first_move_s_time_left():
    clk = GameClock(FIVE_THREE, free_first_moves=True, first_move_s=25.0)
    clk.start(RED, now=0.0)
    assert clk.first_move_left_ms(now=0.0) == 25_000 and clk.first_move_left_ms(now=24.999) == 1
    assert clk.first_move_left_ms(now=30.0) == 0
    clk.switch(now=10.0)
    assert clk.first_move_left_ms(now=12.0) == 23_000  # Black's, from Red's first move
    clk.switch(now=12.0)
    assert clk.first_move_left_ms(now=12.0) is None  # both have moved
    no_limit = GameClock(FIVE_THREE, free_first_moves=True)
    no_limit.start(RED, now=0.0)
    assert no_limit.first_move_left_ms(now=1.0) is None
