"""The games database: schema, import of record files, position index and search (SQLite or PostgreSQL).

Quick use::

    from xiangqi.db import connect, import_paths, search_games, similar_games
    engine = connect()                      # games.db in the user data dir, upgraded to the head schema
    report = import_paths(engine, ["games/"])
    hits = search_games(engine, player="胡榮華", result="red", limit=20)
    hits = search_games(engine, fen="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b",
                        mirror=True)
    hits = similar_games(engine, fen, limit=10)
    tree = explore(engine, moves=["炮二平五"], source="master")   # the opening explorer

Layering: imports :mod:`xiangqi.core` (and later :mod:`xiangqi.study` for ECCO), never app or web.
"""

from xiangqi.db.database import DatabaseError, connect, default_data_dir, default_url, upgrade
from xiangqi.db.dates import normalise_date
from xiangqi.db.explore import Exploration, ExploreMove, explore
from xiangqi.db.importer import ImportReport, Problem, import_paths
from xiangqi.db.keys import key_of, mirror_key_of
from xiangqi.db.search import (
           Filters,
           GameHit,
           SearchError,
           count_games,
           search_games,
           similar_games,
           similarity,
)

__all__ = ["DatabaseError", "connect", "default_data_dir", "default_url", "upgrade", "normalise_date",
           "Exploration", "ExploreMove", "explore",
           "ImportReport", "Problem", "import_paths", "key_of", "mirror_key_of", "Filters", "GameHit",
           "SearchError", "count_games", "search_games", "similar_games", "similarity"]
