"""SQLite store: the current game (autosaved after every move), the library of games, settings.

SQLAlchemy Core over one SQLite file, ``xiangqi.db``, in the user data dir
(:func:`xiangqi.datadir.default_data_dir`: ``$XIANGQI_DATA_DIR`` when that
environment variable is set (tests use it), else the platform's user data dir).
Every write is one transaction, so killing the process loses at most the move being written (DESIGN.md §5).

Storage faults (DESIGN.md §5) never lose data silently and never surface as a traceback:

- every SQLite failure becomes a :class:`StorageError` (:class:`StorageFullError` when the disk
  is full, :class:`StorageReadOnlyError` for a read-only file) that says what happened;
- a damaged database file is moved aside at start-up (renamed with a timestamp, never deleted,
  its ``-wal``/``-shm`` files too) and a fresh one is started with every row SQLite can still read
  out of it (:mod:`xiangqi.app.play.salvage`: table by table, row by row; the notice and the log say how
  many library games came back); a damaged current game is moved into the ``damaged_games`` table;
  :attr:`Store.notices` tells the page about both;
- a read-only database is opened read-only: games can be viewed and exported, every write
  raises :class:`StorageReadOnlyError` (the user's games stay where they are);
- one :class:`Store` at a time per data dir: an OS lock on ``xiangqi.lock`` (released when the
  store closes or the process dies), a second one raises :class:`StoreLockedError`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from xiangqi.app.play.session import GameSession, SessionError
from xiangqi.core.errors import XiangqiError
from xiangqi.datadir import default_data_dir

log = logging.getLogger(__name__)

DB_NAME = "xiangqi.db"
LOCK_NAME = "xiangqi.lock"

metadata = sa.MetaData()

#: The game in progress: one row per slot (slot ``current``), the session record as JSON.
current_game = sa.Table(
    "current_game", metadata,
    sa.Column("slot", sa.String(32), primary_key=True),
    sa.Column("game_id", sa.String(64), nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("updated", sa.String(32), nullable=False),
)

#: Finished, abandoned (result ``*``) or saved games: PGN text plus searchable columns.
#: ``played_at`` is the local date and time of the last write (ISO, seconds).
games = sa.Table(
    "games", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("game_id", sa.String(64), nullable=False, unique=True),
    sa.Column("title", sa.String(200), nullable=False, default=""),
    sa.Column("notes", sa.Text, nullable=False, default=""),
    sa.Column("date", sa.String(32), nullable=False),
    sa.Column("red", sa.String(100), nullable=False),
    sa.Column("black", sa.String(100), nullable=False),
    sa.Column("level", sa.String(32), nullable=False),
    sa.Column("result", sa.String(16), nullable=False),
    sa.Column("reason_zh", sa.String(200), nullable=False, default=""),
    sa.Column("reason_en", sa.String(200), nullable=False, default=""),
    sa.Column("plies", sa.Integer, nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("pgn", sa.Text, nullable=False),
    sa.Column("played_at", sa.String(32), nullable=False, default=""),
)

#: Current games whose record could not be replayed, kept aside instead of being overwritten.
damaged_games = sa.Table(
    "damaged_games", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("slot", sa.String(32), nullable=False),
    sa.Column("game_id", sa.String(64), nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("error", sa.Text, nullable=False),
    sa.Column("kept_at", sa.String(32), nullable=False),
)

#: Settings (theme, language, sound …) as JSON values.
settings = sa.Table(
    "settings", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

#: The player's Glicko-2 rating (:mod:`xiangqi.study.rating`): one row, ``player`` = ``"player"``.
#: ``games`` counts the rated games behind it. Absent until the first rated game.
player_rating = sa.Table(
    "player_rating", metadata,
    sa.Column("player", sa.String(32), primary_key=True),
    sa.Column("rating", sa.Float, nullable=False),
    sa.Column("rd", sa.Float, nullable=False),
    sa.Column("volatility", sa.Float, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("updated", sa.String(32), nullable=False),
)

#: One row per rated game (at most one per ``game_id``): when (local ISO time), the opponent (level
#: key, its Elo and RD), the player's score (1, 0.5, 0) and the rating before and after the game.
rating_history = sa.Table(
    "rating_history", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("game_id", sa.String(64), nullable=False, unique=True),
    sa.Column("date", sa.String(32), nullable=False),
    sa.Column("level", sa.String(32), nullable=False),
    sa.Column("opponent_elo", sa.Float, nullable=False),
    sa.Column("opponent_rd", sa.Float, nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("rating_before", sa.Float, nullable=False),
    sa.Column("rd_before", sa.Float, nullable=False),
    sa.Column("volatility_before", sa.Float, nullable=False),
    sa.Column("rating", sa.Float, nullable=False),
    sa.Column("rd", sa.Float, nullable=False),
    sa.Column("volatility", sa.Float, nullable=False),
)

#: Columns added after the first release, created on an older file: name -> SQL type and default.
_ADDED_COLUMNS = {"games": {"played_at": "VARCHAR(32) NOT NULL DEFAULT ''"}}

UNFINISHED_ZH = "对局未完成"
UNFINISHED_EN = "game not finished"


class StorageError(XiangqiError):
    """The database could not be read or written. ``status`` is the HTTP status the server answers
    with (503: try again later), ``kind`` a word the page can act on (``io``, ``full``, ``read_only``,
    ``damaged``, ``locked``)."""

    status = 503
    kind = "io"


class StorageFullError(StorageError):
    """The disk (or the database's size limit) is full: nothing was written."""

    status = 507
    kind = "full"


class StorageReadOnlyError(StorageError):
    """The database file or its directory is read-only: nothing can be written."""

    kind = "read_only"


class DamagedGameError(StorageError):
    """A library game whose record cannot be replayed (the row is kept; it can be deleted)."""

    status = 409
    kind = "damaged"


class StoreLockedError(StorageError):
    """Another store (another server) holds the data dir's lock."""

    kind = "locked"


class _DamagedDatabase(Exception):
    """Raised inside :meth:`Store._open` for a file SQLite cannot read as a database."""


# SQLite primary result codes (https://sqlite.org/rescode.html).
_SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = (
    8, 10, 11, 13, 14, 26)


def _sqlite_code(exc: BaseException) -> int | None:
    """The primary SQLite result code of ``exc`` (a sqlite3 or SQLAlchemy error), or None."""
    orig = getattr(exc, "orig", exc)
    code = getattr(orig, "sqlite_errorcode", None)
    if code is None:  # errors raised before SQLite answered carry only their message
        text = str(orig).lower()
        for words, c in (("disk is full", _SQLITE_FULL), ("readonly", _SQLITE_READONLY),
                         ("malformed", _SQLITE_CORRUPT), ("not a database", _SQLITE_NOTADB)):
            if words in text:
                return c
        return None
    return int(code) & 0xFF


_ICCS = re.compile(r"[a-i][0-9][a-i][0-9]")

#: The replay checks of records of other games than xiangqi (a record with a ``variant`` field):
#: variant name -> a function of the record (dict) that says why it does not replay, or None. The
#: module of each such game registers its check (:func:`register_record_check`; the 揭棋 game,
#: :mod:`xiangqi.app.play.jieqi_game`, does on import), so that the store, below those games, needs to
#: know none of them. A record of a variant with no check is taken as it is (not damaged).
RECORD_CHECKS: dict[str, Callable[[dict[str, Any]], str | None]] = {}


def register_record_check(variant: str, check: Callable[[dict[str, Any]], str | None]) -> None:
    """Make ``check`` the replay check of stored records whose ``variant`` field is ``variant``
    (:data:`RECORD_CHECKS`); a second registration of the same variant replaces the first."""
    RECORD_CHECKS[variant] = check


def _record_shape_problem(record: Any) -> str | None:
    """Why ``record`` (the stored text) is not a session record's JSON, or None: a quick check of
    its shape that does not replay the moves."""
    if not isinstance(record, str):
        return f"the record is {type(record).__name__}, not text"
    try:
        rec = json.loads(record)
    except ValueError as exc:
        return f"the record is not JSON ({exc})"
    if not isinstance(rec, dict):
        return "the record is not a JSON object"
    variant = rec.get("variant")
    if variant:  # another game (揭棋 …): the check its module registered, or none known
        check = RECORD_CHECKS.get(variant) if isinstance(variant, str) else None
        return None if check is None else check(rec)
    for key in ("id", "start_fen", "red", "black", "level"):
        if not isinstance(rec.get(key), str):
            return f"the record's field {key!r} is missing or not text"
    moves = rec.get("moves")
    if not isinstance(moves, list) or not all(isinstance(m, str) and _ICCS.fullmatch(m) for m in moves):
        return "the record's moves are not a list of ICCS moves"
    return None


def _now() -> str:
    return _dt.datetime.now().isoformat(timespec="seconds")


def _lock_data_dir(data_dir: Path) -> int | None:
    """Take the data dir's exclusive lock (``xiangqi.lock``); returns its file descriptor, None
    when the dir is read-only (then no server can write there either).

    The OS releases the lock when the descriptor is closed or the process dies (even by kill -9).
    Raises :class:`StoreLockedError` when another process or store holds it.
    """
    path = data_dir / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - Windows
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        try:
            other = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            other = ""
        os.close(fd)
        who = f" (pid {other})" if other.isdigit() else ""
        raise StoreLockedError(
            f"another xiangqi server{who} is using the data dir {data_dir}; stop it first, "
            "or start this one with another --data-dir") from None
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd


ABANDONED_MAX_PLIES = 1
"""A saved game with at most this many plies (half-moves), no result and nothing the player wrote
is an abandoned start: one ply is a single move of Red's, never answered (docs/DESIGN.md, 我的对局)."""


def is_abandoned(row: dict[str, Any]) -> bool:
    """True when a library row (``{result, plies, title, notes, damaged}`` as :meth:`Store.list_games`
    gives it) is an abandoned start the 我的对局 list hides by default: result ``*`` (unfinished), at most
    :data:`ABANDONED_MAX_PLIES` plies, no title or notes of the player's and not damaged. A game with
    two plies or more, with a result, or that the player named or annotated is never abandoned; no row
    is deleted by this rule, it only decides what the list shows unasked."""
    return (row.get("result") == "*" and int(row.get("plies") or 0) <= ABANDONED_MAX_PLIES
            and not (row.get("title") or "").strip() and not (row.get("notes") or "").strip()
            and not row.get("damaged"))


class Store:
    """The app's database. ``data_dir`` defaults to :func:`default_data_dir`; it is created if missing.

    Opening never fails for a damaged or read-only file (see the module doc); :attr:`notices`
    lists what the user must be told (``[{"kind", "message", "path"}]``, ``path`` the file kept
    aside or None) and :attr:`read_only` is True when nothing can be written.

    Raises :class:`OSError` when the directory cannot be created, :class:`StoreLockedError` when
    another store holds the data dir, :class:`StorageError` when there is no database and none
    can be created (a read-only directory).
    """

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.data_dir / DB_NAME
        self.notices: list[dict[str, Any]] = []
        self.read_only = False
        self._checked: dict[int, tuple[str, str | None]] = {}  # library row -> (record digest, problem)
        #: Called with no argument after every committed change of the library (a game kept, updated,
        #: renamed or deleted): the games database's copy of the user's games follows it
        #: (:mod:`xiangqi.app.library.database`). A listener must return at once; its errors are logged, never
        #: raised, so indexing can never lose or block a save.
        self.library_listeners: list[Any] = []
        self._lock_fd = _lock_data_dir(self.data_dir)
        try:
            self.engine = self._open()
        except BaseException:
            self._unlock()
            raise

    # -- opening -------------------------------------------------------------

    def _open(self) -> sa.Engine:
        """Open (or create) the database; a damaged file is moved aside and a fresh one started."""
        try:
            self._check_file()
            return self._connect(read_only=False)
        except _DamagedDatabase as exc:
            kept = self._move_aside()
            try:
                engine = self._connect(read_only=False)
            except _DamagedDatabase as again:  # pragma: no cover - a fresh file SQLite cannot read
                raise StorageError(f"cannot start a fresh database at {self.path}: {again}") from None
            recovered = self._salvage(kept, engine)
            n, current = recovered["games"], recovered["current_game"]
            message = (f"the database {self.path} was damaged ({exc}); it was kept as {kept} and a fresh "
                       f"one was started; {n} saved game{'' if n == 1 else 's'} came back from it"
                       + (", with the current game" if current else ""))
            log.warning("%s (settings: %d, rating history: %d)", message, recovered["settings"],
                        recovered["rating_history"])
            self.notices.append({"kind": "damaged_db", "path": str(kept), "message": message,
                                 "recovered": recovered})
            return engine
        except StorageReadOnlyError:
            return self._open_read_only()
        except StorageError as exc:
            if isinstance(exc, StorageFullError) or self._disk_nearly_full():  # room for the -shm index
                raise StorageFullError(
                    f"the disk holding {self.data_dir} is full: the database cannot be opened; free "
                    "some space and start again") from None
            raise

    def _open_read_only(self) -> sa.Engine:
        """Open an existing database that cannot be written; say so in :attr:`notices`."""
        if not self.path.exists():
            raise StorageReadOnlyError(
                f"cannot create the database in {self.data_dir}: it is read-only; make it writable "
                "or choose another with --data-dir")
        self.read_only = True
        try:
            engine = self._connect(read_only=True)
        except StorageError:  # a WAL file without its -shm in a read-only dir: read it as is
            engine = self._connect(read_only=True, immutable=True)
        self.notices.append({
            "kind": "read_only", "path": str(self.path),
            "message": f"the database {self.path} is read-only: games can be viewed but not played "
                       "or saved; make it writable (or use another --data-dir) and restart"})
        return engine

    def _connect(self, *, read_only: bool, immutable: bool = False) -> sa.Engine:
        """An engine on :attr:`path` whose errors all become :class:`StorageError`; creates missing
        tables and columns and proves that the file can be written (a full disk is no reason not to
        start: saves then fail with :class:`StorageFullError` until there is space again).
        Raises :class:`_DamagedDatabase` for a file that is not a database and
        :class:`StorageReadOnlyError` for one that cannot be written."""
        url = f"sqlite:///{self.path}"
        if read_only:
            url = f"sqlite:///file:{self.path}?mode=ro{'&immutable=1' if immutable else ''}&uri=true"
        engine = sa.create_engine(url, future=True)

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):  # noqa: ANN001 - DB-API objects
            cur = dbapi_conn.cursor()
            if not read_only:
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=FULL")  # a committed move survives a power cut
            cur.close()

        @sa.event.listens_for(engine, "handle_error")
        def _storage_error(ctx):  # noqa: ANN001 - SQLAlchemy's ExceptionContext
            raise self._storage_error(ctx.original_exception) from ctx.original_exception

        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").fetchall()
            if not read_only:
                metadata.create_all(engine)
                self._add_columns(engine)
                with contextlib.suppress(StorageFullError), engine.begin() as conn:
                    # a write that changes nothing: fails when the file is read-only
                    conn.exec_driver_sql("DELETE FROM current_game WHERE slot IS NULL")
                    conn.exec_driver_sql("PRAGMA user_version = 0")
        except StorageError as exc:
            engine.dispose()
            if _sqlite_code(exc.__cause__ or exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
                raise _DamagedDatabase(str(exc.__cause__ or exc)) from None
            if _sqlite_code(exc.__cause__ or exc) == _SQLITE_CANTOPEN:
                raise StorageReadOnlyError(str(exc)) from None
            raise
        except _DamagedDatabase:
            engine.dispose()
            raise
        return engine

    def _check_file(self) -> None:
        """Raise :class:`_DamagedDatabase` when the existing file fails SQLite's ``quick_check``.

        The check reads through a read-only connection, which never checkpoints or deletes the
        ``-wal`` file: a damaged file is moved aside exactly as it was found."""
        if not self.path.exists():
            return
        extra = [Path(f"{self.path}{x}") for x in ("-wal", "-shm") if not Path(f"{self.path}{x}").exists()]
        try:
            con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        except sqlite3.Error:
            return  # cannot be opened read-only (no -shm in a read-only dir): _connect decides
        try:
            rows = con.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            if _sqlite_code(exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
                raise _DamagedDatabase(str(exc)) from None
            return
        finally:
            con.close()
            for p in extra:  # an empty -wal and the -shm index this check created, not the user's
                with contextlib.suppress(OSError):
                    if p.name.endswith("-shm") or p.stat().st_size == 0:
                        p.unlink()
        if rows != [("ok",)]:
            raise _DamagedDatabase("; ".join(str(r[0]) for r in rows[:3]))

    def _salvage(self, kept: Path, engine: sa.Engine) -> dict[str, Any]:
        """Copy what SQLite can still read of the damaged file ``kept`` into the fresh database
        (:func:`xiangqi.app.play.salvage.salvage_tables`: table by table, row by row); the counts of the
        notice: ``{"games", "current_game" (bool), "settings", "rating_history", "unreadable"}``
        (``unreadable``: rowid ranges of the library that could not be read). A failure to write
        the rows (a full disk) is logged and salvages nothing: the damaged file is still kept."""
        from xiangqi.app.play.salvage import salvage_tables

        tables = {t.name: [c.name for c in t.columns] for t in metadata.sorted_tables}
        out: dict[str, Any] = {"games": 0, "current_game": False, "settings": 0, "rating_history": 0,
                               "unreadable": []}
        raw = engine.raw_connection()
        try:
            got = salvage_tables(kept, raw.dbapi_connection, tables)
        except (sqlite3.Error, sa.exc.SQLAlchemyError, StorageError) as exc:
            log.warning("nothing could be copied out of the damaged database %s: %s", kept, exc)
            return out
        finally:
            raw.close()
        out.update(games=got["games"].kept, current_game=got["current_game"].kept > 0,
                   settings=got["settings"].kept, rating_history=got["rating_history"].kept,
                   unreadable=[list(r) for r in got["games"].unreadable])
        return out

    def _add_columns(self, engine: sa.Engine) -> None:
        """Add the columns of :data:`_ADDED_COLUMNS` that an older file lacks."""
        with engine.begin() as conn:
            for table, cols in _ADDED_COLUMNS.items():
                have = {r[1] for r in conn.exec_driver_sql(f"PRAGMA table_info({table})")}
                for name, decl in cols.items():
                    if name not in have:
                        conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    def _move_aside(self) -> Path:
        """Rename the database (and its ``-wal``/``-shm`` files) to ``xiangqi.db.damaged-<time>``;
        returns the new path of the database file."""
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        kept = self.path.with_name(f"{DB_NAME}.damaged-{stamp}")
        n = 1
        while kept.exists():
            n += 1
            kept = self.path.with_name(f"{DB_NAME}.damaged-{stamp}-{n}")
        for suffix in ("-wal", "-shm", ""):  # the main file last: a crash in between keeps it in place
            src = Path(f"{self.path}{suffix}")
            if src.exists():
                os.replace(src, f"{kept}{suffix}")
        return kept

    def _storage_error(self, exc: BaseException) -> StorageError:
        """The :class:`StorageError` that explains the SQLite error ``exc`` to a user."""
        code = _sqlite_code(exc)
        orig = getattr(exc, "orig", exc)
        if code == _SQLITE_IOERR and self._disk_nearly_full():  # e.g. the -shm index cannot grow
            code = _SQLITE_FULL
        if code == _SQLITE_FULL:
            return StorageFullError(f"the disk is full: nothing could be written to {self.path}; "
                                    "free some space and try again")
        if code == _SQLITE_READONLY or (self.read_only and code == _SQLITE_CANTOPEN):
            return StorageReadOnlyError(f"the database {self.path} is read-only: nothing can be saved")
        if code == _SQLITE_IOERR:
            return StorageError(f"disk I/O error on {self.path} ({orig}); nothing was written")
        if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return StorageError(f"the database {self.path} is damaged ({orig}); restart the server "
                                "to keep it aside and start a fresh one")
        return StorageError(f"database error on {self.path}: {orig}")

    def _disk_nearly_full(self) -> bool:
        """Less than 1 MiB is free on the data dir's file system."""
        try:
            return shutil.disk_usage(self.data_dir).free < 1 << 20
        except OSError:
            return False

    def _unlock(self) -> None:
        fd, self._lock_fd = getattr(self, "_lock_fd", None), None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the descriptor releases the lock

    def close(self) -> None:
        """Release the connection pool and the data dir's lock."""
        self.engine.dispose()
        self._unlock()

    # -- current game ----------------------------------------------------

    def save_current(self, session: GameSession, slot: str = "current") -> None:
        """Write ``session`` as the current game, in one transaction. Raises :class:`StorageError`
        (nothing written)."""
        with self.engine.begin() as conn:
            self._write_current(conn, session, slot)

    def _write_current(self, conn: sa.Connection, session: GameSession, slot: str) -> None:
        rec = json.dumps(session.to_record(), ensure_ascii=False)
        conn.execute(sa.delete(current_game).where(current_game.c.slot == slot))
        conn.execute(sa.insert(current_game).values(slot=slot, game_id=session.id, record=rec,
                                                    updated=_now()))

    def save_game(self, session: GameSession, language: str = "zh", *,
                  abandoned: GameSession | None = None, slot: str = "current") -> None:
        """The save step of every change, in one transaction: ``session`` becomes the current game
        and the library follows it. A finished ``session`` is kept in the library (or its row
        updated); an unfinished one that has a row (a resignation taken back) updates that row to
        unfinished (result ``*``); ``abandoned``, a game replaced by ``session``, is kept in the
        library as unfinished unless it has no moves. Player names are written in
        ``language``. Raises :class:`StorageError` (:class:`StorageFullError` …): nothing written.
        """
        library = False
        with self.engine.begin() as conn:
            self._write_current(conn, session, slot)
            if session.is_over:
                self._write_library(conn, session, language)
                library = True
            elif conn.execute(sa.select(games.c.id).where(games.c.game_id == session.id)).first():
                self._write_library(conn, session, language)
                library = True
            if abandoned is not None and abandoned is not session and abandoned.moves \
                    and not abandoned.is_over:  # a finished game is in the library already
                self._write_library(conn, abandoned, language)
                library = True
        if library:
            self._library_changed()

    def _library_changed(self) -> None:
        """Tell :attr:`library_listeners` (after the commit); a failing listener is logged only."""
        for listener in list(self.library_listeners):
            try:
                listener()
            except Exception:  # noqa: BLE001 - indexing must never fail a save
                log.exception("a library listener failed")

    def load_current(self, slot: str = "current") -> GameSession | None:
        """The saved current game, or None if there is none.

        A record that cannot be replayed is moved into ``damaged_games`` (never overwritten) and
        reported in :attr:`notices`; None is returned then."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(current_game).where(current_game.c.slot == slot)).first()
        if row is None:
            return None
        try:
            return GameSession.from_record(json.loads(row.record))
        except (ValueError, SessionError, KeyError, TypeError, AttributeError, IndexError) as exc:
            problem = f"{type(exc).__name__}: {exc}"[:500]
        message = f"the saved current game could not be replayed ({problem})"
        if self.read_only:
            self.notices.append({"kind": "damaged_game", "path": None, "message": message})
            return None
        with self.engine.begin() as conn:
            res = conn.execute(sa.insert(damaged_games).values(
                slot=slot, game_id=str(row.game_id), record=str(row.record), error=problem, kept_at=_now()))
            conn.execute(sa.delete(current_game).where(current_game.c.slot == slot))
        kept = int(res.inserted_primary_key[0])
        self.notices.append({"kind": "damaged_game", "path": f"{self.path}#damaged_games/{kept}",
                             "message": f"{message}; it was kept aside (table damaged_games, row {kept}) "
                                        "and a new game was started"})
        return None

    def save_record(self, slot: str, game_id: str, record: str,
                    library: Callable[[], dict[str, Any]], *, keep: bool) -> None:
        """The save step of a game the store knows only as text (揭棋, :mod:`xiangqi.app.play.jieqi_game`),
        in one transaction: ``record`` (JSON text) becomes the current game of ``slot`` and, when
        ``keep`` is True or ``game_id`` has a library row already, ``library()`` (the :data:`games`
        columns but ``id``, ``title`` and ``notes``) is written as its library row. Raises
        :class:`StorageError` (nothing written)."""
        written = False
        with self.engine.begin() as conn:
            conn.execute(sa.delete(current_game).where(current_game.c.slot == slot))
            conn.execute(sa.insert(current_game).values(slot=slot, game_id=game_id, record=record,
                                                        updated=_now()))
            row = conn.execute(sa.select(games.c.id).where(games.c.game_id == game_id)).first()
            if keep or row is not None:
                values = {**library(), "game_id": game_id, "record": record, "played_at": _now()}
                if row is not None:
                    conn.execute(sa.update(games).where(games.c.id == row.id).values(**values))
                else:
                    conn.execute(sa.insert(games).values(title="", notes="", **values))
                written = True
        if written:
            self._library_changed()

    def load_record(self, slot: str) -> str | None:
        """The current game of ``slot`` as the stored text (JSON), None when there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(current_game.c.record).where(current_game.c.slot == slot)).first()
        return None if row is None else str(row.record)

    def damaged_current_games(self) -> list[dict[str, Any]]:
        """Rows kept aside by :meth:`load_current`: ``{id, slot, game_id, record, error, kept_at}``."""
        with self.engine.connect() as conn:
            q = sa.select(damaged_games).order_by(damaged_games.c.id)
            return [dict(r._mapping) for r in conn.execute(q)]

    def clear_current(self, slot: str = "current") -> None:
        """Forget the current game."""
        with self.engine.begin() as conn:
            conn.execute(sa.delete(current_game).where(current_game.c.slot == slot))

    # -- library ---------------------------------------------------------

    def save_finished(self, session: GameSession, pgn: str, language: str = "zh") -> int:
        """Keep ``session`` (with its PGN text) in the library; returns the row id. Player names are
        stored in ``language`` (``zh``/``en``, as :meth:`GameSession.pgn_headers` writes them).

        Saving the same game again (same ``session.id``) updates its row. An unfinished game is kept
        with result ``*``.
        """
        with self.engine.begin() as conn:
            row_id = self._write_library(conn, session, language, pgn)
        self._library_changed()
        return row_id

    def _write_library(self, conn: sa.Connection, session: GameSession, language: str,
                       pgn: str | None = None) -> int:
        if pgn is None:
            try:
                pgn = session.to_pgn("chinese", language)
            except Exception:  # noqa: BLE001 - a PGN writer failing must not lose the game
                pgn = ""
        h = session.pgn_headers(language)
        out = session.outcome
        values = dict(
            game_id=session.id, date=h.get("Date", ""), red=h.get("Red", ""), black=h.get("Black", ""),
            level=session.level, result=out.result() if out else "*",
            reason_zh=out.reason_zh if out else UNFINISHED_ZH,
            reason_en=out.reason_en if out else UNFINISHED_EN,
            plies=len(session.moves), record=json.dumps(session.to_record(), ensure_ascii=False), pgn=pgn,
            played_at=_now(),
        )
        row = conn.execute(sa.select(games.c.id).where(games.c.game_id == session.id)).first()
        if row is not None:
            conn.execute(sa.update(games).where(games.c.id == row.id).values(**values))
            return int(row.id)
        values.update(title="", notes="")
        res = conn.execute(sa.insert(games).values(**values))
        return int(res.inserted_primary_key[0])

    def _damage(self, row_id: int, record: Any, *, replay: bool = True) -> str | None:
        """Why the library row's ``record`` cannot be replayed, or None. ``replay`` False checks
        only the record's shape (JSON object, fields, ICCS moves: fast enough for a list of
        thousands) unless a replay of the same text was cached."""
        text = record if isinstance(record, str) else repr(record)
        digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()
        hit = self._checked.get(row_id)
        if hit is not None and hit[0] == digest:
            return hit[1]
        problem = _record_shape_problem(record)
        if problem is None and not replay:
            return None
        rec = json.loads(record) if problem is None else None
        if rec is not None and "variant" not in rec:  # other games' records: checked above
            try:
                GameSession.from_record(rec)
            except (ValueError, SessionError, KeyError, TypeError, AttributeError, IndexError) as exc:
                problem = f"{type(exc).__name__}: {exc}"[:300]
        self._checked[row_id] = (digest, problem)
        return problem

    def list_games(self, search: str = "", result: str = "") -> list[dict[str, Any]]:
        """Library rows, newest first: ``{id, title, notes, date, time, played_at, red, black, level,
        result, reason_zh, reason_en, plies, damaged, abandoned}``. ``abandoned`` is
        :func:`is_abandoned` of the row (the 我的对局 list hides those rows unless asked).
        ``time`` is the local time of day (``HH:MM``)
        the game was last saved ("" for rows older than that column and when ``date`` is another day, e.g.
        an opened record's date), ``damaged`` True for a row
        whose record cannot be replayed (it cannot be opened; it can be deleted). ``search`` matches
        title, notes, players and reason; ``result`` filters by ``1-0``/``0-1``/``1/2-1/2``/``*``."""
        cols = [games.c.id, games.c.title, games.c.notes, games.c.date, games.c.played_at, games.c.red,
                games.c.black, games.c.level, games.c.result, games.c.reason_zh, games.c.reason_en,
                games.c.plies, games.c.record]
        q = sa.select(*cols).order_by(games.c.id.desc())
        if search:
            pat = f"%{search}%"
            q = q.where(sa.or_(games.c.title.like(pat), games.c.notes.like(pat), games.c.red.like(pat),
                               games.c.black.like(pat), games.c.reason_zh.like(pat),
                               games.c.reason_en.like(pat)))
        if result:
            q = q.where(games.c.result == result)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(q)]
        for d in rows:
            rec = d.pop("record")
            d["damaged"] = self._damage(d["id"], rec, replay=False) is not None
            d["variant"] = "jieqi" if '"variant": "jieqi"' in str(rec)[:40] else ""  # 揭棋 rows: replay only
            at = d.get("played_at") or ""
            # The time of day only beside the day it belongs to: a game played on from a record keeps
            # the record's date (1982.12.11), and "1982.12.11 10:04" would be a moment that never was.
            same_day = (d.get("date") or "").replace(".", "-") == at[:10]
            d["time"] = at[11:16] if len(at) >= 16 and same_day else ""
            d["abandoned"] = is_abandoned(d)
        return rows

    def recent_games(self, limit: int, *, level: str | None = None,
                     finished: bool = False) -> list[dict[str, Any]]:
        """The last ``limit`` library rows, newest first, as ``{game_id, level, result, record, pgn}``
        (``record`` the stored JSON text, not checked); ``level`` keeps the games of that level only,
        ``finished`` those with a result (not ``*``). What the rating (:mod:`xiangqi.app.play.ratings`) and
        the opponents' memory (:mod:`xiangqi.app.opponents.persona`) read of the player's games."""
        q = sa.select(games.c.game_id, games.c.level, games.c.result, games.c.record, games.c.pgn)
        if level is not None:
            q = q.where(games.c.level == level)
        if finished:
            q = q.where(games.c.result != "*")
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q.order_by(games.c.id.desc()).limit(limit))]

    def get_game(self, row_id: int) -> dict[str, Any] | None:
        """One library row with its ``record`` (dict) and ``pgn``, or None. Raises
        :class:`DamagedGameError` when the row's record cannot be replayed."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(games).where(games.c.id == row_id)).first()
        if row is None:
            return None
        d = dict(row._mapping)
        problem = self._damage(row_id, d["record"])
        if problem is not None:
            raise DamagedGameError(f"saved game {row_id} is damaged and cannot be opened ({problem}); "
                                   "it can only be deleted")
        d["record"] = json.loads(d["record"])
        return d

    def update_game(self, row_id: int, *, title: str | None = None, notes: str | None = None) -> bool:
        """Rename / annotate a library game; False if there is no such row."""
        values = {k: v for k, v in (("title", title), ("notes", notes)) if v is not None}
        with self.engine.begin() as conn:
            if not values:
                return conn.execute(sa.select(games.c.id).where(games.c.id == row_id)).first() is not None
            done = conn.execute(sa.update(games).where(games.c.id == row_id).values(**values)).rowcount > 0
        if done:
            self._library_changed()
        return done

    def delete_game(self, row_id: int) -> bool:
        """Delete a library game; False if there is no such row."""
        with self.engine.begin() as conn:
            done = conn.execute(sa.delete(games).where(games.c.id == row_id)).rowcount > 0
        if done:
            self._library_changed()
        return done

    # -- settings --------------------------------------------------------

    def get_settings(self) -> dict[str, Any]:
        """The stored settings as a dict of JSON values, valid ones only (:mod:`xiangqi.app.play.settings`):
        a stored value that is unreadable, unknown or not allowed is left out (and logged), so that
        reading the settings always works; the next change of that setting overwrites it."""
        from xiangqi.app.play.settings import clean_settings

        with self.engine.connect() as conn:
            rows = {r.key: r.value for r in conn.execute(sa.select(settings))}
        good, bad = clean_settings(rows)
        if bad:
            log.warning("ignoring bad stored settings: %s", ", ".join(repr(k[:64]) for k in bad))
        return good

    def set_settings(self, values: dict[str, Any]) -> dict[str, Any]:
        """Store ``values`` (merged into the existing settings) in one transaction; returns all settings.

        Raises :class:`xiangqi.app.play.settings.SettingsError` (nothing stored) for an unknown setting or
        a value it cannot take."""
        from xiangqi.app.play.settings import validate_settings

        validate_settings(values)
        with self.engine.begin() as conn:
            for k, v in values.items():
                conn.execute(sa.delete(settings).where(settings.c.key == k))
                conn.execute(sa.insert(settings).values(key=k, value=json.dumps(v, ensure_ascii=False)))
        return self.get_settings()

    # -- rating (Glicko-2, xiangqi.app.play.ratings) -----------------------------------

    def get_rating(self) -> dict[str, Any] | None:
        """The player's rating row ``{rating, rd, volatility, games, updated}``, None before the first
        rated game."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(player_rating).where(player_rating.c.player == "player")).first()
        return None if row is None else {k: v for k, v in row._mapping.items() if k != "player"}

    def rating_entry(self, game_id: str) -> dict[str, Any] | None:
        """The history row of ``game_id`` (all :data:`rating_history` columns), None when unrated."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(rating_history).where(rating_history.c.game_id == game_id)).first()
        return None if row is None else dict(row._mapping)

    def rating_history(self, limit: int = 500) -> list[dict[str, Any]]:
        """The last ``limit`` history rows, oldest first (all :data:`rating_history` columns)."""
        with self.engine.connect() as conn:
            q = sa.select(rating_history).order_by(rating_history.c.id.desc()).limit(limit)
            rows = [dict(r._mapping) for r in conn.execute(q)]
        return rows[::-1]

    def add_rating(self, entry: dict[str, Any]) -> bool:
        """Record one rated game (``entry``: the :data:`rating_history` columns but ``id``) and make its
        ``rating``/``rd``/``volatility`` the player's, in one transaction. A game already recorded is
        left as it is (False): each game counts once. Raises :class:`StorageError`."""
        with self.engine.begin() as conn:
            if conn.execute(sa.select(rating_history.c.id)
                            .where(rating_history.c.game_id == entry["game_id"])).first():
                return False
            conn.execute(sa.insert(rating_history).values(**entry))
            n = conn.execute(sa.select(sa.func.count()).select_from(rating_history)).scalar_one()
            conn.execute(sa.delete(player_rating).where(player_rating.c.player == "player"))
            conn.execute(sa.insert(player_rating).values(
                player="player", rating=entry["rating"], rd=entry["rd"], volatility=entry["volatility"],
                games=int(n), updated=_now()))
        return True

    def remove_rating(self, game_id: str) -> bool:
        """Take a rated game back out (its result was taken back): when it is the last rated game the
        player's rating returns to its ``*_before`` values and the row goes (True); an older game is
        left (False: later games were rated from it). Raises :class:`StorageError`."""
        with self.engine.begin() as conn:
            q = sa.select(rating_history).order_by(rating_history.c.id.desc()).limit(1)
            last = conn.execute(q).first()
            if last is None or last.game_id != game_id:
                return False
            conn.execute(sa.delete(rating_history).where(rating_history.c.id == last.id))
            n = conn.execute(sa.select(sa.func.count()).select_from(rating_history)).scalar_one()
            conn.execute(sa.delete(player_rating).where(player_rating.c.player == "player"))
            if n:
                conn.execute(sa.insert(player_rating).values(
                    player="player", rating=last.rating_before, rd=last.rd_before,
                    volatility=last.volatility_before, games=int(n), updated=_now()))
        return True
