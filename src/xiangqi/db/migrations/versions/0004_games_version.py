"""A change counter of the ``games`` table (``games_version``), kept by triggers, so that the explorer's
cache and the aggregates' freshness are one primary-key read instead of a count of the games.

``changes`` goes up by one for every row inserted, updated or deleted in ``games``; ``master_changes``
only for rows of the master collections (every collection but ``mine``, the user's own games). Triggers
rather than application code, so that a change made by any process (an import on the command line, the
app's sync) is seen by every other one (the web server's explorer cache).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_MASTER_NEW = "(NEW.collection <> 'mine')"
_MASTER_OLD = "(OLD.collection <> 'mine')"


def upgrade() -> None:
    op.create_table(
        "games_version",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("changes", sa.BigInteger, nullable=False),
        sa.Column("master_changes", sa.BigInteger, nullable=False),
    )
    op.execute("INSERT INTO games_version (id, changes, master_changes) VALUES (1, 0, 0)")
    bump = ("UPDATE games_version SET changes = changes + 1, master_changes = master_changes + {m} "
            "WHERE id = 1")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"""
            CREATE FUNCTION games_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    {bump.format(m=f"CASE WHEN {_MASTER_NEW} THEN 1 ELSE 0 END")};
                ELSIF TG_OP = 'UPDATE' THEN
                    {bump.format(m=f"CASE WHEN {_MASTER_NEW} OR {_MASTER_OLD} THEN 1 ELSE 0 END")};
                ELSE
                    {bump.format(m=f"CASE WHEN {_MASTER_OLD} THEN 1 ELSE 0 END")};
                END IF;
                RETURN NULL;
            END $$""")
        op.execute("CREATE TRIGGER games_version_bump AFTER INSERT OR UPDATE OR DELETE ON games "
                   "FOR EACH ROW EXECUTE FUNCTION games_version_bump()")
    else:
        for event, master in (("INSERT", _MASTER_NEW), ("UPDATE", f"({_MASTER_NEW} OR {_MASTER_OLD})"),
                              ("DELETE", _MASTER_OLD)):
            op.execute(f"CREATE TRIGGER games_version_{event.lower()} AFTER {event} ON games "
                       f"BEGIN {bump.format(m=master)}; END")
    # aggregates built before this revision stay valid when they match the master games as they are
    op.execute("""
        INSERT INTO explore_meta (name, value) SELECT 'changes', 0
        WHERE (SELECT value FROM explore_meta WHERE name = 'games')
              = (SELECT count(*) FROM games WHERE collection <> 'mine')
          AND (SELECT value FROM explore_meta WHERE name = 'max_id')
              = (SELECT coalesce(max(id), 0) FROM games WHERE collection <> 'mine')""")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS games_version_bump ON games")
        op.execute("DROP FUNCTION IF EXISTS games_version_bump()")
    else:
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS games_version_{event}")
    op.execute("DELETE FROM explore_meta WHERE name = 'changes'")
    op.drop_table("games_version")
