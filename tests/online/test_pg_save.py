"""The shared mode's save on PostgreSQL through psycopg (``OnlineStore._save_checked_pg``): a move in
one statement (the version check, the row and the ply), the general transaction for a takeback, and
the same answers and errors as the SQLAlchemy path: None for a stale version with nothing written,
SQLAlchemy's IntegrityError for a second row of one ply, the connection dropped after an error and
the pool still serving. Runs on a new PostgreSQL database (skipped without ``$XIANGQI_TEST_PG_URL``)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from tests.online.conftest import online_db_url

from xiangqi.core.board import STARTING_FEN
from xiangqi.online.store import OnlineStore

CLOCK = {"kind": "fischer", "red_ms": 600000, "black_ms": 600000, "saved_at": 1.0, "running": "red"}
VALUES = {"status": "playing", "result": None, "offers": json.dumps({"draw": None, "takeback": None})}


@pytest.fixture
def store(tmp_path):
    drops: list[Any] = []
    url = online_db_url("postgresql", tmp_path, drops)
    engine = sa.create_engine(url)
    st = OnlineStore(engine)
    try:
        yield st
    finally:
        st.close()
        engine.dispose()
        for drop in drops:
            drop()


def _game(st: OnlineStore) -> str:
    gid = uuid.uuid4().hex
    st.create_game({"id": gid, "time_control": "10+5", "category": "rapid", "rated": False,
                    "start_fen": STARTING_FEN, "clock": json.dumps(CLOCK), "red_kind": "guest",
                    "red_id": "g-1", "red_name": "a", "black_kind": "guest", "black_id": "g-2",
                    "black_name": "b"})
    return gid


def test_moves_offers_and_a_takeback_are_stored_with_the_version_check(store):
    assert store._psycopg
    gid = _game(store)
    assert store.save_checked(gid, 0, [], ["h2e2"], CLOCK, VALUES) == 0
    assert store.save_checked(gid, 1, ["h2e2"], ["h2e2", "h9g7"], CLOCK, VALUES) == 1
    offers = {**VALUES, "offers": json.dumps({"draw": "red", "takeback": None})}
    assert store.save_checked(gid, 2, ["h2e2", "h9g7"], ["h2e2", "h9g7"], CLOCK, offers) == 2  # no move
    assert store.revision(gid) == 3 and store.moves(gid) == ["h2e2", "h9g7"]
    assert store.game(gid)["offers"] == {"draw": "red", "takeback": None}
    # a takeback and a new move at once: the general transaction (a delete and an insert)
    assert store.save_checked(gid, 3, ["h2e2", "h9g7"], ["h2e2", "b9c7"], CLOCK, VALUES) == 1
    assert store.moves(gid) == ["h2e2", "b9c7"] and store.revision(gid) == 4
    assert store.save_checked(gid, 4, ["h2e2", "b9c7"], [], CLOCK, VALUES) == 0  # all taken back
    assert store.moves(gid) == [] and store.revision(gid) == 5
    assert store.save_checked(gid, 5, [], ["h2e2", "h9g7", "h0g2"], CLOCK, VALUES) == 0  # several plies
    assert store.moves(gid) == ["h2e2", "h9g7", "h0g2"] and store.revision(gid) == 6


def test_a_stale_version_writes_nothing_and_a_second_row_of_a_ply_is_refused(store):
    gid = _game(store)
    assert store.save_checked(gid, 0, [], ["h2e2"], CLOCK, VALUES) == 0
    # another process stored revision 1 first: this copy at 0 stores nothing, neither row nor ply
    assert store.save_checked(gid, 0, [], ["b2e2"], CLOCK, {**VALUES, "status": "finished"}) is None
    assert store.moves(gid) == ["h2e2"] and store.revision(gid) == 1
    assert store.game(gid)["status"] == "playing"
    assert store.save_checked(gid, 9, ["h2e2"], [], CLOCK, VALUES) is None  # the general path too
    assert store.moves(gid) == ["h2e2"]
    # a copy that believes ply 0 is not stored yet (at the right revision): the key refuses the row
    with pytest.raises(sa.exc.IntegrityError):
        store.save_checked(gid, 1, [], ["b2e2"], CLOCK, VALUES)
    assert store.moves(gid) == ["h2e2"] and store.revision(gid) == 1  # the statement wrote nothing
    assert store.save_checked(gid, 1, ["h2e2"], ["h2e2", "h9g7"], CLOCK, VALUES) == 1  # the pool goes on
    assert store.moves(gid) == ["h2e2", "h9g7"]
    assert store.save_checked(uuid.uuid4().hex, 0, [], ["h2e2"], CLOCK, VALUES) is None  # unknown game
