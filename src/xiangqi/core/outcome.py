"""Game results with a reason a player can read (RULES.md §3, §4, §6).

:class:`Termination` names how a game ended, :class:`Outcome` is the result with its reasons;
:func:`terminal_outcome` rules mate and stalemate. :meth:`Board.outcome` asks
:func:`xiangqi.core.referee.outcome_of`, which rules those first and then the repetition
rulings, the move limit and insufficient material.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING

from xiangqi.core.pieces import BLACK, RED, Color

if TYPE_CHECKING:
    from xiangqi.core.board import Board


class Termination(enum.Enum):
    """How a game ended (the reason behind an :class:`Outcome`)."""

    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    PERPETUAL = "perpetual"  # a forbidden repetition (长将/长杀/长捉 …), see the referee
    REPETITION = "repetition"  # allowed repetition on both sides: draw
    MOVE_LIMIT = "move_limit"
    INSUFFICIENT_MATERIAL = "insufficient_material"
    RESIGNATION = "resignation"
    TIMEOUT = "timeout"
    AGREEMENT = "agreement"


SIDE_ZH = {RED: "红方", BLACK: "黑方"}
SIDE_EN = {RED: "Red", BLACK: "Black"}


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The end of a game.

    ``winner`` is :data:`RED`, :data:`BLACK` or None for a draw; ``reason_zh``
    and ``reason_en`` say why, e.g. ``红胜 — 将死`` / ``Red wins — checkmate``.
    """

    termination: Termination
    winner: Color | None
    reason_zh: str
    reason_en: str

    def result(self) -> str:
        """PGN result string: ``1-0`` (Red wins), ``0-1`` or ``1/2-1/2``."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner else "0-1"

    def winner_name(self) -> str:
        """``red``, ``black`` or ``draw``."""
        if self.winner is None:
            return "draw"
        return "red" if self.winner else "black"

    def headline_zh(self) -> str:
        """Short Chinese headline: 红胜 / 黑胜 / 和棋."""
        if self.winner is None:
            return "和棋"
        return "红胜" if self.winner else "黑胜"

    def __str__(self) -> str:
        return f"{self.result()} {self.reason_zh} ({self.reason_en})"


def win(termination: Termination, winner: Color, why_zh: str, why_en: str) -> Outcome:
    """An outcome where ``winner`` wins; reasons get the headline prefixed."""
    head_zh = "红胜" if winner else "黑胜"
    head_en = "Red wins" if winner else "Black wins"
    return Outcome(termination, winner, f"{head_zh} — {why_zh}", f"{head_en} — {why_en}")


def draw(termination: Termination, why_zh: str, why_en: str) -> Outcome:
    """A drawn outcome with its reason."""
    return Outcome(termination, None, f"和棋 — {why_zh}", f"Draw — {why_en}")


def terminal_outcome(board: Board) -> Outcome | None:
    """Mate (将死) or stalemate (困毙) of the side to move, else None."""
    if any(True for _ in board.generate_legal_moves()):
        return None
    loser = board.turn
    if board.is_check():
        return win(Termination.CHECKMATE, not loser, "将死", "checkmate")
    return win(Termination.STALEMATE, not loser, f"{SIDE_ZH[loser]}困毙",
               f"{SIDE_EN[loser]} is stalemated (no legal move loses)")

