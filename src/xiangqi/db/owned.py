"""The user's own games in the games database: stored, updated and removed one game at a time.

The app keeps the user's games in its own library (:mod:`xiangqi.app.play.store`); a copy of each is kept
here in the collection :data:`~xiangqi.db.search.MINE`, so the explorer and every search see them
beside the master games. Each copy is known by its ``source`` (the app uses ``library:<row id>``)
and carries a ``token`` in the ``hash`` column instead of the content hash: a digest of the library
record that the app computes, so a library game that changed (more moves, a new result) is seen as
changed and its copy rewritten, and a user's game never merges with an identical master game.

:func:`put_game` writes one game (insert, or update in place: the row keeps its id, its old index
rows are deleted by their keys and the new ones inserted, so no parent row is deleted and no scan
of the whole index is needed); :func:`remove_game` deletes one; :func:`sync` brings a collection
to a wanted set of ``{source: token}`` and is what the app runs after every library change and
once at start (the backfill of games saved before the database existed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from sqlalchemy import Engine, and_, delete, insert, select, update

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import Game
from xiangqi.db.explore import changed as _explore_changed
from xiangqi.db.importer import _index_data, game_row
from xiangqi.db.keys import iter_game_keys, to_signed
from xiangqi.db.schema import boards, games, positions
from xiangqi.db.search import MINE

__all__ = ["SyncReport", "stored_tokens", "put_game", "remove_game", "sync"]


@dataclasses.dataclass(slots=True)
class SyncReport:
    """What :func:`sync` did: sources ``added``, ``updated``, ``removed`` and ``failed``
    (``[(source, reason)]``: a game that could not be loaded or stored; the others went on)."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    failed: list[tuple[str, str]] = dataclasses.field(default_factory=list)


def stored_tokens(engine: Engine, collection: str = MINE) -> dict[str, str]:
    """``{source: token}`` of the games stored in ``collection``."""
    with engine.connect() as conn:
        return dict(conn.execute(select(games.c.source, games.c.hash).where(games.c.collection == collection))
                    .all())


def _board_insert(engine: Engine):
    if engine.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as dialect_insert
    elif engine.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as dialect_insert
    else:  # pragma: no cover - the two supported backends
        return None
    return dialect_insert(boards).on_conflict_do_nothing()


def _old_keys(fen: str | None, moves: str) -> list[int]:
    board = Board(fen) if fen else Board()
    pairs = [(m.from_square, m.to_square) for m in (Move.from_iccs(t) for t in moves.split())]
    return sorted({to_signed(k) for k, _sq in iter_game_keys(board.squares, board.turn, pairs)})


def _find(conn, source: str, collection: str):
    g = games.c
    where = and_(g.source == source, g.collection == collection)
    return conn.execute(select(g.id, g.fen, g.moves).where(where)).first()


def _delete_index(conn, game_id: int, keys: list[int]) -> None:
    p = positions.c
    for i in range(0, len(keys), 500):
        conn.execute(delete(positions).where(and_(p.key.in_(keys[i:i + 500]), p.game_id == game_id)))


def put_game(engine: Engine, game: Game, *, source: str, token: str, collection: str = MINE) -> int:
    """Store ``game`` (its main line, headers and comments) as the copy known by ``source`` in
    ``collection``, with ``token`` in its ``hash`` column; returns the row id (kept when it existed).

    Raises :class:`~xiangqi.core.errors.XiangqiError` for a game whose start position or moves
    cannot be indexed; database errors propagate (nothing is written then).
    """
    row = game_row(game, source, 0, collection)
    _index_data(row)
    row["hash"] = token
    pos, brd = row.pop("_pos"), row.pop("_boards")
    values = {k: v for k, v in row.items() if not k.startswith("_")}
    g = games.c
    board_insert = _board_insert(engine)
    with engine.begin() as conn:
        old = _find(conn, source, collection)
        if old is not None:
            gid = int(old.id)
            _delete_index(conn, gid, _old_keys(old.fen, old.moves))
            conn.execute(update(games).where(g.id == gid).values(**values))
        else:
            gid = int(conn.execute(insert(games).returning(g.id), [values]).scalar_one())
        if pos:
            conn.execute(insert(positions), [{"key": k, "game_id": gid, "ply": ply, "move": mv}
                                             for k, ply, mv in pos])
        if brd and board_insert is not None:
            conn.execute(board_insert, [{"material": m, "key": k, "pieces": pk} for m, k, pk in brd])
    _explore_changed()
    return gid


def remove_game(engine: Engine, source: str, collection: str = MINE) -> bool:
    """Delete the copy known by ``source`` (its index rows first, by their keys); False when none."""
    g = games.c
    with engine.begin() as conn:
        old = _find(conn, source, collection)
        if old is None:
            return False
        _delete_index(conn, int(old.id), _old_keys(old.fen, old.moves))
        conn.execute(delete(games).where(g.id == old.id))
    _explore_changed()
    return True


def sync(engine: Engine, wanted: dict[str, str], load: Callable[[str], Game | None], *,
         collection: str = MINE, prefix: str = "") -> SyncReport:
    """Make the games of ``collection`` whose source starts with ``prefix`` exactly the sources of
    ``wanted`` (``{source: token}``); games of other sources (imported into the collection by hand)
    are left alone.

    A source missing or stored with another token is loaded with ``load(source)`` (None: skip it)
    and stored with :func:`put_game`; a stored source not in ``wanted`` is removed. A game that
    cannot be loaded or indexed is listed in ``failed`` and the others go on; database errors
    propagate.
    """
    report = SyncReport()
    have = {s: t for s, t in stored_tokens(engine, collection).items() if s.startswith(prefix)}
    for source in sorted(set(have) - set(wanted)):
        if remove_game(engine, source, collection):
            report.removed += 1
    for source, token in wanted.items():
        if have.get(source) == token:
            continue
        try:
            game = load(source)
            if game is None:
                continue
            put_game(engine, game, source=source, token=token, collection=collection)
        except (XiangqiError, ValueError, KeyError) as exc:
            report.failed.append((source, f"{type(exc).__name__}: {exc}"))
            continue
        if source in have:
            report.updated += 1
        else:
            report.added += 1
    return report
