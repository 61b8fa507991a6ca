"""A damaged store: what SQLite can still read comes back into the fresh file (issue 26, item 7).

Each test builds a store with :data:`N` library games, a current game and a setting, damages chosen
pages of the file (found by reading its b-tree as the file format defines it:
:mod:`tests.sqlitepages`), and opens it again: the damaged file is kept aside byte for byte, the new
store holds exactly the rows of the pages that were not damaged, and the notice (and the log) says
how many games came back.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from tests.online.test_play import MATE_LINE
from tests.sqlitepages import checkpoint, damage_page, index_names, page_size, root_page, table_leaves

from xiangqi.app.play.salvage import read_table
from xiangqi.app.play.session import GameSession
from xiangqi.app.play.store import DB_NAME, Store

N = 60
#: Legal plies (the online tests' line to mate): games of 10-21 of them, a few library rows to a
#: 4 KiB page, so the table has many leaves.
LINE = MATE_LINE


def game(*moves: str) -> GameSession:
    s = GameSession(red="human", black="human")
    for mv in moves:
        s.play(mv)
    return s


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> bytes:
    """The bytes of a store with N finished library games (titles ``game 1`` … ``game N``), the
    current game (two moves) and a setting; closed and checkpointed (the file alone holds everything).
    Made once: each test damages its own copy."""
    tmp_path = tmp_path_factory.mktemp("built")
    st = Store(tmp_path)
    for i in range(N):
        g = game(*LINE[: 10 + i % 12])
        g.resign(i % 2 == 0)
        row = st.save_finished(g, g.to_pgn())
        st.update_game(row, title=f"game {i + 1}")
    st.save_game(game("b2e2", "h9g7"))
    st.set_settings({"language": "en"})
    st.close()
    path = tmp_path / DB_NAME
    checkpoint(path)
    return path.read_bytes()


@pytest.fixture
def store_file(tmp_path, built) -> Path:
    """A copy of the built store in this test's data dir (``tmp_path``)."""
    path = tmp_path / DB_NAME
    path.write_bytes(built)
    return path


def _titles(st: Store) -> set[str]:
    return {g["title"] for g in st.list_games()}


def test_a_damaged_library_leaf_costs_exactly_its_rows(tmp_path, store_file, caplog):
    path = store_file
    data = path.read_bytes()
    leaves = table_leaves(data, root_page(path, "games"))
    assert len(leaves) >= 5  # (the premise: the library spans many pages)
    page, lost = leaves[len(leaves) // 2]  # one in the middle of the file's library
    assert lost, "a leaf with rows"
    damaged = damage_page(path, page)
    with caplog.at_level(logging.WARNING, logger="xiangqi.app.play.store"):
        st = Store(tmp_path)
    try:
        (notice,) = st.notices
        kept = Path(notice["path"])
        assert notice["kind"] == "damaged_db" and kept.read_bytes() == damaged  # kept aside as found
        back = N - len(lost)
        assert notice["recovered"]["games"] == back and notice["recovered"]["current_game"] is True
        assert notice["recovered"]["settings"] == 1
        assert f"{back} saved games came back from it, with the current game" in notice["message"]
        assert any(f"{back} saved games came back" in r.getMessage() for r in caplog.records)
        # exactly the games of the other pages, with their ids; the damaged page's are missing
        rows = st.list_games()
        assert len(rows) == back
        assert {r["id"] for r in rows} == set(range(1, N + 1)) - set(lost)
        assert _titles(st) == {f"game {i}" for i in range(1, N + 1) if i not in lost}
        first = min(r["id"] for r in rows)
        assert st.get_game(first)["record"]["moves"]  # a game that came back opens
        assert [m.iccs for m in st.load_current().moves] == ["b2e2", "h9g7"]
        assert st.get_settings()["language"] == "en"
        st.save_game(game("h2e2"))  # the fresh file takes writes
    finally:
        st.close()
    again = Store(tmp_path)  # the fresh file is sound: no notice the second time
    try:
        assert again.notices == [] and len(again.list_games()) == back
    finally:
        again.close()


def test_a_damaged_index_page_costs_nothing(tmp_path, store_file):
    path = store_file
    (index,) = index_names(path, "games")  # the UNIQUE (game_id) index
    damaged = damage_page(path, root_page(path, index))
    st = Store(tmp_path)
    try:
        (notice,) = st.notices
        assert Path(notice["path"]).read_bytes() == damaged
        assert notice["recovered"]["games"] == N and notice["recovered"]["unreadable"] == []
        assert f"{N} saved games came back from it" in notice["message"]
        assert _titles(st) == {f"game {i}" for i in range(1, N + 1)}
        con = sqlite3.connect(st.path)
        try:
            assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]  # its index rebuilt
        finally:
            con.close()
    finally:
        st.close()


def test_the_last_leaf_damaged_the_largest_rowid_unreadable(tmp_path, store_file):
    """The right-most leaf holds the largest rowid: ``max(rowid)`` itself raises, the walk goes on by
    ranges and ends :data:`~xiangqi.app.play.salvage.TAIL_SPAN` past the last readable row."""
    path = store_file
    page, lost = table_leaves(path.read_bytes(), root_page(path, "games"))[-1]
    damage_page(path, page)
    st = Store(tmp_path)
    try:
        assert st.notices[0]["recovered"]["games"] == N - len(lost)
        assert {r["id"] for r in st.list_games()} == set(range(1, N + 1)) - set(lost)
    finally:
        st.close()


def test_two_damaged_leaves_and_the_current_game_page(tmp_path, store_file):
    path = store_file
    leaves = table_leaves(path.read_bytes(), root_page(path, "games"))
    (cur_page, _), = table_leaves(path.read_bytes(), root_page(path, "current_game"))
    lost = leaves[1][1] + leaves[-2][1]
    for page in (leaves[1][0], leaves[-2][0], cur_page):
        damage_page(path, page)
    st = Store(tmp_path)
    try:
        (notice,) = st.notices
        assert notice["recovered"]["games"] == N - len(lost) and notice["recovered"]["current_game"] is False
        assert notice["message"].endswith(f"{N - len(lost)} saved games came back from it")
        assert st.load_current() is None
        assert {r["id"] for r in st.list_games()} == set(range(1, N + 1)) - set(lost)
    finally:
        st.close()


@pytest.mark.parametrize("how", ["garbage", "first page"])
def test_nothing_readable_says_so(tmp_path, store_file, how):
    path = store_file
    if how == "garbage":
        path.write_bytes(b"\x13garbage" * 1000)
    else:
        damage_page(path, 1)  # the header and the schema
    st = Store(tmp_path)
    try:
        (notice,) = st.notices
        assert notice["recovered"]["games"] == 0 and st.list_games() == []
        assert notice["message"].endswith("; 0 saved games came back from it")
    finally:
        st.close()


def test_read_table_walks_around_damaged_pages(tmp_path):
    """The row-by-row reader on its own: 2,000 rows, two leaves damaged (one of them the last):
    every other row back in order, and the unreadable rowid ranges cover the lost rows."""
    path = tmp_path / "t.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
    con.executemany("INSERT INTO t VALUES (?, ?)", ((i, f"row {i} " + "x" * 40) for i in range(1, 2001)))
    con.commit()
    con.close()
    data = path.read_bytes()
    assert page_size(data) == 4096
    leaves = table_leaves(data, root_page(path, "t"))
    hit = [leaves[3], leaves[-1]]
    for page, _ in hit:
        damage_page(path, page)
    lost = {r for _, rowids in hit for r in rowids}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.DatabaseError):
            con.execute("SELECT count(*) FROM t").fetchall()  # (the premise: a plain read fails)
        rows, unreadable = read_table(con, "t", ["id", "v"])
    finally:
        con.close()
    assert [r[0] for r in rows] == [i for i in range(1, 2001) if i not in lost]
    assert all(r[2] == f"row {r[0]} " + "x" * 40 for r in rows)
    assert all(any(a <= i <= b for a, b in unreadable) for i in lost)


def test_the_page_is_told_how_many_games_came_back(tmp_path, store_file):
    """The state's ``storage_notices`` (shown once by the page, app.js ``renderNotices``) carries the
    count, and the library route lists the games that came back."""
    from tests.webclient import api_client

    from xiangqi.web.server import create_app

    page, lost = table_leaves(store_file.read_bytes(), root_page(store_file, "games"))[2]
    damage_page(store_file, page)
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        (notice,) = c.get("/api/game").json()["storage_notices"]
        assert notice["kind"] == "damaged_db" and notice["recovered"]["games"] == N - len(lost)
        assert f"; {N - len(lost)} saved games came back from it, with the current game" in notice["message"]
        assert len(c.get("/api/library").json()) == N - len(lost)
