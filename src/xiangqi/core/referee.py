"""Rules referee: repetition rulings (棋例), the move limit and dead draws.

First version: a threefold repetition in which one side checks with every
move and the other does not loses for the checker (长将, RULES.md §5.4.1);
any other threefold repetition is a draw (不变作和). The full move classifier
(将/杀/捉/闲) replaces this in a later step.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from xiangqi.core.board import Termination
from xiangqi.core.outcome import SIDE_EN, SIDE_ZH, Outcome, draw, win

if TYPE_CHECKING:
    from xiangqi.core.board import Board


@dataclasses.dataclass(frozen=True)
class RuleSet:
    """A rule set: ``name`` (``cxa`` or ``axf``) and the natural move limit in
    plies without a capture (120 = 60 moves, RULES.md §4)."""

    name: str = "cxa"
    move_limit_plies: int = 120


CXA = RuleSet("cxa")
AXF = RuleSet("axf")


def get_rules(rules: object | None) -> RuleSet:
    """A :class:`RuleSet` from None (CXA), a name (``cxa``/``axf``) or a RuleSet."""
    if rules is None:
        return CXA
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str) and rules.lower() in ("cxa", "axf"):
        return CXA if rules.lower() == "cxa" else AXF
    raise ValueError(f"unknown rule set {rules!r}; expected 'cxa' or 'axf'")


def repetition_cycle(board: Board) -> list[int] | None:
    """Plies (indexes into ``move_stack``) of the cycle ending in the current
    position when it occurs for the third time, else None."""
    key = board.position_key()
    b = board.copy()
    seen = 0
    first = None
    n = len(b.move_stack)
    for i in range(n, -1, -1):
        if i < n:
            b.pop()
        if b.position_key() == key:
            seen += 1
            first = i
            if seen == 3:
                break
        if b.halfmove_clock == 0 and i < n:
            # A capture came before: earlier positions cannot repeat this one.
            pass
    if seen < 3 or first is None:
        return None
    return list(range(first, n))


def judge(board: Board, rules: object | None = None) -> Outcome | None:
    """Ruling for the current position of ``board`` (see module docstring)."""
    rs = get_rules(rules)
    cycle = repetition_cycle(board)
    if cycle:
        b = board.copy()
        for _ in cycle:
            b.pop()
        checks = {True: [], False: []}
        for ply in cycle:
            mover = b.turn
            b.push(board.move_stack[ply], validate=False)
            checks[mover].append(b.is_check())
        red_perpetual = bool(checks[True]) and all(checks[True])
        black_perpetual = bool(checks[False]) and all(checks[False])
        if red_perpetual != black_perpetual:
            loser = red_perpetual
            return win(Termination.PERPETUAL, not loser, f"{SIDE_ZH[loser]}长将，判负",
                       f"{SIDE_EN[loser]} checks perpetually: {SIDE_EN[loser]} loses")
        return draw(Termination.REPETITION, "双方不变，判和", "the position repeated three times")
    if board.halfmove_clock >= rs.move_limit_plies:
        n = rs.move_limit_plies // 2
        return draw(Termination.MOVE_LIMIT, f"{n}回合未吃子，判和", f"{n} moves without a capture")
    if board.is_insufficient_material():
        return draw(Termination.INSUFFICIENT_MATERIAL, "双方均无进攻子力，判和",
                    "neither side has material to mate")
    return None


__all__ = ["AXF", "CXA", "Outcome", "RuleSet", "get_rules", "judge", "repetition_cycle"]
