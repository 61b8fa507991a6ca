"""``xiangqi db`` / ``book build`` / ``puzzles mine`` given a path that is not there: one line on stderr
naming the path and what is wrong, exit status 2 (README, "Command line": bad input gives one clear line
and status 2), and nothing created or written."""

from __future__ import annotations

import pytest

from xiangqi.cli import main

READ_COMMANDS = [["db", "info"], ["db", "search", "--player", "胡"], ["db", "explore"],
                 ["book", "build", "-q", "-o", "{tmp}/out.xqbook"], ["puzzles", "mine", "-q"]]


def _argv(argv: list[str], tmp_path, db: str) -> list[str]:
    return [a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--db", db]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Background on this error" not in err and "Traceback" not in err and "[SQL:" not in err
    return lines[0]


def test_db_import_of_a_missing_path_fails_naming_it(tmp_path, capsys):
    db = tmp_path / "games.db"
    missing = tmp_path / "no such.pgn"
    assert main(["db", "import", "-q", "--db", str(db), str(missing), str(tmp_path / "gone")]) == 2
    captured = capsys.readouterr()
    line = _one_line(captured.err)
    assert line == f"xiangqi db: error: no such file or folder: {str(missing)!r}, {str(tmp_path / 'gone')!r}"
    assert captured.out == "" and not db.exists()  # refused before the database was opened


def test_db_import_refuses_when_any_one_path_is_missing(tmp_path, capsys):
    good = tmp_path / "g.pgn"
    good.write_text("1. 炮二平五 马８进７ *\n", encoding="utf-8")
    db = tmp_path / "games.db"
    assert main(["db", "import", "-q", "--db", str(db), str(good), str(tmp_path / "typo.pgn")]) == 2
    typo = str(tmp_path / "typo.pgn")
    assert _one_line(capsys.readouterr().err).endswith(f"no such file or folder: {typo!r}")
    assert not db.exists()
    assert main(["db", "import", "-q", "--db", str(db), str(good)]) == 0  # the good path alone imports
    assert "1 added" in capsys.readouterr().out


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_missing_db_file_is_refused_not_created(tmp_path, capsys, argv):
    db = tmp_path / "typo.db"
    assert main(_argv(argv, tmp_path, str(db))) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.endswith(f"error: no games database at {str(db)!r} (no such file; "
                         "`xiangqi db import --db PATH FILE…` creates one)")
    assert not db.exists() and not (tmp_path / "out.xqbook").exists()
