"""Saving as XQF in the browser shows what the file could not keep (exportnotes.js, web/export_notes.py)."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from xiangqi.core.records import read_records

pytestmark = pytest.mark.browser

#: Round and ECCO have no XQF field; the Red name (16 GBK bytes) and the date (19) exceed 15 bytes.
RECORD = """[Game "Chinese Chess"]
[Event "全国个人赛"]
[Round "7"]
[Date "1999.12.09 14:30:00"]
[Red "许银川许银川许银"]
[Black "吕钦"]
[Result "*"]
[ECCO "B00"]

1. 炮二平五 马8进7 *
"""


def save_xqf(page, tmp_path) -> bytes:
    page.click("#btn-save")
    page.check("#dlg-save input[name=fmt][value=xqf]")
    with page.expect_download() as dl:
        page.click("#btn-download")
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    return path.read_bytes()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_xqf_save_of_a_record_lists_what_was_dropped_or_cut(quick_server, driver, page, tmp_path, lang):
    driver.open(quick_server.url)
    if lang == "en":
        page.click("#btn-settings")
        page.select_option("#set-language", "en")
        page.click("#dlg-settings button[value=close]")
    page.click("#btn-open")
    page.fill("#paste-text", RECORD)
    page.click("#btn-paste-open")
    expect(page.locator("#record")).to_be_visible()
    data = save_xqf(page, tmp_path)
    assert read_records(data, fmt="xqf")[0].headers["Red"] == "许银川许银川许"
    dlg = page.locator("#dlg-export-notes")
    expect(dlg).to_be_visible()
    items = dlg.locator("li").all_inner_texts()
    if lang == "en":
        assert items == ["XQF has no field for Round, ECCO: dropped",
                         "Date cut to the 15 bytes of its XQF field: "
                         "'1999.12.09 14:30:00' -> '1999.12.09 14:3'",
                         "Red cut to the 15 bytes of its XQF field: '许银川许银川许银' -> '许银川许银川许'"]
        expect(dlg.locator("h2")).to_have_text("Not kept in the XQF file")
    else:
        assert items == ["XQF 没有存放 Round, ECCO 的字段：已舍去",
                         "Date 超出 XQF 字段的 15 字节，已截断：'1999.12.09 14:30:00' → '1999.12.09 14:3'",
                         "Red 超出 XQF 字段的 15 字节，已截断：'许银川许银川许银' → '许银川许银川许'"]
        expect(dlg.locator("h2")).to_have_text("XQF 文件未能保存的内容")
    shots = os.environ.get("XQ_SHOTS")
    if shots:
        page.screenshot(path=f"{shots}/export-notes-{lang}-{page.viewport_size['width']}.png")
    dlg.locator("button").click()
    expect(dlg).to_be_hidden()


def test_xqf_save_of_the_game_names_the_opening_tags_it_drops(quick_server, driver, page, tmp_path):
    """The game's PGN headers carry its ECCO code and opening name (shown live); XQF has no field for them."""
    driver.open(quick_server.url)
    driver.new_game("two")
    driver.play("h2e2", 1)
    data = save_xqf(page, tmp_path)
    assert data[:2] == b"XQ"
    dlg = page.locator("#dlg-export-notes")
    expect(dlg).to_be_visible()
    assert dlg.locator("li").all_inner_texts() == ["XQF 没有存放 ECCO, Opening 的字段：已舍去"]
    dlg.locator("button").click()
    expect(dlg).to_be_hidden()
