"""A small pure-Python search on the core :class:`~xiangqi.core.board.Board` for the weak levels.

On a fresh install the Numba kernels need 15–50 s to compile (DESIGN.md
decision 2), and the first ``xiangqi play`` should still answer at 初级 within
seconds. Until :func:`xiangqi.engine.is_ready` is true the app plays the
levels whose depth is at most :data:`MAX_DEPTH` with this search instead
(see :class:`xiangqi.app.opponents.players.EnginePlayer`).

It plays like the kernel search at those levels: alpha-beta to the level's
depth, then a quiescence search of captures (all evasions while in check, for
the first :data:`QCHECK_PLIES` quiescence plies), with the kernels' delta
pruning and losing-capture test. The evaluation is the material and
piece-square part of :mod:`xiangqi.engine.evaluate` (its ``PST_MG``/``PST_EG``
tables blended by ``PHASE_W`` up to ``PHASE_MAX``, plus the tempo weight
``W[11]``); the pattern terms (mobility, king safety …) are left out to keep
a node cheap. The move is chosen as :meth:`xiangqi.engine.Engine.play` does:
among the best ``multipv`` root moves within ``margin_cp`` of the best, with
probability ``exp((score - best) / temperature_cp)``. Root moves that complete
a repetition the referee forbids (:func:`xiangqi.core.referee.forbidden_moves`)
are dropped unless every move is forbidden.

Importing this module loads no Numba code. The first search imports
:mod:`xiangqi.engine.evaluate` for its tables, which imports
:mod:`xiangqi.engine.movegen`; that compiles (or loads from the cache) only the
perft kernel — about 2 s on a cold cache — not the search kernels.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.engine import consts as K
from xiangqi.engine.api import DEFAULT_QCHECK_PLIES, SearchResult, _score_fields
from xiangqi.engine.levels import Level, get_level

#: Deepest main search this module is used for (初级 searches 2 plies; deeper levels wait for the kernels).
MAX_DEPTH = 2
#: Quiescence plies that search every evasion when in check (as the kernels' DEFAULT_QCHECK_PLIES).
QCHECK_PLIES = DEFAULT_QCHECK_PLIES
#: Node cap of one search: about 1.2 s of CPython 3.11 at the ~50k nodes/s measured on the development
#: machine (a 2-ply search of the start position takes ~2,600 nodes). The search then returns the best
#: root move found so far.
DEFAULT_NODE_LIMIT = 60_000
#: Delta-pruning margin in centipawns, as in the kernels' quiescence search.
DELTA_MARGIN_CP = 150

# Python copies of the evaluation tables of xiangqi.engine.evaluate, filled by _load_tables().
_PST_MG: list[list[int]] = []  # [code + 7][square], Red's view, material included
_PST_EG: list[list[int]] = []
_PHASE_W: list[int] = []
_ORDER: list[int] = []
_PHASE_MAX = 0
_TEMPO = 0


def _load_tables() -> None:
    """Read the tables of :mod:`xiangqi.engine.evaluate` into plain lists (fast indexing in CPython)."""
    global _PHASE_MAX, _TEMPO
    if _PST_MG:
        return
    from xiangqi.engine.evaluate import ORDER_VALUE, PHASE_MAX, PHASE_W, PST_EG, PST_MG, W

    _PST_EG[:] = PST_EG.tolist()
    _PHASE_W[:] = [int(x) for x in PHASE_W]
    _ORDER[:] = [int(x) for x in ORDER_VALUE]
    _PHASE_MAX = int(PHASE_MAX)
    _TEMPO = int(W[11])
    _PST_MG[:] = PST_MG.tolist()  # last: a filled _PST_MG means every table is there


class _Stop(Exception):
    """The node or time limit was reached."""


class _Search:
    """One search: the board (played on and restored), incremental material sums, node counting."""

    def __init__(self, board: Board, node_limit: int, deadline: float | None, stop: Any = None) -> None:
        _load_tables()
        self.board = board
        self.node_limit = node_limit
        self.deadline = deadline
        #: an object with ``is_set()`` (a ``threading.Event``): the search stops when it is set
        self.stop = stop
        self.nodes = 0
        self.seldepth = 0
        mg = eg = ph = 0
        for sq, p in enumerate(board.squares):
            if p:
                mg += _PST_MG[p + 7][sq]
                eg += _PST_EG[p + 7][sq]
                ph += _PHASE_W[abs(p)]
        self.mg, self.eg, self.ph = mg, eg, ph
        self._undo: list[tuple[int, int, int]] = []

    # -- make / unmake with the material sums --------------------------------

    def make(self, m: Move) -> None:
        sq = self.board.squares
        frm, to = m.from_square, m.to_square
        p, c = sq[frm], sq[to]
        self._undo.append((self.mg, self.eg, self.ph))
        pm, pe = _PST_MG[p + 7], _PST_EG[p + 7]
        self.mg += pm[to] - pm[frm]
        self.eg += pe[to] - pe[frm]
        if c:
            self.mg -= _PST_MG[c + 7][to]
            self.eg -= _PST_EG[c + 7][to]
            self.ph -= _PHASE_W[abs(c)]
        self.board.push(m, validate=False)

    def unmake(self) -> None:
        self.board.pop()
        self.mg, self.eg, self.ph = self._undo.pop()

    def evaluate(self) -> int:
        """Material + piece-square score for the side to move (the blend of :func:`evaluate.evaluate`)."""
        ph = min(self.ph, _PHASE_MAX)
        s = (self.mg * ph + self.eg * (_PHASE_MAX - ph)) // _PHASE_MAX
        return (s if self.board.turn else -s) + _TEMPO

    def count(self) -> None:
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise _Stop
        if (self.nodes & 255) == 0:
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                raise _Stop
            if self.stop is not None and self.stop.is_set():
                raise _Stop

    # -- move lists ----------------------------------------------------------

    def ordered_moves(self) -> list[Move]:
        """Legal moves: captures first (MVV-LVA), then quiet moves by piece-square gain."""
        b = self.board
        sq = b.squares
        pst = _PST_MG if self.ph * 2 >= _PHASE_MAX else _PST_EG
        sign = 1 if b.turn else -1

        def key(m: Move) -> int:
            p, c = sq[m.from_square], sq[m.to_square]
            if c:
                return -(1 << 20) - _ORDER[abs(c)] * 64 + _ORDER[abs(p)] // 16
            row = pst[p + 7]
            return -sign * (row[m.to_square] - row[m.from_square])

        return sorted(b.generate_legal_moves(), key=key)

    def captures(self, stand: int, alpha: int) -> list[Move]:
        """Legal captures worth searching in quiescence (delta pruning and the losing-capture test)."""
        b = self.board
        sq = b.squares
        them = not b.turn
        out = []
        for m in b.generate_pseudo_legal_moves():
            c = sq[m.to_square]
            if not c:
                continue
            vc = _ORDER[abs(c)]
            if stand + vc + DELTA_MARGIN_CP <= alpha:
                continue  # even winning this piece cannot lift alpha
            if _ORDER[abs(sq[m.from_square])] > vc and b.is_attacked_by(them, m.to_square):
                continue  # a more valuable piece takes a defended one: a losing capture
            if b.is_legal(m):
                out.append(m)
        out.sort(key=lambda m: -_ORDER[abs(sq[m.to_square])] * 64 + _ORDER[abs(sq[m.from_square])] // 16)
        return out

    # -- search --------------------------------------------------------------

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        if depth <= 0:
            return self.qsearch(alpha, beta, ply, 0)
        self.count()
        moves = self.ordered_moves()
        if not moves:
            return -K.MATE + ply  # mated or stalemated: both lose in xiangqi
        best = -K.INF
        for m in moves:
            self.make(m)
            try:
                s = -self.negamax(depth - 1, -beta, -alpha, ply + 1)
            finally:
                self.unmake()
            if s > best:
                best = s
                if s > alpha:
                    alpha = s
                    if s >= beta:
                        break
        return best

    def qsearch(self, alpha: int, beta: int, ply: int, qply: int) -> int:
        self.count()
        if ply > self.seldepth:
            self.seldepth = ply
        b = self.board
        if b.is_check() and qply < QCHECK_PLIES:
            moves = self.ordered_moves()
            best = -K.MATE + ply
        else:
            stand = self.evaluate()
            if stand >= beta:
                return stand
            alpha = max(alpha, stand)
            moves = self.captures(stand, alpha)
            best = stand
        for m in moves:
            self.make(m)
            try:
                s = -self.qsearch(-beta, -alpha, ply + 1, qply + 1)
            finally:
                self.unmake()
            if s > best:
                best = s
                if s > alpha:
                    alpha = s
                    if s >= beta:
                        break
        return best


def root_moves(board: Board, rules: object | None = None) -> list[Move]:
    """Legal moves of ``board`` less those completing a repetition the referee forbids.

    Uses :func:`xiangqi.core.referee.forbidden_moves` with ``rules`` (None = the
    default CXA rules); when every legal move is forbidden, all are returned (the
    side must still move). Empty when the side to move has no legal move.
    """
    from xiangqi.core.referee import forbidden_moves

    legal = list(board.legal_moves)
    try:
        bad = forbidden_moves(board, rules)
    except XiangqiError:
        bad = {}
    return [m for m in legal if m not in bad] or legal


def search_lines(board: Board, depth: int = MAX_DEPTH, *, margin_cp: int | None = None,
                 node_limit: int = DEFAULT_NODE_LIMIT, time_limit: float | None = None,
                 rules: object | None = None, stop: Any = None) -> tuple[list[tuple[int, Move]], int, int]:
    """Exact scores of the root moves that can be within ``margin_cp`` of the best.

    Returns ``(lines, depth_done, nodes)``: ``lines`` is ``[(score, move), ...]``
    best first (centipawns for the side to move; mate scores as in the kernels,
    ``MATE - ply``), ``depth_done`` the deepest iteration whose scores are used
    (1 … ``depth``; 0 with no legal move). Iterative deepening from depth 1; a
    root move scoring more than ``margin_cp`` below the best is cut off early
    and left out (``margin_cp`` None = every move gets an exact score). Depth 1
    always completes; from depth 2 on the search stops at ``node_limit`` nodes
    or ``time_limit`` seconds or once ``stop`` (a ``threading.Event``) is set, keeping
    the moves of the iteration searched so far (or the previous iteration's when none).
    ``board`` is returned unchanged.
    """
    t0 = time.perf_counter()
    moves = root_moves(board, rules)
    if not moves:
        return [], 0, 0
    work = board.copy()
    # depth 1 (a few hundred nodes) always completes, so that every answer has searched scores
    s = _Search(work, 1 << 62, None)
    lines: list[tuple[int, Move]] = [(0, m) for m in moves]
    done = 0
    for d in range(1, max(1, depth) + 1):
        if d == 2:
            s.node_limit = node_limit
            s.deadline = None if time_limit is None else t0 + time_limit
            s.stop = stop
        cur: list[tuple[int, Move]] = []
        best = -K.INF
        try:
            for _, m in lines:
                # moves below best - margin fail low: their exact score is not needed
                alpha = -K.INF if margin_cp is None or best == -K.INF else best - margin_cp - 1
                s.make(m)
                try:
                    v = -s.negamax(d - 1, -K.INF, -alpha, 1)
                finally:
                    s.unmake()
                if v > alpha:
                    cur.append((v, m))
                    best = max(best, v)
        except _Stop:
            if cur:
                lines, done = sorted(cur, key=lambda x: -x[0]), d
            break
        lines, done = sorted(cur, key=lambda x: -x[0]), d
        if lines[0][0] > K.MATE_BOUND:
            break  # a mate found: deeper iterations cannot improve on it
    return lines, done, s.nodes


def play(board: Board, level: str | Level = "beginner", *, seed: int | None = None,
         node_limit: int = DEFAULT_NODE_LIMIT, time_limit: float | None = None,
         rules: object | None = None, stop: Any = None) -> SearchResult:
    """Choose a move for ``board`` at ``level`` as :meth:`xiangqi.engine.Engine.play` does, in Python.

    The search goes to ``min(level.depth, MAX_DEPTH)`` plies (2 when the level
    sets no depth); the move is drawn among the best ``level.multipv`` moves
    within ``level.margin_cp`` of the best with probability
    ``exp((score - best) / level.temperature_cp)`` (``seed`` makes it
    repeatable; temperature 0 or a mate found plays the best move). The level's
    own time limit is not used (CPython needs longer than the kernels);
    ``node_limit``/``time_limit`` (seconds)/``stop`` bound the search instead. The
    result's ``move`` is None only when the side to move has no legal move.
    Raises :class:`ValueError` for an unknown level.
    """
    lv = get_level(level)
    t0 = time.perf_counter()
    depth = min(lv.depth or MAX_DEPTH, MAX_DEPTH)
    choose = lv.multipv > 1 and lv.temperature_cp > 0
    lines, done, nodes = search_lines(board, depth, margin_cp=lv.margin_cp if choose else 0,
                                      node_limit=node_limit, time_limit=time_limit, rules=rules, stop=stop)
    elapsed = time.perf_counter() - t0
    if not lines:
        return SearchResult(None, None, 0, 0, nodes, elapsed, [])
    best_score, move = lines[0]
    score = best_score
    if choose and best_score <= K.MATE_BOUND:
        cands = [(v, m) for v, m in lines[: lv.multipv] if v >= best_score - lv.margin_cp]
        if len(cands) > 1:
            rng = random.Random(seed)
            weights = [math.exp((v - best_score) / lv.temperature_cp) for v, _ in cands]
            score, move = rng.choices(cands, weights=weights)[0]
    cp, mate = _score_fields(score)
    return SearchResult(move, cp, mate, done, nodes, elapsed, [move])


def best_move(board: Board, *, node_limit: int = DEFAULT_NODE_LIMIT, time_limit: float | None = None,
              rules: object | None = None) -> SearchResult:
    """The best move of a :data:`MAX_DEPTH`-ply search (no random choice), e.g. for a hint.

    Same limits and result as :func:`play`; ``move`` is None when there is no legal move.
    """
    t0 = time.perf_counter()
    lines, done, nodes = search_lines(board, MAX_DEPTH, margin_cp=0, node_limit=node_limit,
                                      time_limit=time_limit, rules=rules)
    if not lines:
        return SearchResult(None, None, 0, 0, nodes, time.perf_counter() - t0, [])
    score, move = lines[0]
    cp, mate = _score_fields(score)
    return SearchResult(move, cp, mate, done, nodes, time.perf_counter() - t0, [move])


__all__ = ["DEFAULT_NODE_LIMIT", "MAX_DEPTH", "QCHECK_PLIES", "best_move", "play", "root_moves",
           "search_lines"]
