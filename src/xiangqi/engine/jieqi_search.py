"""The 揭棋 engine: an expectimax alpha-beta search over the reveals of hidden pieces.

A player never knows what a hidden piece is, only how many of each identity are still face down
(the pool of its view, :meth:`xiangqi.core.jieqi.JieqiBoard.view`). So the search treats the move
of a hidden piece as a *chance node*: one child per identity left in the mover's pool, weighted by
its count (:meth:`~xiangqi.core.jieqi.JieqiBoard.reveal_odds`), the node's value their average.
That is exact at the root (every move the engine may play is judged over all its reveals); below
the root a reveal is played as one representative identity (the one whose value is nearest the
pool's mean, :func:`representative`): averaging there too made depth 2 take half a minute. Max/min nodes
are negamax with alpha-beta; the children of a chance node are searched with a full window (the
average needs exact values), so pruning happens between moves, not between identities.
A hidden piece that is taken is not branched on: it leaves the board and the pool keeps its
identities, so the evaluation counts it, like every hidden piece, at the mean value of its side's
pool — the exact expectation of a linear material count.

Search: iterative deepening to ``depth`` plies (one more in the endgame) within ``movetime``
seconds (the last finished depth's best move is played), a capture-only quiescence search, moves
ordered by the previous iteration's best move, then captures by most valuable victim. Inside the
quiescence search a capture by a hidden piece is not branched on (the branching made it explode)
but scored by a one-step exchange estimate (:meth:`JieqiSearch._hidden_capture_gain`). Evaluation
(:func:`evaluate`): material (values below, a pawn worth more across the river), hidden pieces at
their pool's mean, small bonuses for advanced horses/rooks/pawns, central cannons and attackers near
the enemy king; in the endgame (14 pieces or fewer, or a side down to 2 besides its king) the
points each king can step to, and past 80
plies without a capture or a reveal the whole score fades towards the 120-ply draw. A position
repeated inside the search is valued 0 (the draw it leads to), so a side that is ahead plays on
instead of repeating.

Pure Python, a few thousand nodes per second: depth 2 plus quiescence in well under a second per
move (docs/JIEQI.md has the measured results against a random and a greedy mover).
"""

from __future__ import annotations

import dataclasses
import random as _random
import time
from collections.abc import Callable

from xiangqi.core.jieqi import JieqiBoard, JieqiMove

__all__ = [
    "VALUES",
    "evaluate",
    "JieqiSearch",
    "SearchResult",
    "random_mover",
    "representative",
    "greedy_mover",
    "LEVELS",
    "player_for",
]

#: Material values (centipawns; a pawn across the river: :data:`PAWN_CROSSED`). Advisors and
#: elephants are worth more than in xiangqi: once revealed they go anywhere.
VALUES = {"K": 0, "R": 600, "N": 270, "C": 285, "A": 130, "B": 125, "P": 60}
PAWN_CROSSED = 110
MATE = 100_000
_INF = 10 * MATE


def _pool_mean(board: JieqiBoard, side: bool) -> float:
    pool = board.pool[side]
    total = sum(pool.values())
    if not total:
        return 0.0
    return sum(VALUES[k] * n for k, n in pool.items()) / total


def evaluate(board: JieqiBoard) -> float:
    """The position's value for the side to move (centipawns, positive is good for it)."""
    score = 0.0
    means = {True: _pool_mean(board, True), False: _pool_mean(board, False)}
    kings = {True: board.squares.index("K"), False: board.squares.index("k")}
    for sq, ch in enumerate(board.squares):
        if ch is None:
            continue
        side = ch.isupper()
        rank, f = sq // 9, sq % 9
        adv = rank if side else 9 - rank  # ranks advanced from its own back rank
        if ch in "Xx":
            v = means[side]
        else:
            k = ch.upper()
            if k == "K":
                continue
            if k == "P":
                v = PAWN_CROSSED + (8 if 5 <= adv <= 8 and 2 <= f <= 6 else 0) if adv >= 5 else VALUES["P"]
            else:
                v = VALUES[k]
                if k == "N":
                    v += 6 * min(adv, 6) - (10 if f in (0, 8) else 0)
                elif k == "R":
                    v += 4 * min(adv, 7)
                elif k == "C":
                    v += 12 if f == 4 else 0
                if k in "RNCP":  # pressure on the enemy palace
                    ek = kings[not side]
                    if abs(ek % 9 - f) <= 2 and abs(ek // 9 - rank) <= 3:
                        v += 15
        score += v if side else -v
    if _endgame(board):
        # the endgame: a king with fewer free points is nearer mate (drives the mating side on)
        score += KING_FREEDOM * (_king_freedom(board, True) - _king_freedom(board, False))
    if board.halfmove > 80:  # near the 120-ply draw: the advantage fades unless something happens
        score *= max(0.0, (120 - board.halfmove) / 40)
    return score if board.turn else -score


#: Pieces on the board (kings included) at or below which :data:`KING_FREEDOM` counts.
ENDGAME_PIECES = 14
#: Centipawns per point a king may step to unattacked, in the endgame.
KING_FREEDOM = 12


def _endgame(board: JieqiBoard) -> bool:
    """Few pieces on the board (:data:`ENDGAME_PIECES`, kings included), or a side down to
    :data:`BARE` pieces besides its king: mating matters more than material now."""
    red = black = 0
    for ch in board.squares:
        if ch is not None and ch not in "Kk":
            if ch.isupper():
                red += 1
            else:
                black += 1
    return red + black + 2 <= ENDGAME_PIECES or min(red, black) <= BARE


#: A side with this many pieces or fewer besides its king counts as an endgame for :func:`_endgame`.
BARE = 2


def _king_freedom(board: JieqiBoard, side: bool) -> int:
    """The points next to ``side``'s king (in its palace) it could step to: empty or enemy, and
    not attacked by the other side with the king gone from its square."""
    from xiangqi.core.jieqi import KING_STEPS

    s = board.squares
    ksq = board.king_square(side)
    king = s[ksq]
    s[ksq] = None
    try:
        n = 0
        for t in KING_STEPS[side][ksq]:
            ch = s[t]
            if (ch is None or ch.isupper() != side) and not board.attacked(t, not side):
                n += 1
        return n
    finally:
        s[ksq] = king


def _victim_value(board: JieqiBoard, sq: int) -> float:
    ch = board.squares[sq]
    if ch is None:
        return 0.0
    if ch in "Xx":
        return _pool_mean(board, ch.isupper())
    return VALUES[ch.upper()]


@dataclasses.dataclass
class SearchResult:
    """A search's answer: ``move`` (without identities), ``score`` for the side to move
    (centipawns; near ±100000 a mate), ``depth`` completed, ``nodes`` searched, ``seconds``."""

    move: JieqiMove | None
    score: float
    depth: int
    nodes: int
    seconds: float


class _Timeout(Exception):
    pass


class JieqiSearch:
    """Expectimax alpha-beta (module text) to ``depth`` plies within ``movetime`` seconds;
    ``qdepth`` bounds the quiescence plies. Not thread-safe: one search at a time per object."""

    def __init__(self, depth: int = 2, movetime: float = 1.0, qdepth: int = 3) -> None:
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        self.depth, self.movetime, self.qdepth = depth, movetime, qdepth
        self.nodes = 0
        self._deadline = 0.0
        self._best_root: tuple[int, int] | None = None

    def _ordered(self, board: JieqiBoard, moves: list[JieqiMove]) -> list[JieqiMove]:
        best = self._best_root

        def key(m: JieqiMove) -> float:
            if best is not None and (m.frm, m.to) == best:
                return -1e9
            v = _victim_value(board, m.to)
            return -(v * 10 - _victim_value(board, m.frm)) if v else 0.0

        return sorted(moves, key=key)

    def _child(self, board: JieqiBoard, m: JieqiMove, fn: Callable[[], float], exact: bool = True) -> float:
        """The value for the mover of making ``m`` (a chance node when it moves a hidden piece):
        ``fn`` gives the value of the position after it for the side then to move. ``exact`` False
        (below the root) plays the reveal as one representative identity instead of averaging
        over all of them (:func:`representative`)."""
        if board.is_hidden(m.frm) and not exact:
            board.push_unchecked(JieqiMove(m.frm, m.to, representative(board, board.turn), None))
            try:
                return -fn()
            finally:
                board.pop()
        if board.is_hidden(m.frm):
            total = 0.0
            side = board.turn
            for ident, p in board.reveal_odds(side):
                board.push_unchecked(JieqiMove(m.frm, m.to, ident, None))
                try:
                    total += p * -fn()
                finally:
                    board.pop()
            return total
        board.push_unchecked(m)
        try:
            return -fn()
        finally:
            board.pop()

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes & 255 == 0 and time.monotonic() > self._deadline:
            raise _Timeout

    def _quiesce(self, board: JieqiBoard, alpha: float, beta: float, qd: int, ply: int) -> float:
        self._tick()
        stand = evaluate(board)
        if stand >= beta or qd <= 0:
            return stand
        alpha = max(alpha, stand)
        s = board.squares
        caps = [(f, t) for f, t in board.pseudo_moves() if s[t] is not None]
        if not caps:
            return stand
        best = stand
        for m in self._ordered_fast(board, [JieqiMove(f, t) for f, t in caps]):
            if s[m.to] in "Kk":  # the king can be taken: the last move was illegal
                return MATE
            if not board._safe_after(m.frm, m.to):
                continue
            if board.is_hidden(m.frm):
                v = stand + self._hidden_capture_gain(board, m)
            else:
                v = self._child(board, m, lambda a=alpha: self._quiesce(board, -beta, -a, qd - 1, ply + 1))
            if v > best:
                best = v
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    break
        return best

    @staticmethod
    def _hidden_capture_gain(board: JieqiBoard, m: JieqiMove) -> float:
        """A capture by a hidden piece inside the quiescence search, not branched on: the victim's
        value, less the mover's expected value (its pool's mean) when the opponent then attacks the
        square (a one-step exchange estimate)."""
        s = board.squares
        gain = _victim_value(board, m.to)
        piece, target = s[m.frm], s[m.to]
        s[m.to], s[m.frm] = piece, None
        try:
            attacked = board.attacked(m.to, not board.turn)
        finally:
            s[m.frm], s[m.to] = piece, target
        return gain - (_pool_mean(board, board.turn) if attacked else 0.0)

    def _search(self, board: JieqiBoard, depth: int, alpha: float, beta: float, ply: int) -> float:
        if ply > 0 and board._keys[-1] in board._keys[:-1]:
            return 0.0  # a repetition: valued as the draw it leads to
        if depth <= 0:
            return self._quiesce(board, alpha, beta, self.qdepth, ply)
        self._tick()
        moves = board.legal_moves()
        if not moves:
            return -MATE + ply  # mate and stalemate both lose
        best = -_INF
        for m in self._ordered(board, moves) if ply == 0 else self._ordered_fast(board, moves):
            chance = ply == 0 and board.is_hidden(m.frm)
            a, b = (-_INF, _INF) if chance else (-beta, -alpha)
            v = self._child(
                board, m, lambda a=a, b=b: self._search(board, depth - 1, a, b, ply + 1), exact=ply == 0
            )
            if v > best:
                best = v
                if ply == 0:
                    self._root_best = m
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    break
        return best

    def _ordered_fast(self, board: JieqiBoard, moves: list[JieqiMove]) -> list[JieqiMove]:
        s = board.squares
        return sorted(
            moves,
            key=lambda m: (
                -(_victim_value(board, m.to) * 10 - _victim_value(board, m.frm))
                if s[m.to] is not None
                else 0.0
            ),
        )

    def search(self, board: JieqiBoard) -> SearchResult:
        """The best move for the side to move of ``board`` (a view: its pools are what the mover
        knows). ``board`` is left as it was. Returns ``move`` None when there is no legal move."""
        start = time.monotonic()
        self._deadline = start + self.movetime
        self.nodes = 0
        self._best_root = None
        work = board.copy()
        moves = work.legal_moves()
        if not moves:
            return SearchResult(None, -MATE, 0, 0, 0.0)
        result = SearchResult(moves[0], 0.0, 0, 0, 0.0)
        if len(moves) == 1:
            result.seconds = time.monotonic() - start
            return result
        # in the endgame (few pieces, a cheap tree) one ply more, time permitting: mates need it
        extra = 1 if _endgame(work) else 0
        for depth in range(1, self.depth + extra + 1):
            self._root_best = None
            try:
                score = self._search(work, depth, -_INF, _INF, 0)
            except _Timeout:
                # undo whatever the interrupted search left pushed
                while len(work._stack) > len(board._stack):
                    work.pop()
                if self._root_best is not None:  # the best of the root moves searched (the
                    # previous best first: a different one beat it at this depth; values are exact)
                    result = SearchResult(self._root_best, result.score, depth - 1, self.nodes, 0.0)
                break
            if self._root_best is not None:
                result = SearchResult(self._root_best, score, depth, self.nodes, 0.0)
                self._best_root = (self._root_best.frm, self._root_best.to)
            if abs(score) > MATE - 100:
                break
        result.nodes = self.nodes
        result.seconds = time.monotonic() - start
        return result


def representative(board: JieqiBoard, side: bool) -> str:
    """The identity in ``side``'s pool whose value is nearest the pool's mean (ties: the commoner,
    then the letter): the stand-in for a reveal below the search's root."""
    mean = _pool_mean(board, side)
    pool = board.pool[side]
    return min((k for k, n in pool.items() if n > 0), key=lambda k: (abs(VALUES[k] - mean), -pool[k], k))


def random_mover(rng: _random.Random | None = None) -> Callable[[JieqiBoard], JieqiMove | None]:
    """A player that picks a legal move uniformly at random (a baseline for measurements)."""
    rng = rng or _random.Random()

    def play(board: JieqiBoard) -> JieqiMove | None:
        moves = board.legal_moves()
        return rng.choice(moves) if moves else None

    return play


def greedy_mover(rng: _random.Random | None = None) -> Callable[[JieqiBoard], JieqiMove | None]:
    """A player that takes the most valuable piece it can (a hidden one at its pool's mean), a
    mate in one first, else a random move (a baseline for measurements)."""
    rng = rng or _random.Random()

    def play(board: JieqiBoard) -> JieqiMove | None:
        moves = board.legal_moves()
        if not moves:
            return None
        best, best_v = [], -1.0
        for m in moves:
            v = _victim_value(board, m.to)
            if v > best_v:
                best, best_v = [m], v
            elif v == best_v:
                best.append(m)
        return rng.choice(best)

    return play


#: The engine's levels: name -> (depth, seconds per move).
LEVELS: dict[str, tuple[int, float]] = {"1": (1, 0.5), "2": (2, 1.0), "3": (3, 2.0)}


def player_for(spec: str, rng: _random.Random | None = None) -> Callable[[JieqiBoard], JieqiMove | None]:
    """A player by name: ``random``, ``greedy``, ``search`` / ``search:<level>`` (:data:`LEVELS`)
    or ``search:d<depth>`` / ``search:d<depth>:<seconds>``. Raises ValueError for another name."""
    if spec == "random":
        return random_mover(rng)
    if spec == "greedy":
        return greedy_mover(rng)
    if spec == "search" or spec.startswith("search:"):
        rest = spec.partition(":")[2] or "2"
        if rest in LEVELS:
            depth, secs = LEVELS[rest]
        elif rest.startswith("d"):
            d, _, s = rest[1:].partition(":")
            try:
                depth, secs = int(d), float(s) if s else 60.0
            except ValueError:
                raise ValueError(f"not a 揭棋 search spec: {spec!r}") from None
        else:
            raise ValueError(f"not a 揭棋 engine level: {rest!r} (1, 2, 3 or d<depth>[:<seconds>])")
        engine = JieqiSearch(depth, secs)

        def play(board: JieqiBoard) -> JieqiMove | None:
            return engine.search(board).move

        return play
    raise ValueError(f"not a 揭棋 player: {spec!r} (random, greedy, search[:1|2|3|d<depth>[:<seconds>]])")
