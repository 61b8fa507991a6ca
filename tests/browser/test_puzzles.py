"""The puzzle mode in the browser: solve along the solution (rating up), a wrong move refused and
retried, a hint, the next puzzle, a failed attempt (rating down); screenshots for looking at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from xiangqi.app.training.puzzles import Trainer
from xiangqi.study.puzzles import Puzzle

pytestmark = pytest.mark.browser

TWO_ROOKS = Puzzle(id="t-rooks", fen="4k4/9/9/9/9/9/9/9/R7R/3K5 w - - 0 1", solution=["a1a8", "e9f9", "i1i9"],
                   goal="mate", mate=2, themes=["mateIn2"], source="test/constructed", ref={}, rating=1500,
                   check={})
# rated far above the first, so that the first puzzle offered (near 1500) is TWO_ROOKS
MEN_GONG = Puzzle(id="t-mengong", fen="3aka3/3cn4/9/9/C8/9/9/9/4A4/5K3 w - - 0 1", solution=["a5a9"],
                  goal="mate", mate=1, themes=["mateIn1", "menGong"], source="test/other", ref={},
                  rating=1900, check={})
SHOTS = Path(os.environ.get("XQ_SHOTS", "/tmp/shots-puzzles"))


def piece_at(page, sq):
    return page.locator(f".xq-piece[data-sq='{sq}']")


def test_puzzle_mode(quick_server, engine_ready, driver, page):
    quick_server.app.state.puzzle_trainer = Trainer(quick_server.app.state.store.engine,
                                                    puzzles=[TWO_ROOKS, MEN_GONG], seed=3)
    driver.open(quick_server.url)
    page.click("#btn-puzzles")
    page.wait_for_selector("body[data-puzzle-id='t-rooks'][data-puzzle-status='pz_your_move']")
    expect(page.locator("#pz-goal")).to_have_text("红先 · 二步杀")
    assert page.get_attribute("body", "data-puzzle-rating") == "1500"
    # the game's own actions are closed while a puzzle is shown
    expect(page.locator("#btn-undo")).to_be_disabled()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "puzzle-start.png"))
    # 翻转 turns the puzzle's board round (and back)
    box = page.locator("#board").bounding_box()
    mid = box["y"] + box["height"] / 2
    assert piece_at(page, "d0").bounding_box()["y"] > mid
    king_y = "document.querySelector(\".xq-piece[data-sq='d0']\").getBoundingClientRect().y"
    page.click("#btn-flip")
    page.wait_for_function(f"{king_y} < {mid}")
    page.click("#btn-flip")
    page.wait_for_function(f"{king_y} > {mid}")

    # a wrong move (the king steps aside: no mate in two) is refused and taken back
    driver.click_move("d0d1")
    page.wait_for_selector("body[data-puzzle-status='pz_wrong']")
    expect(piece_at(page, "d0")).to_have_count(1)
    expect(piece_at(page, "d1")).to_have_count(0)
    page.screenshot(path=str(SHOTS / "puzzle-wrong.png"))
    # retry: a fresh, clean attempt at the same puzzle
    page.click("#pz-retry")
    page.wait_for_selector("body[data-puzzle-status='pz_your_move']")
    expect(page.locator(".xq-dest")).to_have_count(0)

    driver.click_move("a1a8")
    page.wait_for_selector("body[data-puzzle-status='pz_right']")
    expect(piece_at(page, "f9")).to_have_attribute("data-piece", "k")  # the reply: 将5平4
    driver.click_move("i1i9")
    page.wait_for_selector("body[data-puzzle-status='pz_solved'][data-puzzle-done='1']")
    expect(page.locator("#pz-change")).to_contain_text("1500 →")
    page.wait_for_function("Number(document.body.dataset.puzzleRating) > 1500")
    up = int(page.get_attribute("body", "data-puzzle-rating"))
    expect(page.locator("#pz-player")).to_contain_text("连胜 1")
    page.screenshot(path=str(SHOTS / "puzzle-solved.png"))

    # next: the only unsolved one; a hint names the piece, then the move; solving it counts as failed
    page.click("#pz-next")
    page.wait_for_selector("body[data-puzzle-id='t-mengong'][data-puzzle-status='pz_your_move']")
    expect(page.locator("#pz-goal")).to_have_text("红先 · 一步杀")
    expect(page.locator("#pz-meta")).to_contain_text("闷宫")
    page.click("#pz-hint")
    page.wait_for_selector("body[data-puzzle-status='pz_hint_piece']")
    expect(page.locator(".xq-shape-ring.hint.from[data-sq='a5']")).to_have_count(1)
    expect(page.locator("#pz-status")).to_have_text("提示：走炮")
    expect(page.locator(".xq-arrow.hint")).to_be_hidden()  # a ring on the piece, no arrow yet
    page.screenshot(path=str(SHOTS / "puzzle-hint.png"))
    page.click("#pz-hint")
    expect(page.locator("#pz-status")).to_have_text("提示：炮九进四")
    expect(page.locator(".xq-arrow.hint[data-from='a5'][data-to='a9']:not(.pz-piece)")).to_have_count(1)
    driver.click_move("a5a9")
    page.wait_for_selector("body[data-puzzle-status='pz_solved']")
    page.wait_for_function(f"Number(document.body.dataset.puzzleRating) < {up}")
    expect(page.locator("#pz-change")).to_contain_text("（-")
    expect(page.locator("#pz-player")).to_contain_text("连胜 0")

    # closing gives the game back
    page.click("#pz-exit")
    expect(page.locator("#puzzles")).to_be_hidden()
    expect(page.locator("#game-panel")).to_be_visible()


def test_puzzle_mode_phone(quick_server, engine_ready, driver, page):
    quick_server.app.state.puzzle_trainer = Trainer(quick_server.app.state.store.engine,
                                                    puzzles=[TWO_ROOKS, MEN_GONG], seed=3)
    for name, size in (("desktop", {"width": 1366, "height": 768}), ("phone", {"width": 390, "height": 844})):
        page.set_viewport_size(size)
        driver.open(quick_server.url)
        driver.top_action("#btn-puzzles")
        page.wait_for_selector("body[data-puzzle-status='pz_your_move']")
        page.screenshot(path=str(SHOTS / f"puzzle-{name}.png"), full_page=True)
        driver.top_action("#btn-settings")
        page.select_option("#set-language", "en")
        page.keyboard.press("Escape")
        expect(page.locator("#pz-goal")).to_have_text("Red to move: mate in 2")
        page.screenshot(path=str(SHOTS / f"puzzle-{name}-en.png"), full_page=True)
        driver.top_action("#btn-settings")
        page.select_option("#set-language", "zh")
        page.keyboard.press("Escape")


def test_endgame_practice(quick_server, engine_ready, driver, page):
    from xiangqi.core.board import Board
    from xiangqi.engine import tablebase as tb

    tb.generate("KRKA", quick_server.data_dir / "tablebases")
    table = tb.Tablebase(quick_server.data_dir / "tablebases")
    driver.open(quick_server.url)
    page.click("#btn-endgame")
    page.wait_for_selector("body[data-endgame-status='eg_your_move']")
    expect(page.locator("#eg-name")).to_have_text("单车对将")  # the first table listed
    page.select_option("#eg-ending", "KRKA")
    page.wait_for_function("window.xqEndgame.view && window.xqEndgame.view.ending === 'KRKA'")
    expect(page.locator("#eg-name")).to_have_text("车对士")
    page.click("#eg-dtm")
    page.wait_for_selector("body[data-endgame-dtm]")
    fen = page.evaluate("window.xqEndgame.view.fen")
    pr = table.probe(Board(fen))
    expect(page.locator("#eg-dtm-line")).to_contain_text(f"{(pr.dtm + 1) // 2} 步杀")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "endgame-start.png"))
    driver.click_move(pr.best[0])
    page.wait_for_selector("body[data-endgame-status='eg_kept']")
    page.wait_for_function(
        f"window.xqEndgame.view.moves.length === 2 && window.xqEndgame.view.fen !== '{fen}'")
    after = page.evaluate("window.xqEndgame.view")
    assert table.probe(Board(after["fen"])).dtm == pr.dtm - 2  # the defence resisted longest
    page.click("#eg-undo")
    page.wait_for_selector("body[data-endgame-status='eg_your_move']")
    assert page.evaluate("window.xqEndgame.view.fen") == fen
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "endgame-phone.png"), full_page=True)
    page.click("#eg-exit")
    expect(page.locator("#endgame")).to_be_hidden()
