"""Engine matches: ``xiangqi match A B --games N --tc …`` (issue 5).

Both players are engines spoken to through :class:`~xiangqi.engine.client.SimpleEngine`:
``builtin`` / ``builtin:<level>`` is this package's own engine (``xiangqi engine``
in a subprocess, so each side has its own process, memory and GIL), anything else
is a command line (``fairy-stockfish``, ``/usr/games/sjaakii``, ``"eleeye"``).

* **Openings**: :data:`OPENINGS`, a set of balanced, commonly played starts of 1–4
  plies; game ``2k`` and ``2k+1`` use the same opening with colours swapped.
* **Adjudication** by our own rules referee (``board.outcome()``: mate, stalemate,
  perpetual check and repetition rulings, the 60-move rule, dead material), plus a
  ply cap (a draw), an illegal move or a crash (a loss for that engine), and — with
  a clock time control — a loss on time when an engine overdraws its clock by
  more than ``time_margin`` seconds.
* **Result**: the score of A and the Elo difference with its 95 % error bar
  (:func:`elo_difference`), and a PGN of every game (ICCS moves).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.engine.client import EngineError, EngineTerminatedError, Limit, SimpleEngine

#: Balanced openings (name, ICCS moves), each a common master-game start (ECCO families A–E).
OPENINGS: tuple[tuple[str, str], ...] = (
    ("中炮对屏风马", "h2e2 h9g7 h0g2 b9c7"),
    ("中炮对反宫马", "h2e2 b9c7 h0g2 h7f7"),
    ("顺炮直车", "h2e2 h7e7 h0g2 h9g7"),
    ("列炮", "h2e2 b7e7"),
    ("中炮对单提马", "h2e2 b9a7"),
    ("仙人指路对卒底炮", "c3c4 b7c7"),
    ("仙人指路对飞象", "c3c4 c9e7"),
    ("对兵局", "c3c4 c6c5"),
    ("飞相局对挺卒", "g0e2 g6g5"),
    ("飞相对左中炮", "g0e2 b7e7"),
    ("起马局对挺卒", "h0g2 g6g5"),
    ("起马对进马", "b0c2 h9g7"),
    ("过宫炮对进马", "h2d2 h9g7"),
    ("士角炮对进马", "b2d2 h9g7"),
    ("五七炮对屏风马", "h2e2 h9g7 h0g2 b9c7 b2c2"),
    ("中炮过河车对屏风马", "h2e2 h9g7 h0g2 b9c7 i0h0 i9h9 h0h6"),
)

DEFAULT_PLY_CAP = 300
#: Seconds a move may take under a depth or node time control before the engine forfeits.
DEPTH_TC_TIMEOUT = 300.0
BUILTIN = "builtin"


class MatchError(XiangqiError):
    """A bad match setting (engine spec, time control, openings)."""


# -- time controls -----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class TimeControl:
    """A match time control.

    Exactly one kind: ``movetime`` seconds per move; a clock of ``base`` seconds plus
    ``inc`` seconds per move (``moves`` per period when set, then the clock is refilled);
    or a fixed ``depth`` / ``nodes`` per move.
    """

    movetime: float | None = None
    base: float | None = None
    inc: float = 0.0
    moves: int | None = None
    depth: int | None = None
    nodes: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``0.2`` / ``200ms`` / ``0.2s`` (per move), ``60+0.5`` (clock + increment, seconds),
        ``40/60`` or ``40/60+1`` (moves per period), ``depth=6``, ``nodes=20000``.

        Raises :class:`MatchError` naming the text otherwise.
        """
        t = text.strip().lower()
        try:
            if t.startswith("depth="):
                return cls(depth=_positive_int(t[6:]))
            if t.startswith("nodes="):
                return cls(nodes=_positive_int(t[6:]))
            m = re.fullmatch(r"(?:(\d+)/)?(\d+(?:\.\d+)?)\+(\d+(?:\.\d+)?)", t) or \
                re.fullmatch(r"(\d+)/(\d+(?:\.\d+)?)()", t)
            if m:
                moves, base, inc = m.groups()
                return cls(base=float(base), inc=float(inc or 0), moves=int(moves) if moves else None)
            m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s)?", t)
            if m:
                v = float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)
                if v <= 0:
                    raise ValueError
                return cls(movetime=v)
        except ValueError:
            pass
        raise MatchError(f"bad time control {text!r}: expected e.g. 200ms, 0.2, 60+0.5, 40/60, "
                         f"depth=6 or nodes=20000")

    @property
    def uses_clock(self) -> bool:
        """True when the players have clocks."""
        return self.base is not None

    def __str__(self) -> str:
        if self.movetime is not None:
            return f"{self.movetime:g}s/move"
        if self.depth is not None:
            return f"depth {self.depth}"
        if self.nodes is not None:
            return f"{self.nodes} nodes"
        head = f"{self.moves}/" if self.moves else ""
        return f"{head}{self.base:g}+{self.inc:g}"


def _positive_int(text: str) -> int:
    v = int(text)
    if v <= 0:
        raise ValueError(text)
    return v


# -- players -----------------------------------------------------------------------------

@dataclasses.dataclass
class PlayerSpec:
    """Who plays: ``command`` (argv), ``protocol``, ``options`` to set, and a display ``name``."""

    name: str
    command: list[str]
    protocol: str = "auto"
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str, options: Sequence[str] = (), *, hash_mb: int | None = None) -> PlayerSpec:
        """``builtin`` (full strength), ``builtin:<level>`` (``beginner`` … ``master`` or 初级 … 大师),
        or an engine command line. ``options`` are ``Name=Value`` texts.

        Raises :class:`MatchError` for an unknown level or a malformed option.
        """
        opts: dict[str, Any] = {}
        for text in options:
            if "=" not in text:
                raise MatchError(f"engine option {text!r} must look like Name=Value")
            k, v = text.split("=", 1)
            opts[k.strip()] = v.strip()
        spec = spec.strip()
        if spec == BUILTIN or spec.startswith(BUILTIN + ":"):
            level = spec.partition(":")[2].strip() or "full"
            if level != "full":
                from xiangqi.engine.levels import get_level

                try:
                    lv = get_level(level)
                except ValueError as exc:
                    raise MatchError(str(exc)) from None
                level = lv.key
                name = f"{BUILTIN}:{lv.key}"
            else:
                name = BUILTIN
            if level != "full":
                opts = {"Level": level, **opts}
            shown = ",".join(f"{k}={v}" for k, v in opts.items() if k not in ("Level", "Hash"))
            name += f"({shown})" if shown else ""
            if hash_mb:
                opts = {"Hash": hash_mb, **opts}
            return cls(name, [sys.executable, "-m", "xiangqi.cli", "engine"], "uci", opts)
        if not spec:
            raise MatchError("empty engine command")
        argv = shlex.split(spec)
        shown = ",".join(f"{k}={v}" for k, v in opts.items() if k != "Hash")
        name = os.path.basename(argv[0]) + (f"({shown})" if shown else "")
        if hash_mb:
            opts = {"Hash": hash_mb, **opts}
        return cls(name, argv, "auto", opts)

    def start(self) -> SimpleEngine:
        """Start the engine and set its options (an option it lacks is skipped for Hash only)."""
        eng = SimpleEngine.popen(self.command, self.protocol, name=self.name, timeout=60.0)
        opts = dict(self.options)
        if "Hash" in opts and eng._option("Hash") is None:
            opts.pop("Hash")
        try:
            eng.configure(opts)
            eng.ping(30.0)
        except EngineError:
            eng.quit()
            raise
        return eng


# -- games ------------------------------------------------------------------------------------

@dataclasses.dataclass
class GameResult:
    """One finished game: who had Red, the opening, ``result`` (``1-0``, ``0-1``, ``1/2-1/2``) and why."""

    red: str
    black: str
    opening: str
    result: str
    reason: str
    board: Board
    round: int
    #: Wall-clock seconds per move of each player (by name), as measured by the match runner.
    move_times: dict[str, list[float]] = dataclasses.field(default_factory=dict)

    def score_for(self, name: str) -> float:
        """1, ½ or 0 for the player called ``name``."""
        if self.result == "1/2-1/2":
            return 0.5
        red_won = self.result == "1-0"
        return 1.0 if red_won == (name == self.red) else 0.0


def opening_board(moves: str) -> Board:
    """The board after an opening's ICCS moves. Raises :class:`MatchError` for an illegal line."""
    b = Board()
    for text in moves.split():
        try:
            b.push(Move.from_iccs(text))
        except XiangqiError as exc:
            raise MatchError(f"opening {moves!r}: {exc}") from None
    return b


def play_game(red: SimpleEngine, black: SimpleEngine, opening: tuple[str, str], tc: TimeControl, *,
              round_no: int = 1, ply_cap: int = DEFAULT_PLY_CAP, time_margin: float = 0.5,
              rules: object | None = None) -> GameResult:
    """Play one game from ``opening`` (name, ICCS moves) and adjudicate it (module docstring).

    ``ply_cap`` counts all plies including the opening. Engine failures do not raise:
    they end the game as a loss for that engine (the reason says what happened).
    """
    board = opening_board(opening[1])
    players = {True: red, False: black}
    clock = {True: tc.base, False: tc.base}
    moves_in_period = {True: 0, False: 0}
    times: dict[str, list[float]] = {red.name: [], black.name: []}
    for eng in (red, black):
        eng.new_game()
    while True:
        result = _game_over(red, black, opening, board, ply_cap, rules, round_no)
        if result is not None:
            result.move_times = times
            return result
        side = board.turn
        eng = players[side]
        limit = _limit(tc, clock, moves_in_period, side)
        t0 = time.monotonic()
        try:
            # depth/node limits have no time bound of their own: a hung engine forfeits after 5 minutes
            hung = None if tc.movetime is not None or tc.uses_clock else DEPTH_TC_TIMEOUT
            res = eng.play(board, limit, timeout=hung, grace=max(2.0, time_margin * 4))
        except EngineError as exc:
            return _forfeit(red, black, opening, board, side, f"{eng.name}: {exc}", round_no, times)
        used = time.monotonic() - t0
        times[eng.name].append(used)
        if res.move is None:  # the engine says it has no move; the referee disagrees (no outcome above)
            return _forfeit(red, black, opening, board, side, f"{eng.name} sent no move", round_no, times)
        if tc.uses_clock:
            clock[side] -= used
            if clock[side] < -time_margin:
                return _forfeit(red, black, opening, board, side, f"{eng.name} lost on time", round_no, times)
            clock[side] += tc.inc
            moves_in_period[side] += 1
            if tc.moves and moves_in_period[side] >= tc.moves:
                moves_in_period[side] = 0
                clock[side] += tc.base or 0.0
        board.push(res.move)


def _limit(tc: TimeControl, clock: dict[bool, float | None], done: dict[bool, int], side: bool) -> Limit:
    if tc.movetime is not None:
        return Limit(time=tc.movetime)
    if tc.depth is not None:
        return Limit(depth=tc.depth)
    if tc.nodes is not None:
        return Limit(nodes=tc.nodes)
    mtg = tc.moves - done[side] if tc.moves else None
    return Limit(wtime=max(0.0, clock[True] or 0.0), btime=max(0.0, clock[False] or 0.0),
                 winc=tc.inc, binc=tc.inc, movestogo=mtg)


def _game_over(red: SimpleEngine, black: SimpleEngine, opening: tuple[str, str], board: Board, ply_cap: int,
               rules: object | None, round_no: int) -> GameResult | None:
    out = board.outcome(rules)
    if out is not None:
        return GameResult(red.name, black.name, opening[0], out.result(), out.reason_en, board, round_no)
    if len(board.move_stack) >= ply_cap:
        return GameResult(red.name, black.name, opening[0], "1/2-1/2",
                          f"Draw — ply cap of {ply_cap} reached", board, round_no)
    return None


def _forfeit(red: SimpleEngine, black: SimpleEngine, opening: tuple[str, str], board: Board, loser: bool,
             why: str, round_no: int, times: dict[str, list[float]] | None = None) -> GameResult:
    result = "0-1" if loser else "1-0"
    return GameResult(red.name, black.name, opening[0], result, why, board, round_no, times or {})


# -- statistics ------------------------------------------------------------------------------

def elo_from_score(p: float) -> float:
    """Elo difference for an expected score ``p`` (0 < p < 1): ``-400 log10(1/p - 1)``; ±inf at the ends."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / p - 1.0)


def elo_difference(wins: int, draws: int, losses: int, z: float = 1.959964) -> tuple[float, float]:
    """Elo difference of the player with ``wins``/``draws``/``losses`` and its 95 % error bar.

    The formula is cutechess-cli's: the mean score ``p = (W + D/2) / N``; the standard
    deviation of one game's score ``s = sqrt((W (1-p)² + D (½-p)² + L p²) / N)``; the
    score's 95 % interval ``p ± z·s/√N`` (``z`` = 1.96) mapped through
    :func:`elo_from_score`; the error bar is half the width of the Elo interval.
    Returns ``(elo, error)``; ``error`` is inf when the score is 0 or 1 (all games
    won or lost) or the interval reaches 0 or 1, and nan for no games.
    """
    n = wins + draws + losses
    if n == 0:
        return math.nan, math.nan
    p = (wins + 0.5 * draws) / n
    var = (wins * (1 - p) ** 2 + draws * (0.5 - p) ** 2 + losses * p ** 2) / n
    margin = z * math.sqrt(var) / math.sqrt(n)
    lo, hi = elo_from_score(p - margin), elo_from_score(p + margin)
    err = (hi - lo) / 2.0 if math.isfinite(lo) and math.isfinite(hi) else math.inf
    return elo_from_score(p), err


@dataclasses.dataclass
class MatchResult:
    """All games of a match between ``a`` and ``b`` with the score from A's side."""

    a: str
    b: str
    tc: TimeControl
    games: list[GameResult] = dataclasses.field(default_factory=list)

    @property
    def wins(self) -> int:
        """Games A won."""
        return sum(1 for g in self.games if g.score_for(self.a) == 1.0)

    @property
    def losses(self) -> int:
        """Games A lost."""
        return sum(1 for g in self.games if g.score_for(self.a) == 0.0)

    @property
    def draws(self) -> int:
        """Drawn games."""
        return sum(1 for g in self.games if g.score_for(self.a) == 0.5)

    @property
    def score(self) -> float:
        """A's points (1 per win, ½ per draw)."""
        return self.wins + 0.5 * self.draws

    def elo(self) -> tuple[float, float]:
        """(Elo of A over B, 95 % error bar): :func:`elo_difference`."""
        return elo_difference(self.wins, self.draws, self.losses)

    def summary(self) -> str:
        """Score line and Elo line as printed by ``xiangqi match``."""
        n = len(self.games)
        elo, err = self.elo()
        pct = 100.0 * self.score / n if n else 0.0
        if math.isnan(elo):
            elo_text = "n/a"
        elif math.isinf(elo):
            elo_text = "+inf" if elo > 0 else "-inf"
        else:
            elo_text = "0" if round(elo) == 0 else f"{elo:+.0f}"
        err_text = "inf" if math.isinf(err) else ("n/a" if math.isnan(err) else f"{err:.0f}")
        text = (f"Score of {self.a} vs {self.b}: {self.wins} - {self.losses} - {self.draws} "
                f"[{pct:.1f}%] {n} games, {self.tc}\n"
                f"Elo difference: {elo_text} +/- {err_text} (95%)")
        if self.tc.movetime is not None or self.tc.uses_clock:
            parts = []
            for name in (self.a, self.b):
                ts = [t for g in self.games for t in g.move_times.get(name, [])]
                if ts:
                    parts.append(f"{name} {sum(ts) / len(ts):.3f}s mean, {max(ts):.3f}s max")
            if parts:
                text += "\nTime per move (wall clock, incl. protocol): " + "; ".join(parts)
        return text

    def game_pgn(self, g: GameResult) -> str:
        """One game as PGN with ICCS moves (``xiangqi.core.pgn``); the reason is the final comment."""
        from xiangqi.core.pgn import Game, write_game

        game = Game.from_board(g.board)
        game.headers.update({"Event": f"{self.a} vs {self.b}", "Round": str(g.round), "Red": g.red,
                             "Black": g.black, "Result": g.result, "Opening": g.opening,
                             "TimeControl": str(self.tc), "Termination": g.reason})
        game.final_comment = g.reason
        return write_game(game, notation="iccs")

    def pgn(self) -> str:
        """Every game as PGN (:meth:`game_pgn`), separated by blank lines."""
        return "\n".join(self.game_pgn(g) for g in self.games)


def run_match(a: PlayerSpec, b: PlayerSpec, games: int, tc: TimeControl, *,
              openings: Sequence[tuple[str, str]] = OPENINGS, ply_cap: int = DEFAULT_PLY_CAP,
              time_margin: float = 0.5, on_game: Callable[[GameResult, MatchResult], None] | None = None
              ) -> MatchResult:
    """Play ``games`` games between ``a`` and ``b``; pairs of games share an opening with colours
    swapped (A has Red in odd-numbered games). ``on_game`` is called after each game.

    An engine that crashes is restarted for the next game. Raises :class:`MatchError`
    for bad settings and :class:`EngineError` if an engine cannot be started at all.
    """
    if games < 1:
        raise MatchError(f"games must be >= 1, got {games}")
    if not openings:
        raise MatchError("no openings")
    for op in openings:
        opening_board(op[1])
    if a.name == b.name:
        b = dataclasses.replace(b, name=b.name + "#2")
    result = MatchResult(a.name, b.name, tc)
    engines: dict[str, SimpleEngine] = {}
    try:
        for i in range(games):
            for spec in (a, b):
                eng = engines.get(spec.name)
                if eng is None or eng.process.poll() is not None:
                    if eng is not None:
                        eng.close(0.5)
                    engines[spec.name] = spec.start()
            opening = openings[(i // 2) % len(openings)]
            a_red = i % 2 == 0
            red, black = (engines[a.name], engines[b.name]) if a_red else (engines[b.name], engines[a.name])
            try:
                g = play_game(red, black, opening, tc, round_no=i + 1, ply_cap=ply_cap,
                              time_margin=time_margin)
            except EngineTerminatedError as exc:  # died during new_game(): counts against it
                loser_red = red.process.poll() is not None
                g = _forfeit(red, black, opening, opening_board(opening[1]), loser_red, str(exc), i + 1)
            result.games.append(g)
            if on_game is not None:
                on_game(g, result)
    finally:
        for eng in engines.values():
            eng.quit()
    return result


# -- benchmarks: nodes per second, against a peer measured in the same run ----------------------

#: Positions for the search benchmark: the start and two opening positions of :data:`OPENINGS`.
BENCH_OPENINGS = ("", "h2e2 h9g7 h0g2 b9c7 i0h0 i9h9 h0h6", "c3c4 b7c7")


def perft_speed(depth: int, fen: str | None = None) -> tuple[int, float]:
    """``(nodes, seconds)`` of the Numba perft (``xiangqi.engine.movegen.perft``) to ``depth``.

    A depth-2 perft runs first so that compiling is not timed.
    """
    from xiangqi.engine.movegen import perft

    board = Board(fen) if fen else Board()
    perft(board, 2)
    t0 = time.perf_counter()
    nodes = perft(board, depth)
    return nodes, time.perf_counter() - t0


def peer_perft_speed(command: str, depth: int, fen: str | None = None) -> tuple[int, float]:
    """``(nodes, seconds)`` of ``go perft depth`` in a UCI engine that has it (Fairy-Stockfish).

    The time is measured here, from sending ``go perft`` to the ``Nodes searched`` line.
    Raises :class:`EngineError` when the engine does not print ``Nodes searched: N``.
    """
    with SimpleEngine.popen(command, "uci") as eng:
        board = Board(fen) if fen else Board()
        eng.send(eng.position_command(board))
        eng.ping()
        t0 = time.perf_counter()
        eng.send(f"go perft {depth}")
        while True:
            line = eng._readline(time.monotonic() + 600, "Nodes searched")
            if line.startswith("Nodes searched"):
                dt = time.perf_counter() - t0
                return int(line.split(":")[1]), dt


def search_speed(depth: int = 9, hash_mb: int = 64) -> tuple[int, float, list[str]]:
    """``(nodes, seconds, lines)`` of the built-in search to ``depth`` on :data:`BENCH_OPENINGS`.

    Runs in this process (``xiangqi.engine.Engine``) after :func:`xiangqi.engine.warmup`;
    ``lines`` describe each position's result.
    """
    from xiangqi.engine import Engine, warmup
    from xiangqi.engine import Limit as EngineLimit

    warmup(background=False)
    eng = Engine(hash_mb=hash_mb)
    nodes = 0
    seconds = 0.0
    lines = []
    for moves in BENCH_OPENINGS:
        board = opening_board(moves)
        eng.new_game()
        t0 = time.perf_counter()
        res = eng.search(board, EngineLimit(depth=depth))
        dt = time.perf_counter() - t0
        nodes += res.nodes
        seconds += dt
        lines.append(f"{board.fen()}: depth {res.depth} best {res.move} nodes {res.nodes} "
                     f"time {dt:.2f}s nps {res.nodes / dt:,.0f}")
    return nodes, seconds, lines


__all__ = ["OPENINGS", "GameResult", "MatchError", "MatchResult", "PlayerSpec", "TimeControl",
           "elo_difference", "elo_from_score", "opening_board", "peer_perft_speed", "perft_speed",
           "play_game", "run_match", "search_speed"]
