"""Records whose start position cannot be set up (a broken PGN [FEN] tag, a UBB binit without kings): the
game is named in every message, the other games of the file are still read, converted and classified,
and nothing pretends the game starts from the standard position."""

from __future__ import annotations

import pytest

from xiangqi.app.library.records import RecordOpenError, open_record
from xiangqi.cli import main
from xiangqi.core.records import RecordError, game_label, read_records, start_problem, write_records

THREE = """[Event "A"]
[Red "r1"]
[Black "b1"]

1. h2e2 h9g7 *

[Event "Broken"]
[Red "张三"]
[Black "李四"]
[FEN "rnbakabnr/9/1c5c1 w"]

1. h2e2 *

[Event "C"]

1. b2e2 *
"""

# a UBB record whose binit (64 digits: 32 pieces as file+rank, 99 = not on the board) has no piece at all
UBB_NO_KINGS = ("[DhtmlXQ]\n[DhtmlXQ_title]UBB bad[/DhtmlXQ_title]\n[DhtmlXQ_binit]" + "9" * 64
                + "[/DhtmlXQ_binit]\n[DhtmlXQ_movelist]7747[/DhtmlXQ_movelist]\n[/DhtmlXQ]\n")


def test_a_broken_fen_tag_names_the_game_and_the_others_are_read():
    games = read_records(THREE.encode())
    assert [g.headers["Event"] for g in games] == ["A", "Broken", "C"]
    assert start_problem(games[0]) is None and start_problem(games[2]) is None
    assert start_problem(games[1]).startswith("FEN tag: bad FEN board at character 0: board must have 10")
    assert game_label(games[1], 2) == "game 2 (Broken: 张三 vs 李四)"
    assert game_label(games[2], 3) == "game 3 (C)"
    with pytest.raises(RecordError, match=r"^game 2 \(Broken: 张三 vs 李四\): FEN tag: bad FEN board"):
        write_records(games, "pgn")


def test_convert_writes_the_readable_games_and_names_the_broken_one(tmp_path, capsys):
    src, out = tmp_path / "three.pgn", tmp_path / "out.pgn"
    src.write_text(THREE, encoding="utf-8")
    assert main(["convert", str(src), str(out)]) == 1  # some games had problems
    err = capsys.readouterr().err
    assert "game 2 (Broken: 张三 vs 李四): FEN tag: bad FEN board at character 0" in err
    assert "converted 2 game(s)" in err
    assert [g.headers["Event"] for g in read_records(out)] == ["A", "C"]


def test_a_ubb_start_without_kings_is_a_fen_problem_not_the_standard_start():
    (game,) = read_records(UBB_NO_KINGS.encode())
    assert start_problem(game) == ("start position: bad FEN board at character 0: "
                                   "red must have exactly one king, found 0")
    with pytest.raises(ValueError, match="red must have exactly one king"):
        game.board()  # as for a PGN's bad [FEN]: no silent standard start


def test_ecco_reports_a_broken_start_and_exits_2_for_an_unreadable_file(tmp_path, capsys):
    ubb, pgn = tmp_path / "bad.ubb", tmp_path / "three.pgn"
    ubb.write_text(UBB_NO_KINGS, encoding="utf-8")
    pgn.write_text(THREE, encoding="utf-8")
    assert main(["ecco", str(ubb), str(pgn)]) == 1
    captured = capsys.readouterr()
    assert "A00" not in captured.out and f"{ubb}: start position: bad FEN" in captured.err
    assert f"{pgn}#2: FEN tag: bad FEN" in captured.err and f"{pgn}#3\tB00\t中炮局" in captured.out
    # a game that cannot be set up is skipped: its error is said once, not a second time as a warning
    assert captured.err.count(f"{pgn}#2: FEN tag: bad FEN") == 1 and f"warning: {pgn}#2" not in captured.err
    assert main(["ecco", str(tmp_path / "missing.pgn")]) == 2
    assert "missing.pgn" in capsys.readouterr().err


def test_the_record_view_refuses_an_unreadable_start_naming_the_game():
    with pytest.raises(RecordOpenError, match=r"^three.pgn: game 2 \(Broken: 张三 vs 李四\): the record's"):
        open_record(THREE.encode(), "three.pgn", 1)
    assert open_record(THREE.encode(), "three.pgn", 2)["count"] == 3  # the other games open
    # no board from the standard start to play on from ("从此处续下"): the view is refused
    with pytest.raises(RecordOpenError, match="start position is bad: .*red must have exactly one king"):
        open_record(UBB_NO_KINGS.encode(), "bad.ubb")


def test_a_file_whose_first_game_is_broken_opens_at_its_first_readable_game():
    # a file just opened (no game chosen): one broken game must not hide the rest of the file
    broken_first = THREE.split("[Event \"C\"]")[0].split("*\n\n", 1)[1] + THREE.split("*\n\n", 1)[0] + "*\n"
    assert [g.headers["Event"] for g in read_records(broken_first.encode())] == ["Broken", "A"]
    with pytest.raises(RecordOpenError, match=r"^two.pgn: game 1 \(Broken: 张三 vs 李四\)"):
        open_record(broken_first.encode(), "two.pgn")  # game 1 asked for by name: refused
    view = open_record(broken_first.encode(), "two.pgn", first_readable=True)
    assert view["index"] == 1 and view["headers"]["Event"] == "A" and view["count"] == 2
    assert len(view["skipped"]) == 1 and view["skipped"][0].startswith(
        "two.pgn: game 1 (Broken: 张三 vs 李四): the record's start position is bad")
    assert open_record(THREE.encode(), "three.pgn", first_readable=True)["skipped"] == []
    with pytest.raises(RecordOpenError, match="start position is bad"):  # nothing readable at all
        open_record(UBB_NO_KINGS.encode(), "bad.ubb", first_readable=True)


def test_analyse_reviews_the_other_games_and_keeps_their_numbers(tmp_path, capsys):
    src, out = tmp_path / "three.pgn", tmp_path / "reviewed.pgn"
    src.write_text(THREE, encoding="utf-8")
    assert main(["analyse", str(src), "--depth", "1", "-q", "--json", "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert "game 2 (Broken: 张三 vs 李四): not analysed: its start position is unreadable" in captured.err
    import json

    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert [r["game"] for r in rows] == [1, 3]  # the file's numbers, not 1, 2
    assert [g.headers["Event"] for g in read_records(out)] == ["A", "C"]
    only = tmp_path / "only.pgn"
    only.write_text(THREE.split("\n\n[Event \"C\"]")[0].split("*\n\n", 1)[1], encoding="utf-8")
    assert main(["analyse", str(only), "--depth", "1"]) == 2
    assert "game 1 (Broken: 张三 vs 李四): FEN tag: bad FEN board" in capsys.readouterr().err
