"""Client for external UCI / UCCI xiangqi engines, modelled on python-chess's ``chess.engine``.

>>> engine = SimpleEngine.popen("/usr/games/fairy-stockfish")        # doctest: +SKIP
>>> result = engine.play(board, Limit(time=0.2))                     # doctest: +SKIP
>>> result.move, result.info["score"]                                # doctest: +SKIP
>>> engine.quit()                                                    # doctest: +SKIP

What it does for you (DESIGN.md decisions 3 and 7, reported.md R19/R20):

* **Protocol**: ``protocol="uci"``, ``"ucci"`` or ``"auto"`` (try ``uci``; if the engine
  does not answer ``uciok`` in time or exits, start it again and try ``ucci``).
* **Whole history** (R20): every search sends ``position startpos|fen <root> moves m1 m2 …``
  with all moves since the board's root, never just the current FEN, so the
  engine sees repetitions.
* **bestmove is the move** (R19): the move always comes from ``bestmove``; ``info``
  lines with an empty PV (or a PV the engine truncates) are fine.
* **Coordinates**: our ranks are 0–9 (ICCS). Engines with a ``UCI_Variant`` option
  (Fairy-Stockfish, Sjaak II) are multi-variant chess engines that number ranks 1–10
  (``h3e3``); the client sets ``UCI_Variant xiangqi`` and converts both ways.
  Sjaak II also wants ``H``/``E`` for horse/elephant in FEN; that is detected from
  its ``id name``. Both can be forced with ``ranks=`` and ``fen_letters=``.
* **Errors**: an engine that exits, stops answering, or plays an illegal move raises
  :class:`EngineError` (:class:`EngineTerminatedError`, :class:`EngineTimeoutError`,
  :class:`IllegalEngineMoveError`) naming the engine, the command and what happened.

Limits are read by attribute from any object with the fields of
``xiangqi.engine.Limit`` (depth, nodes, time, wtime, btime, winc, binc,
movestogo, infinite; times in seconds); :class:`Limit` here is that same class.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

from xiangqi.core.board import STARTING_FEN, Board, Move, square, square_file, square_rank
from xiangqi.core.errors import XiangqiError
from xiangqi.engine.api import Limit

#: ElephantEye's mate value (UCCI scores): |score| > MATE - 200 is a forced result in MATE - |score| plies.
UCCI_MATE_VALUE = 10000
UCCI_WIN_THRESHOLD = UCCI_MATE_VALUE - 200
#: Extra seconds allowed beyond the search limit before a search counts as hung.
DEFAULT_GRACE = 5.0

_MOVE_RE = re.compile(r"^([a-i])(\d{1,2})([a-i])(\d{1,2})$")
_INFO_INT_KEYS = {"depth", "seldepth", "multipv", "nodes", "nps", "hashfull", "tbhits", "currmovenumber",
                  "cpuload"}


class EngineError(XiangqiError):
    """Something went wrong talking to an external engine."""


class EngineTerminatedError(EngineError):
    """The engine process exited (or closed its output)."""


class EngineTimeoutError(EngineError):
    """The engine did not answer in time."""


class IllegalEngineMoveError(EngineError):
    """The engine sent a move that is not legal (or not a move) in the position."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


@dataclasses.dataclass(frozen=True)
class Score:
    """An engine score from the point of view of the side to move.

    ``cp`` centipawns, or ``mate`` = moves to mate (positive: the side to move
    mates; negative: it gets mated); exactly one is set.
    """

    cp: int | None = None
    mate: int | None = None

    def pov(self, side_to_move_is_red: bool, red: bool = True) -> Score:
        """This score from Red's (``red=True``) or Black's point of view."""
        if side_to_move_is_red == red:
            return self
        return Score(None if self.cp is None else -self.cp, None if self.mate is None else -self.mate)

    def __str__(self) -> str:
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"


InfoDict = dict[str, Any]
"""Parsed ``info`` line: ``depth``, ``seldepth``, ``multipv``, ``score`` (:class:`Score`), ``nodes``,
``nps``, ``time`` (seconds), ``pv`` (list of :class:`Move`, legal from the searched position),
``hashfull``, ``currmove``, ``string`` — only the keys the engine sent."""


@dataclasses.dataclass
class PlayResult:
    """The engine's move (None if it had none), its expected reply, the last info,
    and UCCI's ``draw``/``resign`` flags after ``bestmove``."""

    move: Move | None
    ponder: Move | None = None
    info: InfoDict = dataclasses.field(default_factory=dict)
    draw_offered: bool = False
    resigned: bool = False


@dataclasses.dataclass
class Option:
    """An option the engine announced: ``name``, ``type`` (spin/check/combo/button/string),
    ``default``, ``min``, ``max`` and ``var`` (combo values)."""

    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    var: list[str] = dataclasses.field(default_factory=list)


def _parse_option(tokens: list[str], protocol: str) -> Option | None:
    """``option name N type T default D min A max B var V…`` (UCCI: ``option N type …``)."""
    keys = {"type", "default", "min", "max", "var"}
    i = 0
    if tokens and tokens[0] == "name":
        i = 1
    name_parts = []
    while i < len(tokens) and tokens[i] not in keys:
        name_parts.append(tokens[i])
        i += 1
    if not name_parts:
        return None
    fields: dict[str, list[str]] = {}
    var: list[str] = []
    key = None
    for t in tokens[i:]:
        if t in keys:
            key = t
            if key == "var":
                var.append("")
            else:
                fields[key] = []
            continue
        if key == "var":
            var[-1] = (var[-1] + " " + t).strip()
        elif key is not None:
            fields[key].append(t)

    def num(k: str) -> int | None:
        try:
            return int(" ".join(fields[k]))
        except (KeyError, ValueError):
            return None
    default = " ".join(fields["default"]) if "default" in fields else None
    return Option(" ".join(name_parts), " ".join(fields.get("type", [])) or "string", default,
                  num("min"), num("max"), var)


class SimpleEngine:
    """A running external engine, used synchronously (one search at a time).

    Create it with :meth:`popen`; use it as a context manager or call :meth:`quit`.
    ``transcript`` records every line sent (``"> …"``) and received (``"< …"``).
    """

    def __init__(self, process: subprocess.Popen, command: Sequence[str], *, name: str) -> None:
        self.process = process
        self.command = list(command)
        self.name = name
        self.protocol = "uci"
        self.id: dict[str, str] = {}
        self.options: dict[str, Option] = {}
        self.transcript: list[str] = []
        self.rank_offset = 0
        self.fen_letters = "nb"
        self.use_millisec = True
        self._multipv = 1
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_loop, daemon=True, name=f"engine-reader-{name}")
        self._reader.start()
        self._closed = False

    # -- process plumbing ---------------------------------------------------

    @classmethod
    def popen(cls, command: str | Sequence[str], protocol: str = "auto", *, timeout: float = 10.0,
              options: dict[str, Any] | None = None, ranks: str | None = None,
              fen_letters: str | None = None, env: dict[str, str] | None = None,
              cwd: str | None = None, name: str | None = None) -> SimpleEngine:
        """Start ``command`` (a string is split like a shell would) and do the handshake.

        ``protocol``: ``"uci"``, ``"ucci"`` or ``"auto"``. ``timeout``: seconds to
        wait for ``uciok``/``ucciok``/``readyok``. ``options`` are set right after the
        handshake. ``ranks`` (``"0-9"`` or ``"1-10"``) and ``fen_letters`` (``"nb"`` or
        ``"he"``) override the detection described in the module docstring.

        Raises :class:`EngineError` if the program cannot be started, exits, or
        does not complete the handshake within ``timeout``.
        """
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise EngineError("empty engine command")
        if protocol not in ("uci", "ucci", "auto"):
            raise EngineError(f"unknown protocol {protocol!r}; expected 'uci', 'ucci' or 'auto'")
        label = name or os.path.basename(argv[0])
        tries = ["uci", "ucci"] if protocol == "auto" else [protocol]
        last_error: EngineError | None = None
        for proto in tries:
            engine = cls._spawn(argv, env=env, cwd=cwd, name=label)
            try:
                engine._handshake(proto, timeout=timeout, probe=protocol == "auto")
            except EngineError as exc:
                engine.close(timeout=0.2)
                last_error = exc
                continue
            try:
                engine._detect_dialect(ranks, fen_letters)
                if options:
                    engine.configure(options)
                engine.ping(timeout)
            except BaseException:
                engine.close(timeout=0.2)
                raise
            return engine
        assert last_error is not None
        if protocol == "auto":
            raise EngineError(f"{label}: answered neither 'uci' nor 'ucci' ({last_error})")
        raise last_error

    @classmethod
    def _spawn(cls, argv: list[str], *, env: dict[str, str] | None, cwd: str | None,
               name: str) -> SimpleEngine:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env, cwd=cwd,
                                    encoding="utf-8", errors="replace")
        except OSError as exc:
            raise EngineError(f"cannot start engine {argv[0]!r}: {exc.strerror or exc}") from None
        return cls(proc, argv, name=name)

    def _read_loop(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            for line in stream:
                self._lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def send(self, line: str) -> None:
        """Send one command line. Raises :class:`EngineTerminatedError` if the engine is gone."""
        self.transcript.append("> " + line)
        stdin = self.process.stdin
        try:
            assert stdin is not None
            stdin.write(line + "\n")
            stdin.flush()
        except (OSError, ValueError, AssertionError):
            raise EngineTerminatedError(
                f"{self.name}: cannot send {line!r}: the engine has exited "
                f"(status {self.process.poll()})") from None

    def _readline(self, deadline: float | None, waiting_for: str) -> str:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise EngineTimeoutError(f"{self.name}: no {waiting_for!r} within the time allowed") from None
        if line is None:
            self._lines.put(None)  # keep reporting EOF
            try:
                status = self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                status = None
            raise EngineTerminatedError(f"{self.name}: the engine exited (status {status}) "
                                        f"while we waited for {waiting_for!r}")
        self.transcript.append("< " + line)
        return line

    # -- handshake ------------------------------------------------------------------

    def _handshake(self, protocol: str, timeout: float, probe: bool = False) -> None:
        """Send ``uci``/``ucci`` and read ``id``/``option`` lines up to ``uciok``/``ucciok``.

        With ``probe`` (protocol detection) a reply saying the command is unknown
        ends the attempt at once; an engine that exits ends it too (ElephantEye
        quits when its first command is not ``ucci``).
        """
        self.protocol = protocol
        self.send(protocol)
        ok = "uciok" if protocol == "uci" else "ucciok"
        deadline = time.monotonic() + timeout
        while True:
            line = self._readline(deadline, ok)
            tokens = line.split()
            if not tokens:
                continue
            if probe and "unknown command" in line.lower():
                raise EngineError(f"{self.name} does not know {protocol!r}: {line.strip()}")
            if tokens[0] == ok:
                return
            if tokens[0] == "id" and len(tokens) >= 2:
                self.id[tokens[1]] = " ".join(tokens[2:])
            elif tokens[0] == "option":
                opt = _parse_option(tokens[1:], protocol)
                if opt is not None:
                    self.options[opt.name] = opt

    def _detect_dialect(self, ranks: str | None, fen_letters: str | None) -> None:
        # In UCI, multi-variant engines (Fairy-Stockfish, Sjaak II) need the variant set and number
        # ranks 1-10; in their UCCI mode Fairy-Stockfish plays xiangqi with ranks 0-9 already.
        variant = self._option("UCI_Variant") if self.protocol == "uci" else None
        if variant is not None:
            if variant.var and "xiangqi" not in variant.var:
                raise EngineError(f"{self.name}: its UCI_Variant option has no 'xiangqi'")
            self.send(f"setoption name {variant.name} value xiangqi")
        if ranks is None:
            ranks = "1-10" if variant is not None else "0-9"
        if ranks not in ("0-9", "1-10"):
            raise EngineError(f"ranks must be '0-9' or '1-10', got {ranks!r}")
        self.rank_offset = 1 if ranks == "1-10" else 0
        if fen_letters is None:
            fen_letters = "he" if "sjaak" in self.id.get("name", "").lower() else "nb"
        if fen_letters not in ("nb", "he"):
            raise EngineError(f"fen_letters must be 'nb' or 'he', got {fen_letters!r}")
        self.fen_letters = fen_letters
        if self.protocol == "ucci":
            self.use_millisec = self._option("usemillisec") is not None
            if self.use_millisec:
                self.send("setoption usemillisec true")

    def _option(self, name: str) -> Option | None:
        for k, v in self.options.items():
            if k.lower() == name.lower():
                return v
        return None

    #: Seconds :meth:`ping` waits by default (and :meth:`new_game`'s ping); the match tool sets it.
    ping_timeout: float = 10.0

    def ping(self, timeout: float | None = None) -> None:
        """``isready`` → wait for ``readyok`` (``timeout`` seconds, default :attr:`ping_timeout`).

        Raises :class:`EngineTimeoutError` naming the engine and the limit when it passes."""
        if timeout is None:
            timeout = self.ping_timeout
        self.send("isready")
        deadline = time.monotonic() + timeout
        try:
            while self._readline(deadline, "readyok").strip() != "readyok":
                pass
        except EngineTimeoutError:
            raise EngineTimeoutError(f"{self.name}: no 'readyok' within {timeout:g} s of 'isready'") from None

    def configure(self, options: dict[str, Any]) -> None:
        """Set engine options (names as the engine announced them, case-insensitive).

        Raises :class:`EngineError` for an option the engine did not announce.
        """
        for name, value in options.items():
            opt = self._option(name)
            if opt is None:
                known = ", ".join(sorted(self.options)) or "none"
                raise EngineError(f"{self.name}: no option {name!r} (it has: {known})")
            if isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = "" if value is None else str(value)
            if self.protocol == "uci":
                self.send(f"setoption name {opt.name}" + (f" value {text}" if text else ""))
            else:
                self.send(f"setoption {opt.name}" + (f" {text}" if text else ""))

    def new_game(self) -> None:
        """Tell the engine a new game starts (``ucinewgame``; UCCI ``setoption newgame``)."""
        if self.protocol == "uci":
            self.send("ucinewgame")
        elif self._option("newgame") is not None:
            self.send("setoption newgame")
        self.ping()

    # -- coordinates -------------------------------------------------------------

    def move_to_engine(self, move: Move) -> str:
        """Our move in the engine's coordinates (``h2e2`` → ``h3e3`` for ranks 1–10)."""
        if not self.rank_offset:
            return move.iccs()
        f1, r1 = square_file(move.from_square), square_rank(move.from_square)
        f2, r2 = square_file(move.to_square), square_rank(move.to_square)
        o = self.rank_offset
        return f"{'abcdefghi'[f1]}{r1 + o}{'abcdefghi'[f2]}{r2 + o}"

    def move_from_engine(self, text: str) -> Move:
        """An engine move text in our coordinates. Raises :class:`IllegalEngineMoveError` if malformed."""
        m = _MOVE_RE.match(text.strip().lower())
        if not m:
            raise IllegalEngineMoveError(f"{self.name}: {text!r} is not a move", text)
        ff, fr, tf, tr = m.groups()
        r1, r2 = int(fr) - self.rank_offset, int(tr) - self.rank_offset
        if not (0 <= r1 <= 9 and 0 <= r2 <= 9) or (ff, r1) == (tf, r2):
            raise IllegalEngineMoveError(f"{self.name}: {text!r} is not a move on a xiangqi board", text)
        return Move(square("abcdefghi".index(ff), r1), square("abcdefghi".index(tf), r2))

    def _fen(self, fen: str) -> str:
        if self.fen_letters == "nb":
            return fen
        board, _, rest = fen.partition(" ")
        return board.translate(str.maketrans("NBnb", "HEhe")) + (" " + rest if rest else "")

    def position_command(self, board: Board) -> str:
        """``position startpos|fen <root> moves …`` with the board's whole history (R20)."""
        root = board.starting_fen()
        head = "position startpos" if root == STARTING_FEN else f"position fen {self._fen(root)}"
        if board.move_stack:
            head += " moves " + " ".join(self.move_to_engine(m) for m in board.move_stack)
        return head

    def go_command(self, board: Board, limit: Any) -> str:
        """The ``go`` line for ``limit`` (seconds) in this engine's protocol and units."""
        def ms(v: float) -> int:
            return max(0, int(round(v * 1000)))

        get = lambda k: getattr(limit, k, None)  # noqa: E731
        parts = ["go"]
        if self.protocol == "uci":
            for k in ("depth", "nodes"):
                if get(k):
                    parts += [k, str(int(get(k)))]
            if get("time") is not None:
                parts += ["movetime", str(ms(get("time")))]
            for k in ("wtime", "btime", "winc", "binc"):
                if get(k) is not None:
                    parts += [k, str(ms(get(k)))]
            if get("movestogo"):
                parts += ["movestogo", str(int(get("movestogo")))]
            if get("infinite"):
                parts.append("infinite")
        else:
            # whole seconds unless the engine offered usemillisec (UCCI 2.3); never round a real
            # time budget down to 0 s
            scale = (lambda v: str(ms(v))) if self.use_millisec else (
                lambda v: str(max(1, round(v)) if v > 0 else 0))
            red = board.turn
            own, opp = ("wtime", "winc"), ("btime", "binc")
            if not red:
                own, opp = opp, own
            if get("depth"):
                parts += ["depth", str(int(get("depth")))]
            elif get("nodes"):
                parts += ["nodes", str(int(get("nodes")))]
            elif get("time") is not None:  # UCCI has no movetime: all the time for one move
                parts += ["time", scale(get("time")), "movestogo", "1"]
            elif get(own[0]) is not None:
                parts += ["time", scale(get(own[0]))]
                if get("movestogo"):
                    parts += ["movestogo", str(int(get("movestogo")))]
                elif get(own[1]) is not None:
                    parts += ["increment", scale(get(own[1]))]
                if get(opp[0]) is not None:
                    parts += ["opptime", scale(get(opp[0]))]
                    if get(opp[1]) is not None and not get("movestogo"):
                        parts += ["oppincrement", scale(get(opp[1]))]
            if get("infinite") or len(parts) == 1:
                parts.append("infinite")
        return " ".join(parts)

    @staticmethod
    def limit_seconds(board: Board, limit: Any) -> float | None:
        """The longest a search under ``limit`` should take (seconds), None when unbounded."""
        get = lambda k: getattr(limit, k, None)  # noqa: E731
        if get("infinite"):
            return None
        if get("time") is not None:
            return float(get("time"))
        own = get("wtime") if board.turn else get("btime")
        if own is not None:
            return float(own) + float((get("winc") if board.turn else get("binc")) or 0)
        return None

    # -- info parsing -------------------------------------------------------------------

    def parse_info(self, text: str, board: Board | None = None) -> InfoDict:
        """Parse the tokens after ``info``; PV moves are converted and, with ``board``,
        kept only as far as they are legal (an engine's PV may be empty: R19)."""
        tokens = text.split()
        info: InfoDict = {}
        i = 0
        while i < len(tokens):
            t = tokens[i]
            try:
                if t in _INFO_INT_KEYS:
                    info[t] = int(tokens[i + 1])
                    i += 2
                elif t == "time":
                    info["time"] = int(tokens[i + 1]) / 1000.0
                    i += 2
                elif t == "score":
                    i = self._parse_score(tokens, i + 1, info)
                elif t == "currmove":
                    info["currmove"] = self.move_from_engine(tokens[i + 1])
                    i += 2
                elif t == "string":
                    info["string"] = " ".join(tokens[i + 1:])
                    break
                elif t == "pv":
                    j = i + 1
                    pv: list[Move] = []
                    while j < len(tokens) and _MOVE_RE.match(tokens[j]):
                        try:
                            pv.append(self.move_from_engine(tokens[j]))
                        except IllegalEngineMoveError:
                            break
                        j += 1
                    while j < len(tokens) and _MOVE_RE.match(tokens[j]):
                        j += 1
                    info["pv"] = _legal_prefix(board, pv) if board is not None else pv
                    i = j
                else:
                    i += 1
            except (IndexError, ValueError, IllegalEngineMoveError):
                i += 1
        return info

    def _parse_score(self, tokens: list[str], i: int, info: InfoDict) -> int:
        if i < len(tokens) and tokens[i] in ("cp", "mate"):
            kind, value = tokens[i], int(tokens[i + 1])
            info["score"] = Score(cp=value) if kind == "cp" else Score(mate=value)
            i += 2
        else:  # UCCI: score <value>, mate as ±(10000 - plies)
            value = int(tokens[i])
            if abs(value) > UCCI_WIN_THRESHOLD:
                plies = UCCI_MATE_VALUE - abs(value)
                moves = (plies + 1) // 2 if value > 0 else plies // 2
                info["score"] = Score(mate=moves if value > 0 else -max(moves, 1))
            else:
                info["score"] = Score(cp=value)
            i += 1
        while i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
            info[tokens[i]] = True
            i += 1
        return i

    # -- searching ---------------------------------------------------------------------

    def _search(self, board: Board, limit: Any, *, multipv: int | None, timeout: float | None,
                grace: float) -> tuple[list[str], dict[int, InfoDict]]:
        if getattr(limit, "infinite", False):
            raise EngineError("an infinite limit never ends; give depth, nodes or a time")
        wanted = multipv or 1
        if wanted != self._multipv and self._option("MultiPV") is not None:
            self.configure({"MultiPV": wanted})  # back to 1 for play() after a multi-PV analysis
            self._multipv = wanted
        self.send(self.position_command(board))
        self.send(self.go_command(board, limit))
        bound = self.limit_seconds(board, limit)
        if timeout is None and bound is not None:
            timeout = bound + grace
        deadline = None if timeout is None else time.monotonic() + timeout
        lines: dict[int, InfoDict] = {}
        stopped = False
        while True:
            try:
                line = self._readline(deadline, "bestmove")
            except EngineTimeoutError:
                if stopped:
                    raise EngineTimeoutError(f"{self.name}: no 'bestmove' even after 'stop' "
                                             f"(limit {self.go_command(board, limit)!r})") from None
                self.send("stop")
                stopped = True
                deadline = time.monotonic() + grace
                continue
            tokens = line.split()
            if not tokens:
                continue
            if tokens[0] == "info":
                info = self.parse_info(line[4:], board)
                if "score" in info or "pv" in info:
                    k = info.get("multipv", 1)
                    merged = dict(lines.get(k, {}))
                    merged.update(info)
                    if "pv" not in info:
                        merged.pop("pv", None)
                    lines[k] = merged
            elif tokens[0] in ("bestmove", "nobestmove"):
                return tokens, lines

    def play(self, board: Board, limit: Any, *, timeout: float | None = None,
             grace: float = DEFAULT_GRACE) -> PlayResult:
        """Search ``board`` (with its whole history) under ``limit`` and return the engine's move.

        The move is taken from ``bestmove`` (R19) and checked for legality.
        ``timeout`` (seconds; default: the time the limit allows plus ``grace``) —
        when it runs out the client sends ``stop`` and waits ``grace`` seconds more.

        Raises :class:`EngineTimeoutError`, :class:`EngineTerminatedError` or
        :class:`IllegalEngineMoveError`.
        """
        tokens, lines = self._search(board, limit, multipv=None, timeout=timeout, grace=grace)
        info = lines.get(1, {})
        if tokens[0] == "nobestmove" or len(tokens) < 2 or tokens[1] in ("(none)", "0000", "none", "resign"):
            # no move: a draw claim (ElephantEye's nobestmove) or a resignation; the caller judges it
            return PlayResult(None, None, info, resigned=len(tokens) > 1 and "resign" in tokens[1:])
        move = self.move_from_engine(tokens[1])
        if not board.is_legal(move):
            raise IllegalEngineMoveError(f"{self.name}: illegal move {tokens[1]!r} ({move.iccs()}) "
                                         f"in {board.fen()}", tokens[1])
        ponder = None
        if "ponder" in tokens:
            k = tokens.index("ponder")
            if k + 1 < len(tokens):
                try:
                    p = self.move_from_engine(tokens[k + 1])
                    after = board.copy()
                    after.push(move, validate=False)
                    ponder = p if after.is_legal(p) else None
                except IllegalEngineMoveError:
                    ponder = None
        return PlayResult(move, ponder, info, draw_offered="draw" in tokens[2:],
                          resigned="resign" in tokens[2:])

    def analyse(self, board: Board, limit: Any, *, multipv: int | None = None,
                timeout: float | None = None, grace: float = DEFAULT_GRACE) -> InfoDict | list[InfoDict]:
        """Analyse ``board`` under ``limit``; the last info of the best line, or with
        ``multipv`` a list of the best lines (best first). Errors as in :meth:`play`."""
        _, lines = self._search(board, limit, multipv=multipv, timeout=timeout, grace=grace)
        if multipv is None:
            return lines.get(1, {})
        return [lines[k] for k in sorted(lines)][:multipv]

    # -- shutdown ----------------------------------------------------------------------

    def quit(self, timeout: float = 2.0) -> None:
        """Send ``quit`` and wait for the process to end (killed after ``timeout`` seconds)."""
        if self._closed:
            return
        try:
            self.send("quit")
        except EngineError:
            pass
        self.close(timeout)

    def close(self, timeout: float = 2.0) -> None:
        """End the process (terminate, then kill) without the ``quit`` courtesy."""
        if self._closed:
            return
        self._closed = True
        proc = self.process
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def __enter__(self) -> SimpleEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.quit()

    def __repr__(self) -> str:
        return f"<SimpleEngine {self.name!r} {self.protocol} pid={self.process.pid}>"


#: An engine's centipawns per centipawn of ours, by the start of its ``id name`` (lower case), measured on
#: the review bench's positions (docs/REVIEW.md, "Other engines"): the review divides an engine's scores by
#: it, so that the win-chance curve fitted on our scores applies to them. Unknown engines: 1.
ENGINE_CP_SCALES = {"fairy-stockfish": 1.23}


def engine_cp_scale(name: str) -> float:
    """The :data:`ENGINE_CP_SCALES` entry of an engine's ``id name``, 1.0 for an engine not listed."""
    low = name.lower()
    for prefix, scale in ENGINE_CP_SCALES.items():
        if low.startswith(prefix):
            return scale
    return 1.0


class ClientSearcher:
    """A running external engine with the built-in engine's search interface, for the game review
    (:func:`xiangqi.study.review.evaluate_line`'s ``searcher``): :meth:`new_game` and
    :meth:`search` ``(board, limit) -> SearchResult``. ``xiangqi analyse --engine CMD`` and the review
    page's added engine (:class:`xiangqi.app.opponents.engines.ExternalSearcher`) both review through it.

    ``engine``: a :class:`SimpleEngine` (started and configured by the caller, who also quits it).
    ``limit`` is any object with :class:`Limit`'s fields; a ``depth`` is sent as ``go depth N``
    (the engine's own depth, not comparable with ours), a ``time`` as ``movetime``. With one
    thread and a cleared hash (:meth:`new_game` sends ``ucinewgame``) a depth-limited search of a
    UCI engine such as Fairy-Stockfish or Pikafish gives the same answer every time.
    ``cp_scale``: the engine's centipawns per centipawn of ours (default :func:`engine_cp_scale` of
    its name); the review divides the scores by it (:func:`xiangqi.study.review.evaluate_position`).
    """

    def __init__(self, engine: SimpleEngine, cp_scale: float | None = None) -> None:
        self.engine = engine
        self.name = engine.id.get("name") or engine.name
        if cp_scale is not None and not cp_scale > 0:
            raise EngineError(f"{self.name}: the centipawn scale must be > 0, got {cp_scale!r}")
        self.cp_scale = engine_cp_scale(self.name) if cp_scale is None else float(cp_scale)

    def new_game(self) -> None:
        """Clear the engine's tables before the next position (``ucinewgame`` / UCCI ``newgame``)."""
        self.engine.new_game()

    def search(self, board: Board, limit: Any) -> Any:
        """The engine's answer for ``board`` (its move history is sent too, so repetitions count):
        a :class:`xiangqi.engine.api.SearchResult` with ``move`` from ``bestmove`` (None when the
        side to move has no move: mated or stalemated), ``score_cp`` / ``mate`` from the side to
        move's view (UCI ``mate N`` is moves), ``pv`` (legal moves, at least the best move),
        ``depth`` and ``nodes`` from the last info line. Raises :class:`EngineError` subclasses
        as :meth:`SimpleEngine.play` does, and :class:`IllegalEngineMoveError` for an illegal
        ``bestmove``."""
        from xiangqi.engine.api import SearchResult

        t0 = time.monotonic()
        tokens, lines = self.engine._search(board, limit, multipv=None, timeout=None, grace=DEFAULT_GRACE)
        info = lines.get(1, {})
        move = None
        gave = tokens[1] if tokens[0] == "bestmove" and len(tokens) >= 2 else "(none)"
        if gave not in ("(none)", "0000", "none", "resign"):
            move = self.engine.move_from_engine(gave)
            if not board.is_legal(move):
                raise IllegalEngineMoveError(f"{self.engine.name}: illegal move {gave!r} ({move.iccs()}) "
                                             f"in {board.fen()}", gave)
        if move is None and board.legal_moves():
            raise EngineError(f"{self.engine.name}: gave no move ({' '.join(tokens)}) in {board.fen()}, "
                              "which has legal moves")
        pv = list(info.get("pv") or [])
        if move is not None and (not pv or pv[0] != move):
            pv = [move]
        score = info.get("score")
        cp = getattr(score, "cp", None)
        mate = getattr(score, "mate", None)
        if move is None:
            cp, mate = None, 0
        elif cp is None and mate is None:
            raise EngineError(f"{self.engine.name}: sent no score for {board.fen()}")
        return SearchResult(move=move, score_cp=cp, mate=mate, depth=int(info.get("depth") or 0),
                            nodes=int(info.get("nodes") or 0), time_s=time.monotonic() - t0, pv=pv,
                            ponder=pv[1] if len(pv) > 1 else None)


def _legal_prefix(board: Board, moves: Iterable[Move]) -> list[Move]:
    b = board.copy()
    out = []
    for m in moves:
        if not b.is_legal(m):
            break
        b.push(m, validate=False)
        out.append(m)
    return out


__all__ = ["ClientSearcher", "ENGINE_CP_SCALES", "engine_cp_scale", "EngineError", "EngineTerminatedError",
           "EngineTimeoutError", "IllegalEngineMoveError", "InfoDict", "Limit", "Option", "PlayResult",
           "Score", "SimpleEngine"]
