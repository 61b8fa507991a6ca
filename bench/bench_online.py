"""Load on the public server: N simulated players in N/2 games at once, random legal moves (loopback only).

Run: ``.venv/bin/python bench/bench_online.py --players 100 --seconds 30``
and scaled out: ``... --processes 2 --db postgresql+psycopg://… --redis redis://127.0.0.1:6379/0``

``--processes K`` server processes (``xiangqi serve --public``'s app with the socket and seek limits
raised for one address, each its own data dir; by default one, on the embedded default: SQLite + the
in-process bus; with ``--db`` and ``--redis`` they share games through that database and Redis,
DESIGN.md "Online") and ``--client-processes C`` client processes (default 1), each running its
share of the pairs on one uvloop event loop (the clients share the machine with the server: they
must cost little, see below). With K > 1 the
two players of a pair talk to different processes (pair p: Red on process p mod K, Black on the
next), so every move crosses the bus. Each pair of players: two guests, a seek (10+5, casual) and
its acceptance and both WebSockets on the game (:data:`SETUP_AT_ONCE` pairs at a time; the clock
of the run starts when all are set up); the side to move sends a random legal move from the
state it has (``{"type": "move", "move", "version"}``) after a think of 0.5–1.5 s, and the round
trip is the time from the send to the state that shows the move. Each player keeps its game's
state as the page does: the whole state on connect, then the updates applied
(:func:`~xiangqi.online.rooms.apply_update`; one that does not follow on asks for the whole
state again, counted as ``resyncs``), so the client's own work per move is small: decoding one
short message and choosing from its ``legal`` moves. The client keeps only what it plays from
(:class:`Seen`: version, turn, result, status, ``legal`` and the move list, the list changed in
place) where the page keeps the whole state: the same rule for updates, without copying a
state of some twenty keys and its move list on every message. A finished game (mate, stalemate,
the referee) is followed by a new one for the same pair. At the end every game's move log (``GET
/api/online/games/{id}``) is compared with the moves the clients saw acknowledged: ``lost`` counts
acknowledged moves missing from the log and ``dup`` moves in the log more often than sent.

The last line reads ``players N games G moves M errors E lost L p50 X ms p99 Y ms``; it also prints
moves/s, the servers' peak resident memory (summed over the processes) and the CPU seconds the
client and the servers used during the play, per move (the machine's load average shows how much
of the 2 cores the run had: the latencies measure the machine, the CPU per move the server).
``--profile PATH`` runs each server under cProfile (CPU time) during the play and writes ``PATH.<k>``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from pathlib import Path
from typing import Any

import httpx
import websockets

SERVER = """
import sys, uvicorn
from xiangqi.online.rooms import OnlineConfig
from xiangqi.web.server import create_app
port = int(sys.argv[1])
db, redis = (sys.argv[3] or None), (sys.argv[4] or None)
cfg = OnlineConfig(sockets_per_ip=1_000_000, seeks_per_minute=1_000_000, ping_s=3600, db_url=db,
                   redis_url=redis)
app = create_app(sys.argv[2], public=True, online=cfg, warmup=False)
print("ready", flush=True)
if len(sys.argv) > 5 and sys.argv[5]:
    import cProfile, signal
    import time
    prof = cProfile.Profile(time.process_time)  # CPU time: wall time would count the waits for the CPU
    def dump(*_):  # SIGUSR1 from the bench, before it stops the server
        prof.disable()
        prof.dump_stats(sys.argv[5])
        print("profiled", flush=True)
    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGUSR2, lambda *_: prof.enable())  # the play starts
from xiangqi.web.limits import WS_MESSAGE_LIMIT, WS_SERVER_OPTIONS
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error",
                                       ws_max_size=WS_MESSAGE_LIMIT, **WS_SERVER_OPTIONS))
if not (len(sys.argv) > 6 and sys.argv[6]):  # the collector's policy of `xiangqi serve` (--python-gc: not)
    from xiangqi.web.run import server_gc_policy
    server_gc_policy(server)
server.run()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Stats:
    def __init__(self) -> None:
        self.rtt: list[float] = []
        self.errors = 0
        self.resyncs = 0  # updates that did not follow on (the whole state asked for again)
        self.games: dict[str, list[str]] = {}  # game id -> moves acknowledged (seen in a state), ICCS
        self.ramp_s = 0.0  # seconds the pairs took to set up their first games
        # CPU seconds (user + system) spent during the play (after the set-up): by the client
        # processes (summed), and by each server process
        self.cpu_client = 0.0
        self.cpu_servers: list[float] = []
        self.sys_servers = 0.0  # the part of cpu_servers spent in the kernel (summed)
        self.sys_client = 0.0


_TRANSPORT: httpx.AsyncHTTPTransport | None = None


async def browser(base: str) -> tuple[httpx.AsyncClient, str]:
    """A new browser (its own cookies; one connection pool for all: an SSL context per client would
    cost the client process more than the server's work)."""
    global _TRANSPORT
    if _TRANSPORT is None:
        # keep-alive connections retire before the server's 5 s (uvicorn's timeout_keep_alive): a
        # request on one the server is closing at that moment fails with a ReadError
        _TRANSPORT = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=200, keepalive_expiry=2.0))
    c = httpx.AsyncClient(base_url=base, timeout=60, transport=_TRANSPORT)
    token = (await c.get("/api/online/csrf")).json()["token"]
    c.headers.update({"X-Xiangqi-Token": token, "Origin": base})
    r = await c.post("/api/online/guest")
    r.raise_for_status()
    return c, token


async def game_socket(c: httpx.AsyncClient, token: str, base: str, gid: str) -> Any:
    """The game's WebSocket of browser ``c`` (opened during the set-up, as a page opens it when its
    game starts: a thousand handshakes at the start signal would time out on a loaded machine)."""
    ws_url = base.replace("http://", "ws://") + f"/ws/online/game/{gid}?token={token}"
    cookie = "; ".join(f"{k}={v}" for k, v in c.cookies.items())
    return await websockets.connect(ws_url, additional_headers={"Origin": base, "Cookie": cookie},
                                    max_size=2**20, open_timeout=120)


class Seen:
    """What one simulated player keeps of its game: the state's ``version``, ``turn``, ``result``,
    ``status`` and ``legal``, and the moves' ICCS (a list changed in place). :meth:`update` follows
    :func:`~xiangqi.online.rooms.apply_update`'s rule (the page's): an update at the version
    seen or before is already applied, one whose ``base`` is not the version seen does not follow
    on (a message was missed: the whole state is asked for again)."""

    __slots__ = ("version", "turn", "result", "status", "legal", "moves")

    def __init__(self, state: dict[str, Any]) -> None:
        self.version: int = state["version"]
        self.turn = state["turn"]
        self.result = state["result"]
        self.status = state["status"]
        self.legal: dict[str, list[str]] = state["legal"] or {}
        self.moves: list[str] = [m["iccs"] for m in state["moves"]]

    def update(self, msg: dict[str, Any]) -> bool | None:
        """Apply update ``msg``: True when it changed the game seen, False when already seen, None
        when it does not follow on."""
        if msg["version"] <= self.version:
            return False
        if msg["base"] != self.version:
            return None
        changes = msg["changes"]
        if "turn" in changes:
            self.turn = changes["turn"]
        if "result" in changes:
            self.result = changes["result"]
        if "status" in changes:
            self.status = changes["status"]
        if "legal" in changes:
            self.legal = changes["legal"] or {}
        if "moves_from" in msg:
            del self.moves[msg["moves_from"]:]
            self.moves.extend(m["iccs"] for m in msg["moves_add"])
        self.version = msg["version"]
        return True


async def player(ws: Any, gid: str, color: str, run: Run, stats: Stats, rng: random.Random) -> str:
    """Play ``color`` in ``gid`` on ``ws`` until the game ends or the run stops; ``over`` or ``time``."""
    sent_at: float | None = None
    seen: Seen | None = None
    sent_n = -1
    moving = False
    loads = json.loads
    while True:
        left = run.stop - time.monotonic()
        if left <= 0:
            return "time"
        try:
            async with asyncio.timeout(left):  # (wait_for would make a task per message)
                msg = loads(await ws.recv())
        except TimeoutError:
            return "time"
        kind = msg.get("type")
        if kind == "update":
            got = None if seen is None else seen.update(msg)
            if got is None:  # a message was missed: ask for the whole state
                stats.resyncs += 1
                await ws.send('{"type":"state"}')
                continue
            if not got:
                continue
        elif kind == "state":
            seen = Seen(msg["state"])
        elif kind == "error":
            stats.errors += 1
            print(f"bench_online: error from the server: {msg.get('detail')}", file=sys.stderr)
            moving = False
            continue
        else:
            continue
        n = len(seen.moves)
        if sent_at is not None and n >= sent_n:
            stats.rtt.append(time.monotonic() - sent_at)
            sent_at = None
            moving = False
        if color == "red":
            stats.games[gid] = seen.moves
        if seen.result is not None or seen.status != "playing":
            return "over"
        if seen.turn == color and not moving and sent_at is None:
            legal = [m for ms in seen.legal.values() for m in ms]
            if not legal:
                continue
            moving = True
            await asyncio.sleep(rng.uniform(0.5, 1.5))
            if time.monotonic() >= run.stop:
                return "time"
            sent_n = n + 1
            sent_at = time.monotonic()
            await ws.send(f'{{"type":"move","move":"{rng.choice(legal)}","version":{seen.version}}}')


#: Pairs that set up their game (guests, seek, accept) at once; the play starts when every pair is
#: set up (or after RAMP_LIMIT_S), and ``--seconds`` counts from then.
SETUP_AT_ONCE = 16
RAMP_LIMIT_S = 600.0


class Run:
    """The start gate: pairs set up a few at a time, then all play from one moment for ``--seconds``."""

    def __init__(self, pairs: int, seconds: float) -> None:
        self.gate = asyncio.Semaphore(SETUP_AT_ONCE)
        self.pairs = pairs
        self.seconds = seconds
        self.ready = 0
        self.all_ready = asyncio.Event()
        self.go = asyncio.Event()
        self.stop = float("inf")

    def start(self, stop: float | None = None) -> None:
        """Play from now until monotonic time ``stop`` (default: ``seconds`` from now; the clock
        is the machine's, the same in every client process)."""
        self.stop = time.monotonic() + self.seconds if stop is None else stop
        self.go.set()

    def arrived(self) -> None:
        self.ready += 1
        if self.ready >= self.pairs:
            self.all_ready.set()


async def pair(bases: list[str], run: Run, stats: Stats, seed: int) -> None:
    rng = random.Random(seed)
    base_a, base_b = bases[seed % len(bases)], bases[(seed + 1) % len(bases)]
    first = True
    while time.monotonic() < run.stop:
        try:
            async with run.gate:
                (a, ta), (b, tb) = await asyncio.gather(browser(base_a), browser(base_b))
                seek = (await a.post("/api/online/seeks",
                                     json={"time_control": "10+5", "color": "red"})).json()
                got = await b.post(f"/api/online/seeks/{seek['id']}/accept")
                got.raise_for_status()
                gid = got.json()["game_id"]
                wa, wb = await asyncio.gather(game_socket(a, ta, base_a, gid),
                                              game_socket(b, tb, base_b, gid))
            try:
                if first:
                    first = False
                    run.arrived()
                    await run.go.wait()
                stats.games[gid] = []
                await asyncio.gather(player(wa, gid, "red", run, stats, rng),
                                     player(wb, gid, "black", run, stats, rng))
            finally:
                await asyncio.gather(wa.close(), wb.close())
        except Exception as exc:  # counted, and the pair starts a new game
            stats.errors += 1
            print(f"bench_online: {type(exc).__name__}: {exc}", file=sys.stderr)
            if first:
                first = False
                run.arrived()
                await run.go.wait()
            await asyncio.sleep(1)


def rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        text = Path(f"/proc/{pid}/status").read_text()
        m = re.search(r"VmHWM:\s+(\d+) kB", text)
        if m:
            return int(m.group(1)) / 1024
    return float("nan")


def cpu_s(pid: int, part: str = "all") -> float:
    """CPU seconds process ``pid`` has used so far (Linux ``/proc/<pid>/stat``): ``part`` ``all``
    (user + system), ``user`` or ``system`` (the kernel's: the loopback TCP of its sockets)."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        user, system = int(fields[11]), int(fields[12])
        got = {"all": user + system, "user": user, "system": system}[part]
        return got / os.sysconf("SC_CLK_TCK")
    return float("nan")


def cpu_model() -> str:
    """The machine's processor and count (Linux ``/proc/cpuinfo``), e.g. ``2 x Intel(R) Xeon(R) …``."""
    with contextlib.suppress(OSError):
        names = re.findall(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        if names:
            return f"{len(names)} x {names[0].strip()}"
    return f"{os.cpu_count()} CPUs"


async def clients(conn: Any, bases: list[str], seeds: list[int], seconds: float, label: str) -> None:
    """One client process's players: pairs ``seeds`` set up their games, then (told ``ready``) wait
    for the start, sent as the monotonic time the play stops, then play; the results go back on
    ``conn`` as ``("done", {...})``."""
    stats = Stats()
    gate = Run(len(seeds), seconds)
    loop = asyncio.get_running_loop()

    async def progress() -> None:
        while True:
            await asyncio.sleep(10)
            print(f"bench_online{label}: {len(stats.games)} games, {len(stats.rtt)} moves, "
                  f"{stats.errors} errors", file=sys.stderr, flush=True)

    ticker = loop.create_task(progress())
    t0 = time.monotonic()
    pairs = asyncio.gather(*(pair(bases, gate, stats, i) for i in seeds))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(gate.all_ready.wait(), RAMP_LIMIT_S)
    conn.send(("ready", time.monotonic() - t0))
    stop = await loop.run_in_executor(None, conn.recv)
    gate.start(stop)
    cpu0, sys0 = time.process_time(), os.times().system
    await pairs
    cpu, system = time.process_time() - cpu0, os.times().system - sys0
    ticker.cancel()
    if _TRANSPORT is not None:
        await _TRANSPORT.aclose()  # the server's graceful stop waits for open keep-alive connections
    conn.send(("done", {"rtt": stats.rtt, "errors": stats.errors, "resyncs": stats.resyncs,
                        "games": stats.games, "cpu": cpu, "system": system}))


def client_process(conn: Any, bases: list[str], seeds: list[int], seconds: float, label: str) -> None:
    """A client process (forked by :func:`play`): :func:`clients` on a uvloop event loop when uvloop
    is installed (it is uvicorn's loop too; a third less CPU a message than asyncio's), else asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop comes with uvicorn[standard]
        asyncio.run(clients(conn, bases, seeds, seconds, label))
    else:
        uvloop.run(clients(conn, bases, seeds, seconds, label))
    conn.close()


def play(args: argparse.Namespace, bases: list[str], pids: list[int]) -> tuple[Stats, float]:
    """Run the players in ``--client-processes`` processes (each a share of the pairs), start them
    together when all are set up, and gather their results; also the servers' CPU during the play.
    Returns the stats and the seconds the play took."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")  # (before any event loop or thread of this process)
    n = max(1, min(args.client_processes, args.players // 2))
    workers = []
    for w in range(n):
        parent, child = ctx.Pipe()
        seeds = list(range(w, args.players // 2, n))
        proc = ctx.Process(target=client_process, args=(child, bases, seeds, args.seconds,
                                                        f" [{w}]" if n > 1 else ""), daemon=True)
        proc.start()
        child.close()
        workers.append((proc, parent))
    stats = Stats()
    for _, conn in workers:
        kind, ramp = conn.recv()
        assert kind == "ready"
        stats.ramp_s = max(stats.ramp_s, ramp)
    if args.profile:
        for p in pids:
            os.kill(p, signal.SIGUSR2)
    cpu0 = [cpu_s(p) for p in pids]
    sys0 = [cpu_s(p, "system") for p in pids]
    t0 = time.monotonic()
    stop = t0 + args.seconds
    for _, conn in workers:
        conn.send(stop)
    for proc, conn in workers:
        kind, got = conn.recv()
        assert kind == "done"
        stats.rtt.extend(got["rtt"])
        stats.errors += got["errors"]
        stats.resyncs += got["resyncs"]
        stats.games.update(got["games"])
        stats.cpu_client += got["cpu"]
        stats.sys_client += got["system"]
        proc.join(30)
    took = time.monotonic() - t0
    stats.cpu_servers = [cpu_s(p) - c for p, c in zip(pids, cpu0, strict=True)]
    stats.sys_servers = sum(cpu_s(p, "system") - c for p, c in zip(pids, sys0, strict=True))
    return stats, took


async def check(base: str, stats: Stats) -> tuple[int, int]:
    lost = dup = 0
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        for gid, seen in stats.games.items():
            log = [m["iccs"] for m in (await c.get(f"/api/online/games/{gid}")).json()["moves"]]
            lost += sum(1 for i, m in enumerate(seen) if i >= len(log) or log[i] != m)
            dup += max(0, len(log) - len(seen) - 1)  # one reply may be in flight at the stop
    return lost, dup


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=100, help="simulated players (two per game)")
    ap.add_argument("--seconds", type=float, default=30, help="how long they play")
    ap.add_argument("--processes", type=int, default=1, help="server processes (more than one needs "
                                                             "--db and --redis)")
    ap.add_argument("--db", default=None, help="the online database of the servers (SQLAlchemy URL; "
                                               "default: SQLite in a temporary data dir)")
    ap.add_argument("--redis", default=None, help="Redis for the bus (redis://… or unix://…)")
    ap.add_argument("--client-processes", type=int, default=1,
                    help="processes simulating the players (each a share of the pairs; default 1)")
    ap.add_argument("--python-gc", action="store_true",
                    help="run the servers with Python's default collector instead of the server's policy "
                         "(xiangqi.web.run.server_gc_policy), for comparison")
    ap.add_argument("--profile", default=None, metavar="PATH",
                    help="profile each server during the play (cProfile) into PATH.<k>")
    args = ap.parse_args()
    if not 2 <= args.players <= 2000 or not 1 <= args.seconds <= 600:
        ap.error("--players 2-2000 and --seconds 1-600")
    if not 1 <= args.processes <= 8 or not 1 <= args.client_processes <= 16:
        ap.error("--processes 1-8 and --client-processes 1-16")
    if args.processes > 1 and not (args.db and args.redis):
        ap.error("--processes above 1 shares games through a database and Redis: give --db and --redis")
    if args.redis and not args.db:
        ap.error("--redis needs --db (a database every process reaches)")
    with tempfile.TemporaryDirectory() as data:
        procs, bases = [], []
        try:
            for k in range(args.processes):
                port = free_port()
                Path(data, f"p{k}").mkdir()
                cmd = [sys.executable, "-c", SERVER, str(port), str(Path(data, f"p{k}")), args.db or "",
                       args.redis or "", f"{args.profile}.{k}" if args.profile else "",
                       "1" if args.python_gc else ""]
                procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ}))
                bases.append(f"http://127.0.0.1:{port}")
            for proc, base in zip(procs, bases, strict=True):
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
                for _ in range(400):
                    with contextlib.suppress(httpx.HTTPError):
                        if httpx.get(base + "/api/online/config", timeout=2).status_code == 200:
                            break
                    time.sleep(0.05)
            stats, took = play(args, bases, [p.pid for p in procs])
            lost, dup = asyncio.run(check(bases[0], stats))
            mem = sum(rss_mb(p.pid) for p in procs)
        finally:
            if args.profile:
                for proc in procs:
                    proc.send_signal(signal.SIGUSR1)
                for proc in procs:
                    assert proc.stdout is not None
                    proc.stdout.readline()  # "profiled"
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    rtt = sorted(stats.rtt)
    moves = len(rtt)

    def pct(p: float) -> float:
        return 1000 * rtt[min(len(rtt) - 1, int(p * len(rtt)))] if rtt else float("nan")

    mode = "embedded" if not args.redis else f"{args.processes} processes, {args.db.split(':', 1)[0]} + redis"
    print(f"{mode}: set-up {stats.ramp_s:.0f} s, then moves/s {moves / took:.1f}  servers' peak RSS "
          f"{mem:.0f} MB  duplicates {dup}  resyncs {stats.resyncs}  load average {os.getloadavg()[0]:.1f}")
    if moves:
        srv = sum(stats.cpu_servers)
        print(f"CPU during the play: clients {stats.cpu_client:.1f} s "
              f"({1000 * stats.cpu_client / moves:.2f} ms a move, "
              f"{1000 * stats.sys_client / moves:.2f} of it "
              f"in the kernel), servers {srv:.1f} s ({1000 * srv / moves:.2f} ms a move, "
              f"{1000 * stats.sys_servers / moves:.2f} in the kernel; "
              f"{' + '.join(f'{c:.1f}' for c in stats.cpu_servers)} s) in {took:.0f} s; "
              f"CPU: {cpu_model()}")
    print(f"players {args.players} games {len(stats.games)} moves {moves} errors {stats.errors} lost {lost} "
          f"p50 {pct(0.5):.1f} ms p99 {pct(0.99):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
