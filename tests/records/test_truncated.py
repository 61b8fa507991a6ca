"""Files cut short are read as far as they go and flagged ``truncated``, not taken as whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi.cli import main
from xiangqi.core.errors import ReadError, RecordProblem
from xiangqi.core.pgn import read_game, read_games
from xiangqi.core.records import read_records

DATA = Path(__file__).parent.parent / "data"
SAMPLES = DATA / "records"
UBB = SAMPLES / "dhtmlxq" / "cchess_test_ubb_mainline.txt"
XQF = SAMPLES / "xqf" / "xqbase_SAMPLE.XQF"
PGN = DATA / "corpus" / "ccpd" / "ccpd_05.pgn"  # Big5, 1987 李來群 - 趙國榮, Result 0-1


def truncated(game) -> list[ReadError]:
    return [p for p in game.problems if p.kind == "truncated"]


def test_whole_files_are_not_flagged() -> None:
    for path in (UBB, XQF, PGN):
        for game in read_records(path):
            assert game.errors == [] and game.problems == []


@pytest.mark.parametrize("cut", ["moves", "number", "half move", "comment", "variation"])
def test_pgn_cut_inside_the_move_text(cut: str) -> None:
    text = PGN.read_bytes().decode("big5")
    whole = read_games(text)[0]
    at = text.index("20. ")
    if cut == "moves":  # after a whole move: the Result tag says 0-1 but the text stops
        part = text[:at].rstrip()
    elif cut == "number":
        part = text[:at + 3]
    elif cut == "half move":
        part = text[:at + 6]
    elif cut == "comment":
        part = text[:at] + "{ 此时黑方"
    else:
        part = text[:at] + "( 20. 兵七進一"
    game = read_games(part)[-1]
    assert game.mainline_moves() == whole.mainline_moves()[:38]
    (problem,) = truncated(game)
    assert problem.ply == 38 and "truncated" in str(problem)
    assert isinstance(game.errors[-1], RecordProblem) and game.errors[-1].kind == "truncated"
    assert problem.offset is not None and problem.offset > 0


def test_pgn_without_result_in_the_middle_of_a_file_is_not_truncated() -> None:
    text = PGN.read_bytes().decode("big5")
    body = text[:text.index("20. ")]
    games = read_games(body + "\n\n" + text)
    assert len(games) == 2 and truncated(games[0]) == [] and truncated(games[1]) == []
    # a game with no Result tag and no result token is not called cut (samples/pgn wukong has none)
    assert truncated(read_game("1. 炮二平五 马8进7")) == []


def test_ubb_cut_inside_the_move_list() -> None:
    text = UBB.read_text(encoding="utf-8")
    whole = read_records(UBB)[0]
    start = text.index("[DhtmlXQ_movelist]") + len("[DhtmlXQ_movelist]")
    part = text[:start + 4 * 30 + 2]  # 30 moves and half of the next
    game = read_records(part.encode())[0]
    assert game.mainline_moves() == whole.mainline_moves()[:30]
    (problem,) = truncated(game)
    assert problem.ply == 30 and "move list" in str(problem)


def test_xqf_cut_right_after_its_header() -> None:
    data = XQF.read_bytes()
    game = read_records(data[:1024])[0]
    assert game.mainline_moves() == []
    (problem,) = truncated(game)
    assert problem.ply == 0 and problem.offset == 1024 and "after its 1024-byte header" in str(problem)


def test_xqf_cut_in_the_middle_of_the_moves() -> None:
    data = XQF.read_bytes()
    whole = read_records(data)[0]
    game = read_records(data[:1024 + 600])[0]
    moves = game.mainline_moves()
    assert 0 < len(moves) < len(whole.mainline_moves()) and moves == whole.mainline_moves()[:len(moves)]
    assert truncated(game) and all(p.offset is not None and p.offset <= 1624 for p in truncated(game))


def test_convert_says_truncated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "cut.xqf"
    src.write_bytes(XQF.read_bytes()[:1024])
    assert main(["convert", str(src), str(tmp_path / "o.pgn")]) == 1
    err = capsys.readouterr().err
    # the game is named by its number and its headers (core.records.game_label)
    assert ("warning: game 1 (许银川让九子对聂棋圣: 许银川 vs 聂卫平): truncated: "
            "the file ends right after its 1024-byte header") in err
