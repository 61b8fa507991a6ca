"""Online games as a new player meets them: no clock runs before a side's first move (lichess's rule,
app/play/clock.py "First moves"), and a player starting or accepting another game leaves no unplayed
game of theirs live beside it (online/rooms.py, OnlineService._abort_unplayed)."""

from __future__ import annotations

from xiangqi.app.play.clock import GameClock, TimeControl
from xiangqi.core.board import BLACK, RED

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


def test_red_clock_stands_before_the_first_move_online(server):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    room = server.online.rooms[gid]
    st = a.get(f"/games/{gid}").json()
    assert st["clock"]["running"] is None and st["clock"]["red_ms"] == 300_000
    room.session.clock.started -= 120  # two minutes pass before Red's first move
    st = a.get(f"/games/{gid}").json()
    assert st["clock"]["red_ms"] == 300_000 and room.session.clock.deadline() is None
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
