"""Record files saved as UTF-16 (Windows Notepad's "Unicode"): the format is detected on the text,
not on the raw bytes. A UTF-16 DhtmlXQ file used to be read as a PGN of unknown tags with no move and
no problem (exit 0 from ``xiangqi convert``), a UTF-16 EPD list as "the FEN is not ASCII text".

The files are the UTF-8/GBK samples of tests/data/records (see tests/data/SOURCES.md), re-encoded here."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from xiangqi.app.library.records import load_records
from xiangqi.core.records import detect_format, read_records

DATA = Path(__file__).parent.parent / "data" / "records"
UBB = DATA / "dhtmlxq" / "cchess_test_ubb_mainline.txt"  # UTF-8
EPD = DATA / "fen" / "xqwizard_ENDGAMES_A_gbk_big5.EPD"  # GBK names (and Big5 ones, read as GBK here)


def _utf16(path: Path, source: str, codec: str) -> bytes:
    return path.read_bytes().decode(source, "replace").encode(codec)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf16_dhtmlxq_reads_its_moves(codec: str) -> None:
    data = _utf16(UBB, "utf-8", codec)
    if codec == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    assert detect_format(data) == "dhtmlxq"
    (game,) = read_records(data)
    (plain,) = read_records(UBB.read_bytes())
    assert len(game.mainline_moves()) == 77
    assert game.mainline_moves() == plain.mainline_moves()
    assert game.headers["Red"] == plain.headers["Red"] == "成都 孟辰"
    assert game.errors == []
    (opened,) = load_records(data, "game.txt")  # the page's import
    assert opened.mainline_moves() == plain.mainline_moves()


def test_utf16_epd_reads_its_positions() -> None:
    data = _utf16(EPD, "gbk", "utf-16")
    assert detect_format(data) == "epd"
    games = read_records(data)
    plain = read_records(EPD.read_bytes())
    assert len(games) == len(plain) == 41
    assert [g.headers["FEN"] for g in games] == [g.headers["FEN"] for g in plain]
