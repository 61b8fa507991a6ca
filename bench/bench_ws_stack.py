#!/usr/bin/env python3
"""The server's CPU a round trip of uvicorn's WebSocket implementations, with and without
permessage-deflate, and of the app's own layer (``Client`` queue + ``read_message``) on top.

    PYTHONPATH=src python bench/bench_ws_stack.py [--connections 100] [--rounds 100] [--repeat 2]

A uvicorn server (loopback, a free port) of one Starlette socket route reads a message, parses it and
sends two text frames of about 1 kB of JSON (what a move costs the stack: one receive, one update to
each player); the clients (``websockets``, in this process, offering compression) make ``rounds``
round trips on each of ``connections`` sockets at once. Printed: the server process's CPU seconds
(user + system, /proc) over the round trips, a round trip. ``wsproto`` is measured only when it is
installed. The figures and the choice they led to: docs/DESIGN.md, "Load" (third round).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys

SERVER = r'''
import json, sys, uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
port, ws_impl, deflate, layer = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", sys.argv[4]
PAYLOAD = json.dumps({"type": "update", "base": 1, "version": 2, "changes": {
    "fen": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w",
    "legal": {f"{c}{r}": [f"{c}{r}{c}{r + 1}", f"{c}{r}a0"] for c in "abcdefghi" for r in range(4)}},
    "moves_from": 10, "moves_add": [{"iccs": "h2e2", "chinese": "炮二平五"}]}, ensure_ascii=False)

async def bare(ws):
    await ws.accept()
    while True:
        m = await ws.receive()
        if m["type"] == "websocket.disconnect":
            return
        json.loads(m["text"])
        await ws.send_text(PAYLOAD)
        await ws.send_text(PAYLOAD)

async def app_layer(ws):
    from xiangqi.web.clients import Client, Encoded, read_message
    await ws.accept()
    client = Client(ws)
    update = Encoded(type="update")
    update._text = PAYLOAD
    while True:
        try:
            await read_message(ws)
        except Exception:
            return
        client.send(update)
        client.send(update)

app = Starlette(routes=[WebSocketRoute("/ws", app_layer if layer == "app" else bare)])
uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", ws=ws_impl, ws_per_message_deflate=deflate)
'''


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def measure(ws_impl: str, deflate: bool, layer: str, connections: int, rounds: int) -> float:
    """Server CPU microseconds a round trip."""
    import websockets

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-c", SERVER, str(port), ws_impl,
                             "1" if deflate else "0", layer])
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        socks = [await websockets.connect(f"ws://127.0.0.1:{port}/ws") for _ in range(connections)]
        msg = json.dumps({"type": "move", "move": "h2e2", "version": 12})

        async def play(w: object) -> None:
            for _ in range(rounds):
                await w.send(msg)  # type: ignore[attr-defined]
                await w.recv()  # type: ignore[attr-defined]
                await w.recv()  # type: ignore[attr-defined]

        await asyncio.gather(*(play(w) for w in socks[:10]))  # warm up
        before = _cpu_seconds(proc.pid)
        await asyncio.gather(*(play(w) for w in socks))
        used = _cpu_seconds(proc.pid) - before
        for w in socks:
            await w.close()
        return used / (connections * rounds) * 1e6
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, default=100, help="sockets at once")
    ap.add_argument("--rounds", type=int, default=100, help="round trips on each socket")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each configuration")
    args = ap.parse_args()
    impls = ["websockets-sansio", "websockets"]
    if importlib.util.find_spec("wsproto") is not None:
        impls.append("wsproto")
    configs = [(i, d, "bare") for i in impls for d in (True, False)]
    configs += [("websockets-sansio", False, "app")]
    for ws_impl, deflate, layer in configs:
        runs = [asyncio.run(measure(ws_impl, deflate, layer, args.connections, args.rounds))
                for _ in range(args.repeat)]
        print(f"{ws_impl:18} deflate {'on ' if deflate else 'off'} {layer:4} "
              f"server CPU a round trip: {' / '.join(f'{r:.0f}' for r in runs)} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
