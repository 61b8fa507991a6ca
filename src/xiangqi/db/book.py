"""Building an opening book (:mod:`xiangqi.engine.book`) from the games database.

:func:`build_book` reads the games that start from the standard position (``games.fen`` NULL), walks the
first ``max_ply`` plies of each main line and counts, for every position (key with side to move, the
games database's key :mod:`xiangqi.db.keys`, mirrored positions merged as the book format says), each
move played there: how many games, how many of them with a known result, and the points the side to
move scored (win 1, draw ½, loss 0). Moves played in fewer than ``min_games`` games are dropped. The
keys are the position index's (``positions.key``, unsigned here): they are computed incrementally along
each game with their mirror keys, which the index does not store, instead of being read back.
Results: ``1-0``, ``0-1``, ``1/2-1/2``; ``*`` (unknown, e.g. the WXF master files) counts as a game
but not in the score.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import sys
import time

import numpy as np
from sqlalchemy import Engine, select

from xiangqi.core.board import STARTING_BOARD_FEN, Board
from xiangqi.db.schema import games
from xiangqi.engine import book as _book

__all__ = ["BookBuild", "build_book", "DEFAULT_MIN_GAMES", "DEFAULT_MAX_PLY"]

#: Defaults of ``xiangqi book build`` (the shipped book was built with these).
DEFAULT_MIN_GAMES = 3
DEFAULT_MAX_PLY = 30

_FILES = "abcdefghi"
_SQ = {f"{f}{r}": r * 9 + i for i, f in enumerate(_FILES) for r in range(10)}
_POINTS = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}  # (red, black) points ×2


@dataclasses.dataclass(slots=True)
class BookBuild:
    """What :func:`build_book` did: ``games`` read, ``plies`` counted, ``positions`` and ``entries``
    (moves) in the book, the file's ``bytes`` and the wall ``seconds``."""

    games: int = 0
    plies: int = 0
    positions: int = 0
    entries: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """One line of the counts."""
        return (f"{self.games} games, {self.plies} plies: {self.entries} book moves in {self.positions} "
                f"positions, {self.bytes / 1e6:.2f} MB, {self.seconds:.1f} s")


def _walk(moves: str, max_ply: int, squares: list[int], key: int, mkey: int,
          out_key: list[int], out_move: list[int], out_ply: list[int]) -> None:
    """Append (canonical key, canonical move, ply) of the first ``max_ply`` plies of one main line."""
    z, zm, black = _book._Z, _book._ZM, _book._BLACK
    b = list(squares)
    for ply, mv in enumerate(moves.split()[:max_ply]):
        frm, to = _SQ.get(mv[:2]), _SQ.get(mv[2:4])
        if frm is None or to is None:
            return
        code, cap = b[frm], b[to]
        if not code:
            return  # not a move of this game (a damaged row): stop there
        move = frm * 90 + to
        if mkey < key:
            out_key.append(mkey)
            out_move.append(_book.mirror_move(move))
        else:
            out_key.append(key)
            out_move.append(move)
        out_ply.append(ply)
        zc = z[code + 7]
        zmc = zm[code + 7]
        key ^= zc[frm] ^ zc[to] ^ black
        mkey ^= zmc[frm] ^ zmc[to] ^ black
        if cap:
            key ^= z[cap + 7][to]
            mkey ^= zm[cap + 7][to]
        b[to], b[frm] = code, 0


def build_book(engine: Engine, output: str | os.PathLike[str], *, min_games: int = DEFAULT_MIN_GAMES,
               max_ply: int = DEFAULT_MAX_PLY, collection: str | None = None, source: str = "",
               progress: bool = False) -> BookBuild:
    """Build the book of the database ``engine`` into the file ``output``; returns a :class:`BookBuild`.

    ``min_games`` (≥ 1): a move goes in when at least that many games played it in that position
    (mirrored games counted together); ``max_ply`` (≥ 1): plies of each game looked at; ``collection``:
    only that collection's games; ``source``: words for the header (where the games came from).
    Raises :class:`ValueError` for a bad parameter.
    """
    if min_games < 1 or max_ply < 1:
        raise ValueError(f"min_games and max_ply must be at least 1 (got {min_games}, {max_ply})")
    t0 = time.perf_counter()
    stats = BookBuild()
    start = Board()
    squares = list(start.squares)
    key0, mkey0 = _book.position_keys(squares, True)
    assert start.board_fen() == STARTING_BOARD_FEN
    keys: list[int] = []
    moves: list[int] = []
    plies: list[int] = []
    red_pts: list[int] = []
    black_pts: list[int] = []
    known: list[int] = []
    stmt = select(games.c.moves, games.c.result).where(games.c.fen.is_(None))
    if collection is not None:
        stmt = stmt.where(games.c.collection == collection)
    with engine.connect() as conn:
        for row in conn.execution_options(stream_results=True, yield_per=2000).execute(stmt):
            before = len(keys)
            _walk(row.moves, max_ply, squares, key0, mkey0, keys, moves, plies)
            n = len(keys) - before
            rp, bp = _POINTS.get(row.result, (0, 0))
            red_pts.extend([rp] * n)
            black_pts.extend([bp] * n)
            known.extend([1 if row.result in _POINTS else 0] * n)
            stats.games += 1
            if progress and stats.games % 5000 == 0:
                sys.stderr.write(f"\r{stats.games} games ")
                sys.stderr.flush()
    stats.plies = len(keys)
    k = np.array(keys, dtype=np.uint64)
    m = np.array(moves, dtype=np.uint16)
    ply = np.array(plies, dtype=np.int64)
    # the side to move's points ×2: Red moves at even plies (games from the standard start)
    pts = np.where(ply % 2 == 0, np.array(red_pts, dtype=np.int64), np.array(black_pts, dtype=np.int64))
    kn = np.array(known, dtype=np.int64)
    if len(k):
        order = np.lexsort((m, k))
        k, m, pts, kn = k[order], m[order], pts[order], kn[order]
        new = np.ones(len(k), dtype=bool)
        new[1:] = (k[1:] != k[:-1]) | (m[1:] != m[:-1])
        starts = np.flatnonzero(new)
        count = np.diff(np.append(starts, len(k)))
        scored = np.add.reduceat(kn, starts)
        points = np.add.reduceat(pts * kn, starts)
        gk, gm = k[starts], m[starts]
        keep = count >= min_games
        gk, gm, count, scored, points = gk[keep], gm[keep], count[keep], scored[keep], points[keep]
        score = np.where(scored > 0, points / np.maximum(2 * scored, 1), 0.0).astype(np.float32)
    else:
        gk = np.zeros(0, np.uint64)
        gm = np.zeros(0, np.uint16)
        count = scored = np.zeros(0, np.int64)
        score = np.zeros(0, np.float32)
    stats.entries = int(len(gk))
    stats.positions = int(len(np.unique(gk)))
    header = {"games": stats.games, "positions": stats.positions, "min_games": min_games,
              "max_ply": max_ply, "source": source, "collection": collection,
              "built": _dt.date.today().isoformat(),
              "weight": "Wilson lower bound (95%) of the side to move's score (win 1, draw 1/2) "
                        "over the games with a result"}
    stats.bytes = _book.write_book(output, gk, gm, count, scored, score, header)
    stats.seconds = time.perf_counter() - t0
    if progress and stats.games >= 5000:
        sys.stderr.write("\r" + " " * 20 + "\r")
        sys.stderr.flush()
    return stats
