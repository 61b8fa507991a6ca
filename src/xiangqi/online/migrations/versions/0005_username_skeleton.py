"""The look-alike key of a username: ``users.username_skeleton``, its UTS #39 confusable skeleton
(:func:`xiangqi.online.lookalike.username_skeleton`), with a unique index, so that a name that looks
like an existing one (``аdmin`` with a Cyrillic а beside ``admin``) is refused by the database even
when two registrations race.

The existing accounts get their key here, oldest first; an account whose key an older one already
has (two look-alike names registered before this revision) keeps its name and gets NULL (a unique
index allows any number of NULLs on SQLite and PostgreSQL): nobody is renamed, and a new name that
looks like either is still refused by the older one's key.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from xiangqi.online.lookalike import username_skeleton

    with op.batch_alter_table("users") as b:
        b.add_column(sa.Column("username_skeleton", sa.String(400), nullable=True))
    conn = op.get_bind()
    users = sa.table("users", sa.column("id", sa.Integer), sa.column("username", sa.String),
                     sa.column("username_skeleton", sa.String))
    seen: set[str] = set()
    for row in conn.execute(sa.select(users.c.id, users.c.username).order_by(users.c.id)).all():
        key = username_skeleton(row.username)
        if key in seen or len(key) > 400:
            continue
        seen.add(key)
        conn.execute(users.update().where(users.c.id == row.id).values(username_skeleton=key))
    op.create_index("ix_users_username_skeleton", "users", ["username_skeleton"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_users_username_skeleton", "users")
    with op.batch_alter_table("users") as b:
        b.drop_column("username_skeleton")
