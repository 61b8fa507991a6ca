"""Opening the games database: the default location, SQLAlchemy engines, SQLite pragmas, Alembic upgrades.

The default database is ``games.db`` in the user data dir, :func:`xiangqi.datadir.default_data_dir`
(``$XIANGQI_DATA_DIR`` when set, else the platform's user data dir for ``pyxiangqi``; the same
directory as the app's store, found without importing the app). Any SQLAlchemy URL works, e.g.
``sqlite:///path/games.db`` or ``postgresql+psycopg://user@host/dbname`` (the PostgreSQL
driver is the user's to install).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url

from xiangqi.core.errors import XiangqiError
from xiangqi.datadir import DATA_DIR_ENV, default_data_dir

__all__ = ["DatabaseError", "DATA_DIR_ENV", "DB_FILE", "default_data_dir", "default_url", "connect",
           "upgrade", "head_revision", "current_revision", "error_text", "shown_url", "database_errors"]

#: File name of the default SQLite database inside the data dir.
DB_FILE = "games.db"
_MIGRATIONS = Path(__file__).resolve().parent / "migrations"


class DatabaseError(XiangqiError):
    """A database that cannot be opened, upgraded or written (bad URL, missing driver, locked file…)."""


def default_url() -> str:
    """The SQLAlchemy URL of the default database, ``sqlite:///<data dir>/games.db``."""
    return f"sqlite:///{default_data_dir() / DB_FILE}"


def _normal_url(url: str | None) -> str:
    """``url`` as :func:`connect` reads it: the default when None, a plain path as an SQLite file URL."""
    url = url or default_url()
    if "://" not in url:
        url = f"sqlite:///{Path(url).expanduser()}"
    return url


def shown_url(url: str | None) -> str:
    """The database ``url`` (None: the default; a plain path: an SQLite file) as messages show it, the
    password hidden."""
    url = _normal_url(url)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # sqlalchemy.exc.ArgumentError: shown as given
        return url


def error_text(exc: BaseException) -> str:
    """One line saying what went wrong in a database error: the driver's own message for an SQLAlchemy
    ``DBAPIError`` (``file is not a database``, ``database disk image is malformed``), else the first line
    of the exception's text; never SQLAlchemy's statement, parameters or "Background on this error" link."""
    orig = getattr(exc, "orig", None)
    text = str(orig if isinstance(orig, BaseException) else exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


class database_errors:  # noqa: N801 (used as a decorator and a context manager, like contextlib's)
    """Context manager: an SQLAlchemy error inside it is raised as :class:`DatabaseError`
    ``"database <url>: <what>"`` (the URL from ``url`` as :func:`shown_url` gives it; the text from
    :func:`error_text`), so that a command given a corrupt file prints one clear line and exits 2."""

    def __init__(self, url: str | None) -> None:
        self.url = url

    def __enter__(self) -> database_errors:
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        from sqlalchemy.exc import SQLAlchemyError

        if exc is not None and isinstance(exc, SQLAlchemyError):
            raise DatabaseError(f"database {shown_url(self.url)}: {error_text(exc)}") from exc
        return False


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA temp_store=MEMORY")
    cur.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache
    cur.execute("PRAGMA busy_timeout=10000")
    cur.close()


def connect(url: str | None = None, *, migrate: bool = True, must_exist: bool = False) -> Engine:
    """An engine for the database at ``url`` (default :func:`default_url`), upgraded to the head schema.

    A plain path (no ``://``) is taken as an SQLite file. SQLite databases get WAL journaling and a
    64 MiB cache; their directory is created, and so is the file unless ``must_exist`` (the commands
    that only read: a mistyped path is then ``DatabaseError("no games database at PATH …")``, not a new
    empty database). ``migrate=False`` skips the Alembic upgrade (for read-only use of a database
    known to be current). Raises :class:`DatabaseError` for a malformed URL, a missing driver or a
    database that cannot be opened (a file that is not an SQLite database, a damaged one), with one
    line of text (:func:`error_text`).
    """
    url = _normal_url(url)
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy.exc.ArgumentError
        raise DatabaseError(f"not a database URL: {url!r} ({exc})") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database).expanduser()
        if must_exist and not path.is_file():
            what = "a folder, not a database file" if path.is_dir() else "no such file"
            raise DatabaseError(f"no games database at {os.fspath(path)!r} ({what}; "
                                f"`xiangqi db import --db PATH FILE…` creates one)")
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(parsed)
    except Exception as exc:  # missing DBAPI module and the like
        raise DatabaseError(f"cannot use database {parsed.render_as_string(hide_password=True)}: {exc}") \
            from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    if migrate:
        upgrade(engine)
    return engine


def _alembic_config(connection=None):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


ALEMBIC_LOCK = threading.RLock()
"""Held while Alembic runs: its ``context`` and ``op`` are module-wide proxies, so two migrations in
one process at once (two apps in one test, the games database and the online tables prepared by two
threads) would run against each other's connections. Every caller of Alembic in the package takes it."""


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema of ``engine``'s database to ``revision`` (default the newest) with Alembic.

    Idempotent: an up-to-date database is left as it is. Raises :class:`DatabaseError` when the
    database cannot be reached or the migration fails.
    """
    from alembic import command

    try:
        with ALEMBIC_LOCK, engine.begin() as conn:
            command.upgrade(_alembic_config(conn), revision)
    except DatabaseError:
        raise
    except Exception as exc:
        where = engine.url.render_as_string(hide_password=True)
        raise DatabaseError(f"cannot open or upgrade the database {where}: {error_text(exc)}") from exc


def head_revision() -> str:
    """The newest schema revision shipped with the package (e.g. ``"0001"``)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head() or ""


def current_revision(engine: Engine) -> str | None:
    """The schema revision the database is at, or None for a database without the schema."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return MigrationContext.configure(conn).get_current_revision()
