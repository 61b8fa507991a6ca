"""``xiangqi db`` / ``book build`` / ``puzzles mine`` given a path that is not there, a file that is not a
database, or a damaged database: one line on stderr naming the path and what is wrong, exit status 2
(README, "Command line": bad input gives one clear line and status 2), and nothing created or written."""

from __future__ import annotations

import sqlite3

import pytest

from xiangqi.cli import main
from xiangqi.db import connect

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


@pytest.mark.parametrize("argv", [["db", "import", "-q", "{tmp}/x.pgn"], *READ_COMMANDS],
                         ids=lambda a: " ".join(a[:2]))
def test_a_file_that_is_not_a_database(tmp_path, capsys, argv):
    (tmp_path / "x.pgn").write_text("1. 炮二平五 *\n", encoding="utf-8")
    text = tmp_path / "notes.txt"
    text.write_text("these are my notes, not a games database\n" * 20, encoding="utf-8")
    assert main(_argv(argv, tmp_path, str(text))) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.endswith(f"error: cannot open or upgrade the database sqlite:///{text}: "
                         "file is not a database")
    assert text.read_text(encoding="utf-8").startswith("these are my notes")


def _damage_the_games_tables(db) -> None:
    """Overwrite the root pages of every table and index but ``alembic_version`` with junk: the schema
    and the revision still read, so the database opens and the damage shows only when a command reads
    the games."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [r for (r,) in conn.execute("SELECT rootpage FROM sqlite_master WHERE rootpage > 1 "
                                        "AND tbl_name != 'alembic_version'")]
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    assert len(roots) > 5
    with open(db, "r+b") as f:
        for root in roots:
            f.seek((root - 1) * page_size)
            f.write(b"\xa5" * page_size)


@pytest.mark.parametrize("argv", [["db", "import", "-q", "{tmp}/x.pgn"], *READ_COMMANDS],
                         ids=lambda a: " ".join(a[:2]))
def test_a_damaged_database(tmp_path, capsys, argv):
    (tmp_path / "x.pgn").write_text("1. 炮二平五 马８进７ 2. 马二进三 *\n", encoding="utf-8")
    db = tmp_path / "games.db"
    connect(str(db)).dispose()
    _damage_the_games_tables(db)
    assert main(_argv(argv, tmp_path, str(db))) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.endswith(f"error: database sqlite:///{db}: database disk image is malformed"), line


def test_the_page_gets_a_503_with_one_line_for_a_damaged_database(tmp_path):
    """The same database behind the web page's explorer and search routes (web/db_api.py)."""
    from tests.webclient import api_client

    from xiangqi.web.server import create_app

    db = tmp_path / "games.db"
    connect(str(db)).dispose()
    _damage_the_games_tables(db)
    app = create_app(tmp_path, move_provider=lambda board, level: next(iter(board.legal_moves)), warmup=False,
                     engine_delay_s=0)
    with api_client(app) as client:
        for path, params in [("/api/explore", {"moves": "h2e2"}), ("/api/db/search", {"player": "胡"})]:
            r = client.get(path, params=params)
            assert r.status_code == 503, (path, r.text)
            assert r.json()["detail"] == (f"the games database cannot be used: database sqlite:///{db}: "
                                          "database disk image is malformed")


@pytest.mark.parametrize("argv", [["puzzles", "list", "--file"], ["puzzles", "show", "p1", "--file"],
                                  ["tb", "probe", "4k4/9/9/9/9/9/9/9/4R4/3K5 w", "--dir"]],
                         ids=lambda a: " ".join(a[:2]))
def test_other_commands_name_a_file_or_folder_that_is_not_there(tmp_path, capsys, argv):
    # before: an empty puzzle list (exit 0), "no puzzle 'p1'" (exit 1), "the position is not in the
    # tables" (exit 1): nothing said that the path was wrong
    missing = str(tmp_path / "typo")
    assert main([*argv, missing]) == 2
    line = _one_line(capsys.readouterr().err)
    what = "folder" if argv[0] == "tb" else "file"
    assert line.endswith(f"error: {argv[-1]}: no such {what}: {missing!r}"), line
