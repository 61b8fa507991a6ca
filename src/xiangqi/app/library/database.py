"""The app's games database: where it is, opened lazily, and the user's library kept in it.

The games database (:mod:`xiangqi.db`) of the app is ``games.db`` beside the app's store in the data dir
(the same file ``xiangqi db import`` fills by default), or any SQLAlchemy URL given. It is opened on
first use, never at start-up, and only from worker threads (the schema upgrade and every query are
blocking calls).

The user's own games: every library game (``Store``'s ``games`` table) is copied into the games
database in the collection ``mine`` (:mod:`xiangqi.db.owned`), source ``library:<row id>``, so the
explorer and the database browser find them beside the master games. The hook is
:attr:`xiangqi.app.play.store.Store.library_listeners`: after each committed library change the store
calls :meth:`GamesDatabase.schedule`, which only sets an event; a background thread then brings the
collection in line with the library (:func:`xiangqi.db.owned.sync`: new and changed games written,
deleted ones removed). The same sync at start-up is the one-time backfill of games saved before the
database existed (and it repairs any change missed while indexing failed). Indexing never blocks or
undoes a save: the library is the master copy, a failure is logged and kept in :attr:`error`, and the
next change or start tries again.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa

log = logging.getLogger(__name__)

__all__ = ["GamesDatabase", "LIBRARY_SOURCE"]

#: ``source`` of a library game's copy: ``library:<row id>``.
LIBRARY_SOURCE = "library:"


class GamesDatabase:
    """The games database of one app: ``url`` (default ``sqlite:///<store data dir>/games.db``).

    :meth:`engine` connects (and upgrades the schema) on first call; :meth:`exists` tells whether
    there is anything to read without creating the file. :meth:`schedule` asks the background
    thread to sync the user's games; :meth:`sync_now` does it in the calling thread.
    """

    def __init__(self, store: Any, url: str | None = None, *, debounce_s: float = 0.2) -> None:
        self.store = store
        self.url = url or f"sqlite:///{Path(store.data_dir) / 'games.db'}"
        self.debounce_s = debounce_s
        self.error: str | None = None
        self.last_sync: dict[str, Any] | None = None
        self._engine: sa.Engine | None = None
        self._lock = threading.Lock()      # guards _engine
        self._sync_lock = threading.Lock()  # one sync at a time
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._busy = False  # a sync was taken from _wake and has not ended

    # -- the database ------------------------------------------------------------

    def _sqlite_path(self) -> Path | None:
        from sqlalchemy.engine import make_url

        u = make_url(self.url)
        if u.get_backend_name() == "sqlite" and u.database not in (None, "", ":memory:"):
            return Path(u.database)
        return None

    def exists(self) -> bool:
        """False when the database is an SQLite file that is not there yet (nothing to read)."""
        if self._engine is not None:
            return True
        path = self._sqlite_path()
        return path is None or path.exists()

    def engine(self) -> sa.Engine:
        """The SQLAlchemy engine, connected and upgraded on first call (blocking: call from a thread).
        Raises :class:`xiangqi.db.DatabaseError` when the database cannot be opened."""
        with self._lock:
            if self._engine is None:
                from xiangqi.db.database import connect

                self._engine = connect(self.url)
            return self._engine

    def close(self) -> None:
        """Stop the background thread and close the connections."""
        self._stop.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=10)
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    # -- the user's games ----------------------------------------------------------

    def _wanted(self) -> dict[str, str]:
        """``{source: token}`` of every library game; the token digests its record, title and notes."""
        from xiangqi.app.play.store import games as library

        with self.store.engine.connect() as conn:
            rows = conn.execute(sa.select(library.c.id, library.c.record, library.c.title,
                                          library.c.notes)).all()
        out = {}
        for row_id, record, title, notes in rows:
            if str(record).startswith('{"variant": "jieqi"'):  # 揭棋 (hidden pieces): not indexed
                continue
            digest = hashlib.sha1(f"{record}\0{title}\0{notes}".encode("utf-8", "replace")).hexdigest()
            out[f"{LIBRARY_SOURCE}{row_id}"] = digest
        return out

    def _load(self, source: str):
        """The library game of ``source`` as a :class:`xiangqi.core.pgn.Game` (its PGN; the title, when
        set, as its Event), or None when the row is gone."""
        from xiangqi.app.play.session import GameSession
        from xiangqi.core.pgn import read_game

        row_id = int(source[len(LIBRARY_SOURCE):])
        try:
            g = self.store.get_game(row_id)
        except Exception as exc:  # a damaged row: not indexed (it cannot be opened either)
            raise ValueError(f"library game {row_id} cannot be read: {exc}") from None
        if g is None:
            return None
        if isinstance(g["record"], dict) and g["record"].get("variant") == "jieqi":
            raise ValueError(f"library game {row_id} is a 揭棋 game (hidden pieces): not indexed")
        pgn = g.get("pgn") or GameSession.from_record(g["record"]).to_pgn("iccs", "zh")
        game = read_game(pgn)
        if game is None:
            raise ValueError(f"library game {row_id}: its PGN cannot be read")
        if g.get("title"):
            game.headers["Event"] = g["title"]
        if g.get("notes"):
            game.comment = (f"{g['notes']}\n{game.comment}" if game.comment else g["notes"])
        return game

    def sync_now(self):
        """Bring the ``mine`` collection in line with the library now; returns the
        :class:`xiangqi.db.owned.SyncReport`. Raises what the database raises."""
        from xiangqi.db.owned import sync

        with self._sync_lock:
            report = sync(self.engine(), self._wanted(), self._load, prefix=LIBRARY_SOURCE)
        for source, reason in report.failed:
            log.warning("library game %s not indexed: %s", source, reason)
        self.last_sync = {"added": report.added, "updated": report.updated, "removed": report.removed,
                          "failed": len(report.failed)}
        return report

    def schedule(self) -> None:
        """Ask for a sync soon, in the background (returns at once; the library listener)."""
        if self._stop.is_set():
            return
        self._wake.set()
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="xiangqi-gamesdb", daemon=True)
            self._thread.start()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no sync is asked for or running (tests); True when idle in time."""
        import time

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self._wake.is_set() and not self._busy:
                return True
            time.sleep(0.02)
        return False

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.is_set():
                return
            self._stop.wait(self.debounce_s)  # a burst of saves makes one sync
            self._busy = True
            self._wake.clear()
            try:
                self.sync_now()
                self.error = None
            except Exception as exc:  # noqa: BLE001 - the library keeps the game; the next sync retries
                self.error = f"{type(exc).__name__}: {exc}"
                log.warning("the user's games could not be indexed in the games database: %s", self.error)
            finally:
                self._busy = False
