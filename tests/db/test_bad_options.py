"""Bad option values of ``xiangqi db`` / ``xiangqi book`` and of the search filters: each refused with a
message that says which option and what is wrong (a new user's first hour)."""

from __future__ import annotations

import pytest

from xiangqi.cli import main
from xiangqi.db import connect
from xiangqi.db.search import Filters, SearchError


@pytest.fixture
def url(tmp_path):
    url = f"sqlite:///{tmp_path / 'games.db'}"
    connect(url).dispose()
    return url


@pytest.mark.parametrize(("argv", "option"), [
    (["db", "search", "--similar", ""], "--similar"),
    (["db", "search", "--fen", "  "], "--fen"),
    (["db", "explore", "--fen", ""], "--fen"),
])
def test_empty_fen_is_refused_not_the_start_position(url, capsys, argv, option):
    assert main([*argv, "--db", url]) == 2
    captured = capsys.readouterr()
    assert f"error: {option}: empty FEN" in captured.err
    assert "RNBAKABNR" not in captured.out  # the start position was not searched


def test_book_probe_refuses_an_empty_fen(capsys):
    assert main(["book", "probe", "--fen", ""]) == 2
    captured = capsys.readouterr()
    assert "xiangqi book: error: --fen: empty FEN" in captured.err and "炮二平五" not in captured.out


def test_a_long_bad_fen_is_not_echoed_whole(url, capsys):
    fen = "x" * 5000
    assert main(["db", "search", "--db", url, "--similar", fen]) == 2
    err = capsys.readouterr().err
    assert "x" * 80 + "'… (5000 characters)" in err and "x" * 81 not in err and len(err) < 300
    # the core error quotes a long field the same way (here the side to move)
    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR"
    assert main(["db", "explore", "--db", url, "--fen", f"{start} {fen}"]) == 2
    err = capsys.readouterr().err
    assert "side to move must be w, r or b" in err and "x" * 81 not in err and len(err) < 400


@pytest.mark.parametrize("date", ["2020-13-45", "2020-02-30", "2021-00", "1999-04-31"])
def test_impossible_filter_dates_are_refused(date):
    with pytest.raises(SearchError, match=f"date_from '{date}': no such date"):
        Filters(date_from=date).clauses()
    with pytest.raises(SearchError, match="date_to"):
        Filters(date_to=date).clauses()
    Filters(date_from="2020-02-29", date_to="2020-12").clauses()  # real dates still pass
