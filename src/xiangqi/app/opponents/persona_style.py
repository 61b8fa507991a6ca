"""Playing styles of the named computer opponents: attacking (攻杀), solid (稳健), positional (灵活).

A style does not change the engine's evaluation (``engine/evaluate.py``'s tables and weights are
compile-time constants of the Numba kernels: a weight per opponent would mean passing a weight
vector through every kernel of ``engine/search.py``). It is a *choice policy* on top of the level's
own search, in two places:

- **Out of the book**, the level searches its best ``multipv`` lines as usual
  (:meth:`xiangqi.engine.Engine.search`); the lines within the level's margin of the best
  (``Level.margin_cp``: the moves the level already chooses among) get a style bonus
  (:meth:`Style.bonus`, centipawns) for what the move does — gives check, aims one more piece at
  the enemy palace, offers or starts an even exchange, gives up material for play, gains mobility,
  brings a defender home — and the level's own rule picks among the adjusted scores (softmax with
  its temperature, or the best when it has none). A move outside the margin is never played, so the
  style spends at most the level's margin, as the level itself does; a found mate is always played.
- **In the book**, each book move's chance (:func:`xiangqi.engine.book.candidates`) is multiplied
  by ``exp(bonus / BOOK_T)`` with the same bonus of the move alone (no reply known): the attacking
  style opens with the central cannon more often, the solid one with the elephant or advisor, the
  positional one develops horses and pawns.

The features (:func:`features`) are measured on the core board (pure Python, a few hundred
microseconds per candidate). ``bench/bench_styles.py`` plays the styles against the plain level and
counts what they do; the numbers are in docs/OPPONENTS.md.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from typing import Any

from xiangqi.core.board import (
    ADVISOR,
    BLACK,
    CANNON,
    ELEPHANT,
    HORSE,
    HORSE_MOVES,
    KING,
    PAWN,
    PAWN_MOVES,
    RAYS,
    RED,
    ROOK,
    Board,
    Move,
    in_palace,
    own_half,
)

__all__ = ["STYLES", "Style", "Features", "features", "aimed_at_palace", "palace_guards", "mobility",
           "BOOK_T", "MATERIAL", "get_style"]

#: Piece values (centipawns) for the exchange and sacrifice features: the usual xiangqi scale, as
#: :data:`xiangqi.app.opponents.players.MATERIAL_CP` (rook 9, cannon 4.5, horse 4, advisor/elephant 2,
#: pawn 1).
MATERIAL = {0: 0, KING: 0, ROOK: 900, CANNON: 450, HORSE: 400, ADVISOR: 200, ELEPHANT: 200, PAWN: 100}
#: Two pieces whose values differ by at most this are "even" for an exchange (horse for cannon).
EVEN_CP = 150
#: A move that loses at least this much material by the line's next two plies is a sacrifice.
SACRIFICE_CP = 200
#: Temperature (centipawns of bonus) of the book reweighting: a bonus of 14 multiplies a book move's
#: chance by e^1.4 ≈ 4.
BOOK_T = 10.0
#: Mate scores: a line scored beyond this (in centipawns) is a mate and is never restyled.
MATE_CP = 20000


def _palace_squares(color: bool) -> list[int]:
    return [s for s in range(90) if in_palace(s, color)]


_PALACE = {RED: _palace_squares(RED), BLACK: _palace_squares(BLACK)}
#: The squares near each palace where a defender stands: files c–g of the own first three ranks.
_HOME = {RED: {r * 9 + f for r in range(3) for f in range(2, 7)},
         BLACK: {r * 9 + f for r in range(7, 10) for f in range(2, 7)}}


def _attacks(b: list[int], sq: int) -> list[int]:
    """Squares the piece on ``sq`` attacks (would capture on if an enemy stood there): rook rays up to
    the first piece, cannon rays after one screen up to the next piece, horse and pawn targets."""
    code = b[sq]
    color = code > 0
    t = abs(code)
    out: list[int] = []
    if t == ROOK:
        for ray in RAYS[sq]:
            for x in ray:
                out.append(x)
                if b[x]:
                    break
    elif t == CANNON:
        for ray in RAYS[sq]:
            screened = False
            for x in ray:
                if not screened:
                    screened = b[x] != 0
                    continue
                out.append(x)
                if b[x]:
                    break
    elif t == HORSE:
        out = [x for x, leg in HORSE_MOVES[sq] if b[leg] == 0]
    elif t == PAWN:
        out = list(PAWN_MOVES[color][sq])
    return out


def aimed_at_palace(board: Board, color: bool) -> int:
    """How many of ``color``'s rooks, horses, cannons and pawns aim at the enemy palace: attack one of
    its nine squares, or (rook, cannon) stand on the enemy king's file."""
    b = board.squares
    ksq = board.king(not color)
    palace = set(_PALACE[not color])
    n = 0
    for sq in range(90):
        code = b[sq]
        if not code or (code > 0) != color or abs(code) in (KING, ADVISOR, ELEPHANT):
            continue
        if abs(code) in (ROOK, CANNON) and ksq >= 0 and sq % 9 == ksq % 9:
            n += 1
        elif palace.intersection(_attacks(b, sq)):
            n += 1
    return n


def palace_guards(board: Board, color: bool) -> int:
    """``color``'s horses, advisors and elephants at home around its palace (files c–g of its first
    three ranks): the pieces that defend the king there."""
    b = board.squares
    return sum(1 for sq in _HOME[color] if b[sq] and (b[sq] > 0) == color
               and abs(b[sq]) in (HORSE, ADVISOR, ELEPHANT))


def mobility(board: Board, color: bool) -> int:
    """Moves of ``color``'s rooks and horses in ``board`` by the piece rules (whoever is to move): the
    mobility the engine's evaluation counts too (cannons' long quiet moves say little)."""
    b = board.squares
    n = 0
    for sq in range(90):
        code = b[sq]
        if not code or (code > 0) != color:
            continue
        if abs(code) == ROOK:
            for ray in RAYS[sq]:
                for x in ray:
                    if b[x] == 0:
                        n += 1
                        continue
                    n += (b[x] > 0) != color
                    break
        elif abs(code) == HORSE:
            n += sum(1 for x, leg in HORSE_MOVES[sq] if b[leg] == 0 and (b[x] == 0 or (b[x] > 0) != color))
    return n


@dataclasses.dataclass(frozen=True)
class Features:
    """What one move does, for its mover: ``check`` (gives check); ``aim`` (change of
    :func:`aimed_at_palace`); ``guard`` (change of :func:`palace_guards`); ``trade`` (starts or offers
    an even exchange that the line completes); ``sacrifice`` (gives up at least
    :data:`SACRIFICE_CP` by the line's next two plies); ``mobility`` (change of :func:`mobility`);
    ``advance`` (the piece crosses into the enemy half); ``defender`` (an advisor or elephant move)."""

    check: bool = False
    aim: int = 0
    guard: int = 0
    trade: bool = False
    sacrifice: bool = False
    mobility: int = 0
    advance: bool = False
    defender: bool = False


def features(board: Board, move: Move, line: Sequence[Move] = ()) -> Features:
    """:class:`Features` of ``move`` (legal in ``board``, which is not changed) for the side to move;
    ``line`` the expected continuation (the move first, then the reply …) when known."""
    us = board.turn
    b0 = board.squares
    moved = abs(b0[move.from_square])
    taken = abs(b0[move.to_square])
    after = board.copy(stack=False)
    after.push(move, validate=False)
    trade = sacrifice = False
    rest = list(line[1:3]) if line and line[0] == move else []
    if rest and rest[0].to_square == move.to_square:  # the reply captures the piece that moved
        recapturer = abs(after.squares[rest[0].from_square])
        back = len(rest) > 1 and rest[1].to_square == move.to_square
        if taken and abs(MATERIAL[taken] - MATERIAL[moved]) <= EVEN_CP:
            trade = True  # captures and is taken back: an even exchange
        elif not taken and back and abs(MATERIAL[moved] - MATERIAL[recapturer]) <= EVEN_CP:
            trade = True  # offers a piece for an even one (兑子) and takes back
        elif not back and MATERIAL[moved] - MATERIAL[taken] >= SACRIFICE_CP:
            sacrifice = True
    return Features(
        check=after.is_check(),
        aim=aimed_at_palace(after, us) - aimed_at_palace(board, us),
        guard=palace_guards(after, us) - palace_guards(board, us),
        trade=trade, sacrifice=sacrifice,
        mobility=mobility(after, us) - mobility(board, us),
        advance=own_half(move.from_square, us) and not own_half(move.to_square, us),
        defender=moved in (ADVISOR, ELEPHANT),
    )


@dataclasses.dataclass(frozen=True)
class Style:
    """A playing style: bonus weights (centipawns per unit of each :class:`Features` field) and its
    names. ``bonus`` = the weighted sum; see the module text for how it is used."""

    key: str
    name_zh: str
    name_en: str
    check: float = 0.0
    aim: float = 0.0
    guard: float = 0.0
    trade: float = 0.0
    sacrifice: float = 0.0
    mobility: float = 0.0
    advance: float = 0.0
    defender: float = 0.0
    #: The least margin (centipawns) the style chooses in, for a level without one (大师's margin is 0).
    min_margin_cp: int = 0

    def bonus(self, f: Features) -> float:
        """The style's bonus in centipawns for a move with features ``f``."""
        return (self.check * f.check + self.aim * f.aim + self.guard * f.guard + self.trade * f.trade
                + self.sacrifice * f.sacrifice + self.mobility * f.mobility + self.advance * f.advance
                + self.defender * f.defender)

    # -- the book ----------------------------------------------------------

    def book(self, board: Board, choices: Sequence[tuple[Any, float]]) -> list[tuple[Any, float]]:
        """``choices`` (``(BookMove, probability)``, :func:`xiangqi.engine.book.candidates`) reweighted by
        ``exp(bonus / BOOK_T)`` of each move and normalised again."""
        if len(choices) < 2:
            return list(choices)
        raw = [(m, p * math.exp(self.bonus(features(board, m.move)) / BOOK_T)) for m, p in choices]
        s = sum(p for _, p in raw) or 1.0
        return [(m, p / s) for m, p in raw]

    # -- the search --------------------------------------------------------

    def pick(self, board: Board, lines: Sequence[tuple[int | None, int | None, Sequence[Move]]],
             level: Any, rng: random.Random) -> int:
        """The index of the line to play among ``lines`` (``(score_cp, mate, pv)`` for the side to
        move, best first, as a multi-PV search gives them) for a level with ``margin_cp`` and
        ``temperature_cp``: the lines within the margin of the best, by score plus :meth:`bonus`."""
        scored = [(_cp(cp, mate), pv) for cp, mate, pv in lines if pv]
        if not scored:
            return 0
        best = scored[0][0]
        if best >= MATE_CP:
            return 0
        floor = max(best - max(level.margin_cp, self.min_margin_cp), -MATE_CP + 1)
        near = [(i, s, pv) for i, (s, pv) in enumerate(scored) if s >= floor]
        if len(near) < 2:
            return 0
        adj = [(i, s + self.bonus(features(board, pv[0], pv))) for i, s, pv in near]
        top = max(a for _, a in adj)
        if level.temperature_cp <= 0:
            return next(i for i, a in adj if a == top)
        weights = [math.exp((a - top) / level.temperature_cp) for _, a in adj]
        return rng.choices([i for i, _ in adj], weights=weights)[0]

    def play(self, engine: Any, board: Board, level: Any, rng: random.Random) -> Any:
        """Search ``board`` at ``level`` (a :class:`xiangqi.engine.levels.Level`) with ``engine`` (an
        :class:`xiangqi.engine.Engine`) and choose the move in this style; returns a
        :class:`xiangqi.engine.SearchResult` of the chosen line (its score and PV). The search is the
        level's own (its limits and ``multipv``; at least 2 lines, so that there is a choice)."""
        from xiangqi.engine import Limit, SearchResult

        depths: dict[int, dict[int, Any]] = {}

        def collect(info: Any) -> None:
            depths.setdefault(info.depth, {})[info.multipv] = info

        limit = Limit(depth=level.depth, nodes=level.nodes, time=level.time)
        res = engine.search(board, limit, on_info=collect, multipv=max(2, level.multipv))
        if res.move is None or not depths:
            return res
        last = depths[max(depths)]
        infos = [last[k] for k in sorted(last)]
        lines = [(i.score_cp, i.mate, i.pv) for i in infos]
        k = self.pick(board, lines, level, rng)
        if k == 0 or not infos[k].pv:
            return res
        i = infos[k]
        return SearchResult(i.pv[0], i.score_cp, i.mate, res.depth, res.nodes, res.time_s, list(i.pv),
                            i.pv[1] if len(i.pv) > 1 else None, res.tablebase)


def _cp(cp: int | None, mate: int | None) -> int:
    if mate is not None:
        return MATE_CP + 100 - abs(mate) if mate > 0 else -(MATE_CP + 100 - abs(mate))
    return int(cp or 0)


#: The three styles. Weights are judgement (a check is worth up to 40 cp of evaluation to an
#: attacker, an even exchange 35 cp to a solid player …), bounded by the level's margin; what they do
#: in play is measured by bench/bench_styles.py (docs/OPPONENTS.md).
STYLES: dict[str, Style] = {
    "attacking": Style("attacking", "攻杀型", "Attacking", check=40, aim=20, trade=-15, sacrifice=30,
                       mobility=0.5, advance=10),
    "solid": Style("solid", "稳健型", "Solid", trade=35, guard=18, sacrifice=-50, mobility=0.5,
                   advance=-8, defender=15, check=-5),
    "positional": Style("positional", "灵活型", "Positional", mobility=4, trade=-20, sacrifice=-25, aim=4,
                        guard=4, advance=2),
}


def get_style(key: str | None) -> Style | None:
    """The style named ``key``, None for None; ValueError for an unknown key."""
    if key is None:
        return None
    try:
        return STYLES[key]
    except KeyError:
        raise ValueError(f"unknown style {key!r}; expected one of {', '.join(STYLES)}") from None

