"""What a new online player trips over (public server): the game's address after a seek is accepted,
one player in two games, the clock before the first move, a 404 on every load."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from tests.browser.test_online import open_page, public_server, register, start_game, visitors  # noqa: F401

pytestmark = pytest.mark.browser


def test_both_players_address_bars_show_the_game_after_a_seek_is_accepted(public_server, visitors):  # noqa: F811
    a = open_page(visitors(), public_server.url)
    register(a, "seeker")
    b = open_page(visitors(), public_server.url)
    register(b, "accepter")
    start_game(a, b, rated=False)
    gid = a.get_attribute("body", "data-ol-game") or a.evaluate("window.xqOnline.views.game.id")
    for p in (a, b):
        expect(p).to_have_url(f"{public_server.url}?game={gid}")


def test_the_public_page_loads_without_a_404(public_server, visitors):  # noqa: F811
    ctx = visitors()
    page = ctx.new_page()
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.goto(public_server.url)
    page.wait_for_selector("body[data-ready='1'][data-ol-lobby='1']")
    page.wait_for_load_state("networkidle")
    assert missing == []


def test_guests_address_bars_show_the_game_too(public_server, visitors):  # noqa: F811
    a = open_page(visitors(), public_server.url)
    b = open_page(visitors(), public_server.url)
    start_game(a, b, rated=False)
    gid = a.evaluate("document.body.dataset.olGame")
    assert gid and gid == b.evaluate("document.body.dataset.olGame")
    for p in (a, b):
        expect(p).to_have_url(f"{public_server.url}?game={gid}")
