"""The user's own games in the games database (db/owned.py): stored, updated in place, removed, synced;
on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from xiangqi.core.pgn import read_game
from xiangqi.db import count_games, search_games
from xiangqi.db.explore import explore
from xiangqi.db.owned import put_game, remove_game, stored_tokens, sync

AFTER_H2E2 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
AFTER_C3C4 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/2P6/P3P1P1P/1C5C1/9/RNBAKABNR b - - 1 1"


def game(moves: str, result: str = "1-0", red: str = "我"):
    tags = f'[Red "{red}"]\n[Black "电脑"]\n[Result "{result}"]\n[Format "ICCS"]\n'
    return read_game(f"{tags}\n{moves} {result}\n")


@pytest.fixture
def engine(backend):
    return backend.connect()


def test_put_update_in_place_and_remove(engine):
    gid = put_game(engine, game("1. h2e2 h9g7"), source="library:1", token="t1")
    assert [h.id for h in search_games(engine, fen=AFTER_H2E2, source="mine")] == [gid]
    # the library game changed: another opening, same row; the old positions are gone from the index
    again = put_game(engine, game("1. c3c4 h9g7 2. h2e2", "0-1"), source="library:1", token="t2")
    assert again == gid
    assert count_games(engine, fen=AFTER_H2E2) == 0  # 炮二平五 now comes at ply 3, after other moves
    (hit,) = search_games(engine, fen=AFTER_C3C4, collection="mine")
    assert (hit.id, hit.result, hit.plies, hit.ply) == (gid, "0-1", 3, 1)
    assert stored_tokens(engine) == {"library:1": "t2"}
    assert [(m.move, m.games) for m in explore(engine, source="mine").moves] == [("c3c4", 1)]
    assert remove_game(engine, "library:1") and not remove_game(engine, "library:1")
    assert count_games(engine) == 0 and explore(engine).games == 0


def test_sync_adds_updates_removes_and_keeps_other_sources(engine):
    put_game(engine, game("1. b2e2"), source="imported.pgn", token="x")  # not a library copy
    loads = []

    def load(source):
        loads.append(source)
        return {"library:1": game("1. h2e2"), "library:2": game("1. c3c4"), "library:3": None}[source]

    r = sync(engine, {"library:1": "a", "library:2": "b", "library:3": "c"}, load, prefix="library:")
    assert (r.added, r.updated, r.removed, r.failed) == (2, 0, 0, [])
    r = sync(engine, {"library:1": "a2"}, load, prefix="library:")
    assert (r.added, r.updated, r.removed) == (0, 1, 1)
    assert loads == ["library:1", "library:2", "library:3", "library:1"]  # unchanged ones are not read
    assert stored_tokens(engine) == {"imported.pgn": "x", "library:1": "a2"}


def test_sync_goes_on_past_a_bad_game(engine):
    def load(source):
        if source == "library:1":
            raise ValueError("damaged record")
        return game("1. h2e2")

    r = sync(engine, {"library:1": "a", "library:2": "b"}, load)
    assert r.added == 1 and r.failed == [("library:1", "ValueError: damaged record")]
