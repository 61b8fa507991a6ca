"""The public server's computer games: one identity, or one address, cannot take every slot.

The server plays at most ``max_computer_games`` (8) computer games at once (each has an engine in
the process). Before the per-player and per-address limits, one guest (or one address making fresh
guests) could start all 8 and leave nobody else a game against the computer. Now a player holds at
most ``computer_games_per_player`` (2) of them and an address ``computer_games_per_address`` (4),
with a clear 429 ``too_many_games``; requests sent at once cannot slip past the counts.
"""

from __future__ import annotations

import asyncio

from tests.online.conftest import BASE, Player, wait_for
from tests.webclient import _Client

from xiangqi.online.lobby import Identity, LobbyError

BODY = {"level": "beginner", "time_control": "10+5", "color": "red"}


def player_at(server, address: str) -> Player:
    """A browser connecting from ``address`` (the ASGI peer; no network), on the server's loop."""
    c = _Client(server.app, base_url=BASE, client=(address, 40000))
    c.portal = server.first.portal
    return Player(c)


def test_one_player_holds_at_most_two_computer_games(server):
    a = server.player()
    a.register("slots1")
    games = []
    for _ in range(2):
        r = a.post("/computer", json=BODY)
        assert r.status_code == 200, r.text
        games.append(r.json()["game_id"])
        # a move each way: the game is played, so a newer one does not abort it (first_moves tests)
        assert a.post(f"/games/{games[-1]}/move", json={"move": "h2e2"}).status_code == 200
        wait_for(lambda g=games[-1]: len(a.get(f"/games/{g}").json()["moves"]) == 2)
    assert [a.get(f"/games/{g}").json()["status"] for g in games] == ["playing", "playing"]
    r = a.post("/computer", json=BODY)
    assert r.status_code == 429
    assert r.json() == {"code": "too_many_games", "detail": "you are playing 2 games against the computer "
                        "already (at most 2 at once per player): finish or resign one first"}
    assert "Retry-After" not in r.headers  # not a matter of waiting: of ending a game
    # another player still gets a game; the first one gets one again once a game of theirs is over
    b = server.player()
    b.guest()
    assert b.post("/computer", json=BODY).status_code == 200
    assert a.post(f"/games/{games[0]}/resign").status_code == 200
    assert a.post("/computer", json=BODY).status_code == 200


def test_fresh_guests_from_one_address_hold_at_most_four(server):
    guests = [player_at(server, "198.51.100.7") for _ in range(5)]
    for g in guests:
        g.guest()
    assert len({g.me["user"]["id"] for g in guests}) == 5  # five identities
    for g in guests[:4]:
        assert g.post("/computer", json=BODY).status_code == 200
    r = guests[4].post("/computer", json=BODY)
    assert r.status_code == 429 and r.json()["code"] == "too_many_games"
    assert "from your address" in r.json()["detail"] and "at most 4" in r.json()["detail"]
    other = player_at(server, "198.51.100.8")
    other.guest()
    assert other.post("/computer", json=BODY).status_code == 200
    assert len([r for r in server.online.rooms.values() if r.status == "playing"]) == 5


def test_computer_games_asked_at_once_are_counted_before_they_are_stored(server, monkeypatch):
    """In shared mode the new game's row is written in a worker thread (the loop serves the other
    requests meanwhile): the games being started count as well as the ones held."""
    from concurrent.futures import ThreadPoolExecutor

    who = Identity("guest", "g-all-at-once", "游客", None)
    pool = ThreadPoolExecutor(2)
    monkeypatch.setattr(server.online, "_db_pool", pool)  # as OnlineService makes it in shared mode

    async def five_at_once():
        asks = [server.online.computer_game(who, "beginner", "10+5", "red", "203.0.113.9") for _ in range(5)]
        return await asyncio.gather(*asks, return_exceptions=True)

    try:
        got = server.first.portal.call(five_at_once)
    finally:
        monkeypatch.undo()
        pool.shutdown()
    refused = [g for g in got if isinstance(g, LobbyError)]
    assert len(got) - len(refused) == 2, got
    assert len(refused) == 3 and {e.code for e in refused} == {"too_many_games"}
    assert not server.online._computer_starts  # nothing is left counted


def test_the_addresses_of_one_ipv6_network_count_as_one_address(server):
    """An IPv6 client is given a whole /64 (RFC 4291 2.5.4, SLAAC): it can take a new address for
    each request. One /64 counts as one address, and an IPv4 peer named ``::ffff:a.b.c.d`` by a
    dual-stack socket as ``a.b.c.d``; another /64 is another address."""
    peers = [f"2001:db8:7:9::{i:x}" for i in range(1, 6)]
    guests = [player_at(server, p) for p in peers]
    for g in guests:
        g.guest()
    for g in guests[:4]:
        assert g.post("/computer", json=BODY).status_code == 200
    r = guests[4].post("/computer", json=BODY)
    assert r.status_code == 429 and "from your address" in r.json()["detail"]
    other = player_at(server, "2001:db8:7:a::1")
    other.guest()
    assert other.post("/computer", json=BODY).status_code == 200
    mapped = [player_at(server, "198.51.100.20"), player_at(server, "::ffff:198.51.100.20")]
    for g in mapped:
        g.guest()
    for g in mapped:
        assert g.post("/computer", json=BODY).status_code == 200
    froms = {r.started_from for r in server.online.rooms.values() if r.status == "playing"}
    assert "198.51.100.20" in froms and "::ffff:198.51.100.20" not in froms
    assert "2001:db8:7:9::/64" in froms and not any(f.startswith("2001:db8:7:9::") and "/" not in f
                                                   for f in froms)
