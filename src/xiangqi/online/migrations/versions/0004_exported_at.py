"""The export claim of a finished game: ``online_games.exported_at``, set by the one process whose
``UPDATE … WHERE exported_at IS NULL`` matched, which then puts the game into its games database, so
that a game is put there exactly once even when the process that ended it and the sweeps of the others
(a process died after storing the end) all try. Games already in a games database are marked.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("online_games") as b:
        b.add_column(sa.Column("exported_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE online_games SET exported_at = finished_at WHERE db_id IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table("online_games") as b:
        b.drop_column("exported_at")
