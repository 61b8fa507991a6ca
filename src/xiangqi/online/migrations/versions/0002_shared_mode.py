"""Several server processes on one database: the game row's ``revision`` (the version check of every
change) and its standing ``offers``; the shared lobby's open seeks and challenge links.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("online_games") as b:
        b.add_column(sa.Column("revision", sa.Integer, nullable=False, server_default="0"))
        b.add_column(sa.Column("offers", sa.Text, nullable=True))
    op.create_table(
        "online_lobby",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("item", sa.Text, nullable=False),
        sa.Column("proc", sa.String(40), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_online_lobby_proc", "online_lobby", ["proc"])


def downgrade() -> None:
    op.drop_index("ix_online_lobby_proc", "online_lobby")
    op.drop_table("online_lobby")
    with op.batch_alter_table("online_games") as b:
        b.drop_column("offers")
        b.drop_column("revision")
