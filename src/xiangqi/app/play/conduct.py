"""How the computer conducts itself at the board: when it resigns and when it offers a draw.

The tendency is a setting of the game (issue 17, after 象棋高手's "stubborn … compliant"):

- ``stubborn`` (顽固): plays every game out; never resigns, never offers a draw;
- ``normal`` (正常): resigns a game it sees lost (a mate against it found by the search, a lost
  tablebase ending, or an evaluation of a rook or more down on three of its moves in a row with
  the material to match); offers a draw in a long, level game or a drawn tablebase ending;
- ``compliant`` (顺从): does both earlier (half a rook down on two moves; a level game from move
  25 on).

:class:`Conduct` keeps the computer's own evaluations (from its side, after each of its searches)
and decides after each of its moves. It never resigns in the opening (:data:`MIN_PLY_TO_RESIGN`),
and after an offer the player did not take it waits :data:`OFFER_GAP` of its moves before offering
again. The numbers are judgement, not measurement: a rook is ~900 cp on the engine's scale
(:data:`xiangqi.app.opponents.players.MATERIAL_CP`), so "a rook down" is -800 cp with a margin.
"""

from __future__ import annotations

import dataclasses

__all__ = ["TENDENCIES", "Temper", "TEMPERS", "Conduct", "RESIGN", "OFFER_DRAW", "MIN_PLY_TO_RESIGN",
           "OFFER_GAP", "computer_resigns", "computer_draw_agreed"]

#: The settings, from the most to the least stubborn; names for the page in zh and en.
TENDENCIES = {"stubborn": ("顽固", "Stubborn"), "normal": ("正常", "Normal"),
              "compliant": ("顺从", "Compliant")}

RESIGN = "resign"
OFFER_DRAW = "offer_draw"

#: No resignation before this many plies of the game (an early blunder is played on).
MIN_PLY_TO_RESIGN = 20
#: Own moves to wait after a declined draw offer before offering again.
OFFER_GAP = 10


@dataclasses.dataclass(frozen=True)
class Temper:
    """One tendency's thresholds. ``resign_cp``: resign when the computer's evaluation is at most
    this (centipawns, its side) on ``resign_moves`` of its moves in a row and its material is at least
    ``resign_material_cp`` behind; ``resign_mate``: resign when the search finds itself mated in at most
    this many moves (None: never on a mate score alone); ``draw_cp``/``draw_moves``/``draw_min_ply``:
    offer a draw when the evaluation stayed within ±``draw_cp`` on ``draw_moves`` of its moves in a row
    and the game has at least ``draw_min_ply`` plies; ``tablebase``: follow a tablebase verdict (resign
    a lost ending, offer in a drawn one after ``draw_min_ply`` / 2 plies)."""

    resign_cp: int | None
    resign_moves: int
    resign_material_cp: int
    resign_mate: int | None
    draw_cp: int | None
    draw_moves: int
    draw_min_ply: int
    tablebase: bool


TEMPERS: dict[str, Temper] = {
    "stubborn": Temper(None, 0, 0, None, None, 0, 0, False),
    "normal": Temper(-800, 3, 600, 5, 20, 8, 100, True),
    "compliant": Temper(-450, 2, 300, 10, 50, 5, 50, True),
}


class Conduct:
    """The computer's resign/draw decisions in one game for a ``tendency`` of :data:`TENDENCIES`
    (ValueError for another). Feed it with :meth:`observe` after each of the computer's searches, then
    ask :meth:`decide`. Observations are keyed by ply, so a move taken back (悔棋) and played again
    replaces its old evaluation, and :meth:`decide` only looks at the plies before the game's end."""

    def __init__(self, tendency: str = "normal") -> None:
        if tendency not in TEMPERS:
            raise ValueError(f"tendency must be one of {', '.join(TEMPERS)}, got {tendency!r}")
        self.tendency = tendency
        self.temper = TEMPERS[tendency]
        #: ply before the computer's move -> (score_cp or None, mate or None, tablebase wdl or None),
        #: from the computer's side (mate > 0: it mates, < 0: it is mated).
        self.seen: dict[int, tuple[int | None, int | None, str | None]] = {}
        self._declined_at: int | None = None  # ply of the last offer the player did not take

    def observe(self, ply: int, score_cp: int | None, mate: int | None,
                tablebase_wdl: str | None = None) -> None:
        """The computer's search at ``ply`` (plies played before its move), from its own side;
        ``tablebase_wdl`` the table's verdict for it when the position was in one."""
        self.seen[ply] = (score_cp, mate, tablebase_wdl)

    def scores(self, ply: int) -> list[tuple[int | None, int | None, str | None]]:
        """The observations before ``ply``, oldest first."""
        return [self.seen[k] for k in sorted(self.seen) if k < ply]

    def declined(self, ply: int) -> None:
        """The player did not take the computer's draw offer (it played on at ``ply``)."""
        self._declined_at = ply

    def decide(self, ply: int, material_cp: int) -> str | None:
        """:data:`RESIGN`, :data:`OFFER_DRAW` or None after the computer's move; ``ply`` is the
        number of plies played now (its move included); ``material_cp`` the computer's material minus
        the player's (:func:`xiangqi.app.opponents.players.material_balance` from its side)."""
        recent = self.scores(ply)
        if not recent:
            return None
        if self._resigns(ply, material_cp, recent):
            return RESIGN
        if self._offers(ply, recent):
            return OFFER_DRAW
        return None

    def _resigns(self, ply: int, material_cp: int, seen: list) -> bool:
        t = self.temper
        if ply < MIN_PLY_TO_RESIGN:
            return False
        cp, mate, wdl = seen[-1]
        if t.tablebase and wdl == "loss":
            return True
        if t.resign_mate is not None and mate is not None and -t.resign_mate <= mate < 0:
            return True
        if t.resign_cp is None or len(seen) < t.resign_moves or material_cp > -t.resign_material_cp:
            return False
        return all((m is not None and m < 0) or (m is None and c is not None and c <= t.resign_cp)
                   for c, m, _ in seen[-t.resign_moves:])

    def _offers(self, ply: int, seen: list) -> bool:
        t = self.temper
        if t.draw_cp is None:
            return False
        if self._declined_at is not None and ply - self._declined_at < 2 * OFFER_GAP:
            return False
        if t.tablebase and seen[-1][2] == "draw" and ply >= t.draw_min_ply // 2:
            return True
        if ply < t.draw_min_ply or len(seen) < t.draw_moves:
            return False
        return all(m is None and c is not None and abs(c) <= t.draw_cp for c, m, _ in seen[-t.draw_moves:])


def computer_resigns(color: bool):
    """The outcome of the computer (``color``: True = Red) resigning: "黑胜 — 红方（电脑）认输"."""
    from xiangqi.core.outcome import Termination, win

    side_zh, side_en = ("红方", "Red") if color else ("黑方", "Black")
    return win(Termination.RESIGNATION, not color, f"{side_zh}（电脑）认输",
               f"{side_en} (the computer) resigns")


def computer_draw_agreed():
    """The outcome of the player accepting the computer's draw offer: "和棋 — 电脑提和，双方同意"."""
    from xiangqi.core.outcome import Termination, draw

    return draw(Termination.AGREEMENT, "电脑提和，双方同意",
                "the computer offered a draw and it was accepted")
