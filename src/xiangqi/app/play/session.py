"""GameSession: one game between two players (human or engine) with its rules and result.

The session owns a core :class:`~xiangqi.core.board.Board` and is the one
place the app changes it; the board validates every move (DESIGN.md, "Data
flow of one move"). The session knows nothing about the web or the database:
the store saves :meth:`GameSession.to_record` and rebuilds with
:meth:`GameSession.from_record`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import itertools
import operator
import uuid
from collections.abc import Callable
from typing import Any

from xiangqi.app.play import ratings
from xiangqi.app.play.clock import GameClock, TimeControl
from xiangqi.app.play.ratings import ADAPTIVE
from xiangqi.core.board import BLACK, RED, SQUARE_NAMES, STARTING_FEN, Board, Color, Move, Termination
from xiangqi.core.errors import IllegalMoveError, XiangqiError
from xiangqi.core.outcome import SIDE_EN, SIDE_ZH, Outcome, draw, win

PLAYER_KINDS = ("human", "engine")
#: Level keys of the built-in engine (DESIGN.md §8); the engine package defines them too.
DEFAULT_LEVEL = "beginner"
LEVEL_KEYS = ("novice", "beginner", "intermediate", "advanced", "master")
#: The adaptive level (自适应, :data:`xiangqi.app.play.ratings.ADAPTIVE`): its engine settings are chosen
#: from the player's rating when the game starts (:func:`xiangqi.app.play.ratings.adaptive_level`) and kept
#: in ``extras["adaptive"]``.


class GameOverError(XiangqiError):
    """A move or action was asked for after the game has ended."""


class SessionError(XiangqiError):
    """A request the session cannot honour (bad player kind, level, nothing to undo …)."""


class NotYourTurnError(SessionError):
    """A human request while the computer is to move (wait for its move)."""


class StaleVersionError(SessionError):
    """A request names a state ``version`` that is no longer current (another page or the
    computer changed the game since): it is refused, and ``current`` is the version now."""

    def __init__(self, message: str, current: int) -> None:
        super().__init__(message)
        self.current = current


def _why(reason: str) -> str:
    """The reason of an outcome without its headline: ``黑胜 — 红方认输`` → ``红方认输``."""
    return reason.split(" — ", 1)[1] if " — " in reason else ""


def _headline_en(out: Outcome) -> str:
    """English headline of an outcome: Red wins / Black wins / Draw."""
    if out.winner is None:
        return "Draw"
    return "Red wins" if out.winner else "Black wins"


def chinese_move_text(board_before: Board, move: Move) -> str:
    """Chinese notation of ``move`` in ``board_before`` (炮二平五), from :mod:`xiangqi.core.notation`.

    Falls back to ICCS text only while the notation module is not installed.
    """
    try:
        from xiangqi.core.notation import move_to_chinese
    except ImportError:  # pragma: no cover - notation lands with the records teammate
        return move.iccs()
    return move_to_chinese(board_before, move)


def _explain(board: Board, out: Outcome, rules: object | None) -> list[str]:
    """The referee's explanation of a repetition ruling (each move of the cycle with its class and
    deciding article, :func:`xiangqi.core.referee.explain_cycle`); [] for any other result."""
    if out.termination not in (Termination.PERPETUAL, Termination.REPETITION):
        return []
    from xiangqi.core.referee import explain_cycle

    return explain_cycle(board, rules) or []


def forbidden_moves(board: Board, rules: object | None = None) -> dict[Move, Outcome]:
    """Moves that would complete a forbidden repetition for the side to move (长将 …).

    Uses :func:`xiangqi.core.referee.forbidden_moves` when the referee has it,
    else an empty dict.
    """
    from xiangqi.core import referee

    fn = getattr(referee, "forbidden_moves", None)
    if fn is None:
        return {}
    try:
        return dict(fn(board, rules))
    except XiangqiError:
        return {}


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """What a worker thread may know of a game: a private copy of the board and plain values.

    Taken on the thread that owns the session (:meth:`GameSession.snapshot`); a search runs on
    ``board`` and nothing else, so the shared board is never read while it changes. ``version``
    is the session's version when taken (a reply for an older version is stale), ``think_s`` the
    seconds the clock allows the side to move (None without a clock).
    """

    game_id: str
    version: int
    board: Board
    level: str
    think_s: float | None
    #: The engine level to play (an :class:`xiangqi.engine.levels.Level`) when ``level`` is not one
    #: of the named levels (the adaptive level), else None.
    engine_level: Any = None
    #: The named opponent the computer plays (``extras["opponent"]``,
    #: :mod:`xiangqi.app.opponents.persona`), or None.
    opponent: str | None = None


@dataclasses.dataclass
class MoveRecord:
    """One played move: ``iccs`` (``h2e2``), ``chinese`` (炮二平五), whether it captured / checked,
    ``wxf`` (``C2.5``; empty only if the notation module failed) and ``book``: a computer's move taken
    from its opening book (:func:`xiangqi.app.opponents.players.took_from_book`)."""

    iccs: str
    chinese: str
    capture: bool
    check: bool
    wxf: str = ""
    #: Set on the instance for a book move; not a dataclass field, so records and ``asdict`` are as before.
    book = False

    def as_dict(self) -> dict[str, Any]:
        """``{iccs, chinese, capture, check, wxf}``, plus ``"book": True`` for a book move (built by
        hand: ten times faster than ``dataclasses.asdict``, and the state lists every move)."""
        d = {"iccs": self.iccs, "chinese": self.chinese, "capture": self.capture, "check": self.check,
             "wxf": self.wxf}
        if self.book:
            d["book"] = True
        return d


class _PlyViews:
    """A list derived from a session's move records one entry a ply (``make(record)``), kept across
    versions and brought up to date by the records that changed at the end: a move adds one entry,
    a takeback drops some, so each entry is built once (DESIGN.md "Load on a quiet machine": the
    state's move list and the saved ICCS list were rebuilt for every move, work that grew with the
    game's length). :meth:`current` compares the records it was built from with the session's list
    (``list ==``: C speed, identity first) and rebuilds from the first that differs. The kept lists
    are never changed once made (an update makes new ones and swaps them in with one assignment),
    so a query on another thread sees one whole version or the other."""

    __slots__ = ("make", "_kept")

    def __init__(self, make: Callable[[MoveRecord], Any]) -> None:
        self.make = make
        self._kept: tuple[list[MoveRecord], list[Any]] = ([], [])

    def current(self, records: list[MoveRecord]) -> list[Any]:
        """The derived entries of ``records``, one a record (a kept list: read it, do not change it)."""
        src, out = self._kept
        n = len(src)
        if n > len(records) or records[:n] != src:
            n = 0
            while n < len(src) and n < len(records) and records[n] is src[n]:
                n += 1
        elif n == len(records):
            return out
        new = records[n:]
        out = out[:n] + [self.make(rec) for rec in new]
        self._kept = (src[:n] + new, out)
        return out

    def clear(self) -> None:
        """Forget every entry (a record was changed in place, e.g. its ``book`` flag)."""
        self._kept = ([], [])


class GameSession:
    """A game: the board, who plays each side, the engine level and the result.

    ``players`` maps :data:`RED`/:data:`BLACK` to ``"human"`` or ``"engine"``;
    ``level`` is an engine level key (``beginner`` … ``master``). ``fen`` is the
    start position (FEN; any legal position). Raises :class:`SessionError` for
    an unknown player kind or level and :class:`~xiangqi.core.errors.FenError`
    for a bad FEN. ``time_control`` (default: none) sets the clocks; the clock of
    the side to move runs from the session's creation.
    """

    def __init__(self, *, red: str = "human", black: str = "engine", level: str = DEFAULT_LEVEL,
                 fen: str = STARTING_FEN, rules: str = "cxa", game_id: str | None = None,
                 headers: dict[str, str] | None = None, time_control: TimeControl | None = None) -> None:
        for side, kind in (("red", red), ("black", black)):
            if kind not in PLAYER_KINDS:
                raise SessionError(f"{side} player must be one of {', '.join(PLAYER_KINDS)}, got {kind!r}")
        from xiangqi.app.opponents.engines import is_engine_key

        if level not in LEVEL_KEYS and level != ADAPTIVE and not is_engine_key(level):
            raise SessionError(f"level must be one of {', '.join(LEVEL_KEYS + (ADAPTIVE,))} or an added "
                               f"engine (engine:<id>), got {level!r}")
        self.id = game_id or uuid.uuid4().hex
        self.players: dict[Color, str] = {RED: red, BLACK: black}
        self.level = level
        self.rules = rules
        self.board = Board(fen)
        if self.board.king(RED) < 0 or self.board.king(BLACK) < 0:
            raise SessionError("the start position needs both kings")
        self.moves: list[MoveRecord] = []
        self.headers: dict[str, str] = dict(headers or {})
        #: What the coach and the rating need to know of this game (JSON values, saved with the game):
        #: ``coach`` (bool: coach mode), ``undos`` (悔棋 taken), ``coach_takebacks`` (moves taken back
        #: on the coach's advice; not 悔棋), ``hints``/``threats`` (help asked), ``adaptive`` (the
        #: adaptive level's settings and estimated Elo). See :mod:`xiangqi.app.play.ratings`.
        self.extras: dict[str, Any] = {}
        self._engine_level: tuple[Any, Any] | None = None
        self.created = _dt.datetime.now().strftime("%Y.%m.%d")
        #: A result decided outside the board (resignation, timeout, agreement).
        self.declared: Outcome | None = None
        self._outcome: Outcome | None = None
        self.version = 0  # bumped on every change; lets async engine replies detect stale work
        self._state_cache: tuple[tuple[Any, ...], dict[str, Any]] | None = None
        self._opening: tuple[tuple[Any, ...], dict[str, str] | None] | None = None  # (key, opening())
        self._move_views = _PlyViews(MoveRecord.as_dict)  # the state's ``moves`` entries
        self._iccs = _PlyViews(operator.attrgetter("iccs"))  # the ICCS of each move
        self._books = _PlyViews(operator.attrgetter("book"))  # each move's ``book`` flag
        self.clock = GameClock(time_control or TimeControl())
        self._refresh_outcome()
        if not self.is_over:
            self.clock.start(self.board.turn)

    # -- state -----------------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        """The result, or None while the game goes on."""
        return self.declared or self._outcome

    @property
    def is_over(self) -> bool:
        """True once the game has a result."""
        return self.outcome is not None

    @property
    def start_fen(self) -> str:
        """FEN of the start position."""
        return self.board.starting_fen()

    def player(self, color: Color) -> str:
        """``"human"`` or ``"engine"`` for ``color``."""
        return self.players[color]

    def repetitions(self) -> int:
        """How many times the current position (board and side to move) has occurred in this game."""
        b = self.board.copy()
        key = b.position_key()
        n = 1
        while b.move_stack:
            b.pop()
            if b.position_key() == key:
                n += 1
        return n

    def engine_to_move(self) -> bool:
        """True when the game goes on and the side to move is played by the engine."""
        return not self.is_over and self.players[self.board.turn] == "engine"

    def _refresh_outcome(self) -> None:
        self._outcome = self.board.outcome(self.rules)

    def _touch(self) -> None:
        self.version += 1

    def snapshot(self) -> Snapshot:
        """A :class:`Snapshot` for a worker thread (call it where the session is changed, e.g. under
        the web hub's lock; the board in it is a copy nobody else holds)."""
        board = self.board.copy()
        opponent = self.extras.get("opponent")
        return Snapshot(self.id, self.version, board, self.level, self.clock.think_budget_s(board.turn),
                        self.engine_level(), opponent if isinstance(opponent, str) else None)

    def engine_level(self) -> Any:
        """The :class:`xiangqi.engine.levels.Level` the computer plays when :attr:`level` is
        :data:`ADAPTIVE` (from ``extras["adaptive"]``, or the adaptive level of a new player when the
        game has none: a game opened with the adaptive level chosen), else None (the named level)."""
        if self.level != ADAPTIVE:
            return None
        settings = self.extras.get("adaptive")
        if self._engine_level is None or self._engine_level[0] is not settings:
            if not isinstance(settings, dict):
                settings = self.extras["adaptive"] = ratings.adaptive_level(None)
            self._engine_level = (settings, ratings.engine_level(settings))
        return self._engine_level[1]

    def count(self, what: str, n: int = 1) -> None:
        """Add ``n`` to the counter ``extras[what]`` (``hints``, ``threats``, …). Not a change of the
        position: the version stays (other hints asked for this position stay valid), so the caller
        saves the game itself (:meth:`xiangqi.app.play.hub.GameHub.note_help`)."""
        self.extras[what] = int(self.extras.get(what, 0)) + n

    # -- actions ---------------------------------------------------------

    def check_time(self, now: float | None = None) -> Outcome | None:
        """End the game if the side to move has run out of time (超时); returns that outcome or None.

        ``now`` is a :func:`time.monotonic` reading (default: now).
        """
        if self.is_over:
            return None
        flagged = self.clock.flagged(now)
        if flagged is None:
            return None
        return self.lose_on_time(flagged)

    def play(self, move: Move | str, *, now: float | None = None, clocked: bool = True) -> MoveRecord:
        """Play ``move`` (a :class:`Move` or ICCS text) for the side to move.

        The board checks legality. Raises :class:`GameOverError` after the end,
        :class:`~xiangqi.core.errors.InvalidMoveError` for text that is not
        ICCS and :class:`IllegalMoveError` for an illegal move (the game is
        then unchanged). Returns the record of the move.
        """
        if clocked and self.check_time(now) is not None:
            self._touch()
        if self.is_over:
            raise GameOverError(f"the game is over ({self.outcome.reason_en}); start a new game or undo")
        if isinstance(move, str):
            move = Move.from_iccs(move)
        if not self.board.is_legal(move):
            reason = self.board.illegal_reason(move) or "illegal"
            raise IllegalMoveError(f"illegal move {move.iccs()} in {self.board.fen()}: {reason}")
        text = chinese_move_text(self.board, move)
        try:
            from xiangqi.core.notation import move_to_wxf

            wxf = move_to_wxf(self.board, move)
        except (ImportError, XiangqiError):  # pragma: no cover - the move is legal; notation is total
            wxf = ""
        capture = self.board.is_capture(move)
        book = self._from_book(move)
        self.board.push(move)
        rec = MoveRecord(move.iccs(), text, capture, self.board.is_check(), wxf)
        if book:
            rec.book = True
        self.moves.append(rec)
        self._refresh_outcome()
        if clocked:
            self.clock.switch(now)
            if self.is_over:
                self.clock.stop(now)
        self._touch()
        return rec

    def can_undo(self) -> bool:
        """Whether :meth:`undo` would do something (the page enables 悔棋 from this).

        True when a human plays and either a resignation or agreed draw can be withdrawn or a
        move can be taken back; False after a loss on time (the clock cannot be given back).
        """
        if "human" not in self.players.values():
            return False
        d = self.declared
        if d is not None and d.termination == Termination.TIMEOUT:
            return False
        if d is not None and d.termination in (Termination.RESIGNATION, Termination.AGREEMENT):
            return True
        return bool(self.board.move_stack)

    def _from_book(self, move: Move) -> bool:
        """Whether the computer, to move now, plays ``move`` from its book (see :class:`MoveRecord`)."""
        if self.players[self.board.turn] != "engine":
            return False
        from xiangqi.app.opponents.players import took_from_book

        return took_from_book(self.board, move)

    def undo(self, *, coach: bool = False) -> int:
        """Take back the last step (悔棋), as casual play allows even after the game has ended.

        Each step taken back is counted in ``extras``: ``undos`` (悔棋), or ``coach_takebacks`` with
        ``coach`` (a move taken back because the coach warned of it: not counted as 悔棋).

        After a resignation or an agreed draw the step is that declaration: it is withdrawn and
        the game goes on from the same position (0 plies taken back). Otherwise the last full
        move goes, back to the last human turn: with an engine on one side the engine's reply
        and the human's move before it; with two humans, one move; a checkmate, stalemate or
        repetition ruling is cleared with the move that caused it. Returns the number of plies
        taken back; raises :class:`SessionError` when there is nothing a human could take back
        and :class:`GameOverError` after a loss on time.
        """
        if "human" not in self.players.values():
            raise SessionError("nothing to undo: the computer plays both sides")
        d = self.declared
        if d is not None and d.termination == Termination.TIMEOUT:
            raise GameOverError(f"the game was lost on time ({d.reason_en}): a move cannot be taken back")
        counter = "coach_takebacks" if coach else "undos"
        if d is not None and d.termination in (Termination.RESIGNATION, Termination.AGREEMENT):
            self.declared = None
            self.clock.start(self.board.turn)  # time already used stays used
            self.extras[counter] = int(self.extras.get(counter, 0)) + 1
            self._touch()
            return 0
        if not self.board.move_stack:
            raise SessionError("nothing to undo: no move has been played")
        n = 0
        while self.board.move_stack:
            self.board.pop()
            self.moves.pop()
            n += 1
            if self.players[self.board.turn] == "human":
                break
        self.declared = None
        self._refresh_outcome()
        if not self.is_over:
            self.clock.start(self.board.turn)  # time already used stays used
        self.extras[counter] = int(self.extras.get(counter, 0)) + 1
        self._touch()
        return n

    def declare(self, outcome: Outcome) -> None:
        """End the game with ``outcome`` (resignation, timeout, agreed draw)."""
        if self.is_over:
            raise GameOverError("the game is already over")
        self.declared = outcome
        self.clock.stop()
        self._touch()

    def resign(self, color: Color) -> Outcome:
        """``color`` resigns (认输); the other side wins. Returns the outcome."""
        out = win(Termination.RESIGNATION, not color, f"{SIDE_ZH[color]}认输", f"{SIDE_EN[color]} resigns")
        self.declare(out)
        return out

    def agree_draw(self) -> Outcome:
        """Both sides agree to a draw (议和)."""
        out = draw(Termination.AGREEMENT, "双方议和", "draw agreed")
        self.declare(out)
        return out

    def lose_on_time(self, color: Color) -> Outcome:
        """``color``'s clock ran out (超时): the other side wins."""
        out = win(Termination.TIMEOUT, not color, f"{SIDE_ZH[color]}超时",
                  f"{SIDE_EN[color]} ran out of time")
        self.declare(out)
        return out

    # -- views -----------------------------------------------------------

    def opening(self) -> dict[str, str] | None:
        """The game's ECCO opening so far, from its moves: ``{"code": "C30", "name": "中炮过河车…",
        "name_en": "Central Cannon, River-Crossing Rook…"}`` (:func:`xiangqi.study.ecco.name_en`).

        Classified by :func:`xiangqi.study.ecco.classify` (the first 20 plies; the ECCO 2004 names,
        which are Chinese only); None before the first move and for a game that did not start from
        the standard position (ECCO names openings of the full board only). About 0.1 ms.
        """
        if not self.moves:
            return None
        from xiangqi.study.ecco import WINDOW, classify, name_en

        # only the first WINDOW plies count: a longer game's opening is read once (memo by them)
        key = (self.board.starting_fen(), tuple(m.iccs for m in self.moves[:WINDOW]))
        if self._opening is not None and self._opening[0] == key:
            got = self._opening[1]
        else:
            found = classify(self.board)
            got = None if found is None else {"code": found.code, "name": found.name,
                                              "name_en": name_en(found.code)}
            self._opening = (key, got)
        return None if got is None else dict(got)

    def legal_moves_by_square(self) -> dict[str, list[str]]:
        """Legal moves of the side to move grouped by from-square: ``{"h2": ["h2e2", ...]}``.

        Empty when the game is over.
        """
        return {} if self.is_over else _legal_by_square(self.board.copy())

    def state(self) -> dict[str, Any]:
        """JSON-ready view of the game for the page.

        Keys: ``id``, ``fen``, ``start_fen``, ``turn`` (``red``/``black``), ``players``,
        ``level``, ``moves`` (a tuple of ``{iccs, chinese, capture, check, wxf}`` and ``book: true`` on
        a book move), ``last_move``
        (ICCS or None), ``check`` (square name of the king in check or None), ``legal``
        (from-square → tuple of ICCS moves), ``forbidden`` (ICCS → reason of a move that would
        lose by a forbidden repetition), ``result`` (None or ``{result, winner,
        termination, reason_zh, reason_en, headline_zh, headline_en, why_zh, why_en, explain}``:
        ``why_*`` is the reason without the headline, e.g. 红方认输 of 黑胜 — 红方认输; ``explain`` the
        referee's lines for a repetition ruling, else []), ``can_undo``
        (:meth:`can_undo`), ``opening`` (:meth:`opening`: ``{code, name}`` or None), ``version``.

        A query: it works on its own copy of the board (legal-move generation and the referee
        make and take back moves), so the session's board is never changed, not even for a moment.
        The position's part (legal moves, forbidden repetitions, the move list …) is computed once
        per :attr:`version` and shared by every caller (many pages polling one game cost one
        computation), so it is read-only: the move list and the legal moves are tuples, and a move's
        dict is the same object from version to version (built once a ply). Tuples of plain values
        are what the garbage collector stops tracking (DESIGN.md "Load on a quiet machine"). The
        clock and ``can_undo`` are read fresh each call.
        """
        key = (self.version, len(self.moves), id(self.declared), self.rules)
        if self._state_cache is None or self._state_cache[0] != key:
            self._state_cache = (key, self._position_state())
        st = dict(self._state_cache[1])
        st["clock"] = self.clock.view() if self.clock.control.enabled else None
        st["can_undo"] = self.can_undo()
        st["version"] = self.version
        return st

    def _position_state(self) -> dict[str, Any]:
        """The part of :meth:`state` that depends on the position and result only."""
        b = self.board.copy()
        check_sq = None
        if b.is_check():
            from xiangqi.core.board import square_name

            check_sq = square_name(b.king(b.turn))
        out = self.outcome
        result = None
        if out is not None:
            result = {"result": out.result(), "winner": out.winner_name(),
                      "termination": out.termination.value, "reason_zh": out.reason_zh,
                      "reason_en": out.reason_en, "headline_zh": out.headline_zh(),
                      "headline_en": _headline_en(out), "why_zh": _why(out.reason_zh),
                      "why_en": _why(out.reason_en), "explain": _explain(b, out, self.rules)}
        forbidden = {}
        if out is None:
            forbidden = {m.iccs(): {"reason_zh": o.reason_zh, "reason_en": o.reason_en}
                         for m, o in forbidden_moves(b, self.rules).items()}
        return {
            "id": self.id,
            "fen": b.fen(),
            "start_fen": self.start_fen,
            "turn": "red" if b.turn else "black",
            "players": {"red": self.players[RED], "black": self.players[BLACK]},
            "level": self.level,
            "moves": tuple(self._move_views.current(self.moves)),  # its dicts kept from version to version
            "last_move": b.move_stack[-1].iccs() if b.move_stack else None,
            "check": check_sq,
            "legal": {} if out is not None else _legal_by_square(b, tuple),
            "forbidden": forbidden,
            "result": result,
            "opening": self.opening(),
        }

    # -- records ---------------------------------------------------------

    def player_name(self, color: Color, language: str = "zh") -> str:
        """The name a record gives ``color``'s player in ``language`` (``zh`` or ``en``):
        棋手 / 电脑·初级 in Chinese, Player / Computer (Beginner) in English (level names from
        :func:`xiangqi.app.opponents.players.levels`)."""
        from xiangqi.app.opponents.players import levels

        en = language == "en"
        if self.players[color] != "engine":
            return "Player" if en else "棋手"
        if self.level == ADAPTIVE:
            a = self.extras.get("adaptive") or {}
            elo = f" {round(a['elo'])}" if isinstance(a.get("elo"), int | float) else ""
            return f"Computer (Adaptive{elo})" if en else f"电脑·自适应{elo}"
        if self.level.startswith("engine:"):  # an engine the user added: its own name
            name = str(self.extras.get("engine_name") or self.level)
            return name
        lv = next((x for x in levels() if x.key == self.level), None)
        from xiangqi.app.opponents.persona import get_opponent

        op = get_opponent(self.extras.get("opponent"))
        if op is not None and lv is not None:  # a named opponent: 阿福（初级） / A-Fu (Beginner)
            return f"{op.name_en} ({lv.name_en})" if en else f"{op.name_zh}（{lv.name_zh}）"
        if en:
            return f"Computer ({lv.name_en if lv else self.level})"
        return f"电脑·{lv.name_zh if lv else self.level}"

    def pgn_headers(self, language: str = "zh") -> dict[str, str]:
        """PGN tags of this game: Game, Event, Date, Red, Black, Result (and FEN when not the start;
        ECCO, Opening and Variation, the ECCO 2004 name split at its "：", when :meth:`opening` names one).

        Event and the player names are written in the interface ``language`` (``zh``: 象棋对局,
        棋手, 电脑·初级; ``en``: Xiangqi game, Player, Computer (Beginner)); names kept from an
        opened record (``headers``) win. Raises :class:`SessionError` for another language.
        """
        if language not in ("zh", "en"):
            raise SessionError(f"language must be zh or en, got {language!r}")
        out = self.outcome
        event = "Xiangqi game" if language == "en" else "象棋对局"
        h = {"Game": "Chinese Chess", "Event": event, "Date": self.created,
             "Red": self.player_name(RED, language), "Black": self.player_name(BLACK, language),
             "Result": out.result() if out else "*"}
        h.update({k: v for k, v in self.headers.items() if k not in ("Result", "FEN", "Format")})
        if out is not None:
            h["Result"] = out.result()
        if self.start_fen != STARTING_FEN:
            h["FEN"] = self.start_fen
            from xiangqi.core.variants import shuffle_number

            shuffle = shuffle_number(self.start_fen)
            if shuffle is not None:  # a 随机开局 start: say which shuffle
                h["Variant"], h["Shuffle"] = "random", str(shuffle)
        opening = self.opening()
        if opening is not None:  # computed from the moves: it replaces a tag kept from a record
            name, _, variation = opening["name"].partition("：")
            h["ECCO"], h["Opening"] = opening["code"], name
            if variation:
                h["Variation"] = variation
            else:
                h.pop("Variation", None)
        return h

    def to_pgn(self, notation: str = "chinese", language: str = "zh") -> str:
        """The game as PGN text with ``notation`` move text (``chinese``, ``wxf`` or ``iccs``) and
        tags in ``language`` (see :meth:`pgn_headers`).

        Uses :mod:`xiangqi.core.pgn`; raises :class:`SessionError` for an unknown notation or language.
        """
        if notation not in ("chinese", "wxf", "iccs"):
            raise SessionError(f"notation must be chinese, wxf or iccs, got {notation!r}")
        from xiangqi.core import pgn

        game = pgn.Game.from_board(self.board)
        game.headers.update(self.pgn_headers(language))
        return pgn.write_game(game, notation=notation)

    @classmethod
    def from_pgn(cls, text: str, *, red: str = "human", black: str = "human",
                 level: str = DEFAULT_LEVEL) -> GameSession:
        """A session replaying the main line of a PGN game (``text``).

        Raises :class:`SessionError` when the text holds no game or a move of
        it cannot be played (naming the ply and the move). A recorded result
        other than what the board rules (resignation, timeout) is kept.
        """
        from xiangqi.core import pgn

        game = pgn.read_game(text)
        if game is None:
            raise SessionError("no game found in the PGN text")
        errors = list(getattr(game, "errors", []) or [])
        start = game.board()
        headers = dict(game.headers)
        s = cls(red=red, black=black, level=level, fen=start.fen(),
                headers={k: v for k, v in headers.items() if k in ("Event", "Date", "Red", "Black", "Site",
                                                                     "Round", "Opening", "Game")})
        for i, mv in enumerate(game.mainline_moves()):
            if s.is_over:
                break
            try:
                s.play(mv)
            except XiangqiError as exc:
                raise SessionError(f"move {i + 1} ({mv}) of the PGN cannot be played: {exc}") from exc
        if errors and not s.moves:
            raise SessionError(f"the PGN could not be read: {errors[0]}")
        recorded = headers.get("Result", "*")
        if not s.is_over and recorded in ("1-0", "0-1", "1/2-1/2"):
            winner = {"1-0": RED, "0-1": BLACK}.get(recorded)
            if winner is None and s.repetitions() >= 2:
                s.declared = draw(Termination.REPETITION, "循环重复，棋谱记为和棋",
                                  "the position repeats; the record gives a draw")
            elif winner is None:
                s.declared = draw(Termination.AGREEMENT, "棋谱记为和棋", "recorded as a draw")
            else:
                s.declared = win(Termination.RESIGNATION, winner, "记录结果", "recorded result")
        return s

    def iccs_moves(self) -> list[str]:
        """The moves played, as ICCS text (``["h2e2", "h9g7", …]``): a new list, each string built once
        a ply (a copy of a kept list, not a walk over the records)."""
        return list(self._iccs.current(self.moves))

    def to_record(self) -> dict[str, Any]:
        """Everything needed to rebuild the session (JSON-ready); ``book``: the plies (0-based) of the
        computer's book moves, only when there are some."""
        d = self.declared
        out = {
            "id": self.id, "start_fen": self.start_fen, "moves": self.iccs_moves(),
            "red": self.players[RED], "black": self.players[BLACK], "level": self.level,
            "rules": self.rules, "headers": self.headers, "created": self.created,
            "clock": self.clock.to_record(),
            "declared": None if d is None else {"termination": d.termination.value, "winner": d.winner,
                                                 "reason_zh": d.reason_zh, "reason_en": d.reason_en},
            **({"extras": dict(self.extras)} if self.extras else {}),
        }
        flags = self._books.current(self.moves)
        if True in flags:
            out["book"] = list(itertools.compress(range(len(flags)), flags))
        return out

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> GameSession:
        """Rebuild a session from :meth:`to_record` output, replaying its moves through the board.

        Raises :class:`SessionError` (or a core error) when the record is damaged.
        """
        try:
            s = cls(red=rec["red"], black=rec["black"], level=rec["level"], fen=rec["start_fen"],
                    rules=rec.get("rules", "cxa"), game_id=rec["id"], headers=rec.get("headers") or {})
            s.created = rec.get("created") or s.created
            if isinstance(rec.get("extras"), dict):
                s.extras = dict(rec["extras"])
            for mv in rec["moves"]:
                s.play(mv, clocked=False)
            for i in rec.get("book") or ():
                if isinstance(i, int) and 0 <= i < len(s.moves):
                    s.moves[i].book = True
            s._move_views.clear()  # (the flags changed records in place)
            s._books.clear()
            d = rec.get("declared")
            if d:
                s.declared = Outcome(Termination(d["termination"]), d["winner"], d["reason_zh"],
                                     d["reason_en"])
            if rec.get("clock"):
                s.clock = GameClock.from_record(rec["clock"])
                if not s.is_over:
                    s.clock.start(s.board.turn)  # time while the program was closed is not charged
        except (KeyError, TypeError) as exc:
            raise SessionError(f"damaged game record: missing or bad field {exc}") from exc
        return s


def _legal_by_square(board: Board, kind: Callable[[list[str]], Any] = list) -> dict[str, Any]:
    """Legal moves of ``board`` grouped by from-square, each group a ``kind`` (list, or tuple for the
    shared state); generation briefly moves pieces on the board."""
    names = SQUARE_NAMES
    out: dict[str, Any] = {}
    for frm, tos in board.legal_destinations():
        name = names[frm]
        group = [name + names[to] for to in tos]  # (Move.iccs)
        out[name] = group if kind is list else kind(group)
    return out


#: Signature of a move provider: (board copy, level key) -> Move. Used to plug in the engine.
MoveProvider = Callable[[Board, str], Move]
