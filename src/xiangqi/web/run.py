"""Run the web server: pick a free port on 127.0.0.1, start uvicorn, optionally open the browser."""

from __future__ import annotations

import socket
import threading
import webbrowser

HOST = "127.0.0.1"


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that is free right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def serve(port: int | None = None, *, open_browser: bool = False, data_dir: str | None = None,
          log_level: str = "warning") -> int:
    """Serve the game at ``http://127.0.0.1:<port>/`` until Ctrl-C; returns 0.

    ``port`` None or 0 picks a free port. Prints the URL once the server
    listens, then opens the default browser when ``open_browser`` is set.
    Raises :class:`OSError` when the port is taken.
    """
    import uvicorn

    from xiangqi.web.server import create_app

    port = port or free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is fine
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise OSError(f"port {port} on {HOST} is not free: {exc.strerror}") from exc
    app = create_app(data_dir)
    from xiangqi.web.limits import WS_MESSAGE_LIMIT

    config = uvicorn.Config(app, host=HOST, port=port, log_level=log_level, lifespan="on",
                            ws_max_size=WS_MESSAGE_LIMIT)  # a longer message closes its socket (1009)
    server = uvicorn.Server(config)
    url = f"http://{HOST}:{port}/"

    def announce() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            print(f"xiangqi: serving the game at {url}  (Ctrl-C to stop)", flush=True)
            if open_browser and not webbrowser.open(url):
                print("xiangqi: could not open a browser; open the URL above yourself", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    try:
        server.run()  # uvicorn handles Ctrl-C: it stops accepting, closes sockets, runs shutdown
    except KeyboardInterrupt:  # uvicorn re-raises the signal after its graceful shutdown
        pass
    print("xiangqi: server stopped", flush=True)
    return 0
