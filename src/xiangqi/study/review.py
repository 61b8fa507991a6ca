"""Game review (复盘): every ply of a game evaluated by the engine, classified and summed up per side.

The pieces, from the bottom up:

* :func:`win_chance` maps centipawns to a win chance on a -100..100 scale (the expected score
  ``(wc + 100) / 200``) by a logistic curve whose constant :data:`WIN_CHANCE_K` was fitted by
  maximum likelihood on master games (``tools/fit_win_chance.py``, docs/REVIEW.md).
* :func:`evaluate_position` searches one position to a fixed depth (or for a fixed time) with a
  cleared transposition table, so that its result does not depend on what was searched before
  (reviews are deterministic at fixed depth, whatever the order or the number of processes).
* :func:`review_game` evaluates every position of a game's main line (``n + 1`` searches for
  ``n`` plies) and builds a :class:`GameReview`: for each ply a :class:`PlyReview` (evaluation
  before/after from Red's side, the best move and its line, the class ``best / good /
  inaccuracy / mistake / blunder`` by the mover's drop in win chance, lichess's move accuracy);
  per side a :class:`SideSummary` (lichess's game accuracy, counts of ?!/?/??, average
  centipawn loss). :func:`review_games` does the same for many games on local processes.
* :meth:`GameReview.annotate` gives the game with ``[%eval …]`` comments, NAGs ($6 ?!, $2 ?,
  $4 ??) and the better line as a variation; :meth:`GameReview.to_dict` a JSON-ready dict.

Scores: centipawns are the engine's units from Red's side (Red ahead > 0). A mate in N moves is
``cp = ±(MATE_CP - N)`` with ``mate = ±N`` (positive: Red mates) and a win chance of exactly ±100;
a finished game (mate, stalemate or a ruling in the last position) is ``cp = ±MATE_CP`` or 0 with
``mate = None`` and ``best = None``; a win by rule found by the search (the opponent must repeat a
forbidden perpetual check) is ``cp = ±MATE_CP`` with ``mate = None`` and a best move; a score that is
the search's ruling of a repetition its line ends in carries ``repetition = True``
(:attr:`PositionEval.repetition`), and such a score never makes a move a blunder.

Accuracy follows lichess (lila ``modules/analyse/src/main/AccuracyPercent.scala`` and
``modules/common/src/main/Maths.scala``): per move, on a 0..100 win-percent scale of the mover,
``100`` when the win percent did not fall, else ``103.1668100711649 · exp(-0.04354415386753951 ·
drop) - 3.166924740191411 + 1`` (lichess's "uncertainty bonus"), clamped to 0..100; per side the
mean of a volatility-weighted mean (weights: the population standard deviation of the win percents
in a window of ``clamp(plies / 10, 2, 8)`` positions around the move, clamped to 0.5..12) and a
harmonic mean (each value taken as at least 1).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from xiangqi.core.board import Board, Move
from xiangqi.core.notation import move_to_text
from xiangqi.core.pgn import Game

__all__ = [
    "WIN_CHANCE_K", "MATE_CP", "CP_CEILING", "THRESHOLDS", "CLASSES", "NAGS", "SYMBOLS",
    "DEFAULT_DEPTH", "DEFAULT_HASH_MB",
    "PositionEval", "PlyReview", "SideSummary", "GameReview",
    "win_chance", "eval_win_chance", "move_accuracy", "game_accuracy", "classify",
    "classify_by_table",
    "evaluate_position", "evaluate_line", "build_review", "review_game", "review_games", "ReviewCancelled",
    "default_jobs", "review_move", "try_move", "TRY_TOLERANCE", "make_pool",
    "EngineCommand", "close_engines", "refine_line", "evaluate_game", "DEEP_DROP",
    "confirm_line", "confirm_candidates", "classify_confirmed", "line_ends_in_repetition",
]

#: Logistic constant per centipawn: ``win_chance(cp) = 100 · (2 / (1 + exp(-K · cp)) - 1)``.
#: Fitted by maximum likelihood on 8,577 positions of 2,000 CCPD master games, depth-6 search scores
#: (95 % bootstrap interval 0.00610-0.00708; docs/REVIEW.md, tools/fit_win_chance.py).
WIN_CHANCE_K = 0.00657
#: Centipawns reported for a mate (minus the moves to it) and for a won final position.
MATE_CP = 10000
#: Evaluations are clamped to ±CP_CEILING for the average centipawn loss (as lichess does).
CP_CEILING = 1000
#: Drops in the mover's win chance (-100..100 scale) from which a move is a blunder, mistake, inaccuracy.
THRESHOLDS = ((30.0, "blunder"), (20.0, "mistake"), (10.0, "inaccuracy"))
#: Every class, best first.
CLASSES = ("best", "good", "inaccuracy", "mistake", "blunder")
#: PGN NAG of each bad class (PGN standard: $6 dubious ?!, $2 mistake ?, $4 blunder ??).
NAGS = {"inaccuracy": 6, "mistake": 2, "blunder": 4}
#: Move-list glyph of each bad class.
SYMBOLS = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
#: Default search depth of a review, and the transposition-table size (results depend on both).
DEFAULT_DEPTH = 8
DEFAULT_HASH_MB = 16
#: The second pass (:func:`refine_line`, ``--deep N``): a candidate is a move whose drop in win
#: chance is at least DEEP_DROP; the positions around it are searched again, deeper.
DEEP_DROP = 8.0
#: Version of :meth:`GameReview.to_stored`'s format.
STORED_VERSION = 1

_RULE_WIN_CP = 20000  # the kernels score a win by the opponent's forbidden repetition as ±25000
_WORDS = {"inaccuracy": "Inaccuracy", "mistake": "Mistake", "blunder": "Blunder"}


# ---------------------------------------------------------------------------
# Win chance and accuracy
# ---------------------------------------------------------------------------

def win_chance(cp: float, k: float = WIN_CHANCE_K) -> float:
    """Win chance in -100..100 of the side ``cp`` (centipawns) is counted for; 0 is an even game.

    ``(win_chance + 100) / 200`` is the expected score (win 1, draw ½, loss 0) of a master in
    that position, by the logistic curve fitted in docs/REVIEW.md.
    """
    x = -k * float(cp)
    if x > 700:  # exp overflows; the curve is flat there anyway
        return -100.0
    return 100.0 * (2.0 / (1.0 + math.exp(x)) - 1.0)


def eval_win_chance(cp: int, mate: int | None) -> float:
    """Win chance (-100..100, same side as ``cp``) of an evaluation: ±100 for a mate, else
    :func:`win_chance`."""
    if mate is not None:
        return 100.0 if mate > 0 else -100.0
    if abs(cp) >= MATE_CP:
        return 100.0 if cp > 0 else -100.0
    return win_chance(cp)


def _win_percent(wc: float) -> float:
    """0..100 win percent (lichess's scale) of a -100..100 win chance."""
    return 50.0 + wc / 2.0


def move_accuracy(before: float, after: float) -> float:
    """Lichess's accuracy (0..100) of one move from the mover's win percent ``before`` and ``after`` (0..100).

    100 when the win percent did not fall; else ``103.1668100711649 · exp(-0.04354415386753951 ·
    (before - after)) - 3.166924740191411``, plus lichess's bonus of 1, clamped to 0..100.
    """
    if after >= before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (before - after)) - 3.166924740191411
    return min(100.0, max(0.0, raw + 1.0))


def _pstdev(xs: Sequence[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def game_accuracy(red_win_percents: Sequence[float], red_first: bool = True) -> dict[str, float | None]:
    """Lichess's game accuracy per side from Red's win percents (0..100) of every position of the game.

    ``red_win_percents[0]`` is the start position, ``[i]`` the position after ply ``i``;
    ``red_first`` tells whether Red made the first move. Returns ``{"red": a, "black": b}``, each
    0..100, or None for a side that made no move: the mean of the volatility-weighted mean of its
    move accuracies and their harmonic mean (module docstring; lila's ``AccuracyPercent.gameAccuracy``).
    """
    wps = [float(x) for x in red_win_percents]
    plies = len(wps) - 1
    if plies < 1:
        return {"red": None, "black": None}
    size = min(8, max(2, plies // 10))
    first = wps[:size]
    windows = [first] * (min(size, len(wps)) - 2)
    windows += [wps[i:i + size] for i in range(0, len(wps) - size + 1)] if len(wps) >= size else [wps]
    weights = [min(12.0, max(0.5, _pstdev(w))) for w in windows]
    per_side: dict[str, list[tuple[float, float]]] = {"red": [], "black": []}
    for i in range(plies):
        prev, nxt = wps[i], wps[i + 1]
        red_moves = (i % 2 == 0) == red_first
        acc = move_accuracy(prev, nxt) if red_moves else move_accuracy(100.0 - prev, 100.0 - nxt)
        per_side["red" if red_moves else "black"].append((acc, weights[i]))
    out: dict[str, float | None] = {}
    for side, items in per_side.items():
        if not items:
            out[side] = None
            continue
        total_w = sum(w for _, w in items)
        weighted = sum(a * w for a, w in items) / total_w
        harmonic = len(items) / sum(1.0 / max(1.0, a) for a, _ in items)
        out[side] = (weighted + harmonic) / 2.0
    return out


_TB_RANK = {"loss": 0, "draw": 1, "win": 2}
_TB_OTHER = {"win": "loss", "loss": "win", "draw": "draw"}


def classify_by_table(before: dict | None, after: dict | None, is_best: bool) -> str | None:
    """The class of a move from the endgame tables, when both positions are in them (else None):
    ``before`` the verdict for the mover, ``after`` for the opponent (:attr:`PositionEval.tb`).
    A move that keeps the result is best (the engine's, i.e. the table's move) or good; one that
    turns a win into a draw, or a draw into a loss, is a mistake; a win into a loss a blunder."""
    if not before or not after or before.get("wdl") not in _TB_RANK or after.get("wdl") not in _TB_RANK:
        return None
    lost = _TB_RANK[before["wdl"]] - _TB_RANK[_TB_OTHER[after["wdl"]]]
    if lost <= 0:
        return "best" if is_best else "good"
    return "blunder" if lost == 2 else "mistake"


def classify(drop: float, is_best: bool) -> str:
    """Class of a move from the mover's drop in win chance (-100..100 scale): best when it is the
    engine's move, else blunder / mistake / inaccuracy from drops of 30 / 20 / 10, else good."""
    if is_best:
        return "best"
    for threshold, name in THRESHOLDS:
        if drop >= threshold:
            return name
    return "good"


# ---------------------------------------------------------------------------
# Evaluating positions
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class PositionEval:
    """The engine's verdict on one position, from Red's side.

    ``cp`` centipawns for Red, in our engine's units (another engine's scores divided by its
    ``cp_scale``; mates: ``±(MATE_CP - N)``; a finished game ``±MATE_CP`` or 0);
    ``mate`` moves to mate (> 0 Red mates, < 0 Black mates) or None; ``best`` the best move
    (ICCS) and ``pv`` its line (ICCS), None / [] when the game is over; ``depth`` the completed
    search depth (0 for a finished game); ``nodes`` searched; ``over`` the result (``1-0``,
    ``0-1``, ``1/2-1/2``) when the position ends the game, else None; ``tb`` the endgame table's
    exact verdict when the position is in one (``{"wdl": "win|draw|loss" for the side to move,
    "dtm": plies or None, "ending"}``, :attr:`xiangqi.engine.api.SearchResult.tablebase`; the score
    is then the table's), else None. ``repetition``: the score is a repetition verdict of the search,
    not an evaluation: the line ``pv`` ends in a position that repeats an earlier one of the game or
    of the line (no capture between them), where the search stops and rules the cycle (a draw, or a
    win or loss by perpetual check or chase, RULES.md §5.4; our kernels rule at the second
    occurrence, :mod:`xiangqi.engine.search`), although the game itself has not been ruled
    (:meth:`Board.outcome`); see :func:`line_ends_in_repetition`.
    """

    cp: int
    mate: int | None
    best: str | None
    pv: tuple[str, ...]
    depth: int
    nodes: int
    over: str | None = None
    tb: dict | None = None
    repetition: bool = False

    @property
    def win(self) -> float:
        """Red's win chance, -100..100."""
        return eval_win_chance(self.cp, self.mate)

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        out = {"cp": self.cp, "mate": self.mate, "best": self.best, "pv": list(self.pv),
               "depth": self.depth, "nodes": self.nodes, "over": self.over}
        if self.tb is not None:
            out["tb"] = dict(self.tb)
        if self.repetition:
            out["repetition"] = True
        return out

    @classmethod
    def from_dict(cls, d: dict) -> PositionEval:
        """Inverse of :meth:`to_dict`."""
        tb = d.get("tb")
        return cls(int(d["cp"]), d["mate"], d["best"], tuple(d["pv"]), int(d["depth"]), int(d["nodes"]),
                   d.get("over"), dict(tb) if isinstance(tb, dict) else None,
                   bool(d.get("repetition", False)))


def line_ends_in_repetition(board: Board, line: Sequence[str]) -> bool:
    """True when playing ``line`` (ICCS, legal) from ``board`` (its ``move_stack`` is the game's
    history) ends in a position (board and side to move, :meth:`Board.position_key`) that occurred
    before, in the game or earlier in the line, with no capture in between (a capture changes the
    material, so no earlier position can recur across it). A search stops at the first repeated
    position of its tree and scores it by the repetition rules, so a principal variation ending
    that way carries a repetition verdict, not an evaluation (:attr:`PositionEval.repetition`).
    ``board`` is not changed; an empty line is False (the game's own repetitions are the
    referee's, :meth:`Board.outcome`)."""
    if not line:
        return False
    b = board.copy()
    for text in line:
        b.push(Move.from_iccs(text), validate=False)
    key = b.position_key()
    while b.move_stack:
        mv = b.pop()
        if b.squares[mv.to_square] != 0:  # that move was a capture
            return False
        if b.turn == key[1] and b.position_key() == key:
            return True
    return False


def _make_limit(depth: int | None, movetime_ms: int | None):
    from xiangqi.engine.api import Limit

    if movetime_ms is not None:
        if movetime_ms < 1:
            raise ValueError(f"movetime must be at least 1 ms, got {movetime_ms}")
        return Limit(time=movetime_ms / 1000.0)
    d = DEFAULT_DEPTH if depth is None else int(depth)
    if not 1 <= d <= 60:
        raise ValueError(f"depth must be 1-60, got {d}")
    return Limit(depth=d)


def evaluate_position(engine, board: Board, limit, *, final: bool = False) -> PositionEval:
    """Search ``board`` (its ``move_stack`` counts for repetitions) within ``limit`` from a clean TT.

    ``engine`` is a :class:`xiangqi.engine.Engine`; ``limit`` a :class:`xiangqi.engine.Limit`.
    The engine's tables are cleared first (:meth:`Engine.new_game`), so that the result depends
    only on the position, its history, the limit and the hash size. With ``final`` the position
    is the game's last: when :meth:`Board.outcome` rules the game over there (mate, stalemate, a
    repetition ruling, the move limit) the result is scored as such without a search.
    A position with no legal move is always scored as lost for the side to move. The engine's
    ``cp_scale`` attribute, when it has one (an external engine's
    :class:`~xiangqi.engine.uci.client.ClientSearcher`), divides its centipawns into ours.
    """
    red = board.turn
    if final:
        out = board.outcome()
        if out is not None:
            cp = 0 if out.winner is None else (MATE_CP if out.winner else -MATE_CP)
            return PositionEval(cp, None, None, (), 0, 0, out.result())
    engine.new_game()
    res = engine.search(board, limit)
    if res.move is None:  # mated or stalemated: the side to move loses
        cp = -MATE_CP if red else MATE_CP
        return PositionEval(cp, None, None, (), 0, 0, "0-1" if red else "1-0")
    sign = 1 if red else -1
    if res.mate is not None:
        mate = sign * res.mate
        cp = (MATE_CP - abs(res.mate)) * (1 if mate > 0 else -1)
    elif abs(res.score_cp) >= _RULE_WIN_CP:  # a win by rule (the opponent's forbidden perpetual check)
        mate = None
        cp = MATE_CP if sign * res.score_cp > 0 else -MATE_CP
    else:
        mate = None
        scale = getattr(engine, "cp_scale", 1.0)  # another engine's centipawns in ours
        cp = sign * (int(res.score_cp) if scale == 1.0 else round(res.score_cp / scale))
    pv = tuple(m.iccs() for m in res.pv) or (res.move.iccs(),)
    tb = getattr(res, "tablebase", None)
    return PositionEval(cp, mate, res.move.iccs(), pv, int(res.depth), int(res.nodes),
                        tb=dict(tb) if tb else None,
                        repetition=not tb and mate is None and line_ends_in_repetition(board, pv))


class ReviewCancelled(Exception):
    """Raised by :func:`review_game` / :func:`review_games` when their ``cancelled()`` said so."""


_local = threading.local()


def _engine(hash_mb: int):
    """This thread's engine (one per thread and process, reused: its tables are cleared before each
    position, and no other thread touches them between the clearing and the search)."""
    from xiangqi.engine.api import Engine

    eng = getattr(_local, "engine", None)
    if eng is None or eng.hash_mb != hash_mb:
        eng = _local.engine = Engine(hash_mb=hash_mb)
    # the endgame tables of the data dir (`xiangqi tb generate`): exact verdicts where they apply
    from xiangqi.engine.tablebase import default_dir

    tbdir = default_dir()
    have = eng.tablebase.directory if eng.tablebase is not None else None
    if tbdir.is_dir():
        if have != tbdir:
            eng.set_tablebase_path(tbdir)
    elif have is not None:
        eng.set_tablebase_path(None)
    return eng


@dataclasses.dataclass(frozen=True)
class EngineCommand:
    """An external UCI or UCCI engine to review with (``xiangqi analyse --engine CMD``): ``argv`` the
    program and its arguments, ``protocol`` ``auto`` (UCI, else UCCI: the client's detection),
    ``uci`` or ``ucci``; ``options`` ``(name, value)`` pairs set after the handshake (e.g.
    ``(("Threads", "1"), ("Hash", "64"))``); ``cp_scale`` the engine's centipawns per centipawn of
    ours (None: :func:`xiangqi.engine.uci.client.engine_cp_scale` of its name). Plain data: it is sent
    to worker processes, each of which starts its own process of the engine (:func:`close_engines`
    stops this process's)."""

    argv: tuple[str, ...]
    protocol: str = "auto"
    options: tuple[tuple[str, str], ...] = ()
    cp_scale: float | None = None

    def start(self):
        """A started :class:`xiangqi.engine.uci.client.ClientSearcher` of this engine. The options it did
        not set are given one thread (a depth-limited search is then repeatable) when the engine
        has a ``Threads`` option. Raises :class:`xiangqi.engine.uci.client.EngineError` saying what
        went wrong (cannot be started, answered neither ``uci`` nor ``ucci``, unknown option)."""
        from xiangqi.engine.uci.client import ClientSearcher, SimpleEngine

        eng = SimpleEngine.popen(list(self.argv), self.protocol)
        try:
            opts = dict(self.options)
            if "threads" not in {k.lower() for k in opts} and eng._option("Threads") is not None:
                opts["Threads"] = 1
            if opts:
                eng.configure(opts)
            eng.ping()
        except BaseException:
            eng.close(timeout=0.2)
            raise
        return ClientSearcher(eng, self.cp_scale)


def _external(cmd: EngineCommand):
    """This thread's running process of ``cmd`` (started at first use, restarted when it died)."""
    running = getattr(_local, "external", None)
    if running is None:
        running = _local.external = {}
    s = running.get(cmd)
    if s is None or s.engine.process.poll() is not None:
        s = running[cmd] = cmd.start()
        with _all_lock:
            _all_external.append(s)
    return s


_all_lock = threading.Lock()
_all_external: list = []


def close_engines() -> None:
    """Stop every external engine process this process started for reviews (:class:`EngineCommand`)."""
    with _all_lock:
        running = list(_all_external)
        _all_external.clear()
    for s in running:
        s.engine.quit()
    if getattr(_local, "external", None):
        _local.external.clear()


def _searcher(searcher: Any, engine: EngineCommand | None, hash_mb: int):
    if searcher is not None:
        return searcher
    if engine is not None:
        return _external(engine)
    return _engine(hash_mb)


def evaluate_line(start_fen: str, moves: Sequence[str], lo: int, hi: int, depth: int | None = DEFAULT_DEPTH,
                  movetime_ms: int | None = None, hash_mb: int = DEFAULT_HASH_MB,
                  on_position: Callable[[int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None, searcher: Any = None,
                  engine: EngineCommand | None = None) -> list[PositionEval]:
    """Evaluations of the positions ``lo .. hi - 1`` of the line ``moves`` (ICCS) from ``start_fen``.

    Position ``i`` is the one after the first ``i`` moves (0: the start); ``hi`` may be at most
    ``len(moves) + 1``, and the position after the last move is scored as final (see
    :func:`evaluate_position`). Plain data in and out, so it runs in a worker process;
    ``on_position(i)`` is called after position ``i`` is done; when ``cancelled()`` is true before
    a position, :class:`ReviewCancelled` is raised. Raises ValueError for a bad range or limit,
    and IllegalMoveError for an illegal move. ``searcher``: an object with ``new_game()`` and
    ``search(board, limit)`` like :class:`xiangqi.engine.Engine` (an added engine,
    :class:`xiangqi.app.opponents.engines.ExternalSearcher`) in place of this thread's built-in engine;
    ``engine``: an :class:`EngineCommand` (plain data, so it goes to a worker process too): this
    thread's running process of that external engine searches instead (started at first use).
    """
    if not 0 <= lo <= hi <= len(moves) + 1:
        raise ValueError(f"bad position range {lo}..{hi} for {len(moves)} moves")
    limit = _make_limit(depth, movetime_ms)
    engine = _searcher(searcher, engine, hash_mb)
    board = Board(start_fen)
    for text in moves[:lo]:
        board.push(Move.from_iccs(text))
    out = []
    for i in range(lo, hi):
        if cancelled is not None and cancelled():
            raise ReviewCancelled(f"cancelled before position {i}")
        if i > lo:
            board.push(Move.from_iccs(moves[i - 1]))
        out.append(evaluate_position(engine, board, limit, final=(i == len(moves))))
        if on_position is not None:
            on_position(i)
    return out


def _mover_drops(start_fen: str, moves: Sequence[str], evals: Sequence[PositionEval]) -> list[float | None]:
    """Each ply's drop in the mover's win chance from ``evals`` (None when the move is the engine's)."""
    red = Board(start_fen).turn
    out: list[float | None] = []
    for i, text in enumerate(moves):
        sign = 1 if (i % 2 == 0) == red else -1
        b, a = evals[i], evals[i + 1]
        out.append(None if b.best == text else sign * (b.win - a.win))
    return out


def _deep_limit(depth: int | None, deep: int | None, movetime_ms: int | None):
    """The second pass's limit, or None when there is none: ``deep`` plies with a depth limit (when
    deeper than the first pass), four times the first pass's time with a time limit."""
    from xiangqi.engine.api import Limit

    if not deep:
        return None
    if movetime_ms is not None:
        return Limit(time=4 * movetime_ms / 1000.0)
    d = DEFAULT_DEPTH if depth is None else int(depth)
    if not 1 <= deep <= 60:
        raise ValueError(f"deep must be 1-60, got {deep}")
    return Limit(depth=deep) if deep > d else None


def refine_line(start_fen: str, moves: Sequence[str], evals: Sequence[PositionEval],
                depth: int | None = DEFAULT_DEPTH, deep: int | None = None, movetime_ms: int | None = None,
                hash_mb: int = DEFAULT_HASH_MB, *, min_drop: float | None = None,
                cancelled: Callable[[], bool] | None = None, searcher: Any = None,
                engine: EngineCommand | None = None) -> list[PositionEval]:
    """The second pass: ``evals`` (of every position of the line, :func:`evaluate_line`) with the
    positions around each candidate mark searched again, deeper (``deep`` plies, or four times the
    time with ``movetime_ms``; ``deep`` None or not deeper than ``depth``: ``evals`` unchanged).

    A candidate is a ply that is not the engine's move and whose drop in win chance is at least
    ``min_drop`` (default :data:`DEEP_DROP`); the positions before and after it are searched
    again. That changes the drops of the neighbouring plies, so the candidates are found again on
    the new evaluations until no ply with such a drop has a position left at the first pass's
    depth (each position is searched deeply at most once). Every search starts from a cleared
    table and the candidates depend only on the evaluations, so the result is as deterministic as
    the first pass. Returns a new list; raises :class:`ReviewCancelled` when ``cancelled()``.
    """
    limit = _deep_limit(depth, deep, movetime_ms)
    out = list(evals)
    if limit is None:
        return out
    if len(out) != len(moves) + 1:
        raise ValueError(f"{len(moves)} moves need {len(moves) + 1} evaluations, got {len(out)}")
    threshold = DEEP_DROP if min_drop is None else float(min_drop)
    eng = _searcher(searcher, engine, hash_mb)
    boards = [Board(start_fen)]
    for text in moves:
        b = boards[-1].copy()
        b.push(Move.from_iccs(text))
        boards.append(b)
    deepened: set[int] = set()
    while True:
        todo = set()
        for i, d in enumerate(_mover_drops(start_fen, moves, out)):
            if d is not None and d >= threshold:
                todo.update(j for j in (i, i + 1) if j not in deepened and out[j].over is None)
        if not todo:
            return out
        for j in sorted(todo):
            if cancelled is not None and cancelled():
                raise ReviewCancelled(f"cancelled in the second pass, before position {j}")
            out[j] = evaluate_position(eng, boards[j], limit, final=(j == len(moves)))
            deepened.add(j)


#: The confirmation step's candidates: a ply that is not the engine's move and whose first-pass loss
#: is at least this many centipawns (clamped, the mover's view) or whose drop is an inaccuracy or
#: more. 30 cp: against Fairy-Stockfish at depth 16, 40 cp left out 10 of the weak tuning games' 46
#: blunders; 30 brings 2 of them in for 15 % more candidates (docs/REVIEW.md, "Confirmation, second
#: version").
CONFIRM_MIN_CP = 30
#: The confirmed classes: the deeper search's centipawn loss (clamped to ±CONFIRM_CLAMP_CP, the
#: mover's view) for a blunder / mistake / inaccuracy. Chosen on the weak tuning games at confirmation
#: depth 11 against Fairy-Stockfish's losses at depth 16 (docs/REVIEW.md, "Confirmation, second
#: version"): 45 cp the highest mistake threshold that marks >= 80 % of its blunders. The blunder
#: threshold, 220 cp, and :data:`CONFIRM_SECOND_CP` were refitted with the repetition rule on the
#: same games by ``bench/fit_review_confirm.py`` (the most robust ``confirmed - 4 x unconfirmed``
#: ??; docs/REVIEW.md, "Confirmation, third version").
CONFIRM_THRESHOLDS = ((220, "blunder"), (45, "mistake"), (40, "inaccuracy"))
#: The confirmation's clamp (centipawns, ours): its losses are computed on scores clamped to ±650.
#: Our scores saturate where the reference's grow (on the weak tuning games every position ours
#: scores 600-700 the reference scores >= 1000, its clamp; ours 500-600: 22 %), so ±650 of ours is
#: the reference's ±1000: a move from +700 to a mate is no loss, as it is for the reference
#: (docs/REVIEW.md, "Confirmation, second version").
CONFIRM_CLAMP_CP = 650
#: A confirmed blunder also needs the played move to lose at least this many centipawns (clamped)
#: to the second-best move of a multi-PV 2 search at the confirmation depth: a move that is about as
#: good as the second-best loses only to a single move of ours, and our "only moves" were the
#: commonest false ?? against the reference (docs/REVIEW.md). Such a move is a mistake instead.
#: 150 cp: fitted with the blunder threshold (:data:`CONFIRM_THRESHOLDS`; 100 in the second version).
CONFIRM_SECOND_CP = 150
#: The confirmation's method, counted up when its rules change (2: the ±650 clamp, the second-best
#: check, the 30 cp candidates and the 45 cp mistakes; 3: no blunder on a repetition verdict of the
#: search, :attr:`PositionEval.repetition`, and the blunder line refitted: 220 cp, 150 cp to the
#: second-best), so that a stored review confirmed by an older method is not served as a current one
#: (``app.training.review.line_digest``).
CONFIRM_VERSION = 3
#: The confirmation depth of ``xiangqi analyse`` and the review page (our engine): 11, chosen with
#: the thresholds above (depth 12 was no better and cost more; docs/REVIEW.md, "Confirmation").
DEFAULT_CONFIRM_DEPTH = 11


def _clamped_loss(red: bool, before: PositionEval, after: PositionEval, ceiling: int = CP_CEILING) -> int:
    sign = 1 if red else -1
    cb = max(-ceiling, min(ceiling, before.cp))
    ca = max(-ceiling, min(ceiling, after.cp))
    return max(0, sign * (cb - ca))


def confirm_candidates(start_fen: str, moves: Sequence[str], evals: Sequence[PositionEval], *,
                       min_cp: int | None = None) -> list[int]:
    """The plies (0-based, in order) that :func:`confirm_line` searches again: not the first pass's
    best move, the position before not over, and a clamped centipawn loss of at least ``min_cp``
    (default :data:`CONFIRM_MIN_CP`) or a win-chance drop of an inaccuracy or more. ``evals``: every
    position of the line (``len(moves) + 1``). No search: cheap, so a caller can count the work."""
    floor = CONFIRM_MIN_CP if min_cp is None else int(min_cp)
    out = []
    red = Board(start_fen).turn  # the mover of ply i (a legal line alternates)
    for i, text in enumerate(moves):
        b, a = evals[i], evals[i + 1]
        if b.best != text and b.over is None:
            drop = (1 if red else -1) * (b.win - a.win)
            if _clamped_loss(red, b, a) >= floor or drop >= THRESHOLDS[-1][0]:
                out.append(i)
        red = not red
    return out


def _second_best(engine, board: Board, depth: int, best: str | None) -> PositionEval | None:
    """The best line not starting with ``best`` (ICCS) of a multi-PV 2 search of ``board`` at
    ``depth`` from a cleared table, as a :class:`PositionEval` (Red's side; ``best`` its first move),
    or None when the position has a single legal move or ``engine`` cannot search several lines
    (only :class:`xiangqi.engine.Engine` does: it keeps them in ``last_lines``)."""
    from xiangqi.engine.api import Limit, _int_to_move, _score_fields

    if not hasattr(engine, "last_lines"):
        return None
    engine.new_game()
    res = engine.search(board, Limit(depth=int(depth)), multipv=2)
    lines = list(engine.last_lines)
    if res.move is None or len(lines) < 2:
        return None
    score, pv = next((ln for ln in lines if _int_to_move(ln[1][0]).iccs() != best), lines[1])
    cp, mate = _score_fields(int(score))
    sign = 1 if board.turn else -1
    if mate is not None:
        mate = sign * mate
        cp = (MATE_CP - abs(mate)) * (1 if mate > 0 else -1)
    elif abs(cp) >= _RULE_WIN_CP:
        cp = MATE_CP if sign * cp > 0 else -MATE_CP
    else:
        cp = sign * int(cp)
    moves = tuple(_int_to_move(m).iccs() for m in pv)
    return PositionEval(cp, mate, moves[0], moves, int(res.depth), int(res.nodes))


def confirm_line(start_fen: str, moves: Sequence[str], evals: Sequence[PositionEval], depth: int,
                 hash_mb: int = DEFAULT_HASH_MB, *, min_cp: int | None = None,
                 cancelled: Callable[[], bool] | None = None, searcher: Any = None,
                 engine: EngineCommand | None = None,
                 on_progress: Callable[[int, int], None] | None = None,
                 second: bool = True, second_from: int | None = None,
                 ) -> dict[int, tuple[PositionEval, PositionEval | None, PositionEval | None]]:
    """The confirmation step: each candidate ply searched again, deeper, and judged child against child.

    ``evals``: the first pass (every position of the line, :func:`evaluate_line`). The candidates
    are :func:`confirm_candidates`'s. For each, the position before it is searched at ``depth`` (its
    best move and score: the best alternative), and, unless the played move is that best move, the
    position after it at ``depth - 1``, so the played move and the best one are both valued by a
    search ``depth`` plies deep from the same position. When that loss (clamped to
    :data:`CONFIRM_CLAMP_CP`) reaches the blunder threshold and ``second``, the position before is
    searched once more, multi-PV 2 at ``depth``, for the second-best move (:func:`classify_confirmed`
    asks the played move to lose to it too). Returns ``{i: (before, after, second_best)}``
    (``after`` None when the deeper search prefers the played move; ``second_best`` None when not
    searched or there is no second move; ``second_from``: the loss from which it is searched, default
    the blunder threshold; it is not searched when the score after the move is a repetition verdict,
    :attr:`PositionEval.repetition`, as such a ply is no blunder); every search starts from a
    cleared table, so the result is
    deterministic. ``on_progress(k, n)`` is told ``k`` of the ``n`` candidates are done (first with
    ``k = 0``, once the candidates are known). Raises ValueError for a depth under 2 or mismatched
    counts, :class:`ReviewCancelled` when ``cancelled()``.
    """
    from xiangqi.engine.api import Limit

    if not 2 <= int(depth) <= 60:
        raise ValueError(f"confirmation depth must be 2-60, got {depth}")
    if len(evals) != len(moves) + 1:
        raise ValueError(f"{len(moves)} moves need {len(moves) + 1} evaluations, got {len(evals)}")
    eng = _searcher(searcher, engine, hash_mb)
    floor2 = CONFIRM_THRESHOLDS[0][0] if second_from is None else int(second_from)
    candidates = confirm_candidates(start_fen, moves, evals, min_cp=min_cp)
    if on_progress is not None:
        on_progress(0, len(candidates))
    board = Board(start_fen)
    out: dict[int, tuple[PositionEval, PositionEval | None, PositionEval | None]] = {}
    todo = set(candidates)
    for i, text in enumerate(moves):
        mv = Move.from_iccs(text)
        if i in todo:
            if cancelled is not None and cancelled():
                raise ReviewCancelled(f"cancelled in the confirmation, before ply {i + 1}")
            deep_b = evaluate_position(eng, board, Limit(depth=int(depth)))
            deep_a = second_b = None
            if deep_b.best != text:
                board.push(mv)
                deep_a = evaluate_position(eng, board, Limit(depth=int(depth) - 1),
                                           final=(i + 1 == len(moves)))
                board.pop()
                if second and not deep_a.repetition and _clamped_loss(board.turn, deep_b, deep_a,
                                                                      CONFIRM_CLAMP_CP) >= floor2:
                    second_b = _second_best(eng, board, int(depth), deep_b.best)
            out[i] = (deep_b, deep_a, second_b)
            if on_progress is not None:
                on_progress(len(out), len(candidates))
        board.push(mv)
    return out


def classify_confirmed(red: bool, before: PositionEval, after: PositionEval | None,
                       second: PositionEval | None = None, *, ceiling: int = CONFIRM_CLAMP_CP,
                       second_cp: int = CONFIRM_SECOND_CP,
                       thresholds: Sequence[tuple[int, str]] = CONFIRM_THRESHOLDS) -> tuple[str, int]:
    """The class and clamped centipawn loss of a confirmed ply (:func:`confirm_line`'s triple; ``red``
    the mover): ``good`` with loss 0 when the deeper search prefers the move (``after`` None),
    else blunder / mistake / inaccuracy from ``thresholds`` (default :data:`CONFIRM_THRESHOLDS`,
    best first: ``(cp, class)``) on the loss clamped to ``ceiling``; a blunder whose played move
    loses less than ``second_cp`` to the second-best move ``second`` (or is that move) is a
    mistake (without ``second`` no such check is made), and so is a blunder whose ``after`` score
    is a repetition verdict of the search (:attr:`PositionEval.repetition`; the reason:
    :func:`_no_blunder_on_repetition`)."""
    if after is None:
        return "good", 0
    loss = _clamped_loss(red, before, after, ceiling)
    for threshold, name in thresholds:
        if loss >= threshold:
            if name == "blunder" and after.repetition:
                return "mistake", loss
            if name == "blunder" and second is not None:
                sign = 1 if red else -1
                c2 = max(-ceiling, min(ceiling, second.cp))
                ca = max(-ceiling, min(ceiling, after.cp))
                if sign * (c2 - ca) < second_cp:
                    return "mistake", loss
            return name, loss
    return "good", loss


def _no_blunder_on_repetition(cls: str, after: PositionEval) -> str:
    """``cls``, but a mistake instead of a blunder when the position after the move is scored by a
    repetition verdict of the search (:attr:`PositionEval.repetition`).

    Why: the kernels rule a cycle at its second occurrence (a draw, or ±REP_WIN for a perpetual
    check), while the game's rules (and the referee, :meth:`Board.outcome`) rule only later, and the
    side that would lose by the cycle may still leave it. So the verdict is a bound on the outcome
    of one line, not an evaluation of the position: on the weak games against Fairy-Stockfish at
    depth 16 such plies (a lost side giving perpetual check, scored as losing 1,000+ cp; a winning
    side allowing a repetition, scored as a draw) were the reference's best or near-best moves
    (docs/REVIEW.md, "Confirmation, third version"). A verdict on the game's own position (the
    game is over) is not a search verdict and is not affected."""
    return "mistake" if cls == "blunder" and after.repetition and after.over is None else cls


def evaluate_game(start_fen: str, moves: Sequence[str], depth: int | None = DEFAULT_DEPTH,
                  movetime_ms: int | None = None, hash_mb: int = DEFAULT_HASH_MB, deep: int | None = None,
                  on_position: Callable[[int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None, searcher: Any = None,
                  engine: EngineCommand | None = None) -> list[PositionEval]:
    """Every position of the line evaluated: :func:`evaluate_line`, then :func:`refine_line`'s
    second pass at ``deep``. Arguments and errors as theirs."""
    evals = evaluate_line(start_fen, moves, 0, len(moves) + 1, depth, movetime_ms, hash_mb, on_position,
                          cancelled, searcher, engine)
    return refine_line(start_fen, moves, evals, depth, deep, movetime_ms, hash_mb, cancelled=cancelled,
                       searcher=searcher, engine=engine)


# ---------------------------------------------------------------------------
# The review
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class PlyReview:
    """One ply of a reviewed game.

    ``ply`` 1-based; ``move`` ICCS and ``text`` Chinese notation; ``color`` ``"red"``/``"black"``
    (the mover); ``before``/``after`` the evaluations of the positions before and after the move
    (Red's side); ``best`` the engine's move in the position before and ``line`` its line (ICCS,
    starting with ``best``); ``win_before``/``win_after`` the mover's win chance (-100..100);
    ``drop`` = ``win_before - win_after`` (negative when the move did better than expected);
    ``cp_loss`` the mover's centipawn loss (evaluations clamped to ±CP_CEILING, at least 0);
    ``cls`` one of :data:`CLASSES`; ``accuracy`` lichess's move accuracy (0..100).
    """

    ply: int
    move: str
    text: str
    color: str
    before: PositionEval
    after: PositionEval
    best: str | None
    line: tuple[str, ...]
    win_before: float
    win_after: float
    drop: float
    cp_loss: int
    cls: str
    accuracy: float

    @property
    def symbol(self) -> str:
        """``?!``, ``?``, ``??`` or "" (best and good moves)."""
        return SYMBOLS.get(self.cls, "")

    def to_dict(self) -> dict:
        """JSON-ready fields: ``eval``/``mate`` are Red's side after the move, ``eval_before``/``mate_before``
        before it; ``win`` Red's win chance after the move (-100..100, for a graph)."""
        return {"ply": self.ply, "move": self.move, "text": self.text, "color": self.color,
                "eval": self.after.cp, "mate": self.after.mate, "eval_before": self.before.cp,
                "mate_before": self.before.mate, "best": self.best, "line": list(self.line),
                "class": self.cls, "symbol": self.symbol, "win": round(self.after.win, 2),
                "drop": round(self.drop, 2), "cp_loss": self.cp_loss, "accuracy": round(self.accuracy, 2),
                "depth": self.after.depth, "tb_before": self.before.tb, "tb_after": self.after.tb}


@dataclasses.dataclass(frozen=True)
class SideSummary:
    """One side's totals: ``accuracy`` (0..100, lichess's game accuracy; None without moves),
    ``acpl`` average centipawn loss (None without moves), ``moves`` and the counts per class."""

    accuracy: float | None
    acpl: float | None
    moves: int
    inaccuracies: int
    mistakes: int
    blunders: int

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {"accuracy": None if self.accuracy is None else round(self.accuracy, 1),
                "acpl": None if self.acpl is None else round(self.acpl, 1), "moves": self.moves,
                "inaccuracies": self.inaccuracies, "mistakes": self.mistakes, "blunders": self.blunders}


@dataclasses.dataclass(frozen=True)
class GameReview:
    """The review of one game's main line.

    ``start_fen`` the first position; ``initial`` its evaluation; ``plies`` one
    :class:`PlyReview` each; ``red``/``black`` the :class:`SideSummary` of each side; ``limit``
    what each position was searched with (``{"depth": N}`` or ``{"movetime_ms": T}``, plus
    ``"hash_mb"``); ``headers`` the game's tags; ``errors`` problems of the record (the review
    covers the moves read before the first one).
    """

    start_fen: str
    initial: PositionEval
    plies: tuple[PlyReview, ...]
    red: SideSummary
    black: SideSummary
    limit: dict
    headers: dict
    errors: tuple[str, ...] = ()

    def evals(self) -> list[PositionEval]:
        """Evaluations of every position: the start, then after each ply."""
        return [self.initial] + [p.after for p in self.plies]

    def biggest_mistake(self) -> PlyReview | None:
        """The ply with the largest drop in win chance among the inaccuracies, mistakes and blunders."""
        bad = [p for p in self.plies if p.cls in NAGS]
        return max(bad, key=lambda p: (p.drop, -p.ply)) if bad else None

    def to_dict(self) -> dict:
        """JSON-ready dict: ``accuracy`` {"red", "black"}, ``acpl``, ``counts``, ``sides``, ``plies``, …"""
        return {
            "headers": {k: self.headers.get(k, "") for k in ("Event", "Date", "Red", "Black", "Result")},
            "start_fen": self.start_fen,
            "limit": dict(self.limit),
            "accuracy": {"red": self.red.to_dict()["accuracy"], "black": self.black.to_dict()["accuracy"]},
            "acpl": {"red": self.red.to_dict()["acpl"], "black": self.black.to_dict()["acpl"]},
            "counts": {side: {"inaccuracy": s.inaccuracies, "mistake": s.mistakes, "blunder": s.blunders}
                       for side, s in (("red", self.red), ("black", self.black))},
            "initial": self.initial.to_dict(),
            "plies": [p.to_dict() for p in self.plies],
            "errors": list(self.errors),
        }

    def to_stored(self) -> dict:
        """A compact JSON-ready form to keep with the game (the evaluations; everything else is
        recomputed by :meth:`from_stored` without a search): ``{"version": 1, "start_fen", "moves",
        "evals", "limit", "headers", "errors"}``."""
        return {"version": STORED_VERSION, "start_fen": self.start_fen, "moves": [p.move for p in self.plies],
                "evals": [e.to_dict() for e in self.evals()], "limit": dict(self.limit),
                "headers": dict(self.headers), "errors": list(self.errors)}

    @classmethod
    def from_stored(cls, d: dict) -> GameReview:
        """The review back from :meth:`to_stored`'s dict (no search). ValueError for another version
        or inconsistent data (e.g. a wrong number of evaluations, an illegal move)."""
        if not isinstance(d, dict) or d.get("version") != STORED_VERSION:
            raise ValueError(f"not a stored review of version {STORED_VERSION}")
        try:
            evals = [PositionEval.from_dict(e) for e in d["evals"]]
            return build_review(d["start_fen"], list(d["moves"]), evals, limit=d.get("limit") or {},
                                headers=d.get("headers") or {}, errors=d.get("errors") or ())
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"bad stored review: {exc!r}") from None

    def annotate(self, game: Game | None = None) -> Game:
        """The game with the review written in: a copy of ``game`` (or a new game from the start
        position and :attr:`headers`), each main-line move with an ``[%eval 0.35,8]`` comment
        (pawns = centipawns / 100, from Red's side, ``#N``/``#-N`` for mates, then the depth)
        before any comment it had, the NAG of its class, a comment such as ``Blunder. 炮二平五
        was best.``, and the engine's line as a variation beside the move. ``game`` must have
        the reviewed moves as its main line (ValueError otherwise).
        """
        if game is None:
            game = Game()
            game.headers.update(self.headers)
            game.setup(self.start_fen)
            node = game
            for p in self.plies:
                node = node._add(Move.from_iccs(p.move))
        else:
            game = copy.deepcopy(game)
        game.headers["Annotator"] = "pyxiangqi " + _limit_text(self.limit)  # e.g. "pyxiangqi depth 8"
        node = game
        board = Board(self.start_fen)
        for p in self.plies:
            nxt = node.next()
            if nxt is None or nxt.move is None or nxt.move.iccs() != p.move:
                raise ValueError(f"ply {p.ply}: the game's main line lacks the reviewed move {p.move}")
            parts = [_eval_comment(p.after)] if p.after.over is None else []
            if p.cls in NAGS:
                nxt.nags.add(NAGS[p.cls])
                best_text = move_to_text(board, Move.from_iccs(p.best), "chinese") if p.best else ""
                parts.append(f"{_WORDS[p.cls]}. {best_text} was best." if best_text else f"{_WORDS[p.cls]}.")
                if p.line:
                    _add_line(node, board, p.line, p.before)
            if nxt.comment:
                parts.append(nxt.comment)
            nxt.comment = " ".join(parts)
            board.push(nxt.move, validate=False)
            node = nxt
        return game


def _limit_text(limit: dict) -> str:
    if "movetime_ms" in limit:
        text = f"movetime {limit['movetime_ms']} ms"
    elif "movetime_s" in limit:
        text = f"movetime {limit['movetime_s']:g} s"
    else:
        text = f"depth {limit.get('depth')}"
    if "deep" in limit:
        text += f", second pass {'4 x movetime' if limit['deep'] == 'x4' else 'depth ' + str(limit['deep'])}"
    if "engine" in limit:
        text = f"{limit['engine']} {text}"
    return text


def _eval_comment(ev: PositionEval) -> str:
    if ev.mate is not None:
        return f"[%eval #{ev.mate},{ev.depth}]"
    return f"[%eval {ev.cp / 100:.2f},{ev.depth}]"


def _add_line(node, board: Board, line: Sequence[str], ev: PositionEval) -> None:
    """Add ``line`` (ICCS, legal from ``board``, the position at ``node``) as a side variation of ``node``."""
    b = board.copy()
    cur = node
    first = True
    for text in line:
        mv = Move.from_iccs(text)
        if not b.is_legal(mv):
            break
        if first and cur.has_variation(mv):
            return  # the played move is the line's first move: nothing to show beside it
        cur = cur._add(mv)
        first = False
        b.push(mv, validate=False)
    if cur is not node:
        cur.comment = _eval_comment(ev)


def _limit_dict(depth: int | None, movetime_ms: int | None, hash_mb: int, deep: int | None = None,
                engine: EngineCommand | None = None, confirm: int | None = None) -> dict:
    if movetime_ms is not None:
        out: dict = {"movetime_ms": int(movetime_ms)}
    else:
        out = {"depth": DEFAULT_DEPTH if depth is None else int(depth)}
    if _deep_limit(depth, deep, movetime_ms) is not None:
        out["deep"] = "x4" if movetime_ms is not None else int(deep)
    if confirm:
        out["confirm"] = int(confirm)
    if engine is not None:
        out["engine"] = " ".join(engine.argv)
    else:
        out["hash_mb"] = hash_mb
    return out


def build_review(start_fen: str, moves: Sequence[str], evals: Sequence[PositionEval], *,
                 limit: dict | None = None, headers: dict | None = None,
                 errors: Iterable[str] = (),
                 confirmed: dict[int, tuple] | None = None) -> GameReview:
    """The :class:`GameReview` of the line ``moves`` (ICCS) from ``start_fen`` given the evaluation of
    each of its ``len(moves) + 1`` positions (:func:`evaluate_line`). Pure computation, no search.
    ``confirmed``: :func:`confirm_line`'s result; the plies in it take :func:`classify_confirmed`'s
    class (the other plies are the ones it found no candidates: their first-pass class stays; an
    endgame table's verdict still comes first). Raises ValueError when the counts do not match.
    """
    if len(evals) != len(moves) + 1:
        raise ValueError(f"{len(moves)} moves need {len(moves) + 1} evaluations, got {len(evals)}")
    board = Board(start_fen)
    red_first = board.turn
    plies: list[PlyReview] = []
    for i, text in enumerate(moves):
        before, after = evals[i], evals[i + 1]
        mv = Move.from_iccs(text)
        red = board.turn
        sign = 1 if red else -1
        wb, wa = sign * before.win, sign * after.win
        cb = sign * max(-CP_CEILING, min(CP_CEILING, before.cp))
        ca = sign * max(-CP_CEILING, min(CP_CEILING, after.cp))
        drop = wb - wa
        acc = move_accuracy(_win_percent(wb), _win_percent(wa))
        plies.append(PlyReview(
            ply=i + 1, move=text, text=move_to_text(board, mv, "chinese"), color="red" if red else "black",
            before=before, after=after, best=before.best, line=before.pv, win_before=wb, win_after=wa,
            drop=drop, cp_loss=max(0, cb - ca),
            cls=classify_by_table(before.tb, after.tb, before.best == text)
            or (classify_confirmed(red, *confirmed[i])[0] if confirmed and i in confirmed
                else _no_blunder_on_repetition(classify(drop, before.best == text), after)),
            accuracy=acc))
        board.push(mv)
    acc = game_accuracy([_win_percent(e.win) for e in evals], red_first)

    def side(color: str) -> SideSummary:
        mine = [p for p in plies if p.color == color]
        return SideSummary(
            accuracy=acc[color], acpl=(sum(p.cp_loss for p in mine) / len(mine)) if mine else None,
            moves=len(mine), inaccuracies=sum(p.cls == "inaccuracy" for p in mine),
            mistakes=sum(p.cls == "mistake" for p in mine), blunders=sum(p.cls == "blunder" for p in mine))

    return GameReview(start_fen=start_fen, initial=evals[0], plies=tuple(plies), red=side("red"),
                      black=side("black"), limit=dict(limit or {}), headers=dict(headers or {}),
                      errors=tuple(errors))


#: A try in "learn from your mistakes" is accepted when it is the engine's move or loses at most this
#: much win chance (-100..100 scale) against the best move's evaluation.
TRY_TOLERANCE = 3.5


def review_move(board: Board, move: Move | str, *, depth: int | None = DEFAULT_DEPTH,
                movetime_ms: int | None = None, hash_mb: int = DEFAULT_HASH_MB) -> PlyReview:
    """Judge one move in ``board`` (not changed; its ``move_stack`` is the history), for a coach
    while playing: the :class:`PlyReview` of that move (two searches: before and after it).
    ``after.best`` is the opponent's best reply (the refutation of a bad move) and ``after.pv``
    its line. Raises IllegalMoveError for an illegal move, ValueError for a bad limit.
    """
    mv = Move.from_iccs(move) if isinstance(move, str) else move
    start = board.root().fen()
    moves = [m.iccs() for m in board.move_stack] + [mv.iccs()]
    b = board.copy()
    b.push(mv)  # IllegalMoveError with the reason
    n = len(moves)
    evals = evaluate_line(start, moves, n - 1, n + 1, depth, movetime_ms, hash_mb)
    # only the last ply matters: build it against the position before the move
    sub = build_review(board.fen(), [mv.iccs()], evals, limit=_limit_dict(depth, movetime_ms, hash_mb))
    return dataclasses.replace(sub.plies[0], ply=n)


def try_move(review: GameReview, ply: int, move: Move | str, *, hash_mb: int | None = None) -> dict:
    """Judge a try at ``ply`` (1-based) of a reviewed game ("learn from your mistakes").

    The position after the try is searched with the review's own limit (and the game's history);
    returns ``{"accepted": bool, "best": bool, "drop": float, "eval": cp, "mate": int | None,
    "reply": ICCS | None}``: accepted when the try is the engine's move or its win chance for the
    mover is at most :data:`TRY_TOLERANCE` below the position's evaluation before the move;
    ``drop`` that loss, ``eval``/``mate`` the position after the try (Red's side), ``reply`` the
    opponent's best answer. Raises ValueError for a ply out of range, IllegalMoveError for an
    illegal move.
    """
    if not 1 <= ply <= len(review.plies):
        raise ValueError(f"ply must be 1-{len(review.plies)}, got {ply}")
    mv = Move.from_iccs(move) if isinstance(move, str) else move
    p = review.plies[ply - 1]
    if p.best == mv.iccs():
        return {"accepted": True, "best": True, "drop": 0.0, "eval": p.before.cp, "mate": p.before.mate,
                "reply": p.line[1] if len(p.line) > 1 else None}
    moves = [q.move for q in review.plies[: ply - 1]]
    board = Board(review.start_fen)
    for text in moves:
        board.push(Move.from_iccs(text), validate=False)
    board.push(mv)  # IllegalMoveError with the reason
    lim = review.limit
    ev = evaluate_line(review.start_fen, moves + [mv.iccs()], ply, ply + 1, lim.get("depth"),
                       lim.get("movetime_ms"), hash_mb or lim.get("hash_mb", DEFAULT_HASH_MB))[0]
    sign = 1 if p.color == "red" else -1
    drop = p.win_before - sign * ev.win
    return {"accepted": drop <= TRY_TOLERANCE, "best": False, "drop": round(drop, 2), "eval": ev.cp,
            "mate": ev.mate, "reply": ev.best}


def _game_line(game: Game) -> tuple[str, list[str]]:
    """Start FEN and main-line moves (ICCS) of ``game``, cut at the first illegal move."""
    board = game.board()
    start = board.fen()
    out = []
    for mv in game.mainline_moves():
        if not board.is_legal(mv):
            break
        board.push(mv, validate=False)
        out.append(mv.iccs())
    return start, out


def review_game(game: Game, *, depth: int | None = DEFAULT_DEPTH, movetime_ms: int | None = None,
                hash_mb: int = DEFAULT_HASH_MB, deep: int | None = None,
                on_progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None,
                engine: EngineCommand | None = None, confirm: int | None = None) -> GameReview:
    """Review ``game``'s main line in this process (``len(moves) + 1`` searches, then the second
    pass's, :func:`evaluate_game`, then the confirmation's at depth ``confirm`` when given,
    :func:`confirm_line`; None or 0: none).

    ``depth`` (default :data:`DEFAULT_DEPTH`) or ``movetime_ms`` per position (a time limit is
    not deterministic); ``deep``: the second pass's depth (None: none); ``engine``: an external
    engine (:class:`EngineCommand`) searches instead of ours. ``on_progress(done, total)`` is
    called after each position of the first pass (``total`` = positions). ``cancelled()`` is
    asked before each position (e.g. ``threading.Event().is_set``): when true,
    :class:`ReviewCancelled` is raised. Safe to call from several threads at once (each thread
    has its own engine). Raises ValueError for a bad limit.
    """
    start, moves = _game_line(game)
    total = len(moves) + 1
    tick = None if on_progress is None else (lambda i: on_progress(i + 1, total))
    evals = evaluate_game(start, moves, depth, movetime_ms, hash_mb, deep, tick, cancelled, engine=engine)
    conf = (confirm_line(start, moves, evals, confirm, hash_mb, cancelled=cancelled, engine=engine)
            if confirm else None)
    return build_review(start, moves, evals,
                        limit=_limit_dict(depth, movetime_ms, hash_mb, deep, engine, confirm),
                        headers=game.headers, errors=game.errors, confirmed=conf)


def review_games(games: Sequence[Game], *, depth: int | None = DEFAULT_DEPTH, movetime_ms: int | None = None,
                 hash_mb: int = DEFAULT_HASH_MB, deep: int | None = None, jobs: int = 1, chunk: int = 16,
                 on_progress: Callable[[int, int], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, executor=None,
                 engine: EngineCommand | None = None, confirm: int | None = None) -> Iterator[GameReview]:
    """Review every game, yielding the reviews in the games' order.

    With ``jobs`` > 1 the positions are searched in that many local processes
    (:class:`concurrent.futures.ProcessPoolExecutor`, spawned), ``chunk`` positions per task, and
    then each game's second pass (``deep``, :func:`refine_line`) as one task; each position is
    searched from a clean TT, so the output is the same for any ``jobs``. ``engine``: an external
    engine (:class:`EngineCommand`; each process starts its own) searches instead of ours.
    ``on_progress(done, total)`` counts first-pass positions over all games, plus, with ``confirm``,
    each confirmed candidate ply (:func:`confirm_candidates`): ``total`` grows by a game's
    candidates when its first pass ends, so ``done`` keeps rising while the confirmations run
    (with processes a game's candidates count as done when its confirmation task returns); ``cancelled()`` is
    asked between positions (between tasks with processes) and stops the work with
    :class:`ReviewCancelled`. ``executor``: a :class:`concurrent.futures.Executor` to use instead
    of a new pool of ``jobs`` processes (kept open, e.g. a warm pool made with :func:`make_pool`,
    or any executor whose workers can import xiangqi; ``jobs`` then sets how many tasks are
    kept queued, twice that). ``confirm``: each game's confirmation depth (:func:`confirm_line`,
    after the second pass; one task per game with processes; None or 0: none). Raises ValueError
    for ``jobs`` < 1 or a bad limit.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    _make_limit(depth, movetime_ms)  # check the limit before any work
    _deep_limit(depth, deep, movetime_ms)
    if confirm and not 2 <= int(confirm) <= 60:
        raise ValueError(f"confirmation depth must be 2-60, got {confirm}")
    lines = [_game_line(g) for g in games]
    total = sum(len(m) + 1 for _, m in lines)
    limit = _limit_dict(depth, movetime_ms, hash_mb, deep, engine, confirm)
    if jobs == 1 and executor is None:
        done = [0]
        extra = [0, 0]  # the confirmations' candidates: done in earlier games, and the current game's

        def tick(_i: int) -> None:
            done[0] += 1
            if on_progress is not None:
                on_progress(done[0] + extra[0], total + extra[0] + extra[1])

        def confirming(k: int, n: int) -> None:
            if on_progress is not None:
                on_progress(done[0] + extra[0] + k, total + extra[0] + n)

        try:
            for g, (start, moves) in zip(games, lines, strict=True):
                evals = evaluate_game(start, moves, depth, movetime_ms, hash_mb, deep, tick, cancelled,
                                      engine=engine)
                conf = None
                if confirm:
                    conf = confirm_line(start, moves, evals, confirm, hash_mb, cancelled=cancelled,
                                        engine=engine, on_progress=confirming)
                    extra[0] += len(conf)
                yield build_review(start, moves, evals, limit=limit, headers=g.headers, errors=g.errors,
                                   confirmed=conf)
        finally:
            if engine is not None:
                close_engines()
        return
    yield from _review_parallel(games, lines, total, limit, depth, movetime_ms, hash_mb, deep, engine, jobs,
                                chunk, on_progress, cancelled, executor, confirm)


def _warm_worker() -> None:
    from xiangqi.engine.api import warmup

    warmup(background=False)


def make_pool(jobs: int):
    """A pool of ``jobs`` spawned processes whose workers load the engine kernels as they start
    (:class:`concurrent.futures.ProcessPoolExecutor`); the caller closes it (``with`` or
    ``shutdown()``). Reuse it across :func:`review_games` calls to pay the start once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_warm_worker)


def _review_parallel(games, lines, total, limit, depth, movetime_ms, hash_mb, deep, engine, jobs, chunk,
                     on_progress, cancelled, executor, confirm=None):
    import contextlib
    from concurrent.futures import FIRST_COMPLETED, wait

    chunk = max(1, int(chunk))
    refine = _deep_limit(depth, deep, movetime_ms) is not None
    tasks = []  # (game index, lo, hi)
    for gi, (_, moves) in enumerate(lines):
        n = len(moves) + 1
        for lo in range(0, n, chunk):
            tasks.append((gi, lo, min(n, lo + chunk)))
    results: dict[tuple[int, int], list[PositionEval]] = {}
    final: dict[int, list[PositionEval]] = {}  # game index -> every evaluation, second pass done
    conf: dict[int, dict | None] = {}  # game index -> its confirmation, done (None: none asked)
    ready: dict[int, list[PositionEval]] = {}  # game index -> evaluations waiting for the confirmation
    extra: dict[int, int] = {}  # game index -> its confirmation's candidates (counted in the progress)
    remaining = [sum(1 for t in tasks if t[0] == gi) for gi in range(len(lines))]
    next_game = 0
    done = 0
    own = executor is None
    with (make_pool(jobs) if own else contextlib.nullcontext(executor)) as pool:
        pending = {}
        queue = iter(tasks)

        def report() -> None:
            """Positions done plus the candidates of the finished confirmations, over the positions
            plus every candidate known so far (the total grows as the games' first passes end)."""
            if on_progress is not None:
                waiting = sum(extra[k] for k in ready)
                on_progress(done + sum(extra.values()) - waiting, total + sum(extra.values()))

        def submit_one() -> bool:
            t = next(queue, None)
            if t is None:
                return False
            gi, lo, hi = t
            start, moves = lines[gi]
            pending[pool.submit(evaluate_line, start, moves, lo, hi, depth, movetime_ms, hash_mb,
                                engine=engine)] = t
            return True

        def first_pass(gi: int) -> list[PositionEval]:
            evals = []
            for lo in range(0, len(lines[gi][1]) + 1, chunk):
                evals.extend(results.pop((gi, lo)))
            return evals

        def passes_done(gi: int, evals: list[PositionEval]) -> bool:
            """Keep the game's evaluations; True when its confirmation was submitted."""
            if not confirm:
                final[gi], conf[gi] = evals, None
                return False
            start, moves = lines[gi]
            ready[gi] = evals
            n = len(confirm_candidates(start, moves, evals))
            extra[gi] = n
            report()
            pending[pool.submit(confirm_line, start, moves, evals, confirm, hash_mb,
                                engine=engine)] = (gi, -2, -2)
            return True

        for _ in range(jobs * 2):  # a few tasks ahead, so that the games come out early and in order
            if not submit_one():
                break
        try:
            while pending:
                finished, _ = wait(list(pending), timeout=0.2, return_when=FIRST_COMPLETED)
                if cancelled is not None and cancelled():
                    raise ReviewCancelled(f"cancelled after {done} of {total} positions")
                for fut in finished:
                    gi, lo, hi = pending.pop(fut)
                    if lo == -2:  # a confirmation
                        final[gi], conf[gi] = ready.pop(gi), fut.result()
                        report()
                        submit_one()
                        continue
                    if lo < 0:  # a second pass
                        if not passes_done(gi, fut.result()):
                            submit_one()
                        continue
                    results[(gi, lo)] = fut.result()
                    remaining[gi] -= 1
                    done += hi - lo
                    report()
                    if remaining[gi] == 0:
                        if refine:  # the game's second pass, as one task
                            start, moves = lines[gi]
                            pending[pool.submit(refine_line, start, moves, first_pass(gi), depth, deep,
                                                movetime_ms, hash_mb, engine=engine)] = (gi, -1, -1)
                            continue
                        if passes_done(gi, first_pass(gi)):
                            continue
                    submit_one()
                while next_game < len(lines) and next_game in final:
                    start, moves = lines[next_game]
                    g = games[next_game]
                    yield build_review(start, moves, final.pop(next_game), limit=limit, headers=g.headers,
                                       errors=g.errors, confirmed=conf.pop(next_game))
                    next_game += 1
        finally:
            for fut in pending:
                fut.cancel()
            if own:
                pool.shutdown(wait=True, cancel_futures=True)


def default_jobs() -> int:
    """Number of processes that ``--jobs 0`` means: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
