"""The embedded mode's save path (online/store.py on SQLite): a move is answered only once it is
committed, a process killed right after the answer loses nothing, and the WAL's checkpoints run
outside the commits (DESIGN.md "Load")."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.online.conftest import Player

from xiangqi.online.store import WalCheckpointer


def stored_moves(db: Path, gid: str) -> list[str]:
    """The move log as another process sees it: a new sqlite3 connection of its own."""
    with sqlite3.connect(db) as c:
        return [r[0] for r in c.execute("SELECT iccs FROM online_moves WHERE game_id = ? ORDER BY ply",
                                        (gid,))]


def test_an_answered_move_is_committed(server, tmp_path):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    db = tmp_path / "online.db"
    for n, (who, mv) in enumerate([(a, "h2e2"), (b, "h9g7"), (a, "h0g2")], start=1):
        r = who.post(f"/games/{gid}/move", json={"move": mv})
        assert r.status_code == 200, r.text
        # the answer came after the commit: a connection of its own reads the move (and the clock)
        assert stored_moves(db, gid)[-1] == mv and len(stored_moves(db, gid)) == n
    with sqlite3.connect(db) as c:
        clock = json.loads(c.execute("SELECT clock FROM online_games WHERE id = ?", (gid,)).fetchone()[0])
    assert clock["control"]["base_s"] == 300 and 0 < clock["red_ms"] <= 300_000 + 2 * 3_000  # two increments


def test_the_saves_connection_leaves_checkpoints_to_their_thread(server, tmp_path):
    a, b = server.player(), server.player()
    a.guest()
    b.guest()
    gid = server.game_between(a, b, rated=False)
    store = server.online.db
    assert store._checkpointer is not None and store._checkpointer._thread is not None
    for who, mv in [(a, "h2e2"), (b, "h9g7")]:
        assert who.post(f"/games/{gid}/move", json={"move": mv}).status_code == 200
    raw = store._writer().driver_connection
    assert raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # no checkpoint inside a commit
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    thread = store._checkpointer
    thread.stop()  # joined: no checkpoint of its own runs beside the one below
    assert thread._thread is None
    busy, frames, done = WalCheckpointer(str(tmp_path / "online.db")).checkpoint()
    assert busy == 0 and frames > 0 and done == frames  # what the commits left in the WAL is copied
    assert stored_moves(tmp_path / "online.db", gid) == ["h2e2", "h9g7"]
    store.close()
    assert store._checkpointer is None


def test_checkpointer_of_a_missing_file_creates_nothing(tmp_path):
    path = tmp_path / "gone" / "online.db"
    try:
        WalCheckpointer(str(path)).checkpoint()
    except sqlite3.Error:
        pass
    else:
        raise AssertionError("a checkpoint of a missing database succeeded")
    assert not path.exists()


KILLED = textwrap.dedent('''
    import asyncio, os, signal, sys
    from xiangqi.online.lobby import PRESETS, Identity
    from xiangqi.app.play.hub import GameRegistry
    from xiangqi.online.rooms import OnlineConfig, OnlineService

    async def main():
        svc = OnlineService(OnlineConfig(), GameRegistry(None), data_dir=sys.argv[1])
        red, black = Identity("guest", "g-red", "r"), Identity("guest", "g-black", "b")
        room = await svc.start_game(red, black, PRESETS["10+5"], False)
        for who, mv in ((red, "h2e2"), (black, "h9g7"), (red, "h0g2"), (black, "i9h9")):
            await room.act(who, "move", {"move": mv})  # returns once the move is saved: the answer
        print(room.session.id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint, no clean exit

    asyncio.run(main())
''')


@pytest.mark.slow
@pytest.mark.ci
def test_a_process_killed_after_the_answer_loses_no_move(tmp_path):
    """SIGKILL right after four answered moves (no close, no checkpoint): another connection reads
    them all, and a server started on the same data dir plays on from them. Slow: a child process
    that imports the server (several seconds on a loaded machine)."""
    from fastapi.testclient import TestClient
    from tests.online.conftest import BASE, FAST, first_legal

    from xiangqi.online.rooms import OnlineConfig
    from xiangqi.web.server import create_app

    data = tmp_path / "data"
    data.mkdir()
    proc = subprocess.run([sys.executable, "-c", KILLED, str(data)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -9, proc.stderr
    gid = proc.stdout.strip()
    assert (data / "online.db-wal").exists()  # the moves are in the WAL, not yet in the file
    assert stored_moves(data / "online.db", gid) == ["h2e2", "h9g7", "h0g2", "i9h9"]
    cfg = OnlineConfig(hasher=FAST, move_provider=first_legal, ping_s=3600)
    app = create_app(data, public=True, online=cfg, move_provider=first_legal, warmup=False)
    with TestClient(app, base_url=BASE) as c:
        got = Player(c).get(f"/games/{gid}").json()
        assert [m["iccs"] for m in got["moves"]] == ["h2e2", "h9g7", "h0g2", "i9h9"]
        assert got["status"] == "playing" and got["turn"] == "red"
