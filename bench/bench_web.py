"""Cost of the web layer: the same work through the local server and called directly, in one run.

Run: ``.venv/bin/python bench/bench_web.py [--levels beginner,intermediate,advanced,master] [--replies 3]``.

1. Human moves: the 125 plies of the 1982 record (tests/data/records/pgn/) posted one by one
   to ``POST /api/game/move`` (validation, referee, SQLite autosave in one transaction, state
   JSON) against ``GameSession.play`` alone, per move; prints both and the ratio.
2. Computer replies: for each level, the time from sending a move over the game WebSocket to
   receiving the state with the computer's answer, against ``EnginePlayer.choose`` on the same
   positions; prints both and the ratio (the web overhead on top of the level's thinking time).

The server runs in a thread on a free port with a temporary data dir. No timing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from websockets.sync.client import connect

from xiangqi.app.opponents.players import EnginePlayer
from xiangqi.app.play.session import GameSession
from xiangqi.core.pgn import read_game
from xiangqi.web.run import free_port
from xiangqi.web.security import TOKEN_HEADER, new_token
from xiangqi.web.server import create_app

RECORD = Path(__file__).parent.parent / "tests/data/records/pgn/xiangqijs_readme_iccs_1982.pgn"
TOKEN = new_token()  # the server's session token, sent as a script sends it (xiangqi.web.server)
OPENING = ["h2e2", "b0c2", "h0g2", "i0h0", "a0a1"]  # human moves, when legal; the computer answers each


def start_server(player: EnginePlayer) -> tuple[uvicorn.Server, threading.Thread, str]:
    port = free_port()
    app = create_app(tempfile.mkdtemp(prefix="xq-bench-"), player=player, warmup=False, engine_delay_s=0,
                     port=port, token=TOKEN)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    while not server.started:
        time.sleep(0.02)
    return server, th, f"127.0.0.1:{port}"


def human_moves(host: str) -> tuple[float, float]:
    """(ms per move over HTTP, ms per move calling GameSession.play)."""
    moves = [m.iccs() for m in read_game(RECORD.read_text(encoding="utf-8")).mainline_moves()]
    with httpx.Client(base_url=f"http://{host}", headers={TOKEN_HEADER: TOKEN}) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        t = time.perf_counter()
        for mv in moves:
            r = c.post("/api/game/move", json={"move": mv})
            r.raise_for_status()
        web = (time.perf_counter() - t) / len(moves)
    s = GameSession(red="human", black="human")
    t = time.perf_counter()
    for mv in moves:
        s.play(mv)
    direct = (time.perf_counter() - t) / len(moves)
    return web * 1000, direct * 1000


def computer_replies(host: str, player: EnginePlayer, level: str, replies: int) -> tuple[float, float]:
    """(median s from a human move to the computer's answer over the WebSocket, median s of choose())."""
    with httpx.Client(base_url=f"http://{host}", headers={TOKEN_HEADER: TOKEN}) as c:
        st = c.post("/api/game/new", json={"red": "human", "black": "engine", "level": level}).json()
    web_times: list[float] = []
    positions: list[GameSession] = []
    with connect(f"ws://{host}/ws/game/{st['id']}", additional_headers={TOKEN_HEADER: TOKEN}) as ws:
        s = json.loads(ws.recv())["state"]
        for i, mv in enumerate(OPENING[:replies]):
            legal = sorted(m for ms in s["legal"].values() for m in ms)
            if mv not in legal:  # the computer's reply took or blocked the piece: any legal move will do
                mv = legal[0]
            t = time.perf_counter()
            ws.send(json.dumps({"type": "move", "move": mv}))
            while True:
                msg = json.loads(ws.recv())
                s = msg.get("state", {})
                if msg["type"] == "error":
                    raise RuntimeError(msg["detail"])
                if msg["type"] == "state" and len(s.get("moves", [])) == 2 * i + 2 and not s["thinking"]:
                    break
            web_times.append(time.perf_counter() - t)
            positions.append(GameSession.from_record({
                "id": "x", "start_fen": s["start_fen"], "moves": [m["iccs"] for m in s["moves"][:-1]],
                "red": "human", "black": "human", "level": level}))
    direct = []
    player = EnginePlayer(hash_mb=player.hash_mb)  # a fresh TT, like the server engine had
    for p in positions:
        t = time.perf_counter()
        player.choose(p.board, level)
        direct.append(time.perf_counter() - t)
    return statistics.median(web_times), statistics.median(direct)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="beginner,intermediate,advanced,master")
    ap.add_argument("--replies", type=int, default=3, help="computer replies measured per level (max 5)")
    args = ap.parse_args()
    player = EnginePlayer(hash_mb=64)
    from xiangqi.engine import warmup

    warmup(background=False)
    server, th, host = start_server(player)
    try:
        web_ms, direct_ms = human_moves(host)
        print(f"human move  web {web_ms:7.2f} ms/move   GameSession.play {direct_ms:7.2f} ms/move   "
              f"ratio web/direct {web_ms / direct_ms:5.2f}")
        for level in args.levels.split(","):
            web_s, direct_s = computer_replies(host, player, level, min(args.replies, len(OPENING)))
            print(f"{level:<12} reply web {web_s:6.3f} s   EnginePlayer.choose {direct_s:6.3f} s   "
                  f"ratio web/direct {web_s / direct_s:5.2f}")
    finally:
        server.should_exit = True
        th.join()


if __name__ == "__main__":
    main()
