"""A picture (or another file that is no game record) opened through 打开: the dialog names what the
file is and which formats are accepted, and quotes none of its bytes (issue 31, item 6: a PNG showed as
garbled text)."""

from __future__ import annotations

import struct
import zlib

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def tiny_png() -> bytes:
    """A valid 1×1 PNG (PNG spec: signature, IHDR, IDAT, IEND chunks with their CRCs)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


@pytest.mark.parametrize("name, data, kind", [
    ("board.png", tiny_png(), "PNG 图片"),
    ("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) * 4, "JPEG 图片"),
    ("book.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< >>\nendobj\n" * 5, "PDF 文档"),
])
def test_a_picture_is_named_not_shown(quick_server, driver, page, tmp_path, name, data, kind):
    driver.open(quick_server.url)
    path = tmp_path / name
    path.write_bytes(data)
    page.click("#btn-open")
    page.set_input_files("#file-open", str(path))
    err = page.locator("#open-error")
    expect(err).to_be_visible()
    expect(err).to_have_text(f"无法打开： {name}：这是{kind}，不是棋谱；"
                             "可以打开的格式：PGN、XQF、DhtmlXQ/UBB、EPD、FEN")
    expect(page.locator("#record")).to_be_hidden()
