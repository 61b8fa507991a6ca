"""``xiangqi match --openings-file``, ``--first-game`` and ``--sprt-prior``: a stopped match continued
with new openings, its SPRT counting the earlier games."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from xiangqi.match.runner import OPENINGS, MatchError, opening_board, read_openings
from xiangqi.match.sprt import Sprt, pgn_scores

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")
ROOT = Path(__file__).resolve().parents[2]


def test_read_openings_skips_comments_and_names_a_bad_line(tmp_path):
    f = tmp_path / "o.tsv"
    f.write_text("# a comment\n\nA 1\th2e2 h9g7\t# 12 games\nB 2\tc3c4\n", encoding="utf-8")
    assert read_openings(f) == (("A 1", "h2e2 h9g7"), ("B 2", "c3c4"))
    f.write_text("A\th2e2\nB\th2e3\n", encoding="utf-8")
    with pytest.raises(MatchError, match=r"o.tsv:2: opening 'h2e3'"):
        read_openings(f)
    f.write_text("only a name\n", encoding="utf-8")
    with pytest.raises(MatchError, match=r"o.tsv:1: expected 'name<TAB>moves'"):
        read_openings(f)
    f.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(MatchError, match="no openings"):
        read_openings(f)


def test_the_book_openings_file_is_new_legal_and_distinct():
    ops = read_openings(ROOT / "bench" / "openings-book-8ply.tsv")
    assert len(ops) == 60 and all(len(m.split()) == 8 for _, m in ops)
    fens = {opening_board(m).fen() for _, m in ops}
    assert len(fens) == 60
    assert not fens & {opening_board(m).fen() for _, m in OPENINGS}


def test_pgn_scores_of_one_player():
    pgn = "".join(f'[Red "{r}"]\n[Black "{b}"]\n[Result "{res}"]\n\n1. h2e2 *\n\n'
                  for r, b, res in [("A", "B", "1-0"), ("B", "A", "1-0"), ("A", "B", "1/2-1/2"),
                                    ("B", "A", "*")])
    assert pgn_scores(pgn, "A") == [1.0, 0.0, 0.5]


def test_cli_continues_a_match_with_new_openings_and_the_earlier_games_in_its_sprt(tmp_path, capsys):
    from xiangqi.cli import main

    ops = tmp_path / "ops.tsv"
    ops.write_text("X\tc3c4 c6c5\nY\tg0e2 g6g5\n", encoding="utf-8")
    prior = tmp_path / "part1.pgn"
    name = os.path.basename(sys.executable)  # A's name in the match (B's is name#2)
    # two earlier pairs, both won by A
    prior.write_text("".join(f'[Red "{r}"]\n[Black "{b}"]\n[Result "{res}"]\n\n1. h2e2 *\n\n'
                             for r, b, res in [(name, "B", "1-0"), ("B", name, "0-1")] * 2), encoding="utf-8")
    a = f"{sys.executable} {FAKE} first"
    b = f"{sys.executable} {FAKE} nobestmove"  # every game a forfeit win for A
    out = tmp_path / "part2.pgn"
    status = main(["match", a, b, "--games", "2", "--tc", "depth=1", "--openings-file", str(ops),
                   "--first-game", "5", "--sprt", "0", "400", "--sprt-prior", str(prior), "--pgn", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert status == 0
    assert lines[0] == f"SPRT: 4 earlier games of {name} from {prior}"
    # game 5 is the first of the third pair: the file's opening (5-1)//2 % 2 = 0 with A as Red
    assert lines[1].startswith(f"Game 5: {name} vs {name}#2 (X): ")
    assert lines[2].startswith(f"Game 6: {name}#2 vs {name} (X): ")
    s = Sprt(0, 400)
    for x in [1.0] * 6:
        s.add(x)
    assert any(line.startswith(f"LLR {s.llr():.3f}") for line in lines)
    text = out.read_text(encoding="utf-8")
    assert "1. C3-C4 C6-C5" in text and text.count('[Round "') == 2
    assert "Variant" not in text and "Shuffle" not in text  # games from the standard start


def test_cli_rejects_bad_continuation_settings(tmp_path, capsys):
    from xiangqi.cli import main

    cmd = f"{sys.executable} {FAKE} first"
    assert main(["match", cmd, cmd, "--first-game", "0", "--pgn", ""]) == 2
    assert "--first-game must be >= 1" in capsys.readouterr().err
    odd = tmp_path / "odd.pgn"
    odd.write_text(f'[Red "{os.path.basename(sys.executable)}"]\n[Black "x"]\n[Result "1-0"]\n\n',
                   encoding="utf-8")
    assert main(["match", cmd, cmd, "--sprt", "0", "10", "--sprt-prior", str(odd), "--pgn", ""]) == 2
    assert "1 games, an incomplete pair" in capsys.readouterr().err
    assert main(["match", cmd, cmd, "--openings-file", str(tmp_path / "none.tsv"), "--pgn", ""]) == 2
    assert "cannot read the openings file" in capsys.readouterr().err
