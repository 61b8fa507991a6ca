"""Playing levels 初级 / 中级 / 高级 / 大师 (DESIGN.md decision 8).

A level is a search limit plus a controlled amount of error: the engine searches
the best ``multipv`` moves, keeps those within ``margin_cp`` of the best one, and
picks among them with probability ``exp((score - best) / temperature_cp)``.
The weak levels therefore lose the way people do — a shallow search misses
tactics a few plies deep, and they choose among *reasonable* moves — rather than
by a random blunder every few moves: a move that loses material at the level's
depth is never inside the margin.

``elo`` is the rating measured by matches (bench/ and tools/ scripts; None while
not measured); :func:`rank_name` turns it into the rank names of DESIGN.md.
"""

from __future__ import annotations

import dataclasses

#: DESIGN.md decision 8: rank names by Elo (lower bound, name).
RANKS: tuple[tuple[int, str], ...] = (
    (0, "草民"), (1100, "县丞"), (1200, "县令"), (1300, "都尉"), (1400, "校尉"), (1500, "常侍"),
    (1600, "中郎将"), (1700, "太守"), (1800, "刺史"), (1900, "将军"), (2200, "太尉"), (2400, "大将军"),
    (2600, "王"),
)


def rank_name(elo: float | None) -> str | None:
    """The rank name (e.g. ``"校尉"``) for an Elo rating; None when ``elo`` is None."""
    if elo is None:
        return None
    name = RANKS[0][1]
    for bound, n in RANKS:
        if elo >= bound:
            name = n
    return name


@dataclasses.dataclass(frozen=True)
class Level:
    """A playing level.

    ``depth``/``nodes``/``time`` (seconds per move) limit the search (None = no
    such limit); ``multipv`` moves are searched with full scores; moves within
    ``margin_cp`` centipawns of the best are candidates, chosen with softmax
    temperature ``temperature_cp`` (0 = always the best move).
    """

    key: str
    name_zh: str
    name_en: str
    depth: int | None = None
    nodes: int | None = None
    time: float | None = None
    multipv: int = 1
    margin_cp: int = 0
    temperature_cp: float = 0.0
    elo: int | None = None

    @property
    def rank_zh(self) -> str | None:
        """Rank name of the level's measured Elo (DESIGN.md), None while unmeasured."""
        return rank_name(self.elo)


LEVELS: dict[str, Level] = {
    "beginner": Level("beginner", "初级", "Beginner", depth=2, time=0.5, multipv=5, margin_cp=90,
                      temperature_cp=35.0),
    "intermediate": Level("intermediate", "中级", "Intermediate", depth=4, time=0.8, multipv=4,
                          margin_cp=45, temperature_cp=18.0),
    "advanced": Level("advanced", "高级", "Advanced", depth=None, time=1.0, multipv=2, margin_cp=12,
                      temperature_cp=5.0),
    "master": Level("master", "大师", "Master", time=3.0),
}


def get_level(name: str | Level) -> Level:
    """The level named by its key (``"master"``), Chinese (``"大师"``) or English (``"Master"``) name.

    Matching ignores case and surrounding spaces. Raises :class:`ValueError`
    listing the known levels otherwise.
    """
    if isinstance(name, Level):
        return name
    text = str(name).strip()
    for lv in LEVELS.values():
        if text.lower() in (lv.key, lv.name_en.lower()) or text == lv.name_zh:
            return lv
    known = ", ".join(f"{lv.key}/{lv.name_zh}/{lv.name_en}" for lv in LEVELS.values())
    raise ValueError(f"unknown level {name!r}; expected one of {known}")
