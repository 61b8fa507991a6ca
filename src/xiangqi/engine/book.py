"""The opening book: a sorted table of (position, move, games, score) read with numpy, memory-mapped.

A book says, for the positions of the opening, which moves masters played there, in how many games
and with what result. It is built from a games database (:func:`xiangqi.db.book.build_book`,
``xiangqi book build``) and read here without any database: the file is one sorted numpy structured
array and a position index, memory-mapped, so a probe is one binary search
(:func:`numpy.searchsorted`) over the index's keys and a slice of the table, a few microseconds.

File format (version 1, little-endian)
--------------------------------------
- 8 bytes magic :data:`MAGIC` (``b"XQBOOK01"``), then a ``uint32`` N and N bytes of UTF-8 JSON: the
  header (``version``, ``entries``, ``games``, ``positions``, ``min_games``, ``max_ply``, ``source``,
  ``built``, ``weight``), padded with spaces so that the table starts on a multiple of 16 bytes.
- Then ``entries`` records of :data:`ENTRY` (22 bytes, packed): ``key`` (uint64, the position),
  ``move`` (uint16, ``from_square * 90 + to_square``), ``count`` (uint32, games that played the move
  there), ``scored`` (uint32, those of them with a known result), ``score`` (float32, the points of
  the side to move per scored game: win 1, draw ½, loss 0). Sorted by key, then move.
- Then, from the next multiple of 16 bytes, the position index: ``positions`` distinct keys (uint64,
  ascending) and ``positions + 1`` start rows (uint32; the moves of key i are rows start[i] to
  start[i + 1] - 1). A separate contiguous key array because :func:`numpy.searchsorted` copies a
  strided column (the table's ``key`` field) on every call: 150 µs against 12 µs here.

The key is the games database's position key (:mod:`xiangqi.db.keys`: a 64-bit Zobrist key of the
pieces and the side to move, numbers from SplitMix64 seeded with :data:`SEED`), computed again here so
that the engine does not import the database layer (a test checks both agree). Left-right mirrored
positions are merged: an entry is stored under the smaller of a position's key and its mirror's key,
with the move seen from that position; a probe of the other one mirrors the moves back. A position
that is its own mirror (the start) keeps both wings' moves apart (炮二平五 and 炮八平五 are two moves).

Move weights
------------
:attr:`BookMove.weight` is the Wilson score interval's lower bound (95 %, z = 1.96) of the move's
score over its scored games: a move that scored well in many games ranks above one that scored as
well in few, and a move with no scored game weighs 0. How the game's levels choose among the moves
(大师 the best-weighted ones, lower levels more widely by how often each was played) is
:data:`LEVEL_STYLES` and :func:`choose`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import random
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError

__all__ = ["MAGIC", "VERSION", "ENTRY", "SEED", "BookError", "BookMove", "OpeningBook", "LevelStyle",
           "LEVEL_STYLES", "position_keys", "encode_move", "decode_move", "mirror_move", "wilson_lower",
           "write_book", "default_book_path", "default_book", "candidates", "choose", "draw", "best"]

MAGIC = b"XQBOOK01"
VERSION = 1
#: One book entry (packed, 22 bytes): see the module docstring.
ENTRY = np.dtype([("key", "<u8"), ("move", "<u2"), ("count", "<u4"), ("scored", "<u4"), ("score", "<f4")])
#: Seed of the Zobrist numbers: the games database's (:data:`xiangqi.db.keys.SEED`, "XIANGQI1").
SEED = 0x58_49_41_4E_47_51_49_31
_MASK = (1 << 64) - 1
_PIECE_ORDER = (1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7)
#: z of the 95 % Wilson interval.
Z95 = 1.96
#: File name of the book shipped in the package (``xiangqi/engine/data``).
DEFAULT_BOOK = "openings.xqbook"


class BookError(XiangqiError):
    """A book file that cannot be read (missing, not a book, another version, cut short)."""


def _zobrist() -> tuple[list[list[int]], list[list[int]], int]:
    state, out = SEED, []
    for _ in range(14 * 90 + 1):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        out.append(z ^ (z >> 31))
    table = {code: out[i * 90:(i + 1) * 90] for i, code in enumerate(_PIECE_ORDER)}
    by_code = [table.get(c - 7, [0] * 90) for c in range(15)]  # indexable by code + 7
    mirrored = [[row[(sq // 9) * 9 + 8 - sq % 9] for sq in range(90)] for row in by_code]
    return by_code, mirrored, out[-1]


#: ``_Z[code + 7][square]``, the same numbers for the mirrored square, and the side number.
_Z, _ZM, _BLACK = _zobrist()


def position_keys(squares: Sequence[int], red_to_move: bool) -> tuple[int, int]:
    """``(key, mirror key)`` of a position as unsigned 64-bit ints: the games database's key of the
    board and of its left-right mirror (file a ↔ i), both with the same side to move."""
    k = m = 0 if red_to_move else _BLACK
    for sq, code in enumerate(squares):
        if code:
            k ^= _Z[code + 7][sq]
            m ^= _ZM[code + 7][sq]
    return k, m


def encode_move(frm: int, to: int) -> int:
    """A move as the book stores it: ``from_square * 90 + to_square`` (0–8099)."""
    return frm * 90 + to


def decode_move(code: int) -> Move:
    """The :class:`Move` of a stored move code."""
    return Move(int(code) // 90, int(code) % 90)


def _mirror_sq(sq: int) -> int:
    return (sq // 9) * 9 + 8 - sq % 9


def mirror_move(code: int) -> int:
    """The stored move code of the left-right mirrored move (``h2e2`` ↔ ``b2e2``)."""
    frm, to = divmod(int(code), 90)
    return encode_move(_mirror_sq(frm), _mirror_sq(to))


def wilson_lower(score: float, n: int, z: float = Z95) -> float:
    """The lower bound of the Wilson score interval of a mean ``score`` (0–1) over ``n`` games; 0 for
    ``n == 0``. Draws count as half a point, as in the score itself (E. B. Wilson, JASA 1927)."""
    if n <= 0:
        return 0.0
    p = min(1.0, max(0.0, score))
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z2 / n))


@dataclasses.dataclass(frozen=True, slots=True)
class BookMove:
    """One book move of a position: ``move``, ``count`` (games), ``scored`` (games with a result),
    ``score`` (points per scored game for the side to move, None without one) and ``weight``
    (:func:`wilson_lower` of the score)."""

    move: Move
    count: int
    scored: int
    score: float | None
    weight: float

    @property
    def iccs(self) -> str:
        """The move in ICCS (``h2e2``)."""
        return self.move.iccs()

    def as_dict(self) -> dict[str, Any]:
        """``{move, count, scored, score, weight}`` (JSON-ready; ``score`` and ``weight`` rounded)."""
        return {"move": self.iccs, "count": self.count, "scored": self.scored,
                "score": None if self.score is None else round(self.score, 4),
                "weight": round(self.weight, 4)}


class OpeningBook:
    """A book file, memory-mapped. ``OpeningBook(path)`` raises :class:`BookError` for a file that is
    not a book of this version. ``header`` is its JSON header; ``len(book)`` its number of entries."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(12)
                if len(head) < 12 or head[:8] != MAGIC:
                    raise BookError(f"{self.path}: not an opening book (no {MAGIC.decode()} magic)")
                n = int.from_bytes(head[8:12], "little")
                raw = fh.read(n)
            header = json.loads(raw.decode("utf-8"))
        except OSError as exc:
            raise BookError(f"cannot read the opening book {self.path}: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BookError(f"{self.path}: damaged book header ({exc})") from None
        if header.get("version") != VERSION:
            raise BookError(f"{self.path}: book version {header.get('version')!r}, "
                            f"this program reads {VERSION}")
        self.header: dict[str, Any] = header
        offset = 12 + n
        entries = int(header.get("entries", 0))
        npos = int(header.get("positions", 0))
        index_at = _align16(offset + entries * ENTRY.itemsize)
        size = self.path.stat().st_size
        if size < index_at + npos * 8 + (npos + 1) * 4 or (npos == 0) != (entries == 0):
            raise BookError(f"{self.path}: cut short ({size} bytes for {entries} moves in {npos} positions)")
        if entries:
            self.table = np.memmap(self.path, dtype=ENTRY, mode="r", offset=offset, shape=(entries,))
            self.keys = np.memmap(self.path, dtype="<u8", mode="r", offset=index_at, shape=(npos,))
            self.starts = np.memmap(self.path, dtype="<u4", mode="r", offset=index_at + npos * 8,
                                    shape=(npos + 1,))
        else:
            self.table = np.zeros(0, dtype=ENTRY)
            self.keys = np.zeros(0, dtype="<u8")
            self.starts = np.zeros(1, dtype="<u4")

    def __len__(self) -> int:
        return int(self.table.shape[0])

    def __repr__(self) -> str:
        return f"<OpeningBook {self.path.name}: {len(self)} moves, {self.header.get('positions')} positions>"

    def _rows(self, key: int) -> np.ndarray:
        k = np.uint64(key)
        i = int(np.searchsorted(self.keys, k))
        if i >= len(self.keys) or int(self.keys[i]) != key:
            return self.table[:0]
        return self.table[int(self.starts[i]):int(self.starts[i + 1])]

    def probe(self, board: Board) -> list[BookMove]:
        """The book moves of ``board``'s position, most played first (ties: the better weight).

        Mirrored games count here too (see the module docstring). Moves not legal on ``board`` (a key
        collision; the book was built from legal games) are left out. An empty list: out of book.
        """
        key, mkey = position_keys(board.squares, board.turn)
        canonical = min(key, mkey)
        flip = canonical != key
        out: list[BookMove] = []
        for row in self._rows(canonical):
            code = int(row["move"])
            move = decode_move(mirror_move(code) if flip else code)
            if not board.is_legal(move):
                continue
            scored = int(row["scored"])
            score = float(row["score"]) if scored else None
            out.append(BookMove(move, int(row["count"]), scored, score,
                                wilson_lower(score or 0.0, scored)))
        out.sort(key=lambda b: (-b.count, -b.weight, b.iccs))
        return out

    def __contains__(self, board: object) -> bool:
        return isinstance(board, Board) and bool(self.probe(board))


def write_book(path: str | os.PathLike[str], keys: np.ndarray, moves: np.ndarray, counts: np.ndarray,
               scored: np.ndarray, scores: np.ndarray, header: dict[str, Any]) -> int:
    """Write a book file at ``path`` from parallel arrays (canonical keys as uint64, move codes, counts,
    scored counts, scores), one entry per (key, move); sorts them (key, then move) and adds the position
    index. ``header`` is stored with ``version``, ``entries`` and ``positions`` filled in. Returns the
    file size in bytes. Written to a temporary file first and renamed, so a reader never sees half a
    book."""
    table = np.zeros(len(keys), dtype=ENTRY)
    table["key"], table["move"], table["count"] = keys, moves, counts
    table["scored"], table["score"] = scored, scores
    table = table[np.lexsort((table["move"], table["key"]))]
    first = np.ones(len(table), dtype=bool)
    first[1:] = table["key"][1:] != table["key"][:-1]
    starts = np.append(np.flatnonzero(first), len(table)).astype("<u4")
    pkeys = np.ascontiguousarray(table["key"][first], dtype="<u8")
    head = dict(header, version=VERSION, entries=int(len(table)), positions=int(len(pkeys)))
    raw = json.dumps(head, ensure_ascii=False, sort_keys=True).encode("utf-8")
    raw += b" " * (_align16(12 + len(raw)) - 12 - len(raw))
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(MAGIC + len(raw).to_bytes(4, "little") + raw)
        body = table.tobytes()
        fh.write(body)
        fh.write(b"\0" * (_align16(12 + len(raw) + len(body)) - 12 - len(raw) - len(body)))
        fh.write(pkeys.tobytes())
        fh.write(starts.tobytes())
    os.replace(tmp, path)
    return path.stat().st_size


def _align16(n: int) -> int:
    return (n + 15) // 16 * 16


def default_book_path() -> Path:
    """Where the book shipped with the package lives (``xiangqi/engine/data/openings.xqbook``;
    built from the CCPD and WXF master games, see the NOTICE.md beside it)."""
    return Path(str(resources.files("xiangqi.engine").joinpath("data", DEFAULT_BOOK)))


@functools.cache
def _open_cached(path: str, mtime: float) -> OpeningBook:
    return OpeningBook(path)


def default_book(path: str | os.PathLike[str] | None = None) -> OpeningBook | None:
    """The book at ``path`` (default: the shipped one), opened once and shared (it is read-only);
    None when the shipped book is missing. Raises :class:`BookError` for a bad ``path``."""
    p = Path(path) if path else default_book_path()
    try:
        mtime = p.stat().st_mtime
    except OSError:
        if path:
            raise BookError(f"no opening book at {p}") from None
        return None
    return _open_cached(str(p), mtime)


@dataclasses.dataclass(frozen=True, slots=True)
class LevelStyle:
    """How a level plays from the book.

    ``max_ply``: the book is used only while fewer plies than this have been played (deeper lines are
    the level's own play); ``min_share``: moves played in less than this share of the position's games
    are left out; ``temperature`` and ``sharpness``: a move's chance is proportional to
    ``count ** (1 / temperature) * exp(sharpness * (weight - best weight))``, so a high sharpness keeps
    to the best-scored moves and a high temperature spreads the choice over the rarer ones.
    """

    max_ply: int
    min_share: float
    temperature: float
    sharpness: float


#: The game's levels (keys of :mod:`xiangqi.engine.levels`). 大师 plays the whole book, the common
#: moves only, weighted towards the best-scored (a move 0.05 below the best weight is 4.5 times less
#: likely than its games alone would make it); 初级 leaves it after 6 plies and picks among all moves
#: by flattened frequency. At the start of the shipped book 大师 opens 兵七进一 (weight 0.600) about
#: 60 % of the time, 炮二平五 (0.536, the most played) 33 %, 相三进五 7 %.
LEVEL_STYLES: dict[str, LevelStyle] = {
    "beginner": LevelStyle(max_ply=6, min_share=0.0, temperature=2.0, sharpness=0.0),
    "intermediate": LevelStyle(max_ply=12, min_share=0.01, temperature=1.5, sharpness=5.0),
    "advanced": LevelStyle(max_ply=20, min_share=0.03, temperature=1.0, sharpness=12.0),
    "master": LevelStyle(max_ply=99, min_share=0.05, temperature=1.0, sharpness=30.0),
}


def _style(level: str | LevelStyle) -> LevelStyle:
    if isinstance(level, LevelStyle):
        return level
    try:
        return LEVEL_STYLES[level]
    except KeyError:
        raise ValueError(f"no book style for level {level!r} (one of {', '.join(LEVEL_STYLES)})") from None


def candidates(moves: Sequence[BookMove], level: str | LevelStyle, ply: int) -> list[tuple[BookMove, float]]:
    """The book moves ``level`` may play at ``ply`` (0 = the first move of the game) with their
    probabilities (summing to 1); empty when the level is out of its book there."""
    style = _style(level)
    if ply >= style.max_ply or not moves:
        return []
    total = sum(m.count for m in moves)
    kept = [m for m in moves if m.count >= style.min_share * total] or [max(moves, key=lambda m: m.count)]
    top = max(m.weight for m in kept)
    raw = [m.count ** (1.0 / style.temperature) * math.exp(style.sharpness * (m.weight - top)) for m in kept]
    s = sum(raw)
    return [(m, w / s) for m, w in zip(kept, raw, strict=True)]


def choose(moves: Sequence[BookMove], level: str | LevelStyle, ply: int,
           rng: random.Random | None = None) -> BookMove | None:
    """One book move for ``level`` at ``ply`` drawn by :func:`candidates` with ``rng`` (seed it for
    repeatable games), or None when the level is out of its book."""
    return draw(candidates(moves, level, ply), rng)


def draw(cands: Sequence[tuple[BookMove, float]], rng: random.Random | None = None) -> BookMove | None:
    """One move of ``cands`` (``(move, probability)``, as :func:`candidates` gives) drawn with ``rng``;
    None when there is none."""
    if not cands:
        return None
    x = (rng or random.Random()).random()
    for m, p in cands:
        x -= p
        if x < 0:
            return m
    return cands[-1][0]


def best(moves: Sequence[BookMove], min_count: int = 1) -> BookMove | None:
    """The best book move: the highest weight among moves played at least ``min_count`` times (ties:
    more games, then ICCS order). Deterministic (the UCI ``OwnBook`` answer)."""
    pool = [m for m in moves if m.count >= min_count]
    if not pool:
        return None
    return min(pool, key=lambda m: (-m.weight, -m.count, m.iccs))
