"""Store: the current game survives a restart; library and settings round-trip through SQLite."""

from __future__ import annotations

import sqlite3

import pytest

from xiangqi.app.play.session import GameSession
from xiangqi.app.play.store import DB_NAME, Store, default_data_dir


def test_data_dir_env_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("XIANGQI_DATA_DIR", str(tmp_path / "xq"))
    assert default_data_dir() == tmp_path / "xq"
    st = Store()
    assert st.path == tmp_path / "xq" / DB_NAME and st.path.exists()
    st.close()


def test_current_game_survives_a_new_store(tmp_path):
    st = Store(tmp_path)
    assert st.load_current() is None
    s = GameSession(red="human", black="engine", level="advanced")
    for mv in ("h2e2", "h9g7", "h0g2"):
        s.play(mv)
        st.save_current(s)
    st.close()
    st2 = Store(tmp_path)
    back = st2.load_current()
    assert back is not None and back.id == s.id
    assert [m.iccs for m in back.moves] == ["h2e2", "h9g7", "h0g2"]
    assert back.players == s.players and back.level == "advanced"
    st2.clear_current()
    assert st2.load_current() is None


def test_each_save_is_committed_for_another_connection(tmp_path):
    st = Store(tmp_path)
    s = GameSession(red="human", black="human")
    s.play("b2e2")
    st.save_current(s)
    # Another process (plain sqlite3, no SQLAlchemy) sees the committed move at once.
    con = sqlite3.connect(tmp_path / DB_NAME)
    (record,) = con.execute("select record from current_game where slot='current'").fetchone()
    con.close()
    assert '"moves": ["b2e2"]' in record


def test_damaged_current_record_is_not_a_crash(tmp_path):
    st = Store(tmp_path)
    con = sqlite3.connect(tmp_path / DB_NAME)
    con.execute("insert into current_game values ('current', 'x', '{\"moves\": [\"h2h9\"]}', 'now')")
    con.commit()
    con.close()
    assert st.load_current() is None


def test_library_crud_and_search(tmp_path):
    st = Store(tmp_path)
    s = GameSession(red="human", black="engine", level="master")
    s.play("h2e2")
    s.resign(True)
    row = st.save_finished(s, s.to_pgn("chinese"))
    assert st.save_finished(s, s.to_pgn("chinese")) == row  # same game: one row
    games = st.list_games()
    assert len(games) == 1
    g = games[0]
    assert (g["result"], g["plies"], g["level"], g["black"]) == ("0-1", 1, "master", "电脑·大师")
    assert g["reason_zh"] == "黑胜 — 红方认输"
    assert st.update_game(row, title="快棋", notes="中炮开局")
    assert st.list_games(search="中炮")[0]["title"] == "快棋"
    assert st.list_games(search="nothing-like-this") == []
    assert st.list_games(result="1-0") == []
    full = st.get_game(row)
    assert "炮二平五" in full["pgn"] and full["record"]["moves"] == ["h2e2"]
    assert st.delete_game(row) and st.get_game(row) is None and not st.delete_game(row)


def test_settings_merge(tmp_path):
    st = Store(tmp_path)
    assert st.get_settings() == {}
    st.set_settings({"theme": "flat", "sound": "off"})
    assert st.set_settings({"theme": "contrast", "language": "en"}) == {
        "theme": "contrast", "sound": "off", "language": "en"}
    st.close()  # one store per data dir at a time (the data dir's lock)
    assert Store(tmp_path).get_settings()["language"] == "en"


@pytest.mark.parametrize("bad", ["a_file.txt"])
def test_data_dir_that_is_a_file_raises_oserror(tmp_path, bad):
    (tmp_path / bad).write_text("x")
    with pytest.raises(OSError):
        Store(tmp_path / bad)


def test_a_record_of_another_game_is_kept_as_text_and_checked_by_its_registered_check(
        tmp_path, monkeypatch):
    from xiangqi.app.play import store as store_mod

    monkeypatch.setattr(store_mod, "RECORD_CHECKS", {})
    st = Store(tmp_path)
    try:
        rec = '{"variant": "toy", "id": "t1", "moves": []}'
        cols = {"date": "2026.12.07", "red": "A", "black": "B", "level": "toy-1", "result": "*",
                "reason_zh": "", "reason_en": "", "plies": 0, "pgn": ""}
        st.save_record("toy", "t1", rec, lambda: cols, keep=False)
        assert st.load_record("toy") == rec and st.list_games() == []  # not kept: current only
        st.save_record("toy", "t1", rec, lambda: {**cols, "result": "1-0"}, keep=True)
        rows = st.list_games()
        assert [(r["level"], r["result"], r["damaged"]) for r in rows] == [("toy-1", "1-0", False)]
        store_mod.register_record_check("toy", lambda r: "no toy moves" if not r["moves"] else None)
        st._checked.clear()
        assert st.list_games()[0]["damaged"] is True
        with pytest.raises(store_mod.DamagedGameError, match="no toy moves"):
            st.get_game(rows[0]["id"])
    finally:
        st.close()


def test_the_app_layer_alone_knows_the_jieqi_record_check():
    """A program that imports only the app layer (the CLI, a script), not the web server, must still
    report a damaged 揭棋 record: importing xiangqi.app registers the 揭棋 check with the store."""
    import subprocess
    import sys

    code = ("import xiangqi.app, json; from xiangqi.app.play import store as s; "
            "print(sorted(s.RECORD_CHECKS)); "
            "print(s._record_shape_problem(json.dumps({'variant': 'jieqi'})) is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True).stdout.split()
    assert out == ["['jieqi']", "True"]


def test_recent_games_filters_by_level_and_result(tmp_path):
    st = Store(tmp_path)
    try:
        for level, resign in (("beginner", True), ("advanced", True), ("advanced", False)):
            s = GameSession(red="human", black="engine", level=level)
            s.play("h2e2")
            if resign:
                s.resign(True)
            st.save_finished(s, s.to_pgn())
        assert [(r["level"], r["result"]) for r in st.recent_games(10)] == [
            ("advanced", "*"), ("advanced", "0-1"), ("beginner", "0-1")]
        assert [r["result"] for r in st.recent_games(10, level="advanced", finished=True)] == ["0-1"]
        assert len(st.recent_games(1)) == 1
    finally:
        st.close()
