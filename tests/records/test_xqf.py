"""XQF read (1.0 and encrypted 1.1+) and write (1.0)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.core.encoding import read_text_file
from xiangqi.core.pgn import Game, GameNode, read_game, write_game
from xiangqi.core.xqf import XqfError, read_xqf, write_xqf

SAMPLES = Path(__file__).parent.parent / "data" / "records"


def _lines(node: GameNode) -> int:
    """Number of distinct lines (leaves) below ``node``."""
    if not node.variations:
        return 1
    return sum(_lines(c) for c in node.variations)


def _tree(node: GameNode) -> list:
    return [(c.move.iccs() if c.move else None, c.comment, _tree(c)) for c in node.variations]


def test_sample_xqf_is_the_sample_pgn_game() -> None:
    data = (SAMPLES / "xqf" / "xqbase_SAMPLE.XQF").read_bytes()
    assert data[2] == 0x12  # encrypted, permuted piece table
    game = read_xqf(data)
    assert game.errors == []
    assert game.headers["Event"] == "许银川让九子对聂棋圣"
    assert game.headers["Red"] == "许银川" and game.headers["Black"] == "聂卫平"
    assert game.headers["Date"] == "1999.12.09" and game.headers["Site"] == "广州"
    assert game.headers["Result"] == "1-0"
    assert game.headers["FEN"] == "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/9/1C5C1/9/RN2K2NR w - - 0 1"
    pgn = read_game(read_text_file(SAMPLES / "pgn" / "xqbase_SAMPLE_chinese_gbk.PGN"))
    assert pgn is not None
    assert game.mainline_moves() == pgn.mainline_moves()
    assert len(game.mainline_moves()) == 75
    assert [n.san() for n in list(game.mainline())[:3]] == ["炮八平五", "炮8平5", "炮五进五"]
    assert [n.comment for n in game.mainline()] == [n.comment for n in pgn.mainline()]
    assert game.comment == pgn.comment


def test_cchess_variations_sample_branches() -> None:
    game = read_xqf(SAMPLES / "xqf" / "cchess_game_varations.xqf")
    assert game.errors == []
    assert len(game.mainline_moves()) == 8
    assert game.count_nodes() == 24
    assert game.count_branches() == 5  # alternatives to a main continuation
    assert _lines(game) == 6  # six lines (branches) including the main line, as samples/SOURCES.md says
    assert game.headers["Title"] == "中炮对屏风马"
    assert game.headers["Author"] == "XQF生成器"
    third = list(game.mainline())[6]  # 4. 马八进七 and its three alternatives
    assert [n.san() for n in [third, *third.siblings()]] == ["马八进七", "兵三进一", "兵七进一", "马八进九"]


@pytest.mark.parametrize("name", ["xqbase_SAMPLE.XQF", "cchess_game_varations.xqf"])
def test_xqf_write_read_round_trip(name: str) -> None:
    game = read_xqf(SAMPLES / "xqf" / name)
    data = write_xqf(game)
    assert data[:3] == b"XQ\x0a" and data[3:16] == bytes(13)
    again = read_xqf(data)
    assert again.errors == []
    assert _tree(again) == _tree(game)
    assert again.comment == game.comment
    assert again.headers == game.headers
    assert write_game(again) == write_game(game)


def test_written_xqf_layout_for_the_start_position() -> None:
    board = Board()
    board.push_iccs("h2e2")
    game = Game.from_board(board)
    game.headers.update({"Red": "红", "Black": "黑", "Result": "1-0"})
    game.variations[0].comment = "中炮"
    data = write_xqf(game)
    assert data[0x33] == 1 and data[0x40] == 0
    # pieces in XQF order: 车马相仕帅仕相马车 on rank 0, cannons b2 h2, pawns; square byte = file*10 + rank
    assert list(data[0x10:0x19]) == [0, 10, 20, 30, 40, 50, 60, 70, 80]
    assert list(data[0x19:0x1B]) == [12, 72]
    assert data[0x130:0x133] == b"\x02" + "红".encode("gbk")
    body = data[0x400:]
    assert body[:8] == b"\x18\x20\xf0\xff\x00\x00\x00\x00"  # root record, no game comment
    comment = "中炮".encode("gbk")
    assert body[8:16] == bytes([72 + 0x18, 42 + 0x20, 0, 0]) + struct.pack("<I", len(comment))
    assert body[16:] == comment


def _encrypt(plain: bytes, version: int) -> bytes:
    """Encrypt an XQF 1.0 file with fixed keys, the inverse of the reader's decryption (FORMATS.md §7)."""
    h = bytearray(plain[:0x400])
    h[2] = version
    h[3], h[8:12], h[0x0C], h[0x0D], h[0x0E], h[0x0F] = 0xFF, b"\x00\x00\x00\x00", 0x31, 0x5A, 0x77, 0x13

    def f(x: int) -> int:
        return ((((x * x * 3 + 9) * 3 + 8) * 2 + 1) * 3 + 8)

    xy = (f(h[0x0D]) * h[0x0D]) & 0xFF
    xyf = (f(h[0x0E]) * xy) & 0xFF
    xyt = (f(h[0x0F]) * xyf) & 0xFF
    rmk = ((h[0x0C] * 256 + h[0x0D]) % 32000) + 767
    keys = [(h[0x0C + i] & h[3]) | h[0x08 + i] for i in range(4)]
    f32 = bytes(b"[(C) Copyright Mr. Dong Shiwei.]"[i] & keys[i % 4] for i in range(32))
    pieces = list(plain[0x10:0x30])
    raw = [0] * 32
    for i in range(32):
        slot = (xy + 1 + i) & 31 if version >= 12 else i
        raw[i] = (pieces[slot] + xy) & 0xFF
    h[0x10:0x30] = bytes(raw)
    # re-encode the 1.0 records into the 1.1+ record form
    body, out, pos = plain[0x400:], bytearray(), 0
    while pos < len(body):
        a, b, flags = body[pos], body[pos + 1], body[pos + 2]
        length = struct.unpack_from("<I", body, pos + 4)[0]
        text = body[pos + 8:pos + 8 + length]
        new_flags = (0x80 if flags & 0xF0 else 0) | (0x40 if flags & 0x0F else 0) | (0x20 if length else 0)
        if pos == 0:
            out += bytes([a, b, new_flags, 0])
        else:
            out += bytes([(a + xyf) & 0xFF, (b + xyt) & 0xFF, new_flags, 0])
        if length:
            out += struct.pack("<I", length + rmk) + text
        pos += 8 + length
    enc = bytes((v + f32[(0x400 + i) % 32]) & 0xFF for i, v in enumerate(out))
    return bytes(h) + enc


@pytest.mark.parametrize("version", [11, 12, 18])
def test_encrypted_versions_read(version: int) -> None:
    game = read_xqf(SAMPLES / "xqf" / "cchess_game_varations.xqf")
    game.variations[0].variations[1].comment = "变着"
    game.comment = "全局注释"
    encrypted = _encrypt(write_xqf(game), version)
    again = read_xqf(encrypted)
    assert again.errors == []
    assert _tree(again) == _tree(game)
    assert again.comment == "全局注释"


def test_black_to_move_start_and_custom_position() -> None:
    fen = "4k4/9/9/9/9/9/9/1r7/r8/3K5 b - - 0 1"
    board = Board(fen)
    board.push_iccs("b2b0")
    game = Game.from_board(board)
    data = write_xqf(game)
    assert data[0x40] == 3
    again = read_xqf(data)
    assert again.headers["FEN"] == fen  # side to move from the first moved piece
    assert again.mainline_moves() == [Move.from_iccs("b2b0")]


def test_starting_comment_is_kept_in_the_move_comment() -> None:
    game = read_game("1. h2e2 (1. b0c2 {a}) (1. c3c4) h9g7 *")
    assert game is not None
    game.variations[2].starting_comment = "before"
    again = read_xqf(write_xqf(game))
    assert again.variations[2].comment == "before"
    assert again.variations[1].comment == "a"


def test_bad_xqf_files() -> None:
    good = (SAMPLES / "xqf" / "cchess_game_varations.xqf").read_bytes()
    with pytest.raises(XqfError, match="not an XQF file"):
        read_xqf(b"PK" + good[2:])
    with pytest.raises(XqfError, match="header"):
        read_xqf(good[:500])
    with pytest.raises(XqfError, match="cannot read"):
        read_xqf(SAMPLES / "xqf" / "missing.xqf")
    truncated = read_xqf(good[:-10])
    assert truncated.errors  # the records end early
    assert len(truncated.mainline_moves()) <= 8
    no_king = bytearray(good)
    no_king[0x10:0x30] = bytes([0xFF] * 32)  # 1.0-style plain table is not used: this file is encrypted
    with pytest.raises(XqfError):
        read_xqf(bytes(no_king))


def test_illegal_move_in_xqf_is_reported_and_dropped() -> None:
    game = read_game("1. h2e2 h9g7 2. h0g2 *")
    assert game is not None
    data = bytearray(write_xqf(game))
    # second move record (h9g7) starts after the root (8) and the first move (8): make it h9h5
    data[0x400 + 16 + 1] = 7 * 10 + 5 + 0x20
    bad = read_xqf(bytes(data))
    assert bad.mainline_moves() == [Move.from_iccs("h2e2")]
    assert len(bad.errors) == 1 and "h9h5" in bad.errors[0]


@pytest.mark.parametrize("name", ["xqbase_SAMPLE.XQF", "cchess_game_varations.xqf"])
def test_every_truncation_gives_a_game_or_xqf_error(name: str) -> None:
    data = (SAMPLES / "xqf" / name).read_bytes()
    full = read_xqf(data)
    for cut in range(0x3F0, len(data)):
        try:
            game = read_xqf(data[:cut])
        except XqfError:
            assert cut < 0x400
            continue
        assert len(game.mainline_moves()) <= len(full.mainline_moves())
        assert game.errors or cut == 0x400  # a header alone is a game without moves


# -- what XQF cannot hold is said, not dropped silently --------------------------------------------------

CCPD = Path(__file__).parent.parent / "data" / "corpus" / "ccpd"


def test_xqf_export_names_the_dropped_headers_and_the_cut_strings() -> None:
    from xiangqi.core.records import read_records, write_records
    from xiangqi.core.xqf import xqf_losses

    game = read_records(CCPD / "ccpd_05.pgn")[0]  # ECCO E46
    game.headers.update({"Round": "3", "Opening": "仙人指路", "Variation": "对卒底炮",
                         "Red": "河北李來群河北李來群", "Date": "1987年06月28日下午"})
    game.variations[0].nags.add(4)
    game.final_comment = "黑胜"
    losses = xqf_losses(game)
    assert losses[0] == "XQF has no field for Round, ECCO, Opening, Variation: dropped"
    assert "Red cut to the 15 bytes of its XQF field: '河北李來群河北李來群' -> '河北李來群河北'" in losses
    assert "Date cut to the 15 bytes of its XQF field: '1987年06月28日下午' -> '1987年06月28日'" in losses
    assert "XQF has no annotation glyphs: the NAGs of 1 move(s) dropped" in losses
    assert "XQF has no comment after the result: '黑胜' dropped" in losses
    warnings: list[str] = []
    data = write_records([game], "xqf", warnings=warnings)
    assert warnings == losses
    back = read_xqf(data)
    assert back.headers["Red"] == "河北李來群河北" and back.headers["Date"] == "1987年06月28日"
    assert "Round" not in back.headers and back.mainline_moves() == game.mainline_moves()


def test_xqf_export_of_a_game_that_fits_reports_nothing() -> None:
    from xiangqi.core.xqf import xqf_losses

    game = read_xqf(SAMPLES / "xqf" / "xqbase_SAMPLE.XQF")
    assert xqf_losses(game) == []
    assert xqf_losses(read_xqf(write_xqf(game))) == []


def test_convert_to_xqf_prints_what_it_dropped_with_status_0(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from xiangqi.cli import main

    out = tmp_path / "o.xqf"
    assert main(["convert", str(CCPD / "ccpd_05.pgn"), str(out)]) == 0
    err = capsys.readouterr().err
    assert "note: not kept in xqf: XQF has no field for ECCO: dropped" in err
    assert "Black cut to the 15 bytes of its XQF field: '黑龍江趙國榮' -> '黑龍江趙國榮'" not in err
    assert "1 thing(s) the format cannot hold were dropped or cut" in err
    assert read_xqf(out).mainline_moves() == read_xqf(write_xqf(read_xqf(out))).mainline_moves()
