"""An index on the computed ECCO code (``games.ecco_computed``).

A search by ECCO code matches the file's tag (``ecco``, indexed since 0001) or the code the classifier
computed from the moves (``ecco_computed``); without this index the second half of that ``OR`` scanned
every game. Both columns indexed, SQLite and PostgreSQL answer the ``OR`` with two index lookups.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_games_ecco_computed", "games", ["ecco_computed"])


def downgrade() -> None:
    op.drop_index("ix_games_ecco_computed", "games")
