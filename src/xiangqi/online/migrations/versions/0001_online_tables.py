"""The online tables as ``create_all`` made them before these migrations: accounts, login sessions,
online games and their move log, ratings and their history, the server's secret.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("username", sa.String(80), nullable=False),
        sa.Column("username_key", sa.String(80), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("created_at", TZ, nullable=False))
    op.create_table(
        "login_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False))
    op.create_index("ix_login_sessions_user_id", "login_sessions", ["user_id"])
    seats = []
    for side in ("red", "black"):
        seats += [sa.Column(f"{side}_kind", sa.String(8), nullable=False),
                  sa.Column(f"{side}_id", sa.String(48), nullable=False),
                  sa.Column(f"{side}_name", sa.String(80), nullable=False),
                  sa.Column(f"{side}_user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"),
                            nullable=True)]
    op.create_table(
        "online_games",
        sa.Column("id", sa.String(40), primary_key=True),
        *seats,
        sa.Column("time_control", sa.String(16), nullable=False),
        sa.Column("category", sa.String(16), nullable=False),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.Column("start_fen", sa.String(120), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("result", sa.String(8), nullable=True),
        sa.Column("termination", sa.String(24), nullable=True),
        sa.Column("reason_zh", sa.String(80), nullable=True),
        sa.Column("reason_en", sa.String(120), nullable=True),
        sa.Column("clock", sa.Text, nullable=True),
        sa.Column("rating_change", sa.Text, nullable=True),
        sa.Column("db_id", sa.Integer, nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=True))
    op.create_index("ix_online_games_red_user_id", "online_games", ["red_user_id"])
    op.create_index("ix_online_games_black_user_id", "online_games", ["black_user_id"])
    op.create_index("ix_online_games_status", "online_games", ["status"])
    op.create_table(
        "online_moves",
        sa.Column("game_id", sa.String(40), sa.ForeignKey("online_games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("ply", sa.Integer, primary_key=True),
        sa.Column("iccs", sa.String(6), nullable=False),
        sa.Column("played_at", TZ, nullable=False))
    op.create_table(
        "ratings",
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("category", sa.String(16), primary_key=True),
        sa.Column("rating", sa.Float, nullable=False),
        sa.Column("rd", sa.Float, nullable=False),
        sa.Column("volatility", sa.Float, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("updated_at", TZ, nullable=False))
    op.create_index("ix_ratings_category_rating", "ratings", ["category", "rating"])
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("category", sa.String(16), nullable=False),
        sa.Column("game_id", sa.String(40), nullable=False),
        sa.Column("rating", sa.Float, nullable=False),
        sa.Column("rd", sa.Float, nullable=False),
        sa.Column("at", TZ, nullable=False))
    op.create_index("ix_rating_history_user_id", "rating_history", ["user_id"])
    op.create_table(
        "online_meta",
        sa.Column("key", sa.String(40), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False))


def downgrade() -> None:
    for name in ("online_meta", "rating_history", "ratings", "online_moves", "online_games", "login_sessions",
                 "users"):
        op.drop_table(name)
