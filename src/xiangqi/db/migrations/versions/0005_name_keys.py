"""Search keys of the names in ``games`` (``red_key``, ``black_key``, ``event_key``), backfilled.

The keys are :func:`xiangqi.db.names.search_key` of ``red``, ``black`` and ``event`` (traditional to
simplified Chinese by OpenCC's ``t2s`` table, case-folded, full-width Latin as ASCII), so that a player
typing 胡荣华 finds the games of 胡榮華 read from Big5 files, and the other way round. New rows get them
from the importer (:func:`xiangqi.db.importer.game_row`, :func:`xiangqi.db.fastimport.fast_row`); the
existing rows are filled here, :data:`BATCH` rows per statement batch, in id order.

The backfill changes every row, so the triggers of 0004 count it; the master games' counter the
explorer's aggregates were built at is moved along (the keys do not change what the aggregates count),
so a valid build stays valid.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

#: Rows read and updated per batch by the backfill.
BATCH = 2000
_COLUMNS = ("red_key", "black_key", "event_key")


def upgrade() -> None:
    from xiangqi.db.names import search_key

    for name in _COLUMNS:
        op.add_column("games", sa.Column(name, sa.Text, nullable=False, server_default=""))
    conn = op.get_bind()
    version = "SELECT master_changes FROM games_version WHERE id = 1"
    before = conn.execute(sa.text(version)).scalar()
    update = sa.text("UPDATE games SET red_key = :r, black_key = :b, event_key = :e WHERE id = :id")
    last = 0
    while True:
        rows = conn.execute(sa.text("SELECT id, red, black, event FROM games WHERE id > :last ORDER BY id "
                                    "LIMIT :n"), {"last": last, "n": BATCH}).all()
        if not rows:
            break
        params = [{"id": gid, "r": search_key(red), "b": search_key(black), "e": search_key(event)}
                  for gid, red, black, event in rows]
        changed = [p for p in params if p["r"] or p["b"] or p["e"]]
        if changed:
            conn.execute(update, changed)
        last = rows[-1][0]
    after = conn.execute(sa.text(version)).scalar()
    if before is not None and after != before:
        conn.execute(sa.text("UPDATE explore_meta SET value = :after "
                             "WHERE name = 'changes' AND value = :before"),
                     {"after": after, "before": before})


def downgrade() -> None:
    for name in reversed(_COLUMNS):
        op.drop_column("games", name)
