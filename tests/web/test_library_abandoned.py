"""我的对局 hides abandoned starts (unfinished, under two plies, unnamed) unless asked, and says how many."""

from __future__ import annotations

from tests.web.test_api import make_client, new_game

from xiangqi.app.play.session import GameSession
from xiangqi.app.play.store import Store


def _seed_empty_unfinished(tmp_path) -> None:
    """A 0-ply unfinished row, as older versions kept one for every game left before its first move."""
    st = Store(tmp_path)
    s = GameSession(red="human", black="human")
    st.save_finished(s, "", "zh")
    st.close()


def test_library_hides_abandoned_starts_by_default_and_counts_them(tmp_path):
    _seed_empty_unfinished(tmp_path)  # abandoned 1: no moves
    with make_client(tmp_path) as client:
        for _ in range(2):  # abandoned 2 and 3: one move of Red's, then a new game
            new_game(client, red="human", black="human")
            assert client.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
        new_game(client, red="human", black="human")  # real 1: two plies, unfinished
        client.post("/api/game/move", json={"move": "h2e2"})
        client.post("/api/game/move", json={"move": "h9g7"})
        new_game(client, red="human", black="human")  # real 2: resigned before any move (a result)
        assert client.post("/api/game/resign").status_code == 200
        new_game(client, red="human", black="human")  # the current game: no moves, not in the list

        r = client.get("/api/library")
        assert r.status_code == 200
        shown = r.json()
        assert sorted((g["plies"], g["result"]) for g in shown) == [(0, "0-1"), (2, "*")]
        assert r.headers.get("X-Library-Abandoned") == "3"
        assert not any(g["abandoned"] for g in shown)

        every = client.get("/api/library", params={"abandoned": "1"})
        rows = every.json()
        assert every.headers["X-Library-Abandoned"] == "3" and len(rows) == 5
        assert sorted(g["plies"] for g in rows if g["abandoned"]) == [0, 1, 1]
        assert all(g["result"] == "*" for g in rows if g["abandoned"])

        # naming an abandoned start makes it the player's: shown from then on, never hidden
        one_ply = next(g for g in rows if g["abandoned"] and g["plies"] == 1)
        assert client.patch(f"/api/library/{one_ply['id']}", json={"title": "开局试验"}).status_code == 200
        r = client.get("/api/library")
        assert r.headers["X-Library-Abandoned"] == "2" and len(r.json()) == 3

        # the count follows the search: no abandoned row matches 开局试验
        r = client.get("/api/library", params={"search": "开局试验"})
        assert r.headers["X-Library-Abandoned"] == "0" and [g["id"] for g in r.json()] == [one_ply["id"]]
        assert client.get("/api/library", params={"abandoned": "maybe"}).status_code in (400, 422)


def test_is_abandoned_rule():
    from xiangqi.app.play.store import is_abandoned

    base = {"result": "*", "plies": 1, "title": "", "notes": "", "damaged": False}
    assert is_abandoned(base) and is_abandoned({**base, "plies": 0})
    assert not is_abandoned({**base, "plies": 2})  # a move each: a game
    for result in ("1-0", "0-1", "1/2-1/2"):  # a result is never hidden, whatever its length
        assert not is_abandoned({**base, "plies": 0, "result": result})
    assert not is_abandoned({**base, "title": "试"}) and not is_abandoned({**base, "notes": "记"})
    assert is_abandoned({**base, "title": "  "})  # blank is not a name
    assert not is_abandoned({**base, "damaged": True})  # a damaged row stays in sight to be deleted
