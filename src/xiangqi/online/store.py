"""Online games, their move logs and the players' ratings: SQLAlchemy Core tables beside the accounts.

The tables share :data:`xiangqi.online.accounts.metadata`; their schema is kept by Alembic
(:mod:`xiangqi.online.schema`, ``online/migrations``, version table ``online_alembic_version``).
The online database is its own file or server, ``--db``, apart from the app's store and the games
database:

- ``online_games``: one row per game: the seats (``*_kind`` ``user``/``guest``/``engine``, ``*_id``,
  ``*_name``, ``*_user_id`` for accounts), time control, category, rated, ``status`` (``playing``,
  ``finished``, ``aborted``), the result, the clock's record at the last change, the rating change
  and ``db_id`` (the copy in the games database, for review).
- ``online_moves``: the move log, one row per ply (``game_id``, ``ply`` from 0, ``iccs``,
  ``played_at``). It is the source of truth: a game is rebuilt by replaying it through the core
  (:meth:`OnlineStore.playing_games`), never from a cached position.
- ``ratings``: a player's Glicko-2 rating per time-control category; ``rating_history``: one row per
  rated game and player (the profile's chart).
- ``rating_flags``: the rated games between two accounts that came from one address (rating
  farming: :meth:`OnlineStore.flagged_pairs`).
- ``online_meta``: the server's shared secret (signs guest cookies and CSRF tokens; shared by every
  process on one database).

Every method is one short transaction; errors of the database propagate.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from xiangqi.app.play.store import StorageError
from xiangqi.online.accounts import _aware, metadata, users
from xiangqi.online.schema import upgrade
from xiangqi.study.rating import Rating

log = logging.getLogger(__name__)

__all__ = ["OnlineStore", "metadata", "WalCheckpointer", "online_games", "online_moves", "ratings",
           "rating_history", "online_meta", "online_lobby", "rating_flags", "SAME_ADDRESS_GAMES",
           "SAME_ADDRESS_DAYS", "DatabaseUnavailable", "is_outage", "RETRY_AFTER_S"]

#: Seconds a client is told to wait (``Retry-After``) when the online database does not answer: about
#: what a restarted PostgreSQL needs to accept connections again; the pool's pre-ping
#: (:class:`~xiangqi.online.rooms.OnlineService`) then hands out a fresh connection at once.
RETRY_AFTER_S = 5
#: SQLite's result code for a full disk or database (https://sqlite.org/rescode.html#full): a 507
#: (nothing written), not an outage.
_SQLITE_FULL = 13


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the online database cannot be reached or used for now (the server goes
    on answering, with 503 and ``Retry-After``, and comes back by itself): SQLAlchemy's
    ``OperationalError`` (PostgreSQL down or restarting, a connection refused, reset or timed out; a
    SQLite file locked or unopenable) and ``InterfaceError``, any DBAPI error that invalidated its
    connection, the pool's ``TimeoutError`` (no connection to be had), and psycopg's own
    ``OperationalError`` raised outside SQLAlchemy. A full SQLite disk is not an outage (507)."""
    if isinstance(exc, DatabaseUnavailable | sa.exc.TimeoutError):
        return True
    if isinstance(exc, sa.exc.DBAPIError):
        if getattr(exc.orig, "sqlite_errorcode", None) == _SQLITE_FULL:
            return False
        return exc.connection_invalidated or isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError)
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the PostgreSQL driver is a dependency
        return False
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


class DatabaseUnavailable(StorageError):
    """The online database does not answer (:func:`is_outage`): nothing was changed, the request
    may be sent again in :attr:`retry_after` seconds. HTTP 503 with ``Retry-After``; on a game
    socket an ``error`` message with code ``db_unavailable`` (the socket stays open)."""

    status = 503
    kind = "database"
    code = "db_unavailable"

    def __init__(self, what: str = "", retry_after: int = RETRY_AFTER_S) -> None:
        self.retry_after = retry_after
        lead = f"{what}: " if what else ""
        super().__init__(f"{lead}the database is unreachable; nothing was changed, try again in "
                         f"{retry_after} s")


#: Rated games between one pair of accounts from one address within SAME_ADDRESS_DAYS days that
#: flag the pair to the operator (DESIGN.md "Security": rating farming). Three: a household or a
#: club on one address plays a few rated games together; a farm needs many.
SAME_ADDRESS_GAMES = 3
SAME_ADDRESS_DAYS = 30

online_games = sa.Table(
    "online_games", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    *(c for side in ("red", "black") for c in (
        sa.Column(f"{side}_kind", sa.String(8), nullable=False),
        sa.Column(f"{side}_id", sa.String(48), nullable=False),
        sa.Column(f"{side}_name", sa.String(80), nullable=False),
        sa.Column(f"{side}_user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"),
                  nullable=True, index=True))),
    sa.Column("time_control", sa.String(16), nullable=False),
    sa.Column("category", sa.String(16), nullable=False),
    sa.Column("rated", sa.Boolean, nullable=False),
    sa.Column("start_fen", sa.String(120), nullable=False),
    sa.Column("status", sa.String(12), nullable=False, index=True),
    sa.Column("result", sa.String(8), nullable=True),
    sa.Column("termination", sa.String(24), nullable=True),
    sa.Column("reason_zh", sa.String(80), nullable=True),
    sa.Column("reason_en", sa.String(120), nullable=True),
    sa.Column("clock", sa.Text, nullable=True),
    sa.Column("rating_change", sa.Text, nullable=True),
    sa.Column("db_id", sa.Integer, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    # several processes (shared mode): one more for every stored change of the game (the version check
    # of :meth:`OnlineStore.save_checked`), and the standing draw / takeback offers
    sa.Column("revision", sa.Integer, nullable=False, server_default="0"),
    sa.Column("offers", sa.Text, nullable=True),
    # the rating claim (:meth:`OnlineStore.rate_once`): set in the transaction that rates the game
    sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True),
    # the export claim (:meth:`OnlineStore.claim_export`): set by the process that puts the finished
    # game into its games database
    sa.Column("exported_at", sa.DateTime(timezone=True), nullable=True),
    # a rated game whose two players came from one address (their seek or challenge made and
    # accepted from it): that address, else NULL (:data:`rating_flags`)
    sa.Column("same_address", sa.String(64), nullable=True),
)

online_moves = sa.Table(
    "online_moves", metadata,
    sa.Column("game_id", sa.String(40), sa.ForeignKey("online_games.id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("ply", sa.Integer, primary_key=True),
    sa.Column("iccs", sa.String(6), nullable=False),
    sa.Column("played_at", sa.DateTime(timezone=True), nullable=False),
)

ratings = sa.Table(
    "ratings", metadata,
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("category", sa.String(16), primary_key=True),
    sa.Column("rating", sa.Float, nullable=False),
    sa.Column("rd", sa.Float, nullable=False),
    sa.Column("volatility", sa.Float, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_ratings_category_rating", "category", "rating"),
)

rating_history = sa.Table(
    "rating_history", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False,
              index=True),
    sa.Column("category", sa.String(16), nullable=False),
    sa.Column("game_id", sa.String(40), nullable=False),
    sa.Column("rating", sa.Float, nullable=False),
    sa.Column("rd", sa.Float, nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
)

online_lobby = sa.Table(
    "online_lobby", metadata,
    # the open seeks and challenge links of a shared lobby (several processes); ``kind`` seek/challenge
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("kind", sa.String(10), nullable=False),
    sa.Column("item", sa.Text, nullable=False),
    sa.Column("proc", sa.String(40), nullable=False, index=True),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
)

rating_flags = sa.Table(
    "rating_flags", metadata,
    # one row per rated game between two accounts from one address (written when it is rated,
    # :meth:`OnlineStore.rate_once`); a pair with SAME_ADDRESS_GAMES of them in SAME_ADDRESS_DAYS is
    # flagged to the operator (:meth:`OnlineStore.flagged_pairs`, ``xiangqi online-flags``)
    sa.Column("game_id", sa.String(40), sa.ForeignKey("online_games.id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("user_lo", sa.Integer, nullable=False),
    sa.Column("user_hi", sa.Integer, nullable=False),
    sa.Column("address", sa.String(64), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_rating_flags_pair", "user_lo", "user_hi", "at"),
)

online_meta = sa.Table(
    "online_meta", metadata,
    sa.Column("key", sa.String(40), primary_key=True),
    sa.Column("value", sa.String(200), nullable=False),
)


_INSERT_GAME = online_games.insert()
_INSERT_MOVE = online_moves.insert()
_DELETE_PLIES = online_moves.delete().where(online_moves.c.game_id == sa.bindparam("gid"),
                                            online_moves.c.ply >= sa.bindparam("k"))
#: The same saves as plain SQL for SQLite's DBAPI connection (:meth:`OnlineStore._save_sqlite`).
_SQL_DELETE_PLIES = "DELETE FROM online_moves WHERE game_id = ? AND ply >= ?"
_SQL_INSERT_MOVE = "INSERT INTO online_moves (game_id, ply, iccs, played_at) VALUES (?, ?, ?, ?)"
_SQL_UPDATE_CLOCK = "UPDATE online_games SET clock = ? WHERE id = ?"


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def iso(t: _dt.datetime | None) -> str | None:
    """``2026-12-01T15:00:00Z`` (UTC, whole seconds) or None."""
    return None if t is None else _aware(t).astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")



def common_prefix(saved: Sequence[Any], moves: Sequence[Any]) -> int:
    """How many first plies ``saved`` and ``moves`` share: the stored ones a save keeps, the move
    entries an update leaves out (:func:`xiangqi.online.rooms.state_update`). When ``saved`` is
    a prefix of ``moves`` of the same kind (a move) one slice comparison decides, at C speed."""
    k = len(saved)
    if k <= len(moves) and moves[:k] == saved:  # a move or a change without one: C speed
        return k
    k = 0
    while k < len(saved) and k < len(moves) and saved[k] == moves[k]:
        k += 1
    return k


def _write_plies(c: sa.Connection, game_id: str, saved: list[str], moves: list[str], k: int,
                 now: _dt.datetime) -> None:
    """Bring ``game_id``'s stored plies from ``saved`` to ``moves`` in ``c``'s transaction: the
    plies from ``k`` (the common prefix's length) deleted, those of ``moves`` from ``k`` inserted."""
    if k < len(saved):
        c.execute(_DELETE_PLIES, {"gid": game_id, "k": k})
    if k < len(moves):
        rows = [{"game_id": game_id, "ply": i, "iccs": moves[i], "played_at": now}
                for i in range(k, len(moves))]
        c.execute(_INSERT_MOVE, rows[0] if len(rows) == 1 else rows)

class OnlineStore:
    """The online tables on ``engine`` (brought to the current schema by Alembic when behind,
    :func:`xiangqi.online.schema.upgrade`)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._conn: sa.Connection | None = None
        self._updates: dict[tuple[str, ...], sa.Update] = {}
        #: SQLite (the embedded mode): the saves run plain SQL on the DBAPI connection
        #: (:meth:`_save_sqlite`); the datetime column's value as SQLAlchemy would bind it.
        self._sqlite = engine.dialect.name == "sqlite"
        #: PostgreSQL with psycopg 3 (the shared mode): :meth:`save_checked` runs plain SQL on the
        #: DBAPI connection (:meth:`_save_checked_pg`); its UPDATE statements by set of columns.
        self._psycopg = engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg"
        self._pg_updates: dict[tuple[str, ...], str] = {}
        self._pg_with_move: dict[tuple[str, ...], str] = {}
        self._checkpointer: WalCheckpointer | None = None
        self._datetime_bind = (online_moves.c.played_at.type.dialect_impl(engine.dialect)
                               .bind_processor(engine.dialect)) or (lambda v: v)
        upgrade(engine)

    # -- the shared secret ---------------------------------------------------------------

    def secret(self) -> str:
        """The server's secret (64 hex digits), made once and shared by every process on this database."""
        with self.engine.begin() as c:
            got = c.execute(sa.select(online_meta.c.value).where(online_meta.c.key == "secret")).scalar()
            if got is not None:
                return str(got)
            value = secrets.token_hex(32)
            try:
                c.execute(online_meta.insert().values(key="secret", value=value))
            except sa.exc.IntegrityError:  # pragma: no cover - another process made it first
                pass
        with self.engine.connect() as c:
            q = sa.select(online_meta.c.value).where(online_meta.c.key == "secret")
            return str(c.execute(q).scalar())

    # -- games ---------------------------------------------------------------------------------

    def create_game(self, row: dict[str, Any]) -> None:
        """Insert a new game row (``status`` ``playing``; see the table for the keys)."""
        with self.engine.begin() as c:  # (the statement without .values(): no new statement per game)
            c.execute(_INSERT_GAME, {**row, "status": "playing", "created_at": _now()})

    def save_moves(self, game_id: str, saved: list[str], moves: list[str],
                   clock: dict[str, Any] | None, *, conn: sa.Connection | None = None,
                   values: dict[str, Any] | None = None) -> int:
        """Bring the move log of ``game_id`` from ``saved`` (what is stored) to ``moves`` in one
        transaction: plies after the common prefix are deleted (a takeback) and the new ones
        inserted; the clock's record is stored with them (and ``values``, more columns of the game's
        row). ``conn``: write in that open transaction (the caller's) instead of a new
        one. Returns the common prefix's length. The
        primary key (game, ply) refuses a second row for one ply (IntegrityError). When this
        returns, the transaction is committed (on SQLite in WAL mode with ``synchronous=NORMAL``:
        in the WAL file, so it survives a crash of the server process).

        The hot path of every move (DESIGN.md "Load"): on SQLite (the embedded mode) the three
        statements are plain SQL run on the DBAPI connection kept for these saves (:meth:`_writer`),
        about 0.05 ms of CPU; SQLAlchemy's execution of the same statements cost 0.2 ms. Elsewhere
        the statements are built once (:meth:`_game_update`) and run on one kept SQLAlchemy
        connection. A database error is raised as SQLAlchemy's (``sa.exc.IntegrityError`` …) in
        both cases. The embedded mode calls it from the event loop only (the kept connection is not
        shared across threads); the shared mode stores through :meth:`save_checked` instead."""
        k = common_prefix(saved, moves)
        now = _now()
        if conn is None and not values and self._sqlite:
            self._save_sqlite(game_id, saved, moves, k, now, None if clock is None else json.dumps(clock))
            return k
        row = {"clock": None if clock is None else json.dumps(clock), **(values or {})}
        params = {f"v_{key}": value for key, value in row.items()}
        params["gid"] = game_id
        if conn is not None:
            self._write_moves(conn, game_id, saved, moves, k, now, row, params)
            return k
        c = self._writer()
        try:
            with c.begin():
                self._write_moves(c, game_id, saved, moves, k, now, row, params)
        except sa.exc.SQLAlchemyError:
            self._drop_writer()  # a broken connection is not reused; the next save opens another
            raise
        return k

    def _save_sqlite(self, game_id: str, saved: list[str], moves: list[str], k: int, now: _dt.datetime,
                     clock: str | None) -> None:
        """:meth:`save_moves` on SQLite: the DBAPI connection, one transaction (sqlite3 begins it
        before the first write), committed before this returns; rolled back and the connection
        dropped on any error."""
        c = self._writer()
        sql, params = "", None
        try:
            cur = c.cursor()
            try:
                if k < len(saved):
                    sql, params = _SQL_DELETE_PLIES, (game_id, k)
                    cur.execute(sql, params)
                if k < len(moves):
                    at = self._datetime_bind(now)
                    sql = _SQL_INSERT_MOVE
                    params = [(game_id, i, moves[i], at) for i in range(k, len(moves))]
                    cur.executemany(sql, params)
                sql, params = _SQL_UPDATE_CLOCK, (clock, game_id)
                cur.execute(sql, params)
            finally:
                cur.close()
            sql, params = "COMMIT", None
            c.commit()
        except Exception as exc:
            with contextlib.suppress(Exception):
                c.rollback()
            self._drop_writer()  # a broken connection is not reused; the next save opens another
            if isinstance(exc, sqlite3.Error):
                raise sa.exc.DBAPIError.instance(sql, params, exc, sqlite3.Error) from exc
            raise

    def _write_moves(self, c: sa.Connection, game_id: str, saved: list[str], moves: list[str], k: int,
                     now: _dt.datetime, row: dict[str, Any], params: dict[str, Any]) -> None:
        _write_plies(c, game_id, saved, moves, k, now)
        c.execute(self._game_update(tuple(row)), params)

    def _game_update(self, keys: tuple[str, ...]) -> sa.Update:
        """``UPDATE online_games SET <keys> WHERE id = :gid``, built once per set of columns (bound
        parameters ``gid`` and ``v_<column>``)."""
        stmt = self._updates.get(keys)
        if stmt is None:
            stmt = (online_games.update().where(online_games.c.id == sa.bindparam("gid"))
                    .values({key: sa.bindparam(f"v_{key}") for key in keys}))
            self._updates[keys] = stmt
        return stmt

    def _writer(self) -> Any:
        """The connection the saves of :meth:`save_moves` use (opened on first use): on SQLite the
        pool's DBAPI connection (with the engine's pragmas), else a SQLAlchemy connection."""
        if self._sqlite:
            if self._conn is None:
                self._conn = self.engine.raw_connection()
            return self._conn
        if self._conn is None or self._conn.closed or self._conn.invalidated:
            self._conn = self.engine.connect()
        return self._conn

    def _drop_writer(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.invalidate()
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def start_checkpoints(self, interval_s: float = 1.0) -> bool:
        """SQLite file databases: copy the WAL into the database file from a thread of its own every
        ``interval_s`` seconds (:class:`WalCheckpointer`) instead of in the commit that fills 1,000
        pages of WAL. The owner sets ``PRAGMA wal_autocheckpoint=0`` on the engine's connections
        (:class:`~xiangqi.online.rooms.OnlineService` does). False (nothing started) for
        another database or an in-memory one."""
        path = self.engine.url.database if self._sqlite else None
        if not path or path == ":memory:" or self._checkpointer is not None:
            return False
        self._checkpointer = WalCheckpointer(path, interval_s)
        self._checkpointer.start()
        return True

    def close(self) -> None:
        """Close the connection of the saves and stop the checkpoints (the engine's pool is the
        owner's to dispose of)."""
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    # -- several processes: the version check, the shared lobby ------------------------------------

    def revision(self, game_id: str) -> int | None:
        """The stored revision of ``game_id`` (None for an unknown game)."""
        with self.engine.connect() as c:
            got = c.execute(sa.select(online_games.c.revision).where(online_games.c.id == game_id)).scalar()
        return None if got is None else int(got)

    def save_checked(self, game_id: str, expected: int, saved: list[str], moves: list[str],
                     clock: dict[str, Any] | None, values: dict[str, Any]) -> int | None:
        """Shared mode: store a change of ``game_id`` made on a copy at revision ``expected``, in one
        transaction whose first statement is the version check: ``UPDATE online_games SET revision
        = expected + 1, clock = …, <values> WHERE id = … AND revision = expected`` (one round trip:
        it checks, locks the row until the commit and writes the row). When it matches no row
        (another process changed the game since ``expected``, or the game is unknown) nothing is
        written and None is returned (the caller re-reads the game). Otherwise the move log is
        brought from ``saved`` to ``moves`` (plies after the common prefix deleted, new ones
        inserted; the primary key (game, ply) refuses a second row for one ply) and the common
        prefix's length is returned. Runs in a worker thread (:meth:`OnlineService.run_db`); raises
        SQLAlchemy's errors."""
        k = common_prefix(saved, moves)
        row = {"clock": None if clock is None else json.dumps(clock), **values}
        now = _now()
        if self._psycopg and k == len(saved) and len(moves) - k <= 1:  # a move, or a change without one
            return self._save_checked_pg(game_id, expected, moves, k, now, row)
        params = {f"v_{key}": value for key, value in row.items()}
        params.update(gid=game_id, expected=expected, v_revision=expected + 1)
        with self.engine.connect() as c:
            with c.begin():
                got = c.execute(self._checked_update(tuple(row)), params)
                if got.rowcount != 1:
                    c.rollback()  # (nothing was written: the row did not match)
                    return None
                _write_plies(c, game_id, saved, moves, k, now)
        return k

    def _save_checked_pg(self, game_id: str, expected: int, moves: list[str], k: int,
                         now: _dt.datetime, row: dict[str, Any]) -> int | None:
        """:meth:`save_checked` on PostgreSQL with psycopg 3: plain SQL on the pooled connection's
        DBAPI connection (psycopg prepares a statement run more than five times on a connection).
        A move (one new ply, nothing taken back) or a change without a move is one statement in
        autocommit, one round trip instead of three: ``WITH g AS (UPDATE online_games SET … WHERE
        id = … AND revision = … RETURNING id) INSERT INTO online_moves … SELECT … FROM g`` (the
        ply is inserted only when the version check matched; a statement is atomic, the (game, ply)
        key still refuses a second row); ``moves`` has at most one ply after the ``k`` saved ones (a
        takeback runs :meth:`save_checked`'s general transaction). (DESIGN.md "Load", the shared
        mode: 0.42 ms of the client's CPU a save through SQLAlchemy's execution and three round
        trips.) An error rolls back, drops the connection from the pool and is
        raised as SQLAlchemy's (``sa.exc.IntegrityError`` …), as on the other path."""
        keys = tuple(row)
        sql = self._pg_updates.get(keys)
        if sql is None:
            sets = ", ".join(f"{key} = %s" for key in ("revision", *keys))
            sql = f"UPDATE online_games SET {sets} WHERE id = %s AND revision = %s"
            self._pg_updates[keys] = sql
        stmt, params = sql, [expected + 1, *row.values(), game_id, expected]
        import psycopg

        try:
            fairy = self.engine.raw_connection()
        except psycopg.Error as exc:  # (the pool raises the driver's own error: no server, a refusal)
            raise sa.exc.DBAPIError.instance(stmt, params, exc, psycopg.Error,
                                             connection_invalidated=True) from exc
        try:
            conn = fairy.dbapi_connection
            if k < len(moves):
                stmt = self._pg_with_move.get(keys)
                if stmt is None:
                    stmt = (f"WITH g AS ({sql} RETURNING id) INSERT INTO online_moves "
                            "(game_id, ply, iccs, played_at) SELECT id, %s, %s, %s FROM g")
                    self._pg_with_move[keys] = stmt
                params += [k, moves[k], now]
            conn.autocommit = True  # one round trip: the statement is its own transaction
            try:
                with conn.cursor() as cur:
                    cur.execute(stmt, params)
                    return k if cur.rowcount == 1 else None
            finally:
                conn.autocommit = False
        except Exception as exc:
            with contextlib.suppress(Exception):
                fairy.dbapi_connection.rollback()
            fairy.invalidate()  # a broken connection is not given back to the pool
            if isinstance(exc, psycopg.Error):
                raise sa.exc.DBAPIError.instance(stmt, params, exc, psycopg.Error) from exc
            raise
        finally:
            fairy.close()  # back to the pool (a no-op after invalidate)

    def _checked_update(self, keys: tuple[str, ...]) -> sa.Update:
        """``UPDATE online_games SET revision = :v_revision, <keys> WHERE id = :gid AND revision =
        :expected``, built once per set of columns."""
        ck = ("<checked>", *keys)
        stmt = self._updates.get(ck)
        if stmt is None:
            g = online_games.c
            stmt = (online_games.update()
                    .where(g.id == sa.bindparam("gid"), g.revision == sa.bindparam("expected"))
                    .values({key: sa.bindparam(f"v_{key}") for key in ("revision", *keys)}))
            self._updates[ck] = stmt
        return stmt

    def lobby_items(self) -> list[tuple[str, dict[str, Any], str]]:
        """Every open seek and challenge of the shared lobby: ``[(kind, item, proc)]`` (expired
        challenges are deleted first)."""
        with self.engine.begin() as c:
            c.execute(online_lobby.delete().where(online_lobby.c.expires_at.is_not(None),
                                                  online_lobby.c.expires_at < _now()))
            rows = c.execute(sa.select(online_lobby)).all()
        return [(r.kind, json.loads(r.item), r.proc) for r in rows]

    def add_lobby_item(self, item_id: str, kind: str, item: dict[str, Any], proc: str,
                       expires_at: _dt.datetime | None = None) -> None:
        """Store an open seek or challenge (``item``: its JSON form)."""
        with self.engine.begin() as c:
            c.execute(online_lobby.insert().values(id=item_id, kind=kind, item=json.dumps(item), proc=proc,
                                                   expires_at=expires_at))

    def take_lobby_item(self, item_id: str) -> bool:
        """Delete an open seek or challenge; True for the one caller that deleted it (accepting it
        twice, from two processes at once, starts one game)."""
        with self.engine.begin() as c:
            return c.execute(online_lobby.delete().where(online_lobby.c.id == item_id)).rowcount == 1

    def drop_lobby_items_of(self, proc: str, kind: str = "seek") -> list[str]:
        """Delete the ``kind`` items a process held (it is gone); their ids."""
        with self.engine.begin() as c:
            q = online_lobby.c
            ids = [r.id for r in c.execute(sa.select(q.id).where(q.proc == proc, q.kind == kind))]
            if ids:
                c.execute(online_lobby.delete().where(q.id.in_(ids)))
        return ids

    def moves(self, game_id: str) -> list[str]:
        """The move log of ``game_id`` in order (ICCS)."""
        with self.engine.connect() as c:
            q = (sa.select(online_moves.c.iccs).where(online_moves.c.game_id == game_id)
                 .order_by(online_moves.c.ply))
            return [r.iccs for r in c.execute(q)]

    def finish(self, game_id: str, *, status: str, result: str | None, termination: str | None,
               reason_zh: str | None, reason_en: str | None) -> None:
        """Mark the game ``finished`` or ``aborted`` with its result."""
        with self.engine.begin() as c:
            c.execute(online_games.update().where(online_games.c.id == game_id).values(
                status=status, result=result, termination=termination, reason_zh=reason_zh,
                reason_en=reason_en, finished_at=_now()))

    def set_review(self, game_id: str, *, db_id: int | None = None,
                   rating_change: dict[str, Any] | None = None) -> None:
        """Store the games-database id and/or the rating change of a finished game."""
        values: dict[str, Any] = {}
        if db_id is not None:
            values["db_id"] = db_id
        if rating_change is not None:
            values["rating_change"] = json.dumps(rating_change)
        if values:
            with self.engine.begin() as c:
                c.execute(online_games.update().where(online_games.c.id == game_id).values(**values))

    def game(self, game_id: str) -> dict[str, Any] | None:
        """The row of ``game_id`` as a dict (``clock``/``rating_change`` decoded), or None."""
        with self.engine.connect() as c:
            r = c.execute(sa.select(online_games).where(online_games.c.id == game_id)).mappings().first()
        return None if r is None else _decode(r)

    def playing_games(self) -> list[tuple[dict[str, Any], list[str]]]:
        """Every game still ``playing``, with its move log (for a restart to take them up again)."""
        with self.engine.connect() as c:
            rows = [_decode(r) for r in c.execute(sa.select(online_games)
                                                   .where(online_games.c.status == "playing")).mappings()]
        return [(r, self.moves(r["id"])) for r in rows]

    def playing_rows(self, limit: int = 500) -> list[dict[str, Any]]:
        """The games being played (every process's, shared mode's lobby), newest first, with ``plies``."""
        g = online_games.c
        plies = (sa.select(sa.func.count()).where(online_moves.c.game_id == g.id).scalar_subquery())
        with self.engine.connect() as c:
            rows = c.execute(sa.select(online_games, plies.label("plies")).where(g.status == "playing")
                             .order_by(g.created_at.desc()).limit(limit)).mappings().all()
        return [_decode(r) for r in rows]

    def playing_of(self, identity_id: str) -> list[str]:
        """The ids of the games ``identity_id`` (``u-7``, ``g-…``) plays now."""
        g = online_games.c
        with self.engine.connect() as c:
            return [r.id for r in c.execute(sa.select(g.id).where(
                g.status == "playing", sa.or_(g.red_id == identity_id, g.black_id == identity_id)))]

    def games_of(self, user_id: int, limit: int = 50) -> list[dict[str, Any]]:
        """The user's games, newest first (rows as dicts, with ``plies``)."""
        g = online_games.c
        plies = (sa.select(sa.func.count()).where(online_moves.c.game_id == g.id).scalar_subquery())
        with self.engine.connect() as c:
            rows = c.execute(sa.select(online_games, plies.label("plies"))
                             .where(sa.or_(g.red_user_id == user_id, g.black_user_id == user_id))
                             .order_by(g.created_at.desc()).limit(limit)).mappings().all()
        return [_decode(r) for r in rows]

    # -- ratings ----------------------------------------------------------------------------------

    def rating(self, user_id: int, category: str) -> tuple[Rating, int]:
        """The user's rating in ``category`` and its game count (a new player's when none)."""
        with self.engine.connect() as c:
            r = c.execute(sa.select(ratings).where(ratings.c.user_id == user_id,
                                                   ratings.c.category == category)).first()
        return (Rating(), 0) if r is None else (Rating(r.rating, r.rd, r.volatility), r.games)

    def ratings_of(self, user_id: int) -> list[dict[str, Any]]:
        """Every category the user has a rating in: ``[{category, rating, rd, volatility, games}]``."""
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(sa.select(ratings).where(ratings.c.user_id == user_id)
                                               .order_by(ratings.c.category)).mappings()]

    def apply_ratings(self, game_id: str, category: str, new: Iterable[tuple[int, Rating]]) -> None:
        """Write each ``(user_id, new rating)`` of a rated game and its history row, in one transaction."""
        now = _now()
        with self.engine.begin() as c:
            for uid, r in new:
                got = c.execute(sa.select(ratings.c.games).where(ratings.c.user_id == uid,
                                                                 ratings.c.category == category)).first()
                values = {"rating": r.rating, "rd": r.rd, "volatility": r.volatility, "updated_at": now}
                if got is None:
                    c.execute(ratings.insert().values(user_id=uid, category=category, games=1, **values))
                else:
                    c.execute(ratings.update().where(ratings.c.user_id == uid, ratings.c.category == category)
                              .values(games=got.games + 1, **values))
                c.execute(rating_history.insert().values(user_id=uid, category=category, game_id=game_id,
                                                         rating=r.rating, rd=r.rd, at=now))

    def rate_once(self, game_id: str, rate: Any) -> dict[str, Any] | None:
        """Rate a finished rated game exactly once, however many processes try (the one that ended
        it, the sweeps of the others): one transaction claims it — ``UPDATE online_games SET
        rated_at = now WHERE id = … AND status = 'finished' AND rated_at IS NULL`` (the row's lock
        makes every other claim wait for the commit and then match nothing) — reads both players'
        ratings with ``FOR UPDATE`` (in user-id order: two games of one player rated at once do not
        lose an update nor deadlock), calls ``rate(red, black)`` with ``(Rating, user_id)`` pairs
        (returns ``(new_red, new_black, rating_change)``), writes the ratings, their history rows and
        ``rating_change`` (and one more ``revision``: a copy of the room that did not see this re-reads
        the game before its next change), and commits. Returns that rating change, or None when the
        game was not there to claim (already rated, not finished, unknown). A crash before the
        commit leaves the game unclaimed (the next sweep rates it). Raises SQLAlchemy's errors."""
        g = online_games.c
        now = _now()
        with self.engine.begin() as c:
            got = c.execute(online_games.update()
                            .where(g.id == game_id, g.status == "finished", g.rated_at.is_(None))
                            .values(rated_at=now, revision=g.revision + 1))
            if got.rowcount != 1:
                return None
            row = c.execute(sa.select(g.category, g.red_user_id, g.black_user_id, g.same_address)
                            .where(g.id == game_id)).one()
            uids = (row.red_user_id, row.black_user_id)
            have: dict[int, Any] = {}
            rc = ratings.c
            q = (sa.select(ratings).where(rc.user_id.in_(sorted(uids)), rc.category == row.category)
                 .order_by(rc.user_id).with_for_update())
            for r in c.execute(q):
                have[r.user_id] = r
            old = [Rating() if u not in have else Rating(have[u].rating, have[u].rd, have[u].volatility)
                   for u in uids]
            new_red, new_black, change = rate(old[0], old[1])
            for uid, r in zip(uids, (new_red, new_black), strict=True):
                values = {"rating": r.rating, "rd": r.rd, "volatility": r.volatility, "updated_at": now}
                if uid not in have:
                    c.execute(ratings.insert().values(user_id=uid, category=row.category, games=1,
                                                      **values))
                else:
                    c.execute(ratings.update().where(rc.user_id == uid, rc.category == row.category)
                              .values(games=have[uid].games + 1, **values))
                c.execute(rating_history.insert().values(user_id=uid, category=row.category,
                                                         game_id=game_id, rating=r.rating, rd=r.rd, at=now))
            c.execute(online_games.update().where(g.id == game_id).values(rating_change=json.dumps(change)))
            if row.same_address is not None:
                self._flag(c, game_id, uids, row.same_address, now)
        return change

    @staticmethod
    def _flag(c: sa.Connection, game_id: str, uids: tuple[int, int], address: str, now: _dt.datetime) -> None:
        """Record a rated game of two accounts from one ``address`` (in :meth:`rate_once`'s
        transaction); warn the operator when the pair reaches :data:`SAME_ADDRESS_GAMES`."""
        lo, hi = sorted(uids)
        c.execute(rating_flags.insert().values(game_id=game_id, user_lo=lo, user_hi=hi, address=address,
                                               at=now))
        f = rating_flags.c
        n = c.execute(sa.select(sa.func.count()).where(
            f.user_lo == lo, f.user_hi == hi,
            f.at >= now - _dt.timedelta(days=SAME_ADDRESS_DAYS))).scalar_one()
        if n >= SAME_ADDRESS_GAMES:
            log.warning("online: accounts %d and %d have played %d rated games from one address (%s) in "
                        "%d days (game %s): listed by `xiangqi online-flags`", lo, hi, n, address,
                        SAME_ADDRESS_DAYS, game_id)

    def flagged_pairs(self, min_games: int = SAME_ADDRESS_GAMES, days: float = SAME_ADDRESS_DAYS,
                      now: _dt.datetime | None = None) -> list[dict[str, Any]]:
        """The pairs of accounts with at least ``min_games`` rated games against each other from one
        address within the last ``days`` days, most games first: ``[{user_lo, user_hi, names
        (lo, hi), games, addresses (sorted), first, last (UTC datetimes), game_ids (oldest first)}]``."""
        f = rating_flags.c
        cut = (now or _now()) - _dt.timedelta(days=days)
        with self.engine.connect() as c:
            rows = c.execute(sa.select(rating_flags).where(f.at >= cut).order_by(f.at, f.game_id)).all()
            names = dict(c.execute(sa.select(users.c.id, users.c.username)).all())
        pairs: dict[tuple[int, int], dict[str, Any]] = {}
        for r in rows:
            p = pairs.setdefault((r.user_lo, r.user_hi), {
                "user_lo": r.user_lo, "user_hi": r.user_hi,
                "names": (names.get(r.user_lo), names.get(r.user_hi)), "games": 0, "addresses": set(),
                "first": _aware(r.at), "last": _aware(r.at), "game_ids": []})
            p["games"] += 1
            p["addresses"].add(r.address)
            p["last"] = _aware(r.at)
            p["game_ids"].append(r.game_id)
        out = [dict(p, addresses=sorted(p["addresses"])) for p in pairs.values() if p["games"] >= min_games]
        return sorted(out, key=lambda p: (-p["games"], p["user_lo"], p["user_hi"]))

    def unsettled(self, older_than_s: float, limit: int = 100) -> list[str]:
        """The sweep's work: ids of rated games between two accounts that are ``finished`` but not
        rated (``rated_at`` unset) and ended more than ``older_than_s`` seconds ago (the process that
        ends a game rates it at once; these are the ones whose process died first)."""
        g = online_games.c
        cut = _now() - _dt.timedelta(seconds=older_than_s)
        with self.engine.connect() as c:
            return [r.id for r in c.execute(
                sa.select(g.id).where(g.status == "finished", g.rated.is_(True), g.rated_at.is_(None),
                                      g.result.is_not(None), g.red_user_id.is_not(None),
                                      g.black_user_id.is_not(None),
                                      sa.or_(g.finished_at.is_(None), g.finished_at < cut))
                .order_by(g.finished_at).limit(limit))]

    def claim_export(self, game_id: str, stale_before: _dt.datetime | None = None) -> bool:
        """Claim the export of a finished game into the games database, exactly once at a time however
        many processes try (the one that ended it, the sweeps of the others): ``UPDATE online_games
        SET exported_at = now WHERE id = … AND status = 'finished' AND db_id IS NULL AND (exported_at
        IS NULL OR exported_at < stale_before)`` in one transaction (the row's lock makes every other
        claim wait for the commit and then match nothing), as :meth:`rate_once` claims the rating.
        True for the one caller that won; it then exports the game and stores its id
        (:meth:`exported`), or gives the claim back (:meth:`release_export`) when the export failed.

        The claim is a lease: the games database is another database, so the claim and the write
        cannot be one transaction, and a process that dies between them leaves the game claimed and
        not written; a claim older than ``stale_before`` (the sweep: now less
        :attr:`~xiangqi.online.rooms.OnlineConfig.export_lease_s`; None: never) is taken over.
        Writing a game twice is harmless (the games database keeps one row per source,
        ``online:<id>``, and updates it in place), so a slow exporter that outlives its lease costs
        a second write, not a second game. Raises SQLAlchemy's errors."""
        g = online_games.c
        free = g.exported_at.is_(None)
        if stale_before is not None:
            free = sa.or_(free, g.exported_at < stale_before)
        with self.engine.begin() as c:
            got = c.execute(online_games.update()
                            .where(g.id == game_id, g.status == "finished", g.db_id.is_(None), free)
                            .values(exported_at=_now()))
            return got.rowcount == 1

    def release_export(self, game_id: str) -> None:
        """Give back an export claim (the export failed: a later sweep tries again)."""
        g = online_games.c
        with self.engine.begin() as c:
            c.execute(online_games.update().where(g.id == game_id, g.db_id.is_(None))
                      .values(exported_at=None))

    def exported(self, game_id: str, db_id: int) -> int | None:
        """Store the games-database id of an exported game, with one more ``revision`` (a copy of the
        room in another process re-reads it before its next change); the new revision, or None for an
        unknown game."""
        g = online_games.c
        with self.engine.begin() as c:
            return c.execute(online_games.update().where(g.id == game_id)
                             .values(db_id=db_id, revision=g.revision + 1)
                             .returning(g.revision)).scalar()

    def unexported(self, older_than_s: float, limit: int = 100,
                   stale_before: _dt.datetime | None = None) -> list[str]:
        """The sweep's other work: ids of games ``finished`` with at least one move and no ``db_id``,
        whose export nobody claimed (``exported_at`` unset) and that ended more than ``older_than_s``
        seconds ago (the process that ends a game exports it at once; these are the ones whose process
        died first), or whose claim is older than ``stale_before`` (its process died between the claim
        and the write: :meth:`claim_export`)."""
        g = online_games.c
        cut = _now() - _dt.timedelta(seconds=older_than_s)
        has_moves = sa.exists().where(online_moves.c.game_id == g.id)
        unclaimed = sa.and_(g.exported_at.is_(None), sa.or_(g.finished_at.is_(None), g.finished_at < cut))
        if stale_before is not None:
            unclaimed = sa.or_(unclaimed, g.exported_at < stale_before)
        with self.engine.connect() as c:
            return [r.id for r in c.execute(
                sa.select(g.id).where(g.status == "finished", g.db_id.is_(None), has_moves, unclaimed)
                .order_by(g.finished_at).limit(limit))]

    def history(self, user_id: int) -> dict[str, list[dict[str, Any]]]:
        """``{category: [{at, rating, rd, game_id}]}`` oldest first (the profile's chart)."""
        out: dict[str, list[dict[str, Any]]] = {}
        h = rating_history.c
        with self.engine.connect() as c:
            for r in c.execute(sa.select(rating_history).where(h.user_id == user_id).order_by(h.id)):
                out.setdefault(r.category, []).append({"at": iso(r.at), "rating": round(r.rating),
                                                       "rd": round(r.rd), "game_id": r.game_id})
        return out

    def leaderboard(self, category: str, limit: int, provisional_rd: float) -> list[dict[str, Any]]:
        """The best ``limit`` players of ``category``: established ones (RD at most ``provisional_rd``)
        by rating, then provisional ones by rating. Rows ``{user_id, username, rating, rd, games}``."""
        r = ratings.c
        provisional = sa.case((r.rd > provisional_rd, 1), else_=0)
        q = (sa.select(r.user_id, users.c.username, r.rating, r.rd, r.volatility, r.games)
             .join(users, users.c.id == r.user_id).where(r.category == category)
             .order_by(provisional, r.rating.desc(), r.user_id).limit(limit))
        with self.engine.connect() as c:
            return [dict(x) for x in c.execute(q).mappings()]


class WalCheckpointer:
    """Checkpoints of a SQLite database in WAL mode, off the server's event loop.

    With ``synchronous=NORMAL`` a commit only appends to the WAL file (no fsync); the fsyncs come
    with the checkpoint that copies the WAL into the database file, which SQLite by default runs
    inside the commit that brings the WAL to 1,000 pages: a stall of 10-25 ms on this machine's
    disk about every 300 moves, on the event loop, in front of every move waiting (DESIGN.md
    "Load"). This thread runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own connection every
    ``interval_s`` seconds instead (PASSIVE: it never waits for, nor blocks, a reader or a writer;
    sqlite3 releases the GIL while it works). Durability is unchanged: a committed move is in the
    WAL either way, and SQLite replays the WAL when a connection opens after a crash."""

    def __init__(self, path: str, interval_s: float = 1.0) -> None:
        self.path = path
        self.interval_s = interval_s
        self.checkpoints = 0  # checkpoints run so far
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def checkpoint(self, conn: sqlite3.Connection | None = None) -> tuple[int, int, int]:
        """One passive checkpoint: SQLite's ``(busy, WAL frames, frames checkpointed)``."""
        own = conn is None
        c = conn or self._connect()
        try:
            busy, frames, done = c.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        finally:
            if own:
                c.close()
        self.checkpoints += 1
        return int(busy), int(frames), int(done)

    def _connect(self) -> sqlite3.Connection:
        # read-write, never create: a database file that went away is not made again
        uri = Path(self.path).resolve().as_uri() + "?mode=rw"
        return sqlite3.connect(uri, uri=True, timeout=0, check_same_thread=False)

    def start(self) -> None:
        """Start the thread (a daemon: it never holds the process up)."""
        self._thread = threading.Thread(target=self._run, name="xiangqi-wal-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        conn = None
        failing = False
        try:
            while not self._stop.wait(self.interval_s):
                try:
                    if conn is None:
                        conn = self._connect()
                    self.checkpoint(conn)
                    failing = False
                except sqlite3.Error as exc:  # the file went away or is locked: tried again next time
                    if not failing:
                        log.warning("a checkpoint of %s failed: %s", self.path, exc)
                    failing = True
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            conn.close()
                        conn = None
        finally:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    def stop(self) -> None:
        """Stop the thread and wait for it (at most one checkpoint's time)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None


def _decode(r: Any) -> dict[str, Any]:
    d = dict(r)
    for k in ("clock", "rating_change", "offers"):
        if d.get(k):
            d[k] = json.loads(d[k])
    return d
