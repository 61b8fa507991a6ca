"""Regression tests for faults found by trying to break the record readers and writers.

Each test names the input that used to fail and what it did before the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi import Move
from xiangqi.cli import main
from xiangqi.core.dhtmlxq import DhtmlxqError, read_dhtmlxq, write_dhtmlxq
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import Game, read_games, write_game
from xiangqi.core.xqf import read_xqf, write_xqf

SHUFFLE = ["b0c2", "b9c7", "c2b0", "c7b9"]


def nested_game(depth: int) -> Game:
    """A game whose variations nest ``depth`` levels: at every ply the played move is a side line."""
    game = Game()
    node = game
    board = game.board()
    for i in range(depth):
        played = Move.from_iccs(SHUFFLE[i % 4])
        other = next(m for m in board.legal_moves if m != played)
        node.add_variation(other)
        node = node.add_variation(played)
        board.push(played)
    return game


def test_tag_value_with_a_line_break_keeps_the_game_readable() -> None:
    # A newline in a tag value used to be written as is: the re-read lost the tag and every move.
    game = Game({"Red": "line1\nline2", "Event": "a\r\nb\u2028c"})
    game.add_variation(Move.from_iccs("h2e2")).add_variation(Move.from_iccs("h9g7"))
    for notation in ("chinese", "wxf", "iccs"):
        text = write_game(game, notation=notation)
        assert '[Red "line1 line2"]' in text
        back = read_games(text)[0]
        assert back.errors == []
        assert back.headers["Red"] == "line1 line2"
        assert back.headers["Event"] == "a b c"
        assert [m.iccs() for m in back.mainline_moves()] == ["h2e2", "h9g7"]


@pytest.mark.parametrize("result", ["红胜", "1-0 extra", ""])
def test_nonstandard_result_tag_does_not_leak_into_the_move_text(result: str) -> None:
    # Result "红胜" used to end the move text as '1. h2e2 红胜', read back as a bad move.
    game = Game({"Result": result})
    game.add_variation(Move.from_iccs("h2e2"))
    text = write_game(game, notation="iccs")
    assert text.rstrip().endswith("1. H2-E2 *")
    back = read_games(text)[0]
    assert back.errors == []
    assert [m.iccs() for m in back.mainline_moves()] == ["h2e2"]


def test_standard_result_still_ends_the_move_text() -> None:
    game = Game({"Result": "0-1"})
    game.add_variation(Move.from_iccs("h2e2"))
    assert write_game(game, notation="iccs").rstrip().endswith("1. H2-E2 0-1")


def test_deeply_nested_variations_give_a_clear_error_not_recursion_error(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]
                                                                         ) -> None:
    # 1100 nested side lines (a valid XQF file) used to end `xiangqi convert` in a RecursionError
    # traceback when writing PGN or DhtmlXQ.
    game = nested_game(1100)
    with pytest.raises(XiangqiError, match="nested too deeply to write as PGN"):
        write_game(game)
    with pytest.raises(DhtmlxqError, match="nested too deeply to write as DhtmlXQ"):
        write_dhtmlxq(game)
    data = write_xqf(game)
    assert read_xqf(data).count_branches() == 1100
    src = tmp_path / "deep.xqf"
    src.write_bytes(data)
    for out in ("deep.pgn", "deep.ubb"):
        assert main(["convert", str(src), str(tmp_path / out)]) == 2
        err = capsys.readouterr().err
        assert "nested too deeply" in err and "Traceback" not in err


def test_moderately_nested_variations_still_round_trip() -> None:
    game = nested_game(300)
    back = read_games(write_game(game, notation="iccs"))[0]
    assert back.errors == [] and back.count_branches() == 300
    assert read_dhtmlxq(write_dhtmlxq(game)).count_branches() == 300


def test_convert_of_a_directory_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # It used to say "no such file" for a directory that exists.
    assert main(["convert", str(tmp_path), str(tmp_path / "out.pgn")]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_fen_tag_with_a_non_ascii_digit_is_a_recorded_error() -> None:
    # '[FEN "…/²9/…"]' used to escape read_games as int()'s bare ValueError.
    text = '[FEN "rnbakabnr/9/1c5c1/p1p1p1p1p/²9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"]\n\n1. h2e2 *\n'
    game = read_games(text)[0]
    assert game.errors and "unknown piece letter '²'" in game.errors[0]


@pytest.mark.parametrize("codec", ["hex", "base64", "rot13", "zlib"])
def test_bytes_to_bytes_codec_is_a_clear_encoding_error(codec: str) -> None:
    # --encoding hex / --input-encoding rot13 used to end in a LookupError traceback.
    from xiangqi.core.encoding import RecordEncodingError, decode_bytes, encode_text

    with pytest.raises(RecordEncodingError, match=f"'{codec}' is not a text encoding"):
        encode_text("1. h2e2 *", codec)
    with pytest.raises(RecordEncodingError, match=f"'{codec}' is not a text encoding"):
        decode_bytes(b"1. h2e2 *", codec)


def test_codec_errors_without_a_position_are_encoding_errors() -> None:
    # idna raises a bare UnicodeError ("label empty or too long") that has no .start.
    from xiangqi.core.encoding import RecordEncodingError, encode_text

    with pytest.raises(RecordEncodingError, match="cannot be written in idna"):
        encode_text("x" * 100, "idna")


def test_convert_with_a_non_text_encoding_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.pgn"
    src.write_text('[Format "ICCS"]\n\n1. h2e2 h9g7 *\n', encoding="utf-8")
    assert main(["convert", str(src), str(tmp_path / "o.pgn"), "--encoding", "hex"]) == 2
    assert main(["convert", str(src), str(tmp_path / "o.pgn"), "--input-encoding", "rot13"]) == 2
    err = capsys.readouterr().err
    assert err.count("is not a text encoding") == 2 and "Traceback" not in err
    assert not (tmp_path / "o.pgn").exists()


def test_epd_list_with_a_bad_line_is_still_read_as_epd(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # A .epd file with one bad line used to be sniffed as PGN and rejected as "no game found";
    # the bad lines of a list read as EPD were dropped without a word.
    from xiangqi.core.records import read_records

    src = tmp_path / "list.epd"
    src.write_bytes(b"4k4/9/9/9/9/9/9/9/9/3K5 b ; bare kings\nbad line here\n3k5/9/9/9/9/9/9/9/9/R3K4 w\n")
    games = read_records(src)
    assert [g.headers.get("FEN") for g in games] == ["4k4/9/9/9/9/9/9/9/9/3K5 b - - 0 1",
                                                     "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1"]
    assert games[0].errors == ["EPD line 2: bad FEN board at character 0: board must have 10 ranks "
                               "separated by '/', got 1"]
    assert main(["convert", str(src), str(tmp_path / "out.pgn")]) == 1
    err = capsys.readouterr().err
    assert "EPD line 2" in err and "converted 2 game(s)" in err


def test_epd_comment_lines_do_not_hide_the_format() -> None:
    from xiangqi.core.records import detect_format, read_records

    data = b"# my endgames\n4k4/9/9/9/9/9/9/9/9/3K5 b ; bare\n\n3k5/9/9/9/9/9/9/9/9/R3K4 w\n"
    assert detect_format(data) == "epd"
    games = read_records(data)
    assert len(games) == 2 and all(g.errors == [] for g in games)
    assert detect_format(b'[Event "x"]\n1. h2e2 *\n') == "pgn"
