"""The games table's change counters (migration 0004): kept by triggers on SQLite and PostgreSQL, read
by the explorer's cache and by the aggregates' freshness check, seen across engines (processes)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import delete, select, update

from xiangqi.core.board import Board
from xiangqi.core.pgn import read_game
from xiangqi.db import aggregate, connect, count_games, import_paths
from xiangqi.db.explore import explore
from xiangqi.db.owned import put_game
from xiangqi.db.schema import games, games_version

START = Board().fen()
CCPD = sorted((Path(__file__).parent.parent / "data" / "corpus" / "ccpd").glob("*.pgn"))


def counters(engine) -> tuple[int, int]:
    with engine.connect() as conn:
        row = conn.execute(select(games_version.c.changes, games_version.c.master_changes)).one()
    return int(row[0]), int(row[1])


def test_triggers_count_master_and_own_changes(backend):
    engine = backend.connect()
    assert counters(engine) == (0, 0)
    report = import_paths(engine, CCPD[:5])
    assert report.added == 5 and counters(engine) == (5, 5)
    with engine.connect() as conn:
        assert aggregate.valid(conn)
    mine = read_game('[Red "我"]\n[Result "1-0"]\n[Format "ICCS"]\n\n1. h2e2 h9g7 1-0\n')
    put_game(engine, mine, source="library:1", token="t")
    assert counters(engine) == (6, 5)  # the user's game: the master aggregates stay valid
    with engine.connect() as conn:
        assert aggregate.valid(conn)
    with engine.begin() as conn:
        conn.execute(update(games).where(games.c.collection == "master", games.c.id == 1).values(event="x"))
    assert counters(engine) == (7, 6)
    with engine.connect() as conn:
        assert not aggregate.valid(conn)  # a master game changed: live queries until the next rebuild
    aggregate.rebuild(engine)
    with engine.connect() as conn:
        assert aggregate.valid(conn)
    with engine.begin() as conn:
        conn.execute(delete(games).where(games.c.collection == "mine"))
    assert counters(engine) == (8, 6)


def test_the_explorer_cache_sees_a_change_made_through_another_engine(backend):
    url = backend.url()
    reader, writer = connect(url), connect(url)
    try:
        import_paths(writer, CCPD[:3])
        before = explore(reader).games
        assert before == count_games(writer, fen=START) >= 1
        assert explore(reader).games == before  # answered from the cache
        import_paths(writer, CCPD[3:])  # no in-process notice reaches the reader's cache
        after = explore(reader)
        assert after.games == count_games(writer, fen=START) > before
        assert sum(m.black for m in after.moves) < after.games
        with writer.begin() as conn:  # changed in place: the same count and highest id
            conn.execute(update(games).values(result="0-1"))
        assert sum(m.black for m in explore(reader).moves) == after.games
    finally:
        reader.dispose()
        writer.dispose()
