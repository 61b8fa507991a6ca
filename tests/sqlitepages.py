"""Shared test helpers for damaged SQLite files: find a table's pages and damage one of them.

The pages are found by reading the file's b-tree as the file format defines it
(https://www.sqlite.org/fileformat2.html, "B-tree Pages"): the page size at offset 16 of the header
(1 meaning 65536), a b-tree page's header (100 bytes in on page 1) with its type byte (5 an interior
table page, 13 a leaf table page, 2/10 index pages), the cell count at offset 3, the right-most
child at offset 8 of an interior page, the cell pointer array after the header (8 bytes for a leaf,
12 for an interior page), each cell of a leaf starting with two varints (payload size, rowid), each
cell of an interior table page with a 4-byte child page number and a varint key.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

LEAF_TABLE, INTERIOR_TABLE = 13, 5


def checkpoint(path: Path) -> None:
    """Copy the WAL of ``path`` into the file itself and empty it, so the file alone holds the data
    (damage done to the file is then not undone by a newer copy of the page in the WAL)."""
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        con.close()


def page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = 0
    for k in range(9):
        b = buf[i + k]
        if k == 8:
            return (value << 8) | b, i + 9
        value = (value << 7) | (b & 0x7F)
        if b < 0x80:
            return value, i + k + 1
    raise AssertionError("unreachable")


def _page(data: bytes, pgno: int) -> tuple[bytes, int]:
    ps = page_size(data)
    buf = data[(pgno - 1) * ps: pgno * ps]
    return buf, (100 if pgno == 1 else 0)


def root_page(path: Path, name: str) -> int:
    """The root page of table or index ``name`` (from ``sqlite_master``)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (root,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    finally:
        con.close()
    return int(root)


def index_names(path: Path, table: str) -> list[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND "
                                          "tbl_name = ? ORDER BY name", (table,))]
    finally:
        con.close()


def table_leaves(data: bytes, root: int) -> list[tuple[int, list[int]]]:
    """The leaf pages of the rowid table whose root is ``root``, in key order: ``[(page, [rowids])]``."""
    buf, h = _page(data, root)
    kind, cells = buf[h], int.from_bytes(buf[h + 3:h + 5], "big")
    if kind == LEAF_TABLE:
        rowids = []
        for c in range(cells):
            off = int.from_bytes(buf[h + 8 + 2 * c:h + 10 + 2 * c], "big")
            _size, i = _varint(buf, off)
            rowid, _ = _varint(buf, i)
            rowids.append(rowid)
        return [(root, rowids)]
    assert kind == INTERIOR_TABLE, f"page {root} is not a table b-tree page (type {kind})"
    out = []
    for c in range(cells):
        off = int.from_bytes(buf[h + 12 + 2 * c:h + 14 + 2 * c], "big")
        out += table_leaves(data, int.from_bytes(buf[off:off + 4], "big"))
    out += table_leaves(data, int.from_bytes(buf[h + 8:h + 12], "big"))
    return out


def damage_page(path: Path, pgno: int, fill: bytes = b"\xa5") -> bytes:
    """Overwrite page ``pgno`` of the file at ``path`` with ``fill`` repeated (0xA5 is no b-tree page
    type, so SQLite reports the page as corrupt wherever it reads it); the file's new bytes."""
    data = bytearray(path.read_bytes())
    ps = page_size(bytes(data))
    data[(pgno - 1) * ps: pgno * ps] = (fill * ps)[:ps]
    path.write_bytes(bytes(data))
    return bytes(data)
