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
