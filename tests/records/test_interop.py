"""Files for old programs: the PGN layout 象棋巫师 reads (xqbase ``cchess/pgnfile.cpp``, FORMATS.md §3, §6).

The scanner below follows the reader's published layout, not our reader: outside ``{ }``/``( )``, in
Chinese mode every byte >= 0x80 starts a move of exactly 8 GBK bytes; in ICCS mode every letter starts
a move of 5 characters whose file letters are taken as ``char - 'A'`` (upper case) and whose rank
digits are at 1 and 4; a result token ends the game.
"""

from __future__ import annotations

from pathlib import Path

from xiangqi.cli import main
from xiangqi.core.board import Move
from xiangqi.core.notation import parse_chinese
from xiangqi.core.records import is_gb_encoding, read_records, write_records

SAMPLES = Path(__file__).parent.parent / "data" / "records"
SAMPLE_XQF = SAMPLES / "xqf" / "xqbase_SAMPLE.XQF"


def xqbase_tokens(data: bytes) -> tuple[str, list[bytes]]:
    """(format, move tokens) of PGN bytes, cut the way 象棋巫师's reader cuts them."""
    fmt = "chinese"
    tokens: list[bytes] = []
    lines = data.split(b"\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(b"[")):
        if lines[i].upper().startswith(b'[FORMAT "'):
            fmt = lines[i].split(b'"')[1].decode().lower()
        i += 1
    body = b"\n".join(lines[i:])
    level = 0
    pos = 0
    while pos < len(body):
        c = body[pos]
        if level:
            level += 1 if c in b"({" else -1 if c in b")}" else 0
            pos += 1
            continue
        if c in b"({":
            level = 1
        elif body.startswith((b"1-0", b"0-1", b"1/2-1/2", b"*"), pos):
            break
        elif fmt == "iccs" and (chr(c).isalpha() or c in b"+-="):
            tokens.append(body[pos:pos + 5])
            pos += 5
            continue
        elif fmt == "chinese" and c >= 0x80:
            tokens.append(body[pos:pos + 8])
            pos += 8
            continue
        pos += 1
    return fmt, tokens


def iccs_move(token: bytes) -> Move:
    """The move ``ICCS_MOVE`` makes of 5 bytes: files b[0] - 'A', b[3] - 'A'; ranks b[1], b[4]."""
    ff, tf = token[0] - ord("A"), token[3] - ord("A")
    assert 0 <= ff <= 8 and 0 <= tf <= 8, f"file letters out of A-I: {token!r}"
    fr, tr = token[1] - ord("0"), token[4] - ord("0")
    assert 0 <= fr <= 9 and 0 <= tr <= 9, token
    return Move(fr * 9 + ff, tr * 9 + tf)


def test_iccs_pgn_reads_in_the_xqbase_layout() -> None:
    game = read_records(SAMPLE_XQF)[0]
    data = write_records([game], "pgn", notation="iccs", encoding="gbk")
    fmt, tokens = xqbase_tokens(data)
    assert fmt == "iccs"
    assert tokens[:2] == [b"B2-E2", b"H7-E7"]  # 炮八平五 炮８平５
    assert [iccs_move(t) for t in tokens] == game.mainline_moves()
    # our reader reads it back, and the lower-case form that xiangqi.js writes
    assert read_records(data)[0].mainline_moves() == game.mainline_moves()


def test_gbk_chinese_pgn_has_8_byte_moves_with_fullwidth_black_digits() -> None:
    game = read_records(SAMPLE_XQF)[0]
    data = write_records([game], "pgn", encoding="gbk")
    fmt, tokens = xqbase_tokens(data)
    assert fmt == "chinese"
    board = game.board()
    moves = []
    for token in tokens:
        text = token.decode("gbk")
        assert len(text) == 4, (token, text)
        move = parse_chinese(board, text)
        board.push(move)
        moves.append(move)
    assert moves == game.mainline_moves()
    assert tokens[1] == "炮８平５".encode("gbk") and b"\xa3\xb8" in tokens[1]  # GBK full-width ８
    # UTF-8 output keeps the ASCII digits that newer tools write, unless asked
    assert "炮8平5" in write_records([game], "pgn").decode("utf-8")
    assert "炮８平５" in write_records([game], "pgn", fullwidth_black=True).decode("utf-8")
    assert "炮8平5" in write_records([game], "pgn", encoding="gbk", fullwidth_black=False).decode("gbk")


def test_gb_encoding_names() -> None:
    assert all(is_gb_encoding(n) for n in ("gbk", "GBK", "cp936", "gb2312", "GB18030"))
    assert not any(is_gb_encoding(n) for n in ("utf-8", "big5", "latin-1", "no-such-codec"))


def test_convert_to_gbk_writes_for_xqwizard_by_default(tmp_path: Path) -> None:
    out = tmp_path / "old.pgn"
    assert main(["convert", str(SAMPLE_XQF), str(out), "--encoding", "gbk"]) == 0
    assert "1. 炮八平五 炮８平５" in out.read_bytes().decode("gbk")
    assert main(["convert", str(SAMPLE_XQF), str(out), "--encoding", "gbk", "--no-fullwidth-black"]) == 0
    assert "1. 炮八平五 炮8平5" in out.read_bytes().decode("gbk")
    assert main(["convert", str(SAMPLE_XQF), str(out), "--notation", "iccs"]) == 0
    assert "1. B2-E2 H7-E7" in out.read_text(encoding="utf-8")
