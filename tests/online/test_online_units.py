"""The online parts on their own: Glicko-2 for a game, categories, the bus, the lobby's limits, lag."""

from __future__ import annotations

import pytest

from xiangqi.app.play.clock import TimeControl
from xiangqi.online.bus import LocalBus
from xiangqi.online.lobby import PRESETS, Identity, Lobby, LobbyError, SlidingWindow, category_of
from xiangqi.online.ratings import PROVISIONAL_RD, rate_game, rating_view
from xiangqi.study.rating import Rating


def test_rate_game_new_players():
    # Two new players (1500, RD 350, sigma 0.06), one win: Glicko-2 steps 3-8 give the winner
    # 1500 + 173.7178 * phi'^2 * g * 0.5 with phi' = 1/sqrt(1/phi*^2 + 1/v); about +162.
    red, black = rate_game(Rating(), Rating(), 1.0)
    assert red.rating == pytest.approx(1662.3, abs=0.5)
    assert black.rating == pytest.approx(1337.7, abs=0.5)
    assert red.rd == pytest.approx(290.3, abs=0.5) and red.rd == pytest.approx(black.rd)
    d_red, d_black = rate_game(Rating(), Rating(), 0.5)
    assert d_red.rating == pytest.approx(1500.0) and d_black.rating == pytest.approx(1500.0)
    strong, weak = rate_game(Rating(2000, 60), Rating(1400, 60), 1.0)
    assert 0 < strong.rating - 2000 < 3  # an expected win moves little
    with pytest.raises(ValueError):
        rate_game(Rating(), Rating(), 2)


def test_rating_view_marks_and_ranks():
    v = rating_view("blitz", Rating(1712.4, 80.0), 30)
    assert v == {"category": "blitz", "rating": 1712, "rd": 80, "provisional": False, "games": 30,
                 "rank_zh": "太守"}
    assert rating_view("blitz", Rating(1500, PROVISIONAL_RD + 1), 3)["provisional"] is True
    assert rating_view("rapid", Rating(1099, 50), 9)["rank_zh"] == "草民"


def test_categories():
    assert {k: p.category for k, p in PRESETS.items()} == {
        "1+0": "bullet", "3+2": "blitz", "5+3": "blitz", "10+5": "rapid", "15+10": "rapid",
        "30+20": "classical"}
    assert category_of(TimeControl("fischer", base_s=120, increment_s=1)) == "bullet"  # 160 s
    assert category_of(TimeControl("fischer", base_s=150, increment_s=1)) == "blitz"  # 190 s


def test_local_bus_order_and_isolation():
    bus = LocalBus()
    got: list[tuple[str, int]] = []
    s1 = bus.subscribe("game:a", lambda m: got.append(("s1", m["n"])))
    bus.subscribe("game:a", lambda m: 1 / 0)  # a failing subscriber does not stop the others
    bus.subscribe("game:b", lambda m: got.append(("b", m["n"])))
    s3 = bus.subscribe("game:a", lambda m: got.append(("s3", m["n"])))
    bus.publish("game:a", {"n": 1})
    s1.close()
    s1.close()
    bus.publish("game:a", {"n": 2})
    assert got == [("s1", 1), ("s3", 1), ("s3", 2)]
    assert bus.subscribers("game:a") == 2 and bus.subscribers("game:b") == 1
    s3.close()
    assert bus.subscribers("nobody") == 0


def test_sliding_window():
    t = [0.0]
    w = SlidingWindow(2, 60, clock=lambda: t[0])
    w.hit("k")
    w.hit("k")
    with pytest.raises(LobbyError) as e:
        w.hit("k")
    assert e.value.status == 429 and e.value.retry_after == 60
    w.hit("other")
    t[0] = 60.5
    w.hit("k")


def test_lobby_rules():
    changes = []
    lobby = Lobby(lambda: changes.append(1))
    me = Identity("guest", "g-1", "游客0001")
    you = Identity("user", "u-2", "you", 2)
    with pytest.raises(LobbyError, match="unknown time control"):
        lobby.create_seek(me, "7+7", False, "red", None)
    with pytest.raises(LobbyError, match="casual"):
        lobby.create_seek(me, "5+3", True, "red", None)
    seek = lobby.create_seek(me, "5+3", False, "random", None)
    with pytest.raises(LobbyError) as e:
        lobby.create_seek(me, "3+2", False, "red", None)
    assert e.value.status == 409
    with pytest.raises(LobbyError) as e:
        lobby.cancel_seek(you, seek.id)
    assert e.value.status == 403
    with pytest.raises(LobbyError):
        lobby.take_seek(me, seek.id)
    assert lobby.take_seek(you, seek.id) is seek and lobby.seeks == {}
    assert len(changes) == 2 and lobby.version == 2


def test_two_identical_online_games_are_two_rows_of_the_games_database(server):
    """Two games with the same players, date and moves are two games: the games database's unique
    hash column must not refuse the second (it did when the token was the PGN's hash alone)."""
    from xiangqi.core.board import Board
    from xiangqi.core.pgn import Game, write_game

    board = Board()
    for mv in ("h2e2", "h9g7", "h0g2", "i9h9"):
        board.push_iccs(mv)
    game = Game.from_board(board)
    game.headers.update({"Red": "alpha", "Black": "beta", "Date": "2026.12.01", "Result": "*"})
    pgn = write_game(game)
    first = server.online._export("g-one", pgn)
    second = server.online._export("g-two", pgn)
    assert first != second
    assert server.online._export("g-one", pgn) == first  # the same game again: its own row, kept
