"""The database backends the db tests run on: a new SQLite file, and PostgreSQL when
``$XIANGQI_TEST_PG_URL`` names a server (``.ci/run`` starts one with ``scripts/pg-temp.sh``; the URL's
user must be allowed to create databases). Each use gets a database of its own (PostgreSQL: a new
``CREATE DATABASE``, dropped afterwards), so tests never see each other's games.
"""

from __future__ import annotations

import os
import uuid

import pytest

PG_ENV = "XIANGQI_TEST_PG_URL"
#: Set by .ci/run: there, no PostgreSQL URL is a failure, not a skip.
REQUIRE_ENV = "XIANGQI_REQUIRE_PG"
BACKENDS = ["sqlite", "postgresql"]


def _new_pg_database(admin_url: str) -> tuple[str, object]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"xq_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}" ENCODING \'UTF8\' TEMPLATE template0'))

    def drop(engine=None) -> None:
        if engine is not None:
            engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    return url, drop


class Backends:
    """Makes fresh database URLs for one backend; ``close()`` drops what it made."""

    def __init__(self, backend: str, tmp_path_factory) -> None:
        self.backend = backend
        self.tmp = tmp_path_factory
        self.drops: list = []
        self.engines: list = []

    def url(self) -> str:
        if self.backend == "sqlite":
            return f"sqlite:///{self.tmp.mktemp('db') / 'games.db'}"
        admin = os.environ.get(PG_ENV)
        if not admin and os.environ.get(REQUIRE_ENV):
            pytest.fail(f"${REQUIRE_ENV} is set but ${PG_ENV} is not: the PostgreSQL server did not start")
        if not admin:
            pytest.skip(f"PostgreSQL: set ${PG_ENV} to a server URL (.ci/run does) to run on PostgreSQL too")
        url, drop = _new_pg_database(admin)
        self.drops.append(drop)
        return url

    def connect(self):
        from xiangqi.db import connect

        engine = connect(self.url())
        self.engines.append(engine)
        return engine

    def close(self) -> None:
        for engine in self.engines:
            engine.dispose()
        for drop in self.drops:
            drop()


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request, tmp_path_factory):
    """A :class:`Backends` for SQLite, then for PostgreSQL (skipped with the reason when not configured);
    every test using it runs once per backend."""
    b = Backends(request.param, tmp_path_factory)
    yield b
    b.close()
