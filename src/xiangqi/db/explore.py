"""The opening explorer: the moves played from a position in the games database, with their results.

:func:`explore` takes a position (a FEN, or moves from the standard start) and answers, from the
position index (``positions``: key → game, ply, next move):

- every move played from that position, with the number of games that played it, how those games
  ended (Red win / draw / Black win, as counts and as percentages of the games with a known result;
  games without a result are counted apart as ``unknown``), and the average year of the games with a
  readable date;
- the most recent games (by normalised date, undated games last, then the newest import) that go on
  from the position (a game that ends in it has no move to show), with the move each played from it;
- the ECCO code and name of the opening when the position was given by moves from the standard start
  (:func:`xiangqi.study.ecco.classify`; a FEN alone names no opening).

Counting: a game counts once per move it played from the position, and once in the position's total,
however often the position recurs in it (a repetition); a game that ends in the position counts in
the total and in ``ended`` but under no move. With ``mirror=True`` (the default) the games where the
left-right mirror of the position occurs are merged in, their moves mirrored back (a game reaching
炮八平五 counts for 炮二平五 from the mirrored side); a game in which both the position and its mirror
occur still counts once per distinct move after mirroring back. For a symmetric position (the start)
the mirror is the position itself and nothing is merged twice.

Sources (:data:`SOURCES`): ``master`` is every imported collection except the user's own games,
``mine`` is the collection :data:`MINE` (the games the app saves to its library), ``both`` is all.
"""

from __future__ import annotations

import collections
import dataclasses
from collections import defaultdict

from sqlalchemy import Engine, Integer, and_, bindparam, cast, func, select

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError, excerpt
from xiangqi.db import aggregate
from xiangqi.db.keys import key_of, mirror_key_of
from xiangqi.db.schema import explore_moves, explore_totals, games, games_version, positions
from xiangqi.db.search import _HIT_COLUMNS, MINE, SOURCES, GameHit, SearchError, source_clause
from xiangqi.db.versions import changed, generation, has_version_table

__all__ = ["MINE", "SOURCES", "ExploreMove", "Exploration", "explore", "source_clause", "mirror_move",
           "position_of", "opening_of", "changed", "has_version_table"]

_RESULTS = {"1-0": "red", "1/2-1/2": "draw", "0-1": "black"}
#: Positions in more games than this find their recent games by walking the date index.
SCAN_DATES = 500


def mirror_move(iccs: str) -> str:
    """The left-right mirror of an ICCS move (file a ↔ i, b ↔ h, …; ranks kept): ``b2e2`` → ``h2e2``."""
    files = "abcdefghi"
    return f"{files[8 - files.index(iccs[0])]}{iccs[1]}{files[8 - files.index(iccs[2])]}{iccs[3]}"


def position_of(fen: str | None = None, moves: list[str] | tuple[str, ...] = ()) -> tuple[Board, list[Move]]:
    """The board after ``moves`` (ICCS, Chinese or WXF, each checked legal) from ``fen`` (default the
    standard start), and the moves played. Raises :class:`SearchError` naming the bad FEN or move."""
    try:
        board = Board(fen) if fen is not None else Board()
    except (XiangqiError, ValueError) as exc:
        raise SearchError(f"bad FEN {excerpt(fen)}: {exc}") from None
    played = []
    for i, text in enumerate(moves):
        try:
            played.append(board.push_text(text))
        except (XiangqiError, ValueError) as exc:
            raise SearchError(f"move {i + 1} {text!r}: {exc}") from None
    return board, played


@dataclasses.dataclass(slots=True)
class ExploreMove:
    """One move played from the explored position.

    ``move``: ICCS (``h2e2``); ``text``: the move in Chinese notation (``炮二平五``); ``games``: games
    that played it; ``red``/``draw``/``black``/``unknown``: how many of them ended so; the ``*_pct``
    fields: percentages (0–100, one decimal) of the games with a known result (None when none has one);
    ``avg_year``: the mean year of its dated games (None when none is dated), rounded to an integer.
    """

    move: str
    text: str
    games: int
    red: int
    draw: int
    black: int
    unknown: int
    red_pct: float | None
    draw_pct: float | None
    black_pct: float | None
    avg_year: int | None

    def to_dict(self) -> dict:
        """The move as a JSON-ready dict (the field names as keys)."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(slots=True)
class Exploration:
    """The explorer's answer for one position.

    ``fen``: the position; ``source``; ``mirror``; ``games``: distinct games in which it occurs (or its
    mirror, with ``mirror``); ``ended``: those that end in it; ``moves``: :class:`ExploreMove` rows, most
    played first (ties: ICCS order); ``top``: the most recent games that go on from it (:class:`GameHit` with
    ``ply`` = where it occurs, ``mirrored``), ``top_moves``: for each top game the ICCS move it played
    from the position as seen from this side (None when the game ends there); ``ecco``/``opening``:
    the opening's code and name when the position was reached by moves from the standard start (its
    English name in ``to_dict()``'s ``opening_en``).
    """

    fen: str
    source: str
    mirror: bool
    games: int
    ended: int
    moves: list[ExploreMove]
    top: list[GameHit]
    top_moves: list[str | None]
    ecco: str | None = None
    opening: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready: the fields, ``moves`` as dicts and ``top`` as hit dicts with ``next_move`` (ICCS)
        and ``next_text`` (Chinese) of the move each game played from the position."""
        board = Board(self.fen)
        top = []
        for hit, mv in zip(self.top, self.top_moves, strict=True):
            d = hit.to_dict()
            d["next_move"] = mv
            d["next_text"] = _text(board, mv) if mv else None
            top.append(d)
        return {"fen": self.fen, "source": self.source, "mirror": self.mirror, "games": self.games,
                "ended": self.ended, "moves": [m.to_dict() for m in self.moves], "top": top,
                "ecco": self.ecco, "opening": self.opening, "opening_en": _english(self.ecco)}


def _english(code: str | None) -> str | None:
    """The English name of an ECCO code (:func:`xiangqi.study.ecco.name_en`), None for None."""
    if code is None:
        return None
    from xiangqi.study.ecco import name_en

    return name_en(code)


def _text(board: Board, iccs: str) -> str:
    try:
        return board.move_text(Move.from_iccs(iccs), "chinese")
    except (XiangqiError, ValueError):
        return iccs  # a stored move that is not legal here (a key collision): shown as ICCS


def _pct(n: int, known: int) -> float | None:
    return round(100.0 * n / known, 1) if known else None


#: Answers kept per (database, position, source, top) while the games table is unchanged.
CACHE_SIZE = 4096
_CACHE: collections.OrderedDict = collections.OrderedDict()
# The statements of every query, built once: building a SQLAlchemy statement and its cache key costs more
# CPU than SQLite's answer to these indexed lookups (bound values are parameters; lists expand).
_VERSION_STMT = select(games_version.c.changes).where(games_version.c.id == 1)
_HAS_MINE_STMT = select(games.c.id).where(games.c.collection == MINE).limit(1)


def _version(conn) -> tuple:
    """What the cached answers depend on: the games table's change counter (one primary-key read; on a
    database without it, the games' count and highest id) and the in-process generation."""
    if has_version_table(conn):
        n = conn.execute(_VERSION_STMT).scalar_one()
        return n, generation()
    count, top_id = conn.execute(select(func.count(), func.max(games.c.id)).select_from(games)).one()
    return count, top_id, generation()


def explore(engine: Engine, fen: str | None = None, moves: list[str] | tuple[str, ...] = (), *,
            source: str = "both", mirror: bool = True, top: int = 5) -> Exploration:
    """Explore the position after ``moves`` from ``fen`` (default the standard start): module docstring.

    ``source``: ``master``, ``mine`` or ``both``; ``mirror``: merge the mirrored position; ``top``: how
    many recent games to return (0–100). Raises :class:`SearchError` for a bad FEN, move, source or
    ``top``. Reads a few indexed queries and never writes; answers are cached (:data:`CACHE_SIZE`)
    while the games table is unchanged, so the common opening positions are looked up once.
    """
    if not 0 <= top <= 100:
        raise SearchError(f"top {top}: expected 0 to 100")
    where_source = source_clause(source)
    board, played = position_of(fen, moves)
    key = key_of(board)
    mkey = mirror_key_of(board) if mirror else key
    url = engine.url.render_as_string(hide_password=False)
    with engine.connect() as conn:
        version = _version(conn)
        ck = (url, key, mkey, source, top)
        hit = _CACHE.get(ck)
        if hit is not None and hit[0] == version:
            _CACHE.move_to_end(ck)
            _v, total, ended, out, hits, top_moves = hit
        else:
            total, ended, out = _moves(conn, board, key, mkey, where_source, source, mirror, version)
            hits, top_moves = _top_games(conn, key, mkey, where_source, top, total) if top else ([], [])
            _CACHE[ck] = (version, total, ended, out, hits, top_moves)
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    ecco, opening = _opening(fen, played)
    return Exploration(fen=board.fen(), source=source, mirror=mirror, games=total, ended=ended,
                       moves=[dataclasses.replace(m) for m in out],
                       top=[dataclasses.replace(h) for h in hits], top_moves=list(top_moves), ecco=ecco,
                       opening=opening)


def _moves(conn, board: Board, key: int, mkey: int, where_source, source: str = "both",
           use_aggregates: bool = True, version: tuple | None = None) -> tuple[int, int, list[ExploreMove]]:
    """(games, ended, move rows) of the position ``key`` and its mirror ``mkey``.

    The master games of a common position come from the pre-aggregated counts
    (:mod:`xiangqi.db.aggregate`, which merge the mirror: ``use_aggregates`` only when ``mkey`` is the
    mirror's key) when they are current, the user's games (and every other case) from the position
    index."""
    agg: dict[str | None, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])  # red draw black unk n_y sum_y
    total = 0
    if version is None:
        version = _version(conn)
    master = None
    if use_aggregates and source in ("master", "both"):
        master = _aggregated(conn, key, mkey, version)
    if master is not None:
        total, rows = master
        for mv, counts in rows:
            a = agg[mv]
            for i, n in enumerate(counts):
                a[i] += n
        if source == "both" and _has_mine(conn, version):
            t, live = _live(conn, key, mkey, source_clause(MINE), mine_only=True)
            total += t
            for mv, counts in live.items():
                a = agg[mv]
                for i, n in enumerate(counts):
                    a[i] += n
    else:
        total, agg = _live(conn, key, mkey, where_source, mine_only=source == MINE)
    out = []
    for mv, (red, draw, black, unknown, n_year, sum_year) in agg.items():
        if mv is None:
            continue
        known = red + draw + black
        out.append(ExploreMove(move=mv, text=_text(board, mv), games=known + unknown, red=red, draw=draw,
                               black=black, unknown=unknown, red_pct=_pct(red, known),
                               draw_pct=_pct(draw, known), black_pct=_pct(black, known),
                               avg_year=round(sum_year / n_year) if n_year else None))
    out.sort(key=lambda m: (-m.games, m.move))
    ended = sum(agg[None][:4]) if None in agg else 0
    return total, ended, out


_VALID: dict[tuple, bool] = {}


_MINE_SEEN: dict[tuple, bool] = {}


def _has_mine(conn, version: tuple) -> bool:
    """True when the database holds games of the user's own collection (noted per games version)."""
    ck = (str(conn.engine.url), *version)
    has = _MINE_SEEN.get(ck)
    if has is None:
        has = conn.execute(_HAS_MINE_STMT).first() is not None
        if len(_MINE_SEEN) > 64:
            _MINE_SEEN.clear()
        _MINE_SEEN[ck] = has
    return has


_AGG_STMT = None


def _aggregated(conn, key: int, mkey: int, version: tuple):
    """``(games, [(move or None, [red, draw, black, unknown, n_year, sum_year])])`` of the master games
    of the position (merged with its mirror) from the aggregates, or None (not aggregated, or stale)."""
    version = (str(conn.engine.url), *version)
    ok = _VALID.get(version)
    if ok is None:
        ok = aggregate.valid(conn)
        if len(_VALID) > 64:
            _VALID.clear()
        _VALID[version] = ok
    if not ok:
        return None
    ck = min(key, mkey)
    global _AGG_STMT
    if _AGG_STMT is None:
        e, t = explore_moves.c, explore_totals.c
        # one query: an aggregated position has at least one move row (-1: the games that end there)
        _AGG_STMT = (select(t.games, e.move, e.red, e.draw, e.black, e.unknown, e.n_year, e.sum_year)
                     .join(explore_moves, e.key == t.key).where(t.key == bindparam("ck")))
    rows = conn.execute(_AGG_STMT, {"ck": ck}).all()
    if not rows:
        return None
    flip = key != ck
    return rows[0][0], [(aggregate.decode_move(r[1], flip), list(r[2:])) for r in rows]


_LIVE_STMTS: dict[tuple, tuple] = {}
_MINE_IDS_STMT = select(games.c.id).where(games.c.collection == MINE)


def _live_stmts(where_source, mine_only: bool) -> tuple:
    """The statements of :func:`_live`, bound by name: ``keys`` (and ``mine``, the user's game ids, when
    ``mine_only``); the intersection also ``key`` and ``mkey``; the last one ``keys`` and ``common``."""
    p, g = positions.c, games.c
    # (key, next move, result) -> distinct games, dated games, sum of years
    year = cast(func.substr(g.date, 1, 4), Integer)
    in_keys = p.key.in_(bindparam("keys", expanding=True))
    if mine_only:
        in_keys = and_(in_keys, p.game_id.in_(bindparam("mine", expanding=True)))
    dist = select(p.key, p.game_id, p.move).where(in_keys).distinct().subquery()
    stmt = (select(dist.c.key, dist.c.move, g.result, func.count(), func.count(year), func.sum(year))
            .join(games, g.id == dist.c.game_id).group_by(dist.c.key, dist.c.move, g.result))
    if where_source is not None:
        stmt = stmt.where(where_source)
        total_stmt = select(func.count(func.distinct(p.game_id))).join(games, g.id == p.game_id) \
            .where(in_keys, where_source)
    else:
        total_stmt = select(func.count(func.distinct(p.game_id))).where(in_keys)
    a = select(p.game_id).where(p.key == bindparam("key"))
    b = select(p.game_id).where(p.key == bindparam("mkey"))
    if mine_only:
        a = a.where(p.game_id.in_(bindparam("mine", expanding=True)))
        b = b.where(p.game_id.in_(bindparam("mine", expanding=True)))
    cs = select(p.key, p.game_id, p.move, g.result, year).join(games, g.id == p.game_id) \
        .where(and_(p.key.in_(bindparam("keys", expanding=True)),
                    p.game_id.in_(bindparam("common", expanding=True)))).distinct()
    if where_source is not None:
        cs = cs.where(where_source)
    return stmt, total_stmt, a.intersect(b), cs


def _live(conn, key: int, mkey: int, where_source, *, mine_only: bool = False):
    """``(games, {move or None: [red, draw, black, unknown, n_year, sum_year]})`` from the position index.

    ``mine_only``: the source is the user's games; the index is then read for those games only (by
    game id, a probe per game) instead of every occurrence of the position."""
    keys = [key] if mkey == key else [key, mkey]
    mine: list[int] = []
    if mine_only:  # the user's games are few: the index is probed for each of them
        mine = list(conn.execute(_MINE_IDS_STMT).scalars())
        if not mine:
            return 0, defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    stmts = _LIVE_STMTS.get((where_source, mine_only))
    if stmts is None:
        stmts = _live_stmts(where_source, mine_only)
        if len(_LIVE_STMTS) < 64:
            _LIVE_STMTS[(where_source, mine_only)] = stmts
    stmt, total_stmt, intersect, common_stmt = stmts
    params = {"keys": keys, "mine": mine} if mine_only else {"keys": keys}
    agg: dict[str | None, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])  # red draw black unk n_y sum_y
    rows = conn.execute(stmt, params).all()
    total = conn.execute(total_stmt, params).scalar_one()
    both: list = []
    if len(keys) == 2:
        # games holding the position and its mirror: their moves may coincide after mirroring back
        common = [r[0] for r in conn.execute(intersect, {**params, "key": key, "mkey": mkey})]
        if common:
            both = conn.execute(common_stmt, {"keys": keys, "common": common}).all()
    for k, mv, result, n, n_year, sum_year in rows:
        if mv is not None and k != key:
            mv = mirror_move(mv)
        a = agg[mv]
        a[("red", "draw", "black").index(_RESULTS[result]) if result in _RESULTS else 3] += n
        a[4] += n_year
        a[5] += sum_year or 0
    # undo the double count of a game that played the same move (after mirroring back) from both sides
    seen: dict[tuple[int, str | None], int] = defaultdict(int)
    info: dict[int, tuple[str, int | None]] = {}
    for k, gid, mv, result, yr in both:
        if mv is not None and k != key:
            mv = mirror_move(mv)
        seen[(gid, mv)] += 1
        info[gid] = (result, yr)
    for (gid, mv), n in seen.items():
        if n > 1:
            result, yr = info[gid]
            a = agg[mv]
            a[("red", "draw", "black").index(_RESULTS[result]) if result in _RESULTS else 3] -= n - 1
            if yr is not None:
                a[4] -= n - 1
                a[5] -= (n - 1) * yr
    return total, agg


def _opening(fen: str | None, played: list[Move]) -> tuple[str | None, str | None]:
    if not played:
        return None, None
    if fen:
        start = Board(fen)
        if start.board_fen() != Board().board_fen() or not start.turn:
            return None, None
    from xiangqi.study.ecco import classify

    found = classify(played)
    return (found.code, found.name) if found is not None else (None, None)


def opening_of(fen: str | None, moves: list[str] | tuple[str, ...]) -> tuple[str | None, str | None]:
    """``(ECCO code, name)`` of the opening after ``moves`` from ``fen`` when that is the standard start
    (:func:`xiangqi.study.ecco.classify`), else ``(None, None)``. Raises :class:`SearchError` for a bad
    FEN or move."""
    _board, played = position_of(fen, moves)
    return _opening(fen, played)


_TOP_STMTS: dict[tuple, tuple] = {}


def _top_stmts(scan: bool, where_source) -> tuple:
    """The two statements of :func:`_top_games` (bound: ``keys``, ``top``; then ``keys``, ``ids``)."""
    p, g = positions.c, games.c
    keys = bindparam("keys", expanding=True)
    order = (g.date.desc().nulls_last(), g.id.desc())
    # games that go on from the position (a move played from it): one that ends there shows no move
    # to learn from, and would let the player's own abandoned games crowd out the masters'
    if scan:
        probe = select(p.game_id).where(p.key.in_(keys), p.game_id == g.id, p.move.isnot(None)).exists()
        stmt = select(g.id).where(probe).order_by(*order).limit(bindparam("top"))
    else:
        sub = select(p.game_id).where(p.key.in_(keys), p.move.isnot(None)).distinct().subquery()
        stmt = select(g.id).join(sub, sub.c.game_id == g.id).order_by(*order).limit(bindparam("top"))
    if where_source is not None:
        stmt = stmt.where(where_source)
    # each game's row with the first ply of the position (or of its mirror) in it: one query
    at = (select(p.game_id, p.key, func.min(p.ply).label("ply"))
          .where(p.key.in_(bindparam("keys", expanding=True)),
                 p.game_id.in_(bindparam("ids", expanding=True)))
          .group_by(p.game_id, p.key).subquery())
    return stmt, select(*_HIT_COLUMNS, g.moves, at.c.key, at.c.ply).join(at, at.c.game_id == g.id)


def _top_games(conn, key: int, mkey: int, where_source, top: int, total: int) -> tuple[list[GameHit], list]:
    """The ``top`` most recent games holding ``key`` (or ``mkey``): hits and the move each played.

    A common position (``total`` above :data:`SCAN_DATES`) walks the games newest first (the date
    index) and probes the position index for each, stopping after ``top`` finds; a rare one reads
    its few games and sorts them.
    """
    keys = [key] if mkey == key else [key, mkey]
    scan = total > SCAN_DATES
    stmt = _TOP_STMTS.get((scan, where_source))
    if stmt is None:
        stmt = _top_stmts(scan, where_source)
        if len(_TOP_STMTS) < 64:
            _TOP_STMTS[(scan, where_source)] = stmt
    ids = [r[0] for r in conn.execute(stmt[0], {"keys": keys, "top": top})]
    if not ids:
        return [], []
    first: dict[int, tuple[int, bool]] = {}
    rows = {}
    for r in conn.execute(stmt[1], {"keys": keys, "ids": ids}):
        gid, k, ply = r[0], r[-2], r[-1]
        if gid not in first or ply < first[gid][0]:
            first[gid] = (ply, k != key)
        rows[gid] = r[:-2]
    hits: list[GameHit] = []
    moves: list[str | None] = []
    for gid in ids:
        row = rows[gid]
        ply, mirrored = first[gid]
        hit = GameHit(*row[:len(_HIT_COLUMNS)])
        hit.ply, hit.mirrored = ply, mirrored
        line = row[-1].split()
        mv = line[ply] if ply < len(line) else None
        hits.append(hit)
        moves.append(mirror_move(mv) if mv and mirrored else mv)
    return hits, moves
