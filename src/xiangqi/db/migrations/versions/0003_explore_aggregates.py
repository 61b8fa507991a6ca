"""Pre-aggregated explorer counts for the common positions (``explore_moves``, ``explore_totals``,
``explore_meta``), rebuilt from the master games by :func:`xiangqi.db.aggregate.rebuild` after
each import.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "explore_moves",
        sa.Column("key", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("move", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("red", sa.Integer, nullable=False),
        sa.Column("draw", sa.Integer, nullable=False),
        sa.Column("black", sa.Integer, nullable=False),
        sa.Column("unknown", sa.Integer, nullable=False),
        sa.Column("n_year", sa.Integer, nullable=False),
        sa.Column("sum_year", sa.BigInteger, nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "explore_totals",
        sa.Column("key", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("games", sa.Integer, nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "explore_meta",
        sa.Column("name", sa.String(20), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("explore_meta")
    op.drop_table("explore_totals")
    op.drop_table("explore_moves")
