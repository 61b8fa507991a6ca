"""One stray byte in a GBK comment: the text is decoded with a replacement and a warning names the byte,
the game and the ply; the moves are all kept (it used to reject the whole file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi.core.encoding import RecordEncodingError, decode_lenient
from xiangqi.core.records import read_records

SAMPLE = Path(__file__).parent.parent / "data" / "records" / "pgn" / "xqbase_SAMPLE_chinese_gbk.PGN"


def test_stray_byte_in_a_comment_after_a_move() -> None:
    data = SAMPLE.read_bytes()
    whole = read_records(data)[0]
    node = [n for n in whole.mainline() if n.comment][3]  # the fourth commented move
    ply = node.ply()
    at = data.index(node.comment[:6].encode("gbk"))
    broken = data[:at] + b"\xff" + data[at:]  # a stray 0xFF: it never starts a GBK/GB18030 character
    game = read_records(broken)[0]
    assert game.mainline_moves() == whole.mainline_moves()
    (problem,) = game.problems
    assert (problem.kind, problem.ply, problem.offset) == ("encoding", ply, at)
    assert str(problem) == (f"encoding: byte {at} (game 1, the comment after ply {ply}) is not valid "
                            "gb18030: read as U+FFFD, the rest kept")
    assert [n.ply() for n in game.mainline() if "\ufffd" in n.comment] == [ply]
    assert next(n for n in game.mainline() if n.ply() == ply).comment == "\ufffd" + node.comment


def test_stray_byte_in_the_second_game_of_a_file() -> None:
    data = SAMPLE.read_bytes()
    at = data.index("红方".encode("gbk"), data.index(b"1."))
    broken = data + b"\r\n\r\n" + data[:at] + b"\x80" + data[at:]
    games = read_records(broken)
    assert len(games) == 2 and games[0].errors == []
    (problem,) = games[1].problems
    assert problem.kind == "encoding" and problem.offset == len(data) + 4 + at
    assert "(game 2," in str(problem)


def test_many_bad_bytes_are_still_refused() -> None:
    with pytest.raises(RecordEncodingError):
        decode_lenient(bytes(range(0x80, 0x100)) * 20)
    text, enc, bad = decode_lenient("炮二平五 马８进７".encode("gbk"))
    assert (text, enc, bad) == ("炮二平五 马８进７", "gb18030", [])


def test_import_keeps_the_game_with_a_stray_byte(tmp_path: Path) -> None:
    from xiangqi.db import connect, import_paths

    data = SAMPLE.read_bytes()
    at = data.index("红方".encode("gbk"), data.index(b"1."))
    (tmp_path / "stray.pgn").write_bytes(data[:at] + b"\xff" + data[at:])
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    report = import_paths(engine, [tmp_path / "stray.pgn"])
    engine.dispose()
    assert (report.added, report.skipped) == (1, 0)
    assert [str(p) for p in report.problems] == [
        f"{tmp_path / 'stray.pgn'} game 1: warning: encoding: byte {at} is not valid gb18030: read as "
        "U+FFFD, the rest kept"]


def test_too_many_bad_bytes_are_refused_naming_the_first() -> None:
    """More bad bytes than a stray one or two: the refusal says how many, as which encoding, and where
    the first is (byte, line, value). Before it said only "the data is neither UTF-8, GB18030/GBK nor
    Big5 text", leaving the user to guess where the file was damaged."""
    data = bytearray(SAMPLE.read_bytes())
    at = data.index(b"[Red ")  # an ASCII header line: 0xFF is no character's byte in any of them
    for k in range(5):
        data[at + 1 + k] = 0xFF
    line = data.count(b"\n", 0, at + 1) + 1
    with pytest.raises(RecordEncodingError) as info:
        read_records(bytes(data))
    assert str(info.value) == (
        f"the data is neither UTF-8, GB18030/GBK nor Big5 text: 5 of its {len(data)} bytes cannot be read as "
        f"gb18030 (the closest), the first at byte {at + 1} (line {line}: 0xff); a text record may hold "
        "at most 2 such bytes")
