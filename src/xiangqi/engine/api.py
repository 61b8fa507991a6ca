"""The engine's Python API: :class:`Engine`, :class:`Limit`, :class:`SearchInfo`, :class:`SearchResult`.

Modelled on python-chess's ``chess.engine`` (``Limit``, ``analyse`` info) and
driving the Numba kernels of :mod:`xiangqi.engine.search`: iterative deepening
with aspiration windows, multi-PV, time management (:mod:`.timeman`) and a
stop flag shared with the kernel (a numpy array written by :meth:`Engine.stop`
from any thread).
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import threading
import time
from collections.abc import Callable

import numpy as np

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.engine import consts as K
from xiangqi.engine.levels import Level, get_level
from xiangqi.engine.timeman import budget

MAX_DEPTH = K.MAX_PLY - 8
DEFAULT_QCHECK_PLIES = 6  # quiescence searches check evasions for this many plies


@dataclasses.dataclass(frozen=True)
class Limit:
    """Search limits; all optional, the search stops at the first one reached.

    ``time`` is seconds for this move; ``wtime``/``btime`` the clock seconds left
    for Red (w) and Black, ``winc``/``binc`` their increments in seconds,
    ``movestogo`` the moves to the next time control, ``byoyomi`` seconds per move
    once the main time is used; ``infinite`` searches until :meth:`Engine.stop`.
    With no limit at all the search runs to the maximum depth.
    """

    depth: int | None = None
    nodes: int | None = None
    time: float | None = None
    wtime: float | None = None
    btime: float | None = None
    winc: float | None = None
    binc: float | None = None
    movestogo: int | None = None
    byoyomi: float | None = None
    infinite: bool = False


@dataclasses.dataclass
class SearchInfo:
    """Progress of a search, sent after each completed iteration (one per PV line with multi-PV).

    ``score_cp`` is centipawns for the side to move (None when ``mate`` is set);
    ``mate`` is mate in N moves (N > 0: the side to move mates; N < 0: it is mated).
    ``time_s`` seconds since the start, ``nps`` nodes per second.
    """

    depth: int
    seldepth: int
    score_cp: int | None
    mate: int | None
    nodes: int
    nps: int
    time_s: float
    pv: list[Move]
    multipv: int = 1


@dataclasses.dataclass
class SearchResult:
    """Result of :meth:`Engine.search` / :meth:`Engine.play`.

    ``move`` is None only when the side to move has no legal move (then
    ``mate == 0``: mated or stalemated, which loses in xiangqi). ``ponder`` is
    the expected reply (second move of the PV) if any.
    """

    move: Move | None
    score_cp: int | None
    mate: int | None
    depth: int
    nodes: int
    time_s: float
    pv: list[Move]
    ponder: Move | None = None
    #: The endgame table's verdict on the root position when :attr:`Engine.tablebase` has it:
    #: ``{"wdl": "win|draw|loss" (side to move), "dtm": plies or None, "ending": "KRKAABB"}``.
    tablebase: dict | None = None


def _kernels():
    """The kernel modules, imported on first use (the first import compiles or loads them from the cache)."""
    from xiangqi.engine import evaluate as ev
    from xiangqi.engine import movegen, search, tt

    return search, movegen, tt, ev


def _int_to_move(m: int) -> Move:
    return Move(int(m) >> 7, int(m) & 127)


def _move_to_int(move: Move) -> int:
    return (move.from_square << 7) | move.to_square


def _new_buffers() -> dict[str, np.ndarray]:
    """Fresh per-engine arrays for the kernels (everything but the TT), see :mod:`.search`."""
    return {
        "killers": np.zeros((K.MAX_PLY, 3), np.int64),  # killer moves 0-1, static eval 2
        "hist": np.zeros((15, 90), np.int64),
        "mbuf": np.zeros((K.MAX_PLY, K.MAX_MOVES), np.int64),
        "sbuf": np.zeros((K.MAX_PLY, K.MAX_MOVES), np.int64),
        "pv": np.zeros((K.MAX_PLY, K.MAX_PLY), np.int64),
        "pvl": np.zeros(K.MAX_PLY, np.int64),
        "ctl": np.zeros(16, np.int64),
    }


def _table_entries(mb: int) -> int:
    """Largest power-of-two TT entry count (16 bytes each) fitting ``mb`` megabytes (at least 1024)."""
    if mb < 1:
        raise ValueError(f"hash size must be at least 1 MB, got {mb}")
    n = 1024
    while n * 2 * 16 <= mb * 1024 * 1024:
        n *= 2
    return n


def _score_fields(s: int) -> tuple[int | None, int | None]:
    """``(score_cp, mate)`` of a kernel score."""
    if s > K.MATE_BOUND:
        return None, (K.MATE - s + 1) // 2
    if s < -K.MATE_BOUND:
        return None, -((K.MATE + s) // 2)
    return int(s), None


_RULES_CODE = {"cxa": K.RULES_CXA, "axf": K.RULES_AXF, "checks": K.RULES_CHECKS}

_ready = threading.Event()
_warm_lock = threading.Lock()
_warming = threading.local()  # set while this thread runs the warm-up searches


class Engine:
    """The built-in xiangqi engine (one search at a time per instance; kernels release the GIL).

    ``hash_mb`` is the transposition-table size in megabytes (at least 1).
    """

    def __init__(self, hash_mb: int = 64) -> None:
        self._lock = threading.Lock()
        self._bufs = _new_buffers()
        self._ctl = self._bufs["ctl"]
        self._rk = np.zeros(K.HISTORY, np.int64)
        self._rf = np.zeros(K.HISTORY, np.int64)
        self._gen = 0
        self.hash_mb = 0
        self.set_hash(hash_mb)
        self.qcheck_plies = DEFAULT_QCHECK_PLIES
        #: How the search rules a repetition inside its tree (:mod:`.chase`): ``"cxa"`` (the default:
        #: perpetual check, then perpetual check-or-chase of one or several pieces), ``"axf"``
        #: (perpetual check, then a perpetual chase of the same piece) or ``"checks"`` (perpetual check
        #: only). The root always asks the core referee (CXA) about the moves that repeat the game.
        self.repetition_rules = "cxa"
        #: The evaluation the search plays: ``"nnue"`` (the network), ``"texel"`` (the tuned tables, or
        #: whichever tables ``XIANGQI_EVAL`` names) or None for the default of the environment
        #: (:func:`xiangqi.engine.nnue.selected`: the network unless ``XIANGQI_EVAL`` names tables).
        self.evaluation: str | None = None
        self._stop_requested = False
        #: Lines ``(score, pv as kernel ints)`` of the last completed iteration (multi-PV order).
        self.last_lines: list[tuple[int, list[int]]] = []
        self._recent_keys: set[int] = set()
        #: Endgame tables probed at the root (:meth:`set_tablebase_path`); None: none.
        self.tablebase = None
        #: Probe the tables inside the search too (not only at the root); the tables packed for the
        #: kernels (:func:`~xiangqi.engine.tablebase.pack_tables`), at most ``tablebase_memory_mb``.
        self.tablebase_in_search = True
        self.tablebase_memory_mb = 512
        self._tb_packed: tuple = (None, None)  # (directory listing it was packed from, (tbv, tbd))

    # -- configuration -----------------------------------------------------

    def set_hash(self, mb: int) -> None:
        """Resize (and clear) the transposition table to at most ``mb`` megabytes. ValueError if < 1."""
        mb = int(mb)
        n = _table_entries(mb)
        tk, td = np.zeros(n, np.int64), np.zeros(n, np.int64)
        with self._lock:
            self._tk, self._td = tk, td
            self.hash_mb = mb

    def set_tablebase_path(self, path: str | os.PathLike[str] | None) -> list[str]:
        """Probe the endgame tables in directory ``path`` at the root of every search (None or "":
        none). Returns the endings found there (an empty list for a missing directory: the option is
        kept, and tables generated there later are used). See :meth:`_probe_root`."""
        if path is None or str(path).strip() == "":
            self.tablebase = None
            return []
        from xiangqi.engine.tablebase import Tablebase

        self.tablebase = Tablebase(str(path).strip())
        self._tb_packed = (None, None)
        return self.tablebase.available()

    def _tb_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(tbv, tbd)`` for the search kernels: the tables of :attr:`tablebase` packed (again when the
        directory's files changed), or empty arrays (no tables, or :attr:`tablebase_in_search` off)."""
        from xiangqi.engine import tbgen

        empty = (np.zeros(1, np.int16), np.zeros((0, tbgen.TBD_WIDTH), np.int64))
        tb = self.tablebase
        if tb is None or not self.tablebase_in_search:
            return empty
        listing = tuple(tb.available())
        if self._tb_packed[0] != listing:
            from xiangqi.engine.tablebase import pack_tables

            tbv, tbd, _names = pack_tables(tb.directory, self.tablebase_memory_mb)
            self._tb_packed = (listing, (tbv, tbd))
        return self._tb_packed[1]

    def _probe_root(self, board: Board):
        """The table's :class:`~xiangqi.engine.tablebase.ProbeResult` for the root, or None (no tables,
        more than 8 pieces, an ending whose table is absent, or a damaged table file: searched as usual).

        The search probes the tables too (:meth:`_tb_arrays`, after captures and at ply 1). They are
        *pure mate* or model one-sided perpetual check (``cxa-check``, docs/TABLEBASES.md; a result of
        that rule has no DTM and scores ``REP_WIN``); perpetual chase is not modelled, so the root's
        repetition filter (:meth:`_drop_forbidden`) still applies to the moves it keeps."""
        tb = self.tablebase
        if tb is None or sum(1 for p in board.squares if p) > 8:
            return None
        from xiangqi.engine.tablebase import TablebaseError

        try:
            return tb.probe(board)
        except TablebaseError:
            return None

    def new_game(self) -> None:
        """Clear the TT, killers and history tables (a new game starts)."""
        with self._lock:
            self._tk[:] = 0
            self._td[:] = 0
            self._bufs["killers"][:] = 0
            self._bufs["hist"][:] = 0

    def stop(self) -> None:
        """Make a running search return its best move so far (thread-safe; no effect when idle)."""
        self._stop_requested = True
        self._ctl[K.C_STOP] = 1

    # -- set-up ------------------------------------------------------------------

    def _load(self, board: Board) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Kernel arrays for ``board`` and its history (for repetitions inside the search)."""
        _, mg_mod, tt_mod, ev_mod = _kernels()
        zob, zob_side = tt_mod.ZOB, tt_mod.ZOB_SIDE
        rk, rf = self._rk, self._rf
        moves = board.move_stack
        b = board.root()
        sq = np.array(b.squares, dtype=np.int8)
        side = 0 if b.turn else 1
        key = int(tt_mod.key_of(sq, side))
        hist_keys = [key]
        hist_flags = [2]
        for mv in moves:
            p = int(sq[mv.from_square])
            cap = int(sq[mv.to_square])
            key ^= int(zob[p + 7, mv.from_square]) ^ int(zob[p + 7, mv.to_square]) ^ int(zob_side)
            if cap:
                key ^= int(zob[cap + 7, mv.to_square])
            sq[mv.to_square] = p
            sq[mv.from_square] = 0
            b.push(mv, validate=False)
            hist_keys.append(key)
            hist_flags.append((2 if cap else 0) | (1 if b.is_check() else 0)
                              | (((mv.from_square << 7) | mv.to_square) << 8))
        keep = K.HISTORY - K.MAX_PLY - 8
        if len(hist_keys) > keep:
            hist_keys = hist_keys[-keep:]
            hist_flags = hist_flags[-keep:]
            hist_flags[0] |= 2
        n = len(hist_keys)
        # keys of the positions since the last capture (a repetition can only reach those)
        last_irr = max(i for i in range(n) if hist_flags[i] & 2)
        self._recent_keys = set(hist_keys[last_irr:])
        rk[:n] = hist_keys
        rf[:n] = hist_flags
        bd, ks, side = mg_mod.board_arrays(board)
        mg, eg, ph = ev_mod.material_state(bd)
        from xiangqi.engine import nnue

        st = np.zeros(8, np.int64)
        if self.uses_nnue():  # the state carries the network's accumulator stack
            st = nnue.new_state()
            nnue.refresh(bd, st)
        st[K.S_SIDE] = side
        st[K.S_MG] = mg
        st[K.S_EG] = eg
        st[K.S_PH] = ph
        st[K.S_KEY] = tt_mod.key_of(bd, side)
        st[K.S_HP] = n - 1
        return bd, ks, st

    # -- search --------------------------------------------------------------------

    def search(self, board: Board, limit: Limit, *, on_info: Callable[[SearchInfo], None] | None = None,
               multipv: int = 1, stop: threading.Event | None = None) -> SearchResult:
        """Search ``board`` (not modified; its ``move_stack`` is used for repetitions) within ``limit``.

        Returns the best move found; ``on_info`` receives a :class:`SearchInfo`
        after every completed iteration, one per line when ``multipv`` > 1.
        ``stop``: this search's own stop. A search resets the engine's stop flag when it begins, so a
        :meth:`stop` that comes between a caller's last check and that moment is lost; an event set
        by then is not: the search sees it once its flags are reset and returns at once (no iteration
        completed, ``depth`` 0). While the search runs, set the event and call :meth:`stop`.
        Raises :class:`TypeError` when ``limit`` is not a :class:`Limit` and
        :class:`ValueError` for ``multipv`` < 1 or a negative depth/node/time limit, and
        :class:`~xiangqi.core.errors.XiangqiError` for an illegal position (the side
        not to move is in check).
        """
        if not isinstance(limit, Limit):
            raise TypeError(f"limit must be a xiangqi.engine.Limit, got {type(limit).__name__}")
        if multipv < 1:
            raise ValueError(f"multipv must be >= 1, got {multipv}")
        for name in ("depth", "nodes", "time", "wtime", "btime"):
            v = getattr(limit, name)
            if v is not None and v < 0:
                raise ValueError(f"Limit.{name} must be >= 0, got {v}")
        if not _ready.is_set() and not getattr(_warming, "active", False):
            # compile / load the kernels first, so that it does not count against the time limit
            warmup(background=False)
        with self._lock:
            return self._search(board, limit, on_info, multipv, stop)

    def _search(self, board: Board, limit: Limit, on_info, multipv: int,
                stop: threading.Event | None = None) -> SearchResult:
        t0 = time.perf_counter()
        ctl = self._ctl
        ctl[:] = 0
        self._stop_requested = False
        if stop is not None and stop.is_set():  # stopped before it began (after the reset above)
            self._stop_requested = True
            ctl[K.C_STOP] = 1
        self.last_lines = []
        legal = list(board.legal_moves)
        if not legal:
            return SearchResult(None, None, 0, 0, 0, time.perf_counter() - t0, [])
        _k, movegen, _, ev_mod = _kernels()
        bd, ks, st = self._load(board)
        other = 1 - int(st[K.S_SIDE])
        if movegen.king_attacked(bd, int(ks[other]), other):
            side_name = "Black" if other else "Red"
            raise XiangqiError(f"illegal position {board.fen()}: {side_name} is in check but it is not "
                               f"{side_name}'s move")
        self._gen = (self._gen + 1) & 0xFF
        ctl[K.C_GEN] = self._gen
        ctl[K.C_NODE_LIMIT] = limit.nodes or 0
        ctl[K.C_QCHECK] = self.qcheck_plies
        ctl[K.C_RULES] = _RULES_CODE[self.repetition_rules]
        b = self._bufs
        b["hist"] //= 8
        b["killers"][:] = 0
        opt, mx = budget(limit, board.turn)
        max_depth = MAX_DEPTH if limit.depth is None else max(1, min(MAX_DEPTH, limit.depth))
        # root move order: TT move, then MVV-LVA captures, then the rest
        ttd = int(_k.tt_probe(self._tk, self._td, int(st[K.S_KEY])))
        ttm = int(_k.tt_move(ttd)) if ttd >= 0 else 0
        root = [_move_to_int(m) for m in legal]
        root = self._drop_forbidden(board, bd, st, root)
        tb = self._probe_root(board)
        if tb is not None and multipv == 1:
            # the table's best moves (fastest mate, longest resistance or the drawing moves) only
            keep = {_move_to_int(Move.from_iccs(m)) for m in tb.best}
            root = [m for m in root if m in keep] or root
        multipv = min(multipv, len(root))
        values = ev_mod.ORDER_VALUE
        root.sort(key=lambda m: (m != ttm, -int(values[abs(int(bd[m & 127]))])))

        timer_done = threading.Event()
        if mx is not None:
            def watchdog() -> None:
                if not timer_done.wait(mx):
                    ctl[K.C_STOP] = 1
            threading.Thread(target=watchdog, daemon=True, name="xiangqi-engine-timer").start()

        only_move_fast = (len(root) == 1 and not limit.infinite and limit.depth is None
                          and limit.nodes is None)
        lines: list[tuple[int, list[int]]] = []  # last completed iteration
        best_move = root[0]
        best_score = 0
        best_pv = [root[0]]
        done_depth = 0
        try:
            for depth in range(1, max_depth + 1):
                new_lines: list[tuple[int, list[int]]] = []
                excluded: list[int] = []
                aborted = False
                for k in range(multipv):
                    cand = [m for m in root if m not in excluded]
                    prev = lines[k][0] if k < len(lines) else None
                    score, pv, aborted = self._root_iteration(bd, ks, st, cand, depth, prev, k == 0)
                    if aborted:
                        if k == 0 and pv:
                            # a move fully searched in the unfinished iteration beat the previous best
                            if pv[0] != best_move and ctl[K.C_ROOT_DONE] > 0:
                                best_move, best_score, best_pv = pv[0], score, pv
                        break
                    new_lines.append((score, pv))
                    excluded.append(pv[0])
                if aborted:
                    break
                # a later line can score above an earlier one (search instability): order by score
                new_lines.sort(key=lambda ln: -ln[0])
                lines = new_lines
                self.last_lines = lines
                done_depth = depth
                best_score, best_pv = lines[0]
                best_move = best_pv[0]
                # order the root: best lines first, then the rest in their previous order
                firsts = [ln[1][0] for ln in lines]
                root = firsts + [m for m in root if m not in firsts]
                elapsed = time.perf_counter() - t0
                if on_info is not None:
                    nodes = int(ctl[K.C_NODES])
                    for i, (s, pv) in enumerate(lines):
                        cp, mate = _score_fields(s)
                        on_info(SearchInfo(depth, int(max(ctl[K.C_SELDEPTH], depth)), cp, mate, nodes,
                                           int(nodes / elapsed) if elapsed > 0 else 0, elapsed,
                                           self._pv_moves(board, pv), i + 1))
                if ctl[K.C_STOP] or self._stop_requested:
                    break
                if only_move_fast:
                    break
                if opt is not None and limit.depth is None and limit.time is None and elapsed > opt * 0.55:
                    break  # game clock: the next iteration would likely not finish in time
                if abs(best_score) > K.MATE_BOUND and multipv == 1 and not limit.infinite \
                        and depth > (K.MATE - abs(best_score)) + 2:
                    break
            if limit.infinite:
                # UCI: an infinite search reports its move only after stop
                while not (ctl[K.C_STOP] or self._stop_requested):
                    time.sleep(0.005)
        finally:
            timer_done.set()
        elapsed = time.perf_counter() - t0
        move = _int_to_move(best_move)
        if not board.is_legal(move):  # never happens with a correct kernel; never return an illegal move
            move = legal[0]
            best_pv = [_move_to_int(move)]
        pv_moves = self._pv_moves(board, best_pv)
        cp, mate = _score_fields(best_score)
        verdict = None
        if tb is not None:
            verdict = {"wdl": tb.wdl, "dtm": tb.dtm, "ending": tb.ending}
            if tb.rule:  # decided by the repetition rule (长将 loses): no DTM
                verdict["rule"] = tb.rule
            if multipv == 1 or move.iccs() in tb.best:  # the score of the move played is the table's
                if tb.wdl == "draw":
                    cp, mate = 0, None
                elif tb.dtm is None:  # won / lost by the repetition rule (长将 loses): no mate
                    cp, mate = (K.REP_WIN if tb.wdl == "win" else -K.REP_WIN), None
                else:  # DTM in plies -> mate in moves (+ the side to move mates, - it is mated)
                    cp, mate = None, ((tb.dtm + 1) // 2 if tb.wdl == "win" else -(tb.dtm // 2))
        _ready.set()
        return SearchResult(move, cp, mate, done_depth, int(ctl[K.C_NODES]), elapsed, pv_moves,
                            pv_moves[1] if len(pv_moves) > 1 else None, verdict)

    def _drop_forbidden(self, board: Board, bd: np.ndarray, st: np.ndarray, root: list[int]) -> list[int]:
        """Root moves after asking the rules referee about the moves that repeat a position of the game.

        The kernels judge repetitions inside the tree with a fast model of the rules
        (:mod:`.chase`); at the root the core referee (RULES.md §5) decides. A move the
        referee rules a loss for the mover (e.g. a
        forbidden 长捉) is dropped, unless every move loses; a move it rules a win
        (the opponent's forbidden repetition is complete) is returned alone. A cycle
        is ruled when the position recurs, whoever moves into it, so a quiet move
        after which the opponent can complete a cycle ruled against us is dropped
        too (unless that leaves nothing).
        """
        tt_mod = _kernels()[2]
        zob, zob_side = tt_mod.ZOB, tt_mod.ZOB_SIDE
        key = int(st[K.S_KEY])
        recent = self._recent_keys
        keep = []
        for m in root:
            frm, to = m >> 7, m & 127
            p = int(bd[frm])
            if bd[to] == 0:
                k2 = key ^ int(zob[p + 7, frm]) ^ int(zob[p + 7, to]) ^ int(zob_side)
                if k2 in recent:
                    b = board.copy()
                    b.push(_int_to_move(m), validate=False)
                    out = b.outcome()
                    if out is not None and out.winner is not None:
                        if out.winner == board.turn:
                            return [m]
                        continue
            keep.append(m)
        keep = keep or root
        if len(recent) < 4:  # no cycle can be completed by the reply
            return keep
        safe = [m for m in keep if not self._reply_completes_lost_cycle(board, bd, m, key)]
        return safe or keep

    def _reply_completes_lost_cycle(self, board: Board, bd: np.ndarray, m: int, key: int) -> bool:
        """True if, after our quiet move ``m``, a quiet reply repeats a position ruled lost for us."""
        _, movegen, tt_mod, _ = _kernels()
        zob, zob_side = tt_mod.ZOB, tt_mod.ZOB_SIDE
        frm, to = m >> 7, m & 127
        if bd[to] != 0:
            return False  # a capture starts a new cycle
        p = int(bd[frm])
        k2 = key ^ int(zob[p + 7, frm]) ^ int(zob[p + 7, to]) ^ int(zob_side)
        after = bd.copy()
        after[to] = p
        after[frm] = 0
        them = 1 if board.turn else 0
        replies = np.zeros(K.MAX_MOVES, np.int64)
        n = int(movegen.gen_moves(after, them, replies, False))
        b = None
        for r in replies[:n]:
            rf, rt = int(r) >> 7, int(r) & 127
            if after[rt] != 0:
                continue
            q = int(after[rf])
            if (k2 ^ int(zob[q + 7, rf]) ^ int(zob[q + 7, rt]) ^ int(zob_side)) not in self._recent_keys:
                continue
            if b is None:
                b = board.copy()
                b.push(_int_to_move(m), validate=False)
            reply = _int_to_move(int(r))
            if not b.is_legal(reply):
                continue
            b.push(reply, validate=False)
            out = b.outcome()
            b.pop()
            if out is not None and out.winner is not None and out.winner != board.turn:
                return True
        return False

    def _root_iteration(self, bd, ks, st, cand: list[int], depth: int, prev: int | None,
                        aspiration: bool) -> tuple[int, list[int], bool]:
        """One root search of ``cand`` to ``depth``; returns ``(score, pv, aborted)``."""
        _k = _kernels()[0]
        b = self._bufs
        ctl = self._ctl
        arr = np.array(cand, dtype=np.int64)
        scores = np.zeros(len(cand), np.int64)
        tbv, tbd = self._tb_arrays()
        delta = 35
        if aspiration and prev is not None and depth >= 5 and abs(prev) < K.MATE_BOUND:
            alpha, beta = prev - delta, prev + delta
        else:
            alpha, beta = -K.INF, K.INF
        while True:
            s = int(_k.search_root(bd, ks, st, self._rk, self._rf, self._tk, self._td, b["killers"],
                                   b["hist"], b["mbuf"], b["sbuf"], b["pv"], b["pvl"], ctl, tbv, tbd, arr,
                                   len(cand), scores, depth, alpha, beta))
            pv = [int(x) for x in b["pv"][0, : b["pvl"][0]]]
            if ctl[K.C_STOP]:
                # a stopped search's best move counts only if it beat the window (not a fail-low bound)
                return s, (pv if s > alpha else []), True
            if s <= alpha and alpha > -K.INF:
                alpha = max(-K.INF, s - delta)
                delta *= 2
            elif s >= beta and beta < K.INF:
                beta = min(K.INF, s + delta)
                delta *= 2
            else:
                return s, pv, False
            if delta > 600:
                alpha, beta = -K.INF, K.INF

    @staticmethod
    def _pv_moves(board: Board, pv: list[int]) -> list[Move]:
        """The PV as core moves, cut at the first move that is not legal (e.g. a stale TT line)."""
        out: list[Move] = []
        b = board.copy(stack=False)
        for m in pv:
            mv = _int_to_move(m)
            if not b.is_legal(mv):
                break
            out.append(mv)
            b.push(mv, validate=False)
        return out

    def uses_nnue(self) -> bool:
        """True when the search plays the network (:attr:`evaluation`, else the environment's default).
        Raises ValueError for an :attr:`evaluation` that is not one of ``nnue.EVALUATIONS``."""
        from xiangqi.engine import nnue

        if self.evaluation is None:
            return nnue.selected()
        if self.evaluation not in nnue.EVALUATIONS:
            raise ValueError(f"evaluation must be one of {', '.join(nnue.EVALUATIONS)}, "
                             f"got {self.evaluation!r}")
        return self.evaluation == "nnue"

    def static_evaluation(self, board: Board) -> int:
        """The static evaluation of ``board`` for its side to move, in centipawns, by the evaluation
        the search plays (:meth:`uses_nnue`): no search, no quiescence."""
        _, mg_mod, _, ev_mod = _kernels()
        bd, ks, side = mg_mod.board_arrays(board)
        if self.uses_nnue():
            from xiangqi.engine import nnue

            return int(nnue.evaluate_board(bd, side, nnue.new_state()))
        return int(ev_mod.evaluate(bd, ks, side, *ev_mod.material_state(bd)))

    # -- levels ------------------------------------------------------------------

    def _slip(self, board: Board, lv: Level, lines: list, res: SearchResult,
              rng: random.Random) -> SearchResult | None:
        """A beginner's blind spot (``Level.miss_threat`` / ``miss_capture``), or None to play on
        normally: never when in check or when the search found a mate."""
        if lines[0][0] > K.MATE_BOUND or board.is_check():
            return None
        r = rng.random()
        if r < lv.miss_threat:
            # judged without the reply: the static evaluation right after each legal move
            scored = []
            for mv in board.legal_moves:
                b = board.copy()
                b.push(mv, validate=False)
                out = b.outcome()
                if out is not None and out.winner is not None:
                    if out.winner == board.turn:
                        return None  # a win on the board: it sees that
                    continue  # a move the rules forbid
                scored.append((-self.static_evaluation(b), mv.iccs(), mv))
            if not scored:
                return None
            scored.sort(key=lambda t: (-t[0], t[1]))
            mv = _soft_pick([(s, m) for s, _, m in scored], lv, rng)
            return SearchResult(mv, None, None, res.depth, res.nodes, res.time_s, [mv], None)
        if r < lv.miss_threat + lv.miss_capture:
            quiet = [(s, pv) for s, pv in lines if pv and int(board.squares[pv[0] & 127]) == 0]
            if not quiet or len(quiet) == len(lines):
                return None  # no capture among its lines to overlook (or nothing else to play)
            score, pv = _soft_pick([(s, (s, pv)) for s, pv in quiet], lv, rng)
            moves = self._pv_moves(board, pv)
            if not moves:
                return None
            cp, mate = _score_fields(score)
            return SearchResult(moves[0], cp, mate, res.depth, res.nodes, res.time_s, moves,
                                moves[1] if len(moves) > 1 else None)
        return None

    def play(self, board: Board, level: str | Level, *, seed: int | None = None) -> SearchResult:
        """Choose a move for ``board`` at ``level`` (key, Chinese or English name, or a :class:`Level`).

        The level's limits bound the search; with ``multipv`` > 1 the move is drawn
        among the lines within ``margin_cp`` of the best with probability
        ``exp((score - best) / temperature_cp)`` (``seed`` makes it repeatable).
        Raises :class:`ValueError` for an unknown level.
        """
        lv = get_level(level)
        limit = Limit(depth=lv.depth, nodes=lv.nodes, time=lv.time)
        res = self.search(board, limit, multipv=lv.multipv)
        lines = self.last_lines
        rng = random.Random(seed)
        if res.move is not None and lines and (lv.miss_threat > 0 or lv.miss_capture > 0):
            slip = self._slip(board, lv, lines, res, rng)
            if slip is not None:
                return slip
        if res.move is None or lv.multipv <= 1 or len(lines) < 2 or lv.temperature_cp <= 0:
            return res
        best = lines[0][0]
        cands = [(s, pv) for s, pv in lines if s >= best - lv.margin_cp]
        if best > K.MATE_BOUND or len(cands) < 2:
            return res
        weights = [math.exp((s - best) / lv.temperature_cp) for s, _ in cands]
        s, pv = rng.choices(cands, weights=weights)[0]
        moves = self._pv_moves(board, pv)
        if not moves:
            return res
        cp, mate = _score_fields(s)
        return SearchResult(moves[0], cp, mate, res.depth, res.nodes, res.time_s, moves,
                            moves[1] if len(moves) > 1 else None)


def _soft_pick(cands: list[tuple[int, object]], lv: Level, rng: random.Random) -> object:
    """One of ``cands`` ((score, item), best first) within the level's margin of the best, drawn
    with weight ``exp((score - best) / temperature)``."""
    best = cands[0][0]
    near = [(s, x) for s, x in cands if s >= best - lv.margin_cp]
    if lv.temperature_cp <= 0 or len(near) < 2:
        return near[0][1]
    return rng.choices(near, weights=[math.exp((s - best) / lv.temperature_cp) for s, _ in near])[0][1]


def warmup(background: bool = True) -> threading.Thread | None:
    """Compile (or load from the on-disk cache) every kernel by running a tiny search and perft.

    With ``background`` the work runs in a daemon thread, which is returned, so
    a UI can start at once; otherwise it runs now and None is returned.
    :func:`is_ready` tells when it is done.
    """
    def run() -> None:
        with _warm_lock:
            if _ready.is_set():
                return
            from xiangqi.engine.movegen import perft

            _warming.active = True
            try:
                _kernels()
                perft(Board(), 2)
                eng = Engine(hash_mb=1)
                eng.search(Board(), Limit(depth=3))
                eng.search(Board("3k5/9/9/9/9/9/9/9/4R4/4K4 w"), Limit(depth=2), multipv=2)
                _ready.set()
            finally:
                _warming.active = False

    if background:
        t = threading.Thread(target=run, daemon=True, name="xiangqi-engine-warmup")
        t.start()
        return t
    run()
    return None


def is_ready() -> bool:
    """True once the kernels are compiled (after :func:`warmup` or a first search)."""
    return _ready.is_set()
