"""Alembic environment of the online database (run by :func:`xiangqi.online.schema.upgrade`).

The caller passes an open SQLAlchemy connection in ``config.attributes["connection"]``; without one
the ``sqlalchemy.url`` option of the config is used (``alembic -x`` style use from a shell). The
version table is ``online_alembic_version`` (the games database keeps ``alembic_version``).
"""

from alembic import context
from sqlalchemy import create_engine

from xiangqi.online.schema import VERSION_TABLE
from xiangqi.online.store import metadata  # the accounts' MetaData, with the game tables on it

config = context.config


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True,
                          version_table=VERSION_TABLE)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True,
                          version_table=VERSION_TABLE)
        with context.begin_transaction():
            context.run_migrations()


run_migrations()
