"""SQLite store: the current game (autosaved after every move), finished games, settings.

SQLAlchemy Core over one SQLite file, ``xiangqi.db``, in the user data dir
(:func:`platformdirs.user_data_dir`), or in ``$XIANGQI_DATA_DIR`` when that
environment variable is set (tests use it). Every write is one transaction,
so killing the process loses at most the move being written (DESIGN.md §5).
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from xiangqi.app.session import GameSession, SessionError

log = logging.getLogger(__name__)

DATA_DIR_ENV = "XIANGQI_DATA_DIR"
DB_NAME = "xiangqi.db"

metadata = sa.MetaData()

#: The game in progress: one row per slot (slot ``current``), the session record as JSON.
current_game = sa.Table(
    "current_game", metadata,
    sa.Column("slot", sa.String(32), primary_key=True),
    sa.Column("game_id", sa.String(64), nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("updated", sa.String(32), nullable=False),
)

#: Finished (or saved) games: PGN text plus searchable columns.
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
)

#: Settings (theme, language, sound …) as JSON values.
settings = sa.Table(
    "settings", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)


def default_data_dir() -> Path:
    """``$XIANGQI_DATA_DIR`` if set, else the platform's user data dir for ``pyxiangqi``."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("pyxiangqi", appauthor=False))


def _now() -> str:
    return _dt.datetime.now().isoformat(timespec="seconds")


class Store:
    """The app's database. ``data_dir`` defaults to :func:`default_data_dir`; it is created if missing.

    Raises :class:`OSError` when the directory cannot be created.
    """

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.data_dir / DB_NAME
        self.engine = sa.create_engine(f"sqlite:///{self.path}", future=True)

        @sa.event.listens_for(self.engine, "connect")
        def _pragmas(dbapi_conn, _record):  # noqa: ANN001 - DB-API objects
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")  # a committed move survives a power cut
            cur.close()

        metadata.create_all(self.engine)

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    # -- current game ----------------------------------------------------

    def save_current(self, session: GameSession, slot: str = "current") -> None:
        """Write ``session`` as the current game, in one transaction."""
        rec = json.dumps(session.to_record(), ensure_ascii=False)
        with self.engine.begin() as conn:
            conn.execute(sa.delete(current_game).where(current_game.c.slot == slot))
            conn.execute(sa.insert(current_game).values(slot=slot, game_id=session.id, record=rec,
                                                        updated=_now()))

    def load_current(self, slot: str = "current") -> GameSession | None:
        """The saved current game, or None if there is none or its record cannot be replayed."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(current_game.c.record).where(current_game.c.slot == slot)).first()
        if row is None:
            return None
        try:
            return GameSession.from_record(json.loads(row.record))
        except (ValueError, SessionError):
            return None

    def clear_current(self, slot: str = "current") -> None:
        """Forget the current game."""
        with self.engine.begin() as conn:
            conn.execute(sa.delete(current_game).where(current_game.c.slot == slot))

    # -- library ---------------------------------------------------------

    def save_finished(self, session: GameSession, pgn: str, language: str = "zh") -> int:
        """Keep ``session`` (with its PGN text) in the library; returns the row id. Player names are
        stored in ``language`` (``zh``/``en``, as :meth:`GameSession.pgn_headers` writes them).

        Saving the same game again (same ``session.id``) updates its row.
        """
        h = session.pgn_headers(language)
        out = session.outcome
        values = dict(
            game_id=session.id, date=h.get("Date", ""), red=h.get("Red", ""), black=h.get("Black", ""),
            level=session.level, result=out.result() if out else "*",
            reason_zh=out.reason_zh if out else "", reason_en=out.reason_en if out else "",
            plies=len(session.moves), record=json.dumps(session.to_record(), ensure_ascii=False), pgn=pgn,
        )
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(games.c.id).where(games.c.game_id == session.id)).first()
            if row is not None:
                conn.execute(sa.update(games).where(games.c.id == row.id).values(**values))
                return int(row.id)
            values.update(title="", notes="")
            res = conn.execute(sa.insert(games).values(**values))
            return int(res.inserted_primary_key[0])

    def list_games(self, search: str = "", result: str = "") -> list[dict[str, Any]]:
        """Library rows, newest first: ``{id, title, notes, date, red, black, level, result, reason_zh,
        reason_en, plies}``. ``search`` matches title, notes, players and reason; ``result`` filters
        by ``1-0``/``0-1``/``1/2-1/2``."""
        cols = [games.c.id, games.c.title, games.c.notes, games.c.date, games.c.red, games.c.black,
                games.c.level, games.c.result, games.c.reason_zh, games.c.reason_en, games.c.plies]
        q = sa.select(*cols).order_by(games.c.id.desc())
        if search:
            pat = f"%{search}%"
            q = q.where(sa.or_(games.c.title.like(pat), games.c.notes.like(pat), games.c.red.like(pat),
                               games.c.black.like(pat), games.c.reason_zh.like(pat),
                               games.c.reason_en.like(pat)))
        if result:
            q = q.where(games.c.result == result)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def get_game(self, row_id: int) -> dict[str, Any] | None:
        """One library row with its ``record`` (dict) and ``pgn``, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(games).where(games.c.id == row_id)).first()
        if row is None:
            return None
        d = dict(row._mapping)
        d["record"] = json.loads(d["record"])
        return d

    def update_game(self, row_id: int, *, title: str | None = None, notes: str | None = None) -> bool:
        """Rename / annotate a library game; False if there is no such row."""
        values = {k: v for k, v in (("title", title), ("notes", notes)) if v is not None}
        if not values:
            return self.get_game(row_id) is not None
        with self.engine.begin() as conn:
            return conn.execute(sa.update(games).where(games.c.id == row_id).values(**values)).rowcount > 0

    def delete_game(self, row_id: int) -> bool:
        """Delete a library game; False if there is no such row."""
        with self.engine.begin() as conn:
            return conn.execute(sa.delete(games).where(games.c.id == row_id)).rowcount > 0

    # -- settings --------------------------------------------------------

    def get_settings(self) -> dict[str, Any]:
        """The stored settings as a dict of JSON values, valid ones only (:mod:`xiangqi.app.settings`):
        a stored value that is unreadable, unknown or not allowed is left out (and logged), so that
        reading the settings always works; the next change of that setting overwrites it."""
        from xiangqi.app.settings import clean_settings

        with self.engine.connect() as conn:
            rows = {r.key: r.value for r in conn.execute(sa.select(settings))}
        good, bad = clean_settings(rows)
        if bad:
            log.warning("ignoring bad stored settings: %s", ", ".join(repr(k[:64]) for k in bad))
        return good

    def set_settings(self, values: dict[str, Any]) -> dict[str, Any]:
        """Store ``values`` (merged into the existing settings) in one transaction; returns all settings.

        Raises :class:`xiangqi.app.settings.SettingsError` (nothing stored) for an unknown setting or
        a value it cannot take."""
        from xiangqi.app.settings import validate_settings

        validate_settings(values)
        with self.engine.begin() as conn:
            for k, v in values.items():
                conn.execute(sa.delete(settings).where(settings.c.key == k))
                conn.execute(sa.insert(settings).values(key=k, value=json.dumps(v, ensure_ascii=False)))
        return self.get_settings()
