"""The app's servers speak WebSocket through uvicorn's sans-I/O implementation without
permessage-deflate (``limits.WS_SERVER_OPTIONS``; the reason in docs/DESIGN.md, "Load"): a client that
offers compression gets plain frames, and the game works as before."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import httpx
from websockets.sync.client import connect

from xiangqi.web.limits import WS_SERVER_OPTIONS


def test_options_name_the_implementation_and_no_compression():
    import uvicorn

    config = uvicorn.Config(lambda *a: None, **WS_SERVER_OPTIONS)  # type: ignore[arg-type]
    config.load()
    assert config.ws_protocol_class.__name__ == "WebSocketsSansIOProtocol"
    assert config.ws_per_message_deflate is False


def test_served_game_socket_declines_deflate(tmp_path):
    env = {**os.environ, "XIANGQI_DATA_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi.cli", "serve"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "serving the game at http://127.0.0.1:" in line, line
        base = line.split(" at ")[1].split()[0].rstrip("/")
        page = httpx.get(base + "/", timeout=60).text
        token = re.search(r'name="xiangqi-token" content="([^"]+)"', page)[1]
        game = httpx.get(base + "/api/game", headers={"X-Xiangqi-Token": token}, timeout=60).json()["id"]
        url = base.replace("http://", "ws://") + f"/ws/game/{game}?token={token}"
        with connect(url, origin=base, compression="deflate", open_timeout=60) as ws:
            assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
            msg = json.loads(ws.recv(timeout=60))
            assert msg["type"] == "state" and msg["state"]["id"] == game and msg["state"]["moves"] == []
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
