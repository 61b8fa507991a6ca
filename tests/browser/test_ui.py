"""UI defects found by playing the page (issue 10): a long game's move list scrolls inside its panel,
the game's actions are closed while a record or library game is browsed, a library replay names the
library game's players, messages come in the page's language, file numbers on both edges, drag and
drop, the board's sounds and the shown check."""

from __future__ import annotations

import json
import random
import re
import urllib.request

import pytest
from playwright.sync_api import expect

from xiangqi.app.play.session import GameSession
from xiangqi.core.board import parse_square

pytestmark = pytest.mark.browser


def long_game(plies: int, seed: int = 10) -> list[str]:
    """``plies`` legal ICCS moves from the start that neither end the game nor repeat forbiddenly
    (random, quiet moves preferred so that the game lasts)."""
    rng = random.Random(seed)
    s = GameSession(red="human", black="human")
    out: list[str] = []
    while len(out) < plies:
        st = s.state()
        moves = sorted(m for ms in st["legal"].values() for m in ms if m not in st["forbidden"])
        quiet = [m for m in moves if not s.board.squares[parse_square(m[2:4])]]
        rng.shuffle(quiet)
        rng.shuffle(moves)
        # quiet moves keep the pieces on the board; a capture now and then keeps the 60-move rule away
        for mv in (moves if len(out) % 25 == 24 else quiet or moves):
            probe = GameSession.from_record(s.to_record())
            probe.play(mv)
            if not probe.is_over:
                break
        s.play(mv)
        out.append(mv)
    return out


def page_fits(page) -> dict:
    """Scroll offset of the page and the boxes of the board and toolbar against the viewport."""
    return page.evaluate("""() => {
        const vh = window.innerHeight, vw = window.innerWidth;
        const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                               return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
        return {scroll: document.scrollingElement.scrollTop, vh, vw, board: box('.xq-board'),
                bar: box('.actions'), bottomBar: box('#bar-bottom'), list: box('#move-list')};
    }""")


def assert_fits(fit: dict) -> None:
    assert fit["scroll"] == 0, fit
    for key in ("board", "bar", "bottomBar"):
        assert fit[key]["top"] >= 0 and fit[key]["bottom"] <= fit["vh"], (key, fit)


def test_long_move_list_scrolls_inside_its_panel_at_1366x768(quick_server, driver, page):
    """120 plies of a two-player game: the page never scrolls, the board and toolbar stay in view,
    the move list scrolls inside the panel with the last move visible. The first 100 plies come
    over the API (the page shows each from its socket; clicks took a minute), the last 20 by clicks."""
    page.set_viewport_size({"width": 1366, "height": 768})
    moves = long_game(120)
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(moves):
        if i < 100:
            driver.play_by_api(mv, i + 1)
        else:
            driver.play(mv, i + 1)
        if i % 10 == 9 or i > 100:
            assert_fits(page_fits(page))
    fit = page_fits(page)
    assert_fits(fit)
    assert page.evaluate("document.scrollingElement.scrollHeight") <= fit["vh"]
    # the list scrolls, its last move in view
    assert page.evaluate("(() => { const l = document.querySelector('#move-list');"
                         " return l.scrollHeight > l.clientHeight; })()")
    last = page.locator("#move-list .mv.current").bounding_box()
    assert fit["list"]["top"] <= last["y"] and last["y"] + last["height"] <= fit["list"]["bottom"] + 1
    page.screenshot(path="/tmp/ui-desktop-120.png")
    # the same 120 plies opened as a PGN in the record browser, stepped through to the end
    with urllib.request.urlopen(quick_server.url + "api/game/pgn?notation=iccs", timeout=60) as res:
        pgn = res.read().decode()
    page.click("#btn-open")
    page.fill("#paste-text", pgn)
    page.click("#btn-paste-open")
    # the record is read in a sandboxed child process: seconds on a busy machine
    expect(page.locator("#rc-ply")).to_have_text("0 / 120")
    for _ in range(30):
        page.keyboard.press("ArrowRight")
    page.click("#rc-last")
    expect(page.locator("#rc-ply")).to_have_text("120 / 120")
    fit = page_fits(page)
    assert fit["scroll"] == 0 and page.evaluate("document.scrollingElement.scrollHeight") <= fit["vh"]
    for key in ("board", "bar"):
        assert fit[key]["top"] >= 0 and fit[key]["bottom"] <= fit["vh"], (key, fit)
    cur = page.locator("#rc-moves .mv.current").bounding_box()
    panel = page.locator(".panel").bounding_box()
    assert panel["y"] <= cur["y"] and cur["y"] + cur["height"] <= panel["y"] + panel["height"]
    page.screenshot(path="/tmp/ui-desktop-120-record.png")


def test_phone_viewport_stays_usable_in_a_long_game(quick_server, driver, page):
    """390x844: 60 plies (the first 48 over the API, the last 12 by taps); the page never scrolls by
    itself, the board and toolbar stay in view, nothing is wider than the screen and the list keeps
    its last move in view."""
    page.set_viewport_size({"width": 390, "height": 844})
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(long_game(60)):
        if i < 48:
            driver.play_by_api(mv, i + 1)
        else:
            driver.play(mv, i + 1)
    fit = page_fits(page)
    assert_fits(fit)
    assert fit["board"]["left"] >= 0 and fit["board"]["right"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.evaluate("(() => { const l = document.querySelector('#move-list');"
                         " return l.scrollHeight > l.clientHeight"
                         " && l.scrollTop + l.clientHeight >= l.scrollHeight - 1; })()")
    page.screenshot(path="/tmp/ui-phone-long.png", full_page=True)


def server_game(server) -> dict:
    """``GET /api/game`` straight from the server (not the page's copy)."""
    with urllib.request.urlopen(server.url + "api/game", timeout=60) as res:
        return json.loads(res.read())


ACTIONS = ["#btn-undo", "#btn-hint", "#btn-draw", "#btn-resign"]


def try_every_action(page) -> None:
    """Click 悔棋/提示/提和/认输 (forced, and by script) and press their keys, confirming any dialog."""
    for sel in ACTIONS:
        page.click(sel, force=True)
        page.locator(sel).dispatch_event("click")  # a scripted click skips the disabled state
        if page.locator("#dlg-confirm").is_visible():
            page.click("#confirm-yes")
    page.locator("body").click(position={"x": 5, "y": 5})
    for key in ("u", "h", "Control+z"):
        page.keyboard.press(key)
    page.wait_for_timeout(400)


def test_actions_are_closed_while_a_record_or_library_game_is_browsed(quick_server, driver, page):
    """Browsing shows another game: 悔棋/提示/提和/认输 are disabled and change nothing in the hidden
    current game (its server state stays the same); closing the browser opens them again."""
    driver.open(quick_server.url)
    driver.new_game("red")
    driver.play("h2e2", 2)  # the computer answers at once
    page.click("#btn-resign")
    page.click("#confirm-yes")  # a finished game for the library
    page.click("#dlg-result button[value=close]")
    driver.new_game("two")
    for i, mv in enumerate(["b2e2", "b9c7", "h0g2"]):
        driver.play(mv, i + 1)
    before = server_game(quick_server)
    for sel in ACTIONS:
        expect(page.locator(sel)).to_be_enabled()

    # an opened record (pasted PGN)
    page.click("#btn-open")
    page.fill("#paste-text", '[Red "许银川"]\n[Black "吕钦"]\n1. 炮二平五 马8进7 2. 马二进三 *')
    page.click("#btn-paste-open")
    expect(page.locator("#record")).to_be_visible()
    for sel in ACTIONS:
        expect(page.locator(sel)).to_be_disabled()
    try_every_action(page)
    after = server_game(quick_server)
    assert after == before
    page.click("#rc-exit")
    for sel in ACTIONS:
        expect(page.locator(sel)).to_be_enabled()

    # a library replay
    page.click("#btn-library")
    page.locator("#lib-rows tr .lib-open").first.click()
    expect(page.locator("#replay")).to_be_visible()
    for sel in ACTIONS:
        expect(page.locator(sel)).to_be_disabled()
    try_every_action(page)
    assert server_game(quick_server) == before
    page.click("#rp-exit")
    expect(page.locator("#btn-resign")).to_be_enabled()
    assert server_game(quick_server)["result"] is None


def test_library_replay_shows_the_library_games_players_in_the_page_language(quick_server, driver, page):
    """The library game was Player vs Computer, the current game two players: the replay's bars name
    the library game's players, in the page's language (stored in Chinese, shown in English too)."""
    driver.open(quick_server.url)
    driver.new_game("red", "intermediate")
    driver.play("h2e2", 2)
    page.click("#btn-resign")
    page.click("#confirm-yes")
    page.click("#dlg-result button[value=close]")
    driver.new_game("two")
    driver.play("h2e2", 1)
    expect(page.locator("#bar-top .who")).to_have_text("黑方 — 棋手")
    page.click("#btn-library")
    row = page.locator("#lib-rows tr").first
    expect(row).to_contain_text("棋手 – 电脑·中级")
    row.locator(".lib-open").click()
    expect(page.locator("#replay")).to_be_visible()
    expect(page.locator("#bar-top .who")).to_have_text("黑方 — 电脑·中级")
    expect(page.locator("#bar-bottom .who")).to_have_text("红方 — 棋手")
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button[value=close]")
    expect(page.locator("#bar-top .who")).to_have_text("Black — Computer (Intermediate)")
    expect(page.locator("#bar-bottom .who")).to_have_text("Red — Human")
    page.click("#rp-exit")
    expect(page.locator("#bar-top .who")).to_have_text("Black — Human")
    page.click("#btn-library")
    expect(page.locator("#lib-rows tr").first).to_contain_text("Human – Computer (Intermediate)")


def core_messages() -> list[str]:
    """English messages the rules library, the app layer and the server really raise for what a
    player can do on the page: bad FENs, illegal moves and move texts, refused game actions, bad
    record files, impossible positions."""
    from xiangqi.app.library.records import open_record, session_from_line
    from xiangqi.app.play.position import validate_position
    from xiangqi.core.board import Board
    from xiangqi.core.errors import XiangqiError
    from xiangqi.core.notation import parse_move

    out: list[str] = []

    def catch(fn, *args) -> None:
        try:
            fn(*args)
        except XiangqiError as exc:
            out.append(str(exc))

    for fen in ["", "9/9/9/9/9/9/9/9/9 w", "4k4/9/9/9/9/9/9/9/9/9 w", "4k4/9/9/9/9/9/9/9/9/6K2 w",
                "4k4/9/9/9/9/9/9/9/9/K8 w", "4k4/9/9/9/9/9/9/9/9/4K4 x", "4k4/9/9/9/9/9/9/9/9/40K4 w",
                "4k4/9/9/9/9/9/9/9/9/4X4 w", "4k4/9/9/9/9/9/9/9/9/4K44 w", "4k4/9/9/9/9/9/9/9/9/4K3 w",
                "4k4/9/9/9/9/9/9/9/PPPPPP3/PPPPK4 w", "4k4/9/9/9/9/9/9/9/9/4K4 w - - x 1",
                "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1 7 8"]:
        catch(Board, fen)
    for iccs in ["e5e6", "h7h6", "a0a3", "a0a5", "e0e2", "zz", "e0e0"]:
        catch(Board().push_iccs, iccs)
    for text in ["炮二进九", "C2+9", "马八进六", "兵五退一", "qq", "C9.5", "炮二乙五"]:
        catch(parse_move, Board(), text)
    s = GameSession(red="human", black="human")
    catch(s.undo)
    s.resign(True)
    catch(s.play, "h2e2")
    catch(s.resign, True)
    for data, name in [(b"", ""), (b"garbage garbage", "x.pgn"), (b"XQ", "bad.xqf"),
                       (b"\xff\xfe\xfa", "a.pgn"), (b"[Event \"x\"]\n1. h2e2 h9g7 *", "a.pgn")]:
        if name == "a.pgn" and b"Event" in data:
            catch(open_record, data, name, 3)
        else:
            catch(open_record, data, name)
    catch(session_from_line, "4k4/9/9/9/9/9/9/9/9/4K4 w", ["a0a1"])
    catch(session_from_line, "bad", [])
    for fen in ["4k4/4A4/9/9/9/9/9/9/9/4K4 w - - 0 1", "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1",
                "3k5/9/9/9/9/9/9/9/9/3KR4 w - - 0 1", "4k4/9/4P4/9/9/9/9/9/9/4K4 w - - 0 1"]:
        _, problems = validate_position(fen)
        out.extend(p.en for p in problems)
        if problems:
            out.append("impossible start position: " + "; ".join(p.en for p in problems))
    out += ["it is the computer's turn; wait for its move", "it is the computer's turn",
            "no human player to resign", "the game is over: no hint", "the game is over: no threat to show",
            "no coach warning for ply 3 to take back (the game moved on)",
            "nothing to undo: the computer plays both sides",
            "the engine gave no hint within 30 s", "no saved game with id 7",
            "PGN file too large: 3000000 bytes (limit 2097152)"]
    # what a full disk or a read-only database answers to a move (the page's toast and status line)
    import sqlite3
    import tempfile

    from xiangqi.app.play.store import Store

    st = Store(tempfile.mkdtemp())
    for code in (13, 8):  # SQLITE_FULL, SQLITE_READONLY
        exc = sqlite3.OperationalError("x")
        exc.sqlite_errorcode = code
        out.append(str(st._storage_error(exc)))
    st.close()
    return out


def hardening_messages(tmp_path, monkeypatch) -> list[str]:
    """English messages of the hardening work (issue 10) that reach the page, each produced by the
    code that sends it: storage errors and start-up notices (app/play/store.py), refused bodies, fields
    and settings (web/limits.py, app/play/settings.py, app/library/sandbox.py), refused WebSocket requests and
    the computer's failures (app/play/hub.py, web/clients.py, app/play/session.py) and the guard's refusals
    (web/security.py)."""
    import asyncio
    import sqlite3
    import time

    import sqlalchemy as sa
    from tests.webclient import api_client, run_coroutine

    from xiangqi.app.library import sandbox
    from xiangqi.app.play import hub as hub_module
    from xiangqi.app.play.hub import GameHub, _engine_failure
    from xiangqi.app.play.store import StorageError, Store
    from xiangqi.core.board import Move
    from xiangqi.core.errors import XiangqiError
    from xiangqi.web import security
    from xiangqi.web.security import LocalGuard
    from xiangqi.web.server import create_app

    out: list[str] = []

    def catch(fn, *args, **kw) -> None:
        try:
            fn(*args, **kw)
        except XiangqiError as exc:
            out.append(str(exc))
        else:
            raise AssertionError(f"{fn} raised nothing")

    # -- storage: SQLite's own errors on a write, as the store words them
    store = Store(tmp_path / "store")
    fault: dict = {}

    @sa.event.listens_for(store.engine, "do_execute")
    def _write(cursor, statement, parameters, context):  # noqa: ANN001
        if fault:
            raise fault["exc"]

    for text, code in [("database or disk is full", None), ("attempt to write a readonly database", None),
                       ("disk I/O error", 10), ("database disk image is malformed", 11),
                       ("disk I/O error", None)]:
        exc = sqlite3.OperationalError(text)
        if code is not None:
            exc.sqlite_errorcode = code
        fault["exc"] = exc
        catch(store.save_current, GameSession())
    fault.clear()
    catch(Store, tmp_path / "store")  # a second store on the data dir (the lock)
    store._open_read_only().dispose()  # the notice of a read-only database
    out.append(store.notices[-1]["message"])
    s = GameSession(red="human", black="human")
    s.play("h2e2")
    s.resign(True)
    store.save_game(s)
    (row,) = store.list_games()
    with store.engine.begin() as conn:
        conn.exec_driver_sql("update games set record = 'not json' where id = ?", (row["id"],))
    catch(store.get_game, row["id"])
    s = GameSession(red="human", black="human")
    s.play("h2e2")
    store.save_current(s)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("update current_game set record = replace(record, 'h2e2', 'a0a5')")
    store.load_current()  # a damaged current game kept aside
    out.append(store.notices[-1]["message"])
    store.close()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "xiangqi.db").write_bytes(b"\x13garbage" * 1000)
    other = Store(damaged)
    out.append(other.notices[-1]["message"])
    other.close()

    # -- sessions and the computer's failures
    catch(GameSession, red="robot")
    catch(GameSession, level="grandmaster")

    def raises(board, level):
        raise RuntimeError("engine crashed")

    def slow(board, level):
        time.sleep(1)

    async def whys():
        found = []
        for provider in (raises, lambda board, level: None, slow):
            hub = GameHub(Store(tmp_path / f"hub{len(found)}"), move_provider=provider)
            hub.engine_timeout_s = 0.1
            found.append((await hub._think(GameSession().snapshot()))[1])
            hub.store.close()
        return found

    for why in run_coroutine(whys()):
        out += [why, _engine_failure(why, 2)["detail_en"]]
    source = open(hub_module.__file__, encoding="utf-8").read()
    for reason in re.findall(r'\.cancel\(\w+, "([^"]+)"\)', source):  # why a hint was dropped
        out.append(str(hub_module.HintCancelledError(f"hint cancelled: {reason}")))
    out.append(str(sandbox.RecordTooComplex(10.0)))
    sent = []
    monkeypatch.setattr(sandbox, "_limit_memory", lambda: None)

    class Conn:
        def send(self, msg):
            sent.append(msg)

        def close(self):
            pass

    def deep():
        raise RecursionError

    def big():
        raise MemoryError

    def bug():
        raise KeyError("x")

    for fn in (deep, big, bug):
        sandbox._child(Conn(), fn, ())
    out += [value for status, value in sent if status == "refused"]

    # -- requests: bodies, fields, settings, WebSocket messages
    def refuses() -> Move:
        return Move.from_iccs("a0a1")

    app = create_app(tmp_path / "app", move_provider=lambda board, level: refuses(), warmup=False,
                     engine_delay_s=0)
    with api_client(app) as c:
        def detail(r) -> None:
            assert 400 <= r.status_code < 500, (r.status_code, r.text)
            out.append(r.json()["detail"])

        post = "/api/game/new"
        for body in [b'\xff\xfe{\x00}\x00', b'{"red": "\xc3"}', b'{"red": NaN}', b'{"red": 1e999}',
                     b"[" * 40 + b"]" * 40, b'{"red": "human", "red": "human"}', b"{", b'{"red": "\\ud800"}',
                     b'{"red": 1' + b"0" * 5000 + b"}", b" " * 70_000]:
            detail(c.post(post, content=body, headers={"Content-Type": "application/json"}))
        detail(c.post(post, json={"red": "human", "colour": "red"}))
        detail(c.post(post, json={"red": 5, "level": ["x"]}))
        detail(c.post("/api/game/move", json={}))
        detail(c.post("/api/game/move", json={"move": "h2e2", "game_id": "nope"}))
        for values in ({"theme": "neon"}, {"colour": "red"}, {"theme": "x" * 3000}):
            detail(c.put("/api/settings", json=values))
        detail(c.post("/api/game/retry"))
        c.post(post, json={"red": "human", "black": "engine"})
        gid = c.post("/api/game/move", json={"move": "h2e2"}).json()["id"]
        with c.websocket_connect(f"/ws/game/{gid}") as ws:
            ws.receive_json()
            for msg in ["{", "x" * 70_000, '{"type": "fly"}', '{"type": "undo", "version": "x"}',
                        '{"type": "undo", "version": 0}', '{"type": "move"}']:
                ws.send_text(msg)
                while (m := ws.receive_json())["type"] != "error":
                    pass
                out.append(m["detail"])
            deadline = time.monotonic() + 30
            while (st := c.get("/api/game").json())["engine_error"] is None and time.monotonic() < deadline:
                time.sleep(0.05)
            out += [st["engine_error"]["detail"], st["engine_error"]["detail_en"]]

    # -- the guard's refusals
    guard = LocalGuard(lambda *a: None, token="secret", port=8765)
    host = (b"host", b"127.0.0.1:8765")
    for kind, headers in [("http", [(b"host", b"evil.example:8765")]), ("http", [host, host]),
                          ("http", [host, (b"origin", b"http://evil.example")]),
                          ("http", [host, (b"sec-fetch-site", b"cross-site"), (b"sec-fetch-dest", b"image")]),
                          ("http", [host]), ("websocket", [host])]:
        scope = {"type": kind, "method": "POST", "headers": headers, "query_string": b""}
        out.append(guard.refusal(scope)[1])
    # -- programs of the server's machine (web/security.py): a LAN device, a public server
    out += [security.THIS_MACHINE_ONLY, security.PUBLIC_NO_PROGRAMS,
            f"start message: {security.THIS_MACHINE_ONLY}"]
    assert all(isinstance(m, str) and m for m in out)
    del asyncio, StorageError
    return out


TOKEN = re.compile(r"'[^']*'|\"[^\"]*\"|\S*/\S*/\S*|\b[a-i]\d[a-i]?\d?\b|\b(?:FEN|ICCS|PGN|XQF|UBB|EPD|WXF|"
                   r"DhtmlXQ|UTF-8|GB18030|GBK|Big5|KABNRCP|[wrbHE]|x\.pgn|bad\.xqf|a\.pgn)\b")

# Words of the protocol and the code that a Chinese text of the hardening messages quotes as they
# are: setting, message and field names and values, header names, Python names, a crashed engine's
# own words, a game id.
CODE_WORDS = re.compile(r"\b(?:engine crashed|localhost|0x[0-9a-f]{2}|human|engine|novice|beginner|"
                        r"intermediate|"
                        r"advanced|master|adaptive|theme|pieces|mode|language|sound|traditional|notation|computer_tendency|talk|talk_speech|move|undo|resign|draw|hint|retry|state|version|red|None|"
                        r"[Hh]ost|Origin|Sec-Fetch-Site|Sec-Fetch-Dest|JSON|NaN|Infinity|UTF-16|UTF-32|"
                        r"RuntimeError|KeyError|data-dir|damaged_games|ud800|udfff|1e999|"
                        r"[0-9a-f]{32})\b")


def test_every_core_message_has_a_chinese_text(quick_server, driver, page, tmp_path, monkeypatch):
    """The page's one message table (messages.js) gives every message above a full Chinese text:
    no rule missing, no English word left (quoted input, FENs, squares, file paths and format names
    aside; a crashed engine's own words in ENGINE_WORDS)."""
    hardening = hardening_messages(tmp_path / "msgs", monkeypatch)
    msgs = core_messages() + hardening
    assert len(msgs) >= 40 and len(hardening) >= 55
    driver.open(quick_server.url)
    got = page.evaluate("""async (msgs) => {
        const m = await import('/static/js/messages.js');
        return msgs.map((x) => m.translate(x));
    }""", msgs)
    bad = []
    for en, r in zip(msgs, got, strict=True):
        rest = TOKEN.sub("", r["text"])
        if en in hardening:
            rest = CODE_WORDS.sub("", rest)
        if not r["ok"] or re.search(r"[A-Za-z]{2,}", rest) or not re.search(r"[\u4e00-\u9fff]", r["text"]):
            bad.append((en, r))
    assert not bad, "\n".join(f"{en!r} -> {r!r}" for en, r in bad)


def test_messages_reach_the_page_in_its_language(quick_server, driver, page):
    """A bad FEN in the editor, a bad pasted record and an illegal move sent on the WebSocket: in
    Chinese mode all Chinese (no `FEN 有误：red must have…`), in English mode all English."""
    driver.open(quick_server.url)
    driver.new_game("two")
    page.click("#btn-edit")
    page.fill("#ed-fen", "4k4/9/9/9/9/9/9/9/9/9 w - - 0 1")
    page.click("#ed-load")
    expect(page.locator("#ed-problems")).to_contain_text("红方必须恰有一个将（帅）")
    assert not re.search(r"[A-Za-z]{3,}", TOKEN.sub("", page.inner_text("#ed-problems")))
    page.click("#ed-exit")
    page.click("#btn-open")
    page.fill("#paste-text", "4k4/9/9/9/9/9/9/9/9/9 w - - 0 1")
    page.click("#btn-paste-open")
    # read in the sandboxed child process: seconds on a busy machine
    expect(page.locator("#open-error")).to_contain_text("红方必须恰有一个将（帅）")
    assert not re.search(r"[A-Za-z]{3,}", TOKEN.sub("", page.inner_text("#open-error")))
    page.fill("#paste-text", "1. h2e2 h9g7 2. a0a5 *")  # a record with a problem: shown above its moves
    page.click("#btn-paste-open")
    expect(page.locator("#rc-errors")).to_contain_text(
        "第 3 步（主线）：着法 a0a5 不合规则：a0 上的车不能走到 a5")
    assert not re.search(r"[A-Za-z]{3,}", TOKEN.sub("", page.inner_text("#rc-errors")))
    page.click("#rc-exit")
    page.evaluate("window.xq.ws.send(JSON.stringify({type: 'move', move: 'e0e2'}))")
    expect(page.locator("#toast")).to_contain_text("着法 e0e2 不合规则")
    assert not re.search(r"[A-Za-z]{3,}", TOKEN.sub("", page.inner_text("#toast")))

    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.click("#dlg-settings button[value=close]")
    page.click("#btn-edit")
    page.fill("#ed-fen", "4k4/9/9/9/9/9/9/9/9/9 w - - 0 1")
    page.click("#ed-load")
    expect(page.locator("#ed-problems")).to_contain_text("red must have exactly one king")
    assert not re.search(r"[\u4e00-\u9fff]", page.inner_text("#ed-problems"))
    page.click("#ed-exit")
    page.evaluate("window.xq.ws.send(JSON.stringify({type: 'move', move: 'e0e2'}))")
    expect(page.locator("#toast")).to_contain_text("illegal move e0e2")
    assert not re.search(r"[\u4e00-\u9fff]", page.inner_text("#toast"))
    # a record this program saved in Chinese: its own names shown in English, its problem too
    page.click("#btn-open")
    page.fill("#paste-text", '[Event "象棋对局"]\n[Red "棋手"]\n[Black "电脑·初级"]\n1. h2e2 h9g7 2. a0a5 *')
    page.click("#btn-paste-open")
    expect(page.locator("#rc-title")).to_have_text("Xiangqi game · Human – Computer (Beginner)")
    expect(page.locator("#rc-errors")).to_contain_text("ply 3 (main line): illegal move a0a5")
    page.click("#btn-settings")
    page.select_option("#set-language", "zh")
    page.click("#dlg-settings button[value=close]")
    expect(page.locator("#rc-title")).to_have_text("象棋对局 · 棋手 – 电脑·初级")
    expect(page.locator("#rc-errors")).to_contain_text("第 3 步（主线）")


def point_center(page, sq: str) -> tuple[float, float]:
    box = page.locator(f".xq-hit[data-sq='{sq}']").bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_file_numbers_on_both_edges_flip_with_the_board(quick_server, driver, page):
    """一…九 along Red's edge right to left as Red sees it, 1…9 along Black's edge right to left as
    Black sees it; flipping the board moves each row of numbers to the other edge."""
    driver.open(quick_server.url)
    driver.new_game("two")

    def numbers(color):
        return page.evaluate("""(color) => [...document.querySelectorAll(`.xq-file.${color}`)]
            .map((e) => { const r = e.getBoundingClientRect();
                          return {text: e.textContent, file: e.dataset.file, x: r.x + r.width / 2, y: r.y}; })
            .sort((a, b) => a.x - b.x)""", color)

    red, black = numbers("red"), numbers("black")
    assert [n["text"] for n in red] == list("九八七六五四三二一")  # left to right for Red: 九 … 一
    assert [n["text"] for n in black] == [str(i) for i in range(1, 10)]  # Black's 1 is file a (Red's left)
    assert red[-1]["file"] == "i" and black[0]["file"] == "a"
    e0 = page.locator(".xq-hit[data-sq='e0']").bounding_box()
    e9 = page.locator(".xq-hit[data-sq='e9']").bounding_box()
    assert red[0]["y"] > e0["y"] + e0["height"] / 2 and black[0]["y"] < e9["y"] + e9["height"] / 2
    # each number stands over its own file
    for n in red:
        box = page.locator(f".xq-hit[data-sq='{n['file']}0']").bounding_box()
        assert abs(n["x"] - (box["x"] + box["width"] / 2)) < 2
    page.click("#btn-flip")
    red, black = numbers("red"), numbers("black")
    assert [n["text"] for n in red] == list("一二三四五六七八九")  # now at the top, seen from Black's side
    assert [n["text"] for n in black] == [str(i) for i in range(9, 0, -1)]
    e0 = page.locator(".xq-hit[data-sq='e0']").bounding_box()
    assert red[0]["y"] < e0["y"] and black[0]["y"] > e0["y"] + e0["height"]


def test_drag_and_drop_with_mouse_and_touch(quick_server, driver, page):
    """A piece dragged to a legal point is played; dropped on an illegal point it goes back and
    nothing is played; a finger drags as well (touch pointer events)."""
    driver.open(quick_server.url)
    driver.new_game("two")
    x0, y0 = point_center(page, "h2")
    x1, y1 = point_center(page, "e2")
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, y0, steps=4)
    expect(page.locator(".xq-piece.dragging[data-sq='h2']")).to_have_count(1)
    expect(page.locator(".xq-dest[data-sq='e2']")).to_have_count(1)  # its points are shown while dragging
    page.mouse.move(x1, y1, steps=4)
    page.mouse.up()
    driver.wait_plies(1)
    assert driver.state()["moves"][0]["iccs"] == "h2e2"
    # an illegal drop: back to its point, nothing played
    x0, y0 = point_center(page, "h9")
    x1, y1 = point_center(page, "h5")
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=6)
    page.mouse.up()
    page.wait_for_timeout(300)
    assert driver.plies() == 1
    box = page.locator(".xq-piece[data-sq='h9']").bounding_box()
    assert abs(box["x"] + box["width"] / 2 - x0) < 3 and abs(box["y"] + box["height"] / 2 - y0) < 3
    # a finger: touch events through the DevTools protocol (Chromium turns them into pointer events)
    cdp = page.context.new_cdp_session(page)
    x0, y0 = point_center(page, "h9")
    x1, y1 = point_center(page, "g7")
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]})
    for k in range(1, 7):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [
            {"x": x0 + (x1 - x0) * k / 6, "y": y0 + (y1 - y0) * k / 6}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    driver.wait_plies(2)
    assert driver.state()["moves"][1]["iccs"] == "h9g7"
    # a click still moves
    driver.play("h0g2", 3)
    assert document_scroll(page) == 0


def document_scroll(page) -> float:
    return page.evaluate("document.scrollingElement.scrollTop")


def test_move_and_capture_sound_like_wood(quick_server, driver, page):
    """The move and capture sounds rendered offline: a short knock (loud at once, gone within
    0.15 s), its zero crossings in a wood-like band; the capture differs (two knocks)."""
    driver.open(quick_server.url)
    res = page.evaluate("""async () => {
        const s = await import('/static/js/sound.js');
        const out = {};
        for (const name of ['move', 'capture']) {
            const rate = 44100, ctx = new OfflineAudioContext(1, Math.round(rate * 0.4), rate);
            const len = s.schedule(ctx, name, 0);
            const d = (await ctx.startRendering()).getChannelData(0);
            const energy = (a, b) => {
                let e = 0;
                for (let i = Math.round(a * rate); i < Math.round(b * rate); i++) e += d[i] * d[i];
                return e;
            };
            let peak = 0, at = 0, zc = 0;
            for (let i = 0; i < d.length; i++) {
                if (Math.abs(d[i]) > peak) { peak = Math.abs(d[i]); at = i / rate; }
            }
            for (let i = 1; i < Math.round(0.03 * rate); i++) if ((d[i - 1] < 0) !== (d[i] < 0)) zc++;
            out[name] = {len, peak, at, total: energy(0, 0.4), early: energy(0, 0.03),
                         late: energy(0.15, 0.4), second: energy(0.05, 0.09), first: energy(0, 0.04),
                         zcHz: zc / 0.03 / 2,
                         samples: Array.from(d.slice(0, 4410))};
        }
        return out;
    }""")
    mv, cap = res["move"], res["capture"]
    for r in (mv, cap):
        assert 0.02 <= r["len"] <= 0.15
        assert 0.05 < r["peak"] <= 1.0 and r["at"] < 0.01  # loud at once, never clipped
        assert r["late"] < 0.01 * r["total"]  # gone within 0.15 s
        assert 150 < r["zcHz"] < 3000  # the band of a wooden knock, not a hiss or a hum
    assert mv["early"] > 0.8 * mv["total"]
    assert cap["second"] > 0.15 * cap["first"]  # the second knock of a capture
    diff = sum((a - b) ** 2 for a, b in zip(mv["samples"], cap["samples"], strict=True))
    assert diff > 0.1 * sum(a * a for a in mv["samples"])


def test_check_is_shown_and_spoken(quick_server, driver, page):
    """A checking move shows 将军！ over the board and says 将军 (Check! / "Check" in English);
    with the sound off it is shown but not spoken."""
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(["h2e2", "c9e7", "e2e6"]):  # 炮五进四: check
        driver.play(mv, i + 1)
    banner = page.locator("#check-banner")
    expect(banner).to_be_visible()
    expect(banner).to_have_text("将军！")
    assert page.get_attribute("body", "data-last-spoken") == "将军"
    expect(banner).to_be_hidden()
    page.click("#btn-settings")
    page.select_option("#set-language", "en")
    page.select_option("#set-sound", "off")
    page.click("#dlg-settings button[value=close]")
    page.evaluate("delete document.body.dataset.lastSpoken")
    page.click("#btn-undo")
    driver.wait_plies(2)
    driver.play("e2e6", 3)
    expect(banner).to_have_text("Check!")
    assert page.get_attribute("body", "data-last-spoken") is None
    page.click("#btn-settings")
    page.select_option("#set-sound", "on")
    page.click("#dlg-settings button[value=close]")
    page.click("#btn-undo")
    driver.wait_plies(2)
    driver.play("e2e6", 3)
    expect(banner).to_have_text("Check!")
    assert page.get_attribute("body", "data-last-spoken") == "Check"


def test_a_full_disk_is_said_in_the_status_line_until_space_is_back(quick_server, driver, page):
    """A move that cannot be saved is not played; the page says why in its status line (in its
    language) until a change is saved again. Before, storage_error was in the state but never shown:
    the status kept inviting a move (also on a read-only database, from the first page load)."""
    from tests.web.test_storage_faults import Disk

    disk = Disk(quick_server.app)
    driver.open(quick_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    disk.full = True
    driver.click_move("h9g7")
    expect(page.locator("#status")).to_contain_text("磁盘已满")
    assert driver.plies() == 1
    disk.full = False
    driver.play("h9g7", 2)
    expect(page.locator("#status")).not_to_contain_text("磁盘")
