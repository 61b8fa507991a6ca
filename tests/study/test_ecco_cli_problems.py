"""``xiangqi ecco`` on damaged input: a game read only in part is classified and its problems listed
on stderr (exit 1, as README says for ``convert`` and ``ecco``), a folder without record files is bad
input (exit 2), and an unreadable file is named once. Before, a truncated game gave exit 0 and no
word on stderr, an empty folder printed nothing with exit 0, and an empty file's path was printed twice."""

from __future__ import annotations

from pathlib import Path

from xiangqi.cli import main

DATA = Path(__file__).parent.parent / "data"
GAME = DATA / "records" / "pgn" / "xiangqijs_readme_iccs_1982.pgn"  # ICCS moves, tests/data/SOURCES.md


def test_truncated_game_is_classified_and_its_problem_listed(tmp_path: Path, capsys) -> None:
    data = GAME.read_bytes()
    cut = tmp_path / "cut.pgn"
    cut.write_bytes(data[:len(data) // 2])  # the move text ends in half a move, after ply 53
    code = main(["ecco", str(cut)])
    captured = capsys.readouterr()
    assert code == 1
    line = captured.out.strip().split("\t")
    whole = main(["ecco", str(GAME)])
    assert whole == 0 and capsys.readouterr().err == ""
    assert line[0] == str(cut) and len(line) == 3 and line[1][0] in "ABCDE"
    assert captured.err == (f"xiangqi ecco: warning: {cut}: truncated: the move text ends in half a move "
                            "'i7' after ply 53: not a move in ICCS, Chinese or WXF notation: 'i7'\n")


def test_folder_without_records_is_bad_input(tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.md").write_text("no games here", encoding="utf-8")
    assert main(["ecco", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"xiangqi ecco: {tmp_path}: no record file (.pgn .txt .xqf .ubb .dhtml .dhtmlxq "
                           ".epd .fen) in this folder")


def test_unreadable_file_is_named_once(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    assert main(["ecco", str(empty)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count(str(empty)) == 1
    assert err == f"xiangqi ecco: {empty}: no game found (not a PGN, XQF, DhtmlXQ or EPD record)"
