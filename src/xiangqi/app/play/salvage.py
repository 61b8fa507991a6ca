"""Reading what SQLite can still read out of a damaged database file, row by row.

When the app's store finds its file damaged (``PRAGMA quick_check`` fails, or SQLite says
``SQLITE_CORRUPT``/``SQLITE_NOTADB``) it keeps the file aside and starts a fresh one
(:mod:`xiangqi.app.play.store`); :func:`salvage_tables` then copies into the fresh file every row that can
still be read. It works the way the ``sqlite3`` shell's ``.recover`` does in spirit, but through
SQL only (Python's :mod:`sqlite3` has no ``.recover``):

- the damaged file is copied (with its ``-wal``: commits not yet checkpointed are replayed from it)
  into a scratch directory and opened read-only there, so the file kept aside is never touched;
- each table is read by rowid ranges, in order (``SELECT rowid, … WHERE rowid BETWEEN a AND b``:
  SQLite descends the table's b-tree to the leaves that hold the range and nowhere else, so a damaged
  page spoils only the ranges it holds, and an index is never read); a range that raises is split in
  two, down to single rows, each read by ``rowid = ?`` (a range's scan steps one entry past its end,
  so the last row before a damaged leaf can be read only by itself); a single row that still
  raises is skipped (its leaf page, or a page of its overflow chain, is damaged);
- the empty stretches between rows are jumped over (``SELECT min(rowid) … WHERE rowid >= a``); when
  even that seek fails the walk goes on range by range, and gives up :data:`TAIL_SPAN` rowids past
  the last row it could read when the table's largest rowid cannot be read either (its last leaf is
  damaged);
- what was read is inserted into the fresh file with ``INSERT OR IGNORE`` (a row that breaks a
  constraint of the current schema, a duplicate or a damaged ``NOT NULL`` value, is left out), with
  every column kept (an ``INTEGER PRIMARY KEY`` is the rowid itself: a library row keeps its id).

An index page that is damaged costs nothing (the rows are read through the table, the fresh file
builds its indexes again); a damaged table leaf costs its rows; a damaged first page (the schema)
or a file that is not SQLite at all costs everything.

File format facts used here: https://www.sqlite.org/fileformat2.html (b-tree pages, rowid tables).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["TableSalvage", "read_table", "salvage_tables", "TAIL_SPAN", "CHUNK"]

#: Rowids read per query while the rows can be read.
CHUNK = 256
#: When a table's largest rowid cannot be read (its last leaf is damaged), rowids walked past the
#: last row that could be read before the walk ends.
TAIL_SPAN = 4096


@dataclasses.dataclass
class TableSalvage:
    """What came back of one table: ``read`` rows read out of the damaged file, ``kept`` of them
    written into the new one (``INSERT OR IGNORE``), ``unreadable``: the rowid ranges ``(first,
    last)`` that raised even one row at a time (rows that were there, or gaps: a damaged page does
    not say which), ``error``: why nothing could be read at all (the table's schema), else None."""

    table: str
    read: int = 0
    kept: int = 0
    unreadable: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    error: str | None = None


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read_table(con: sqlite3.Connection, table: str, columns: list[str], *, chunk: int = CHUNK,
               tail_span: int = TAIL_SPAN) -> tuple[list[tuple[Any, ...]], list[tuple[int, int]]]:
    """Every row of ``table`` (its ``columns``) that ``con`` can still read, as ``(rowid, *values)``
    in rowid order, and the rowid ranges that could not be read (see the module text). Never raises
    for a damaged page; raises :class:`sqlite3.DatabaseError` only when the table itself cannot be
    queried (no such table or column)."""
    t = _ident(table)
    what = f"SELECT rowid, {', '.join(_ident(c) for c in columns)} FROM {t} WHERE "
    sel, sel_one = what + "rowid BETWEEN ? AND ? ORDER BY rowid", what + "rowid = ?"
    con.execute(f"SELECT {', '.join(_ident(c) for c in columns)} FROM {t} WHERE 0").fetchall()  # names
    rows: list[tuple[Any, ...]] = []
    bad: list[int] = []

    def one(q: str, *args: Any) -> Any:
        try:
            got = con.execute(q, args).fetchone()
        except sqlite3.DatabaseError:
            return ...
        return None if got is None else got[0]

    def read(a: int, b: int) -> None:
        try:  # (one row by equality: a range's scan steps past its last row, onto the next leaf)
            got = con.execute(sel_one, (a,)).fetchall() if a == b else con.execute(sel, (a, b)).fetchall()
        except sqlite3.DatabaseError:
            if a == b:
                bad.append(a)
                return
            m = (a + b) // 2
            read(a, m)
            read(m + 1, b)
            return
        rows.extend(got)

    lo = one(f"SELECT min(rowid) FROM {t}")
    hi = one(f"SELECT max(rowid) FROM {t}")
    if lo is None or hi is None:  # an empty table
        return rows, []
    a = start = 1 if lo is ... else lo
    while True:
        if hi is not ... and a > hi:
            break
        if hi is ... and a > (rows[-1][0] if rows else start) + tail_span:
            break  # far past the last readable row, the last leaf damaged: nothing more to find
        nxt = one(f"SELECT min(rowid) FROM {t} WHERE rowid >= ?", a)
        if nxt is None:
            break  # no row from here on
        if nxt is not ...:
            a = nxt
        b = a + chunk - 1 if hi is ... else min(a + chunk - 1, hi)
        read(a, b)
        a = b + 1
    return rows, _ranges(bad)


def _ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i in sorted(ids):
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def salvage_tables(damaged: Path, target: Any, tables: dict[str, list[str]]) -> dict[str, TableSalvage]:
    """Copy what can be read of ``tables`` out of the damaged SQLite file ``damaged`` (left as it is:
    the copy is read, with its ``-wal``) into ``target``'s tables of the same names, one transaction
    (committed; rolled back when a write fails, which then raises). ``target``: a :mod:`sqlite3`
    connection (DB-API). ``tables``: ``{name: columns}``, the columns of the current schema (a column
    the damaged file lacks is left to its default; an ``INTEGER PRIMARY KEY`` column is the rowid
    itself, so a row keeps its id). Returns
    a :class:`TableSalvage` per table; a file SQLite cannot open or read the schema of gives every
    table its ``error`` and no row."""
    out = {name: TableSalvage(name) for name in tables}
    with tempfile.TemporaryDirectory(prefix="xiangqi-salvage-") as tmp:
        copy = Path(tmp) / "damaged.db"
        try:
            shutil.copyfile(damaged, copy)
            wal = Path(f"{damaged}-wal")
            if wal.exists():
                shutil.copyfile(wal, f"{copy}-wal")
        except OSError as exc:
            for s in out.values():
                s.error = f"the damaged file could not be copied to be read: {exc}"
            return out
        try:
            src = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            for s in out.values():
                s.error = str(exc)
            return out
        try:
            for name, columns in tables.items():
                s = out[name]
                try:
                    have = [r[1] for r in src.execute(f"PRAGMA table_info({_ident(name)})")]
                except sqlite3.DatabaseError as exc:
                    s.error = str(exc)
                    continue
                cols = [c for c in columns if c in have]
                if not cols:
                    s.error = "no such table" if not have else "none of its columns"
                    continue
                try:
                    rows, s.unreadable = read_table(src, name, cols)
                except sqlite3.DatabaseError as exc:
                    s.error = str(exc)
                    continue
                s.read = len(rows)
                if not rows:
                    continue
                sql = (f"INSERT OR IGNORE INTO {_ident(name)} ({', '.join(_ident(c) for c in cols)}) "
                       f"VALUES ({', '.join('?' for _ in cols)})")
                before = target.total_changes
                target.executemany(sql, (r[1:] for r in rows))
                s.kept = target.total_changes - before
            target.commit()
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                target.rollback()
            raise
        finally:
            src.close()
    return out
