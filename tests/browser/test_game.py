"""The first slice in a real browser: play against the computer, move list, undo, PGN, restart."""

from __future__ import annotations

import random

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

OPENING = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7"]
OPENING_ZH = ["炮二平五", "马8进7", "马二进三", "车9平8", "车一平二", "马2进3"]


def test_play_a_whole_game_against_the_computer(live_server, driver, page):
    """The human clicks random legal moves; the engine (初级) answers until the game ends."""
    driver.open(live_server.url)
    driver.new_game("red", "beginner")
    rng = random.Random(20261129)
    for _ in range(200):
        st = driver.state()
        if st["result"]:
            break
        assert st["turn"] == "red" and not st["thinking"]
        moves = sorted(m for ms in st["legal"].values() for m in ms)
        n = driver.plies()
        driver.click_move(rng.choice(moves))
        page.wait_for_function(
            f"Number(document.body.dataset.plies) >= {n + 2} && document.body.dataset.thinking === '0'"
            f" || document.body.dataset.result !== ''")
        page.wait_for_selector("body[data-thinking='0']")
    st = driver.state()
    assert st["result"], "the game did not end in 200 moves"
    dialog = page.locator("#dlg-result")
    expect(dialog).to_be_visible()
    expect(page.locator("#result-headline")).to_have_text(st["result"]["headline_zh"])
    expect(page.locator("#result-reason")).to_have_text(st["result"]["why_zh"])
    assert st["result"]["headline_zh"] not in st["result"]["why_zh"]  # said once, not twice
    assert st["result"]["reason_zh"].split(" — ")[0] in ("红胜", "黑胜", "和棋")
    assert len(driver.move_texts()) == len(st["moves"])
    expect(page.locator("#status")).to_have_text(st["result"]["reason_zh"])


def test_known_sequence_gives_exact_move_list(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(OPENING):
        driver.play(mv, i + 1)
    assert driver.move_texts() == OPENING_ZH
    rows = page.locator("#move-list li").all_inner_texts()
    assert [r.split() for r in rows] == [OPENING_ZH[0:2], OPENING_ZH[2:4], OPENING_ZH[4:6]]
    # Last move highlighted on both squares; the moved piece stands on its new square.
    expect(page.locator(".xq-last.from[data-sq='b9']")).to_have_count(1)
    expect(page.locator(".xq-last.to[data-sq='c7']")).to_have_count(1)
    expect(page.locator(".xq-piece[data-sq='c7']")).to_have_attribute("data-piece", "n")


def test_illegal_clicks_do_nothing(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    page.click(".xq-hit[data-sq='e5']")  # empty point
    page.click(".xq-hit[data-sq='h7']")  # a black piece while red is to move
    expect(page.locator(".xq-dest")).to_have_count(0)
    page.click(".xq-hit[data-sq='a0']")  # rook: its legal moves are a1 and a2
    expect(page.locator(".xq-dest")).to_have_count(2)
    page.click(".xq-hit[data-sq='a5']")  # not a destination: deselects, plays nothing
    expect(page.locator(".xq-dest")).to_have_count(0)
    page.wait_for_timeout(200)
    assert driver.plies() == 0 and driver.state()["moves"] == []


def test_check_is_highlighted(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(["h2e2", "c9e7", "e2e6"]):  # 炮五进四: the elephant on e7 is the screen
        driver.play(mv, i + 1)
    expect(page.locator(".xq-piece.in-check[data-sq='e9']")).to_have_count(1)
    expect(page.locator("#status")).to_contain_text("将军")


def test_undo_takes_back_the_full_move(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("red")
    driver.play("h2e2", 2)  # the computer answers at once
    driver.play("h0g2", 4)
    page.click("#btn-undo")
    driver.wait_plies(2)
    assert [m["iccs"] for m in driver.state()["moves"]] == ["h2e2", "a6a5"]
    page.keyboard.press("Control+z")
    driver.wait_plies(0)
    expect(page.locator("#btn-undo")).to_be_disabled()
    expect(page.locator(".xq-piece[data-sq='h2']")).to_have_attribute("data-piece", "C")


@pytest.mark.parametrize("notation", ["iccs", "chinese"])
def test_save_and_reopen_pgn(quick_server, driver, page, tmp_path, notation):
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(OPENING):
        driver.play(mv, i + 1)
    page.click("#btn-save")
    page.check(f"#dlg-save input[name=notation][value={notation}]")
    with page.expect_download() as dl:
        page.click("#btn-download")
    path = tmp_path / "game.pgn"
    dl.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert dl.value.suggested_filename.endswith(".pgn")
    assert '[Game "Chinese Chess"]' in text and '[Result "*"]' in text
    if notation == "iccs":
        assert "1. h2e2 h9g7 2. h0g2 i9h9 3. i0h0 b9c7" in text.replace("-", "").lower()
    else:
        assert "1. 炮二平五 马8进7 2. 马二进三 车9平8 3. 车一平二 马2进3" in text
    driver.new_game("two")
    assert driver.move_texts() == []
    page.click("#btn-open")
    page.set_input_files("#file-open", str(path))
    expect(page.locator("#record")).to_be_visible()  # opened in the record browser
    expect(page.locator("#toast")).to_be_visible()
    assert page.locator("#rc-moves .mv").all_inner_texts() == OPENING_ZH
    assert driver.move_texts() == []  # the current game is untouched until the player plays on
    page.click("#rc-last")
    page.select_option("#rc-mode", "two")
    page.click("#rc-play")
    page.wait_for_selector("body[data-plies='6'][data-connected='1']")
    assert driver.move_texts() == OPENING_ZH


def test_game_is_restored_after_server_restart(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("red", "intermediate")
    driver.play("b2e2", 2)
    before = driver.state()
    quick_server.restart()
    page.reload()
    page.wait_for_selector("body[data-ready='1'][data-connected='1']")
    after = driver.state()
    assert after["id"] == before["id"] and after["moves"] == before["moves"]
    assert driver.move_texts() == [m["chinese"] for m in before["moves"]]
    expect(page.locator("#bar-top .who")).to_contain_text("中级")


def test_page_reconnects_when_the_server_comes_back(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    quick_server.restart()
    page.wait_for_selector("body[data-connected='1']")
    driver.play("h2e2", 1)
    assert driver.move_texts() == ["炮二平五"]


def test_open_the_1982_record_in_the_page(quick_server, driver, page):
    from pathlib import Path

    driver.open(quick_server.url)
    record = Path(__file__).parent.parent / "data" / "records" / "pgn" / "xiangqijs_readme_iccs_1982.pgn"
    page.click("#btn-open")
    page.set_input_files("#file-open", str(record))
    expect(page.locator("#rc-ply")).to_have_text("0 / 125")
    texts = page.locator("#rc-moves .mv").all_inner_texts()
    assert texts[:4] == ["炮八平五", "马2进3", "马八进七", "车1平2"] and texts[-1] == "兵八平九"
    expect(page.locator("#rc-meta")).to_have_text("1982.12.11 · 1/2-1/2")
