"""Run the web server: pick a free port on 127.0.0.1, start uvicorn, optionally open the browser.

Serving another address than this machine's loopback (``--host 0.0.0.0``: LAN play) needs an
explicit ``lan=True`` (``xiangqi serve --lan``) and prints a warning (:data:`LAN_PEER_CAN`):
everyone who can reach the port can then open the page, get its token and play, resign, change the
settings and read, change or delete saved games, but not make the server start a program (adding,
checking or running engines, engine matches: :func:`xiangqi.web.security.this_machine_only`).
"""

from __future__ import annotations

import contextlib
import gc
import socket
import sys
import threading
import time
import webbrowser
from typing import Any

from xiangqi.core.errors import XiangqiError
from xiangqi.web.security import WILDCARD_HOSTS, is_loopback

HOST = "127.0.0.1"
LAN_HOST = "0.0.0.0"  # noqa: S104 - the LAN address, only with lan=True


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that is free right now (the OS picks it)."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses that other devices on the network can reach (no loopback), for
    the URL printed in LAN mode. Found from the host name and from the interface the default route
    uses (a UDP socket "connected" to a private address: no packet is sent). Empty when none."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(info[4][0])
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 1))
        found.append(s.getsockname()[0])
    out: list[str] = []
    for a in found:
        if a not in out and not is_loopback(a) and a != "0.0.0.0":
            out.append(a)
    return out


#: What a device on the network can do with a ``--lan`` server, and what it cannot (the warning's words).
LAN_PEER_CAN = ("anyone who can reach this port can open the game and play, undo, resign, start new games, "
                "change the settings, and read, change and delete saved games; they cannot start programs "
                "on this machine (adding, checking or running engines and engine matches work only from "
                "this machine's own browser)")


def listen_warning(host: str, *, lan: bool) -> str | None:
    """None when ``host`` is this machine's loopback; the warning to print when it is not and ``lan`` is set.

    Raises :class:`~xiangqi.core.errors.XiangqiError` for a non-loopback ``host`` without ``lan``.
    """
    if is_loopback(host):
        return None
    if not lan:
        raise XiangqiError(f"--host {host} would serve the game to other machines on the network; "
                           f"add --lan to allow that ({LAN_PEER_CAN}), or leave --host out to stay on "
                           "127.0.0.1")
    return f"serving on {host} for the local network: {LAN_PEER_CAN}; use it only on a network you trust"


#: The server process's collector thresholds (:func:`gc.set_threshold`): generation 0 is collected
#: after this many more container allocations than frees, generation 1 after this many collections of
#: generation 0, and generation 2 (the full collection) after this many of generation 1 *and* only
#: when the objects promoted to it since the last full one are a quarter of those there (CPython's
#: rule). Measured with 1,000 players (DESIGN.md, "Load on a quiet machine").
SERVER_GC_THRESHOLDS = (700, 10, 100)


def server_gc_policy(server: Any = None, thresholds: tuple[int, int, int] = SERVER_GC_THRESHOLDS) -> int:
    """Set the garbage collector up for a long-running server; call it once the app is built (every
    module imported), just before the server runs. Returns how many objects were frozen.

    ``gc.collect()`` then ``gc.freeze()``: what the start-up made (modules, classes, functions, the
    routes, the engine's tables: about 200,000 tracked objects in the public server) moves to the
    collector's permanent generation, which no collection scans again (start-up objects live as
    long as the process; the collection first frees what start-up left over, so no garbage is kept).
    With ``server`` (a :class:`uvicorn.Server`) the same again once it has started (what its lifespan
    start-up made: about 3,000 more), from a thread that waits for it. Then
    :data:`SERVER_GC_THRESHOLDS`: the young generations as Python's (short collections: at most
    some 7,000 objects), a full collection at most once in 100 collections of generation 1 instead
    of 10 (they found almost nothing: the young collections free the games' and the requests'
    cycles). Reason: the full collections, each a stop of
    the event loop in front of every game's moves and as long as there are objects to scan, were
    the whole tail of a 1,000-player server's move latency (DESIGN.md, "Load on a quiet machine")."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    if server is not None:
        def after_start() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.05)
            if server.started:
                gc.collect()
                gc.freeze()

        threading.Thread(target=after_start, name="gc-freeze", daemon=True).start()
    return gc.get_freeze_count()


def serve(port: int | None = None, *, open_browser: bool = False, data_dir: str | None = None,
          log_level: str = "warning", host: str = HOST, lan: bool = False, public: bool = False,
          db_url: str | None = None, redis_url: str | None = None, trust_proxy: tuple[str, ...] = ()) -> int:
    """Serve the game at ``http://<host>:<port>/`` until Ctrl-C; returns 0.

    ``port`` None or 0 picks a free port. ``host`` other than a loopback address needs
    ``lan`` (see :func:`listen_warning`, which raises XiangqiError otherwise). Prints the URL
    once the server listens, then opens the default browser when ``open_browser`` is set.
    Raises :class:`OSError` when the port is taken and
    :class:`~xiangqi.app.play.store.StorageError` when the data dir is locked by another server or
    cannot hold a database; a damaged or read-only database is reported (one line each on stderr)
    and the server starts anyway (:class:`~xiangqi.app.play.store.Store`).

    ``public``: the public server for online play (:mod:`xiangqi.web.online_api`; any ``host``, no
    ``lan`` needed: it is meant for others), its online database at ``db_url`` (default: ``online.db``
    in the data dir); ``redis_url``: the Redis bus that lets several processes on that database share
    games (:attr:`~xiangqi.online.rooms.OnlineConfig.shared`). ``trust_proxy``: the reverse
    proxies whose ``X-Forwarded-For`` names the client (``--trust-proxy``; see
    :func:`~xiangqi.web.server.create_app`); uvicorn's own proxy-header handling is off (it trusts
    127.0.0.1 by default: any program of this machine could then choose its address).
    """
    import uvicorn

    from xiangqi.web.server import create_app

    warning = None if public else listen_warning(host, lan=lan)
    if warning:
        print(f"xiangqi: warning: {warning}", file=sys.stderr, flush=True)
    port = port or free_port(host)
    with socket.socket(_family(host), socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is fine
        try:
            s.bind((host, port))
        except OSError as exc:
            raise OSError(f"port {port} on {host} is not free: {exc.strerror}") from exc
    online = None
    if public:
        from xiangqi.online.rooms import OnlineConfig

        online = OnlineConfig(db_url=db_url, redis_url=redis_url)
    # StoreLockedError when another server uses the dir
    app = create_app(data_dir, port=port, host=host, public=public, online=online, trust_proxy=trust_proxy)
    for notice in app.state.store.notices:  # a damaged file kept aside, a read-only database …
        print(f"xiangqi: warning: {notice['message']}", file=sys.stderr, flush=True)
    from xiangqi.web.limits import WS_MESSAGE_LIMIT, WS_SERVER_OPTIONS
    from xiangqi.web.timeouts import http_protocol

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on",
                            proxy_headers=False,  # the peer is the client unless --trust-proxy (create_app)
                            ws_max_size=WS_MESSAGE_LIMIT,  # a longer message closes its socket (1009)
                            **WS_SERVER_OPTIONS,  # type: ignore[arg-type]
                            http=http_protocol())  # a request must arrive whole within 20 s (408)
    server = uvicorn.Server(config)
    server_gc_policy(server)  # (after the app is built: what start-up made is frozen)
    shown = HOST if host in WILDCARD_HOSTS else host
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}/"

    def announce() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            what = "the public online server" if public else "the game"
            print(f"xiangqi: serving {what} at {url}  (Ctrl-C to stop)", flush=True)
            if host in WILDCARD_HOSTS:
                for addr in lan_addresses():
                    print(f"xiangqi: other devices on your network: http://{addr}:{port}/", flush=True)
            if open_browser and not webbrowser.open(url):
                print("xiangqi: could not open a browser; open the URL above yourself", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    try:
        server.run()  # uvicorn handles Ctrl-C: it stops accepting, closes sockets, runs shutdown
    except KeyboardInterrupt:  # uvicorn re-raises the signal after its graceful shutdown
        pass
    print("xiangqi: server stopped", flush=True)
    return 0
