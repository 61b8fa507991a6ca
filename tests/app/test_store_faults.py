"""Store under storage faults: a full disk, a damaged or read-only file, two stores on one data
dir, damaged rows. Nothing is lost silently and every fault is a :class:`StorageError` that says
what happened (DESIGN.md §5)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa
from tests.fsfaults import fill, mount_tmpfs, remount_read_only, small_tmpfs, umount

from xiangqi.app.play.session import GameSession
from xiangqi.app.play.store import (
    DB_NAME,
    DamagedGameError,
    StorageFullError,
    StorageReadOnlyError,
    Store,
    StoreLockedError,
)


def game(*moves: str, red: str = "human", black: str = "human") -> GameSession:
    s = GameSession(red=red, black=black)
    for mv in moves:
        s.play(mv)
    return s


def limit_pages(store: Store, pages: int | None) -> None:
    """Make the database 'full' at ``pages`` pages (SQLite's max_page_count; None: no limit)."""
    store.engine.dispose()

    @sa.event.listens_for(store.engine, "connect")
    def _limit(dbapi_conn, _record):  # noqa: ANN001
        n = pages
        if n is None:
            n = 1 << 30
        else:
            (have,) = dbapi_conn.execute("PRAGMA page_count").fetchone()
            n = max(n, have)
        dbapi_conn.execute(f"PRAGMA max_page_count = {n}")


# -- disk full ------------------------------------------------------------------------------


def test_a_full_database_raises_storage_full_and_keeps_the_saved_game(tmp_path):
    st = Store(tmp_path)
    s = game("h2e2", "h9g7")
    st.save_game(s)
    limit_pages(st, 0)  # no page more than the file has now
    big = game("h2e2", "h9g7")
    big.headers["Event"] = "x" * 200_000  # needs many new pages
    with pytest.raises(StorageFullError, match="the disk is full") as err:
        st.save_game(big)
    assert err.value.status == 507 and err.value.kind == "full"
    back = st.load_current()
    assert back is not None and back.id == s.id and [m.iccs for m in back.moves] == ["h2e2", "h9g7"]
    limit_pages(st, None)  # space is back
    st.save_game(big)
    assert st.load_current().id == big.id
    st.close()


def test_a_really_full_file_system(tmp_path):
    with small_tmpfs(tmp_path / "small", "2m") as mnt:
        st = Store(mnt / "data")
        s = game("h2e2", "h9g7")
        st.save_game(s)
        fill(mnt)
        big = game("h2e2", "h9g7", "h0g2")
        big.headers["Event"] = "y" * 300_000
        with pytest.raises(StorageFullError):
            st.save_game(big)
        assert [m.iccs for m in st.load_current().moves] == ["h2e2", "h9g7"]
        (mnt / "filler").unlink()
        st.save_game(big)
        st.close()
        st = Store(mnt / "data")
        assert [m.iccs for m in st.load_current().moves] == ["h2e2", "h9g7", "h0g2"]
        st.close()


def test_opening_on_a_full_disk_is_a_clear_error(tmp_path):
    with small_tmpfs(tmp_path / "small", "2m") as mnt:
        Store(mnt / "data").close()
        fill(mnt)
        with pytest.raises(StorageFullError, match="is full: the database cannot be opened; free some space"):
            Store(mnt / "data")
        (mnt / "filler").unlink()
        Store(mnt / "data").close()


# -- a damaged file --------------------------------------------------------------------------


def _valid_db(path) -> bytes:
    st = Store(path)
    for i in range(20):
        g = game("h2e2", "h9g7")
        g.resign(i % 2 == 0)
        st.save_finished(g, g.to_pgn())
    st.save_game(game("b2e2"))
    st.close()
    return (path / DB_NAME).read_bytes()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "header"])
def test_a_damaged_file_is_kept_aside_and_a_fresh_store_starts(tmp_path, damage):
    data = _valid_db(tmp_path)
    if damage == "garbage":
        data = os.urandom(9000)
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data = b"not an sqlite header" + data[20:]
    (tmp_path / DB_NAME).write_bytes(data)
    (tmp_path / f"{DB_NAME}-wal").write_bytes(b"wal bytes kept as they were")
    st = Store(tmp_path)
    assert len(st.notices) == 1
    notice = st.notices[0]
    kept = tmp_path / os.path.basename(notice["path"])
    assert notice["kind"] == "damaged_db" and kept.name.startswith(f"{DB_NAME}.damaged-")
    assert str(kept) in notice["message"] and "fresh" in notice["message"]
    assert kept.read_bytes() == data  # moved, never deleted or changed
    assert (tmp_path / f"{kept.name}-wal").read_bytes() == b"wal bytes kept as they were"
    assert st.load_current() is None and st.list_games() == []
    st.save_game(game("h2e2"))
    st.close()
    st = Store(tmp_path)  # the fresh file is sound: no notice the second time
    assert st.notices == [] and [m.iccs for m in st.load_current().moves] == ["h2e2"]
    st.close()


def test_an_old_file_gets_the_new_column(tmp_path):
    con = sqlite3.connect(tmp_path / DB_NAME)
    con.execute("create table games (id integer primary key, game_id varchar(64) not null unique, "
                "title varchar(200) not null, notes text not null, date varchar(32) not null, "
                "red varchar(100) not null, black varchar(100) not null, level varchar(32) not null, "
                "result varchar(16) not null, reason_zh varchar(200) not null, "
                "reason_en varchar(200) not null, plies integer not null, record text not null, "
                "pgn text not null)")
    rec = json.dumps(game("h2e2").to_record())
    con.execute("insert into games values (1, 'g1', '', '', '2025.01.02', 'a', 'b', 'beginner', '*', '', '', "
                "1, ?, '')", (rec,))
    con.commit()
    con.close()
    st = Store(tmp_path)
    (row,) = st.list_games()
    assert (row["date"], row["time"], row["damaged"]) == ("2025.01.02", "", False)
    st.close()


# -- read-only ------------------------------------------------------------------------------


def test_a_read_only_database_opens_read_only(tmp_path):
    mnt = tmp_path / "ro"
    root = mount_tmpfs(mnt, "4m")
    data = mnt / "data" if root else tmp_path / "data"
    try:
        st = Store(data)
        st.save_game(game("h2e2", "h9g7"))
        g = game("b2e2")
        g.resign(False)
        st.save_game(g, abandoned=None)
        st.close()
        if root:
            remount_read_only(mnt)
        else:
            os.chmod(data / DB_NAME, 0o444)
            os.chmod(data, 0o555)
        st = Store(data)
        assert st.read_only and [n["kind"] for n in st.notices] == ["read_only"]
        assert "read-only" in st.notices[0]["message"]
        assert [m.iccs for m in st.load_current().moves] == ["b2e2"]
        assert [r["result"] for r in st.list_games()] == ["1-0"]
        with pytest.raises(StorageReadOnlyError, match="read-only"):
            st.save_game(game("h2e2"))
        with pytest.raises(StorageReadOnlyError):
            st.set_settings({"theme": "flat"})
        st.close()
    finally:
        if root:
            umount(mnt)
        else:
            os.chmod(data, 0o755)


def test_no_database_in_a_read_only_dir_is_a_clear_error(tmp_path):
    with small_tmpfs(tmp_path / "ro", "1m", "needs root on Linux to mount a read-only tmpfs") as mnt:
        (mnt / "data").mkdir()
        remount_read_only(mnt)
        with pytest.raises(StorageReadOnlyError, match="cannot create the database .* read-only"):
            Store(mnt / "data")


# -- one store per data dir -------------------------------------------------------------------


def test_a_second_store_on_the_same_data_dir_is_refused(tmp_path):
    st = Store(tmp_path)
    with pytest.raises(StoreLockedError, match=f"pid {os.getpid()}.*{tmp_path}"):
        Store(tmp_path)
    st.save_game(game("h2e2"))  # the first one still works
    st.close()
    st2 = Store(tmp_path)  # released on close
    assert [m.iccs for m in st2.load_current().moves] == ["h2e2"]
    st2.close()


def test_the_lock_is_released_when_its_process_is_killed(tmp_path):
    code = ("import sys, time; from xiangqi.app.play.store import Store; Store(sys.argv[1]); "
            "print('locked', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLockedError, match=f"pid {proc.pid}"):
            Store(tmp_path)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        time.sleep(0.05)
        Store(tmp_path).close()
    finally:
        if proc.poll() is None:
            proc.kill()


# -- damaged rows ---------------------------------------------------------------------------


def test_a_damaged_current_game_is_kept_aside_not_overwritten(tmp_path):
    st = Store(tmp_path)
    bad = '{"id": "x", "moves": ["a0a5"], "red": "human", "black": "human", "level": "beginner", ' \
          '"start_fen": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"}'
    con = sqlite3.connect(tmp_path / DB_NAME)
    con.execute("insert into current_game values ('current', 'x', ?, 'now')", (bad,))
    con.commit()
    con.close()
    assert st.load_current() is None
    (notice,) = st.notices
    assert notice["kind"] == "damaged_game" and "damaged_games" in notice["message"]
    (kept,) = st.damaged_current_games()
    assert kept["record"] == bad and kept["game_id"] == "x" and "a0a5" in kept["error"]
    st.save_game(game("h2e2"))  # the new game does not touch the one kept aside
    assert st.damaged_current_games()[0]["record"] == bad
    st.close()


def test_damaged_library_rows_are_flagged_and_refused(tmp_path):
    st = Store(tmp_path)
    good = game("h2e2")
    good.resign(False)
    good_id = st.save_finished(good, good.to_pgn())
    g2, g3 = game("h2e2"), game("b2e2")
    id2, id3 = st.save_finished(g2, ""), st.save_finished(g3, "")
    with st.engine.begin() as conn:
        conn.exec_driver_sql("update games set record = '{\"moves\": [\"h2e2\"' where id = ?", (id2,))
        illegal = json.dumps({**g3.to_record(), "moves": ["b2b9", "a0a9"]})
        conn.exec_driver_sql("update games set record = ? where id = ?", (illegal, id3))
    rows = {r["id"]: r["damaged"] for r in st.list_games()}
    assert rows == {good_id: False, id2: True, id3: False}  # the list checks the shape only
    for row_id in (id2, id3):
        with pytest.raises(DamagedGameError, match=f"saved game {row_id} is damaged") as err:
            st.get_game(row_id)
        assert err.value.status == 409
    assert {r["id"]: r["damaged"] for r in st.list_games()}[id3] is True  # known once opened
    assert st.get_game(good_id)["record"]["moves"] == ["h2e2"]
    assert st.delete_game(id2) and st.delete_game(id3)
    st.close()


# -- the library follows the game ---------------------------------------------------------------


def test_a_resignation_taken_back_leaves_the_library(tmp_path):
    st = Store(tmp_path)
    s = game("h2e2", "h9g7")
    s.resign(True)
    st.save_game(s)
    (row,) = st.list_games()
    assert row["result"] == "0-1"
    s.undo()  # the resignation is withdrawn
    st.save_game(s)
    (row,) = st.list_games()
    assert (row["result"], row["reason_en"], row["plies"]) == ("*", "game not finished", 2)
    assert st.get_game(row["id"])["record"]["declared"] is None
    s.play("h0g2")
    s.resign(False)
    st.save_game(s)
    (row,) = st.list_games()
    assert (row["result"], row["plies"]) == ("1-0", 3)
    st.close()


def test_an_abandoned_game_is_kept_as_unfinished(tmp_path):
    st = Store(tmp_path)
    old = game("h2e2", "h9g7", "h0g2")
    st.save_game(old)
    assert st.list_games() == []  # a game in progress is not in the library
    new = game()
    st.save_game(new, abandoned=old)
    (row,) = st.list_games()
    assert (row["result"], row["plies"], row["reason_zh"]) == ("*", 3, "对局未完成")
    assert st.get_game(row["id"])["record"]["id"] == old.id
    st.save_game(game(), abandoned=new)  # no moves: nothing to keep
    assert len(st.list_games()) == 1
    st.close()


def test_the_library_gives_the_time_of_day(tmp_path):
    st = Store(tmp_path)
    s = game("h2e2")
    s.resign(False)
    before = time.strftime("%H:%M")
    st.save_game(s)
    after = time.strftime("%H:%M")
    (row,) = st.list_games()
    assert row["time"] in (before, after) and len(row["time"]) == 5
    assert row["played_at"][:10] == time.strftime("%Y-%m-%d")
    st.close()


def test_a_record_dated_game_shows_no_time_of_day_from_another_day(tmp_path):
    """A game played on from an opened record keeps the record's date (1982.12.11): the library must
    not pair it with the time of day it was saved here ("1982.12.11 10:04" is a moment that never was)."""
    st = Store(tmp_path)
    s = GameSession(red="human", black="human", headers={"Date": "1982.12.11", "Red": "柳大华"})
    s.play("h2e2")
    s.resign(False)
    st.save_game(s)
    (row,) = st.list_games()
    assert (row["date"], row["time"]) == ("1982.12.11", "")
    assert row["played_at"][:10] == time.strftime("%Y-%m-%d")  # when it was saved is still kept
    st.close()
