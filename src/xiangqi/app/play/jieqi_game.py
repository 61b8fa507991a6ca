"""A 揭棋 game against the computer (or two people at one board), its record and its storage.

The game holds the secret deal (:func:`xiangqi.core.jieqi.deal`: which identity lies face down on
each starting square) and the referee's board (:class:`~xiangqi.core.jieqi.JieqiBoard`, exact
pools). What a player may see is :meth:`JieqiGame.view`: every reveal by a move is public; the
identity of a hidden piece that is captured is seen by the capturer only (``capture_reveal ==
"capturer"``, 天天象棋's rule) or by both (``"both"``). The computer searches its own view
(:mod:`xiangqi.engine.jieqi_search`), so it never plays on knowledge it does not have.

Storage: the current game is the store's ``current_game`` row of slot ``jieqi``; a finished game
(or one the user keeps) is a row of the library ``games`` table whose record is
:meth:`JieqiGame.to_record` (``"variant": "jieqi"``) and whose PGN is :meth:`JieqiGame.to_pgn`.
The store keeps them as text (:meth:`~xiangqi.app.play.store.Store.save_record`); this module, above
the store, registers the replay check of its records there (:func:`record_problem`,
:func:`~xiangqi.app.play.store.register_record_check`) on import.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import random as _random
import threading
import uuid
from typing import Any

from xiangqi.app.play.store import Store, register_record_check
from xiangqi.core.board import BLACK, RED, Termination
from xiangqi.core.jieqi import (
    CAPTURE_REVEAL_MODES,
    START_FEN,
    JieqiBoard,
    JieqiError,
    JieqiMove,
    deal,
    parse_square,
    read_pgn,
    square_name,
    write_pgn,
)
from xiangqi.core.outcome import Outcome, win

__all__ = ["JieqiGame", "SLOT", "save", "load_current", "record_problem", "ENGINE_LEVELS"]

#: The store's ``current_game`` slot of the 揭棋 game.
SLOT = "jieqi"
#: The 揭棋 engine's levels (xiangqi.engine.jieqi_search.LEVELS) with their names.
ENGINE_LEVELS = {"1": ("入门", "Easy"), "2": ("中级", "Normal"), "3": ("高级", "Hard")}
PLAYERS = ("human", "engine")


@dataclasses.dataclass
class JieqiGame:
    """One 揭棋 game. ``red``/``black`` are ``human`` or ``engine``; ``level`` one of
    :data:`ENGINE_LEVELS`; ``capture_reveal`` one of :data:`~xiangqi.core.jieqi.CAPTURE_REVEAL_MODES`;
    ``deals`` maps each starting square (0-89) to the identity dealt there. Raises
    :class:`~xiangqi.core.jieqi.JieqiError` for bad settings."""

    red: str = "human"
    black: str = "engine"
    level: str = "2"
    capture_reveal: str = "capturer"
    deals: dict[int, str] = dataclasses.field(default_factory=deal)
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)
    date: str = dataclasses.field(default_factory=lambda: _dt.date.today().strftime("%Y.%m.%d"))
    board: JieqiBoard = dataclasses.field(default_factory=lambda: JieqiBoard(START_FEN))
    resigned: bool | None = None  # the side that resigned
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.red not in PLAYERS or self.black not in PLAYERS:
            raise JieqiError(f"players are human or engine, got {self.red!r}/{self.black!r}")
        if self.level not in ENGINE_LEVELS:
            raise JieqiError(f"a 揭棋 level is one of {', '.join(ENGINE_LEVELS)}, got {self.level!r}")
        if self.capture_reveal not in CAPTURE_REVEAL_MODES:
            raise JieqiError(
                f"capture_reveal is one of {', '.join(CAPTURE_REVEAL_MODES)}, got {self.capture_reveal!r}"
            )

    # -- play -------------------------------------------------------------------------------------------
    @property
    def outcome(self) -> Outcome | None:
        """The end of the game (a resignation or the rules), or None."""
        if self.resigned is not None:
            loser = self.resigned
            return win(
                Termination.RESIGNATION,
                not loser,
                f"{'红方' if loser else '黑方'}认输",
                f"{'Red' if loser else 'Black'} resigned",
            )
        return self.board.outcome()

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.outcome is not None

    def player(self, side: bool) -> str:
        """``human`` or ``engine`` for ``side``."""
        return self.red if side else self.black

    def play(self, iccs: str) -> JieqiMove:
        """Make the move ``iccs`` (``h2e2``) of the side to move: the identities come from the deal.
        Returns the move with them. Raises :class:`JieqiError` for an illegal move or a game over."""
        if self.is_over:
            raise JieqiError("the game is over")
        text = iccs.strip()
        if len(text) != 4:
            raise JieqiError(f"a move is four characters of ICCS (h2e2), got {iccs!r}")
        frm, to = parse_square(text[:2]), parse_square(text[2:])
        b = self.board
        if not b.is_legal(frm, to):
            raise JieqiError(f"illegal move {text}")
        move = JieqiMove(
            frm,
            to,
            self.deals[frm] if b.is_hidden(frm) else None,
            self.deals[to] if b.is_hidden(to) else None,
        )
        b.push_unchecked(move)
        return move

    def resign(self, side: bool) -> None:
        """``side`` resigns. Raises :class:`JieqiError` when the game is over already."""
        if self.is_over:
            raise JieqiError("the game is over")
        self.resigned = side

    def unseen(self, side: bool) -> list[str]:
        """The identities of ``side``'s hidden pieces that the opponent took and ``side`` did not
        see (empty when both see captures)."""
        if self.capture_reveal == "both":
            return []
        out = []
        first = JieqiBoard(self.board.start_fen).turn
        for i, m in enumerate(self.board.moves):
            mover = (i % 2 == 0) == first
            if m.captured and mover != side:
                out.append(m.captured)
        return out

    def view(self, side: bool) -> JieqiBoard:
        """The position as ``side`` knows it (its pool holds its pieces captured unseen)."""
        return self.board.view(side, self.unseen(side))

    def engine_move(self, search: Any = None) -> JieqiMove | None:
        """Let the computer move for the side to move (its own view, ``search`` a
        :class:`~xiangqi.engine.jieqi_search.JieqiSearch`, default one of :attr:`level`). Returns
        the move made, None when the game is over or the side to move is not the computer's."""
        from xiangqi.engine.jieqi_search import LEVELS, JieqiSearch

        if self.is_over or self.player(self.board.turn) != "engine":
            return None
        if search is None:
            search = JieqiSearch(*LEVELS[self.level])
        res = search.search(self.view(self.board.turn))
        if res.move is None:
            return None
        return self.play(res.move.iccs)

    # -- what the page shows --------------------------------------------------------------------------
    def labels(self, viewer: bool | None) -> list[dict[str, str]]:
        """The moves as ``{iccs, token, chinese}`` for ``viewer`` (None: everything, a finished
        record): the token and the Chinese name leave out the identity of a captured hidden piece
        the viewer did not see."""
        b = JieqiBoard(self.board.start_fen)
        out = []
        over = self.is_over
        for m in self.board.moves:
            mover = b.turn
            shown = over or viewer is None or self.capture_reveal == "both" or mover == viewer
            vis = m if shown else dataclasses.replace(m, captured=None)
            out.append({"iccs": m.iccs, "token": vis.token(), "chinese": b.chinese(m, show_captured=shown)})
            b.push_unchecked(m)
        return out

    def state(self, viewer: bool) -> dict[str, Any]:
        """The game for the page as ``viewer`` (:data:`RED`/:data:`BLACK`) sees it: ``fen`` (the
        FEN extension of its view), ``moves`` (:meth:`labels`), ``turn``, ``dests`` (``{from: [to]}``
        when a human is to move), ``check``, ``pools`` (``{red: {R: 2, …}, black: …}`` as the viewer
        knows them), ``captured`` (identities taken, per side, as seen), ``result``."""
        v = self.view(viewer)
        out = self.outcome
        b = self.board
        dests: dict[str, list[str]] = {}
        if out is None and self.player(b.turn) == "human":
            for m in b.legal_moves():
                dests.setdefault(square_name(m.frm), []).append(square_name(m.to))
        last = b.moves[-1] if b.moves else None
        return {
            "variant": "jieqi",
            "id": self.id,
            "fen": v.fen(),
            "start_fen": b.start_fen,
            "turn": "red" if b.turn else "black",
            "red": self.red,
            "black": self.black,
            "level": self.level,
            "capture_reveal": self.capture_reveal,
            "viewer": "red" if viewer else "black",
            "moves": self.labels(viewer),
            "dests": dests,
            "last_move": last.iccs if last else None,
            "last_reveal": last.reveal if last else None,
            "check": square_name(b.king_square(b.turn)) if out is None and b.is_check() else None,
            "pools": {"red": dict(v.pool[RED]), "black": dict(v.pool[BLACK])},
            "result": None
            if out is None
            else {"result": out.result(), "reason_zh": out.reason_zh, "reason_en": out.reason_en},
        }

    # -- records ----------------------------------------------------------------------------------------
    def pgn_headers(self, language: str = "zh") -> dict[str, str]:
        """The PGN tags of the game (players named in ``language``)."""
        zh = language != "en"

        def name(p: str) -> str:
            if p == "human":
                return "棋手" if zh else "Player"
            lv = ENGINE_LEVELS[self.level][0 if zh else 1]
            return f"电脑·{lv}" if zh else f"Computer ({lv})"

        out = self.outcome
        h = {
            "Game": "Chinese Chess",
            "Event": "揭棋" if zh else "Jieqi",
            "Date": self.date,
            "Red": name(self.red),
            "Black": name(self.black),
            "JieqiCapture": self.capture_reveal,
        }
        if out is not None:
            h["Termination"] = out.reason_zh if zh else out.reason_en
        return h

    def to_pgn(self, language: str = "zh") -> str:
        """The game as PGN (:func:`xiangqi.core.jieqi.write_pgn`): every reveal and every captured
        identity in the moves — the record is the referee's, whoever saw what."""
        out = self.outcome
        return write_pgn(self.pgn_headers(language), self.board, out.result() if out else "*")

    def to_record(self) -> dict[str, Any]:
        """A JSON-able record (the store's): the settings, the secret deal, the move tokens."""
        return {
            "variant": "jieqi",
            "id": self.id,
            "date": self.date,
            "red": self.red,
            "black": self.black,
            "level": self.level,
            "capture_reveal": self.capture_reveal,
            "start_fen": self.board.start_fen,
            "deal": {square_name(sq): k for sq, k in sorted(self.deals.items())},
            "moves": [m.token() for m in self.board.moves],
            "resigned": None if self.resigned is None else ("red" if self.resigned else "black"),
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> JieqiGame:
        """The game of :meth:`to_record`'s dict, its moves replayed and checked against the deal.
        Raises :class:`JieqiError` (a ValueError) for a record that does not replay."""
        if not isinstance(rec, dict) or rec.get("variant") != "jieqi":
            raise JieqiError("not a 揭棋 record")
        try:
            deals = {parse_square(sq): str(k) for sq, k in dict(rec["deal"]).items()}
            g = cls(
                red=str(rec["red"]),
                black=str(rec["black"]),
                level=str(rec["level"]),
                capture_reveal=str(rec.get("capture_reveal", "capturer")),
                deals=deals,
                id=str(rec["id"]),
                date=str(rec.get("date", "")),
                board=JieqiBoard(str(rec.get("start_fen") or START_FEN)),
            )
            for tok in rec["moves"]:
                m = g.board.push_token(str(tok))
                if (m.reveal and deals.get(m.frm) != m.reveal) or (
                    m.captured and deals.get(m.to) != m.captured
                ):
                    raise JieqiError(f"move {tok} does not agree with the record's deal")
        except (KeyError, TypeError, AttributeError) as exc:
            raise JieqiError(f"a damaged 揭棋 record ({type(exc).__name__}: {exc})") from None
        if rec.get("resigned") in ("red", "black"):
            g.resigned = rec["resigned"] == "red"
        return g

    @classmethod
    def from_pgn(cls, text: str, *, red: str = "human", black: str = "human") -> JieqiGame:
        """A game from a 揭棋 PGN (:func:`~xiangqi.core.jieqi.read_pgn`): the identities the record
        shows are kept, the pieces never revealed are dealt at random from the rest. Raises
        :class:`JieqiError` when a move cannot be read."""
        rec = read_pgn(text)
        if rec.errors:
            raise JieqiError("; ".join(rec.errors))
        start = JieqiBoard(rec.board.start_fen)
        known: dict[int, str] = {}
        for m in rec.board.moves:
            if m.reveal:
                known[m.frm] = m.reveal
            if m.captured:
                known[m.to] = m.captured
        deals = dict(known)
        for side in (RED, BLACK):
            rest = list(start.pool[side].elements())
            for k in (v for sq, v in known.items() if start.squares[sq] == ("X" if side else "x")):
                rest.remove(k)
            free = [sq for sq in range(90) if start.squares[sq] == ("X" if side else "x") and sq not in known]
            _random.shuffle(rest)
            deals.update(zip(free, rest, strict=True))
        g = cls(
            red=red,
            black=black,
            deals=deals,
            board=rec.board,
            capture_reveal=rec.headers.get("JieqiCapture", "capturer")
            if rec.headers.get("JieqiCapture") in CAPTURE_REVEAL_MODES
            else "capturer",
        )
        return g


def record_problem(rec: dict[str, Any]) -> str | None:
    """Why a stored 揭棋 record does not replay, or None (the store's check of a library row)."""
    try:
        JieqiGame.from_record(rec)
    except (JieqiError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"[:300]
    return None


def save(store: Store, game: JieqiGame, language: str = "zh") -> None:
    """The save step of a 揭棋 game, in one transaction (:meth:`Store.save_record`): it becomes the
    store's current 揭棋 game (slot :data:`SLOT`) and, once it has ended or when it has a library row
    already, its library row is written. Raises the store's :class:`~xiangqi.app.play.store.StorageError`
    on failure."""
    out = game.outcome

    def library() -> dict[str, Any]:
        h = game.pgn_headers(language)
        return dict(
            date=game.date,
            red=h["Red"],
            black=h["Black"],
            level=f"jieqi-{game.level}",
            result=out.result() if out else "*",
            reason_zh=out.reason_zh if out else "未完成",
            reason_en=out.reason_en if out else "unfinished",
            plies=len(game.board.moves),
            pgn=game.to_pgn(language),
        )

    rec = json.dumps(game.to_record(), ensure_ascii=False)
    store.save_record(SLOT, game.id, rec, library, keep=out is not None)


def load_current(store: Store) -> JieqiGame | None:
    """The stored current 揭棋 game, or None (none, or a record that does not replay: then it is
    dropped, the library keeps finished games)."""
    text = store.load_record(SLOT)
    if text is None:
        return None
    try:
        return JieqiGame.from_record(json.loads(text))
    except (JieqiError, ValueError):
        return None


register_record_check("jieqi", record_problem)
