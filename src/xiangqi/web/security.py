"""The local server's guard: one pure ASGI middleware in front of every route (see DESIGN.md, "Security").

Every HTTP request and WebSocket handshake passes four checks, in this order,
before any handler runs:

1. **Host.** The ``Host`` header must name this server: ``127.0.0.1``,
   ``localhost`` or ``[::1]`` with the port it is served on, or the address
   given with ``--host``. When that address is a wildcard (``0.0.0.0``, ``::``,
   LAN play) any IP literal and this machine's host name are accepted too: an
   IP literal cannot be rebound by DNS. Anything else gets **421** (DNS
   rebinding: a page on ``evil.example`` whose name now resolves to 127.0.0.1
   sends ``Host: evil.example:PORT``).
2. **Fetch Metadata.** A browser names the initiator of every request in
   ``Sec-Fetch-Site``. ``cross-site`` or ``same-site`` (another port of this machine)
   gets **403** unless it is a top-level GET navigation (a link to the page). A
   ``no-cors`` fetch, an ``<img>`` or a ``<script>`` from a foreign page carries no
   ``Origin``; without this check it would still run its (read-only) route, at a
   hundred requests a second from one tab. Requests without the header (scripts,
   older browsers) go on to the next checks.
3. **Origin.** A request that carries an ``Origin`` (browsers add it to every
   cross-origin fetch, to every POST and to every WebSocket handshake) must come
   from one of the addresses above over ``http``; a foreign or ``null`` origin
   gets **403**, whatever the method. On a wildcard address the Origin must be a
   name of this machine or the address the request was sent to (not any IP).
4. **Token.** A state-changing request (any method but GET, HEAD and OPTIONS: POST,
   PUT, PATCH, DELETE …) and every WebSocket must carry the per-start secret: the
   ``X-Xiangqi-Token`` header, or for a WebSocket (browsers cannot set its headers)
   the ``token`` query parameter. Missing or wrong: **403**. A foreign page can
   neither read the token (it is in the page's HTML, which it cannot read cross-
   origin, and the Host check stops it from reading it through a rebound name) nor
   send a custom header without a CORS preflight this server never grants, so no
   request it can forge (a ``no-cors`` POST, a form post, a WebSocket) changes
   anything. The token is a query parameter rather than a ``SameSite=Strict`` cookie
   because cookies are scoped by host name, not by port: any other page served from
   ``127.0.0.1:<another port>`` is "same-site" and its requests would carry the
   cookie, and two servers on one machine would overwrite each other's cookie.

A repeated ``Host``, ``Origin`` or token header gets **400**; a malformed one (a non-ASCII port
digit, an unclosed ``[``) is refused like a foreign one, never a 500. A refused WebSocket
handshake is closed before it is accepted: the client sees a bare 403. The ``token`` query
parameter is removed from the WebSocket's scope (in place), so that neither the route nor the
server's access log sees it.

**Programs.** Routes that start a program of this machine or hand one a path (adding, checking,
changing or running an added engine, engine matches, a review or an analysis by an added engine)
declare one more guard, :func:`this_machine_only`: the connection's *peer address* (the ASGI
``client``, the address the TCP connection came from) must be a loopback address, else **403**
with :data:`THIS_MACHINE_ONLY`. No header decides it (not ``Host``, which any client writes, not
``X-Forwarded-For``); a request that carries a forwarding header is not taken for this machine's
own even from a loopback peer (a proxy on this machine forwards other machines' requests). So with
``--lan`` a device on the network can play, undo, resign and delete saved games, but never make the
server run a program. A public server refuses these routes to everyone
(:data:`PUBLIC_NO_PROGRAMS`): behind a proxy every peer is loopback.

Every HTTP response also gets ``X-Content-Type-Options: nosniff``, a Content
Security Policy (scripts and connections from this origin only, no framing),
``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer`` and
``Cross-Origin-Resource-Policy``/``-Opener-Policy: same-origin``.
"""

from __future__ import annotations

import contextlib
import hmac
import html
import ipaddress
import json
import secrets
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlsplit

from fastapi import HTTPException
from starlette.requests import HTTPConnection

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The request header that carries the per-start token (HTTP requests; WebSockets may use it too).
TOKEN_HEADER = "X-Xiangqi-Token"
#: The WebSocket query parameter that carries the token (``/ws/game/ID?token=...``).
TOKEN_QUERY = "token"
#: The ``<meta name=...>`` in which the page receives the token.
TOKEN_META = "xiangqi-token"

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names of the wildcard addresses
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # read-only: no token needed


def request_headers(scope: Scope) -> tuple[dict[str, str], set[str]]:
    """The request's headers of an ASGI ``scope``: ``({lower-case name: first value}, {names sent more
    than once})`` (latin-1, as HTTP/1.1 defines header bytes). Both guards refuse a repeated
    ``Host``, ``Origin`` or token header with it (the local one here, the public server's in
    :mod:`xiangqi.web.online_api`)."""
    headers: dict[str, str] = {}
    repeated: set[str] = set()
    for k, v in scope.get("headers") or ():
        name = k.decode("latin-1").lower()
        if name in headers:
            repeated.add(name)
        headers.setdefault(name, v.decode("latin-1"))
    return headers, repeated


def given_token(scope: Scope, headers: dict[str, str]) -> str | None:
    """The token a request carries: the ``X-Xiangqi-Token`` header, or on a WebSocket (whose headers a
    browser cannot set) the ``token`` query parameter; None without one."""
    given = headers.get(TOKEN_HEADER.lower())
    if given is None and scope["type"] == "websocket":
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(TOKEN_QUERY)
        given = values[0] if values else None
    return given


def new_token() -> str:
    """A fresh per-start secret: 43 URL-safe characters (256 random bits)."""
    return secrets.token_urlsafe(32)


def page_with_token(page: str, token: str) -> str:
    """``page`` (the index HTML) with ``<meta name="xiangqi-token" content=TOKEN>`` added before ``</head>``.

    Raises :class:`ValueError` when the page has no ``</head>``.
    """
    meta = f'  <meta name="{TOKEN_META}" content="{html.escape(token, quote=True)}">\n'
    at = page.find("</head>")
    if at < 0:
        raise ValueError("the index page has no </head>: cannot give it the session token")
    return page[:at] + meta + page[at:]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (``127.0.0.0/8``, ``::1``, brackets allowed)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


#: The 403 ``detail`` of a program-starting route asked from another machine (:func:`this_machine_only`).
THIS_MACHINE_ONLY = ("this action starts programs on the server (adding, checking or running an "
                     "engine, engine matches) and is allowed only from the server's own machine, "
                     "not over the network")
#: The 403 ``detail`` of a program-starting route on a public server.
PUBLIC_NO_PROGRAMS = ("a public server starts no programs for its clients: added engines and engine "
                      "matches are only on a local server")
#: Headers a proxy adds; a request carrying one was forwarded for someone else (RFC 7239, de facto).
FORWARDING_HEADERS = frozenset({"forwarded", "x-forwarded-for", "x-real-ip"})


def peer_is_this_machine(scope: Scope) -> bool:
    """Whether the connection of ``scope`` (HTTP or WebSocket) comes from this machine: its peer
    address (``scope["client"]``, the TCP peer the server accepted) is a loopback IP
    (``127.0.0.0/8``, ``::1``, ``::ffff:127.x.x.x``) and no forwarding header
    (:data:`FORWARDING_HEADERS`) says it was passed on for another client. False without a peer
    address (a Unix socket, a test client without one). No header can make it True."""
    client = scope.get("client")
    if not client or not isinstance(client[0], str):
        return False
    try:
        address = ipaddress.ip_address(client[0].strip("[]"))
    except ValueError:
        return False  # a name ("testclient"), not an address: not known to be this machine
    mapped = getattr(address, "ipv4_mapped", None)
    if not (address.is_loopback or (mapped is not None and mapped.is_loopback)):
        return False
    names = {k.decode("latin-1").lower() for k, _ in scope.get("headers") or ()}
    return not names & FORWARDING_HEADERS


def program_refusal(conn: HTTPConnection) -> str | None:
    """Why the request or WebSocket ``conn`` may not start a program of this machine (the 403
    detail), or None when it may: refused on a public server (``app.state.public``) and from any
    peer but this machine (:func:`peer_is_this_machine`)."""
    if getattr(conn.app.state, "public", False):
        return PUBLIC_NO_PROGRAMS
    if not peer_is_this_machine(conn.scope):
        return THIS_MACHINE_ONLY
    return None


def this_machine_only(conn: HTTPConnection) -> None:
    """The guard of every route that starts a program or hands one a path (module text, "Programs"):
    a FastAPI dependency (``dependencies=[Depends(this_machine_only)]``) or a call inside a route
    whose body decides (a review by an added engine). Raises ``HTTPException(403, detail)`` with
    :func:`program_refusal`'s reason; returns None when the request comes from this machine."""
    why = program_refusal(conn)
    if why is not None:
        raise HTTPException(403, why)


def trusted_proxies(value: str) -> tuple[str, ...]:
    """The proxies ``--trust-proxy`` names (``"ADDR[,ADDR…]"``, each an IP address or a CIDR network
    such as ``10.0.0.0/8``) as a tuple of their normal forms; only requests whose peer address is
    one of them may say, in ``X-Forwarded-For``/``X-Forwarded-Proto``, which client they carry.

    Raises :class:`ValueError` naming the entry that is none of these (a host name, ``*``: trusting
    every peer would let any client choose the address its limits are counted by), or a network of
    every address that says the same as ``*`` (``0.0.0.0/0``, ``::/0``, any network holding all of
    ``::ffff:0:0/96``, the form in which a dual-stack socket names every IPv4 peer)."""
    out: list[str] = []
    for part in value.split(","):
        text = part.strip()
        if not text:
            raise ValueError(f"--trust-proxy {value!r}: an empty entry (give ADDR[,ADDR…])")
        try:
            net = ipaddress.ip_network(text, strict=False) if "/" in text else None
            out.append(str(net) if net is not None else str(ipaddress.ip_address(text)))
        except ValueError:
            raise ValueError(f"--trust-proxy {value!r}: {text!r} is not an IP address or network (e.g. "
                             "127.0.0.1, ::1 or 10.0.0.0/8; '*' and host names are not taken)") from None
        if net is not None and (net.prefixlen == 0 or (net.version == 6 and _ALL_IPV4.subnet_of(net))):
            raise ValueError(f"--trust-proxy {value!r}: {text!r} holds every address (as '*' would): any "
                             "client could then say which address it is; name the proxy's own address or "
                             "network")
    return tuple(out)


#: How a dual-stack socket names every IPv4 peer (RFC 4291 2.5.5.2): a proxy network holding all of
#: it trusts every IPv4 client.
_ALL_IPV4 = ipaddress.ip_network("::ffff:0:0/96")


def counted_address(host: str) -> str:
    """The address a client's limits count under, from its peer address ``host`` (the ASGI client
    host): an IPv6 address as its /64 network (``"2001:db8:7:9::/64"``: one subscriber is given a
    whole /64 and may take a new address of it for each request, RFC 4291 2.5.4 and RFC 8981), an
    IPv4 address that a dual-stack socket names ``::ffff:a.b.c.d`` as ``a.b.c.d``, any other IPv4
    address as it is; a text that is no IP address (a test client's name, ``"?"``) unchanged."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def _split_authority(value: str) -> tuple[str, int | None] | None:
    """``"name:port"`` / ``"[v6]:port"`` / ``"name"`` -> (lower-case name without brackets, port or None).

    None when the text is not a host with an optional decimal port.
    """
    value = value.strip().lower()
    if not value or any(c in value for c in "/@\\ \t?#"):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:
        return None  # a bare IPv6 address must be bracketed in a Host header
    else:
        name, port_text = value, None
    if port_text is None:
        return name, None
    # ASCII digits only: str.isdigit() also admits "²" or "١", which int() then rejects or reads.
    if not (port_text.isascii() and port_text.isdigit()) or len(port_text) > 5:
        return None
    return name, int(port_text)


def _without_token(query: bytes) -> bytes:
    """``query`` (a raw query string) without its ``token=...`` fields; the other fields byte for byte."""
    fields = query.split(b"&")
    return b"&".join(f for f in fields if unquote_plus(f.split(b"=", 1)[0].decode("latin-1")) != TOKEN_QUERY)


class LocalGuard:
    """ASGI middleware: the module docstring's checks (Host, Fetch Metadata, Origin, token), then ``app``.

    ``token``: the per-start secret (see :func:`new_token`). ``port``: the TCP port the
    server listens on; None takes it from each connection's ASGI ``server`` address (the
    socket the request arrived on). ``host``: the address the server was told to listen on
    (``127.0.0.1`` by default; a wildcard such as ``0.0.0.0`` admits IP-literal hosts).
    Lifespan and other scope types pass through untouched.
    """

    def __init__(self, app: ASGIApp, *, token: str, port: int | None = None, host: str = "127.0.0.1") -> None:
        if not token:
            raise ValueError("the session token must not be empty")
        self.app = app
        self.token = token.encode()
        self.port = port
        self.host = host.strip("[]").lower()
        self.names = set(LOOPBACK_NAMES)
        self.any_ip = self.host in WILDCARD_HOSTS
        if self.any_ip:
            with contextlib.suppress(OSError):
                hostname = socket.gethostname().lower()
                self.names |= {hostname, hostname + ".local"}
        else:
            self.names.add(self.host)

    # -- the checks -----------------------------------------------------------

    def allowed_host(self, value: str, port: int | None) -> bool:
        """Whether ``value`` (a Host header or an Origin's host part) names this server on ``port``."""
        parts = _split_authority(value)
        if parts is None:
            return False
        name, got_port = parts
        if port is not None and (got_port or 80) != port:
            return False
        if name in self.names:
            return True
        if self.any_ip:
            try:
                ipaddress.ip_address(name)
            except ValueError:
                return False
            return True
        return False

    def allowed_origin(self, origin: str, port: int | None, host: str | None = None) -> bool:
        """Whether an ``Origin`` header is one of this server's own (``http://`` + an allowed host).

        ``host``: the request's ``Host`` header. Served on a wildcard address, where any IP
        literal is a valid Host, an Origin must be a name of this machine (loopback, its host
        name) or the very address the request was sent to: a page on another machine's IP and
        the same port (``http://203.0.113.9:PORT``) is not this server's.
        """
        try:
            parts = urlsplit(origin.strip())
        except ValueError:  # "http://[::1" (an unclosed IPv6 bracket) and other unparsable netlocs
            return False
        if parts.scheme != "http" or parts.path or parts.query or parts.fragment or not parts.netloc:
            return False
        if not self.allowed_host(parts.netloc, port):
            return False
        if not self.any_ip:
            return True
        got, asked = _split_authority(parts.netloc), _split_authority(host or "")
        if got is None:
            return False
        if got[0] in self.names:
            return True
        return asked is not None and got[0] == asked[0] and (got[1] or 80) == (asked[1] or 80)

    def token_ok(self, given: str | None) -> bool:
        """Constant-time comparison of ``given`` with the session token."""
        return given is not None and hmac.compare_digest(given.encode(), self.token)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, reason) when ``scope`` must be refused, else None."""
        headers, repeated = request_headers(scope)
        if repeated & {"host", "origin", TOKEN_HEADER.lower()}:
            return 400, f"repeated header(s): {', '.join(sorted(repeated))}"
        port = self.port
        if port is None:
            server = scope.get("server")
            port = int(server[1]) if server and server[1] is not None else None
        host = headers.get("host")
        if host is None or not self.allowed_host(host, port):
            return 421, (f"this server answers only to its own address (127.0.0.1:{port or 'PORT'}, "
                         f"localhost:{port or 'PORT'}), not to Host {host!r}")
        site = headers.get("sec-fetch-site")
        if site is not None and site.strip().lower() not in ("same-origin", "none"):
            # A browser names every request's initiator (Fetch Metadata). A no-cors fetch, <img> or
            # <script> from a foreign page carries no Origin, so without this it would run its route;
            # a link (a top-level GET navigation) to the page is still followed.
            method = scope.get("method", "GET").upper()
            navigation = (headers.get("sec-fetch-mode", "").strip().lower() == "navigate"
                          and headers.get("sec-fetch-dest", "document").strip().lower() == "document"
                          and method in ("GET", "HEAD") and scope["type"] == "http")
            if not navigation:
                return 403, (f"requests from other web pages are refused (Sec-Fetch-Site {site!r}, "
                             f"Sec-Fetch-Dest {headers.get('sec-fetch-dest')!r})")
        origin = headers.get("origin")
        if origin is not None and not self.allowed_origin(origin, port, host):
            return 403, f"requests from other web pages are refused (Origin {origin!r})"
        websocket = scope["type"] == "websocket"
        if websocket or scope.get("method", "GET").upper() not in SAFE_METHODS:
            given = given_token(scope, headers)
            if not self.token_ok(given):
                where = f"the {TOKEN_QUERY!r} query parameter" if websocket else f"the {TOKEN_HEADER} header"
                return 403, (f"missing or out-of-date session token: send it in {where} "
                             "(reload the page; scripts read it from the page, see xiangqi.web.server)")
        return None

    # -- ASGI -----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if scope["type"] == "websocket":
            # In place, on the server's own scope: uvicorn's access log prints the path with its
            # query string ("WebSocket /ws/game/ID?token=..." [accepted]) from this very dict.
            scope["query_string"] = _without_token(scope.get("query_string", b""))
        if refused is not None:
            await self._refuse(scope, send, *refused)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        extra = self.response_headers(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", ())}
                message = dict(message)
                message["headers"] = [*message.get("headers", ()), *(h for h in extra if h[0] not in have)]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def response_headers(self, scope: Scope) -> list[tuple[bytes, bytes]]:
        """The security headers added to every HTTP response (CSP ``connect-src`` names this host's ws://)."""
        host = next((v for k, v in scope.get("headers") or () if k.lower() == b"host"), b"").decode("latin-1")
        csp = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data: blob:; media-src 'self' data: blob:; font-src 'self' data:; "
               f"connect-src 'self' ws://{host}; object-src 'none'; base-uri 'none'; form-action 'self'; "
               "frame-ancestors 'none'")
        return [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                (b"referrer-policy", b"no-referrer"), (b"cross-origin-resource-policy", b"same-origin"),
                (b"cross-origin-opener-policy", b"same-origin"),
                (b"content-security-policy", csp.encode("latin-1"))]

    async def _refuse(self, scope: Scope, send: Send, status: int, detail: str) -> None:
        body = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
                   (b"cross-origin-resource-policy", b"same-origin")]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        else:
            # Closing before the accept: the server answers the handshake with a bare 403. (A denial
            # response with a body, the ASGI extension, makes uvicorn 0.54 log a spurious error.)
            await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})

