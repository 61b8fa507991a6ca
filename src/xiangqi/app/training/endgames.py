"""Endgame practice (残局练习): play a won tablebase position against perfect defence.

The tables are the ones in ``<data dir>/tablebases`` (``xiangqi tb generate``). A practice session
starts from a position the player picks (FEN) or from a random won position of an ending: one
drawn uniformly from the table's positions where the stronger side (Red in the table, the player)
is to move, is not in check and wins in at least :data:`MIN_DTM` plies (in an ending whose mates
are all shorter, among its longest wins; at most :data:`SAMPLES` draws).

After each of the player's moves the table judges it (the win kept, thrown away to a draw, or
lost) and, for a kept win by mate, whether it made progress (``progress``): the table's distance to
mate (DTM, plies) with the player to move is shorter after the move and the defence's reply than
before it. DTM is the length under best play by both sides, so a move that is one of the table's best
moves makes the DTM two plies shorter after the longest resistance, and any other winning move leaves
it as long or longer (a win's DTM is odd, a loss's even: a move's DTM is the best one plus 0, 2, …;
a rook shuffled back and forth); the page praises only progress. The opponent answers with the
table's longest resistance (among the moves that lose slowest, the first in ICCS order:
:meth:`xiangqi.engine.tablebase.Tablebase.probe`), or with a drawing move when the player has let
the win go. ``undo`` takes back the last pair of moves. The distance
to mate is given only on request (:meth:`EndgameTrainer.dtm`).

Tables of the ``cxa-check`` model also hold wins by the repetition rule (one-sided perpetual check
loses, docs/TABLEBASES.md): a random start is always a win by mate, but a position given by FEN
may be won by the rule; there the defender keeps checking and the game ends when the core rules
referee (:meth:`xiangqi.core.board.Board.outcome`) rules the repetition (``over`` = ``"perpetual"``
with the winner's verdict, or ``"repetition"`` for a draw by repetition).
"""

from __future__ import annotations

import collections
import random
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from xiangqi.core.board import Board, Move, square_name

__all__ = ["EndgameTrainer", "EndgameError", "MIN_DTM", "SAMPLES", "ENDING_NAMES_ZH"]

MIN_DTM = 9
SAMPLES = 4000
MAX_SESSIONS = 32
_ZH = {"R": "车", "N": "马", "C": "炮", "P": "兵", "A": "士", "B": "象"}
#: Chinese names of a few endings; others are spelt from the pieces (车马 对 士象全).
ENDING_NAMES_ZH = {"KRKAABB": "单车对士象全", "KRK": "单车对将", "KNK": "单马对将", "KPK": "单兵对将"}


class EndgameError(Exception):
    """A refused request; ``status`` the HTTP status (404 unknown, 409 over, 422 bad input)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


def ending_name_zh(name: str) -> str:
    """``KRKAABB`` -> ``单车对士象全``; otherwise the pieces in Chinese, e.g. ``车兵对士``."""
    if name in ENDING_NAMES_ZH:
        return ENDING_NAMES_ZH[name]
    red, black = name[1:].split("K")
    black_zh = "士象全" if black == "AABB" else ("".join(_ZH[c] for c in black) or "将")
    return "".join(_ZH[c] for c in red) + "对" + black_zh


def _mirror_rank(rank: str) -> str:
    """A FEN rank seen in a mirror (file a <-> i): the runs of digits and pieces in reverse order."""
    parts = re.findall(r"\d|\D", rank)
    return "".join(reversed(parts))


class _Session:
    def __init__(self, sid: str, board: Board, ending: str, player_red: bool) -> None:
        self.id = sid
        self.board = board
        self.ending = ending
        self.player_red = player_red
        self.start_fen = board.fen()
        self.verdict = "win"  # the player's: win | draw | loss
        self.over: str | None = None  # "mate" (the player mated), "mated", "draw" (no mating material)


class EndgameTrainer:
    """Practice sessions over the tables in ``directory`` (``<data dir>/tablebases`` in the app)."""

    def __init__(self, directory: str | Path, *, seed: int | None = None) -> None:
        from xiangqi.engine.tablebase import Tablebase

        self.tb = Tablebase(directory)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.sessions: collections.OrderedDict[str, _Session] = collections.OrderedDict()
        self._winnable_cache: dict[tuple[str, int, int], bool] = {}  # (name, size, mtime) -> a Red win

    def move(self, sid: str, text: str) -> dict[str, Any]:
        """The player's move and the defence's answer: ``{"reply", "before", "progress", ...view}``,
        ``before`` the player's verdict before the move (``verdict`` is after the reply); ``progress``
        True when the DTM of the player to move is shorter after the reply than before the move, False
        when it is not (the win kept without getting closer), None when the game ended or either
        position is no win by mate. 409 when over, 422 illegal."""
        with self._lock:
            return self._move_locked(sid, text)

    def undo(self, sid: str) -> dict[str, Any]:
        """Take back the player's last move (and the reply). 409 when there is none."""
        with self._lock:
            return self._undo_locked(sid)

    def dtm(self, sid: str) -> dict[str, Any]:
        """The table's verdict now: ``{"wdl" (side to move), "dtm" plies or None, "mate_in" moves of the
        winner or None, "best": ICCS moves, "rule": "perpetual-check" for a result of the repetition
        rule (then no DTM) or None}``."""
        with self._lock:
            return self._dtm_locked(sid)

    def endings(self) -> list[dict[str, str]]:
        """The endings whose tables are present and hold a position Red wins by mate: ``[{"name",
        "zh"}]``. A table without one (炮对将 KCK: a lone cannon cannot mate; it is in the default set
        as a sub-ending of the larger ones) would only fail at :meth:`random_position`."""
        return [{"name": n, "zh": ending_name_zh(n)} for n in self.tb.available() if self._winnable(n)]

    def _winnable(self, name: str) -> bool:
        """True when the table's header counts a Red win (by mate) with Red to move; read from the header
        alone, remembered per file (name, size, modification time). A damaged header: True (the
        position search then says what is wrong)."""
        import json

        from xiangqi.engine.tablebase import table_path

        path = table_path(self.tb.directory, name)
        try:
            st = path.stat()
        except OSError:
            return False
        key = (name, st.st_size, st.st_mtime_ns)
        cache = self._winnable_cache
        if key not in cache:
            try:
                with np.load(path) as z:
                    stats = json.loads(str(z["header"]))["stats"]["red"]
                cache[key] = int(stats["wins"]) - int(stats.get("rule_wins", 0)) > 0
            except (OSError, ValueError, KeyError, TypeError):
                cache[key] = True
        return cache[key]

    def random_position(self, ending: str) -> Board:
        """A random won position of ``ending`` with the stronger side (Red) to move (see the module doc).
        404 when the table is absent, 422 when no position was found."""
        from xiangqi.engine.tablebase import Ending, TablebaseError

        try:
            end = Ending.parse(ending)
        except TablebaseError as exc:
            raise EndgameError(str(exc)) from None
        if end.name not in self.tb.available():
            raise EndgameError(f"no table for {end.name}: generate it with xiangqi tb generate {end.name}",
                               404)
        import numpy as np

        from xiangqi.engine.tablebase import RULE, position_fen

        values = self.tb._values(end.name)
        red = np.where(values[0] < RULE, values[0], 0)  # wins by mate only, not by the rule
        longest = int(red.max())
        # every won position of the ending with Red to move is a candidate: those with at least
        # MIN_DTM plies to mate, else (an ending whose mates are all short) the longest ones
        wanted = np.flatnonzero(red >= min(MIN_DTM, longest)) if longest > 0 else np.empty(0, np.int64)
        for _ in range(SAMPLES if len(wanted) else 0):
            fen = position_fen(end, int(wanted[self._rng.randrange(len(wanted))]))
            if fen is None:
                continue
            if self._rng.random() < 0.5:  # the table keeps the Red king on files a-e; its mirror image
                board_part, rest = fen.split(" ", 1)
                fen = "/".join(_mirror_rank(r) for r in board_part.split("/")) + " " + rest
            b = Board(fen)
            if not b.is_check():
                return b
        raise EndgameError(f"no won position of {end.name} with Red to move in its table", 422)

    def start(self, ending: str | None = None, fen: str | None = None) -> dict[str, Any]:
        """A new session from ``fen`` (a won position in the tables, the side to move plays) or a
        random won position of ``ending``. 422 for a position outside the tables or not won."""
        if fen:
            try:
                board = Board(fen)
            except Exception as exc:
                raise EndgameError(f"bad FEN: {exc}") from None
            pr = self._probe(board)
            if pr is None:
                raise EndgameError("the position is not in the tables generated here")
            if pr.wdl != "win":
                raise EndgameError(f"the side to move does not win here (the table says {pr.wdl})")
            name = pr.ending
        else:
            if not ending:
                raise EndgameError("give an ending or a FEN")
            board = self.random_position(ending)
            name = self._probe(board).ending
        s = _Session(uuid.uuid4().hex[:16], board, name, board.turn)
        with self._lock:
            self.sessions[s.id] = s
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        return self.view(s)

    def _probe(self, board: Board):
        from xiangqi.engine.tablebase import TablebaseError

        try:
            return self.tb.probe(board)
        except TablebaseError as exc:
            raise EndgameError(str(exc)) from None

    def _get(self, sid: str) -> _Session:
        s = self.sessions.get(sid)
        if s is None:
            raise EndgameError(f"no practice session {sid!r}", 404)
        return s

    def view(self, s: _Session, **extra) -> dict[str, Any]:
        """What the page shows: ``{"session", "fen", "ending", "ending_zh", "red", "dests", "verdict",
        "over", "check", "moves"}`` (``verdict`` the player's win/draw/loss by the table)."""
        b = s.board
        dests: dict[str, list[str]] = {}
        if s.over is None and b.turn == s.player_red:
            for m in b.legal_moves:
                dests.setdefault(m.iccs()[:2], []).append(m.iccs())
        return {"session": s.id, "fen": b.fen(), "start_fen": s.start_fen, "ending": s.ending,
                "ending_zh": ending_name_zh(s.ending), "red": s.player_red, "dests": dests,
                "verdict": s.verdict, "over": s.over,
                "check": square_name(b.king(b.turn)) if b.is_check() else None,
                "moves": [m.iccs() for m in b.move_stack], **extra}

    def _player_verdict(self, s: _Session) -> str | None:
        """The player's win/draw/loss in the position now (None outside the tables: a capture left
        no mating material counts as a draw)."""
        b = s.board
        ruled = self._ruling(s)
        if ruled is not None:
            return ruled
        pr = self._probe(b)
        if pr is None:
            return "draw"
        mine = b.turn == s.player_red
        if pr.wdl == "draw":
            return "draw"
        return pr.wdl if mine else ("loss" if pr.wdl == "win" else "win")

    def _ruling(self, s: _Session) -> str | None:
        """The player's verdict when the referee has ruled a repetition in the game so far (a
        forbidden one such as the defender's 长将 ends it with ``over`` = ``"perpetual"``, an allowed
        one with ``"repetition"``, a draw); None when no repetition is ruled."""
        from xiangqi.core.board import Termination

        out = s.board.outcome()
        if out is None or out.termination not in (Termination.PERPETUAL, Termination.REPETITION):
            return None
        if out.winner is None:
            s.over = "repetition"
            return "draw"
        s.over = "perpetual"
        return "win" if out.winner == s.player_red else "loss"

    def _move_locked(self, sid: str, text: str) -> dict[str, Any]:
        """The player's move and the defence's answer: ``{"reply", "before", ...view}``, ``before`` the
        player's verdict before the move (``verdict`` is after the reply). 409 when over, 422 illegal."""
        s = self._get(sid)
        if s.over:
            raise EndgameError("the practice game is over", 409)
        b = s.board
        if b.turn != s.player_red:
            raise EndgameError("not the player's turn", 409)
        try:
            mv = Move.from_iccs(text)
        except Exception:
            raise EndgameError(f"not an ICCS move: {text!r}") from None
        if not b.is_legal(mv):
            raise EndgameError(f"illegal move {mv.iccs()} in {b.fen()}")
        before = s.verdict
        dtm_before = self._win_dtm(s)
        b.push(mv)
        reply = None
        if not any(True for _ in b.legal_moves):
            s.over = "mate"
            s.verdict = "win"
            return self.view(s, reply=None, before=before)
        ruled = self._ruling(s)
        if ruled is not None:
            s.verdict = ruled
            return self.view(s, reply=None, before=before)
        pr = self._probe(b)
        if pr is None:  # no mating material left (a capture): a draw
            s.over = "draw"
            s.verdict = "draw"
            return self.view(s, reply=None, before=before)
        if pr.best:
            reply = sorted(pr.best)[0]
        else:  # the defender loses at once (no best list for a loss in 0): any legal move
            reply = min(m.iccs() for m in b.legal_moves)
        b.push(Move.from_iccs(reply))
        if not any(True for _ in b.legal_moves):
            s.over = "mated"
            s.verdict = "loss"
        else:
            s.verdict = self._player_verdict(s) or "draw"
            if s.over is None and self.tb.value(b) == (0, ""):
                s.over = "draw"
        dtm_after = self._win_dtm(s) if s.over is None else None
        progress = None if dtm_before is None or dtm_after is None else dtm_after < dtm_before
        return self.view(s, reply=reply, before=before, progress=progress)

    def _win_dtm(self, s: _Session) -> int | None:
        """The table's distance to mate (plies) of the player to move in a won position, None when the
        position is not the player's to move, not a win by mate (a draw, a loss, a win by the repetition
        rule, which has no DTM) or a repetition has been ruled."""
        b = s.board
        if b.turn != s.player_red or self._ruling(s) is not None:
            return None
        pr = self._probe(b)
        return pr.dtm if pr is not None and pr.wdl == "win" else None

    def _undo_locked(self, sid: str) -> dict[str, Any]:
        """Take back the player's last move (and the reply). 409 when there is none."""
        s = self._get(sid)
        b = s.board
        if not b.move_stack:
            raise EndgameError("nothing to take back", 409)
        b.pop()
        if b.move_stack and b.turn != s.player_red:
            b.pop()
        s.over = None
        s.verdict = self._player_verdict(s) or "draw"
        return self.view(s)

    def _dtm_locked(self, sid: str) -> dict[str, Any]:
        """The table's verdict now: ``{"wdl" (side to move), "dtm" plies or None, "mate_in" moves of the
        winner or None, "best": ICCS moves, "rule": "perpetual-check" for a result of the repetition
        rule (then no DTM) or None}``."""
        s = self._get(sid)
        pr = self._probe(s.board)
        if pr is None:
            return {"wdl": "draw", "dtm": None, "mate_in": None, "best": [], "rule": None}
        return {"wdl": pr.wdl, "dtm": pr.dtm, "mate_in": (pr.dtm + 1) // 2 if pr.dtm is not None else None,
                "best": pr.best, "rule": pr.rule}
