"""The page shows the game's ECCO opening above the move list and marks the computer's book moves.

The server's computer opens from the shipped book (seeded), so its replies come at once without the
engine kernels; the ECCO code after 炮二平五 and a book reply is checked against the state, and the
mark and the opening line in both languages.
"""

from __future__ import annotations

import threading

import pytest
import uvicorn
from playwright.sync_api import expect
from tests.browser.conftest import listening_socket, wait_started

from xiangqi.app.opponents.players import DEFAULT_BOOK, EnginePlayer
from xiangqi.study.ecco import classify
from xiangqi.web.server import create_app

pytestmark = pytest.mark.browser


@pytest.fixture
def book_server(tmp_path):
    sock = listening_socket()
    port = sock.getsockname()[1]
    app = create_app(tmp_path / "data", player=EnginePlayer(hash_mb=16, book=DEFAULT_BOOK, book_seed=5),
                     warmup=False, engine_delay_s=0.05, port=port)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_started(server, thread)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(timeout=20)


def test_opening_line_and_book_marks(book_server, driver, page):
    driver.open(book_server)
    expect(page.locator("#opening-line")).to_be_hidden()  # no move yet: no opening
    driver.new_game("red", "master")
    driver.play("h2e2", 2)
    driver.play("h0g2", 4)
    st = driver.state()
    moves = [m["iccs"] for m in st["moves"]]
    code, name = classify(moves)
    assert {k: st["opening"][k] for k in ("code", "name")} == {"code": code, "name": name}
    assert st["opening"]["name_en"]  # the English name beside it (study/data/ecco_terms_en.tsv)
    line = page.locator("#opening-line")
    expect(line).to_be_visible()
    expect(line).to_have_text(f"开局 {code} {name}")
    # the computer's two replies came from the book and carry the mark; the player's moves do not
    assert [bool(m.get("book")) for m in st["moves"]] == [False, True, False, True]
    marked = page.locator("#move-list .mv.book")
    expect(marked).to_have_count(2)
    assert marked.first.get_attribute("data-book") == "库"
    assert marked.first.get_attribute("title").endswith("开局库着法")
    assert page.locator("#move-list .mv").first.get_attribute("data-book") is None
    # the mark is drawn beside the move (a CSS ::after), not in its text
    assert driver.move_texts()[1] == st["moves"][1]["chinese"]
    # in English
    page.evaluate("""async () => { const t = document.querySelector('meta[name=xiangqi-token]').content;
        await fetch('/api/settings', {method: 'PUT', headers: {'Content-Type': 'application/json',
        'X-Xiangqi-Token': t}, body: JSON.stringify({language: 'en'})}); }""")
    driver.open(book_server)
    name_en = st["opening"]["name_en"]  # the English page names it in English
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in name_en), name_en
    expect(page.locator("#opening-line")).to_have_text(f"Opening {code} {name_en}")
    assert page.locator("#move-list .mv.book").first.get_attribute("data-book") == "book"
