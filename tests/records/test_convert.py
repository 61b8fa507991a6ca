"""``xiangqi convert`` and the format dispatch of :mod:`xiangqi.core.records`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from xiangqi.cli import main
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import read_game
from xiangqi.core.records import detect_format, format_from_path, read_records, write_records

SAMPLES = Path(__file__).parent.parent / "data" / "records"
ALL_SAMPLES = sorted(p for p in SAMPLES.rglob("*") if p.is_file())


def test_every_sample_file_reads_without_error() -> None:
    assert len(ALL_SAMPLES) == 10
    counts = {}
    for path in ALL_SAMPLES:
        games = read_records(path)
        assert games, path
        for game in games:
            assert game.errors == [], (path, game.errors)
            board = game.board()
            for m in game.mainline_moves():
                board.push(m)
        counts[path.name] = (len(games), sum(len(g.mainline_moves()) for g in games))
    assert counts == {
        "cchess_test_ubb_mainline.txt": (1, 77),
        "xqwizard_ENDGAMES_A_gbk_big5.EPD": (41, 0),
        "cchess_endgame_shortfen.pgn": (1, 25),
        "cchess_test2_chinese_timecontrol.pgn": (1, 102),
        "pychinesechess_cg245_chinese_fen_puzzle.pgn": (1, 27),
        "wukong_test_ok_wxf_fullwidth.pgn": (1, 127),
        "xiangqijs_readme_iccs_1982.pgn": (1, 125),
        "xqbase_SAMPLE_chinese_gbk.PGN": (1, 75),
        "cchess_game_varations.xqf": (1, 8),
        "xqbase_SAMPLE.XQF": (1, 75),
    }


def test_detection() -> None:
    assert format_from_path("a.PGN") == "pgn" and format_from_path("b.xqf") == "xqf"
    assert format_from_path("c.ubb") == "dhtmlxq" and format_from_path("d.EPD") == "epd"
    assert format_from_path("e.doc") is None
    assert detect_format((SAMPLES / "xqf" / "xqbase_SAMPLE.XQF").read_bytes()) == "xqf"
    assert detect_format((SAMPLES / "dhtmlxq" / "cchess_test_ubb_mainline.txt").read_bytes()) == "dhtmlxq"
    assert detect_format((SAMPLES / "fen" / "xqwizard_ENDGAMES_A_gbk_big5.EPD").read_bytes()) == "epd"
    assert detect_format(b"1. h2e2 h9g7 *") == "pgn"


def test_write_records_rules() -> None:
    games = read_records(SAMPLES / "fen" / "xqwizard_ENDGAMES_A_gbk_big5.EPD")
    with pytest.raises(XiangqiError, match="one game"):
        write_records(games, "xqf")
    with pytest.raises(XiangqiError, match="unknown record format"):
        write_records(games, "doc")
    pgn = write_records(games[:2], "pgn", encoding="gbk")
    assert pgn.decode("gbk").count('[Game "Chinese Chess"]') == 2


@pytest.mark.parametrize(("src", "out", "extra"), [
    ("pgn/xqbase_SAMPLE_chinese_gbk.PGN", "x.xqf", []),
    ("xqf/cchess_game_varations.xqf", "x.pgn", ["--notation", "wxf"]),
    ("xqf/cchess_game_varations.xqf", "x.ubb", []),
    ("dhtmlxq/cchess_test_ubb_mainline.txt", "x.pgn", ["--encoding", "gbk"]),
    ("pgn/xiangqijs_readme_iccs_1982.pgn", "x.txt", ["--to", "dhtmlxq"]),
    ("fen/xqwizard_ENDGAMES_A_gbk_big5.EPD", "x.pgn", ["--notation", "iccs"]),
])
def test_convert_keeps_the_game(tmp_path: Path, src: str, out: str, extra: list[str],
                                capsys: pytest.CaptureFixture[str]) -> None:
    source = SAMPLES / src
    target = tmp_path / out
    assert main(["convert", str(source), str(target), *extra]) == 0
    assert "converted" in capsys.readouterr().err
    before = read_records(source)
    after = read_records(target)
    assert [g.mainline_moves() for g in after] == [g.mainline_moves() for g in before]
    assert [g.count_nodes() for g in after] == [g.count_nodes() for g in before]
    assert [g.board().fen() for g in after] == [g.board().fen() for g in before]
    # and back to PGN
    back = tmp_path / "back.pgn"
    assert main(["convert", str(target), str(back)]) == 0
    assert [g.mainline_moves() for g in read_records(back)] == [g.mainline_moves() for g in before]


def test_convert_to_stdout_and_gbk(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["convert", str(SAMPLES / "xqf" / "xqbase_SAMPLE.XQF"), "-", "--to", "pgn",
                 "--encoding", "gbk"]) == 0
    out = capsysbinary.readouterr().out
    game = read_game(out.decode("gbk"))
    assert game is not None and len(game.mainline_moves()) == 75


@pytest.mark.parametrize(("content", "name", "message"), [
    (b"garbage here\n", "bad.pgn", "no game found"),
    (b"XQ" + bytes(100), "short.xqf", "not an XQF file"),
    (b"", "empty.pgn", "no game found"),
    (b"\xff\xfe\x00garbage", "bin.pgn", "no game"),
])
def test_convert_bad_file_gives_a_message_not_a_traceback(
        tmp_path: Path, content: bytes, name: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / name
    src.write_bytes(content)
    assert main(["convert", str(src), str(tmp_path / "out.pgn")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xiangqi convert: error:") and message in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.pgn").exists()


def test_convert_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(tmp_path / "missing.pgn"), str(tmp_path / "o.pgn")]) == 2
    assert "no such file" in capsys.readouterr().err
    src = tmp_path / "a.pgn"
    shutil.copy(SAMPLES / "pgn" / "xiangqijs_readme_iccs_1982.pgn", src)
    assert main(["convert", str(src), str(tmp_path / "o.unknown")]) == 2
    assert "--to" in capsys.readouterr().err
    assert main(["convert", str(src), str(tmp_path / "o.pgn"), "--encoding", "no-such-codec"]) == 2
    assert "unknown encoding" in capsys.readouterr().err


def test_convert_reports_damaged_games_with_status_1(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "two.pgn"
    src.write_text('[Red "a"]\n1. 炮二平五 马8进7 2. 车一进五 *\n\n[Red "b"]\n1. h2e2 *\n', encoding="utf-8")
    assert main(["convert", str(src), str(tmp_path / "o.pgn")]) == 1
    err = capsys.readouterr().err
    assert "warning: game 1 (a): ply 3" in err  # the game named by its number and players
    games = read_records(tmp_path / "o.pgn")
    assert [len(g.mainline_moves()) for g in games] == [2, 1]


def test_convert_for_old_programs(tmp_path: Path) -> None:
    out = tmp_path / "old.pgn"
    assert main(["convert", str(SAMPLES / "xqf" / "xqbase_SAMPLE.XQF"), str(out), "--encoding", "gbk",
                 "--fullwidth-black"]) == 0
    text = out.read_bytes().decode("gbk")
    assert "1. 炮八平五 炮８平５" in text
    trad = tmp_path / "trad.pgn"
    # the comments are simplified Chinese, which Big5 cannot hold: a clear error, no file
    assert main(["convert", str(SAMPLES / "xqf" / "xqbase_SAMPLE.XQF"), str(trad), "--encoding", "big5",
                 "--traditional"]) == 2
    assert not trad.exists()
    assert main(["convert", str(SAMPLES / "xqf" / "xqbase_SAMPLE.XQF"), str(trad), "--traditional"]) == 0
    assert "5. 傌八進七 馬2進1" in trad.read_text(encoding="utf-8")
    assert [g.mainline_moves() for g in read_records(out)] == [g.mainline_moves() for g in read_records(trad)]
