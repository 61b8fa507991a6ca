"""``xiangqi serve`` / ``play``: prints the URL, serves the game, stops cleanly on Ctrl-C (SIGINT)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx

from xiangqi.cli import build_parser
from xiangqi.web.run import free_port


def start_serve(tmp_path, *extra: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "XIANGQI_DATA_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi.cli", "serve", *extra], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "serving the game at http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.poll() else "")
    url = line.split(" at ")[1].split()[0]
    return proc, url


def test_serve_prints_url_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    proc, url = start_serve(tmp_path, "--port", str(port))
    try:
        assert url == f"http://127.0.0.1:{port}/"
        r = httpx.get(url + "api/game", timeout=60)
        assert r.status_code == 200 and r.json()["moves"] == []
        assert (tmp_path / "xiangqi.db").exists()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert "server stopped" in proc.stdout.read()
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_picks_a_free_port_and_refuses_a_taken_one(tmp_path):
    proc, url = start_serve(tmp_path)
    try:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        # The same port again: a clear one-line error and exit status 2, no traceback.
        env = {**os.environ, "XIANGQI_DATA_DIR": str(tmp_path / "other")}
        res = subprocess.run([sys.executable, "-m", "xiangqi.cli", "serve", "--port", str(port)], env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2
        assert f"port {port} on 127.0.0.1 is not free" in res.stderr and "Traceback" not in res.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def test_play_parser_options():
    p = build_parser()
    a = p.parse_args(["play"])
    assert a.open_browser is True and a.port is None
    a = p.parse_args(["play", "--no-browser", "--port", "8123"])
    assert a.open_browser is False and a.port == 8123
    assert p.parse_args(["serve"]).open_browser is False


def test_bad_port_is_a_clear_error(capsys):
    from xiangqi.cli import main

    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be 0-65535" in capsys.readouterr().err
    time.sleep(0)


def test_lan_mode_prints_the_addresses_other_devices_use(tmp_path):
    from xiangqi.web.run import lan_addresses

    addrs = lan_addresses()
    assert all(not a.startswith("127.") for a in addrs)
    port = free_port("0.0.0.0")
    env = {**os.environ, "XIANGQI_DATA_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi", "serve", "--lan", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(1 + len(addrs))]
        assert lines[0].startswith(f"xiangqi: serving the game at http://127.0.0.1:{port}/")
        assert lines[1:] == [f"xiangqi: other devices on your network: http://{a}:{port}/\n" for a in addrs]
        for a in addrs:  # the page is served on that address too (the LAN guard accepts it)
            assert httpx.get(f"http://{a}:{port}/", timeout=60).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
