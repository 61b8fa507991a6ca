"""Endgame tablebases (残局库): endings, generation, files and probing.

An *ending* is named with FEN letters, the stronger side first: ``KRKAABB`` is
车 against 士象全, ``KNPKAA`` 马兵 against 双士 (``H`` and ``E`` are accepted for
horse and elephant). In a table the stronger side is Red; a position with the
stronger side Black is probed with the board turned round (ranks ``r -> 9 - r``,
colours swapped). Each table holds, for both sides to move, the win/draw/loss
and the distance to mate in plies (codes in :mod:`xiangqi.engine.tbgen`).

Rules: checkmate and stalemate (困毙) lose for the side to move; the flying
general is a move rule (the move generator refuses it). The tables are *pure
mate*: repetition rules are not modelled (docs/TABLEBASES.md says what differs).

Index (scheme :data:`SCHEME`): Red king on files d-e (left-right mirror), Black
king 9 squares, advisors 5, elephants 7, pawns the 55 squares a pawn of their
colour can stand on, other pieces 90; identical pieces are ranked as
combinations. Files are ``<ENDING>.npz`` with ``values`` (int16 ``[2, N]``,
side to move 0 = Red, 1 = Black) and ``header`` (JSON: ending, scheme, counts).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import time
from collections.abc import Callable
from math import comb
from pathlib import Path

import numpy as np

from xiangqi.core.errors import XiangqiError
from xiangqi.datadir import default_data_dir

SCHEME = 1
RULES = "pure-mate"
ORDER = "RNCPAB"  # piece letters in a side's name, after the king
ATTACKERS = "RNCP"
_VALUE = {"R": 90, "N": 40, "C": 45, "P": 10, "A": 20, "B": 20}
_TYPE = {"A": 2, "B": 3, "N": 4, "R": 5, "C": 6, "P": 7}
_LETTER = {v: k for k, v in _TYPE.items()}
_ALIAS = {"H": "N", "E": "B"}
INVALID = -32768


class TablebaseError(XiangqiError):
    """A bad ending name, a missing or damaged table file."""


def default_dir() -> Path:
    """Where tables live: ``$XIANGQI_DATA_DIR/tablebases``, else the user data dir's ``tablebases``."""
    return default_data_dir() / "tablebases"


def _side_key(pieces: str) -> tuple:
    return (sum(p in ATTACKERS for p in pieces), sum(_VALUE[p] for p in pieces), pieces)


def _sort_side(pieces: str) -> str:
    return "".join(sorted(pieces, key=ORDER.index))


def canonical(red: str, black: str) -> tuple[str, bool] | None:
    """``(name, flipped)`` for the material ``red`` vs ``black`` (piece letters without kings).

    ``flipped`` is True when Black is the stronger side (the table's Red).
    ``None`` when neither side has an attacking piece (车 马 炮 兵): a draw.
    """
    red, black = _sort_side(red), _sort_side(black)
    if not any(p in ATTACKERS for p in red + black):
        return None
    if _side_key(black) > _side_key(red):
        return f"K{black}K{red}", True
    return f"K{red}K{black}", False


@dataclasses.dataclass(frozen=True)
class Ending:
    """A material balance; ``red`` is the stronger side (letters in :data:`ORDER`, no king)."""

    red: str
    black: str

    @classmethod
    def parse(cls, name: str) -> Ending:
        """Parse ``KRKAABB`` (any case, H/E for N/B); raises :class:`TablebaseError` when malformed."""
        text = "".join(_ALIAS.get(c, c) for c in name.strip().upper())
        parts = text.split("K")
        if len(parts) != 3 or parts[0] != "" or any(c not in ORDER for c in parts[1] + parts[2]):
            raise TablebaseError(f"bad ending {name!r}: expected e.g. KRKAABB "
                                 "(K A B N R C P, stronger side first)")
        red, black = parts[1], parts[2]
        for side in (red, black):
            for p, most in (("A", 2), ("B", 2), ("N", 2), ("R", 2), ("C", 2), ("P", 5)):
                if side.count(p) > most:
                    raise TablebaseError(f"bad ending {name!r}: more than {most} {p}")
        if len(red) + len(black) > 6:
            raise TablebaseError(f"ending {name!r} has more than 8 pieces: too big to generate")
        canon = canonical(red, black)
        if canon is None:
            raise TablebaseError(f"ending {name!r} has no attacking piece: it is a draw, nothing to generate")
        r, b = canon[0][1:].split("K")
        return cls(r, b)

    @property
    def name(self) -> str:
        """The canonical name, e.g. ``KRKAABB``."""
        return f"K{self.red}K{self.black}"

    def groups(self) -> list[tuple[int, int, int]]:
        """``(signed piece code, count, square list)`` per group: the kings, then Red's, then Black's."""
        from xiangqi.engine import tbgen

        lists = {("A", 0): tbgen.L_RADV, ("A", 1): tbgen.L_BADV, ("B", 0): tbgen.L_RELE,
                 ("B", 1): tbgen.L_BELE, ("P", 0): tbgen.L_RPAWN, ("P", 1): tbgen.L_BPAWN}
        out = [(1, 1, tbgen.L_RKING), (-1, 1, tbgen.L_BKING)]
        for colour, pieces in ((0, self.red), (1, self.black)):
            for p in ORDER:
                c = pieces.count(p)
                if c:
                    sign = 1 if colour == 0 else -1
                    out.append((sign * _TYPE[p], c, lists.get((p, colour), tbgen.L_ANY)))
        return out

    def slots(self) -> list[int]:
        """Signed piece code of each slot (the index's piece order)."""
        return [code for code, c, _ in self.groups() for _ in range(c)]

    def size(self) -> int:
        """Index size per side to move."""
        from xiangqi.engine import tbgen

        n = 1
        for _, c, lst in self.groups():
            n *= comb(int(tbgen.SQN[lst]), c)
        return n

    def captures(self) -> list[tuple[str | None, bool, list[int]]]:
        """Per slot: ``(sub-ending name or None for a draw, flipped, source slot of each sub slot)``.

        Kings (slots 0 and 1) cannot be captured: their entries are ``(None, False, [])``.
        """
        slots = self.slots()
        out: list[tuple[str | None, bool, list[int]]] = [(None, False, []), (None, False, [])]
        for j in range(2, len(slots)):
            code = slots[j]
            red, black = self.red, self.black
            letter = _LETTER[abs(code)]
            if code > 0:
                red = red.replace(letter, "", 1)
            else:
                black = black.replace(letter, "", 1)
            canon = canonical(red, black)
            if canon is None:
                out.append((None, False, []))
                continue
            name, flipped = canon
            sub = Ending.parse(name)
            left = [k for k in range(len(slots)) if k != j]
            src = []
            for code2 in sub.slots():
                want = -code2 if flipped else code2
                k = next(k for k in left if slots[k] == want)
                left.remove(k)
                src.append(k)
            out.append((name, flipped, src))
        return out

    def sub_endings(self) -> list[str]:
        """Names of the endings one capture leads to (those with mating material)."""
        return sorted({n for n, _, _ in self.captures() if n})


MAX_PIECES = 8  # kings included: the most a table holds (``Ending.parse`` refuses more)


def default_set(max_indices: int | None = None) -> list[str]:
    """The default table set of issue 14, smallest first (ties by name).

    Every ending with one or two attacking pieces (车 马 炮 兵) on one side against at most one on
    the other, with any advisors/elephants (0-2 each) on the side with fewer attackers (none when both
    sides have one attacker), plus one attacker with one advisor or elephant of its own against the
    full defence 士象全 (the largest such ending within :data:`MAX_PIECES`; with two own defenders it
    would be 9 pieces). Endings beyond :data:`MAX_PIECES` pieces are left out. ``max_indices``: keep
    only the endings with at most that many indices per side to move (their sub-endings are smaller).
    """
    att = "RNCP"
    defences = [d for a in range(3) for b in range(3) if (d := "A" * a + "B" * b) or True]
    singles = list(att)
    doubles = sorted({"".join(sorted(x + y, key=ORDER.index)) for x in att for y in att})
    names: set[str] = set()

    def add(strong: str, weak: str) -> None:
        if 2 + len(strong) + len(weak) > MAX_PIECES:
            return
        canon = canonical(strong, weak)
        if canon is not None:
            names.add(canon[0])

    for strong in singles + doubles:
        for w_att in ["", *att]:
            n_strong = len(strong)
            if w_att and n_strong == 1:
                add(strong, w_att)
                continue
            for d in defences:
                add(strong, w_att + d)
    for a in att:
        for own in ("A", "B"):
            add(a + own, "AABB")
    out = sorted(names, key=lambda n: (Ending.parse(n).size(), n))
    if max_indices is not None:
        out = [n for n in out if Ending.parse(n).size() <= max_indices]
    return out


@functools.lru_cache(maxsize=256)
def _parsed(name: str) -> tuple[Ending, list[int]]:
    end = Ending.parse(name)
    return end, end.slots()


@functools.lru_cache(maxsize=256)
def _groups(ending: Ending) -> list[tuple[int, int, int]]:
    from xiangqi.engine import tbgen

    return [(c, lst, comb(int(tbgen.SQN[lst]), c)) for _, c, lst in ending.groups()]


def encode_py(ending: Ending, sqs: list[int]) -> int:
    """Pure-Python index of slot squares ``sqs`` (same as the kernel's ``encode``; checks it in the tests)."""
    from xiangqi.engine import tbgen

    if sqs[0] % 9 > 4:
        sqs = [s - s % 9 + 8 - s % 9 for s in sqs]
    idx = 0
    k = 0
    for c, lst, n in _groups(ending):
        pos = sorted(int(tbgen.SQPOS[lst, s]) for s in sqs[k:k + c])
        if pos[0] < 0:
            raise TablebaseError(f"a piece of {ending.name} stands on a square its kind cannot reach")
        idx = idx * n + sum(comb(p, i + 1) for i, p in enumerate(pos))
        k += c
    return idx


def decode_py(ending: Ending, idx: int) -> list[int]:
    """Slot squares (0..89, the order of :meth:`Ending.slots`) of index ``idx``: the inverse of
    :func:`encode_py` for the positions it produces (Red king on files a-e). Two slots may share a
    square (the index counts such impossible placements; their value is ``INVALID``)."""
    from xiangqi.engine import tbgen

    if not 0 <= idx < ending.size():
        raise TablebaseError(f"index {idx} outside {ending.name} (size {ending.size()})")
    out: list[list[int]] = []
    for c, lst, n in reversed(_groups(ending)):
        r = idx % n
        idx //= n
        p = int(tbgen.SQN[lst]) - 1
        sqs = [0] * c
        for i in range(c - 1, -1, -1):
            while comb(p, i + 1) > r:
                p -= 1
            r -= comb(p, i + 1)
            sqs[i] = int(tbgen.SQL[lst, p])
            p -= 1
        out.append(sqs)
    return [s for group in reversed(out) for s in group]


def position_fen(ending: Ending, idx: int, red_to_move: bool = True) -> str | None:
    """The FEN of index ``idx`` of ``ending`` (Red the stronger side), or ``None`` when two pieces
    share a square. Legality (facing kings, the side not to move in check) is not checked here:
    the table's value of such a position is ``INVALID``."""
    sqs = decode_py(ending, idx)
    if len(set(sqs)) != len(sqs):
        return None
    from xiangqi.core.board import grid_board_fen

    grid: list[str | None] = [None] * 90
    for code, sq in zip(ending.slots(), sqs, strict=True):
        letter = "K" if abs(code) == 1 else _LETTER[abs(code)]
        grid[sq] = letter if code > 0 else letter.lower()
    return grid_board_fen(grid) + (" w" if red_to_move else " b") + " - - 0 1"


def _layouts(endings: list[Ending]):
    ng = len(endings)
    mg = max(len(e.groups()) for e in endings)
    arr = {k: np.zeros((ng, mg), np.int64) for k in ("gstart", "gcnt", "glist", "radix")}
    ngr = np.zeros(ng, np.int64)
    nsl = np.zeros(ng, np.int64)
    from xiangqi.engine import tbgen

    for t, e in enumerate(endings):
        st = 0
        groups = e.groups()
        ngr[t] = len(groups)
        for g, (_, c, lst) in enumerate(groups):
            arr["gstart"][t, g] = st
            arr["gcnt"][t, g] = c
            arr["glist"][t, g] = lst
            arr["radix"][t, g] = comb(int(tbgen.SQN[lst]), c)
            st += c
        nsl[t] = st
    return ngr, arr["gstart"], arr["gcnt"], arr["glist"], arr["radix"], nsl


def table_path(directory: Path, name: str) -> Path:
    """The file of ending ``name`` in ``directory``."""
    return Path(directory) / f"{name}.npz"


def load_values(directory: Path, name: str) -> tuple[np.ndarray, dict]:
    """``(values int16 [2, N], header dict)`` of a table file.

    Raises :class:`TablebaseError` when it is missing, damaged or of another index scheme.
    """
    path = table_path(directory, name)
    try:
        with np.load(path) as z:
            values = z["values"]
            header = json.loads(str(z["header"]))
    except FileNotFoundError:
        raise TablebaseError(f"no table {name} in {directory} (run: xiangqi tb generate {name})") from None
    except (OSError, ValueError, KeyError) as exc:
        raise TablebaseError(f"table file {path} is damaged: {exc}") from None
    end = Ending.parse(name)
    if header.get("scheme") != SCHEME or values.shape != (2, end.size()) or values.dtype != np.int16:
        raise TablebaseError(f"table file {path} has another index scheme or size; generate it again")
    return values, header


def statistics(values: np.ndarray) -> dict:
    """Counts per side to move: positions, wins, draws, losses, longest DTM (plies)."""
    out = {}
    for s, side in enumerate(("red", "black")):
        v = values[s]
        legal = v != INVALID
        wins = v > 0
        losses = (v < 0) & legal
        longest = 0
        if wins.any():
            longest = int(v[wins].max())
        if losses.any():
            longest = max(longest, int(-v[losses].min()) - 1)
        out[side] = {"positions": int(legal.sum()), "wins": int(wins.sum()), "draws": int((v == 0).sum()),
                     "losses": int(losses.sum()), "longest_dtm": longest}
    return out


METHODS = ("retro", "forward")


def generate(name: str, directory: Path | None = None, *, progress: Callable[[str], None] | None = None,
             force: bool = False, method: str = "retro") -> dict:
    """Generate the table of ending ``name`` (and first, recursively, its sub-endings) into ``directory``.

    Existing files are reused unless ``force`` (for ``name`` only). Returns the
    header written: ending, scheme, rules, size, per-side statistics, seconds,
    passes, file bytes. ``progress`` receives one line per step. ``method``: ``"retro"`` (un-move
    generation: each pass examines only the parents of the positions resolved in the pass before)
    or ``"forward"`` (each pass examines every unresolved position); both give the same values.
    """
    from xiangqi.engine import tbgen

    directory = Path(directory) if directory is not None else default_dir()
    directory.mkdir(parents=True, exist_ok=True)
    end = Ending.parse(name)
    say = progress or (lambda _msg: None)
    path = table_path(directory, end.name)
    if path.exists() and not force:
        try:
            return load_values(directory, end.name)[1]
        except TablebaseError:
            pass  # damaged or another scheme: generate it again
    if method not in METHODS:
        raise TablebaseError(f"unknown generation method {method!r} (one of {', '.join(METHODS)})")
    subs = end.sub_endings()
    for s in subs:
        generate(s, directory, progress=progress, method=method)
    t0 = time.perf_counter()
    sub_ends = [Ending.parse(s) for s in subs]
    endings = [end, *sub_ends]
    ngr, gstart, gcnt, glist, radix, nsl = _layouts(endings)
    size = np.array([e.size() for e in endings], np.int64)
    off = np.zeros(len(endings), np.int64)
    chunks = [np.zeros(0, np.int16)]
    maxsub = 0
    pos = 0
    for t, s in enumerate(subs, start=1):
        v, _ = load_values(directory, s)
        off[t] = pos
        flat = v.reshape(-1)
        chunks.append(flat)
        pos += flat.size
        ok = flat[flat != INVALID]
        if ok.size:
            maxsub = max(maxsub, int(np.abs(ok.astype(np.int32)).max()))
    subvals = np.concatenate(chunks).astype(np.int16)
    caps = end.captures()
    nslots = len(end.slots())
    cap_sub = np.full(nslots, -1, np.int64)
    cap_flip = np.zeros(nslots, np.bool_)
    cap_src = np.zeros((nslots, max(nslots, 1)), np.int64)
    for j, (sname, flipped, src) in enumerate(caps):
        if sname:
            cap_sub[j] = subs.index(sname) + 1
            cap_flip[j] = flipped
            cap_src[j, :len(src)] = src
    piece = np.array(end.slots(), np.int8)
    n_idx = end.size()
    say(f"{end.name}: {n_idx:,} indices x 2 sides ({2 * n_idx * 2 / 1e6:.1f} MB in memory), "
        f"sub-endings: {', '.join(subs) or 'none'}")
    cur = np.zeros((2, n_idx), np.int16)
    legal = tbgen.init_table(cur, piece, nslots, ngr, gstart, gcnt, glist, radix)
    say(f"{end.name}: {legal:,} legal positions; mated or stalemated now: {int((cur == -1).sum()):,}")
    args = (piece, nslots, ngr, gstart, gcnt, glist, radix, nsl, off, size, subvals, cap_sub, cap_flip,
            cap_src)
    last = maxsub
    if method == "retro":
        trig = np.zeros((2, n_idx), np.int16)
        dirty = np.zeros((2, n_idx), np.uint8)
        last = max(maxsub, int(tbgen.capture_triggers(cur, trig, *args)))
        say(f"{end.name}: captures examined, the last one decides at pass {last} "
            f"[{time.perf_counter() - t0:.1f}s]")
    n = 1
    idle = 0
    examined_total = 0
    while True:
        if n > 32000:
            raise TablebaseError(f"{end.name}: DTM beyond the int16 range")
        if method == "retro":
            changed, examined = tbgen.retro_pass(n, cur, trig, dirty, *args)
        else:
            changed = tbgen.run_pass(n, cur, *args)
            examined = -1
        examined_total += max(examined, 0)
        seen = f", {examined:,} examined" if examined >= 0 else ""
        say(f"{end.name}: pass {n} ({'wins' if n % 2 else 'losses'} in {n}): {changed:,} positions{seen} "
            f"[{time.perf_counter() - t0:.1f}s]")
        idle = idle + 1 if changed == 0 else 0
        if idle >= 2 and n > last:
            break
        n += 1
    seconds = time.perf_counter() - t0
    header = {"ending": end.name, "scheme": SCHEME, "rules": RULES, "size": n_idx,
              "stats": statistics(cur), "seconds": round(seconds, 2), "passes": n, "method": method}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, values=cur, header=np.array(json.dumps(header)))
    os.replace(tmp, path)
    header["file_bytes"] = path.stat().st_size
    say(f"{end.name}: done in {seconds:.1f}s, {header['file_bytes']:,} bytes")
    return header


@dataclasses.dataclass
class ProbeResult:
    """A table's answer for a position: ``wdl`` for the side to move, ``dtm`` plies (None for a draw),
    the best moves (ICCS; the fastest mates, the longest resistance, or the drawing moves) and the ending."""

    wdl: str
    dtm: int | None
    best: list[str]
    ending: str

    def as_json(self) -> dict:
        """``{"wdl", "dtm", "best", "ending"}`` for JSON output."""
        return {"wdl": self.wdl, "dtm": self.dtm, "best": self.best, "ending": self.ending}


def _decode_value(v: int) -> tuple[str, int | None]:
    if v > 0:
        return "win", int(v)
    if v < 0:
        return "loss", int(-v - 1)
    return "draw", None


class Tablebase:
    """Tables in ``directory`` (default :func:`default_dir`), loaded on first use and kept.

    :meth:`value` returns the raw code of a position (None outside the tables);
    :meth:`probe` adds WDL, DTM and the best moves.
    """

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_dir()
        self._tables: dict[str, np.ndarray | None] = {}

    def available(self) -> list[str]:
        """Names of the table files present."""
        if not self.directory.is_dir():
            return []
        return sorted(p.name[:-4] for p in self.directory.glob("K*K*.npz") if ".tmp" not in p.name)

    def _values(self, name: str) -> np.ndarray | None:
        if name not in self._tables:
            try:
                self._tables[name] = load_values(self.directory, name)[0]
            except TablebaseError:
                if table_path(self.directory, name).exists():
                    raise
                self._tables[name] = None
        return self._tables[name]

    @staticmethod
    def material(board) -> tuple[str, bool] | None:
        """``(ending, flipped)`` of a core board, or ``None`` when no attacking piece is left (a draw).

        Raises :class:`TablebaseError` when the material has more than 8 pieces.
        """
        red, black = [], []
        for sq in range(90):
            p = board.squares[sq]
            if p and abs(p) != 1:
                (red if p > 0 else black).append(_LETTER[abs(p)])
        if len(red) + len(black) > 6:
            raise TablebaseError("more than 8 pieces on the board: no table")
        return canonical("".join(red), "".join(black))

    def value(self, board) -> tuple[int, str] | None:
        """``(code, ending)`` for ``board`` (side to move's view), ``(0, '')`` when no mating material
        is left, ``None`` when its table is absent."""
        try:
            mat = self.material(board)
        except TablebaseError:
            return None
        if mat is None:
            return 0, ""
        name, flipped = mat
        values = self._values(name)
        if values is None:
            return None
        end, slots = _parsed(name)
        side = 0 if board.turn else 1
        by_code: dict[int, list[int]] = {}
        for sq in range(90):
            p = board.squares[sq]
            if p:
                q = -p if flipped else p
                by_code.setdefault(q, []).append(((9 - sq // 9) * 9 + sq % 9) if flipped else sq)
        sqs = [by_code[c].pop() for c in slots]
        if flipped:
            side = 1 - side
        return int(values[side, encode_py(end, sqs)]), name

    def probe(self, board) -> ProbeResult | None:
        """WDL, DTM and best moves of a core :class:`~xiangqi.core.board.Board`; None outside the tables."""
        got = self.value(board)
        if got is None or got[1] == "":
            return None
        code, name = got
        if code == INVALID:
            raise TablebaseError("illegal position (the side not to move is in check or the kings face)")
        wdl, dtm = _decode_value(code)
        best: list[str] = []
        scored = []
        for m in list(board.legal_moves):
            board.push(m, validate=False)
            try:
                child = self.value(board)
            finally:
                board.pop()
            if child is None:
                continue
            scored.append((m.iccs(), child[0]))
        if wdl == "win":
            best = [m for m, v in scored if v == -code]
        elif wdl == "loss":
            best = [m for m, v in scored if v == dtm - 1] if dtm else []
        else:
            best = [m for m, v in scored if v == 0]
        return ProbeResult(wdl, dtm, best, name)


def _position_key(board) -> str:
    return " ".join(board.fen().split()[:2])


def perpetual_check_draws(directory: Path | str, name: str) -> list[str]:
    """Positions the pure-mate table ``name`` calls drawn although the draw rests on one-sided
    perpetual check, which the rules (RULES.md, 长将) punish as a loss for the checker.

    Returned as FEN board + side to move fields, sorted. A position is listed when
    every drawing move of the side to move gives check, and after each of them the
    opponent has a reply that gives no check and leads back to a listed position
    (a greatest fixpoint): the defender must check for ever or lose. Pure Python
    over the drawn positions with the core board; fine for tables with few draws
    (KRKN: 2,435 draws, about 10 s). Values that would change further back (a
    position that can force its way into a listed one) are not followed.
    """
    from xiangqi.core.board import Board, grid_board_fen
    from xiangqi.engine import tbgen

    base = Tablebase(directory)
    end = Ending.parse(name)
    values = load_values(Path(directory), end.name)[0]
    ng, gs, gc, gl, rd, _ = _layouts([end])
    sq = np.zeros(len(end.slots()), np.int64)
    letters = " kabnrcp"
    cand: dict[str, list[str]] = {}
    for side in (0, 1):
        for idx in np.flatnonzero(values[side] == 0):
            tbgen.decode(0, int(idx), sq, ng, gs, gc, gl, rd)
            grid: list[str | None] = [None] * 90
            for code, s in zip(end.slots(), sq, strict=True):
                grid[int(s)] = letters[abs(code)].upper() if code > 0 else letters[abs(code)]
            b = Board(f"{grid_board_fen(grid)} {'w' if side == 0 else 'b'} - - 0 1")
            drawing = []
            for m in list(b.legal_moves):
                check = b.gives_check(m)
                b.push(m, validate=False)
                if base.value(b)[0] == 0:
                    drawing.append((check, _position_key(b)))
                b.pop()
            if drawing and all(c for c, _ in drawing):
                cand[_position_key(b)] = [k for _, k in drawing]
    keep = set(cand)
    while True:
        drop = set()
        for key in keep:
            for q_key in cand[key]:
                q = Board(q_key + " - - 0 1")
                back = False
                for m in list(q.legal_moves):
                    if q.gives_check(m):
                        continue
                    q.push(m, validate=False)
                    back = _position_key(q) in keep
                    q.pop()
                    if back:
                        break
                if not back:
                    drop.add(key)
                    break
        if not drop:
            return sorted(keep)
        keep -= drop


def progress_to_stderr(msg: str) -> None:
    """Progress printer for the command line."""
    print(msg, file=sys.stderr, flush=True)


def pack_tables(directory: Path | str, budget_mb: int = 512) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The tables of ``directory`` packed for the search kernels: ``(tbv int16[:], tbd int64[T, W],
    names)`` (layout in :mod:`xiangqi.engine.tbgen`, ``tb_code``). Smallest tables first, as many as
    fit ``budget_mb`` megabytes of values; a damaged or foreign file is skipped. Empty arrays when
    there are none."""
    from xiangqi.engine import tbgen

    base = Tablebase(directory)
    names = sorted(base.available(), key=lambda n: (_safe_size(n), n))
    rows: list[np.ndarray] = []
    chunks: list[np.ndarray] = []
    kept: list[str] = []
    off = 0
    budget = budget_mb * 1024 * 1024
    for name in names:
        try:
            end = Ending.parse(name)
        except TablebaseError:
            continue
        if end.name != name or (off + 2 * end.size()) * 2 > budget:
            continue
        try:
            values, _ = load_values(base.directory, name)
        except TablebaseError:
            continue
        row = np.zeros(tbgen.TBD_WIDTH, np.int64)
        cr = np.zeros(8, np.int64)
        cb = np.zeros(8, np.int64)
        for p in end.red:
            cr[_TYPE[p]] += 1
        for p in end.black:
            cb[_TYPE[p]] += 1
        row[tbgen.TBD_KEY] = tbgen.material_key(cr, cb)
        row[tbgen.TBD_OFF] = off
        row[tbgen.TBD_N] = end.size()
        groups = end.groups()
        row[tbgen.TBD_NG] = len(groups)
        row[tbgen.TBD_NSLOTS] = len(end.slots())
        row[tbgen.TBD_SLOT:tbgen.TBD_SLOT + 15] = -1
        st = 0
        for g, (code, c, lst) in enumerate(groups):
            row[tbgen.TBD_SLOT + code + 7] = st
            b = tbgen.TBD_GROUP + 4 * g
            row[b:b + 4] = (st, c, lst, comb(int(tbgen.SQN[lst]), c))
            st += c
        rows.append(row)
        chunks.append(values.reshape(-1))
        kept.append(name)
        off += values.size
    if not rows:
        return np.zeros(1, np.int16), np.zeros((0, tbgen.TBD_WIDTH), np.int64), []
    return np.concatenate(chunks).astype(np.int16), np.stack(rows), kept


def _safe_size(name: str) -> int:
    try:
        return Ending.parse(name).size()
    except TablebaseError:
        return 1 << 62
