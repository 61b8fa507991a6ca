"""Engine matches: ``xiangqi match A B --games N --tc …`` (issue 5).

Both players are engines spoken to through :class:`~xiangqi.engine.uci.client.SimpleEngine`:
``builtin`` / ``builtin:<level>`` is this package's own engine (``xiangqi engine``
in a subprocess, so each side has its own process, memory and GIL), anything else
is a command line (``fairy-stockfish``, ``/usr/games/sjaakii``, ``"eleeye"``).

* **Openings**: :data:`OPENINGS`, a set of balanced, commonly played starts of 1–4
  plies; game ``2k`` and ``2k+1`` use the same opening with colours swapped.
* **Adjudication** by our own rules referee (``board.outcome()``: mate, stalemate,
  perpetual check and repetition rulings, the 60-move rule, dead material), plus a
  ply cap (a draw), an illegal move or a crash (a loss for that engine), an engine's
  ``nobestmove`` / ``bestmove (none)`` judged as a draw claim (:func:`judge_claim`: valid
  → the referee's ruling, invalid → a loss for the claimant), and — with
  a clock time control — a loss on time when an engine overdraws its clock by
  more than ``time_margin`` seconds.
* **Result**: the score of A and the Elo difference with its 95 % error bar
  (:func:`elo_difference`), and a PGN of every game (ICCS moves).
* **Odds and speed**: each side may have its own time control (``tc_b``), and
  ``concurrency`` games can run at once, each with its own engine processes;
  results come out in game order either way.
* **Ratings of many players** from all their games at once: :func:`fit_ratings`
  (used by ``bench/calibrate_levels.py`` to measure the levels' Elo).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import queue
import re
import shlex
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.core.outcome import Outcome
from xiangqi.engine.uci.client import (
    EngineError,
    EngineTerminatedError,
    EngineTimeoutError,
    Limit,
    SimpleEngine,
)

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
#: Seconds an engine may take to start (handshake up to ``uciok``/``ucciok`` and the first
#: ``readyok``): generous, because a Numba engine compiles its kernels on a first start (15-60 s on
#: an idle machine, minutes on a loaded one). ``xiangqi match --start-timeout``.
DEFAULT_START_TIMEOUT = 300.0
#: Seconds an engine may take to answer ``isready`` later (after ``ucinewgame``, its options):
#: ``xiangqi match --ping-timeout``.
DEFAULT_PING_TIMEOUT = 120.0
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
    #: seconds allowed for the start (handshake and first ``readyok``), see DEFAULT_START_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    #: seconds allowed for each later ``isready`` → ``readyok``, see DEFAULT_PING_TIMEOUT
    ping_timeout: float = DEFAULT_PING_TIMEOUT
    #: the folder the engine runs in (ElephantEye reads its book and evaluation files from there)
    cwd: str | None = None

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
        """Start the engine and set its options (an option it lacks is skipped for Hash only).

        The start may take :attr:`start_timeout` seconds, each later ``isready``
        :attr:`ping_timeout`. Raises :class:`EngineError`; one that a time limit ended names the
        engine, the limit and the option that raises it.
        """
        try:
            # our engine's readyok waits for its compiled search then (no game starts on its fallback)
            env = {**os.environ, "XIANGQI_ENGINE_WAIT_READY": "1"}
            eng = SimpleEngine.popen(self.command, self.protocol, name=self.name, timeout=self.start_timeout,
                                     env=env, cwd=self.cwd)
        except EngineTimeoutError as exc:
            raise EngineTimeoutError(f"{exc}, while starting (the start limit, {self.start_timeout:g} s: an "
                                     "engine may compile for minutes on a loaded machine; raise it with "
                                     "--start-timeout)") from None
        eng.ping_timeout = self.ping_timeout
        opts = dict(self.options)
        if "Hash" in opts and eng._option("Hash") is None:
            hash_mb = opts.pop("Hash")
            if eng._option("hashsize") is not None:  # UCCI's name for it (ElephantEye: MB, 16-1024)
                opts["hashsize"] = hash_mb
        try:
            eng.configure(opts)
            eng.ping(self.start_timeout)
        except EngineTimeoutError as exc:
            eng.quit()
            raise EngineTimeoutError(f"{exc}, after its options (the start limit, {self.start_timeout:g} s; "
                                     "raise it with --start-timeout)") from None
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
    #: Who ended the game: ``ours`` (:meth:`Board.outcome`) or an outside referee's name (``pyffish 0.0.90``).
    referee: str = "ours"
    #: With an outside referee: our referee's first ruling in the game, ``(result, reason, ply)``, or None
    #: when it made none before the outside referee ended the game (it would have played on).
    own: tuple[str, str, int] | None = None

    @property
    def rulings_differ(self) -> bool:
        """True when an outside referee ended the game and our referee would have ruled otherwise
        (another result, or no end at that point)."""
        return self.referee != "ours" and (self.own is None or self.own[0] != self.result)

    def own_score_for(self, name: str) -> float | None:
        """``name``'s score under our referee's ruling (None when it made none)."""
        if self.referee == "ours":
            return self.score_for(name)
        if self.own is None:
            return None
        if self.own[0] == "1/2-1/2":
            return 0.5
        return 1.0 if (self.own[0] == "1-0") == (name == self.red) else 0.0

    def score_for(self, name: str) -> float:
        """1, ½ or 0 for the player called ``name``."""
        if self.result == "1/2-1/2":
            return 0.5
        red_won = self.result == "1-0"
        return 1.0 if red_won == (name == self.red) else 0.0


def random_openings(pairs: int, rng: Any = None) -> tuple[tuple[str, str], ...]:
    """``pairs`` openings of the random mode (随机开局, :mod:`xiangqi.core.variants`), one per pair of
    games: ``("随机开局 N", "<FEN>|")`` as :func:`opening_board` reads them (``rng``: a
    ``random.Random`` for repeatable shuffles; the standard arrangement is left out)."""
    from xiangqi.core.variants import random_start, random_start_fen

    numbers = [random_start(rng)[0] for _ in range(pairs)]
    return tuple((f"随机开局 {n}", f"{random_start_fen(n)}|") for n in numbers)


def read_openings(path: str | os.PathLike[str]) -> tuple[tuple[str, str], ...]:
    """The openings of a text file for ``xiangqi match --openings-file``: one ``name<TAB>moves``
    per line (ICCS moves, or ``<FEN>|<moves>`` as :func:`opening_board` reads them; a third
    tab-separated field and anything after ``#`` in a line without a tab are ignored, blank lines
    and lines starting with ``#`` are skipped), in file order. ``tools/book_openings.py`` writes such
    files from the opening book. Raises :class:`MatchError` for an unreadable file, a line without a
    name or moves, an illegal line or a file with no opening."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise MatchError(f"cannot read the openings file {os.fspath(path)!r}: {exc}") from None
    out: list[tuple[str, str]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) < 2 or not fields[0] or not fields[1]:
            raise MatchError(f"{os.fspath(path)}:{no}: expected 'name<TAB>moves', got {raw!r}")
        try:
            opening_board(fields[1])
        except MatchError as exc:
            raise MatchError(f"{os.fspath(path)}:{no}: {exc}") from None
        out.append((fields[0], fields[1]))
    if not out:
        raise MatchError(f"{os.fspath(path)}: no openings")
    return tuple(out)


def opening_board(moves: str) -> Board:
    """The board after an opening's ICCS moves, from the standard start or, written
    ``"<FEN>|<moves>"``, from that position (a 随机开局 start: ``--variant random``). Raises
    :class:`MatchError` for a bad FEN or an illegal line."""
    fen, bar, rest = moves.partition("|")
    if bar:
        try:
            b = Board(fen)
        except XiangqiError as exc:
            raise MatchError(f"opening start {fen!r}: {exc}") from None
        moves = rest
    else:
        b = Board()
    for text in moves.split():
        try:
            b.push(Move.from_iccs(text))
        except XiangqiError as exc:
            raise MatchError(f"opening {moves!r}: {exc}") from None
    return b


def play_game(red: SimpleEngine, black: SimpleEngine, opening: tuple[str, str], tc: TimeControl, *,
              round_no: int = 1, ply_cap: int = DEFAULT_PLY_CAP, time_margin: float = 0.5,
              rules: object | None = None, black_tc: TimeControl | None = None,
              referee: Any = None) -> GameResult:
    """Play one game from ``opening`` (name, ICCS moves) and adjudicate it (module docstring).

    ``referee``: None for our referee, or an outside one with ``outcome(board) -> (result, reason) |
    None`` and a ``name`` (:class:`xiangqi.match.outside_referee.PyffishReferee`), which then ends the
    game; our referee's first ruling is kept in :attr:`GameResult.own`.

    ``tc`` is Red's time control and, unless ``black_tc`` is given, Black's too
    (odds matches: e.g. a level at its own time against a peer at 200 ms).
    ``ply_cap`` counts all plies including the opening. Engine failures do not raise:
    they end the game as a loss for that engine (the reason says what happened).
    """
    board = opening_board(opening[1])
    players = {True: red, False: black}
    tcs = {True: tc, False: black_tc or tc}
    clock = {True: tc.base, False: tcs[False].base}
    moves_in_period = {True: 0, False: 0}
    times: dict[str, list[float]] = {red.name: [], black.name: []}
    for eng in (red, black):
        try:
            eng.new_game()
        except EngineTimeoutError as exc:
            raise EngineTimeoutError(f"{exc}, after ucinewgame (the limit of each later isready, "
                                     f"{eng.ping_timeout:g} s; raise it with --ping-timeout)") from None
    own: list[tuple[str, str, int]] = []

    def done(g: GameResult) -> GameResult:
        g.move_times = times
        if referee is not None:
            g.referee = referee.name
            # a forfeit, a claim or the ply cap ends the game for both referees alike
            g.own = own[0] if own else (None if g.reason.startswith("pyffish:")
                                        else (g.result, g.reason, len(board.move_stack)))
        return g

    while True:
        result = _game_over(red, black, opening, board, ply_cap, rules, round_no, referee, own)
        if result is not None:
            return done(result)
        side = board.turn
        eng = players[side]
        tc = tcs[side]
        limit = _limit(tc, clock, moves_in_period, side)
        t0 = time.monotonic()
        try:
            # depth/node limits have no time bound of their own: a hung engine forfeits after 5 minutes
            hung = None if tc.movetime is not None or tc.uses_clock else DEPTH_TC_TIMEOUT
            res = eng.play(board, limit, timeout=hung, grace=max(2.0, time_margin * 4))
        except EngineError as exc:
            return done(_forfeit(red, black, opening, board, side, f"{eng.name}: {exc}", round_no, times))
        used = time.monotonic() - t0
        times[eng.name].append(used)
        if res.move is None:  # no move: a draw claim (ElephantEye) or a resignation, judged by our referee
            ruling = judge_claim(board, rules)
            if ruling is not None:
                return done(GameResult(red.name, black.name, opening[0], ruling.result(),
                                       f"{ruling.reason_en} (claimed by {eng.name})", board, round_no, times))
            what = "resigned" if res.resigned else "sent no move (an invalid draw claim)"
            return done(_forfeit(red, black, opening, board, side, f"{eng.name} {what}", round_no, times))
        if tc.uses_clock:
            clock[side] -= used
            if clock[side] < -time_margin:
                return done(_forfeit(red, black, opening, board, side, f"{eng.name} lost on time", round_no,
                                     times))
            clock[side] += tc.inc
            moves_in_period[side] += 1
            if tc.moves and moves_in_period[side] >= tc.moves:
                moves_in_period[side] = 0
                clock[side] += tc.base or 0.0
        board.push(res.move)


def judge_claim(board: Board, rules: object | None = None) -> Outcome | None:
    """Our referee's ruling on a draw claimed by the side to move of ``board`` (an engine that
    answers ``nobestmove`` or ``bestmove (none)``, as ElephantEye does in a position it holds drawn).

    The claim is valid, and the drawn :class:`~xiangqi.core.outcome.Outcome` returned, when

    1. the referee rules the position drawn already (:meth:`Board.outcome`: the natural move
       limit, a drawn repetition at its third occurrence, neither side with attacking material);
    2. **the move limit**: the claimant's next move reaches the rule set's natural move limit
       (``halfmove_clock + 1 >= move_limit_plies``, RULES.md §4) and it has a legal move that is
       not a capture (a claim "with the intended move", as the FIDE Laws art. 9.3 allow);
    3. **a repetition the rules rule drawn**: the position occurred before since the last
       capture (a cycle from its first occurrence to now) and
       :func:`~xiangqi.core.referee.rule_cycle` rules that cycle a draw (no side forbidden, or both).
       When it rules the *opponent's* moves forbidden (the opponent checks or chases
       perpetually), that ruling is returned: the claimant wins, as the referee would rule at
       the third occurrence (ElephantEye claims any repetition, also one it wins by rule);
    4. **dead material**: neither side has a rook, horse, cannon or pawn (RULES.md §6); this is
       also case 1, kept for the reason text.

    Otherwise (a position the claimant has lost, a cycle in which the claimant's own moves are
    forbidden, or no draw rule met) None: the claim is invalid and the claimant forfeits.
    """
    from xiangqi.core.board import Termination
    from xiangqi.core.classify import classify_cycle
    from xiangqi.core.outcome import draw
    from xiangqi.core.referee import get_rules, rule_cycle

    out = board.outcome(rules)
    if out is not None:
        return out if out.winner is None else None
    rs = get_rules(rules)
    if board.halfmove_clock + 1 >= rs.move_limit_plies and any(
            not board.is_capture(m) for m in board.legal_moves):
        n = rs.move_limit_plies
        return draw(Termination.MOVE_LIMIT, f"{n // 2}回合未吃子，判和（提和成立）",
                    f"{n // 2} moves without a capture with the claimant's next move")
    # the earliest earlier occurrence of this position (same side to move) since the last capture
    key = (tuple(board.squares), board.turn)
    b = board.copy()
    first = None
    for back in range(1, min(len(board.move_stack), board.halfmove_clock) + 1):
        b.pop()
        if back % 2 == 0 and (tuple(b.squares), b.turn) == key:
            first = len(board.move_stack) - back
    if first is not None:
        ruling = rule_cycle(classify_cycle(board, first, rs), rs)
        if ruling.winner is None or ruling.winner == board.turn:
            return ruling
    return None


def _limit(tc: TimeControl, clock: dict[bool, float | None], done: dict[bool, int], side: bool) -> Limit:
    if tc.movetime is not None:
        return Limit(time=tc.movetime)
    if tc.depth is not None:
        return Limit(depth=tc.depth)
    if tc.nodes is not None:
        return Limit(nodes=tc.nodes)
    mtg = tc.moves - done[side] if tc.moves else None
    # a side without a clock (odds match against a per-move side) is shown the mover's own clock
    other = clock[not side] if clock[not side] is not None else clock[side]
    own = clock[side] or 0.0
    red, black = (own, other) if side else (other, own)
    return Limit(wtime=max(0.0, red or 0.0), btime=max(0.0, black or 0.0),
                 winc=tc.inc, binc=tc.inc, movestogo=mtg)


def _game_over(red: SimpleEngine, black: SimpleEngine, opening: tuple[str, str], board: Board, ply_cap: int,
               rules: object | None, round_no: int, referee: Any = None,
               own: list[tuple[str, str, int]] | None = None) -> GameResult | None:
    out = board.outcome(rules)
    if referee is not None:
        if out is not None and own is not None and not own:
            own.append((out.result(), out.reason_en, len(board.move_stack)))
        theirs = referee.outcome(board)
        if theirs is not None:
            return GameResult(red.name, black.name, opening[0], theirs[0], theirs[1], board, round_no)
    elif out is not None:
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


#: Elo logistic scale: a difference of ``d`` Elo gives the expected score ``1 / (1 + 10**(-d/400))``.
ELO_SCALE = 400.0 / math.log(10.0)


@dataclasses.dataclass(frozen=True)
class Rating:
    """A fitted rating: ``elo``, the half-width ``error`` of its 95 % interval (0 for an anchor),
    and the number of ``games`` the player played."""

    elo: float
    error: float
    games: int


def fit_ratings(games: Sequence[tuple[str, str, float]], anchors: dict[str, float], *,
                prior_draws: float = 1.0, z: float = 1.959964, max_iter: int = 100) -> dict[str, Rating]:
    """Ratings of every player by maximum likelihood under the Elo logistic (Bradley-Terry) model.

    ``games`` are ``(player_a, player_b, score_of_a)`` with score 1, ½ or 0 (a draw
    counts as half a win and half a loss); ``anchors`` fix the ratings of some players
    (e.g. an engine at a set ``UCI_Elo``). ``prior_draws`` virtual draws are added to
    every pair of players that met, so that a player who won or lost every game
    still gets a finite rating (BayesElo's device, here per pair; 0 turns it off).
    The model: ``P(a beats b) = 1 / (1 + 10**((R_b - R_a) / 400))``; Newton's method
    maximises the log-likelihood; the error bar is ``z`` (1.96: 95 %) times the
    standard deviation from the inverse of the Hessian (the observed information).

    Players with no chain of games to an anchor cannot be placed and are left out.
    Returns ``{player: Rating}`` for the anchors (error 0) and every placed player.
    Raises :class:`MatchError` when there is no anchor among the players, or for a
    negative (or NaN) ``prior_draws`` or a score outside 0..1.
    """
    import numpy as np

    if not prior_draws >= 0.0:
        raise MatchError(f"prior_draws must be >= 0, got {prior_draws}")

    pairs: dict[tuple[str, str], list[float]] = {}
    played: dict[str, int] = {}
    for a, b, s in games:
        if a == b:
            continue
        if not 0.0 <= s <= 1.0:
            raise MatchError(f"score must be between 0 and 1, got {s}")
        key, sa = ((a, b), s) if a < b else ((b, a), 1.0 - s)
        acc = pairs.setdefault(key, [0.0, 0.0])
        acc[0] += sa
        acc[1] += 1.0
        played[a] = played.get(a, 0) + 1
        played[b] = played.get(b, 0) + 1
    fixed = {p: float(e) for p, e in anchors.items() if p in played}
    if not fixed:
        raise MatchError("no anchored player has played a game")
    # players connected to an anchor
    links: dict[str, set[str]] = {}
    for a, b in pairs:
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    reach, todo = set(fixed), list(fixed)
    while todo:
        for q in links.get(todo.pop(), ()):
            if q not in reach:
                reach.add(q)
                todo.append(q)
    free = sorted(p for p in reach if p not in fixed)
    index = {p: i for i, p in enumerate(free)}
    start = sum(fixed.values()) / len(fixed)
    r = np.full(len(free), start)
    data = [(a, b, sa + prior_draws / 2.0, n + prior_draws) for (a, b), (sa, n) in pairs.items()
            if a in reach and b in reach]

    def rating(p: str) -> float:
        return fixed[p] if p in fixed else float(r[index[p]])

    def grad_hess() -> tuple[np.ndarray, np.ndarray]:
        g = np.zeros(len(free))
        h = np.zeros((len(free), len(free)))
        for a, b, sa, n in data:
            p = 1.0 / (1.0 + math.exp(-(rating(a) - rating(b)) / ELO_SCALE))
            d1 = (sa - n * p) / ELO_SCALE           # d logL / d R_a
            d2 = n * p * (1.0 - p) / ELO_SCALE ** 2  # - d2 logL / d R_a^2
            for x, sign in ((a, 1.0), (b, -1.0)):
                if x in index:
                    g[index[x]] += sign * d1
                    h[index[x], index[x]] += d2
            if a in index and b in index:
                h[index[a], index[b]] -= d2
                h[index[b], index[a]] -= d2
        return g, h

    for _ in range(max_iter):
        if not free:
            break
        g, h = grad_hess()
        step = np.linalg.solve(h + 1e-12 * np.eye(len(free)), g)
        biggest = float(np.max(np.abs(step)))
        if biggest > 400.0:  # damp early steps (far from the optimum when scores are one-sided)
            step *= 400.0 / biggest
        r = r + step
        if biggest < 1e-6:
            break
    out = {p: Rating(e, 0.0, played[p]) for p, e in fixed.items()}
    if free:
        _, h = grad_hess()
        cov = np.linalg.inv(h)
        for p, i in index.items():
            out[p] = Rating(float(r[i]), float(z * math.sqrt(max(cov[i, i], 0.0))), played[p])
    return out


@dataclasses.dataclass
class MatchResult:
    """All games of a match between ``a`` and ``b`` with the score from A's side."""

    a: str
    b: str
    tc: TimeControl
    games: list[GameResult] = dataclasses.field(default_factory=list)
    #: B's time control when it differs from A's (``tc``); None = the same.
    tc_b: TimeControl | None = None

    @property
    def tc_text(self) -> str:
        """The time control as printed: ``0.2s/move``, or ``A's / B's`` when they differ."""
        if self.tc_b is None or self.tc_b == self.tc:
            return str(self.tc)
        return f"{self.tc} / {self.tc_b}"

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
                f"[{pct:.1f}%] {n} games, {self.tc_text}\n"
                f"Elo difference: {elo_text} +/- {err_text} (95%)")
        outside = [g for g in self.games if g.referee != "ours"]
        if outside:
            text += "\n" + self.referee_summary()
        timed = [t for t in (self.tc, self.tc_b) if t is not None]
        if any(t.movetime is not None or t.uses_clock for t in timed):
            parts = []
            for name in (self.a, self.b):
                ts = [t for g in self.games for t in g.move_times.get(name, [])]
                if ts:
                    parts.append(f"{name} {sum(ts) / len(ts):.3f}s mean, {max(ts):.3f}s max")
            if parts:
                text += "\nTime per move (wall clock, incl. protocol): " + "; ".join(parts)
        return text

    def referee_summary(self) -> str:
        """With an outside referee: its name, our referee's tally of the same games and the games where
        the two differ (numbered as played)."""
        names = sorted({g.referee for g in self.games if g.referee != "ours"})
        scores = [g.own_score_for(self.a) for g in self.games]
        w = sum(1 for x in scores if x == 1.0)
        ls = sum(1 for x in scores if x == 0.0)
        d = sum(1 for x in scores if x == 0.5)
        none = sum(1 for x in scores if x is None)
        differ = [g for g in self.games if g.rulings_differ]
        text = (f"Referee: {', '.join(names)}; our referee on the same games: {w} - {ls} - {d}"
                + (f" and {none} it would not have ended there" if none else "")
                + f"; {len(differ)} rulings differ")
        for g in differ:
            ours = "no ruling" if g.own is None else f"{g.own[0]} at ply {g.own[2]} ({g.own[1]})"
            plies = len(g.board.move_stack)
            text += f"\n  game {g.round}: {g.result} {g.reason} at ply {plies}; ours: {ours}"
        return text

    def game_pgn(self, g: GameResult) -> str:
        """One game as PGN with ICCS moves (``xiangqi.core.pgn``); the reason is the final comment."""
        from xiangqi.core.pgn import Game, write_game
        from xiangqi.core.variants import shuffle_number

        game = Game.from_board(g.board)
        game.headers.update({"Event": f"{self.a} vs {self.b}", "Round": str(g.round), "Red": g.red,
                             "Black": g.black, "Result": g.result, "Opening": g.opening,
                             "TimeControl": self.tc_text, "Termination": g.reason})
        if g.referee != "ours":
            game.headers["Referee"] = g.referee
            game.headers["OwnReferee"] = ("no ruling" if g.own is None
                                          else f"{g.own[0]} at ply {g.own[2]}: {g.own[1]}")
        start = g.board.starting_fen()
        # a 随机开局 game: which shuffle (its FEN tag comes with the start); the standard arrangement is
        # one of the 90 too, but a game from it is an ordinary game
        shuffle = None if start.split()[0] == Board().fen().split()[0] else shuffle_number(start)
        if shuffle is not None:
            game.headers.update({"Variant": "random", "Shuffle": str(shuffle)})
        game.final_comment = g.reason
        return write_game(game, notation="iccs")

    def pgn(self) -> str:
        """Every game as PGN (:meth:`game_pgn`), separated by blank lines."""
        return "\n".join(self.game_pgn(g) for g in self.games)


def run_match(a: PlayerSpec, b: PlayerSpec, games: int, tc: TimeControl, *,
              openings: Sequence[tuple[str, str]] = OPENINGS, ply_cap: int = DEFAULT_PLY_CAP,
              time_margin: float = 0.5, on_game: Callable[[GameResult, MatchResult], None] | None = None,
              tc_b: TimeControl | None = None, concurrency: int = 1, first: int = 0,
              until: Callable[[MatchResult], bool] | None = None, referee: Any = None) -> MatchResult:
    """Play ``games`` games between ``a`` and ``b``; pairs of games share an opening with colours
    swapped (A has Red in odd-numbered games). ``on_game`` is called after each game.

    ``tc`` is A's time control and B's unless ``tc_b`` is given. ``concurrency``
    games are played at once, each by its own pair of engine processes (one pair
    per worker thread, reused for that worker's games); games are numbered,
    reported to ``on_game`` and listed in the result in the same order as when
    played one by one. ``first`` is the index of the first game (0-based), so a
    match continued later goes on with the next openings and colours. ``until(result)``, when
    given, is asked after each game (after ``on_game``, in game order); when it says True the
    match ends there (games still running are ended and left out): ``xiangqi match --sprt``
    stops so once a bound is crossed. ``referee``: an outside referee for every game (:func:`play_game`).

    An engine that crashes is restarted for the next game. Raises :class:`MatchError`
    for bad settings and :class:`EngineError` if an engine cannot be started at all.
    """
    if games < 1:
        raise MatchError(f"games must be >= 1, got {games}")
    if concurrency < 1:
        raise MatchError(f"concurrency must be >= 1, got {concurrency}")
    if first < 0:
        raise MatchError(f"first game index must be >= 0, got {first}")
    if not openings:
        raise MatchError("no openings")
    for op in openings:
        opening_board(op[1])
    if a.name == b.name:
        b = dataclasses.replace(b, name=b.name + "#2")
    result = MatchResult(a.name, b.name, tc, tc_b=tc_b)
    indices = range(first, first + games)

    def deliver(g: GameResult, res: MatchResult) -> None:
        if on_game is not None:
            on_game(g, res)
        if until is not None and until(res):
            raise _MatchDone

    if concurrency == 1:
        engines: dict[str, SimpleEngine] = {}
        try:
            for i in indices:
                g = _match_game(a, b, i, engines, tc, tc_b, openings, ply_cap, time_margin, referee=referee)
                assert g is not None  # no guard: always a game
                result.games.append(g)
                deliver(g, result)
        except _MatchDone:
            pass
        finally:
            for eng in engines.values():
                eng.quit()
        return result
    try:
        return _run_concurrent(a, b, indices, tc, tc_b, openings, ply_cap, time_margin, deliver, result,
                               min(concurrency, games), referee=referee)
    except _MatchDone:
        return result


class _MatchDone(Exception):
    """Raised through the game loop when ``run_match``'s ``until`` says the match is over."""


def _match_game(a: PlayerSpec, b: PlayerSpec, i: int, engines: dict[str, SimpleEngine], tc: TimeControl,
                tc_b: TimeControl | None, openings: Sequence[tuple[str, str]], ply_cap: int,
                time_margin: float, guard: tuple[threading.Condition, threading.Event] | None = None,
                referee: Any = None) -> GameResult | None:
    """Game ``i`` (0-based) of a match with the engines in ``engines`` (started or restarted here).

    ``guard`` is a concurrent match's ``(lock, stop)``: engines are checked and registered
    under the lock, and once ``stop`` is set none is started and ``None`` is returned, so
    that a match being torn down never starts an engine its caller will not terminate.
    """
    lock = guard[0] if guard is not None else contextlib.nullcontext()
    with lock:
        if guard is not None and guard[1].is_set():
            return None
        dead = [spec for spec in (a, b)
                if engines.get(spec.name) is None or engines[spec.name].process.poll() is not None]
    for spec in dead:
        old = engines.pop(spec.name, None)
        if old is not None:
            old.close(0.5)
        eng = spec.start()
        with lock:
            engines[spec.name] = eng
            stopped = guard is not None and guard[1].is_set()
        if stopped:
            eng.quit()
            return None
    opening = openings[(i // 2) % len(openings)]
    a_red = i % 2 == 0
    red, black = (engines[a.name], engines[b.name]) if a_red else (engines[b.name], engines[a.name])
    red_tc, black_tc = (tc, tc_b) if a_red else (tc_b or tc, tc)
    try:
        return play_game(red, black, opening, red_tc, round_no=i + 1, ply_cap=ply_cap,
                         time_margin=time_margin, black_tc=black_tc, referee=referee)
    except EngineTerminatedError as exc:  # died during new_game(): counts against it
        loser_red = red.process.poll() is not None
        return _forfeit(red, black, opening, opening_board(opening[1]), loser_red, str(exc), i + 1)


def _run_concurrent(a: PlayerSpec, b: PlayerSpec, indices: range, tc: TimeControl, tc_b: TimeControl | None,
                    openings: Sequence[tuple[str, str]], ply_cap: int, time_margin: float,
                    on_game: Callable[[GameResult, MatchResult], None] | None, result: MatchResult,
                    workers: int, referee: Any = None) -> MatchResult:
    """:func:`run_match` with ``workers`` threads; results are released in game order.

    When a worker fails, ``on_game`` raises or the caller is interrupted (Ctrl-C), the
    engines of the games still running are terminated before the error propagates.
    """
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in indices:
        todo.put(i)
    done: dict[int, GameResult] = {}
    failure: list[BaseException] = []
    cond = threading.Condition()
    stop = threading.Event()
    all_engines: list[dict[str, SimpleEngine]] = []  # each worker's engines, ended at once on an error

    def worker() -> None:
        engines: dict[str, SimpleEngine] = {}
        with cond:
            all_engines.append(engines)
        try:
            while not stop.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                g = _match_game(a, b, i, engines, tc, tc_b, openings, ply_cap, time_margin, (cond, stop),
                                referee=referee)
                if g is None:
                    return
                with cond:
                    done[i] = g
                    cond.notify_all()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            with cond:
                failure.append(exc)
                cond.notify_all()
        finally:
            for eng in engines.values():
                eng.quit()

    threads = [threading.Thread(target=worker, daemon=True, name=f"xiangqi-match-{k}")
               for k in range(workers)]
    for t in threads:
        t.start()
    try:
        for i in indices:
            with cond:
                while i not in done and not failure:
                    cond.wait()
                if i not in done:
                    raise failure[0]
                g = done.pop(i)
            result.games.append(g)
            if on_game is not None:
                on_game(g, result)
    except BaseException:
        # an error or Ctrl-C: end the games still running now, not after their last move
        with cond:
            stop.set()
            procs = [eng.process for engines in all_engines for eng in list(engines.values())]
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.terminate()
        raise
    finally:
        stop.set()
    for t in threads:
        t.join()
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


__all__ = ["OPENINGS", "GameResult", "MatchError", "MatchResult", "PlayerSpec", "Rating", "TimeControl",
           "elo_difference", "elo_from_score", "fit_ratings", "judge_claim", "opening_board",
           "peer_perft_speed", "perft_speed", "play_game", "read_openings", "run_match", "search_speed"]
