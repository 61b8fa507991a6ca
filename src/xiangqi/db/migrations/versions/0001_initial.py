"""The initial schema: games, positions (the position index), boards (for similar-position search).

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


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("hash", sa.String(40), nullable=False, unique=True),
        sa.Column("collection", sa.String(40), nullable=False, server_default="master"),
        sa.Column("event", sa.Text, nullable=False, server_default=""),
        sa.Column("site", sa.Text, nullable=False, server_default=""),
        sa.Column("round", sa.Text, nullable=False, server_default=""),
        sa.Column("date", sa.String(10), nullable=True),
        sa.Column("date_raw", sa.Text, nullable=False, server_default=""),
        sa.Column("red", sa.Text, nullable=False, server_default=""),
        sa.Column("black", sa.Text, nullable=False, server_default=""),
        sa.Column("result", sa.String(7), nullable=False, server_default="*"),
        sa.Column("ecco", sa.String(3), nullable=True),
        sa.Column("ecco_computed", sa.String(3), nullable=True),
        sa.Column("opening", sa.Text, nullable=False, server_default=""),
        sa.Column("headers", sa.Text, nullable=False, server_default="{}"),
        sa.Column("fen", sa.Text, nullable=True),
        sa.Column("moves", sa.Text, nullable=False, server_default=""),
        sa.Column("plies", sa.Integer, nullable=False, server_default="0"),
        sa.Column("comments", sa.Text, nullable=False, server_default=""),
        sa.Column("source", sa.Text, nullable=False, server_default=""),
        sa.Column("source_index", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_index("ix_games_red", "games", ["red"])
    op.create_index("ix_games_black", "games", ["black"])
    op.create_index("ix_games_date", "games", ["date"])
    op.create_index("ix_games_ecco", "games", ["ecco"])
    op.create_index("ix_games_collection", "games", ["collection"])
    op.create_table(
        "positions",
        sa.Column("key", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True,
                  autoincrement=False),
        sa.Column("ply", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("move", sa.String(4), nullable=True),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "boards",
        sa.Column("material", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("key", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("pieces", sa.LargeBinary, nullable=False),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.drop_table("boards")
    op.drop_table("positions")
    for name in ("collection", "ecco", "date", "black", "red"):
        op.drop_index(f"ix_games_{name}", "games")
    op.drop_table("games")
