"""``xiangqi serve --public``: the public server starts, serves the online API and closes the local game."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

from xiangqi.cli import build_parser
from xiangqi.web.run import free_port


def test_serve_public_parses():
    args = build_parser().parse_args(["serve", "--public", "--host", "0.0.0.0", "--db", "sqlite:///x.db"])
    assert args.public is True and args.host == "0.0.0.0" and args.db == "sqlite:///x.db"
    assert build_parser().parse_args(["serve"]).public is False
    args = build_parser().parse_args(["serve", "--public", "--db", "postgresql+psycopg://x/y", "--redis",
                                      "redis://127.0.0.1:6379/0"])
    assert args.redis == "redis://127.0.0.1:6379/0"


def test_redis_needs_a_shared_database(capsys):
    from xiangqi.cli import main

    assert main(["serve", "--public", "--redis", "redis://127.0.0.1:1/0"]) != 0
    err = capsys.readouterr().err
    assert "--redis shares games between server processes" in err and "--db postgresql" in err
    assert main(["serve", "--redis", "redis://127.0.0.1:1/0"]) != 0
    assert "use it with --public" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.ci
def test_serve_public_runs(tmp_path):  # a server process starts: 5-15 s on a loaded machine
    port = free_port()
    env = {**os.environ, "XIANGQI_DATA_DIR": str(tmp_path)}
    db = f"sqlite:///{tmp_path / 'accounts.db'}"
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi.cli", "serve", "--public", "--port", str(port),
                             "--db", db], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"serving the public online server at http://127.0.0.1:{port}/" in line, (
            line, proc.stderr.read() if proc.poll() is not None else "")
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=60) as c:
            assert c.get("/api/online/config").json()["public"] is True
            assert c.get("/api/game").status_code == 404
            token = c.get("/api/online/csrf").json()["token"]
            r = c.post("/api/online/guest", headers={"X-Xiangqi-Token": token, "Origin": base})
            assert r.status_code == 200 and r.json()["user"]["kind"] == "guest"
        assert (tmp_path / "accounts.db").exists()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
