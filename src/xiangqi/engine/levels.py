"""Playing levels 入门 / 初级 / 中级 / 高级 / 大师 (DESIGN.md decision 8), weakest first.

A level is a search limit plus a controlled amount of error: the engine searches
the best ``multipv`` moves, keeps those within ``margin_cp`` of the best one, and
picks among them with probability ``exp((score - best) / temperature_cp)``.
The weak levels therefore lose the way people do — a shallow search misses
tactics a few plies deep, and they choose among *reasonable* moves — rather than
by a random blunder every few moves: a move that loses material at the level's
depth is never inside the margin. 入门 adds a beginner's blind spots (``miss_threat``,
``miss_capture``): now and then it judges a move without looking at the reply, or does not
see a capture; even then it plays the best move by what it looked at.

``elo`` is the rating measured by matches (``bench/calibrate_levels.py``, which
writes :data:`ELO_FILE`; None while not measured), with its 95 % error bar
``elo_error`` and the number of games ``elo_games`` behind it; :func:`rank_name`
turns it into the rank names of DESIGN.md.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

#: Measured Elo of the levels, written by ``bench/calibrate_levels.py --write``:
#: ``{"levels": {key: {"elo": int, "error": int, "games": int, "evaluation": "nnue", "engine": fp}},
#: "date": …, "command": …, "engine": …, "conditions": …}`` (``evaluation`` and ``engine``: the
#: evaluation and the engine fingerprint the level's games were played with; informative, not read
#: here). Missing or unreadable means no level has an Elo.
ELO_FILE = Path(__file__).with_name("level_elo.json")

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
    #: Chance per move (not in check, no mate found) of looking only at its own move: the move is
    #: chosen by the static evaluation right after it, the opponent's reply unseen (a beginner who
    #: misses the threat: it may leave a piece en prise or walk into a capture).
    miss_threat: float = 0.0
    #: Chance per move of not seeing its captures: the move is chosen among the non-captures of
    #: the searched lines (a beginner who misses a piece it could take).
    miss_capture: float = 0.0
    elo: int | None = None
    #: Half-width of the 95 % interval of ``elo`` (Elo points); None when unknown.
    elo_error: int | None = None
    #: Games behind ``elo``.
    elo_games: int = 0

    @property
    def rank_zh(self) -> str | None:
        """Rank name of the level's measured Elo (DESIGN.md), None while unmeasured."""
        return rank_name(self.elo)


#: The levels as defined (search limits and error), before their measured Elo is filled in.
BASE_LEVELS: dict[str, Level] = {
    # 入门 (below 初级): a one-ply search plus captures that overlooks the reply on three moves in
    # five and its captures on three in ten; even then it plays the best move by what it looked at,
    # never a random one (docs/ENGINE.md: 30-70 % against tools/greedy_engine.py)
    "novice": Level("novice", "入门", "Novice", depth=1, time=0.3, multipv=4, margin_cp=120,
                    temperature_cp=50.0, miss_threat=0.6, miss_capture=0.3),
    # 初级: with the tuned evaluation (2026-12-01) depth 2 alone won 4 of its first 6 games against
    # Fairy-Stockfish's UCI_Elo 1350, above the "below 50 %"; a beginner's blind spots on
    # one move in five (the reply unseen) and one in ten (a capture unseen) bring it below
    "beginner": Level("beginner", "初级", "Beginner", depth=2, time=0.5, multipv=5, margin_cp=90,
                      temperature_cp=35.0, miss_threat=0.2, miss_capture=0.1),
    "intermediate": Level("intermediate", "中级", "Intermediate", depth=4, time=0.8, multipv=4,
                          margin_cp=45, temperature_cp=18.0),
    # depth 7 with a little choice: the full-strength 1 s search measured about 2510, too far above
    # 中级's 1750 for a ladder; this sits between them
    "advanced": Level("advanced", "高级", "Advanced", depth=7, time=1.0, multipv=3, margin_cp=30,
                      temperature_cp=12.0),
    "master": Level("master", "大师", "Master", time=3.0),
}


#: Largest Elo, error bar and game count :func:`load_elos` believes; bigger numbers mean a damaged
#: file (no rating list comes near 5000 Elo, and a UCI ``spin`` option must fit a GUI's 32-bit int).
MAX_ELO, MAX_GAMES = 5000, 10**9


def load_elos(path: str | Path | None = None) -> dict[str, dict[str, int | None]]:
    """The measured ratings in ``path`` (default :data:`ELO_FILE`): ``{key: {"elo", "error", "games"}}``.

    Only entries whose ``elo`` rounds to a whole number from 1 to :data:`MAX_ELO`
    are returned (``error`` None when absent, negative, not a finite number or
    above :data:`MAX_ELO`; ``games`` 0 when absent or not from 0 to :data:`MAX_GAMES`).
    A missing, unreadable or malformed file (UTF-8, a byte-order mark allowed)
    gives ``{}``: the levels then simply have no Elo.
    """
    try:
        data = json.loads(Path(path or ELO_FILE).read_text(encoding="utf-8-sig"))
        table = data["levels"]
        items = list(table.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return {}
    out: dict[str, dict[str, int | None]] = {}
    for key, entry in items:
        if not isinstance(entry, dict):
            continue
        elo, err, games = entry.get("elo"), entry.get("error"), entry.get("games", 0)
        if not _finite(elo) or not 1 <= round(elo) <= MAX_ELO:
            continue
        out[str(key)] = {"elo": int(round(elo)),
                         "error": int(round(err)) if _finite(err) and 0 <= err <= MAX_ELO else None,
                         "games": int(games) if _finite(games) and 0 <= games <= MAX_GAMES else 0}
    return out


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def with_elos(levels: dict[str, Level], elos: dict[str, dict[str, int | None]]) -> dict[str, Level]:
    """``levels`` with ``elo``/``elo_error``/``elo_games`` filled in from :func:`load_elos`' table."""
    out = {}
    for key, lv in levels.items():
        m = elos.get(key)
        out[key] = dataclasses.replace(lv, elo=m["elo"], elo_error=m["error"], elo_games=m["games"] or 0) \
            if m else lv
    return out


#: The levels in order of strength, with their measured Elo from :data:`ELO_FILE` when it has one.
LEVELS: dict[str, Level] = with_elos(BASE_LEVELS, load_elos())

#: Levels the engine plays (``xiangqi engine``'s ``Level`` option, ``xiangqi match builtin:<key>``,
#: :func:`get_level`) that the app's level list does not offer. Empty since 入门 joined
#: :data:`LEVELS` (measured by bench/calibrate_levels.py); kept for levels under trial.
EXTRA_LEVELS: dict[str, Level] = {}


def get_level(name: str | Level) -> Level:
    """The level named by its key (``"master"``), Chinese (``"大师"``) or English (``"Master"``) name.

    Matching ignores case and surrounding spaces. Raises :class:`ValueError`
    listing the known levels otherwise.
    """
    if isinstance(name, Level):
        return name
    text = str(name).strip()
    for lv in (*LEVELS.values(), *EXTRA_LEVELS.values()):
        if text.lower() in (lv.key, lv.name_en.lower()) or text == lv.name_zh:
            return lv
    every = (*EXTRA_LEVELS.values(), *LEVELS.values())
    known = ", ".join(f"{lv.key}/{lv.name_zh}/{lv.name_en}" for lv in every)
    raise ValueError(f"unknown level {name!r}; expected one of {known}")
