"""The abuse limits of several processes, counted in a real Redis (xiangqi.online.limits): a client
that spreads its seeks, failed logins or sockets over two processes gets the limits once, not twice.

Two online services on one database (SQLite file) and one :class:`LocalBus`, on one event loop, with
``limits_url`` on one redis-server (Debian's, on a unix socket in tmp_path; skipped when missing unless
``$XIANGQI_REQUIRE_REDIS`` is set, as CI does).
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect
from tests.online.conftest import BASE, FAST, Player, first_legal
from tests.online.test_redis_bus import redis_url  # noqa: F401 - the fixture
from tests.webclient import _Client

from xiangqi.online.bus import LocalBus
from xiangqi.online.rooms import OnlineConfig
from xiangqi.web.server import create_app


@pytest.fixture
def pair(tmp_path, redis_url):  # noqa: F811
    url = f"sqlite:///{tmp_path / 'online.db'}"
    bus = LocalBus()
    apps = []
    for k in range(2):
        cfg = OnlineConfig(db_url=url, hasher=FAST, move_provider=first_legal, ping_s=3600, shared=True,
                           bus=bus, heartbeat_s=0.1, process_ttl_s=30.0, seeks_per_minute=3, sockets_per_ip=2,
                           limits_url=redis_url)
        apps.append(create_app(tmp_path / f"p{k}", public=True, online=cfg, move_provider=first_legal,
                               warmup=False))
    with _Client(apps[0], base_url=BASE) as first:
        with first.portal.wrap_async_context_manager(apps[1].router.lifespan_context(apps[1])):
            players: list[Any] = []

            def player(k: int, address: str | None = None) -> Player:
                if k == 0 and not players and address is None:
                    players.append(first)
                    return Player(first)
                kw: dict[str, Any] = {} if address is None else {"client": (address, 50000)}
                c = _Client(apps[k], base_url=BASE, **kw)
                c.portal = first.portal
                return Player(c)
            yield player


def _login(p: Player, name: str, password: str = "correct horse"):
    return p.post("/login", json={"username": name, "password": password})


def test_seeks_per_minute_count_over_both_processes(pair):
    p0 = pair(0)
    p0.register("seeker")
    p1 = pair(1)
    assert _login(p1, "seeker").status_code == 200  # the same player on the other process
    for p in (p0, p0, p1):  # three seeks a minute, the limit, made on two processes
        r = p.post("/seeks", json={"time_control": "5+3", "color": "random"})
        assert r.status_code == 201, r.text
        assert p.c.delete(f"/api/online/seeks/{r.json()['id']}").status_code == 200
    r = p1.post("/seeks", json={"time_control": "5+3", "color": "random"})
    assert r.status_code == 429, r.text  # process 1 made one seek itself, yet the player made three
    assert r.json()["code"] == "rate_limited" and 1 <= r.json()["retry_after"] <= 60
    assert int(r.headers["Retry-After"]) == r.json()["retry_after"]


def test_failed_logins_count_over_both_processes(pair):
    pair(0).register("victim")
    p0, p1 = pair(0), pair(1)
    for p in (p0, p0, p0, p1, p1):  # five failures of the name from this address, over two processes
        r = _login(p, "victim", "wrong password")
        assert r.status_code == 400, r.text
    r = _login(p1, "victim", "correct horse")  # from this address even the right password now waits
    assert r.status_code == 429, r.text
    assert r.json()["code"] == "rate_limited" and r.headers["Retry-After"] == "1"
    assert _login(p0, "victim", "correct horse").status_code == 429
    elsewhere = pair(1, "127.0.0.7")  # the owner from another address: not slowed
    assert _login(elsewhere, "victim", "correct horse").status_code == 200


def test_failed_logins_of_an_address_count_over_both_processes(pair):
    from xiangqi.online.accounts import ADDRESS_FAILURES

    p0, p1 = pair(0), pair(1)
    for k in range(ADDRESS_FAILURES):  # one failure at each of 20 names, over two processes
        r = _login(p0 if k % 2 else p1, f"name{k}", "wrong password")
        assert r.status_code == 400, r.text
    r = _login(p0, "another", "wrong password")
    assert r.status_code == 429 and r.json()["code"] == "rate_limited", r.text


def test_sockets_per_address_count_over_both_processes(pair):
    p0 = pair(0)
    p0.guest()
    p1 = pair(1)
    p1.guest()
    with p0.ws("/ws/online/lobby") as a, p1.ws("/ws/online/lobby") as b:
        assert a.receive_json()["type"] == "lobby" and b.receive_json()["type"] == "lobby"
        with pytest.raises(WebSocketDisconnect) as refused:  # a third socket of the address, anywhere
            with p0.ws("/ws/online/lobby") as c:
                c.receive_json()
        assert refused.value.code == 4429
    with p1.ws("/ws/online/lobby") as again:  # closed sockets are counted off on both processes
        assert again.receive_json()["type"] == "lobby"
