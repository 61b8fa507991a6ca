"""RedisBus against a real redis-server (Debian's, on a unix socket in tmp_path; skipped when missing
unless $XIANGQI_REQUIRE_REDIS is set, as CI does)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time

import pytest
from tests.webclient import run_coroutine

from xiangqi.online.bus import RedisBus


@pytest.fixture
def redis_url(tmp_path):
    exe = shutil.which("redis-server")
    if exe is None:
        if os.environ.get("XIANGQI_REQUIRE_REDIS"):
            pytest.fail("$XIANGQI_REQUIRE_REDIS is set but redis-server is not installed")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    sock = tmp_path / "redis.sock"
    proc = subprocess.Popen([exe, "--port", "0", "--unixsocket", str(sock), "--save", "", "--appendonly",
                             "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 60
        while not sock.exists():
            if time.monotonic() > end or proc.poll() is not None:
                pytest.fail("redis-server did not start")
            time.sleep(0.02)
        yield f"unix://{sock}"
    finally:
        proc.terminate()
        proc.wait(60)


def test_two_buses_share_channels_in_order(redis_url):
    async def scenario():
        a, b = RedisBus(redis_url), RedisBus(redis_url)
        await a.start()
        await b.start()
        try:
            got_b: list[int] = []
            got_a: list[int] = []
            probed: set[str] = set()

            def into(got: list[int], name: str):
                def on(m):
                    if m.get("probe") == name:
                        probed.add(name)
                    elif "probe" not in m:
                        got.append(m["n"])
                return on

            sub_b = b.subscribe("game:x", into(got_b, "b"))
            a.subscribe("game:x", into(got_a, "a"))
            b.subscribe("lobby", lambda m: got_b.append(-1))
            # each bus's SUBSCRIBE is confirmed by Redis before its writer sends what was published
            # after it: a bus that hears its own probe is subscribed (a fixed sleep could be too short)
            b.publish("game:x", {"probe": "b"})
            a.publish("game:x", {"probe": "a"})
            deadline = time.monotonic() + 30
            while probed != {"a", "b"} and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert probed == {"a", "b"}
            for n in range(200):
                a.publish("game:x", {"n": n, "text": "炮二平五"})
            deadline = time.monotonic() + 30
            while (len(got_b) < 200 or len(got_a) < 200) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert got_b == list(range(200))  # every message, once, in order, on the other process
            assert got_a == list(range(200))  # and back to the publisher's own subscribers
            sub_b.close()
            await asyncio.sleep(0.2)
            a.publish("game:x", {"n": 999})
            deadline = time.monotonic() + 30
            while got_a[-1] != 999 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)  # b (one hop away as well) would have had it by now
            assert 999 not in got_b and got_a[-1] == 999
            assert b.subscribers("game:x") == 0 and a.subscribers("game:x") == 1
        finally:
            await a.close()
            await b.close()

    run_coroutine(scenario())


def test_subscribe_then_publish_is_not_lost(redis_url):
    async def scenario():
        bus = RedisBus(redis_url)
        await bus.start()
        try:
            got: list[str] = []
            for i in range(20):  # a socket subscribes and at once asks for a broadcast
                bus.subscribe(f"game:{i}", lambda m: got.append(m["id"]))
                bus.publish(f"game:{i}", {"id": str(i)})
            deadline = time.monotonic() + 30
            while len(got) < 20 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert got == [str(i) for i in range(20)]
        finally:
            await bus.close()

    run_coroutine(scenario())


def test_a_game_over_the_redis_bus(redis_url, tmp_path):
    from tests.online.conftest import BASE, FAST, Server, first_legal, state_where
    from tests.webclient import _Client

    from xiangqi.online.rooms import OnlineConfig
    from xiangqi.web.server import create_app

    cfg = OnlineConfig(hasher=FAST, redis_url=redis_url, ping_s=3600)
    app = create_app(tmp_path, public=True, online=cfg, move_provider=first_legal, warmup=False)
    with _Client(app, base_url=BASE) as first:
        s = Server(app, first)
        assert type(s.online.bus).__name__ == "RedisBus"
        a, b, c = s.player(), s.player(), s.player()
        a.guest()
        b.guest()
        gid = s.game_between(a, b, rated=False)
        with a.ws(f"/ws/online/game/{gid}") as wa, c.ws(f"/ws/online/game/{gid}") as wc:
            assert wa.receive_json()["you"] == "red"
            assert wc.receive_json()["you"] is None
            for i, mv in enumerate(["h2e2", "h9g7", "h0g2", "i9h9"]):
                (a if i % 2 == 0 else b).post(f"/games/{gid}/move", json={"move": mv})
                st = state_where(wc, lambda st, n=i + 1: len(st["moves"]) == n)
                assert st["moves"][-1]["iccs"] == mv and st["watchers"] == 1
            b.post(f"/games/{gid}/resign")
            st = state_where(wa, lambda st: st["result"] is not None)
        assert st["result"]["winner"] == "red" and [m["iccs"] for m in st["moves"]] == [
            "h2e2", "h9g7", "h0g2", "i9h9"]
