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
and after an offer the player declined it waits :data:`OFFER_GAP` of its moves before offering
again. The numbers are judgement, not measurement: a rook is ~900 cp on the engine's scale
(:data:`xiangqi.app.players.MATERIAL_CP`), so "a rook down" is -800 cp with a margin.
"""

from __future__ import annotations

import dataclasses

__all__ = ["TENDENCIES", "Temper", "TEMPERS", "Conduct", "RESIGN", "OFFER_DRAW", "MIN_PLY_TO_RESIGN",
           "OFFER_GAP"]

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
    ask :meth:`decide`."""

    def __init__(self, tendency: str = "normal") -> None:
        if tendency not in TEMPERS:
            raise ValueError(f"tendency must be one of {', '.join(TEMPERS)}, got {tendency!r}")
        self.tendency = tendency
        self.temper = TEMPERS[tendency]
        #: (score_cp or None, mate or None) from the computer's side, one per own move, latest last.
        self.scores: list[tuple[int | None, int | None]] = []
        self.tablebase: str | None = None  # "win" / "draw" / "loss" for the computer, latest search
        self._last_offer: int | None = None  # index in scores of the last offer

    def observe(self, score_cp: int | None, mate: int | None, tablebase_wdl: str | None = None) -> None:
        """One search's result before the computer's move, from its own side (``mate`` > 0: it mates,
        < 0: it is mated); ``tablebase_wdl`` the table's verdict for it, when the position was in one."""
        self.scores.append((score_cp, mate))
        self.tablebase = tablebase_wdl

    def declined(self) -> None:
        """The player declined the computer's draw offer (or played on): wait before the next one."""
        self._last_offer = len(self.scores)

    def decide(self, ply: int, material_cp: int) -> str | None:
        """:data:`RESIGN`, :data:`OFFER_DRAW` or None after the computer's latest move. ``ply`` is the
        number of plies played in the game; ``material_cp`` the computer's material minus the player's
        (:func:`xiangqi.app.players.material_balance` from its side)."""
        if not self.scores:
            return None
        if self._resigns(ply, material_cp):
            return RESIGN
        if self._offers(ply):
            self._last_offer = len(self.scores)
            return OFFER_DRAW
        return None

    def _resigns(self, ply: int, material_cp: int) -> bool:
        t = self.temper
        if ply < MIN_PLY_TO_RESIGN:
            return False
        if t.tablebase and self.tablebase == "loss":
            return True
        cp, mate = self.scores[-1]
        if t.resign_mate is not None and mate is not None and -t.resign_mate <= mate < 0:
            return True
        if t.resign_cp is None or len(self.scores) < t.resign_moves or material_cp > -t.resign_material_cp:
            return False
        recent = self.scores[-t.resign_moves:]
        return all((m is not None and m < 0) or (m is None and c is not None and c <= t.resign_cp)
                   for c, m in recent)

    def _offers(self, ply: int) -> bool:
        t = self.temper
        if t.draw_cp is None:
            return False
        if self._last_offer is not None and len(self.scores) - self._last_offer < OFFER_GAP:
            return False
        if t.tablebase and self.tablebase == "draw" and ply >= t.draw_min_ply // 2:
            return True
        if ply < t.draw_min_ply or len(self.scores) < t.draw_moves:
            return False
        recent = self.scores[-t.draw_moves:]
        return all(m is None and c is not None and abs(c) <= t.draw_cp for c, m in recent)
