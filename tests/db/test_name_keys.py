"""Names found whatever their script (db/names.py, migration 0005): a simplified query finds the traditional
names of Big5 files and the other way round, Latin names case-insensitively; on SQLite and PostgreSQL.

The games are written here: A with traditional names (胡榮華 - 呂欽, 全國象棋個人賽, as CCPD's Big5 files
spell them), B with simplified ones (许银川 - LIU DaHua, 全国象棋团体赛); C is the user's own game (stored
by db/owned.py, the reader's row), with a traditional event.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select, text

from xiangqi.core.pgn import read_game
from xiangqi.db import aggregate, connect, import_paths, search_games
from xiangqi.db.database import current_revision, upgrade
from xiangqi.db.names import search_key
from xiangqi.db.owned import put_game
from xiangqi.db.schema import games

GAME_A = """[Event "全國象棋個人賽"]
[Site "上海"]
[Red "胡榮華"]
[Black "呂欽"]
[Result "1-0"]

1. 炮二平五 馬8進7 2. 馬二進三 車9平8 1-0
"""
GAME_B = """[Event "全国象棋团体赛"]
[Site "广州"]
[Red "许银川"]
[Black "LIU DaHua"]
[Result "0-1"]

1. 兵七进一 炮2平3 2. 炮八平五 0-1
"""
GAME_C = """[Event "象棋對局"]
[Red "我"]
[Black "電腦"]
[Result "*"]
[Format "ICCS"]

1. b2e2 h9g7 *
"""


def test_search_key_values():
    assert search_key("胡榮華") == search_key("胡荣华") == "胡荣华"
    assert search_key("全國象棋個人賽") == "全国象棋个人赛"
    assert search_key("呂欽") == "吕钦" and search_key("許銀川") == "许银川"
    assert search_key("LIU DaHua") == "liu dahua"
    assert search_key("ＬＩＵ Ｄａｈｕａ １") == "liu dahua 1"  # full-width Latin and digits
    assert search_key(" 胡榮華 ") == "胡荣华"
    assert search_key("") == ""


@pytest.fixture(scope="module")
def named(backend, tmp_path_factory):
    """(engine, ids) of a database holding games A and B (imported) and C (the user's own game)."""
    folder = tmp_path_factory.mktemp("names")
    (folder / "a.pgn").write_text(GAME_A, encoding="utf-8")
    (folder / "b.pgn").write_text(GAME_B, encoding="utf-8")
    engine = backend.connect()
    report = import_paths(engine, [folder / "a.pgn", folder / "b.pgn"])
    assert report.added == 2 and report.problems == []
    c = put_game(engine, read_game(GAME_C), source="library:1", token="t")
    by_red = {h.red: h.id for h in search_games(engine, source="both")}
    return engine, {"A": by_red["胡榮華"], "B": by_red["许银川"], "C": c}


def found(engine, ids, **filters) -> set[str]:
    name_of = {v: k for k, v in ids.items()}
    return {name_of[h.id] for h in search_games(engine, source="both", **filters)}


@pytest.mark.parametrize(("filters", "expected"), [
    ({"player": "胡荣华"}, {"A"}),               # simplified query, traditional name
    ({"player": "胡榮華"}, {"A"}),               # the name as stored
    ({"red": "胡荣"}, {"A"}),                    # a substring
    ({"black": "胡荣华"}, set()),                # he is red
    ({"black": "吕钦"}, {"A"}),
    ({"player": "許銀川"}, {"B"}),               # traditional query, simplified name
    ({"red": "許銀川"}, {"B"}),
    ({"red": "许银川"}, {"B"}),
    ({"player": "liu dahua"}, {"B"}),            # Latin names: case-insensitive
    ({"black": "LIU DAHUA"}, {"B"}),
    ({"player": "ｌｉｕ"}, {"B"}),               # full-width Latin
    ({"event": "全国象棋个人赛"}, {"A"}),         # simplified query, traditional event
    ({"event": "全國象棋個人賽"}, {"A"}),
    ({"event": "全國象棋團體賽"}, {"B"}),         # traditional query, simplified event
    ({"event": "全国"}, {"A", "B"}),
    ({"event": "象棋对局"}, {"C"}),              # the user's own game (db/owned.py)
    ({"player": "电脑"}, {"C"}),
    ({"player": "胡荣华", "event": "个人"}, {"A"}),
    ({"player": "胡荣华", "event": "团体"}, set()),
    ({"player": "%"}, set()),                    # LIKE wildcards are still escaped
    ({"site": "上海"}, {"A"}),                   # other fields as before: the text as stored
    ({"site": "广州"}, {"B"}),
])
def test_names_match_regardless_of_script(named, filters, expected):
    engine, ids = named
    assert found(engine, ids, **filters) == expected


def test_stored_keys(named):
    engine, ids = named
    with engine.connect() as conn:
        rows = {r.id: (r.red_key, r.black_key, r.event_key) for r in conn.execute(
            select(games.c.id, games.c.red_key, games.c.black_key, games.c.event_key))}
    assert rows[ids["A"]] == ("胡荣华", "吕钦", "全国象棋个人赛")
    assert rows[ids["B"]] == ("许银川", "liu dahua", "全国象棋团体赛")
    assert rows[ids["C"]] == ("我", "电脑", "象棋对局")


def test_migration_0005_backfills_a_database_made_at_0004(backend):
    """Rows written at 0004 (more than one backfill batch) get their keys; valid aggregates stay valid."""
    engine = connect(backend.url(), migrate=False)
    backend.engines.append(engine)
    upgrade(engine, "0004")
    n = 2050  # the migration's BATCH is 2,000: two batches
    rows = [{"hash": f"{i:040x}", "red": "胡榮華" if i % 2 else "Lü Qin", "black": "許銀川",
             "event": "全國象棋個人賽" if i == 7 else ""} for i in range(n)]
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO games (hash, red, black, event) VALUES (:hash, :red, :black, :event)"),
                     rows)
        changes = conn.execute(text("SELECT master_changes FROM games_version")).scalar_one()
        top = conn.execute(text("SELECT max(id) FROM games")).scalar_one()
        # as aggregate.rebuild notes them (the explorer's tables are empty: no positions)
        conn.execute(text("INSERT INTO explore_meta (name, value) VALUES ('games', :n), ('max_id', :top), "
                          "('changes', :c)"), {"n": n, "top": top, "c": changes})
    with engine.connect() as conn:
        assert aggregate.valid(conn)
    upgrade(engine)
    assert current_revision(engine) == "0005"
    assert len(search_games(engine, player="胡荣华")) == n // 2
    assert len(search_games(engine, red="lü qin")) == n // 2
    assert len(search_games(engine, black="许银川")) == n
    assert [h.event for h in search_games(engine, event="个人赛")] == ["全國象棋個人賽"]
    with engine.connect() as conn:
        keys = conn.execute(text("SELECT red_key, black_key, event_key FROM games ORDER BY id")).all()
        assert keys[0] == ("lü qin", "许银川", "") and keys[1] == ("胡荣华", "许银川", "")
        assert keys[7] == ("胡荣华", "许银川", "全国象棋个人赛")
        assert aggregate.valid(conn)  # the keys do not change what the aggregates count
