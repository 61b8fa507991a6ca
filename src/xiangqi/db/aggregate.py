"""Pre-aggregated opening-explorer counts for the common positions (issue 13: a fast start position).

The explorer (:mod:`xiangqi.db.explore`) answers a position from the position index: every occurrence
joined with its game's result. For the start position that is every game (28k rows on the corpus,
about 200 ms on SQLite). :func:`rebuild` counts, once per import, the master games of every position
that occurs in at least :data:`MIN_GAMES` of them, with the position and its left-right mirror merged
(the explorer's default), into three small tables (:mod:`xiangqi.db.schema`, migration 0003); the
explorer then reads a position's moves as a handful of rows.

How: every master game is replayed from its stored moves (a Numba kernel gives the key of each
position and of its mirror, :func:`xiangqi.db.fastimport.game_keys`); a position's *canonical* key is
the smaller of the two, and its next move is written in that orientation (mirrored when the game's
own orientation is the other one). The distinct (canonical key, game, move) triples, counted in numpy,
are exactly the explorer's rule: a game counts once per move it played, however often the position
(or its mirror) recurs in it. ``explore_meta`` keeps the master games' count and highest id; when the
games have changed since (another import in progress, a deletion), the explorer falls back to its
live queries, so an answer is never stale. The user's own games (collection ``mine``) are not in the
aggregates: the explorer adds them live (a few, looked up by game id).
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import Engine, delete, func, insert, select

from xiangqi.core.board import SQUARE_NAMES, Board
from xiangqi.db.fastimport import games_keys
from xiangqi.db.schema import explore_meta, explore_moves, explore_totals, games, games_version
from xiangqi.db.versions import changed, has_version_table

__all__ = ["MIN_GAMES", "rebuild", "decode_move", "valid"]

#: Positions in at least this many master games (position and mirror merged) are aggregated.
MIN_GAMES = 50
_MINE = "mine"  # xiangqi.db.search.MINE (not imported: search imports this module's users)
_MIRROR = np.array([(s // 9) * 9 + 8 - s % 9 for s in range(90)], np.int64)
_RESULT = {"1-0": 0, "1/2-1/2": 1, "0-1": 2}


def decode_move(code: int, mirrored: bool) -> str | None:
    """The ICCS move of a stored ``move`` code (``from * 90 + to``, -1: none), mirrored back when the
    position asked about is the mirror of the stored orientation."""
    if code < 0:
        return None
    frm, to = divmod(code, 90)
    if mirrored:
        frm, to = int(_MIRROR[frm]), int(_MIRROR[to])
    return SQUARE_NAMES[frm] + SQUARE_NAMES[to]


# built once (the explorer checks these on every answer it cannot take from its cache)
_META_STMT = select(explore_meta.c.name, explore_meta.c.value)
_CHANGES_STMT = select(games_version.c.master_changes).where(games_version.c.id == 1)


def _master_version(conn) -> tuple[int, int]:
    count, top = conn.execute(select(func.count(), func.max(games.c.id))
                              .where(games.c.collection != _MINE)).one()
    return int(count), int(top or 0)


def master_changes(conn) -> int | None:
    """The change counter of the master games (``games_version.master_changes``, migration 0004), None on a
    database without it (opened without the upgrade)."""
    if not has_version_table(conn):
        return None
    return int(conn.execute(_CHANGES_STMT).scalar_one())


def valid(conn) -> bool:
    """True when the aggregates were built from the master games as they are now: the master games'
    change counter is the one noted at the build (one primary-key read); on a database without the
    counter, their count and highest id are."""
    meta = dict(conn.execute(_META_STMT).all())
    if "games" not in meta:
        return False
    changes = master_changes(conn)
    if changes is not None:
        return meta.get("changes") == changes
    return (meta["games"], meta.get("max_id", 0)) == _master_version(conn)


def rebuild(engine: Engine, *, min_games: int = MIN_GAMES) -> int:
    """Recount the aggregates from the master games; returns the number of positions aggregated.

    About 3 s on the corpus (28k games, 2.5M positions): the replay in Numba (one call per start
    position, the moves read as one byte array), the counting in numpy.
    """
    with engine.connect() as conn:
        changes = master_changes(conn)
        rows = conn.execute(select(games.c.id, games.c.fen, games.c.moves, games.c.result, games.c.date)
                            .where(games.c.collection != _MINE).order_by(games.c.id)).all()
    res = np.full(len(rows), 3, np.int8)
    years = np.zeros(len(rows), np.int64)
    by_start: dict[str | None, list[int]] = {}
    for gi, (_gid, fen, _moves, result, date) in enumerate(rows):
        by_start.setdefault(fen, []).append(gi)
        res[gi] = _RESULT.get(result, 3)
        if date and date[:4].isdigit():
            years[gi] = int(date[:4])
    cks, gis, nms = [], [], []
    for fen, members in by_start.items():
        # the games of one start position in one kernel call: their ICCS moves ("h2e2 h9g7 …", four
        # letters and a space each) read as one byte array
        lines = [rows[gi][2] for gi in members]
        lens = np.array([(len(m) + 1) // 5 for m in lines], np.int64)
        text = " ".join(m for m in lines if m)
        chars = np.frombuffer(f"{text} ".encode("ascii"), np.uint8).reshape(-1, 5).astype(np.int64) \
            if text else np.zeros((0, 5), np.int64)
        frm = (chars[:, 1] - 48) * 9 + chars[:, 0] - 97
        to = (chars[:, 3] - 48) * 9 + chars[:, 2] - 97
        board = Board(fen) if fen else Board()
        keys, mkeys = games_keys(board, frm.astype(np.int16), to.astype(np.int16), lens)
        ck = np.minimum(keys, mkeys)
        code = np.full(len(ck), -1, np.int64)  # the next move; -1 at each game's last position
        slots = np.arange(len(frm)) + np.repeat(np.arange(len(members)), lens)  # move j's position
        flip = keys[slots] != ck[slots]
        code[slots] = np.where(flip, _MIRROR[frm] * 90 + _MIRROR[to], frm * 90 + to)
        cks.append(ck)
        gis.append(np.repeat(np.array(members, np.int64), lens + 1))
        nms.append(code)
    if rows:
        ck = np.concatenate(cks)
        gi = np.concatenate(gis)
        nm = np.concatenate(nms)
        order = np.lexsort((nm, gi, ck))
        ck, gi, nm = ck[order], gi[order], nm[order]
        keep = np.ones(len(ck), bool)
        keep[1:] = (ck[1:] != ck[:-1]) | (gi[1:] != gi[:-1]) | (nm[1:] != nm[:-1])
        ck, gi, nm = ck[keep], gi[keep], nm[keep]
        # distinct games per canonical key
        newgame = np.ones(len(ck), bool)
        newgame[1:] = (ck[1:] != ck[:-1]) | (gi[1:] != gi[:-1])
        keys_u, first = np.unique(ck, return_index=True)
        totals = np.add.reduceat(newgame.astype(np.int64), first)
        common = keys_u[totals >= min_games]
        sel = np.isin(ck, common)
        ck, gi, nm = ck[sel], gi[sel], nm[sel]
        order = np.lexsort((nm, ck))
        ck, gi, nm = ck[order], gi[order], nm[order]
        start = np.ones(len(ck), bool)
        start[1:] = (ck[1:] != ck[:-1]) | (nm[1:] != nm[:-1])
        bounds = np.flatnonzero(start)
        r = res[gi]
        y = years[gi]
        cols = [np.add.reduceat((r == v).astype(np.int64), bounds) if len(bounds) else np.zeros(0, np.int64)
                for v in range(4)]
        n_year = np.add.reduceat((y > 0).astype(np.int64), bounds) if len(bounds) else np.zeros(0, np.int64)
        sum_year = np.add.reduceat(y, bounds) if len(bounds) else np.zeros(0, np.int64)
        move_rows = [{"key": int(k), "move": int(m), "red": int(a), "draw": int(b), "black": int(c),
                      "unknown": int(d), "n_year": int(e), "sum_year": int(f)}
                     for k, m, a, b, c, d, e, f in zip(ck[bounds].tolist(), nm[bounds].tolist(), *(x.tolist()
                                                       for x in (*cols, n_year, sum_year)), strict=True)]
        total_rows = [{"key": int(k), "games": int(n)}
                      for k, n in zip(keys_u.tolist(), totals.tolist(), strict=True) if n >= min_games]
    else:
        move_rows, total_rows = [], []
    with engine.begin() as conn:
        conn.execute(delete(explore_moves))
        conn.execute(delete(explore_totals))
        conn.execute(delete(explore_meta))
        for i in range(0, len(move_rows), 5000):
            conn.execute(insert(explore_moves), move_rows[i:i + 5000])
        for i in range(0, len(total_rows), 5000):
            conn.execute(insert(explore_totals), total_rows[i:i + 5000])
        count, top = _master_version(conn)
        if (count, top) != (len(rows), rows[-1][0] if rows else 0) or master_changes(conn) != changes:
            return 0  # changed meanwhile: left invalid
        meta = [{"name": "games", "value": count}, {"name": "max_id", "value": top}]
        if changes is not None:
            meta.append({"name": "changes", "value": changes})
        conn.execute(insert(explore_meta), meta)
    changed()  # the explorer's cached answers and its note of whether the aggregates are current
    return len(total_rows)
