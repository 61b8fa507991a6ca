"""The computer player: the built-in engine behind a small, thread-safe interface.

:class:`EnginePlayer` wraps :class:`xiangqi.engine.Engine` (imported lazily, so
the app layer loads without Numba having compiled anything). Its methods block;
callers run them in a worker thread (the web layer uses ``asyncio.to_thread``).

Until the engine's Numba kernels are ready (:func:`xiangqi.engine.is_ready`; a
first compile takes 15–50 s), the levels of at most
:data:`xiangqi.engine.pysearch.MAX_DEPTH` plies (初级) are played by the
pure-Python search of :mod:`xiangqi.engine.pysearch`, and hints and draw-offer
judgements use its best move and score; the stronger levels wait for the kernels.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from xiangqi.core.board import ADVISOR, CANNON, ELEPHANT, HORSE, PAWN, ROOK, Board, Move

#: Rough material values in centipawns used by the draw-offer decision
#: (the usual xiangqi scale: rook 9, horse/cannon 4-4.5, advisor/elephant 2, pawn 1-2).
MATERIAL_CP = {ROOK: 900, HORSE: 400, CANNON: 450, ADVISOR: 200, ELEPHANT: 200, PAWN: 100}


@dataclasses.dataclass(frozen=True)
class Level:
    """A level as the page shows it: ``key``, its Chinese and English names, and its measured
    Elo (``elo``, the 95 % error bar ``elo_error``, ``elo_games`` games; None/0 while unmeasured)
    with the rank name ``rank_zh`` of DESIGN.md (e.g. 县丞)."""

    key: str
    name_zh: str
    name_en: str
    elo: int | None = None
    elo_error: int | None = None
    elo_games: int = 0
    rank_zh: str | None = None


FALLBACK_LEVELS = (Level("beginner", "初级", "Beginner"), Level("intermediate", "中级", "Intermediate"),
                   Level("advanced", "高级", "Advanced"), Level("master", "大师", "Master"))


def levels() -> list[Level]:
    """The engine's levels in order of strength (from :data:`xiangqi.engine.LEVELS` when available)."""
    try:
        from xiangqi.engine import LEVELS
    except ImportError:
        return list(FALLBACK_LEVELS)
    vals = LEVELS.values() if isinstance(LEVELS, dict) else LEVELS
    return [Level(lv.key, lv.name_zh, lv.name_en, lv.elo, lv.elo_error, lv.elo_games, lv.rank_zh)
            for lv in vals]


def material_balance(board: Board) -> int:
    """Material of the side to move minus the opponent's, in centipawns (:data:`MATERIAL_CP`)."""
    total = 0
    for code in board.squares:
        if code:
            v = MATERIAL_CP.get(abs(code), 0)
            total += v if (code > 0) == board.turn else -v
    return total


class EnginePlayer:
    """The built-in engine as a player. One search at a time (a lock serialises callers).

    ``hash_mb`` is the transposition-table size in MiB.
    """

    def __init__(self, hash_mb: int = 64) -> None:
        self.hash_mb = hash_mb
        self._engine: Any = None
        self._lock = threading.Lock()
        self._warm_started = False

    def _get(self) -> Any:
        if self._engine is None:
            from xiangqi.engine import Engine

            self._engine = Engine(hash_mb=self.hash_mb)
        return self._engine

    def warmup(self) -> None:
        """Start compiling the engine kernels in the background (no-op if the engine is absent)."""
        try:
            from xiangqi.engine import warmup
        except ImportError:
            return
        self._warm_started = True
        warmup()

    @staticmethod
    def kernels_ready() -> bool:
        """True once the engine's Numba kernels are compiled or loaded (:func:`xiangqi.engine.is_ready`)."""
        import xiangqi.engine

        return xiangqi.engine.is_ready()

    @staticmethod
    def _quick_level(level: Any) -> bool:
        """Whether :mod:`xiangqi.engine.pysearch` can play ``level`` (a depth of at most its MAX_DEPTH)."""
        from xiangqi.engine import get_level
        from xiangqi.engine.pysearch import MAX_DEPTH

        lv = get_level(level)
        return lv.depth is not None and lv.depth <= MAX_DEPTH

    def waits_for_warmup(self, level: str) -> bool:
        """True while a move at ``level`` would wait for the kernels to compile (cheap; no compile).

        The page shows "engine warming up" instead of "thinking" then. Raises
        :class:`ValueError` for an unknown level.
        """
        return not self.kernels_ready() and not self._quick_level(level)

    def _use_quick(self) -> bool:
        """True (and the warm-up started) while the kernels are not ready: answer with pysearch."""
        if self.kernels_ready():
            return False
        if not self._warm_started:
            self.warmup()  # nobody started it (e.g. a bare player): the kernels still come
        return True

    def choose(self, board: Board, level: str, time_s: float | None = None) -> Move:
        """The engine's move for the side to move of ``board`` at ``level`` (blocks).

        ``time_s`` (seconds, from the game clock) caps the level's own thinking time.
        While the kernels are not ready, a level :mod:`xiangqi.engine.pysearch` can
        play (初级) is answered by it at once; the others wait for the kernels.
        """
        if self._quick_level(level) and self._use_quick():
            from xiangqi.engine import pysearch

            res = pysearch.play(board.copy(), level, time_limit=time_s)
            if res.move is not None:
                return res.move
        lv: Any = level
        if time_s is not None:
            from xiangqi.engine import get_level

            lv = get_level(level)
            if lv.time is None or time_s < lv.time:
                lv = dataclasses.replace(lv, time=max(0.05, time_s))
        with self._lock:
            res = self._get().play(board.copy(), lv)
        return res.move

    def hint(self, board: Board, level: str, time_s: float = 1.0) -> dict[str, Any]:
        """Best move for a hint: at least ``level``'s strength, searched for ``time_s`` seconds
        (once the kernels are ready).

        Returns ``{"move": ICCS, "score_cp": int|None, "mate": int|None, "pv": [ICCS, ...], "quick": bool}``.
        While the kernels are not ready the hint is the best move of the pure-Python
        :data:`~xiangqi.engine.pysearch.MAX_DEPTH`-ply search, at once, with ``quick`` True
        (the page says the engine is still warming up).
        """
        if self._use_quick():
            from xiangqi.engine import pysearch

            q = pysearch.best_move(board.copy())
            if q.move is not None:
                return {"move": q.move.iccs(), "score_cp": q.score_cp, "mate": q.mate,
                        "pv": [m.iccs() for m in q.pv], "quick": True}
        from xiangqi.engine import Limit

        with self._lock:
            eng = self._get()
            res = eng.search(board.copy(), Limit(time=time_s))
        return {"move": res.move.iccs(), "score_cp": res.score_cp, "mate": res.mate,
                "pv": [m.iccs() for m in (res.pv or [])], "quick": False}

    def evaluate(self, board: Board, time_s: float = 0.5) -> tuple[int | None, int | None]:
        """``(score_cp, mate)`` from the side to move's view after a short search.

        While the kernels are not ready: the score of the pure-Python search's best move.
        """
        if self._use_quick():
            from xiangqi.engine import pysearch

            q = pysearch.best_move(board.copy())
            if q.move is not None:
                return q.score_cp, q.mate
        from xiangqi.engine import Limit

        with self._lock:
            res = self._get().search(board.copy(), Limit(time=time_s))
        return res.score_cp, res.mate

    def stop(self) -> None:
        """Ask a running search to stop soon (it then returns its best move so far)."""
        eng = self._engine
        if eng is not None and hasattr(eng, "stop"):
            eng.stop()


def accepts_draw(score_cp: int | None, mate: int | None, material_cp: int, in_opening: bool) -> bool:
    """Whether the computer accepts a draw offer (提和).

    ``score_cp``/``mate`` are the engine's view for the computer's side;
    ``material_cp`` is the computer's material minus the human's. The computer
    accepts when it is not better: no mate for it, evaluation at most +50 cp
    (half a pawn) and no material lead above a pawn; and never ``in_opening``
    (the first 20 plies from the standard start), where a draw offer is a
    courtesy, not a position.
    """
    if in_opening:
        return False
    if mate is not None:
        return mate < 0
    if score_cp is None:
        return material_cp <= 100
    return score_cp <= 50 and material_cp <= 100
