"""The rating service: the player's Glicko-2 rating, which games are rated, and the adaptive level.

The one rating model is :mod:`xiangqi.study.rating` (Glicko-2); this module decides which games feed
it and keeps it in the store. It knows a game only by the attributes it reads (``players``,
``start_fen``, ``extras``, ``level``, ``moves``, ``outcome``, ``board``: a
:class:`xiangqi.app.play.session.GameSession`) and the store only by its rating and library methods
(:class:`xiangqi.app.play.store.Store`), so the session and the store both sit above it.

**Rated games.** A game counts for the player's Glicko-2 rating (:mod:`xiangqi.study.rating`) when
all of these hold (:func:`rating_status`; the page says which one failed):

1. one side is the player, the other the computer (``not_vs_computer`` otherwise);
2. it started from the normal start position (no handicap, no set-up position, no game played on
   from a record: ``not_start_position``);
3. no help was taken: no 悔棋 (``takeback``), no hint and no threat display (``hint``), and it was not
   played in coach mode (``coach``: the coach warns of every mistake, so the result is not the
   player's alone; its takebacks are not 悔棋 but the game is unrated from the start);
4. the computer's level has a measured Elo (``engine/level_elo.json``; ``no_elo`` otherwise), or
   it is the adaptive level, whose Elo is estimated between two measured levels;
5. it finished with a result after the player made at least one move (``unfinished`` until then:
   an abandoned game, result ``*``, is not rated).

Each rated game is one Glicko-2 rating period with one result: the opponent is the level's Elo with
an RD of its 95 % error bar / 1.96. The rating is written once per game (the history row's
``game_id`` is unique); a result taken back (悔棋 after the end) makes the game unrated and, it being
the last rated game, takes its rating change back (:func:`sync_rating`).

**The adaptive level** (自适应, :func:`adaptive_level`): its Elo target is the player's rating plus an
offset that follows the results of the player's last :data:`ADAPTIVE_WINDOW` finished adaptive
games, oldest first, :data:`ADAPTIVE_STEP` Elo up after a win and down after a loss (none after a
draw), within ±:data:`ADAPTIVE_MAX_OFFSET`. So after a win the next adaptive game is stronger (the
rating went up too), after a loss weaker, and it settles where the player scores about half. The
target is clamped to the measured levels' range and the engine settings are interpolated linearly
between the two measured levels around it (search depth, time, multi-PV width, margin and
temperature of the move choice; a level with no depth limit, 大师, counts as depth
:data:`UNLIMITED_DEPTH` and an interpolated depth from there on means no depth limit). Its Elo is
the target, its error bar the interpolated error bars of the two levels: an estimate between
measurements, stored with the game (``extras["adaptive"]``) and shown.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import math
from typing import TYPE_CHECKING, Any

from xiangqi.core.board import BLACK, RED, STARTING_FEN
from xiangqi.study import rating as glicko

if TYPE_CHECKING:  # annotations only: the session module imports this one
    from xiangqi.app.play.session import GameSession

log = logging.getLogger(__name__)

#: The adaptive level's key (a game's ``level``): its engine settings follow the player's rating
#: (:func:`adaptive_level`).
ADAPTIVE = "adaptive"

#: Adaptive level: Elo added to the target after each win (taken off after each loss).
ADAPTIVE_STEP = 50.0
#: Adaptive level: how many of the last finished adaptive games steer the offset.
ADAPTIVE_WINDOW = 10
#: Adaptive level: the offset's bound (Elo).
ADAPTIVE_MAX_OFFSET = 300.0
#: A level without a depth limit counts as this depth when settings are interpolated.
UNLIMITED_DEPTH = 10

#: Why a game is not rated: code -> (Chinese, English).
REASONS: dict[str, tuple[str, str]] = {
    "not_vs_computer": ("不是与电脑的对局，不计等级分", "not a game against the computer: unrated"),
    "not_start_position": ("不是从标准开局开始，不计等级分", "not from the standard start position: unrated"),
    "coach": ("教练模式对局不计等级分", "coach-mode games are unrated"),
    "takeback": ("悔棋后不计等级分", "a move was taken back: unrated"),
    "hint": ("用了提示，不计等级分", "a hint was used: unrated"),
    "no_elo": ("该难度没有测定的等级分，不计等级分", "this level has no measured Elo: unrated"),
    "unfinished": ("对局未完成，不计等级分", "the game is not finished: unrated"),
}


def measured_levels() -> list[Any]:
    """The engine's levels with a measured Elo, weakest first (:class:`xiangqi.engine.levels.Level`)."""
    from xiangqi.engine.levels import LEVELS

    return sorted((lv for lv in LEVELS.values() if lv.elo is not None), key=lambda lv: lv.elo)


def human_color(session: GameSession) -> bool | None:
    """The player's colour in a game against the computer (RED/BLACK), None otherwise."""
    kinds = session.players
    if sorted(kinds.values()) != ["engine", "human"]:
        return None
    return RED if kinds[RED] == "human" else BLACK


def opponent(session: GameSession) -> dict[str, Any] | None:
    """The computer as a rated opponent: ``{"level", "elo", "rd"}`` (Glicko scale), None when its
    level has no Elo (measured, or estimated for the adaptive level)."""
    if session.level == ADAPTIVE:
        a = session.extras.get("adaptive") or {}
        if not isinstance(a.get("elo"), int | float):
            return None
        return {"level": ADAPTIVE, "elo": float(a["elo"]), "rd": glicko.rd_from_error(a.get("error"))}
    from xiangqi.engine.levels import LEVELS

    lv = LEVELS.get(session.level)
    if lv is None or lv.elo is None:
        return None
    return {"level": lv.key, "elo": float(lv.elo), "rd": glicko.rd_from_error(lv.elo_error)}


def rating_status(session: GameSession) -> dict[str, Any]:
    """Whether ``session`` counts (or will count, once finished) for the rating.

    ``{"rated": bool, "reason": code or None, "why_zh", "why_en"}`` with the first failed rule of the
    module text (:data:`REASONS`); ``rated`` True with reason ``unfinished`` never happens: an
    unfinished game that breaks no rule is ``rated`` True (it will count when it ends)."""
    color = human_color(session)
    ex = session.extras
    if color is None:
        reason = "not_vs_computer"
    elif session.start_fen != STARTING_FEN:
        reason = "not_start_position"
    elif ex.get("coach"):
        reason = "coach"
    elif int(ex.get("undos", 0)) or int(ex.get("coach_takebacks", 0)):
        reason = "takeback"
    elif int(ex.get("hints", 0)) or int(ex.get("threats", 0)):
        reason = "hint"
    elif opponent(session) is None:
        reason = "no_elo"
    elif session.is_over and not _player_moved(session, color):
        reason = "unfinished"
    else:
        reason = None
    zh, en = REASONS.get(reason, ("计等级分", "rated"))
    return {"rated": reason is None, "reason": reason, "why_zh": zh, "why_en": en}


def _player_moved(session: GameSession, color: bool) -> bool:
    first = session.board.root().turn
    n = len(session.moves)
    return n >= 1 if first == color else n >= 2


def score(session: GameSession) -> float | None:
    """The player's score in a finished game against the computer (1, 0.5, 0), else None."""
    color = human_color(session)
    out = session.outcome
    if color is None or out is None:
        return None
    if out.winner is None:
        return 0.5
    return 1.0 if out.winner == color else 0.0


def current_rating(store: Any) -> glicko.Rating:
    """The player's rating from ``store`` (:class:`xiangqi.app.play.store.Store`), a new player's before
    the first rated game."""
    row = store.get_rating()
    if row is None:
        return glicko.Rating()
    return glicko.Rating(row["rating"], row["rd"], row["volatility"])


def sync_rating(store: Any, session: GameSession) -> dict[str, Any] | None:
    """Bring the rating in line with ``session`` after it was saved: a finished rated game not yet
    counted is counted (one Glicko-2 period); a counted game that is no longer finished and rated
    (its end or a move was taken back) is taken out. Returns the game's history row (``rating_before``,
    ``rating`` …) or None. Raises :class:`xiangqi.app.play.store.StorageError`."""
    entry = store.rating_entry(session.id)
    status = rating_status(session)
    if session.is_over and status["rated"]:
        if entry is not None:
            return entry
        opp = opponent(session)
        s = score(session)
        before = current_rating(store)
        after = glicko.update(before, [glicko.Result(opp["elo"], opp["rd"], s)])
        entry = {
            "game_id": session.id,
            "date": _dt.datetime.now().isoformat(timespec="seconds"),
            "level": opp["level"],
            "opponent_elo": opp["elo"],
            "opponent_rd": opp["rd"],
            "score": s,
            "rating_before": before.rating,
            "rd_before": before.rd,
            "volatility_before": before.volatility,
            "rating": after.rating,
            "rd": after.rd,
            "volatility": after.volatility,
        }
        store.add_rating(entry)
        return store.rating_entry(session.id)
    if entry is not None:
        if not store.remove_rating(session.id):
            log.warning("game %s was rated before later games; its rating change stays", session.id)
            return entry
    return None


def rank_name(elo: float | None) -> str | None:
    """The rank name of DESIGN.md decision 8 (草民 … 王) for a rating."""
    from xiangqi.engine.levels import rank_name as _rank

    return _rank(elo)


def rating_view(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    """A history row as the page shows it: ``{"before", "after", "delta", "rd", "rank", "score",
    "level", "opponent_elo"}`` (ratings rounded to whole points), None for None."""
    if entry is None:
        return None
    return {
        "before": round(entry["rating_before"]),
        "after": round(entry["rating"]),
        "delta": round(entry["rating"]) - round(entry["rating_before"]),
        "rd": round(entry["rd"]),
        "rank": rank_name(entry["rating"]),
        "score": entry["score"],
        "level": entry["level"],
        "opponent_elo": round(entry["opponent_elo"]),
    }


def profile(store: Any, limit: int = 200) -> dict[str, Any]:
    """The profile page's data: ``{"rating", "rd", "volatility", "rank", "games", "provisional",
    "history": [{"date", "game_id", "level", "opponent_elo", "score", "rating", "rd", "delta"}]}``
    (history oldest first, at most ``limit`` rows); ``provisional`` while the RD is above 110 (the
    rating is still a rough guess). Before the first rated game: a new player's 1500 ± 350."""
    r = current_rating(store)
    row = store.get_rating()
    hist = []
    for h in store.rating_history(limit):
        hist.append(
            {
                "date": h["date"],
                "game_id": h["game_id"],
                "level": h["level"],
                "opponent_elo": round(h["opponent_elo"]),
                "score": h["score"],
                "rating": round(h["rating"], 1),
                "rd": round(h["rd"], 1),
                "delta": round(h["rating"] - h["rating_before"], 1),
            }
        )
    return {
        "rating": round(r.rating, 1),
        "rd": round(r.rd, 1),
        "volatility": round(r.volatility, 6),
        "rank": rank_name(r.rating),
        "games": row["games"] if row else 0,
        "provisional": r.rd > 110,
        "history": hist,
    }


# ---------------------------------------------------------------------------
# The adaptive level
# ---------------------------------------------------------------------------


def adaptive_offset(results: list[float]) -> float:
    """The adaptive level's offset (Elo) after ``results`` (the player's scores, oldest first):
    :data:`ADAPTIVE_STEP` up per win, down per loss, clamped to ±:data:`ADAPTIVE_MAX_OFFSET` after
    each game."""
    off = 0.0
    for s in results:
        off = max(-ADAPTIVE_MAX_OFFSET, min(ADAPTIVE_MAX_OFFSET, off + ADAPTIVE_STEP * (2.0 * s - 1.0)))
    return off


def adaptive_results(store: Any, window: int = ADAPTIVE_WINDOW) -> list[float]:
    """The player's scores in the last ``window`` finished adaptive games of the library, oldest first."""
    rows = store.recent_games(window, level=ADAPTIVE, finished=True)
    out = []
    for row in rows[::-1]:
        try:
            rec = json.loads(row["record"])
        except ValueError:
            continue
        human = "red" if rec.get("red") == "human" else "black" if rec.get("black") == "human" else None
        result = row["result"]
        if human is None or result not in ("1-0", "0-1", "1/2-1/2"):
            continue
        won = (result == "1-0") == (human == "red")
        out.append(0.5 if result == "1/2-1/2" else 1.0 if won else 0.0)
    return out


def _depth(lv: Any) -> float:
    return float(UNLIMITED_DEPTH if lv.depth is None else lv.depth)


def adaptive_level(rating: float | None, offset: float = 0.0) -> dict[str, Any]:
    """The adaptive level's settings for a player of ``rating`` (None: a new player's 1500) and the
    adaptive ``offset`` (Elo): ``{"elo", "error", "target", "rating", "offset", "between": [key, key],
    "t", "depth", "time", "multipv", "margin_cp", "temperature_cp", "miss_threat", "miss_capture"}``
    (JSON values; module text).
    ``elo`` is None (the games unrated) when fewer than two levels have a measured Elo; the settings
    are then 初级's."""
    from xiangqi.engine.levels import LEVELS

    r = glicko.DEFAULT_RATING if rating is None else float(rating)
    target = r + offset
    lvls = measured_levels()
    base = {"rating": round(r, 1), "offset": round(offset, 1), "target": round(target, 1)}
    if len(lvls) < 2:
        lv = LEVELS["beginner"]
        return {
            **base,
            "elo": None,
            "error": None,
            "between": [lv.key, lv.key],
            "t": 0.0,
            "depth": lv.depth,
            "time": lv.time,
            "multipv": lv.multipv,
            "margin_cp": lv.margin_cp,
            "temperature_cp": lv.temperature_cp,
        }
    elo = min(max(target, lvls[0].elo), lvls[-1].elo)
    i = 0
    while i < len(lvls) - 2 and elo > lvls[i + 1].elo:
        i += 1
    a, b = lvls[i], lvls[i + 1]
    t = 0.0 if b.elo == a.elo else (elo - a.elo) / (b.elo - a.elo)

    def lerp(x: float, y: float) -> float:
        return x + t * (y - x)

    depth = round(lerp(_depth(a), _depth(b)))
    ta = a.time if a.time is not None else b.time
    tb = b.time if b.time is not None else a.time
    err_a = a.elo_error if a.elo_error is not None else 0
    err_b = b.elo_error if b.elo_error is not None else 0
    return {
        **base,
        "elo": round(elo),
        "error": round(lerp(err_a, err_b)) or None,
        "between": [a.key, b.key],
        "t": round(t, 4),
        "depth": None if depth >= UNLIMITED_DEPTH else int(depth),
        "time": None if ta is None else round(lerp(ta, tb), 3),
        "multipv": max(1, round(lerp(a.multipv, b.multipv))),
        "margin_cp": round(lerp(a.margin_cp, b.margin_cp)),
        "temperature_cp": round(lerp(a.temperature_cp, b.temperature_cp), 2),
        # the blind spots of 入门/初级 (levels.Level.miss_threat/miss_capture) fade the same way
        "miss_threat": round(lerp(a.miss_threat, b.miss_threat), 3),
        "miss_capture": round(lerp(a.miss_capture, b.miss_capture), 3),
    }


def adaptive_for(store: Any) -> dict[str, Any]:
    """:func:`adaptive_level` for the player of ``store``: its rating and its adaptive results."""
    row = store.get_rating()
    return adaptive_level(None if row is None else row["rating"], adaptive_offset(adaptive_results(store)))


def engine_level(settings: dict[str, Any]) -> Any:
    """The :class:`xiangqi.engine.levels.Level` of adaptive ``settings`` (:func:`adaptive_level`)."""
    from xiangqi.engine.levels import Level

    def num(key: str, kind: type, default: Any) -> Any:
        v = settings.get(key)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return default
        return kind(v)

    depth = num("depth", int, None)
    return Level(
        ADAPTIVE,
        "自适应",
        "Adaptive",
        depth=None if depth is None else max(1, min(depth, 30)),
        time=num("time", float, 1.0),
        multipv=max(1, min(num("multipv", int, 1), 8)),
        margin_cp=max(0, num("margin_cp", int, 0)),
        temperature_cp=max(0.0, num("temperature_cp", float, 0.0)),
        miss_threat=min(1.0, max(0.0, num("miss_threat", float, 0.0))),
        miss_capture=min(1.0, max(0.0, num("miss_capture", float, 0.0))),
        elo=num("elo", int, None),
        elo_error=num("error", int, None),
    )
