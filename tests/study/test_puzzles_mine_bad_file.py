"""``xiangqi puzzles mine`` with an unreadable record file among good ones: the file is named and
skipped, the others are mined, and the run ends with exit 2 (README: bad input). Before, the first
unreadable file ended the run with ``xiangqi puzzles: error: <reason>``, naming no file."""

from __future__ import annotations

import json

from xiangqi.cli import main

# The constructed one-move mate of tests/study/test_puzzles_cli.py (炮 a6-a9, 闷宫).
PGN = """[Game "Chinese Chess"]
[Event "constructed"]
[Red "R"]
[Black "B"]
[Result "1-0"]
[FEN "3aka3/4n4/9/9/C2c5/9/9/9/4A4/5K3 w - - 0 1"]

1. a5a6 d5d8 2. a6a9 1-0
"""


def test_unreadable_file_is_named_and_the_rest_mined(tmp_path, capsys):
    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.pgn"
    binary.write_bytes(bytes(range(256)) * 8)  # no text encoding reads it
    good = tmp_path / "g.pgn"
    good.write_text(PGN, encoding="utf-8")
    out = tmp_path / "mined.jsonl"
    assert main(["puzzles", "mine", str(empty), str(binary), str(good), "--out", str(out), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"xiangqi puzzles mine: {empty}: no game found (not a PGN, XQF, DhtmlXQ or EPD record) (skipped)",
        f"xiangqi puzzles mine: {binary}: the data is neither UTF-8, GB18030/GBK nor Big5 text: 16 of its "
        "2048 bytes cannot be read as gb18030 (the closest), the first at byte 128 (line 2: 0x80); a text "
        "record may hold at most 2 such bytes (skipped)",
    ]
    summary = json.loads(captured.out)
    assert summary["games"] == 1 and summary["puzzles"] == 1
    assert summary["unreadable"] == [str(empty), str(binary)]
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["mined-g.pgn-0"]
