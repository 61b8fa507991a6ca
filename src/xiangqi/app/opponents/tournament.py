"""Engine matches in the page: two players or a small round-robin of levels and added engines, with
a live cross table, and every game kept in the library.

The games are played by :func:`xiangqi.match.runner.run_match` — the code of ``xiangqi match``, not
a second implementation: the same openings (pairs of games share one with colours swapped), the
same adjudication by our referee, the same engine processes (the built-in levels run as
``xiangqi engine`` subprocesses, added engines as their own programs). Each pair of players plays
its games in turn (pairs in the order of the round-robin's rounds: every player meets every other
once per cycle); one game at a time, so the game against the computer keeps a core.

The standings give each player's points and an Elo fitted to all the games at once
(:func:`xiangqi.match.runner.fit_ratings`, the first player anchored at 0, so the column reads
"Elo relative to the first player"), with its 95 % error bar; a pair's cell gives its wins, draws,
losses and the Elo difference of that pair alone (:func:`xiangqi.match.runner.elo_difference`).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from xiangqi.core.errors import XiangqiError

__all__ = ["TournamentError", "Tournament", "TournamentManager", "MAX_PLAYERS", "MAX_GAMES_PER_PAIR"]

log = logging.getLogger(__name__)

MAX_PLAYERS = 8
MAX_GAMES_PER_PAIR = 50


class TournamentError(XiangqiError):
    """A round-robin that cannot be started (too few or too many players, a player twice, an unknown
    level or engine, one already running)."""


@dataclasses.dataclass
class _Cell:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, score: float) -> None:
        if score == 1.0:
            self.wins += 1
        elif score == 0.0:
            self.losses += 1
        else:
            self.draws += 1


def _finite(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else round(x)


class Tournament:
    """One round-robin. ``players``: ``(key, PlayerSpec)`` pairs (key: ``builtin:<level>`` or
    ``engine:<id>``); ``games_per_pair`` even numbers keep colours balanced; ``tc`` a
    :class:`xiangqi.match.runner.TimeControl`; ``save(game_result, event)`` keeps a finished game
    (the library), called in the worker thread; its errors are logged, never raised.
    Run with :meth:`run` (blocks; :class:`TournamentManager` runs it in a thread)."""

    def __init__(self, players: Sequence[tuple[str, Any]], games_per_pair: int, tc: Any, *,
                 save: Callable[[Any, str], None] | None = None, ply_cap: int | None = None,
                 openings: Sequence[tuple[str, str]] | None = None) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.keys = [k for k, _ in players]
        self.specs = [s for _, s in players]
        names: list[str] = []
        for s in self.specs:  # distinct names (two instances of one program)
            name, n = s.name, 2
            while name in names:
                name, n = f"{s.name}#{n}", n + 1
            names.append(name)
        self.specs = [dataclasses.replace(s, name=n) for s, n in zip(self.specs, names, strict=True)]
        self.names = names
        self.games_per_pair = games_per_pair
        self.tc = tc
        self.save = save
        self.ply_cap = ply_cap
        #: ``(name, moves)`` openings as :func:`xiangqi.match.runner.run_match` takes them (None: its
        #: balanced set; ``"<FEN>|"`` starts for the random mode)
        self.openings = tuple(openings) if openings else None
        self.event = f"{' / '.join(names)} ({tc})"
        self.pairs = list(itertools.combinations(range(len(names)), 2))
        self.cells = {p: _Cell() for p in self.pairs}
        self.results: list[tuple[str, str, float]] = []  # (a, b, a's score) of every game
        self.status = "queued"   # queued | running | done | cancelled | failed
        self.error: str | None = None
        self.current: str | None = None
        self.started = time.time()
        self._cancel = threading.Event()
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        """Games of the whole round-robin."""
        return len(self.pairs) * self.games_per_pair

    def cancel(self) -> None:
        """Stop after the game being played (it is left out)."""
        self._cancel.set()

    def run(self) -> None:
        """Play every pair's games (blocks). Sets :attr:`status`; never raises."""
        from xiangqi.match.runner import DEFAULT_PLY_CAP, run_match

        self.status = "running"
        try:
            for i, j in self.pairs:
                if self._cancel.is_set():
                    break
                a, b = self.specs[i], self.specs[j]
                with self._lock:
                    self.current = f"{a.name} – {b.name}"

                def on_game(g: Any, _res: Any, i: int = i, j: int = j) -> None:
                    score = g.score_for(self.names[i])
                    with self._lock:
                        self.cells[(i, j)].add(score)
                        self.results.append((self.names[i], self.names[j], score))
                    if self.save is not None:
                        try:
                            self.save(g, self.event)
                        except Exception:  # noqa: BLE001 - a full disk must not end the tournament
                            log.exception("a tournament game could not be kept in the library")

                extra = {"openings": self.openings} if self.openings else {}
                run_match(a, b, self.games_per_pair, self.tc, on_game=on_game,
                          ply_cap=self.ply_cap or DEFAULT_PLY_CAP, until=lambda _r: self._cancel.is_set(),
                          **extra)
            self.status = "cancelled" if self._cancel.is_set() else "done"
        except Exception as exc:  # noqa: BLE001 - an engine that cannot start ends it with the reason
            log.exception("the round-robin failed")
            self.status, self.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self.current = None

    def standings(self) -> list[dict[str, Any]]:
        """Players by points: ``{name, key, points, games, elo, elo_error}`` (Elo relative to the
        first player; None while it cannot be fitted, e.g. a player who won or lost everything)."""
        from xiangqi.match.runner import fit_ratings

        with self._lock:
            results = list(self.results)
        points = dict.fromkeys(self.names, 0.0)
        played = dict.fromkeys(self.names, 0)
        for a, b, s in results:
            points[a] += s
            points[b] += 1 - s
            played[a] += 1
            played[b] += 1
        ratings: dict[str, Any] = {}
        if results:
            try:
                fitted = fit_ratings(results, {self.names[0]: 0.0})
                ratings = fitted if isinstance(fitted, dict) else {r.name: r for r in fitted}
            except Exception:  # noqa: BLE001 - too few games to fit: no Elo yet
                ratings = {}
        rows = []
        for k, name in enumerate(self.names):
            r = ratings.get(name)
            elo = getattr(r, "elo", None) if r is not None else None
            err = getattr(r, "error", None) if r is not None else None
            rows.append({"name": name, "key": self.keys[k], "points": points[name], "games": played[name],
                         "elo": None if elo is None else _finite(elo),
                         "elo_error": None if err is None else _finite(err)})
        return sorted(rows, key=lambda r: -r["points"])

    def to_dict(self) -> dict[str, Any]:
        """The API's view: ``{id, status, error, players: [names], keys, games_per_pair, tc, done,
        total, current, table: [[cell or null]], standings}``; a cell (row player against column
        player) is ``{wins, draws, losses, elo, elo_error}`` from the row player's side."""
        from xiangqi.match.runner import elo_difference

        n = len(self.names)
        table: list[list[dict[str, Any] | None]] = [[None] * n for _ in range(n)]
        with self._lock:
            cells = {p: dataclasses.replace(c) for p, c in self.cells.items()}
            done = len(self.results)
            current = self.current
        for (i, j), c in cells.items():
            for row, col, w, lo in ((i, j, c.wins, c.losses), (j, i, c.losses, c.wins)):
                games = w + lo + c.draws
                elo, err = elo_difference(w, c.draws, lo) if games else (math.nan, math.nan)
                table[row][col] = {"wins": w, "draws": c.draws, "losses": lo, "elo": _finite(elo),
                                   "elo_error": _finite(err)}
        return {"id": self.id, "status": self.status, "error": self.error, "players": list(self.names),
                "keys": list(self.keys), "games_per_pair": self.games_per_pair, "tc": str(self.tc),
                "done": done, "total": self.total, "current": current, "table": table,
                "standings": self.standings()}


class TournamentManager:
    """At most one round-robin per server at a time (the machine's cores are the game's first).
    ``save(game_result, event)`` keeps each game (see :class:`Tournament`)."""

    def __init__(self, save: Callable[[Any, str], None] | None = None) -> None:
        self.save = save
        self.current: Tournament | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self, players: Sequence[tuple[str, Any]], games_per_pair: int, tc: Any,
              ply_cap: int | None = None, openings: Sequence[tuple[str, str]] | None = None) -> Tournament:
        """Start a round-robin in a thread. Raises :class:`TournamentError` when one is running or
        the players are not 2…:data:`MAX_PLAYERS` distinct ones, or the games per pair are out of
        1…:data:`MAX_GAMES_PER_PAIR`."""
        keys = [k for k, _ in players]
        if not 2 <= len(keys) <= MAX_PLAYERS:
            raise TournamentError(f"a round-robin needs 2 to {MAX_PLAYERS} players, got {len(keys)}")
        if len(set(keys)) != len(keys):
            raise TournamentError("a player is listed twice")
        if not 1 <= games_per_pair <= MAX_GAMES_PER_PAIR:
            raise TournamentError(f"games per pair must be 1 to {MAX_GAMES_PER_PAIR}, got {games_per_pair}")
        with self._lock:
            if self.current is not None and self.current.status in ("queued", "running"):
                raise TournamentError("a round-robin is running; stop it first")
            t = Tournament(players, games_per_pair, tc, save=self.save, ply_cap=ply_cap, openings=openings)
            self.current = t
            self._thread = threading.Thread(target=t.run, name="xiangqi-tournament", daemon=True)
            self._thread.start()
        return t

    def cancel(self) -> Tournament | None:
        """Stop the running round-robin after its current game; returns it (None when there is none)."""
        t = self.current
        if t is not None:
            t.cancel()
        return t

    def close(self, timeout: float = 10.0) -> None:
        """Cancel and wait for the worker (the server is stopping)."""
        self.cancel()
        th = self._thread
        if th is not None:
            th.join(timeout)
