"""Online play in the browser: a public server (``create_app(public=True)``, docs/ONLINE_API.md)
and several browser contexts (each its own cookie jar: a separate visitor).

The game of the main test is the quickest mate we found from the start position (7 plies, checked
by ``Board.is_checkmate`` in the test): Red's central cannon takes the middle pawn and the second
cannon doubles it on the file (重炮) while Black shuffles its rooks; the advisors box the king in.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import argon2
import pytest
import uvicorn
from playwright.sync_api import expect
from tests.browser.conftest import WAIT_MS, listening_socket, wait_started
from tests.fakeclock import ManualTime

import xiangqi.web
from xiangqi.app.play.clock import REAL_TIME, TimeControl, TimeSource
from xiangqi.core.board import Board
from xiangqi.online.lobby import Preset
from xiangqi.online.rooms import OnlineConfig
from xiangqi.web.server import create_app

pytestmark = pytest.mark.browser

FAST = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # tests only
PASSWORD = "correct horse"
#: Red mates on its 4th move: 炮二平五 车1进1 炮五进四 车9进1 炮八进二 车1退1 炮八平五.
MATE = ["h2e2", "a9a8", "e2e6", "i9i8", "b2b4", "a8a9", "b4e4"]


#: A two-second game (tests only: the server's time-out within the test's time).
TWO_SECONDS = Preset("2s", TimeControl("fischer", base_s=2, increment_s=0))


def first_legal(board, _level):
    """The computer's move in computer games: the first legal move in ICCS order (instant)."""
    return min(board.legal_moves, key=lambda m: m.iccs())


class PublicServer:
    """``xiangqi serve --public`` in a thread: uvicorn on a free port, its own data dir."""

    def __init__(self, data_dir: Path, grace_s: float = 20.0, time_source: TimeSource = REAL_TIME) -> None:
        self._sock = listening_socket()
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        cfg = OnlineConfig(hasher=FAST, grace_s=grace_s, bullet_grace_s=grace_s, move_provider=first_legal,
                           presets={"2s": TWO_SECONDS}, time_source=time_source)
        self.app = create_app(data_dir, public=True, online=cfg, move_provider=first_legal, warmup=False,
                              port=self.port)
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                     log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        daemon=True)

    def start(self) -> PublicServer:
        self._thread.start()
        wait_started(self._server, self._thread)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=20)


@pytest.fixture
def public_server(tmp_path) -> Iterator[PublicServer]:
    srv = PublicServer(tmp_path / "data").start()
    yield srv
    srv.stop()


@pytest.fixture
def quick_grace_server(tmp_path) -> Iterator[PublicServer]:
    """A public server whose disconnect grace period is one second (the claim test)."""
    srv = PublicServer(tmp_path / "data", grace_s=1.0).start()
    yield srv
    srv.stop()


@pytest.fixture
def still_time_server(tmp_path) -> Iterator[PublicServer]:
    """A public server whose games' clocks stand still (tests/fakeclock.py): no time runs out."""
    srv = PublicServer(tmp_path / "data", time_source=ManualTime()).start()
    yield srv
    srv.stop()


@pytest.fixture
def visitors(browser, browser_context_args):
    """``visitors()`` opens a new browser context (a separate visitor with its own cookies)."""
    made = []

    def new():
        ctx = browser.new_context(**browser_context_args)
        ctx.set_default_timeout(WAIT_MS)
        made.append(ctx)
        return ctx

    yield new
    for ctx in made:
        ctx.close()


def open_page(ctx, url: str):
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(url)
    page.wait_for_selector("body[data-ready='1'][data-ol-lobby='1']")
    return page


def register(page, name: str, password: str = PASSWORD) -> None:
    page.click("#ol-register")
    page.fill("#ol-username", name)
    page.fill("#ol-password", password)
    page.click("#ol-account-submit")
    expect(page.locator("body")).to_have_attribute("data-ol-kind", "user")
    expect(page.locator("#ol-me")).to_have_text(name)


def click_move(page, iccs: str) -> None:
    page.click(f".xq-hit[data-sq='{iccs[:2]}']")
    expect(page.locator(f".xq-dest[data-sq='{iccs[2:4]}']")).to_have_count(1)
    page.click(f".xq-hit[data-sq='{iccs[2:4]}']")


def wait_plies(*pages, n: int) -> None:
    for p in pages:
        expect(p.locator("body")).to_have_attribute("data-ol-plies", str(n))


def start_game(a, b, *, rated: bool, tc: str = "5+3"):
    """``a`` seeks (Red), ``b`` accepts from the live lobby; both pages end on the game."""
    a.click(f".ol-tc[data-tc='{tc}']")
    a.click("#ol-rated" if rated else "#ol-casual")
    a.click(".ol-seg [data-color='red']")
    a.click("#ol-create-seek")
    expect(a.locator("#ol-my-seek")).to_be_visible()
    row = b.locator("#ol-seeks tr[data-seek]")
    expect(row).to_have_count(1)  # the lobby socket brought it
    b.locator("#ol-seeks .ol-accept").click()
    for p, seat in ((a, "red"), (b, "black")):
        expect(p.locator("body")).to_have_attribute("data-ol-status", "playing")
        expect(p.locator("body")).to_have_attribute("data-ol-seat", seat)


@pytest.mark.slow
@pytest.mark.ci
def test_rated_game_seek_accept_watch_reconnect_mate_and_ratings(public_server, visitors):
    """Three visitors and a whole game (about 12 s on a quiet machine): CI runs it in its slow pass."""
    board = Board()
    for m in MATE:
        board.push_iccs(m)
    assert board.is_checkmate()

    a = open_page(visitors(), public_server.url)
    register(a, "红方棋手")
    bctx = visitors()
    b = open_page(bctx, public_server.url)
    register(b, "black_player")
    start_game(a, b, rated=True)
    expect(a.locator("#ol-bar-bottom .who")).to_contain_text("红方棋手")
    expect(a.locator("#ol-bar-top .who")).to_contain_text("black_player")
    expect(b.locator("#ol-bar-bottom .who")).to_contain_text("black_player")  # Black sits at the bottom
    expect(a.locator("#ol-bar-top .ol-rating")).to_have_text("1500？ · 常侍")  # provisional mark, rank name
    expect(a.locator("#ol-abort")).to_be_visible()
    expect(a.locator("#ol-resign")).to_be_hidden()  # abort, not resign, before the first moves

    # a third visitor watches from the lobby's list of games
    c = open_page(visitors(), public_server.url)
    game_row = c.locator("#ol-games tr[data-game]")
    expect(game_row).to_have_count(1)
    game_row.locator(".ol-watch").click()
    expect(c.locator("body")).to_have_attribute("data-ol-seat", "watch")
    expect(c.locator("#ol-meta")).to_contain_text("观战中")
    expect(a.locator("#ol-meta")).to_have_attribute("data-watchers", "1")
    expect(c.locator("#ol-buttons, #ol-resign")).to_be_hidden()

    # no clock runs before its side's first move (app/play/clock.py, "First moves"): both stay at 5:00
    red_clock = a.locator("#ol-bar-bottom .clock")
    expect(red_clock).not_to_have_class("clock running")
    expect(red_clock).to_have_text("5:00")
    expect(a.locator("#ol-bar-top .clock")).to_have_text("5:00")

    t0 = time.monotonic()  # Black's clock cannot have run longer than the moves take from here
    for i, mv in enumerate(MATE[:5]):
        click_move(a if i % 2 == 0 else b, mv)
        wait_plies(a, b, c, n=i + 1)
    expect(a.locator("#ol-resign")).to_be_visible()  # past the first moves: no abort any more
    expect(c.locator("#ol-moves .mv")).to_have_count(5)
    expect(c.locator("#ol-moves .mv").first).to_have_text("炮二平五")
    black_ms = int(b.locator("#ol-bar-bottom .clock").get_attribute("data-ms"))
    # 5 min and +3 s for Black's second move (the first move is free: not timed, no increment), less
    # what Black used: at most the time the five moves took (measured: a loaded machine takes seconds)
    used_at_most_ms = (time.monotonic() - t0) * 1000
    assert 303_000 - used_at_most_ms - 1000 < black_ms <= 303_000, (black_ms, used_at_most_ms)

    # Black closes the tab; Red sees the opponent leave; Black's new tab comes back into the game
    b.close()
    expect(a.locator("#ol-bar-top")).to_have_attribute("data-connected", "0")
    b = open_page(bctx, public_server.url)
    expect(b.locator("body")).to_have_attribute("data-ol-view", "game")
    expect(b.locator("body")).to_have_attribute("data-ol-seat", "black")
    wait_plies(b, n=5)
    expect(a.locator("#ol-bar-top")).to_have_attribute("data-connected", "1")
    assert b.url.endswith(f"/?game={a.get_attribute('body', 'data-ol-game')}")

    click_move(b, MATE[5])
    wait_plies(a, b, c, n=6)
    click_move(a, MATE[6])
    for p in (a, b, c):
        expect(p.locator("body")).to_have_attribute("data-ol-status", "finished")
        expect(p.locator("#ol-headline")).to_have_text("红胜")
    expect(a.locator("#ol-status")).to_have_text("红胜 — 将死")
    up = a.locator(".ol-rating-change[data-color='red']")
    down = a.locator(".ol-rating-change[data-color='black']")
    expect(up).to_contain_text("红方棋手：1500 → ")
    assert int(up.get_attribute("data-after")) > 1500 > int(down.get_attribute("data-after"))
    expect(c.locator("#ol-moves .mv")).to_have_count(7)

    # the winner's profile: the blitz rating went up, the game is listed, the chart has its point
    after = up.get_attribute("data-after")
    a.click("#ol-me")
    card = a.locator(".ol-rating-card[data-category='blitz']")
    expect(card).to_have_attribute("data-rating", after)
    expect(card.locator(".pf-rating")).to_have_text(f"{after}？")  # still provisional after one game
    expect(a.locator("#ol-player-stats")).to_contain_text("1 局：1 胜 0 负 0 和")
    expect(a.locator("#ol-player-games tbody tr")).to_have_count(1)
    expect(a.locator("#ol-player-games tbody tr td").nth(4)).to_have_text("胜 · 将死")
    expect(a.locator("#ol-chart .pf-dot")).to_have_count(1)
    # the leaderboard lists both, the winner first
    a.click("#ol-nav-leaderboard")
    rows = a.locator("#ol-ranking tbody tr[data-user]")
    expect(rows).to_have_count(2)
    expect(rows.first).to_have_attribute("data-user", "红方棋手")
    for p in (a, b, c):
        assert not p.errors, p.errors


def test_account_errors_are_said_clearly(public_server, visitors):
    a = open_page(visitors(), public_server.url)
    register(a, "taken_name")
    a.click("#ol-logout")
    expect(a.locator("#ol-login")).to_be_visible()
    expect(a.locator("body")).to_have_attribute("data-ol-kind", "")

    a.click("#ol-register")
    a.fill("#ol-username", "Taken_Name")  # the same name in another case
    a.fill("#ol-password", PASSWORD)
    a.click("#ol-account-submit")
    expect(a.locator("#ol-account-error")).to_have_text("用户名“Taken_Name”已被别人使用，请换一个")
    a.fill("#ol-username", "new_name")
    a.fill("#ol-password", "short")  # checked by the page before a round trip
    a.click("#ol-account-submit")
    expect(a.locator("#ol-account-error")).to_have_text("密码须为 8–128 个字符")
    a.fill("#ol-username", "no spaces")
    a.click("#ol-account-submit")
    expect(a.locator("#ol-account-error")).to_have_text("用户名只能含汉字、字母、数字、_ 和 -")
    a.fill("#ol-username", "admin")
    a.fill("#ol-password", PASSWORD)
    a.click("#ol-account-submit")  # reserved: the server says so
    expect(a.locator("#ol-account-error")).to_have_text("“admin”是保留的名字，请换一个")

    a.click("#dlg-account [data-tab='login']")
    # the page's handling of a throttled login: a first delay of 10 minutes (the server's is 1 s,
    # which a slow machine could outlast between two clicks), so the sixth try is refused for certain
    from xiangqi.online.accounts import PAIR_WINDOW_S, LoginLimiter, Throttle

    accounts = public_server.app.state.online.accounts
    kept = accounts.limiter
    accounts.limiter = LoginLimiter(pair=Throttle(free=5, window_s=PAIR_WINDOW_S, base_s=600.0, cap_s=900.0))
    try:
        for _ in range(5):
            a.fill("#ol-username", "taken_name")
            a.fill("#ol-password", "wrong password")
            a.click("#ol-account-submit")
            expect(a.locator("#ol-account-error")).to_have_text("用户名或密码不对")
            a.locator("#ol-account-error").evaluate("e => { e.textContent = ''; }")
        a.click("#ol-account-submit")  # the sixth: refused with the seconds to wait
        expect(a.locator("#ol-account-error")).to_contain_text("尝试次数太多，请 ")
        wait = int(a.locator("#ol-account-error").get_attribute("data-wait"))
        assert 500 < wait <= 600
        expect(a.locator("#ol-account-submit")).to_be_disabled()
    finally:
        accounts.limiter = kept
    assert not a.errors, a.errors


@pytest.mark.slow
@pytest.mark.ci
def test_draw_offer_takeback_abort_and_resign(public_server, visitors):
    """Three games (about 10 s on a quiet machine): CI runs it in its slow pass."""
    a = open_page(visitors(), public_server.url)
    register(a, "alice")
    b = open_page(visitors(), public_server.url)
    register(b, "bobby")
    start_game(a, b, rated=False, tc="10+5")
    expect(a.locator("#ol-meta")).to_contain_text("10+5 快棋 · 不计分")
    click_move(a, "h2e2")
    wait_plies(a, b, n=1)
    click_move(b, "h9g7")
    wait_plies(a, b, n=2)

    # takeback: Black asks, Red agrees; Black's move is taken back
    b.click("#ol-takeback")
    expect(b.locator("#ol-offer")).to_have_text("你请求悔棋，等待对方同意")
    expect(a.locator("#ol-offer")).to_contain_text("对方请求悔棋")
    a.click("#ol-takeback-accept")
    wait_plies(a, b, n=1)
    expect(b.locator("body")).to_have_attribute("data-ol-turn", "black")
    expect(a.locator("#ol-offer")).to_be_hidden()

    # a draw offer declined, then one accepted
    click_move(b, "b9c7")
    wait_plies(a, b, n=2)
    a.click("#ol-draw")
    expect(a.locator("#ol-offer")).to_have_text("你已提和，等待对方答复")
    expect(a.locator("#ol-draw")).to_be_disabled()
    b.click("#ol-draw-decline")
    expect(a.locator("#ol-offer")).to_be_hidden()
    expect(a.locator("#toast")).to_have_text("对方拒绝和棋")
    click_move(a, "b2c2")
    wait_plies(a, b, n=3)
    click_move(b, "h9g7")  # each side has made two moves: a draw now is a result (before: aborted)
    wait_plies(a, b, n=4)
    b.click("#ol-draw")
    a.click("#ol-draw-accept")
    for p in (a, b):
        expect(p.locator("body")).to_have_attribute("data-ol-status", "finished")
        expect(p.locator("#ol-headline")).to_have_text("和棋")
    expect(a.locator(".ol-rating-change")).to_have_count(0)  # casual: no rating change

    # a second game, aborted before the first moves; a third, resigned
    a.click("#ol-back-lobby")
    b.click("#ol-back-lobby")
    start_game(a, b, rated=False, tc="10+5")
    expect(b.locator("#ol-abort")).to_be_visible()
    b.click("#ol-abort")
    b.click("#confirm-yes")
    for p in (a, b):
        expect(p.locator("body")).to_have_attribute("data-ol-status", "aborted")
        expect(p.locator("#ol-status")).to_have_text("对局已取消（不计结果）")
    b.click("#ol-back-lobby")
    a.click("#ol-back-lobby")
    start_game(a, b, rated=False, tc="10+5")
    for i, mv in enumerate(["h2e2", "h9g7", "b2c2", "b9c7"]):
        click_move(a if i % 2 == 0 else b, mv)
        wait_plies(a, b, n=i + 1)
    b.click("#ol-resign")
    b.click("#confirm-yes")
    expect(a.locator("#ol-headline")).to_have_text("红胜")
    expect(a.locator("#ol-status")).to_have_text("红胜 — 黑方认输")
    assert not a.errors and not b.errors, a.errors + b.errors


#: Logs, in ``window.clockClasses``, each class the clock inside the element ``selector`` takes (a
#: MutationObserver: every change, however short it lasts).
CLOCK_CLASSES = """(selector) => {
  const bar = document.querySelector(selector), seen = window.clockClasses = [];
  const note = () => { const c = bar.querySelector('.clock'); if (c) seen.push(c.className); };
  new MutationObserver(note).observe(bar, {subtree: true, childList: true, attributes: true,
                                           attributeFilter: ['class']});
  note(); }"""


def test_claim_after_the_opponent_left(quick_grace_server, visitors):
    a = open_page(visitors(), quick_grace_server.url)
    register(a, "stayer")
    bctx = visitors()
    b = open_page(bctx, quick_grace_server.url)
    register(b, "leaver")
    start_game(a, b, rated=True)
    click_move(a, "h2e2")
    wait_plies(a, b, n=1)
    b.close()
    expect(a.locator("#ol-bar-top")).to_have_attribute("data-connected", "0")
    expect(a.locator("#ol-claim-win")).to_be_visible()  # after the 1 s grace period
    expect(a.locator("#ol-claim")).to_contain_text("对方已断线：你可以判胜")
    a.click("#ol-claim-win")  # one ply played: the claim aborts the game (no result, no rating)
    expect(a.locator("body")).to_have_attribute("data-ol-status", "aborted")
    expect(a.locator("#ol-status")).to_have_text("对局已取消（不计结果）")

    # a two-second game against the computer: the clocks stand until each side's first move (lichess's
    # rule), then Red does not move again and the server's flag falls
    a.click("#ol-back-lobby")
    a.click(".ol-tc[data-tc='2s']")
    a.click(".ol-seg [data-color='red']")
    a.click(".ol-computer[data-level='beginner']")
    expect(a.locator("body")).to_have_attribute("data-ol-status", "playing")
    expect(a.locator("#ol-bar-bottom .clock")).to_have_class("clock low")  # not running before Red's move
    # Red's clock runs for 2 s only: every class it takes is logged in the page (an expect polling
    # for "running" can miss those 2 s on a loaded machine)
    a.evaluate(CLOCK_CLASSES, "#ol-bar-bottom")
    click_move(a, "h2e2")
    expect(a.locator("body")).to_have_attribute("data-ol-status", "finished")
    assert "clock low running" in a.evaluate("window.clockClasses")  # under 10 s: red; it ran
    expect(a.locator("#ol-headline")).to_have_text("黑胜")
    expect(a.locator("#ol-status")).to_contain_text("超时")
    expect(a.locator("#ol-bar-bottom .clock")).to_have_text("0:00")
    assert not a.errors, a.errors


def test_challenge_link_and_a_guest_against_the_computer(public_server, visitors):
    a = open_page(visitors(), public_server.url)
    register(a, "host_player")
    a.click(".ol-seg [data-color='black']")
    a.click("#ol-challenge-friend")
    link = a.locator("#ol-challenge-url").input_value()
    assert link.startswith(public_server.url + "?challenge=")
    # the friend opens the link without an account: a casual challenge is accepted as a guest
    f = open_page(visitors(), link)
    expect(f.locator("#ol-challenge")).to_contain_text("host_player 邀请你下一盘棋")
    expect(f.locator("#ol-challenge .ol-terms")).to_contain_text("5+3")
    expect(f.locator("#ol-challenge .ol-terms")).to_contain_text("你执红")
    f.click("#ol-accept-challenge")
    expect(f.locator("body")).to_have_attribute("data-ol-seat", "red")
    expect(a.locator("body")).to_have_attribute("data-ol-seat", "black")  # the lobby socket's game_start
    expect(f.locator("body")).to_have_attribute("data-ol-kind", "guest")
    expect(f.locator("#ol-me")).to_contain_text("游客")
    # the host looks at the lobby meanwhile: its game in progress has a way back
    a.click("#ol-back-lobby")
    back = a.locator(".ol-my-game")
    expect(back).to_contain_text("你的对局正在进行")
    back.locator("button").click()
    expect(a.locator("body")).to_have_attribute("data-ol-seat", "black")

    # the guest leaves for the lobby and plays the computer (casual), which answers at once
    g = open_page(visitors(), public_server.url)
    expect(g.locator("#ol-rated")).to_be_disabled()  # guests play casual games only
    g.click(".ol-seg [data-color='red']")
    g.click(".ol-computer[data-level='beginner']")
    expect(g.locator("body")).to_have_attribute("data-ol-seat", "red")
    expect(g.locator("#ol-bar-top .who")).to_contain_text("电脑·初级")
    click_move(g, "h2e2")
    wait_plies(g, n=2)
    expect(g.locator("#ol-status")).to_have_text("轮到你走")
    # the English page
    g.evaluate("() => { document.querySelector('#set-language').value = 'en';"
               " document.querySelector('#set-language').dispatchEvent(new Event('change')); }")
    expect(g.locator("#ol-status")).to_have_text("Your move")
    expect(g.locator("#ol-bar-top .who")).to_contain_text("Computer (Beginner)")
    for p in (a, f, g):
        assert not p.errors, p.errors


def _keys(block: str) -> set[str]:
    """The keys of a JS object literal's text entries (``key: "…"``), string contents blanked first."""
    blank = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', block)
    return set(re.findall(r"(?:^|[\s{,])([a-z][a-z0-9_]*):\s*\"\"", blank))


def _tables(src: str) -> dict[str, set[str]]:
    """The keys of each language in a file of i18n tables (``zh: {…}``, ``Object.assign(TEXT.en, {…})``)."""
    out: dict[str, set[str]] = {"zh": set(), "en": set()}
    parts = re.split(r"(?:\n  |TEXT\.)(zh|en)(?:: \{|, \{)", src)
    for lang, block in zip(parts[1::2], parts[2::2], strict=True):
        out[lang] |= _keys(block.split("\n}", 1)[0] if lang else block)
    return out


def test_every_text_of_the_online_page_exists_in_both_languages():
    """Each key the online modules ask for (t("…"), data-i18n) is in the zh and the en table."""
    js = Path(xiangqi.web.__file__).parent / "static" / "js"
    own = _tables((js / "onlinetext.js").read_text(encoding="utf-8"))
    shared = _tables((js / "i18n.js").read_text(encoding="utf-8"))
    assert len(own["zh"]) > 150 and own["zh"] == own["en"]
    zh, en = own["zh"] | shared["zh"], own["en"] | shared["en"]
    used: set[str] = set()
    for name in ("online.js", "lobby.js", "onlinegame.js", "onlineprofile.js"):
        src = (js / name).read_text(encoding="utf-8")
        used |= set(re.findall(r"\bt\(\"([a-z][a-z0-9_]*)\"", src))
        used |= set(re.findall(r"\"data-i18n\": \"([a-z][a-z0-9_]*)\"", src))
        used |= set(re.findall(r"\"((?:ol|cat|term)_[a-z0-9_]+)\"", src))
    assert len(used) > 100
    assert sorted(used - zh) == [] and sorted(used - en) == []


def test_the_first_move_countdown_shows_until_each_side_has_moved(still_time_server, visitors):
    """GameState first_move_ms (ONLINE_API.md section 5): the side to move sees its first move's
    time (blitz: 25 s, the server's clock standing still), its opponent too; gone after its move."""
    a = open_page(visitors(), still_time_server.url)
    b = open_page(visitors(), still_time_server.url)
    register(a, "first_red")
    register(b, "first_black")
    start_game(a, b, rated=False)
    mine, theirs = a.locator("#ol-bar-bottom .ol-first-move"), b.locator("#ol-bar-top .ol-first-move")
    expect(mine).to_have_text(re.compile(r"^请走第一步：(25|2[0-4]) 秒$"))  # counted down on the page
    expect(theirs).to_have_text(re.compile(r"^对方须在 (25|2[0-4]) 秒内走第一步$"))
    assert 0 < int(mine.get_attribute("data-ms")) <= 25_000
    expect(a.locator("#ol-bar-top .ol-first-move")).to_be_hidden()  # Black's comes after Red's move
    shots = os.environ.get("XQ_SHOTS")
    if shots:  # the sign-in toast would cover the bar
        a.evaluate("() => { document.querySelector('#toast').hidden = true; }")
        a.screenshot(path=f"{shots}/online-first-move-desktop.png")
        b.screenshot(path=f"{shots}/online-first-move-opponent-desktop.png")
        size = b.viewport_size
        b.set_viewport_size({"width": 390, "height": 844})
        b.screenshot(path=f"{shots}/online-first-move-opponent-phone.png")
        b.set_viewport_size(size)
    # in English (the page's language setting): the same countdown, the same bar
    b.click("#btn-settings")
    b.select_option("#set-language", "en")
    b.click("#dlg-settings button[value=close]")
    expect(theirs).to_have_text(re.compile(r"^Your opponent must make a first move within \d+ s$"))
    click_move(a, "h2e2")
    wait_plies(a, b, n=1)
    expect(mine).to_be_hidden()
    black_first = b.locator("#ol-bar-bottom .ol-first-move")
    expect(black_first).to_have_text(re.compile(r"^Make your first move: \d+ s$"))
    expect(a.locator("#ol-bar-top .ol-first-move")).to_have_text(re.compile(r"^对方须在 \d+ 秒内走第一步$"))
    click_move(b, "h9g7")
    wait_plies(a, b, n=2)
    for p in (a, b):
        expect(p.locator("body")).to_have_attribute("data-ol-first-move", "")
        expect(p.locator(".ol-first-move:visible")).to_have_count(0)
    assert not a.errors and not b.errors, (a.errors, b.errors)
