"""The server under storage faults: a move that cannot be saved is not played and the page is told
(HTTP 507, a WebSocket error, ``storage_error`` in the state); play resumes when space is back;
a damaged file or row is reported, never a 500 or a traceback; one server per data dir."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import httpx
import sqlalchemy as sa
from tests.fsfaults import fill, remount_read_only, small_tmpfs
from tests.webclient import api_client

from xiangqi.core.board import Board
from xiangqi.web.server import create_app


def first_move(board: Board, level: str):
    return min(board.legal_moves, key=lambda m: m.iccs())


class Disk:
    """Makes the app's database fail every write with SQLite's own 'database or disk is full'."""

    def __init__(self, app) -> None:
        self.full = False
        self.refused = 0  # writes refused so far

        @sa.event.listens_for(app.state.store.engine, "do_execute")
        def _write(cursor, statement, parameters, context):  # noqa: ANN001
            if self.full and statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
                self.refused += 1
                raise sqlite3.OperationalError("database or disk is full")


def make_app(path, provider=first_move):
    app = create_app(path, move_provider=provider, warmup=False, engine_delay_s=0)
    app.state.hub.storage_retry_s = 0.05
    return app


def wait_until(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def iccs(state):
    return [m["iccs"] for m in state["moves"]]


def test_a_move_that_cannot_be_saved_is_not_played(tmp_path):
    app = make_app(tmp_path)
    disk = Disk(app)
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        assert c.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
        disk.full = True
        r = c.post("/api/game/move", json={"move": "h9g7"})
        assert r.status_code == 507 and "the disk is full" in r.json()["detail"]
        st = c.get("/api/game").json()
        assert iccs(st) == ["h2e2"] and st["turn"] == "black"
        assert st["storage_error"]["kind"] == "full" and "disk is full" in st["storage_error"]["detail"]
        for path, body in (("/api/game/undo", None), ("/api/game/resign", None),
                           ("/api/game/new", {"red": "human", "black": "engine"})):
            r = c.post(path, json=body)
            assert r.status_code == 507, (path, r.text)
        st = c.get("/api/game").json()
        assert iccs(st) == ["h2e2"] and st["result"] is None and st["players"]["black"] == "human"
        disk.full = False  # space is back: play resumes
        r = c.post("/api/game/move", json={"move": "h9g7"})
        assert r.status_code == 200 and iccs(r.json()) == ["h2e2", "h9g7"]
        assert r.json()["storage_error"] is None
    with api_client(make_app(tmp_path)) as c:  # what was shown is what was saved
        assert iccs(c.get("/api/game").json()) == ["h2e2", "h9g7"]


def test_the_page_is_told_over_the_websocket(tmp_path):
    app = make_app(tmp_path)
    disk = Disk(app)
    with api_client(app) as c:
        gid = c.post("/api/game/new", json={"red": "human", "black": "human"}).json()["id"]
        with c.websocket_connect(f"/ws/game/{gid}") as ws:
            assert ws.receive_json()["type"] == "state"
            disk.full = True
            ws.send_json({"type": "move", "move": "h2e2"})
            seen = {}
            while len(seen) < 2:
                msg = ws.receive_json()
                seen[msg["type"]] = msg
            assert "the disk is full" in seen["error"]["detail"] and seen["error"]["request"] == "move"
            assert seen["state"]["state"]["storage_error"]["kind"] == "full"
            assert seen["state"]["state"]["moves"] == []
            disk.full = False
            ws.send_json({"type": "move", "move": "h2e2"})
            msg = ws.receive_json()
            assert msg["type"] == "state" and iccs(msg["state"]) == ["h2e2"]
            assert msg["state"]["storage_error"] is None


def test_the_computers_unsaved_move_is_retried_when_space_is_back(tmp_path):
    calls = []
    holder = {}

    def provider(board, level):
        calls.append(board.fen())
        holder["disk"].full = True  # the disk fills while the computer thinks
        return first_move(board, level)

    app = make_app(tmp_path, provider)
    holder["disk"] = Disk(app)
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "engine"})
        assert c.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
        assert wait_until(lambda: c.get("/api/game").json()["storage_error"] is not None)
        refused = holder["disk"].refused
        assert wait_until(lambda: holder["disk"].refused >= refused + 3)  # several retries fail meanwhile
        st = c.get("/api/game").json()
        assert iccs(st) == ["h2e2"] and st["storage_error"]["kind"] == "full"
        holder["disk"].full = False
        assert wait_until(lambda: len(c.get("/api/game").json()["moves"]) == 2)
        st = c.get("/api/game").json()
        assert st["storage_error"] is None and st["turn"] == "red"
        assert len(calls) == 1  # the same move was saved, not searched again
    with api_client(make_app(tmp_path)) as c:
        assert len(c.get("/api/game").json()["moves"]) == 2


def test_a_loss_on_time_is_shown_once_it_is_saved(tmp_path):
    app = make_app(tmp_path)
    disk = Disk(app)
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human",
                                      "clock": {"kind": "per_move", "per_move_s": 1}})
        disk.full = True
        assert wait_until(lambda: c.get("/api/game").json()["storage_error"] is not None, 60)
        st = c.get("/api/game").json()
        assert st["result"] is None and c.get("/api/library").json() == []
        r = c.post("/api/game/move", json={"move": "h2e2"})  # too late, and it cannot be saved
        assert r.status_code == 507 and c.get("/api/game").json()["moves"] == []
        disk.full = False
        assert wait_until(lambda: c.get("/api/game").json()["result"] is not None, 60)
        assert c.get("/api/game").json()["result"]["reason_zh"] == "黑胜 — 红方超时"
        assert c.get("/api/library").json()[0]["reason_zh"] == "黑胜 — 红方超时"


def test_a_really_full_file_system(tmp_path):
    with small_tmpfs(tmp_path / "small", "3m") as mnt:
        with api_client(make_app(mnt / "data")) as c:
            c.post("/api/game/new", json={"red": "human", "black": "human"})
            assert c.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
            fill(mnt)
            r = c.post("/api/game/move", json={"move": "h9g7"})
            assert r.status_code == 507, r.text
            assert iccs(c.get("/api/game").json()) == ["h2e2"]
            (mnt / "filler").unlink()
            r = c.post("/api/game/move", json={"move": "h9g7"})
            assert r.status_code == 200 and r.json()["storage_error"] is None
        with api_client(make_app(mnt / "data")) as c:
            assert iccs(c.get("/api/game").json()) == ["h2e2", "h9g7"]


def test_a_read_only_database_can_be_viewed_not_changed(tmp_path):
    with small_tmpfs(tmp_path / "ro", "4m", "needs root on Linux to mount a read-only tmpfs") as mnt:
        with api_client(make_app(mnt / "data")) as c:
            c.post("/api/game/new", json={"red": "human", "black": "human"})
            c.post("/api/game/move", json={"move": "h2e2"})
            c.post("/api/game/resign")
            c.post("/api/game/new", json={"red": "human", "black": "human"})
            c.post("/api/game/move", json={"move": "b2e2"})
        remount_read_only(mnt)
        with api_client(make_app(mnt / "data")) as c:
            st = c.get("/api/game").json()
            assert iccs(st) == ["b2e2"] and st["storage_error"]["kind"] == "read_only"
            assert [n["kind"] for n in st["storage_notices"]] == ["read_only"]
            (row,) = c.get("/api/library").json()
            assert c.get(f"/api/library/{row['id']}/pgn").status_code == 200
            assert c.get("/api/settings").status_code == 200
            r = c.post("/api/game/move", json={"move": "b9c7"})
            assert r.status_code == 503 and "read-only" in r.json()["detail"]
            assert iccs(c.get("/api/game").json()) == ["b2e2"]


def test_a_damaged_database_is_reported_and_play_goes_on(tmp_path):
    (tmp_path / "xiangqi.db").write_bytes(b"\x13garbage" * 1000)
    with api_client(make_app(tmp_path)) as c:
        st = c.get("/api/game").json()
        (notice,) = st["storage_notices"]
        assert notice["kind"] == "damaged_db" and os.path.exists(notice["path"])
        assert open(notice["path"], "rb").read() == b"\x13garbage" * 1000
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        assert c.post("/api/game/move", json={"move": "h2e2"}).status_code == 200


def test_a_damaged_current_game_is_kept_aside_and_reported(tmp_path):
    with api_client(make_app(tmp_path)) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
    con = sqlite3.connect(tmp_path / "xiangqi.db")
    con.execute("update current_game set record = replace(record, 'h2e2', 'a0a5')")
    con.commit()
    (damaged,) = con.execute("select record from current_game").fetchone()
    con.close()
    with api_client(make_app(tmp_path)) as c:
        st = c.get("/api/game").json()
        assert st["moves"] == [] and [n["kind"] for n in st["storage_notices"]] == ["damaged_game"]
        assert "damaged_games" in st["storage_notices"][0]["message"]
        c.post("/api/game/move", json={"move": "h2e2"})  # the new game's save keeps the old one aside
        (kept,) = c.app.state.store.damaged_current_games()
        assert kept["record"] == damaged


def test_a_damaged_library_row_is_flagged_and_a_409(tmp_path):
    with api_client(make_app(tmp_path)) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
        c.post("/api/game/resign")
        (row,) = c.get("/api/library").json()
        assert row["damaged"] is False
        with c.app.state.store.engine.begin() as conn:
            conn.exec_driver_sql("update games set record = 'not json' where id = ?", (row["id"],))
        (row,) = c.get("/api/library").json()
        assert row["damaged"] is True
        for path in ("", "/replay", "/pgn"):
            r = c.get(f"/api/library/{row['id']}{path}")
            assert r.status_code == 409 and "is damaged" in r.json()["detail"], (path, r.text)
        assert c.delete(f"/api/library/{row['id']}").status_code == 200


def test_the_library_follows_undo_and_keeps_abandoned_games(tmp_path):
    with api_client(make_app(tmp_path)) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
        c.post("/api/game/resign")
        assert [r["result"] for r in c.get("/api/library").json()] == ["1-0"]  # black to move resigned
        c.post("/api/game/undo")  # the resignation is taken back
        assert c.get("/api/library").json() == []  # one ply, unfinished: hidden as an abandoned start
        (row,) = c.get("/api/library", params={"abandoned": "1"}).json()
        assert row["result"] == "*" and row["reason_en"] == "game not finished" and row["abandoned"]
        c.post("/api/game/move", json={"move": "h9g7"})
        c.post("/api/game/new", json={"red": "human", "black": "human"})  # abandons it
        (row,) = c.get("/api/library").json()
        assert (row["result"], row["plies"]) == ("*", 2) and len(row["time"]) == 5
        replay = c.get(f"/api/library/{row['id']}/replay").json()
        assert [m["iccs"] for m in replay["moves"]] == ["h2e2", "h9g7"] and replay["result"] is None
        c.post("/api/game/new", json={"red": "human", "black": "human"})  # no moves: not kept
        assert len(c.get("/api/library").json()) == 1


# -- xiangqi serve ----------------------------------------------------------------------------


def _serve(data_dir):
    env = {**os.environ, "XIANGQI_DATA_DIR": str(data_dir)}
    return subprocess.Popen([sys.executable, "-m", "xiangqi.cli", "serve"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_second_server_on_the_same_data_dir_refuses_to_start(tmp_path):
    first = _serve(tmp_path)
    try:
        line = first.stdout.readline()
        assert "serving the game at" in line, first.stderr.read() if first.poll() is not None else line
        env = {**os.environ, "XIANGQI_DATA_DIR": str(tmp_path)}
        res = subprocess.run([sys.executable, "-m", "xiangqi.cli", "serve"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert res.stderr.strip().splitlines() == [
            f"xiangqi serve: error: another xiangqi server (pid {first.pid}) is using the data dir "
            f"{tmp_path}; stop it first, or start this one with another --data-dir"]
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(timeout=60)


def test_serve_starts_on_a_damaged_database_with_one_line(tmp_path):
    (tmp_path / "xiangqi.db").write_bytes(os.urandom(20000))
    proc = _serve(tmp_path)
    try:
        line = proc.stdout.readline()
        assert "serving the game at" in line, proc.stderr.read() if proc.poll() is not None else line
        url = line.split(" at ")[1].split()[0]
        r = httpx.get(url + "api/game", timeout=60)
        assert r.status_code == 200 and r.json()["storage_notices"][0]["kind"] == "damaged_db"
        kept = r.json()["storage_notices"][0]["path"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    err = proc.stderr.read()
    assert "Traceback" not in err
    (warning,) = [ln for ln in err.splitlines() if ln.startswith("xiangqi: warning:")]
    assert "was damaged" in warning and ".damaged-" in warning
    assert kept in warning and os.path.getsize(kept) == 20000
