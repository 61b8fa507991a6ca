"""Which address a request comes from: the connection's peer, unless a proxy is trusted explicitly.

uvicorn reads ``X-Forwarded-For`` from 127.0.0.1 by default (``proxy_headers=True``,
``FORWARDED_ALLOW_IPS=127.0.0.1``): any program on the server's machine could then pick the address
its logins, seeks, sockets and computer games are counted by. ``xiangqi serve`` turns that off;
``--trust-proxy ADDR[,ADDR]`` names the reverse proxies whose header is believed.
"""

from __future__ import annotations

import pytest
from tests.online.conftest import BASE, FAST, Player, first_legal
from tests.webclient import _Client

from xiangqi.cli import main
from xiangqi.online.rooms import OnlineConfig
from xiangqi.web import run
from xiangqi.web.security import trusted_proxies
from xiangqi.web.server import create_app

BODY = {"level": "beginner", "time_control": "10+5", "color": "red"}


class _NoServer:
    """uvicorn.Server that does not serve (the test only reads the Config it was given)."""

    def __init__(self, config) -> None:
        self.config = config
        self.started = False
        self.should_exit = True

    def run(self) -> None:
        pass


@pytest.mark.parametrize(("public", "trust"), [(False, ()), (True, ()), (True, ("10.0.0.2",))])
def test_serve_leaves_uvicorns_proxy_headers_off(tmp_path, monkeypatch, public, trust):
    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    configs = []

    class Config(uvicorn.Config):
        def __init__(self, app, **kw):
            configs.append((app, kw))
            super().__init__(app, **kw)

    monkeypatch.setattr(uvicorn, "Config", Config)
    monkeypatch.setattr(uvicorn, "Server", _NoServer)
    monkeypatch.setattr(run, "server_gc_policy", lambda server=None: 0)  # (the test process's collector)
    try:
        assert run.serve(0, data_dir=str(tmp_path), public=public, trust_proxy=trust) == 0
    finally:
        for app, _ in configs:
            app.state.store.close()
    [(app, kw)] = configs
    assert kw["proxy_headers"] is False  # uvicorn's default (True, from 127.0.0.1) would believe anyone here
    layers = [m for m in app.user_middleware if m.cls is ProxyHeadersMiddleware]
    assert [m.kwargs["trusted_hosts"] for m in layers] == ([list(trust)] if trust else [])


def _public(tmp_path, trust=()):
    cfg = OnlineConfig(hasher=FAST, move_provider=first_legal, ping_s=3600)
    return create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False,
                      trust_proxy=trust)


def _started_from(app, peer, headers, portal=None):
    c = _Client(app, base_url=BASE, client=(peer, 40000))
    if portal is not None:
        c.portal = portal
    p = Player(c)
    p.guest()
    r = p.post("/computer", json=BODY, headers=headers)
    assert r.status_code == 200, r.text
    return app.state.online.rooms[r.json()["game_id"]].started_from


def test_x_forwarded_for_is_not_believed_by_default(tmp_path):
    app = _public(tmp_path)
    with _Client(app, base_url=BASE) as first:
        got = _started_from(app, "127.0.0.1", {"X-Forwarded-For": "198.51.100.1"}, first.portal)
    assert got == "127.0.0.1"


def test_a_trusted_proxy_names_the_client_and_no_other_peer_does(tmp_path):
    app = _public(tmp_path, trusted_proxies("127.0.0.1"))
    with _Client(app, base_url=BASE) as first:
        def started_from(peer, forwarded):
            return _started_from(app, peer, {"X-Forwarded-For": forwarded}, first.portal)

        assert started_from("127.0.0.1", "198.51.100.1") == "198.51.100.1"
        # a client that is not the proxy writes the header itself: its own address counts
        assert started_from("192.0.2.9", "198.51.100.2") == "192.0.2.9"
        # the proxy's chain: the last address that is not a trusted proxy
        assert started_from("127.0.0.1", "203.0.113.5, 198.51.100.3") == "198.51.100.3"


def test_trusted_proxies_are_addresses_or_networks():
    assert trusted_proxies("127.0.0.1") == ("127.0.0.1",)
    assert trusted_proxies(" 10.0.0.0/8 , ::1,10.1.2.3/16") == ("10.0.0.0/8", "::1", "10.1.0.0/16")
    for bad, named in [("*", "'*'"), ("proxy.example", "'proxy.example'"), ("10.0.0.1,", "empty"),
                       ("300.1.1.1", "'300.1.1.1'")]:
        with pytest.raises(ValueError, match=named):
            trusted_proxies(bad)


def test_the_cli_takes_trust_proxy_with_public_only(capsys):
    assert main(["serve", "--trust-proxy", "127.0.0.1"]) == 2
    assert "use it with --public" in capsys.readouterr().err
    assert main(["serve", "--public", "--trust-proxy", "*"]) == 2
    err = capsys.readouterr().err
    assert "'*' is not an IP address or network" in err and "Traceback" not in err


def test_a_network_of_every_address_is_not_a_proxy():
    """``0.0.0.0/0`` or ``::/0`` trusts every peer, as ``*`` would; ``::ffff:0:0/96`` every IPv4 peer
    of a dual-stack socket: each would let any client choose the address its limits count under."""
    for bad in ["0.0.0.0/0", "::/0", "10.0.0.1,0.0.0.0/0", "::ffff:0:0/96", "::/16"]:
        with pytest.raises(ValueError, match="every"):
            trusted_proxies(bad)
    assert trusted_proxies("::ffff:10.0.0.0/104") == ("::ffff:a00:0/104",)  # a part of it is a network
