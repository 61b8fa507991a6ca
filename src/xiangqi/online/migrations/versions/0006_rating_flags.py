"""Rating farming from one address: ``online_games.same_address`` (the address both players of a
rated game came from, when it was one) and ``rating_flags`` (one row per such game once rated), from
which a pair of accounts that keeps playing rated games from one address is listed to the operator
(``xiangqi online-flags``). Games before this revision have no addresses: nothing to fill.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("online_games") as b:
        b.add_column(sa.Column("same_address", sa.String(64), nullable=True))
    op.create_table(
        "rating_flags",
        sa.Column("game_id", sa.String(40), sa.ForeignKey("online_games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("user_lo", sa.Integer, nullable=False),
        sa.Column("user_hi", sa.Integer, nullable=False),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False))
    op.create_index("ix_rating_flags_pair", "rating_flags", ["user_lo", "user_hi", "at"])


def downgrade() -> None:
    op.drop_index("ix_rating_flags_pair", "rating_flags")
    op.drop_table("rating_flags")
    with op.batch_alter_table("online_games") as b:
        b.drop_column("same_address")
