"""The opening explorer on a small database built by hand, on SQLite and PostgreSQL.

The eight games (each written below as ICCS moves) and what the explorer must count, worked out by hand:

- G1 ``h2e2 h9g7 h0g2 i9h9`` 1-0 2001, G2 ``h2e2 h9g7 h0g2`` 0-1 1999, G3 ``h2e2 b9c7`` 1/2-1/2 2005,
  G4 ``b2e2 b9c7`` 1-0 2010 (the mirror of 炮二平五 马8进7), G5 ``c3c4`` no result, no date,
  G6 ``h2e2 h9g7`` 1-0 2020 in the collection ``mine``, G7 ``h2e2 h9g7 h0g2 g7h9 g2h0 h9g7`` 0-1 2003
  (the position after 炮二平五 recurs at ply 5 with the same reply), G8 ``h2e2 h9g7 e2h2 g7h9 b2e2 b9c7``
  1/2-1/2 1990 (reaches the position after 炮二平五 at ply 1 and its mirror at ply 5, both times
  answered with 马8进7 once mirrored back).
- After 炮二平五, mirrored, both sources: 7 games (all but G5); 马8进7 (h9g7) 6 games = G1 G2 G4 G6 G7 G8:
  3 red wins (G1 G4 G6), 1 draw (G8), 2 black wins (G2 G7): 50.0 / 16.7 / 33.3 %, mean year
  (2001+1999+2010+2020+2003+1990)/6 = 2003.8 → 2004; 马2进3 (b9c7) 1 game = G3, a draw.
- Without the mirror: 6 games (not G4); h9g7 5 games (G1 G2 G6 G7 G8).
- Source master (not G6): h9g7 5 games, 2 red wins; source mine: h9g7 1 game, 100 % red.
- The start: 8 games; h2e2 6 (G1 G2 G3 G6 G7 G8), b2e2 2 (G4, and G8 back at the start at ply 4: the
  start is symmetric, nothing is merged), c3c4 1 (G5, result unknown: no percentages).
"""

from __future__ import annotations

import pytest

from xiangqi.cli import main
from xiangqi.db import import_paths
from xiangqi.db.explore import explore, mirror_move
from xiangqi.db.search import SearchError

GAMES = [
    ("G1", "h2e2 h9g7 h0g2 i9h9", "1-0", "2001.01.01", "master"),
    ("G2", "h2e2 h9g7 h0g2", "0-1", "1999.05.02", "master"),
    ("G3", "h2e2 b9c7", "1/2-1/2", "2005", "master"),
    ("G4", "b2e2 b9c7", "1-0", "2010.10.10", "master"),
    ("G5", "c3c4", "*", "", "master"),
    ("G6", "h2e2 h9g7", "1-0", "2020.03.04", "mine"),
    ("G7", "h2e2 h9g7 h0g2 g7h9 g2h0 h9g7", "0-1", "2003.07.07", "master"),
    ("G8", "h2e2 h9g7 e2h2 g7h9 b2e2 b9c7", "1/2-1/2", "1990", "master"),
]
AFTER_H2E2 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"


def _pgn(name, moves, result, date):
    ms = moves.split()
    body = " ".join((f"{i // 2 + 1}. " if i % 2 == 0 else "") + m for i, m in enumerate(ms))
    return (f'[Event "{name}"]\n[Red "{name} red"]\n[Black "{name} black"]\n[Date "{date}"]\n'
            f'[Result "{result}"]\n[Format "ICCS"]\n\n{body} {result}\n')


@pytest.fixture(scope="module")
def engine(backend, tmp_path_factory):
    eng = backend.connect()
    folder = tmp_path_factory.mktemp("explore")
    for collection in ("master", "mine"):
        path = folder / f"{collection}.pgn"
        path.write_text("\n".join(_pgn(n, m, r, d) for n, m, r, d, c in GAMES if c == collection),
                        encoding="utf-8")
        report = import_paths(eng, [path], collection=collection)
        assert report.skipped == 0 and not report.problems
    return eng


def _row(found, move):
    (row,) = [m for m in found.moves if m.move == move]
    return row


def test_counts_after_h2e2_mirrored(engine):
    found = explore(engine, moves=["h2e2"])
    assert found.fen == AFTER_H2E2
    assert (found.games, found.ended) == (7, 0)
    assert [m.move for m in found.moves] == ["h9g7", "b9c7"]
    h = _row(found, "h9g7")
    assert (h.text, h.games, h.red, h.draw, h.black, h.unknown) == ("马8进7", 6, 3, 1, 2, 0)
    assert (h.red_pct, h.draw_pct, h.black_pct, h.avg_year) == (50.0, 16.7, 33.3, 2004)
    b = _row(found, "b9c7")
    assert (b.text, b.games, b.draw, b.red_pct, b.draw_pct, b.avg_year) == ("马2进3", 1, 1, 0.0, 100.0, 2005)


def test_the_same_position_from_a_fen_and_in_chinese_notation(engine):
    by_fen = explore(engine, AFTER_H2E2)
    by_text = explore(engine, moves=["炮二平五"])
    assert by_fen.moves == by_text.moves and by_fen.games == by_text.games == 7
    assert by_fen.ecco is None  # an opening name needs the moves from the start
    assert (by_text.ecco, by_text.opening) == ("B00", "中炮局")
    assert by_text.to_dict()["opening_en"] == "Central Cannon Opening"
    assert by_fen.to_dict()["opening_en"] is None


def test_without_mirror(engine):
    found = explore(engine, moves=["h2e2"], mirror=False)
    assert found.games == 6
    h = _row(found, "h9g7")
    assert (h.games, h.red, h.draw, h.black) == (5, 2, 1, 2)


def test_mirrored_side_is_merged_with_moves_mirrored_back(engine):
    # from the other wing: after 炮八平五 the mirrored games (the 炮二平五 ones) count under 马2进3
    found = explore(engine, moves=["b2e2"])
    assert found.games == 7
    b = _row(found, "b9c7")
    assert (b.text, b.games, b.red, b.draw, b.black) == ("马2进3", 6, 3, 1, 2)
    assert _row(found, "h9g7").games == 1  # G3's 马2进3, mirrored


@pytest.mark.parametrize(("source", "games", "h9g7"), [
    ("both", 7, (6, 3, 1, 2)), ("master", 6, (5, 2, 1, 2)), ("mine", 1, (1, 1, 0, 0)),
])
def test_sources(engine, source, games, h9g7):
    found = explore(engine, moves=["h2e2"], source=source)
    h = _row(found, "h9g7")
    assert found.games == games and (h.games, h.red, h.draw, h.black) == h9g7
    if source == "mine":
        assert (h.red_pct, h.avg_year, [m.move for m in found.moves]) == (100.0, 2020, ["h9g7"])


def test_start_position(engine):
    found = explore(engine)
    assert found.games == 8
    assert [(m.move, m.games) for m in found.moves] == [("h2e2", 6), ("b2e2", 2), ("c3c4", 1)]
    c = _row(found, "c3c4")
    assert (c.text, c.unknown, c.red_pct, c.avg_year) == ("兵七进一", 1, None, None)
    assert found.ecco is None  # no move played yet


def test_top_games_are_the_most_recent_with_the_move_they_played(engine):
    found = explore(engine, moves=["h2e2"], top=4)
    assert [h.event for h in found.top] == ["G6", "G4", "G3", "G7"]
    assert found.top_moves == ["h9g7", "h9g7", "b9c7", "h9g7"]  # G4 played b9c7 on the other wing
    assert [h.mirrored for h in found.top] == [False, True, False, False]
    assert [h.ply for h in found.top] == [1, 1, 1, 1]
    d = found.to_dict()
    assert d["top"][1]["next_text"] == "马8进7" and d["moves"][0]["move"] == "h9g7"
    master = explore(engine, moves=["h2e2"], source="master", top=2)
    assert [h.event for h in master.top] == ["G4", "G3"]


def test_a_game_ending_in_the_position(engine):
    # G1 G2 G4 (mirrored) G6 G7 G8 reach it; G4 and G6 end there, G7 ends there after playing 马二进三
    # from it at ply 2, G8 ends in its mirror after playing 炮五平二 from it: a game ending in the
    # position counts in `games` and `ended`, under no move
    found = explore(engine, moves=["h2e2", "h9g7"])
    assert (found.games, found.ended) == (6, 4)
    assert [(m.move, m.games) for m in found.moves] == [("h0g2", 3), ("e2h2", 1)]


def test_bad_input_is_a_search_error(engine):
    with pytest.raises(SearchError, match="bad FEN"):
        explore(engine, "not a fen")
    with pytest.raises(SearchError, match="move 2"):
        explore(engine, moves=["h2e2", "h2e2"])
    with pytest.raises(SearchError, match="source"):
        explore(engine, source="theirs")


def test_mirror_move():
    assert mirror_move("b2e2") == "h2e2" and mirror_move("a0a1") == "i0i1" and mirror_move("e1e2") == "e1e2"


def test_cli_explore(engine, capsys):
    url = engine.url.render_as_string(hide_password=False)
    assert main(["db", "explore", "--db", url, "炮二平五"]) == 0
    out = capsys.readouterr().out
    assert "马8进7" in out and "50.0" in out and "7 games" in out
    assert main(["db", "explore", "--db", url, "--source", "mine", "--json", "h2e2"]) == 0
    import json

    d = json.loads(capsys.readouterr().out)
    assert d["games"] == 1 and d["moves"][0]["text"] == "马8进7"
    assert main(["db", "explore", "--db", url, "--fen", "bad"]) == 2
    assert "bad FEN" in capsys.readouterr().err


def test_recent_games_go_on_from_the_position(engine, monkeypatch):
    # after 炮二平五 马8进7 (mirrored: G4's 炮八平五 马2进3) G6 (2020) and G4 (2010) end there: they count in
    # ``ended`` but are no recent game to learn from, so the list is G7 2003, G1 2001, G2 1999, G8 1990;
    # G7 and G8 also end in it (ply 6, G8 in the mirror) but went on from it at ply 2: they stay
    import importlib

    ex = importlib.import_module("xiangqi.db.explore")
    for scan in (500, -1):  # the rare position's sort and the common position's date walk
        monkeypatch.setattr(ex, "SCAN_DATES", scan)
        ex.changed()
        found = explore(engine, moves=["h2e2", "h9g7"], top=5)
        assert found.games == 6 and found.ended == 4
        assert [h.event for h in found.top] == ["G7", "G1", "G2", "G8"]
        assert found.top_moves == ["h0g2", "h0g2", "h0g2", "e2h2"]


def test_recent_games_the_same_by_the_date_walk(engine, monkeypatch):
    import importlib

    ex = importlib.import_module("xiangqi.db.explore")  # the module (xiangqi.db.explore is also the function)

    for moves in (["h2e2"], [], ["h2e2", "h9g7"]):
        for source in ("both", "master"):
            plain = explore(engine, moves=moves, source=source, top=4)
            monkeypatch.setattr(ex, "SCAN_DATES", -1)  # every position walks the date index
            ex.changed()
            walked = explore(engine, moves=moves, source=source, top=4)
            monkeypatch.setattr(ex, "SCAN_DATES", 500)
            ex.changed()
            assert [(h.id, h.ply, h.mirrored) for h in walked.top] == \
                [(h.id, h.ply, h.mirrored) for h in plain.top]
            assert walked.top_moves == plain.top_moves and walked.moves == plain.moves


def test_answers_are_cached_until_the_games_change(engine, tmp_path):
    first = explore(engine, moves=["c3c4"])
    assert explore(engine, moves=["c3c4"]) == first
    path = tmp_path / "one.pgn"
    path.write_text(_pgn("G9", "c3c4 c6c5", "0-1", "2024"), encoding="utf-8")
    import_paths(engine, [path])
    later = explore(engine, moves=["c3c4"])
    assert later.games == first.games + 1 and later.top[0].event == "G9"


def test_aggregated_counts_equal_the_live_ones(engine):
    """The pre-aggregated counts (xiangqi.db.aggregate, every position aggregated here) give the same
    answers as the position index for every position of every game, mirrored or not, each source."""
    from sqlalchemy import delete

    from xiangqi.db import aggregate
    from xiangqi.db.explore import _aggregated, _version, changed
    from xiangqi.db.keys import key_of, mirror_key_of
    from xiangqi.db.schema import explore_meta

    lines = sorted({tuple(m.split()[:n]) for _name, m, *_ in GAMES for n in range(len(m.split()) + 1)})
    cases = [(line, source, mirror) for line in lines for source in ("master", "mine", "both")
             for mirror in (True, False)]

    def answers():
        changed()
        return [explore(engine, moves=list(line), source=source, mirror=mirror).to_dict()
                for line, source, mirror in cases]

    with engine.begin() as conn:
        conn.execute(delete(explore_meta))  # no aggregates: the live queries
    live = answers()
    # every position of the master games, a position and its mirror counted once (of GAMES: the start,
    # 炮二平五 (G4, G8 reach its mirror), +马8进7, +马二进三, +车9平8, +马2进3, 兵七进一, G7 at ply 4,
    # G8 at ply 3)
    from sqlalchemy import select

    from xiangqi.core.board import Board, Move
    from xiangqi.db.schema import games

    distinct = set()
    with engine.connect() as conn:
        for (moves,) in conn.execute(select(games.c.moves).where(games.c.collection != "mine")):
            board = Board()
            distinct.add(min(key_of(board), mirror_key_of(board)))
            for m in moves.split():
                board.push(Move.from_iccs(m))
                distinct.add(min(key_of(board), mirror_key_of(board)))
    assert len(distinct) >= 9
    assert aggregate.rebuild(engine, min_games=1) == len(distinct)
    from xiangqi.db.explore import position_of

    with engine.connect() as conn:
        board, _ = position_of(None, ["h2e2"])
        total, rows = _aggregated(conn, key_of(board), mirror_key_of(board), _version(conn))
        assert total == 6  # master games with 炮二平五 or its mirror: all but G5 and G6
        assert sorted((mv, c[:4]) for mv, c in rows) == [("b9c7", [0, 1, 0, 0]), ("h9g7", [2, 1, 2, 0])]
    assert answers() == live
    try:
        aggregate.rebuild(engine)  # back to the default threshold for the other tests
    finally:
        changed()
