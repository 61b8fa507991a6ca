"""Searching the games database: by headers, by position (exact, optionally mirrored), by similar position.

Every search takes the same header filters (:class:`Filters`: player of either colour, red, black,
event, site, date range, result, ECCO code, opening name, text in comments, collection) and returns
:class:`GameHit` rows, paginated with ``limit``/``offset`` (``limit=None``: all).

- :func:`search_games` with ``fen``: games in which that position (board and side to move) occurs in
  the main line, with ``ply`` = the first ply where it occurs; ``mirror=True`` also finds the games
  where its left-right mirror occurs (``mirrored`` tells which was found first).
- :func:`similar_games`: games whose positions share most pieces on the same squares with a given one.

Similarity: for positions A and B with the same side to move, each seen as the set of its
(piece, square) pairs (piece = type and colour), ``similarity = |A ∩ B| / |A ∪ B|`` (Jaccard): 1.0 for
the same position, 0.9 when one of 19 pieces stands elsewhere and the rest agree. With ``mirror=True``
the better of B against A and against mirror(A) counts. Candidates are the distinct positions of the
database (table ``boards``) with the same side to move whose material differs from A's by at most
``spread`` pieces (default 1: the same material, or one piece more or fewer); they are ranked in numpy,
and the games of the best positions are returned, each with its best position's similarity and ply.
When the given position itself (similarity 1.0) occurs in enough games to fill the page, those games
are the answer and no candidate is scanned. The candidate arrays of each material are kept in memory
(at most :data:`CACHE_BOARDS` boards) while the ``games`` table does not change, so stepping through
a game, whose positions mostly share their material, reads them once.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import re
from collections.abc import Iterable

import numpy as np
from sqlalchemy import Engine, and_, case, func, literal, or_, select, union_all

from xiangqi.core.board import Board
from xiangqi.core.errors import XiangqiError, excerpt
from xiangqi.db.keys import (
    PIECE_ORDER,
    key_of,
    material_signature,
    mirror_key_of,
    mirror_squares,
    piece_set,
    signature_counts,
)
from xiangqi.db.names import search_key
from xiangqi.db.schema import boards, games, positions

__all__ = ["SearchError", "Filters", "GameHit", "search_games", "count_games", "similar_games", "similarity",
           "RESULT_NAMES", "MINE", "SOURCES", "source_clause"]

#: Collection name of the user's own games (the app's library, :mod:`xiangqi.db.owned`).
MINE = "mine"
#: Source names: ``master`` = every collection but :data:`MINE`, ``mine``, ``both`` = all.
SOURCES = ("master", "mine", "both")

#: Words accepted for results, beside the PGN tokens themselves.
RESULT_NAMES = {"red": "1-0", "1-0": "1-0", "black": "0-1", "0-1": "0-1", "draw": "1/2-1/2",
                "1/2-1/2": "1/2-1/2", "½-½": "1/2-1/2", "unknown": "*", "*": "*"}
_ECCO_RANGE = re.compile(r"^([A-E]\d\d)-([A-E]\d\d)$")
_ECCO_PREFIX = re.compile(r"^[A-E]\d{0,2}$")
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def _real_date(text: str) -> bool:
    """Whether a ``YYYY[-MM[-DD]]`` filter names a real month and day (2020-13-45 does not); only query
    values are checked so, the dates of imported headers are normalised leniently (db/dates.py)."""
    parts = [int(p) for p in text.split("-")]
    try:
        datetime.date(max(parts[0], 1), parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError:
        return False
    return True


_MAX = {1: 1, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 5}


class SearchError(XiangqiError):
    """A search that cannot be run as asked (bad FEN, unknown result word, malformed date or ECCO code)."""


# built once: the explorer keys its prepared statements by these objects
_MASTER_CLAUSE = games.c.collection != MINE
_MINE_CLAUSE = games.c.collection == MINE


def source_clause(source: str):
    """The SQL condition on ``games`` for a source name of :data:`SOURCES` (None for ``both``).

    Raises :class:`SearchError` for another name.
    """
    if source == "master":
        return _MASTER_CLAUSE
    if source == "mine":
        return _MINE_CLAUSE
    if source == "both":
        return None
    raise SearchError(f"source {source!r}: expected one of {', '.join(SOURCES)}")


@dataclasses.dataclass(slots=True)
class Filters:
    """Header filters; every field set must match (AND). Text fields match a case-insensitive substring;
    ``player``, ``red``, ``black`` and ``event`` also regardless of script: the query's search key
    (:func:`xiangqi.db.names.search_key`: simplified Chinese, case-folded, full-width Latin as ASCII) is
    a substring of the stored name's key, so 胡荣华 and 胡榮華 find both spellings.

    ``player``: red or black; ``date_from``/``date_to``: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``,
    inclusive, compared with the normalised date as text (a game dated ``1998`` is inside
    1998-01-01…1998-12-31 only if both bounds allow the prefix: ``1998`` ≥ ``1998`` and ≤ ``1998~``);
    games without a readable date are outside any range. ``result``: ``1-0``/``red``, ``0-1``/``black``,
    ``1/2-1/2``/``draw``, ``*``/``unknown``. ``ecco``: a code (``A15``), a prefix (``A``, ``A1``) or a
    range (``A10-A19``), matched against the file's tag and the computed code. ``opening``: substring of
    the opening name (the file's ``Opening`` tag, or the ECCO 2004 name of the tag's or the computed
    code). ``comment``: substring of the comments. ``collection``: exact name. ``source``:
    ``master`` (every collection but the user's own games), ``mine`` or ``both`` (:data:`SOURCES`).
    """

    player: str | None = None
    red: str | None = None
    black: str | None = None
    event: str | None = None
    site: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    result: str | None = None
    ecco: str | None = None
    opening: str | None = None
    comment: str | None = None
    collection: str | None = None
    source: str | None = None

    def clauses(self) -> list:
        """The SQL conditions on the ``games`` table. Raises :class:`SearchError` for a malformed value."""
        g = games.c
        out = []
        if self.player and (key := search_key(self.player)):
            out.append(or_(g.red_key.contains(key, autoescape=True),
                           g.black_key.contains(key, autoescape=True)))
        for value, col in ((self.red, g.red_key), (self.black, g.black_key), (self.event, g.event_key)):
            if value and (key := search_key(value)):
                # both sides are keys (simplified, case-folded): a plain substring test on either backend
                out.append(col.contains(key, autoescape=True))
        for value, col in ((self.site, g.site), (self.comment, g.comments)):
            if value:
                out.append(col.icontains(value, autoescape=True))
        if self.opening:
            # the file's Opening tag, or an ECCO code (tag or computed) whose 2004 name holds the text
            codes = _ecco_codes_named(self.opening)
            out.append(or_(g.opening.icontains(self.opening, autoescape=True),
                           *([g.ecco_computed.in_(codes), g.ecco.in_(codes)] if codes else [])))
        for value, name in ((self.date_from, "date_from"), (self.date_to, "date_to")):
            if value and not _DATE.match(value):
                raise SearchError(f"{name} {excerpt(value)}: expected YYYY, YYYY-MM or YYYY-MM-DD")
            if value and not _real_date(value):
                raise SearchError(f"{name} {value!r}: no such date (month 01-12, day within the month)")
        if self.date_from:
            out.append(g.date >= self.date_from)
        if self.date_to:
            out.append(g.date <= self.date_to + "~")
        if self.result:
            token = RESULT_NAMES.get(self.result.strip().lower())
            if token is None:
                raise SearchError(f"result {self.result!r}: expected one of red, black, draw, unknown, "
                                  "1-0, 0-1, 1/2-1/2, *")
            out.append(g.result == token)
        if self.ecco:
            code = self.ecco.strip().upper()
            m = _ECCO_RANGE.match(code)
            if m:
                lo, hi = m.groups()
                out.append(or_(g.ecco.between(lo, hi), g.ecco_computed.between(lo, hi)))
            elif _ECCO_PREFIX.match(code):
                out.append(or_(g.ecco.startswith(code), g.ecco_computed.startswith(code)))
            else:
                raise SearchError(f"ECCO {self.ecco!r}: expected a code (A15), a prefix (A, A1) or a range "
                                  "(A10-A19)")
        if self.collection:
            out.append(g.collection == self.collection)
        if self.source:
            clause = source_clause(self.source)
            if clause is not None:
                out.append(clause)
        return out


def _ecco_codes_named(text: str) -> list[str]:
    """The ECCO 2004 codes whose name (:func:`xiangqi.study.ecco.code_names`) contains ``text``."""
    from xiangqi.study.ecco import code_names

    needle = text.strip()
    return sorted(c for c, n in code_names().items() if needle and needle in n)


@dataclasses.dataclass(slots=True)
class GameHit:
    """One matching game: its headers and ECCO, and where the searched position occurs.

    ``ply`` is the number of moves played before the (first) occurrence of the position (0 = the start),
    None for a header-only search; ``mirrored`` is True when the mirrored position was the one found;
    ``similarity`` is set by :func:`similar_games` only.
    """

    id: int
    event: str
    site: str
    round: str
    date: str | None
    date_raw: str
    red: str
    black: str
    result: str
    ecco: str | None
    ecco_computed: str | None
    opening: str
    plies: int
    collection: str
    source: str
    source_index: int
    ply: int | None = None
    mirrored: bool | None = None
    similarity: float | None = None

    def to_dict(self) -> dict:
        """The hit as a JSON-ready dict (the keys are the field names)."""
        return dataclasses.asdict(self)


_HIT_COLUMNS = [games.c[name] for name in ("id", "event", "site", "round", "date", "date_raw", "red", "black",
                                          "result", "ecco", "ecco_computed", "opening", "plies", "collection",
                                          "source", "source_index")]


def _board(fen: str) -> Board:
    try:
        return Board(fen)
    except (XiangqiError, ValueError) as exc:
        raise SearchError(f"bad FEN {excerpt(fen)}: {exc}") from None


def _filters(filters: Filters | None, kwargs: dict) -> Filters:
    if filters is not None and kwargs:
        raise TypeError("give either a Filters object or filter keywords, not both")
    if filters is not None:
        return filters
    try:
        return Filters(**kwargs)
    except TypeError as exc:
        raise TypeError(f"unknown filter: {exc}") from None


def _position_query(fen: str | None, mirror: bool, first: int | None = None):
    """The SELECT of hit columns (with ``ply``/``mply`` for a position), and the keys looked up.

    ``first``: only the games among the ``first`` lowest ids of each key are needed (a page without
    header filters); each key's rows are then read in primary-key order and the read stops there,
    instead of grouping every game of a common position.
    """
    cols = list(_HIT_COLUMNS)
    if fen is None:
        return select(*cols), None
    board = _board(fen)
    key = key_of(board)
    mkey = mirror_key_of(board) if mirror else key
    keys = [key] if mkey == key else [key, mkey]
    p = positions.c
    if first is None:
        sub = (select(p.game_id, func.min(case((p.key == key, p.ply))).label("ply"),
                      func.min(case((p.key == mkey, p.ply))).label("mply"))
               .where(p.key.in_(keys)).group_by(p.game_id).subquery())
    else:
        parts = []
        for flag, k in enumerate(keys):
            part = (select(p.game_id, func.min(p.ply).label("ply"), literal(flag).label("m"))
                    .where(p.key == k).group_by(p.game_id).order_by(p.game_id).limit(first).subquery())
            parts.append(select(part.c.game_id, part.c.ply, part.c.m))
        u = union_all(*parts).subquery() if len(parts) > 1 else parts[0].subquery()
        sub = (select(u.c.game_id, func.min(case((u.c.m == 0, u.c.ply))).label("ply"),
                      func.min(case((u.c.m == 1, u.c.ply))).label("mply"))
               .group_by(u.c.game_id).subquery())
    stmt = select(*cols, sub.c.ply, sub.c.mply).join(sub, sub.c.game_id == games.c.id)
    return stmt, (key, mkey)


def _hit(row) -> GameHit:
    m = row._mapping
    hit = GameHit(**{c.name: m[c.name] for c in _HIT_COLUMNS})
    if "ply" in m:
        ply, mply = m["ply"], m["mply"]
        if ply is None or (mply is not None and mply < ply):
            hit.ply, hit.mirrored = mply, True
        else:
            hit.ply, hit.mirrored = ply, False
    return hit


def search_games(engine: Engine, filters: Filters | None = None, *, fen: str | None = None,
                 mirror: bool = False, limit: int | None = None, offset: int = 0, **kwargs) -> list[GameHit]:
    """Games matching the header filters (a :class:`Filters` or its fields as keywords) and, with ``fen``,
    containing that position (or its mirror with ``mirror``), in import order (game id).

    ``limit=None`` returns all matches; ``offset`` skips that many. Raises :class:`SearchError` for a
    bad FEN or filter value.
    """
    flt = _filters(filters, kwargs)
    clauses = flt.clauses()
    first = None if clauses or limit is None else max(0, offset) + max(0, limit)
    stmt, _keys = _position_query(fen, mirror, first)
    if clauses:
        stmt = stmt.where(and_(*clauses))
    stmt = stmt.order_by(games.c.id).offset(max(0, offset))
    if limit is not None:
        stmt = stmt.limit(max(0, limit))
    with engine.connect() as conn:
        return [_hit(r) for r in conn.execute(stmt)]


def count_games(engine: Engine, filters: Filters | None = None, *, fen: str | None = None,
                mirror: bool = False, **kwargs) -> int:
    """The number of games :func:`search_games` would return without ``limit``."""
    flt = _filters(filters, kwargs)
    stmt, _keys = _position_query(fen, mirror)
    clauses = flt.clauses()
    if clauses:
        stmt = stmt.where(and_(*clauses))
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(stmt.subquery())).scalar_one()


def similarity(fen_a: str, fen_b: str, *, mirror: bool = False) -> float:
    """The similarity of two positions (module docstring): Jaccard over their (piece, square) sets,
    0.0 when the side to move differs; with ``mirror`` the better of B against A and mirror(A)."""
    a, b = _board(fen_a), _board(fen_b)
    if a.turn != b.turn:
        return 0.0
    sb = piece_set(b.squares)
    best = 0.0
    for sq in ([a.squares, mirror_squares(a.squares)] if mirror else [a.squares]):
        sa = piece_set(sq)
        best = max(best, len(sa & sb) / len(sa | sb) if sa | sb else 1.0)
    return best


def _neighbour_signatures(signature: int, spread: int) -> list[int]:
    counts, red = signature_counts(signature)
    found = {tuple(counts[c] for c in PIECE_ORDER)}
    frontier = set(found)
    for _ in range(spread):
        nxt = set()
        for vec in frontier:
            for i, code in enumerate(PIECE_ORDER):
                if abs(code) == 1:
                    continue
                for d in (-1, 1):
                    n = vec[i] + d
                    if 0 <= n <= _MAX[abs(code)]:
                        nxt.add(vec[:i] + (n,) + vec[i + 1:])
        nxt -= found
        found |= nxt
        frontier = nxt
    out = []
    for vec in found:
        squares = [code for code, n in zip(PIECE_ORDER, vec, strict=True) for _ in range(n)]
        out.append(material_signature(squares, red))
    return sorted(out)


def _template(signature: int) -> np.ndarray:
    counts, _ = signature_counts(signature)
    return np.array([(code + 7) * 90 for code in PIECE_ORDER for _ in range(counts[code])], dtype=np.int32)


def _group(rows: Iterable) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Candidate boards ``(key, material, pieces)`` as ``{material: (keys, (piece, square) codes)}``."""
    groups: dict[int, tuple[list[int], list[bytes]]] = {}
    for key, material, pieces in rows:
        ks, ps = groups.setdefault(material, ([], []))
        ks.append(key)
        ps.append(pieces)
    out = {}
    for material, (ks, ps) in groups.items():
        tmpl = _template(material)
        width = len(tmpl)
        good = [i for i, p in enumerate(ps) if len(p) == width]  # custom boards beyond the usual counts:
        if len(good) != len(ps):                                 # their packing does not fit, skip them
            ks, ps = [ks[i] for i in good], [ps[i] for i in good]
        arr = np.frombuffer(b"".join(ps), dtype=np.uint8).reshape(len(ps), width).astype(np.int16) + tmpl
        out[material] = (np.array(ks, dtype=np.int64), arr)
    return out


#: Candidate arrays by (database URL, material), with the (max game id, game count) they were read at.
_CACHE: collections.OrderedDict = collections.OrderedDict()
#: At most this many candidate boards are kept in memory (about 70 MB).
CACHE_BOARDS = 1_000_000


def _candidates(conn, url: str, sigs: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The candidate groups of ``sigs``, from the cache while the games table is unchanged."""
    version = tuple(conn.execute(select(func.max(games.c.id), func.count()).select_from(games)).one())
    missing = [sg for sg in sigs if _CACHE.get((url, sg), (None,))[0] != version]
    if missing:
        rows = conn.execute(select(boards.c.key, boards.c.material, boards.c.pieces)
                            .where(boards.c.material.in_(missing))).all()
        found = _group(rows)
        for sg in missing:
            keys, arr = found.get(sg, (np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int16)))
            _CACHE[(url, sg)] = (version, keys, arr)
    out = []
    for sg in sigs:
        _CACHE.move_to_end((url, sg))
        _version, keys, arr = _CACHE[(url, sg)]
        if len(keys):
            out.append((keys, arr))
    total = sum(len(v[1]) for v in _CACHE.values())
    while total > CACHE_BOARDS and len(_CACHE) > len(sigs):
        _key, (_v, keys, _arr) = _CACHE.popitem(last=False)
        total -= len(keys)
    return out


def _rank(groups: list[tuple[np.ndarray, np.ndarray]],
          queries: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(keys, similarities) of the candidate groups against the query sets (best over the queries)."""
    all_keys, all_sims = [], []
    for keys, arr in groups:
        width = arr.shape[1]
        best = np.zeros(len(keys), dtype=np.float64)
        for q in queries:
            member = np.zeros(15 * 90, dtype=np.bool_)  # a lookup table: is (piece, square) in the query?
            member[q] = True
            inter = member[arr].sum(axis=1)
            best = np.maximum(best, inter / (len(q) + width - inter))
        all_keys.append(keys)
        all_sims.append(best)
    if not all_keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(all_keys), np.concatenate(all_sims)


def similar_games(engine: Engine, fen: str, filters: Filters | None = None, *, mirror: bool = False,
                  min_similarity: float = 0.6, spread: int = 1, limit: int | None = 20, offset: int = 0,
                  **kwargs) -> list[GameHit]:
    """Games with a position similar to ``fen`` (module docstring), best first.

    Each game appears once, with the similarity and ply of its most similar position (ties: earliest
    ply); games rank by similarity, then game id. Only positions with ``similarity >= min_similarity``
    count. ``spread`` (0–2) is how many pieces the material may differ. Header filters as in
    :func:`search_games`. Raises :class:`SearchError` for a bad FEN, filter or parameter.
    """
    if not 0.0 <= min_similarity <= 1.0:
        raise SearchError(f"min_similarity {min_similarity}: expected a number from 0 to 1")
    if spread not in (0, 1, 2):
        raise SearchError(f"spread {spread}: expected 0, 1 or 2")
    flt = _filters(filters, kwargs)
    clauses = flt.clauses()
    board = _board(fen)
    sig = material_signature(board.squares, board.turn)
    queries = [np.array(sorted(piece_set(board.squares)), dtype=np.int32)]
    if mirror:
        queries.append(np.array(sorted(piece_set(mirror_squares(board.squares))), dtype=np.int32))
    want = None if limit is None else max(0, offset) + max(0, limit)
    if want is not None:
        # the same position (or its mirror) has similarity 1.0: when it alone fills the page, the page is
        # those games in id order, exactly what the full ranking gives, without scanning the candidates
        exact = search_games(engine, flt, fen=fen, mirror=mirror, limit=want)
        if len(exact) >= want:
            for h in exact:
                h.similarity = 1.0
            return exact[max(0, offset):want]
    sigs = _neighbour_signatures(sig, spread)
    with engine.connect() as conn:
        url = engine.url.render_as_string(hide_password=False)
        keys, sims = _rank(_candidates(conn, url, sigs), queries)
        keep = sims >= min_similarity - 1e-12
        keys, sims = keys[keep], sims[keep]
        order = np.lexsort((keys, -sims))
        keys, sims = keys[order], sims[order]
        seen: set[int] = set()
        ranked: list[tuple] = []  # (-similarity, game id, ply, row), best first
        p = positions.c
        nk = len(_HIT_COLUMNS)
        start, batch = 0, 256
        while start < len(keys):
            chunk_keys = [int(k) for k in keys[start:start + batch]]
            sim_of = {k: float(s) for k, s in zip(chunk_keys, sims[start:start + batch], strict=True)}
            start, batch = start + batch, min(batch * 2, 8192)
            stmt = (select(*_HIT_COLUMNS, p.key, func.min(p.ply).label("ply"))
                    .join(games, games.c.id == p.game_id)
                    .where(p.key.in_(chunk_keys)).group_by(games.c.id, p.key))
            if clauses:
                stmt = stmt.where(and_(*clauses))
            found = [(-sim_of[row[nk]], row[0], row[nk + 1], row) for row in conn.execute(stmt)]
            found.sort(key=lambda t: t[:3])
            for item in found:
                if item[1] not in seen:  # a game counts at its best position (the first seen)
                    seen.add(item[1])
                    ranked.append(item)
            if want is not None and len(ranked) >= want:
                break
    # games found in an earlier batch rank above later ones (their similarity is >=); ties go by id
    ranked.sort(key=lambda t: t[:3])
    page = ranked[max(0, offset):] if want is None else ranked[max(0, offset):want]
    hits = []
    for neg_sim, _gid, ply, row in page:
        hit = GameHit(*row[:nk])
        hit.ply, hit.similarity, hit.mirrored = ply, round(-neg_sim, 6), None
        hits.append(hit)
    return hits
