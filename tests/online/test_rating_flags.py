"""Rating farming from one address: two accounts that keep playing rated games against each other
from one client address are flagged to the operator (``rating_flags``, ``xiangqi online-flags``);
their games are still rated (DESIGN.md "Security" says why)."""

from __future__ import annotations

import json
import logging

from tests.online.test_play import OPENING

from xiangqi.cli import main
from xiangqi.online.store import SAME_ADDRESS_GAMES


def _rated_game(server, red, black) -> str:
    gid = server.game_between(red, black, rated=True)
    for k, mv in enumerate(OPENING):  # two moves each: the game counts (ABORT_PLIES)
        assert (red if k % 2 == 0 else black).post(f"/games/{gid}/move", json={"move": mv}).status_code == 200
    assert black.post(f"/games/{gid}/resign").json()["status"] == "finished"
    return gid


def test_two_accounts_from_one_address_are_flagged(server, caplog, capsys):
    a, b = server.player("127.0.0.9"), server.player("127.0.0.9")
    a.register("farm_main")
    b.register("farm_feeder")
    c = server.player("127.0.0.10")  # a friend at another address
    c.register("friend")
    db = server.online.db
    caplog.set_level(logging.WARNING, logger="xiangqi.online.store")
    games = []
    for k in range(SAME_ADDRESS_GAMES):
        games.append(_rated_game(server, a, b))
        flagged = db.flagged_pairs()
        assert len(flagged) == (1 if k + 1 >= SAME_ADDRESS_GAMES else 0)
        assert ("rated games from one address" in caplog.text) == (k + 1 >= SAME_ADDRESS_GAMES)
    _rated_game(server, a, c)  # two addresses: not counted
    _rated_game(server, a, c)
    _rated_game(server, a, c)
    [pair] = db.flagged_pairs()
    ida, idb = server.online.accounts.find("farm_main").id, server.online.accounts.find("farm_feeder").id
    assert (pair["user_lo"], pair["user_hi"]) == (min(ida, idb), max(ida, idb))
    assert set(pair["names"]) == {"farm_main", "farm_feeder"} and pair["games"] == SAME_ADDRESS_GAMES
    assert pair["addresses"] == ["127.0.0.9"] and pair["game_ids"] == games
    assert len(db.flagged_pairs(min_games=1)) == 1  # the friend's games were never from one address
    # the ratings still changed (the flag is for the operator to judge)
    r, n = db.rating(ida, "blitz")
    assert n == SAME_ADDRESS_GAMES + 3 and r.rating > 1500
    # the address is never shown to players
    assert "127.0.0.9" not in a.get("/lobby").text and "127.0.0.9" not in a.get(f"/games/{games[0]}").text
    # the operator's listing
    url = server.online.engine.url.render_as_string(hide_password=False)
    assert main(["online-flags", "--db", url]) == 0
    out = capsys.readouterr().out
    assert f"{SAME_ADDRESS_GAMES} rated games from 127.0.0.9" in out and "farm_main" in out
    assert main(["online-flags", "--db", url, "--json", "--min-games", "4"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["online-flags", "--db", url, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["games"] == SAME_ADDRESS_GAMES and got["game_ids"] == games


def test_a_challenge_link_from_one_address_counts_too(server):
    a, b = server.player("127.0.0.11"), server.player("127.0.0.11")
    a.register("link_maker")
    b.register("link_taker")
    ch = a.post("/challenges", json={"time_control": "5+3", "rated": True, "color": "red"}).json()
    gid = b.post(f"/challenges/{ch['id']}/accept").json()["game_id"]
    assert server.online.db.game(gid)["same_address"] == "127.0.0.11"
    for k, mv in enumerate(OPENING):
        (a if k % 2 == 0 else b).post(f"/games/{gid}/move", json={"move": mv})
    b.post(f"/games/{gid}/resign")
    assert server.online.db.flagged_pairs(min_games=1)[0]["game_ids"] == [gid]


def test_an_aborted_game_is_not_counted(server):
    a, b = server.player("127.0.0.12"), server.player("127.0.0.12")
    a.register("quick_one")
    b.register("quick_two")
    gid = server.game_between(a, b, rated=True)
    assert b.post(f"/games/{gid}/resign").json()["status"] == "aborted"
    assert server.online.db.flagged_pairs(min_games=1) == []


def test_online_flags_needs_a_database(tmp_path, capsys):
    assert main(["online-flags", "--data-dir", str(tmp_path)]) == 2
    assert "no online database at" in capsys.readouterr().err
