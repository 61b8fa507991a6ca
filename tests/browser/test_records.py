"""Game records in the browser (issue 4, "In the game"): open PGN/XQF/UBB/EPD/FEN files and pasted
text, browse variations and comments without touching the saved game, play on from a record
position, save as PGN (Chinese/WXF/ICCS) or XQF, switch the move-list notation; byo-yomi clocks."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from xiangqi.core.records import read_records

pytestmark = pytest.mark.browser

DATA = Path(__file__).parent.parent / "data" / "records"
VARIATIONS_XQF = DATA / "xqf" / "cchess_game_varations.xqf"
SAMPLE_XQF = DATA / "xqf" / "xqbase_SAMPLE.XQF"
UBB_TXT = DATA / "dhtmlxq" / "cchess_test_ubb_mainline.txt"
HANDICAP_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/9/1C5C1/9/RN2K2NR w - - 0 1"


def open_file(page, path: Path) -> None:
    """Open a record through the Open dialog's file picker and wait for the record browser."""
    page.click("#btn-open")
    expect(page.locator("#dlg-open")).to_be_visible()
    page.set_input_files("#file-open", str(path))
    # the file is read in a worker process (app/library/sandbox.py): the first one starts cold, slowly
    # under load
    expect(page.locator("#record")).to_be_visible()
    expect(page.locator("#dlg-open")).to_be_hidden()


def record_moves(page) -> list[str]:
    return page.locator("#rc-moves .mv:not(.skip)").all_inner_texts()


def test_variations_xqf_branches_and_back(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    game_id = driver.state()["id"]
    open_file(page, VARIATIONS_XQF)
    # samples/SOURCES.md: cchess_game_varations.xqf has 6 branches (lines from the start to an end).
    expect(page.locator("#rc-summary")).to_have_text("含 5 处变着")
    assert record_moves(page)[:3] == ["炮二平五", "炮8平5", "马二进三"]
    expect(page.locator("#rc-branches")).to_be_hidden()
    page.click("#rc-next")  # after 炮二平五 Black has two recorded answers
    expect(page.locator("#rc-branch-list .branch")).to_have_text(["主线: 炮8平5", "变着 1: 马8进7"])
    page.click("#rc-branch-list .branch >> nth=1")
    expect(page.locator("body")).to_have_attribute("data-record-ply", "2")
    assert record_moves(page)[:2] == ["炮二平五", "马8进7"]
    assert len(record_moves(page)) == 8  # 炮二平五 马8进7 + the variation's main continuation
    expect(page.locator("#rc-back")).to_be_visible()
    page.click("#rc-prev")
    page.click("#rc-prev")
    expect(page.locator("#rc-ply")).to_have_text("0 / 8")
    page.click("#rc-back")  # back to the main line where we left it
    expect(page.locator("#rc-ply")).to_have_text("1 / 8")
    assert record_moves(page)[1] == "炮8平5"
    expect(page.locator("#rc-back")).to_be_hidden()
    # The second branch point of the main line: four recorded moves after 车9进1.
    page.click("#rc-moves .mv[data-pos='6']")
    expect(page.locator("#rc-branch-list .branch")).to_have_count(4)
    # Browsing left the saved current game alone.
    st = page.evaluate("fetch('/api/game').then(r => r.json())")
    assert st["id"] == game_id and [m["iccs"] for m in st["moves"]] == ["h2e2"]
    page.click("#rc-exit")
    expect(page.locator("#game-panel")).to_be_visible()
    assert driver.move_texts() == ["炮二平五"]


def test_comments_and_play_on_from_a_record_position(quick_server, driver, page):
    driver.open(quick_server.url)
    open_file(page, SAMPLE_XQF)
    expect(page.locator("#rc-title")).to_have_text("许银川让九子对聂棋圣 · 许银川 – 聂卫平")
    expect(page.locator("#rc-game-comment")).to_contain_text("象棋让九子原属茶余饭后的娱乐")
    expect(page.locator("#rc-comment")).to_be_hidden()
    page.click("#rc-moves .mv[data-pos='2']")
    expect(page.locator("#rc-comment")).to_have_text("红方首着架中炮必走之着，聂棋圣还架中炮拼兑子力，战术对头。")
    page.click("#rc-next")
    expect(page.locator("#rc-comment")).to_be_hidden()
    expect(page.locator("#rc-ply")).to_have_text("3 / 75")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#rc-ply")).to_have_text("2 / 75")
    page.select_option("#rc-mode", "two")
    old = driver.state()["id"]
    page.click("#rc-play")
    page.wait_for_function(
        f"document.body.dataset.gameId !== '{old}' && document.body.dataset.connected === '1'")
    expect(page.locator("#record")).to_be_hidden()
    st = driver.state()
    assert st["start_fen"] == HANDICAP_FEN
    assert [m["iccs"] for m in st["moves"]] == ["b2e2", "h7e7"]
    assert driver.move_texts() == ["炮八平五", "炮8平5"]
    driver.play("e2e7", 3)  # the game goes on from the record's position: 炮五进五
    assert driver.move_texts()[-1] == "炮五进五"


def test_bad_files_and_pasted_text(quick_server, driver, page, tmp_path):
    driver.open(quick_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    bad = tmp_path / "broken.xqf"
    bad.write_bytes(b"XQ\x12" + b"\x00" * 40)
    page.click("#btn-open")
    page.set_input_files("#file-open", str(bad))
    expect(page.locator("#open-error")).to_have_text(  # in the page's language (issue 10)
        "无法打开： broken.xqf：不是 XQF 文件：只有 43 字节，文件头就有 1024 字节")
    expect(page.locator("#record")).to_be_hidden()
    page.fill("#paste-text", "this is not a game")
    page.click("#btn-paste-open")
    expect(page.locator("#open-error")).to_contain_text("无法打开： 粘贴的文本：没有找到对局")
    page.fill("#paste-text", "   ")
    page.click("#btn-paste-open")
    expect(page.locator("#open-error")).to_have_text("请先粘贴 FEN、PGN 或 UBB 文本")
    # A pasted FEN opens as a position; a pasted ICCS PGN with a variation opens with its branch.
    page.fill("#paste-text", HANDICAP_FEN)
    page.click("#btn-paste-open")
    expect(page.locator("#record")).to_be_visible()
    expect(page.locator("#rc-ply")).to_have_text("0 / 0")
    expect(page.locator("g.xq-piece")).to_have_count(32 - 9)  # 红让九子
    page.click("#btn-open")
    page.fill("#paste-text", '[Format "ICCS"]\n1. h2e2 h9g7 (1... b9c7 2. h0g2) 2. h0g2 {马二进三} *')
    page.click("#btn-paste-open")
    expect(page.locator("#rc-summary")).to_have_text("含 1 处变着")
    page.click("#rc-last")
    expect(page.locator("#rc-comment")).to_have_text("马二进三")
    # Nothing of this reached the saved game: a reload shows it as it was.
    page.reload()
    page.wait_for_selector("body[data-ready='1'][data-connected='1']")
    assert driver.move_texts() == ["炮二平五"]
    # A DhtmlXQ/UBB .txt file opens too.
    open_file(page, UBB_TXT)
    expect(page.locator("#rc-ply")).to_have_text("0 / 77")


def test_move_list_notation_setting_persists(quick_server, driver, page):
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(["h2e2", "h9g7", "h0g2", "i9h9"], start=1):
        driver.play(mv, i)
    assert driver.move_texts() == ["炮二平五", "马8进7", "马二进三", "车9平8"]
    page.click("#btn-settings")
    page.select_option("#set-notation", "wxf")
    page.click("#dlg-settings button.primary")
    assert driver.move_texts() == ["C2.5", "H8+7", "H2+3", "R9.8"]
    page.reload()
    page.wait_for_selector("body[data-ready='1'][data-connected='1']")
    assert driver.move_texts() == ["C2.5", "H8+7", "H2+3", "R9.8"]
    page.click("#btn-settings")
    page.select_option("#set-notation", "iccs")
    page.click("#dlg-settings button.primary")
    assert driver.move_texts() == ["H2-E2", "H9-G7", "H0-G2", "I9-H9"]
    open_file(page, VARIATIONS_XQF)  # the record browser follows the setting
    assert record_moves(page)[:2] == ["H2-E2", "H7-E7"]


def test_save_as_pgn_in_wxf_and_as_xqf(quick_server, driver, page, tmp_path):
    driver.open(quick_server.url)
    driver.new_game("two")
    for i, mv in enumerate(["h2e2", "h9g7", "h0g2"], start=1):
        driver.play(mv, i)

    def save(fmt: str, notation: str | None = None) -> bytes:
        page.click("#btn-save")
        page.check(f"#dlg-save input[name=fmt][value={fmt}]")
        if notation:
            page.check(f"#dlg-save input[name=notation][value={notation}]")
        with page.expect_download() as dl:
            page.click("#btn-download")
        path = tmp_path / dl.value.suggested_filename
        dl.value.save_as(path)
        return path.read_bytes()

    wxf = save("pgn", "wxf").decode("utf-8")
    assert '[Format "WXF"]' in wxf and "1. C2.5 H8+7" in wxf and "2. H2+3" in wxf
    xqf = save("xqf")
    assert xqf[:2] == b"XQ"
    # XQF has no field for the game's ECCO and Opening tags: the page says so (exportnotes.js)
    expect(page.locator("#dlg-export-notes li")).to_have_text(["XQF 没有存放 ECCO, Opening 的字段：已舍去"])
    page.click("#dlg-export-notes button")
    game = read_records(xqf, fmt="xqf")[0]
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h9g7", "h0g2"]
    # A browsed record is saved whole: all six lines of the variations file survive as PGN.
    open_file(page, VARIATIONS_XQF)
    pgn = save("pgn", "chinese")
    again = read_records(pgn, fmt="pgn")[0]
    assert again.count_branches() == 5 and again.count_nodes() == 24


def test_byoyomi_periods_run_and_timeout_loses(quick_server, driver, page):
    driver.open(quick_server.url)
    page.click("#btn-new")
    page.check("#dlg-new input[name=mode][value=two]")
    page.select_option("#sel-tc", "byoyomi")
    expect(page.locator("#in-periods")).to_be_visible()
    page.fill("#in-base", "0")
    page.fill("#in-byo", "3")
    page.fill("#in-periods", "2")
    driver.submit_new_game()
    red = page.locator("#bar-bottom .clock")
    expect(red).to_have_attribute("data-periods", "2")
    expect(red).to_contain_text("读秒 0:0")
    expect(red).to_contain_text("×2")
    # Red overruns one 3 s period (the page counts it down), then moves within the second: the move
    # must land 3-6 s after the new game. It is sent by the API the moment the page shows the first
    # period gone (one request, not two clicks with their waits: clicks under load once took longer
    # than the 3 s left); the page still shows it from its socket
    expect(red).to_have_attribute("data-periods", "1")
    driver.play_by_api("h2e2", 1)
    st = driver.state()
    assert st["clock"]["red_periods"] == 1 and st["result"] is None
    expect(red).to_have_attribute("data-periods", "1")
    expect(red).to_have_text("读秒 0:03")
    # Black does not move: the page counts Black's first period down, then the second, then Black loses.
    black = page.locator("#bar-top .clock")
    expect(black).to_have_attribute("data-periods", "2")
    expect(black).to_have_attribute("data-periods", "1")
    expect(page.locator("#dlg-result")).to_be_visible()
    expect(page.locator("#result-reason")).to_have_text("黑方超时")
    assert driver.state()["result"]["termination"] == "timeout"


def test_multi_game_epd_lets_the_player_choose_a_game(quick_server, driver, page):
    driver.open(quick_server.url)
    open_file(page, DATA / "fen" / "xqwizard_ENDGAMES_A_gbk_big5.EPD")
    expect(page.locator("#rc-game option")).to_have_count(41)
    expect(page.locator("#rc-title")).to_have_text("01.对面笑(一)")
    page.select_option("#rc-game", "2")
    expect(page.locator("#rc-title")).to_have_text("03.双车错(一)")
    assert page.evaluate("window.xqRecord.active")
    expect(page.locator("g.xq-piece[data-sq='h7']")).to_have_attribute("data-piece", "R")


LONG_TITLE_PGN = """[Game "Chinese Chess"]
[Event "第一届全国象棋个人锦标赛（男子组）决赛阶段第十三轮第一台 pyxiangqi-long-title-without-any-spaces"]
[Red "Human"]
[Black "Computer (beginner)"]
[Format "ICCS"]

1. h2e2 h9g7 2. h0g2 i9h9 *
"""


def test_opening_a_record_keeps_the_layout_and_translates_old_names(quick_server, driver, page):
    """A long title wraps inside the fixed-width panel (the board stays put); a record without
    variations shows no variation summary; this program's older English player names (Human,
    Computer (beginner)) show in the interface language."""
    page.set_viewport_size({"width": 1280, "height": 860})
    driver.open(quick_server.url)
    board_before = page.locator(".xq-board").bounding_box()
    panel_before = page.locator(".panel").bounding_box()
    page.click("#btn-open")
    page.fill("#paste-text", LONG_TITLE_PGN)
    page.click("#btn-paste-open")
    expect(page.locator("#record")).to_be_visible()
    expect(page.locator("#rc-title")).to_have_text(
        "第一届全国象棋个人锦标赛（男子组）决赛阶段第十三轮第一台 pyxiangqi-long-title-without-any-spaces"
        " · 棋手 – 电脑·初级")
    assert page.locator(".xq-board").bounding_box() == board_before
    panel = page.locator(".panel").bounding_box()
    assert (panel["x"], panel["width"]) == (panel_before["x"], panel_before["width"])
    assert page.locator("#rc-title").bounding_box()["height"] > 40  # wrapped onto several lines
    expect(page.locator("#rc-summary")).to_be_hidden()
    expect(page.locator("#bar-top .who")).to_have_text("黑方 — 电脑·初级")
    expect(page.locator("#bar-bottom .who")).to_have_text("红方 — 棋手")
    page.click("#rc-exit")
    assert page.locator(".xq-board").bounding_box() == board_before


BROKEN_SECOND = """[Event "A"]
[Red "r1"]
[Black "b1"]

1. h2e2 h9g7 *

[Event "Broken"]
[Red "张三"]
[Black "李四"]
[FEN "rnbakabnr/9/1c5c1 w"]

1. h2e2 *
"""


def test_a_game_with_an_unreadable_start_is_named_and_not_shown(quick_server, driver, page, tmp_path):
    """Before: the game's error had no number, and the picker was left on a game that is not shown."""
    path = tmp_path / "two.pgn"
    path.write_text(BROKEN_SECOND, encoding="utf-8")
    driver.open(quick_server.url)
    open_file(page, path)
    expect(page.locator("#rc-title")).to_have_text("A · r1 – b1")
    page.select_option("#rc-game", "1")
    expect(page.locator("#toast")).to_contain_text(
        "two.pgn：第 2 局（Broken: 张三 vs 李四）：棋谱的起始局面有误")
    expect(page.locator("#rc-game")).to_have_value("0")  # still the game shown, whose moves can be played on
    expect(page.locator("#rc-title")).to_have_text("A · r1 – b1")
    expect(page.locator("#rc-play")).to_be_enabled()


def test_a_file_whose_first_game_is_unreadable_opens_at_the_next_game(quick_server, driver, page, tmp_path):
    """Before: opening the file failed on game 1 and its other games could not be reached."""
    first, second = BROKEN_SECOND.split("\n\n[Event \"Broken\"]")
    path = tmp_path / "broken-first.pgn"
    path.write_text("[Event \"Broken\"]" + second + "\n" + first + "\n", encoding="utf-8")
    driver.open(quick_server.url)
    open_file(page, path)
    expect(page.locator("#rc-title")).to_have_text("A · r1 – b1")
    expect(page.locator("#rc-game")).to_have_value("1")
    expect(page.locator("#rc-errors")).to_contain_text(
        "broken-first.pgn：第 1 局（Broken: 张三 vs 李四）：棋谱的起始局面有误")
    assert record_moves(page) == ["炮二平五", "马8进7"]
