"""A file of junk opened as the game (``POST /api/game/open``): the 400 says what is wrong in a few
lines, without the reader's "<data>" placeholder for a file name and without echoing the junk whole.
Before, 1000 NUL bytes gave an 8,171-character detail starting "<data>: no game found …" that
quoted the 1000 bytes twice."""

from __future__ import annotations

import pytest
from tests.webclient import api_client

from xiangqi.core.records import RecordError, read_records
from xiangqi.web.server import create_app


@pytest.fixture
def client(tmp_path):
    with api_client(create_app(tmp_path, warmup=False, engine_delay_s=0)) as c:
        yield c


def test_junk_is_refused_in_a_short_message(client) -> None:
    r = client.post("/api/game/open", content=b"\x00" * 1000,
                    headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 400
    cut = "'" + "\\x00" * 80 + "'… (1000 characters)"
    assert r.json()["detail"] == ("no game found (not a PGN, XQF, DhtmlXQ or EPD record): truncated: the "
                                  f"move text ends in half a move {cut} after ply 0: not a move in ICCS, "
                                  f"Chinese or WXF notation: {cut}")


def test_bytes_have_no_placeholder_name_but_a_path_is_named(tmp_path) -> None:
    with pytest.raises(RecordError) as info:
        read_records(b"hello world")
    assert str(info.value).startswith("no game found (not a PGN, XQF, DhtmlXQ or EPD record): ply 1")
    path = tmp_path / "hello.pgn"
    path.write_bytes(b"hello world")
    with pytest.raises(RecordError) as info:
        read_records(path)
    assert str(info.value).startswith(f"{path}: no game found")


@pytest.mark.parametrize("data, kind", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "a JPEG image"), (b"GIF89a\x01\x00", "a GIF image"),
    (b"%PDF-1.4\n", "a PDF document"), (b"PK\x03\x04\x14\x00", "a ZIP archive"),
    (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "a WebP image")])
def test_a_picture_or_archive_is_named_before_any_decoding(client, data, kind) -> None:
    r = client.post("/api/record/open?name=x.bin", content=data,
                    headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 400
    assert r.json()["detail"] == (f"x.bin: this is {kind}, not a game record; "
                                  "accepted formats: PGN, XQF, DhtmlXQ/UBB, EPD, FEN")
    with pytest.raises(RecordError, match=f"^this is {kind}, not a game record"):
        read_records(data)


def test_a_text_starting_like_riff_is_still_read_as_text() -> None:
    with pytest.raises(RecordError, match="^no game found"):
        read_records(b"RIFF is not a move")
