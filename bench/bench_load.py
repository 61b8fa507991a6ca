"""Load and soak runs against a real ``xiangqi serve`` process: many tabs on one game, kill -9, a full disk.

Run: ``.venv/bin/python bench/bench_load.py load --clients 50 --seconds 60``
     ``.venv/bin/python bench/bench_load.py kill9 --kills 30``
     ``.venv/bin/python bench/bench_load.py diskfull`` (needs root: mounts a 4 MB tmpfs)

``load``: one server process (its own data dir), a game of a human (Red) against the computer at
``--level``. One client plays Red's moves (a random legal move each turn, over the WebSocket) while
``--clients`` others each hold a WebSocket open on the game (so every move is broadcast to all of
them) and every 0.5–1.5 s ask ``GET /api/game`` and ``{"type": "state"}``, as busy open tabs do.
A finished game is followed by a new one.
Prints latency p50/p99 of the polls and of the move round trip (human move sent → the computer's
reply received), the count of 5xx answers, error messages and dropped sockets, and replays every game
through the core to check that no computer move was illegal.

``kill9``: a client plays random moves over ``POST /api/game/move`` (two humans) while the server is
killed with SIGKILL at random moments and restarted; every acknowledged move must be in the game
after the restart. Prints kills, acknowledged moves, lost moves.

``diskfull``: the data dir on a tiny tmpfs, filled with a ballast file; moves are refused with 507
(never 500) and never shown as played, and play resumes once the ballast is removed.

Nothing is timed as a pass/fail; the numbers are printed for the closing notes of the hardening work.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import websockets

from xiangqi.core.board import Board


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data_dir: str, port: int) -> subprocess.Popen[str]:
    """``xiangqi serve`` in a subprocess; returns once it prints its URL."""
    env = {**os.environ, "XIANGQI_DATA_DIR": data_dir}
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving the game at" not in line:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc


def credentials(base: str) -> dict[str, str]:
    """The headers the server's own page sends: its Origin and the per-start token in its HTML."""
    html = httpx.get(base + "/", timeout=30).text
    headers = {"Origin": base}
    m = re.search(r'<meta name="xiangqi-token" content="([^"]+)"', html)
    if m:
        headers["X-Xiangqi-Token"] = m.group(1)
    return headers


def ws_url(base: str, game_id: str, headers: dict[str, str]) -> str:
    url = base.replace("http://", "ws://") + f"/ws/game/{game_id}"
    tok = headers.get("X-Xiangqi-Token")
    return url + (f"?token={tok}" if tok else "")


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


@dataclass
class Stats:
    polls: list[float] = field(default_factory=list)
    replies: list[float] = field(default_factory=list)
    http_5xx: int = 0
    http_other: int = 0
    errors: list[str] = field(default_factory=list)
    dropped: int = 0
    games: set[str] = field(default_factory=set)


async def tab(base: str, headers: dict[str, str], stats: Stats, stop: float, http: httpx.AsyncClient) -> None:
    """An open tab: a WebSocket on the current game, polling the state over HTTP and the socket."""
    while time.monotonic() < stop:
        st = (await http.get("/api/game")).json()
        try:
            async with websockets.connect(ws_url(base, st["id"], headers), origin=headers["Origin"],
                                          max_size=2**24) as ws:
                while time.monotonic() < stop:
                    t = time.perf_counter()
                    r = await http.get("/api/game")
                    stats.polls.append(time.perf_counter() - t)
                    if r.status_code >= 500:
                        stats.http_5xx += 1
                    if r.json().get("id") != st["id"]:
                        break  # a new game: reconnect to it
                    await ws.send(json.dumps({"type": "state"}))
                    while True:  # read what is queued, up to our own state answer
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                        if msg.get("type") == "error" and "illegal" in msg.get("detail", ""):
                            stats.errors.append(msg["detail"])
                        if msg.get("type") in ("state", "replaced"):
                            break
                    await asyncio.sleep(random.uniform(0.5, 1.5))  # a page asks now and then
        except (websockets.ConnectionClosed, TimeoutError, OSError):
            stats.dropped += 1
            await asyncio.sleep(0.2)


async def player(base: str, headers: dict[str, str], level: str, stats: Stats, stop: float,
                 http: httpx.AsyncClient) -> None:
    """Red's human: a random legal move whenever it is Red's turn; a new game when one ends."""
    rng = random.Random(1)
    while time.monotonic() < stop:
        r = await http.post("/api/game/new", json={"red": "human", "black": "engine", "level": level})
        if r.status_code >= 500:
            stats.http_5xx += 1
        st = r.json()
        stats.games.add(st["id"])
        async with websockets.connect(ws_url(base, st["id"], headers), origin=headers["Origin"],
                                      max_size=2**24) as ws:
            while time.monotonic() < stop and st.get("result") is None:
                legal = sorted(m for ms in st["legal"].values() for m in ms)
                if not legal:
                    break
                n = len(st["moves"])
                t = time.perf_counter()
                await ws.send(json.dumps({"type": "move", "move": rng.choice(legal)}))
                while True:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 120))
                    if msg.get("type") == "error":
                        stats.errors.append(str(msg.get("detail")))
                        if "illegal" in str(msg.get("detail")):
                            break
                    if msg.get("type") != "state":
                        continue
                    st = msg["state"]
                    if st.get("result") is not None or (len(st["moves"]) >= n + 2 and not st["thinking"]):
                        break
                stats.replies.append(time.perf_counter() - t)
                if stats.errors and "illegal" in stats.errors[-1]:
                    break


def check_games(data_dir: str) -> tuple[int, int, int]:
    """(games, plies, illegal plies) of every game the server stored, replayed through the core."""
    import sqlalchemy as sa

    eng = sa.create_engine(f"sqlite:///{data_dir}/xiangqi.db")
    recs = []
    with eng.connect() as c:
        for table in ("games", "current_game"):
            recs += [json.loads(r[0]) for r in c.execute(sa.text(f"select record from {table}"))]
    games = plies = bad = 0
    for rec in recs:
        games += 1
        b = Board(rec["start_fen"])
        for mv in rec["moves"]:
            plies += 1
            try:
                b.push_iccs(mv)
            except Exception:
                bad += 1
                break
    return games, plies, bad


def run_load(args: argparse.Namespace) -> None:
    data_dir = tempfile.mkdtemp(prefix="xq-load-")
    port = free_port()
    proc = start_server(data_dir, port)
    base = f"http://127.0.0.1:{port}"
    try:
        headers = credentials(base)
        stats = Stats()

        async def main() -> None:
            stop = time.monotonic() + args.seconds
            limits = httpx.Limits(max_connections=args.clients + 10)
            async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60, limits=limits) as http:
                # the first computer move compiles the engine: start it before the clock runs
                await http.post("/api/game/new",
                                json={"red": "human", "black": "engine", "level": args.level})
                tasks = [asyncio.create_task(player(base, headers, args.level, stats, stop, http))]
                await asyncio.sleep(1)
                tasks += [asyncio.create_task(tab(base, headers, stats, stop, http))
                          for _ in range(args.clients)]
                results = await asyncio.gather(*tasks, return_exceptions=True)
                for res in results:
                    if isinstance(res, BaseException):
                        stats.errors.append(f"client crashed: {res!r}")

        asyncio.run(main())
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    games, plies, bad = check_games(data_dir)
    print(f"clients {args.clients}  seconds {args.seconds}  level {args.level}")
    print(f"polls {len(stats.polls)}  p50 {pct(stats.polls, .5) * 1000:.1f} ms  "
          f"p99 {pct(stats.polls, .99) * 1000:.1f} ms")
    print(f"move round trips {len(stats.replies)}  p50 {pct(stats.replies, .5) * 1000:.0f} ms  "
          f"p99 {pct(stats.replies, .99) * 1000:.0f} ms")
    print(f"5xx {stats.http_5xx}  error messages {len(stats.errors)}  dropped sockets {stats.dropped}")
    for e in stats.errors[:5]:
        print("  error:", e)
    print(f"stored games {games}  plies {plies}  illegal plies {bad}")
    tracebacks = err.count("Traceback")
    print(f"server tracebacks {tracebacks}")


def run_kill9(args: argparse.Namespace) -> None:
    data_dir = tempfile.mkdtemp(prefix="xq-kill9-")
    port = free_port()
    rng = random.Random(7)
    acked: list[str] = []
    lost = 0
    game_id = None
    for k in range(args.kills):
        proc = start_server(data_dir, port)
        base = f"http://127.0.0.1:{port}"
        headers = credentials(base)
        with httpx.Client(base_url=base, headers=headers, timeout=30) as c:
            st = c.get("/api/game").json()
            if game_id is None or st["result"] is not None:
                st = c.post("/api/game/new", json={"red": "human", "black": "human"}).json()
                game_id, acked = st["id"], []
            have = [m["iccs"] for m in st["moves"]]
            if st["id"] != game_id or have[:len(acked)] != acked:
                lost += max(0, len(acked) - len(have))
            acked = have
            deadline = time.monotonic() + rng.uniform(0.2, 2.0)
            import threading

            killer = threading.Timer(max(0.0, deadline - time.monotonic()), proc.kill)
            killer.start()
            try:
                while True:
                    legal = sorted(m for ms in st["legal"].values() for m in ms)
                    if not legal or st["result"] is not None:
                        break
                    mv = rng.choice(legal)
                    r = c.post("/api/game/move", json={"move": mv})
                    if r.status_code != 200:
                        break
                    st = r.json()
                    acked.append(mv)
            except httpx.HTTPError:
                pass  # killed mid-request: that move was not acknowledged
            killer.join()
        proc.wait()
        print(f"kill {k + 1}: {len(acked)} moves acknowledged in the game so far", flush=True)
    proc = start_server(data_dir, port)
    base = f"http://127.0.0.1:{port}"
    st = httpx.get(base + "/api/game", timeout=30).json()
    have = [m["iccs"] for m in st["moves"]]
    if st["id"] == game_id and have[:len(acked)] != acked:
        lost += len(acked) - len(have)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    games, plies, bad = check_games(data_dir)
    print(f"kills {args.kills}  lost acknowledged moves {lost}  stored games {games} plies {plies} "
          f"illegal {bad}")


def run_diskfull(args: argparse.Namespace) -> None:
    mnt = tempfile.mkdtemp(prefix="xq-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt], check=True)
    proc = None
    try:
        port = free_port()
        proc = start_server(mnt, port)
        base = f"http://127.0.0.1:{port}"
        headers = credentials(base)
        statuses: dict[str, int] = {}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as c:
            st = c.post("/api/game/new", json={"red": "human", "black": "human"}).json()
            ballast = Path(mnt) / "ballast"
            with open(ballast, "wb") as fh:  # fill the file system
                try:
                    while True:
                        fh.write(b"\0" * 65536)
                        fh.flush()
                except OSError:
                    pass
            rng = random.Random(3)
            refused_shown = 0
            for _ in range(args.moves):
                legal = sorted(m for ms in st["legal"].values() for m in ms)
                before = len(st["moves"])
                try:
                    r = c.post("/api/game/move", json={"move": rng.choice(legal)})
                    key = str(r.status_code)
                    now = c.get("/api/game").json()
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] = statuses.get(type(exc).__name__, 0) + 1
                    print(f"server gone: {exc!r}; exit status {proc.poll()}")
                    break
                statuses[key] = statuses.get(key, 0) + 1
                if key != "200" and len(now["moves"]) != before:
                    refused_shown += 1
                st = now
            ballast.unlink()
            try:
                legal = sorted(m for ms in st["legal"].values() for m in ms)
                resumed = c.post("/api/game/move", json={"move": legal[0]}).status_code
                n = len(c.get("/api/game").json()["moves"])
            except httpx.HTTPError as exc:
                resumed, n = repr(exc), -1
        proc.kill()
        proc.wait()
        proc = start_server(mnt, port)
        after = len(httpx.get(base + "/api/game", timeout=30).json()["moves"])
        print(f"statuses while full {statuses}  refused but shown as played {refused_shown}  "
              f"after space came back: {resumed}; moves {n}, after kill -9 and restart {after}")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["umount", mnt], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("load", help="many tabs on one game against the computer")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--level", default="beginner")
    p = sub.add_parser("kill9", help="SIGKILL the server at random moments; count lost moves")
    p.add_argument("--kills", type=int, default=30)
    p = sub.add_parser("diskfull", help="moves on a full disk (root: mounts a tmpfs)")
    p.add_argument("--moves", type=int, default=10)
    args = ap.parse_args()
    {"load": run_load, "kill9": run_kill9, "diskfull": run_diskfull}[args.cmd](args)


if __name__ == "__main__":
    main()
