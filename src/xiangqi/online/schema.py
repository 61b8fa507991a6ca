"""The online database's schema, kept by Alembic (``xiangqi/online/migrations``, version table
:data:`VERSION_TABLE`).

:func:`upgrade` brings a database to the newest revision; every server process runs it when it opens
the online database (:class:`~xiangqi.online.accounts.Accounts` and
:class:`~xiangqi.online.store.OnlineStore` call it instead of ``create_all``). On PostgreSQL it
holds an advisory lock (:data:`PG_LOCK_KEY`) for the upgrade, so that processes that start at the
same moment wait for each other instead of both creating the tables. A database that the older
``create_all`` made (its tables there, no version table) is stamped at revision ``0001`` (those
tables) and then upgraded.

This module knows the migrations, not the tables: it sits below the modules that declare them
(:mod:`~xiangqi.online.accounts`, :mod:`~xiangqi.online.store`), which call :func:`upgrade`; the
Alembic environment (``migrations/env.py``) takes their MetaData from :mod:`xiangqi.online.store`.
"""

from __future__ import annotations

import weakref
from pathlib import Path

import sqlalchemy as sa

from xiangqi.core.errors import XiangqiError

__all__ = ["VERSION_TABLE", "PG_LOCK_KEY", "SchemaError", "upgrade", "current_revision", "head_revision"]

VERSION_TABLE = "online_alembic_version"
#: The PostgreSQL advisory lock key of the upgrade (any fixed 64-bit number; "XQONLINE" in ASCII).
PG_LOCK_KEY = 0x58514F4E4C494E45
_MIGRATIONS = Path(__file__).parent / "migrations"
_DONE: weakref.WeakSet[sa.Engine] = weakref.WeakSet()  # engines already upgraded by this process


class SchemaError(XiangqiError):
    """The online database could not be brought to the current schema."""


def _config(connection: sa.Connection | None = None):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Bring the online tables of ``engine`` to ``revision`` (idempotent; once per engine URL and
    process). Raises :class:`SchemaError` when the migration fails."""
    from alembic import command

    if revision == "head" and engine in _DONE:
        return
    from xiangqi.db.database import ALEMBIC_LOCK

    try:
        with ALEMBIC_LOCK, engine.begin() as conn:
            if conn.dialect.name == "postgresql":  # released at the end of this transaction
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_LOCK_KEY - (1 << 63)})
            names = set(sa.inspect(conn).get_table_names())
            if "users" in names and VERSION_TABLE not in names:  # made by create_all before Alembic
                command.stamp(_config(conn), "0001")
            command.upgrade(_config(conn), revision)
    except Exception as exc:
        where = engine.url.render_as_string(hide_password=True)
        raise SchemaError(f"cannot open or upgrade the online database {where}: {exc}") from exc
    if revision == "head":
        _DONE.add(engine)


def current_revision(engine: sa.Engine) -> str | None:
    """The revision the online database is at, or None before any."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(VERSION_TABLE):
            return None
        return MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()


def head_revision() -> str:
    """The newest revision shipped (e.g. ``"0002"``)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config()).get_current_head() or ""
