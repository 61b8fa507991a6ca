"""Analysis trees: the player's own variations and comments on a game, kept with the game.

The analysis board (the page's ``analysis.js``) lets the player try moves in any position of a
game; each tried move becomes a branch of the game's tree. The tree travels between the page and
the server as a flat list of nodes (:func:`game_from_nodes`), is stored as PGN text with
variations (:class:`TreeStore`, table ``analysis_trees``, one row per game id: the id of the
:class:`~xiangqi.app.play.session.GameSession`, which is also the ``game_id`` of its library row), and is
read back with the core PGN reader, so that what is saved is exactly what a PGN file would hold.

A game's tree keeps the game's own moves as its main line: :func:`merge_main_line` rebuilds the
tree on the game's moves (after an undo, say) and hangs the stored branches where they still fit.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from xiangqi.core import pgn
from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError

__all__ = ["MAX_NODES", "TreeError", "TreeStore", "game_from_nodes", "merge_main_line", "count_variations"]

#: Most nodes (positions) a tree sent by the page may hold: a 150-ply game with some 1,300 moves of
#: branches. A flat node is about 45 bytes of JSON, so 1,500 of them fit the server's 64 KB limit on
#: a JSON body (xiangqi.web.limits; a larger body is refused with 413 before it is read).
MAX_NODES = 1500
#: Longest comment kept on one node (characters).
MAX_COMMENT = 2000

_metadata = sa.MetaData()
#: One row per game: its analysis tree as PGN (Chinese move text, variations in parentheses).
analysis_trees = sa.Table(
    "analysis_trees", _metadata,
    sa.Column("game_id", sa.String(64), primary_key=True),
    sa.Column("pgn", sa.Text, nullable=False),
    sa.Column("updated", sa.String(32), nullable=False),
)


class TreeError(XiangqiError):
    """A tree from the page that cannot be a game tree (the text names the node and the reason)."""


def game_from_nodes(start_fen: str, nodes: Sequence[dict[str, Any]], headers: dict[str, str] | None = None
                    ) -> pgn.Game:
    """A :class:`~xiangqi.core.pgn.Game` from the page's flat tree.

    ``nodes[0]`` is the start position (``parent`` None, ``move`` None; its ``comment`` is the game's
    comment before the first move); every other node is ``{"parent": index of an earlier node, "move":
    ICCS, "comment": str}``, and a node's children keep their order in the list (the first is the
    main continuation). Raises :class:`TreeError` naming the node for a bad FEN, a parent that is not
    an earlier node, an illegal move, a move given twice from one position, more than
    :data:`MAX_NODES` nodes or a comment longer than :data:`MAX_COMMENT`.
    """
    if not nodes:
        raise TreeError("the tree has no nodes (node 0 is the start position)")
    if len(nodes) > MAX_NODES:
        raise TreeError(f"the tree has {len(nodes)} nodes; at most {MAX_NODES} are kept")
    game = pgn.Game(headers)
    try:
        game.setup(start_fen)
        start = game.board()
    except XiangqiError as exc:
        raise TreeError(f"bad start position: {exc}") from None
    first = nodes[0]
    if first.get("parent") is not None or first.get("move"):
        raise TreeError("node 0 must be the start position (no parent, no move)")
    game.comment = _comment(first, 0)
    made: list[pgn.GameNode] = [game]
    boards: list[Board] = [start]
    for i, n in enumerate(nodes[1:], start=1):
        parent = n.get("parent")
        if not isinstance(parent, int) or isinstance(parent, bool) or not 0 <= parent < i:
            raise TreeError(f"node {i}: parent must be the index of an earlier node, got {parent!r}")
        text = n.get("move")
        try:
            move = Move.from_iccs(text) if isinstance(text, str) else None
        except XiangqiError:
            move = None
        if move is None:
            raise TreeError(f"node {i}: move must be an ICCS move such as h2e2, got {text!r}")
        board = boards[parent]
        if not board.is_legal(move):
            raise TreeError(f"node {i}: {move.iccs()} is not a legal move in {board.fen()}")
        if made[parent].has_variation(move):
            raise TreeError(f"node {i}: {move.iccs()} is given twice from node {parent}")
        child = made[parent]._add(move, comment=_comment(n, i))
        after = board.copy()
        after.push(move, validate=False)
        made.append(child)
        boards.append(after)
    return game


def _comment(node: dict[str, Any], i: int) -> str:
    c = node.get("comment") or ""
    if not isinstance(c, str):
        raise TreeError(f"node {i}: comment must be text")
    if len(c) > MAX_COMMENT:
        raise TreeError(f"node {i}: comment is {len(c)} characters long; at most {MAX_COMMENT}")
    return c.strip()


def merge_main_line(start_fen: str, moves: Sequence[str], stored: pgn.Game | None,
                    headers: dict[str, str] | None = None) -> pgn.Game:
    """The tree of a game whose main line is ``moves`` (ICCS from ``start_fen``), with the branches and
    comments of ``stored`` (a tree saved earlier, or None) hung where they fit: every stored line that
    starts from the same position is kept; the stored tree's own order is kept among the
    alternatives, the game's move stays first. Raises :class:`TreeError` for a bad FEN or move."""
    game = pgn.Game(headers)
    try:
        game.setup(start_fen)
        board = game.board()
        node: pgn.GameNode = game
        for text in moves:
            mv = Move.from_iccs(text)
            board.push(mv)
            node = node._add(mv)
    except XiangqiError as exc:
        raise TreeError(f"the game's moves cannot be played: {exc}") from None
    if stored is not None and stored.board().fen() == game.board().fen():
        game.comment = stored.comment or game.comment
        _graft(game, stored)
    return game


def _graft(into: pgn.GameNode, src: pgn.GameNode) -> None:
    """Add ``src``'s continuations (recursively) below ``into`` (same position), keeping comments."""
    stack = [(into, src)]
    while stack:
        a, b = stack.pop()
        if b.comment and not a.comment:
            a.comment = b.comment
        for child in b.variations:
            match = next((v for v in a.variations if v.move == child.move), None)
            if match is None:
                match = a._add(child.move, comment=child.comment)
            stack.append((match, child))


def count_variations(game: pgn.GameNode) -> int:
    """Alternatives in a tree: the number of children beyond the first, summed over all nodes."""
    total, stack = 0, [game]
    while stack:
        n = stack.pop()
        total += max(0, len(n.variations) - 1)
        stack.extend(n.variations)
    return total


class TreeStore:
    """The ``analysis_trees`` table in the app's database (the :class:`~xiangqi.app.play.store.Store`'s
    engine, so its storage errors are the store's: disk full 507, read-only 503)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._ready = False

    def _ensure(self) -> bool:
        if not self._ready:
            try:
                _metadata.create_all(self.engine)
            except Exception:  # noqa: BLE001 - a read-only database: nothing stored yet, reads find nothing
                return False
            self._ready = True
        return True

    def load(self, game_id: str) -> pgn.Game | None:
        """The stored tree of ``game_id`` (read back with the core PGN reader), or None."""
        if not self._ensure():
            return None
        with self.engine.connect() as conn:
            q = sa.select(analysis_trees.c.pgn).where(analysis_trees.c.game_id == game_id)
            row = conn.execute(q).first()
        if row is None:
            return None
        try:
            return pgn.read_game(row.pgn)
        except XiangqiError:
            return None

    def save(self, game_id: str, game: pgn.Game) -> str:
        """Store ``game`` (as PGN, Chinese move text) for ``game_id``; returns the PGN text written."""
        text = pgn.write_game(game, notation="chinese")
        now = datetime.datetime.now().isoformat(timespec="seconds")
        if not self._ensure():
            _metadata.create_all(self.engine)  # raises the store's error (read-only database …)
        with self.engine.begin() as conn:
            conn.execute(sa.delete(analysis_trees).where(analysis_trees.c.game_id == game_id))
            conn.execute(sa.insert(analysis_trees).values(game_id=game_id, pgn=text, updated=now))
        return text

    def delete(self, game_id: str) -> None:
        """Forget the tree of ``game_id`` (nothing happens when there is none)."""
        if self._ensure():
            with self.engine.begin() as conn:
                conn.execute(sa.delete(analysis_trees).where(analysis_trees.c.game_id == game_id))
