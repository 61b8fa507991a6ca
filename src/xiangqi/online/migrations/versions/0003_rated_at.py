"""The rating claim of a finished game: ``online_games.rated_at``, set once, by the one process whose
``UPDATE … WHERE rated_at IS NULL`` matched (the ratings are written in that transaction), so that a
game is rated exactly once even when several processes sweep for unrated games.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("online_games") as b:
        b.add_column(sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True))
    # games rated before this revision have their rating change stored: they are settled
    op.execute("UPDATE online_games SET rated_at = finished_at WHERE rating_change IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table("online_games") as b:
        b.drop_column("rated_at")
