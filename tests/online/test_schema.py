"""The online tables by Alembic (xiangqi.online.schema): a new database gets the head revision, one
made by the older ``create_all`` (no revision, no shared-mode columns) is stamped and upgraded with
its data kept, and the models match what the migrations make."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from tests.online.conftest import online_db_url

from xiangqi.online import schema
from xiangqi.online.store import OnlineStore, metadata


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    drops: list = []
    got = online_db_url(request.param, tmp_path, drops) or f"sqlite:///{tmp_path / 'online.db'}"
    yield got
    for drop in drops:
        drop()


def test_new_database_gets_the_head_and_matches_the_models(url):
    engine = sa.create_engine(url)
    try:
        OnlineStore(engine)
        assert schema.current_revision(engine) == schema.head_revision() == "0006"
        from alembic.autogenerate import compare_metadata
        from alembic.migration import MigrationContext

        with engine.connect() as c:
            ctx = MigrationContext.configure(c, opts={"version_table": schema.VERSION_TABLE})
            diff = [d for d in compare_metadata(ctx, metadata)
                    if not (d[0] == "remove_table" and d[1].name == schema.VERSION_TABLE)]
        assert diff == []  # the migrations make exactly the tables the code declares
    finally:
        engine.dispose()


def test_a_create_all_database_is_stamped_and_upgraded(url):
    engine = sa.create_engine(url)
    try:
        from alembic import command

        with engine.begin() as c:  # the tables of revision 0001 (what create_all made), no version table
            command.upgrade(schema._config(c), "0001")
            c.execute(sa.text(f"DROP TABLE {schema.VERSION_TABLE}"))
        old = sa.MetaData()
        old.reflect(engine)
        assert "revision" not in old.tables["online_games"].c and "online_lobby" not in old.tables
        now = dt.datetime.now(dt.UTC)
        with engine.begin() as c:
            c.execute(old.tables["online_games"].insert().values(
                id="g1", red_kind="guest", red_id="g-1", red_name="a", black_kind="guest", black_id="g-2",
                black_name="b", time_control="5+3", category="blitz", rated=False, start_fen="x",
                status="playing", created_at=now))
        assert schema.current_revision(engine) is None
        store = OnlineStore(engine)
        assert schema.current_revision(engine) == "0006"
        assert store.game("g1")["revision"] == 0 and store.revision("g1") == 0
        assert store.save_checked("g1", 0, [], ["h2e2"], None, {"status": "playing"}) == 0
        assert store.revision("g1") == 1 and store.moves("g1") == ["h2e2"]
        assert store.game("g1")["rated_at"] is None  # revision 0003's column
        assert store.game("g1")["exported_at"] is None  # revision 0004's column
    finally:
        engine.dispose()
