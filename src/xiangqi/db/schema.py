"""The games database schema (SQLAlchemy Core): ``games``, ``positions`` and ``boards``.

- ``games``: one row per distinct game. Headers (event, site, round, red, black, result), the date
  normalised (``date``: ``YYYY-MM-DD``/``YYYY-MM``/``YYYY`` or NULL, :mod:`xiangqi.db.dates`) beside
  the raw tag (``date_raw``), the ECCO code of the file's tag (``ecco``) and a column for the code
  computed from the moves (``ecco_computed``, filled by the classifier of :mod:`xiangqi.study`),
  the opening name of the tag (``opening``), every tag as JSON (``headers``), the start FEN when it
  is not the standard start (``fen``), the main line as space-separated ICCS (``moves``) and its
  length (``plies``), the comments joined by newlines (``comments``), where it came from
  (``source``, ``source_index``: the 0-based game index inside that file), a ``collection`` name
  (``master`` for imported corpora; the user's own games get their own) and ``hash``, the SHA-1 of
  start FEN + moves that makes an identical game stored once; ``red_key``, ``black_key``,
  ``event_key`` (migration 0005): the search keys of the names (:func:`xiangqi.db.names.search_key`:
  simplified Chinese, case-folded), what the player and event filters compare.
- ``positions``: the position index, one row per ply of every game's main line (ply 0 = the start):
  ``key`` (signed 64-bit Zobrist key, :mod:`xiangqi.db.keys`) → ``game_id``, ``ply``, ``move``
  (the next move in ICCS, NULL after the last). The primary key (key, game_id, ply) clusters the rows
  of one position together (a ``WITHOUT ROWID`` table on SQLite), so a position lookup is one range scan.
- ``boards``: one row per distinct position key with its material signature (``material``) and its
  pieces packed (``pieces``): what similar-position search ranks. The primary key (material, key)
  clusters the positions of one material together (the key alone is unique too: it fixes the material).

- ``explore_moves``, ``explore_totals``, ``explore_meta`` (migration 0003): the opening explorer's counts
  for the positions of at least :data:`xiangqi.db.aggregate.MIN_GAMES` master games, a position and its
  mirror merged under the smaller of their two keys (``key``); ``move`` is the next move as
  ``from * 90 + to`` in that orientation (-1: the game ends there), with the distinct games per result
  and the count and sum of their years; ``explore_totals`` the distinct games per key;
  ``explore_meta`` the master games' count and highest id when they were built
  (:mod:`xiangqi.db.aggregate`).
- ``games_version`` (migration 0004): one row of change counters of ``games`` kept by triggers (every
  change, and the changes of master games), read by the explorer's cache and the aggregates' check.

Mirrored search needs no stored column: the games where the left-right mirror of position P occurs
are exactly the rows whose ``key`` is the key of mirror(P), so a mirrored search looks up two keys.
"""

from __future__ import annotations

from sqlalchemy import (
                        BigInteger,
                        Column,
                        ForeignKey,
                        Index,
                        Integer,
                        LargeBinary,
                        MetaData,
                        SmallInteger,
                        String,
                        Table,
                        Text,
)

__all__ = ["metadata", "games", "positions", "boards", "explore_moves", "explore_totals", "explore_meta",
           "games_version"]

metadata = MetaData()

games = Table(
    "games", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("hash", String(40), nullable=False, unique=True),
    Column("collection", String(40), nullable=False, server_default="master"),
    Column("event", Text, nullable=False, server_default=""),
    Column("site", Text, nullable=False, server_default=""),
    Column("round", Text, nullable=False, server_default=""),
    Column("date", String(10), nullable=True),
    Column("date_raw", Text, nullable=False, server_default=""),
    Column("red", Text, nullable=False, server_default=""),
    Column("black", Text, nullable=False, server_default=""),
    Column("result", String(7), nullable=False, server_default="*"),
    Column("ecco", String(3), nullable=True),
    Column("ecco_computed", String(3), nullable=True),
    Column("opening", Text, nullable=False, server_default=""),
    Column("headers", Text, nullable=False, server_default="{}"),
    Column("fen", Text, nullable=True),
    Column("moves", Text, nullable=False, server_default=""),
    Column("plies", Integer, nullable=False, server_default="0"),
    Column("comments", Text, nullable=False, server_default=""),
    Column("source", Text, nullable=False, server_default=""),
    Column("source_index", Integer, nullable=False, server_default="0"),
    # migration 0005: the search keys of red, black and event (xiangqi.db.names.search_key)
    Column("red_key", Text, nullable=False, server_default=""),
    Column("black_key", Text, nullable=False, server_default=""),
    Column("event_key", Text, nullable=False, server_default=""),
)
Index("ix_games_red", games.c.red)
Index("ix_games_black", games.c.black)
Index("ix_games_date", games.c.date)
Index("ix_games_ecco", games.c.ecco)
Index("ix_games_ecco_computed", games.c.ecco_computed)  # migration 0002
Index("ix_games_collection", games.c.collection)

positions = Table(
    "positions", metadata,
    Column("key", BigInteger, primary_key=True, autoincrement=False),
    Column("game_id", Integer, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True,
           autoincrement=False),
    Column("ply", SmallInteger, primary_key=True, autoincrement=False),
    Column("move", String(4), nullable=True),
    sqlite_with_rowid=False,
)

boards = Table(
    "boards", metadata,
    Column("material", Integer, primary_key=True, autoincrement=False),
    Column("key", BigInteger, primary_key=True, autoincrement=False),
    Column("pieces", LargeBinary, nullable=False),
    sqlite_with_rowid=False,
)

explore_moves = Table(
    "explore_moves", metadata,
    Column("key", BigInteger, primary_key=True, autoincrement=False),
    Column("move", SmallInteger, primary_key=True, autoincrement=False),
    Column("red", Integer, nullable=False),
    Column("draw", Integer, nullable=False),
    Column("black", Integer, nullable=False),
    Column("unknown", Integer, nullable=False),
    Column("n_year", Integer, nullable=False),
    Column("sum_year", BigInteger, nullable=False),
    sqlite_with_rowid=False,
)

explore_totals = Table(
    "explore_totals", metadata,
    Column("key", BigInteger, primary_key=True, autoincrement=False),
    Column("games", Integer, nullable=False),
    sqlite_with_rowid=False,
)

explore_meta = Table(
    "explore_meta", metadata,
    Column("name", String(20), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# migration 0004: one row (id 1), bumped by triggers on every insert, update and delete of ``games``
# (``master_changes`` for the rows of collections other than ``mine``): the explorer's cache version
games_version = Table(
    "games_version", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("changes", BigInteger, nullable=False),
    Column("master_changes", BigInteger, nullable=False),
)
