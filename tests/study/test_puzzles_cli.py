"""``xiangqi puzzles mine|list|show`` on a constructed game: from a record file and from the games
database (SQLite in tmp_path)."""

from __future__ import annotations

import json

from xiangqi.cli import main

# Red's 炮 waits on a6; Black's 炮 d5-d8 shuts its own horse in; 炮 a6-a9 is 闷宫 (see test_puzzles.py).
PGN = """[Game "Chinese Chess"]
[Event "constructed"]
[Red "R"]
[Black "B"]
[Result "1-0"]
[FEN "3aka3/4n4/9/9/C2c5/9/9/9/4A4/5K3 w - - 0 1"]

1. a5a6 d5d8 2. a6a9 1-0
"""
DRAWN = PGN.replace('[Result "1-0"]', '[Result "1/2-1/2"]').replace("1-0\n", "1/2-1/2\n")


def test_mine_a_record_file_then_list_and_show(tmp_path, capsys):
    rec = tmp_path / "g.pgn"
    rec.write_text(PGN + "\n" + DRAWN, encoding="utf-8")
    out = tmp_path / "mined.jsonl"
    assert main(["puzzles", "mine", str(rec), "--out", str(out), "-q"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games"] == 2 and summary["puzzles"] == 1 and summary["counts"] == {"verified": 1,
                                                                                        "no_winner": 1}
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    got = [(r["id"], r["goal"], r["mate"], r["solution"]) for r in rows]
    assert got == [("mined-g.pgn-0", "mate", 1, ["a6a9"])]
    # mining again skips the game already mined
    assert main(["puzzles", "mine", str(rec), "--out", str(out), "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["puzzles"] == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1

    assert main(["puzzles", "list", "--file", str(out), "--theme", "menGong"]) == 0
    listed = capsys.readouterr().out
    assert "mined-g.pgn-0" in listed and "一步杀" in listed
    assert main(["puzzles", "show", "mined-g.pgn-0", "--file", str(out)]) == 0
    assert "炮九进三" in capsys.readouterr().out
    assert main(["puzzles", "show", "nope", "--file", str(out)]) == 2


def test_mine_the_games_database(tmp_path, capsys):
    from xiangqi.db.database import connect
    from xiangqi.db.importer import import_paths

    rec = tmp_path / "g.pgn"
    rec.write_text(PGN, encoding="utf-8")
    db = tmp_path / "games.db"
    import_paths(connect(str(db)), [rec])
    out = tmp_path / "mined.jsonl"
    assert main(["puzzles", "mine", "--db", str(db), "--limit", "5", "--out", str(out), "-q"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["puzzles"] == 1
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["id"] == "mined-game1" and row["source"] == "mined/db" and row["solution"] == ["a6a9"]
