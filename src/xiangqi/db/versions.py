"""What the explorer's cached answers depend on: the games' change counters and an in-process generation.

The opening explorer (:mod:`xiangqi.db.explore`) keeps answers while the games are unchanged; the
aggregates (:mod:`xiangqi.db.aggregate`) are valid while the master games are. Both read the counters
of ``games_version`` (migration 0004) when the database has them (:func:`has_version_table`), and the
explorer's cache also keys on :func:`generation`, which :func:`changed` bumps after a change made in
this process (a rebuild of the aggregates, the user's own games). Both modules import this one, so
the aggregates need not import the explorer that reads them (tests/test_layers.py, issue 30).
"""

from __future__ import annotations

from sqlalchemy import inspect

__all__ = ["changed", "generation", "has_version_table"]

_generation = [0]
_HAS_VERSION: dict[str, bool] = {}


def changed() -> None:
    """Forget the explorer's cached answers (:mod:`xiangqi.db.owned` calls this after changing the user's
    games, :func:`xiangqi.db.aggregate.rebuild` after a rebuild; the cache also checks the games table's
    change counter itself, so changes by other processes are seen)."""
    _generation[0] += 1


def generation() -> int:
    """The in-process generation of the explorer's cache: how many times :func:`changed` was called."""
    return _generation[0]


def has_version_table(conn) -> bool:
    """True when the database of ``conn`` (a SQLAlchemy connection) has the ``games_version`` counters
    (migration 0004; noted per database URL)."""
    url = conn.engine.url.render_as_string(hide_password=False)
    has = _HAS_VERSION.get(url)
    if has is None:
        has = _HAS_VERSION[url] = inspect(conn).has_table("games_version")
    return has
