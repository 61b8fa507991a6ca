"""Quiet, result-labelled positions from the CCPD master games, for Texel tuning (tools/texel_tune.py).

Data source: the Chinese Chess Practical Dataset (CCPD, CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen
(2026)"), folder ``Dataset/對局/大師對局`` of ``../shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz``
(Big5 Chinese PGN, one game per file, parsed by :mod:`xiangqi.core.records`).

One command, resumable::

    nice -n 19 python tools/texel_data.py --out /work/tune-data

The master-game files are taken in archive order in chunks of ``--chunk`` files (default 2000); each
finished chunk is written as ``chunk-NNNN.npz`` (written to a temporary name first, then renamed), and
a run that finds a chunk already on disk skips it, so an interrupted run goes on where it stopped.

Per game: kept when it has a 1-0 / 0-1 / 1/2-1/2 result, no reading problem and at least 30 plies;
a game whose move sequence was already seen (the collection files many games twice: under each
player, the tournament and the opening) is dropped, the earlier chunks' games included. Per
position, from ply ``--min-ply`` (default 10) on: kept when the side to move is not in check and the
engine's capture-only quiescence search (:func:`xiangqi.engine.search.qsearch`, full window) returns
the static evaluation itself, i.e. no capture wins anything by the engine's own judgement: the
position is its own qsearch leaf, so the evaluation there is what the search would use.

Arrays of a chunk: ``bd`` int8 (n, 90) board codes (:mod:`xiangqi.engine.movegen`), ``side`` int8
(0 Red, 1 Black to move), ``result`` float32 (Red's score 1 / 0.5 / 0), ``game`` int64 (a 63-bit hash
of the game's moves: the train/validation split is by game), ``ply`` int16; ``games`` int64, the
hashes of the chunk's games (for the duplicate test of later chunks).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/corpus.py, also when loaded by path
from corpus import CORPUS, RESULTS, read_games  # noqa: E402

FOLDER = "/大師對局/"
MIN_PLIES = 30


def game_hash(iccs: list[str]) -> int:
    """63-bit hash of a move sequence (ICCS texts), the game's identity in the data."""
    h = hashlib.blake2b(" ".join(iccs).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") & ((1 << 63) - 1)


class QuietTest:
    """``quiet(board)``: not in check and capture-only qsearch == static eval (see the module text)."""

    def __init__(self) -> None:
        from xiangqi.engine import consts as K
        from xiangqi.engine.evaluate import evaluate, material_state
        from xiangqi.engine.movegen import board_arrays, king_attacked
        from xiangqi.engine.search import qsearch
        from xiangqi.engine.tt import key_of

        self.K, self.evaluate, self.material_state = K, evaluate, material_state
        self.board_arrays, self.king_attacked, self.qsearch, self.key_of = (board_arrays, king_attacked,
                                                                           qsearch, key_of)
        self.rk = np.zeros(K.HISTORY, np.int64)
        self.rf = np.zeros(K.HISTORY, np.int64)
        self.mbuf = np.zeros((K.MAX_PLY, K.MAX_MOVES), np.int64)
        self.sbuf = np.zeros((K.MAX_PLY, K.MAX_MOVES), np.int64)
        self.ctl = np.zeros(16, np.int64)

    def __call__(self, board) -> tuple[bool, np.ndarray, int]:
        """``(quiet, bd, side)`` for a core Board."""
        K = self.K
        bd, ks, side = self.board_arrays(board)
        if self.king_attacked(bd, ks[side], side):
            return False, bd, side
        mg, eg, ph = self.material_state(bd)
        st = np.zeros(8, np.int64)
        st[K.S_SIDE], st[K.S_MG], st[K.S_EG], st[K.S_PH] = side, mg, eg, ph
        st[K.S_KEY] = self.key_of(bd, side)
        st[K.S_HP] = 0
        self.rk[0] = st[K.S_KEY]
        self.rf[0] = 2
        self.ctl[:] = 0
        stand = self.evaluate(bd, ks, side, mg, eg, ph)
        q = self.qsearch(bd, ks, st, self.rk, self.rf, self.mbuf, self.sbuf, self.ctl, -K.INF, K.INF, 0, 0)
        return bool(q == stand), bd, side


def _chunk_path(out: Path, k: int) -> Path:
    return out / f"chunk-{k:04d}.npz"


def generate(corpus: str, out: Path, chunk: int, min_ply: int, limit_chunks: int | None) -> None:
    """Write every missing chunk (module docstring); prints one line per chunk."""
    out.mkdir(parents=True, exist_ok=True)
    seen: set[int] = set()
    for p in sorted(out.glob("chunk-*.npz")):
        with np.load(p) as z:
            seen.update(int(x) for x in z["games"])
    quiet = QuietTest()
    t0 = time.time()
    k = -1
    in_chunk = chunk  # files read into the current chunk
    buf: dict[str, list] = {}
    skipping = False

    def flush() -> None:
        if skipping or k < 0:
            return
        path = _chunk_path(out, k)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, bd=np.array(buf["bd"], np.int8).reshape(-1, 90), side=np.array(buf["side"], np.int8),
                 result=np.array(buf["result"], np.float32), game=np.array(buf["game"], np.int64),
                 ply=np.array(buf["ply"], np.int16), games=np.array(buf["games"], np.int64))
        os.replace(tmp, path)
        print(f"chunk {k}: {len(buf['games'])} new games, {len(buf['side'])} positions "
              f"({time.time() - t0:.0f}s)", flush=True)

    stopped = False

    def admit(_name: str) -> bool:
        """Chunk bookkeeping per game file (asked before it is read): False for a file of a chunk
        already on disk, or once ``limit_chunks`` chunks are done."""
        nonlocal k, in_chunk, skipping, buf, stopped
        if stopped:
            return False
        if in_chunk == chunk:
            flush()
            k += 1
            in_chunk = 0
            if limit_chunks is not None and k >= limit_chunks:
                stopped = True
                return False
            skipping = _chunk_path(out, k).exists()
            buf = {"bd": [], "side": [], "result": [], "game": [], "ply": [], "games": []}
        in_chunk += 1
        return not skipping

    for _name, recs in read_games(corpus, FOLDER, keep=admit):
        for g in recs:
            res = RESULTS.get(g.headers.get("Result", ""))
            if res is None or g.errors:
                continue
            moves = g.mainline_moves()
            if len(moves) < MIN_PLIES:
                continue
            gh = game_hash([m.iccs() for m in moves])
            if gh in seen:
                continue
            b = g.board()
            rows = []
            ok = True
            for ply, m in enumerate(moves):
                if not b.is_legal(m):
                    ok = False
                    break
                b.push(m, validate=False)
                if ply + 1 >= min_ply:
                    q, bd, side = quiet(b)
                    if q:
                        rows.append((bd, side, ply + 1))
            if not ok:
                continue
            seen.add(gh)
            buf["games"].append(gh)
            for bd, side, ply in rows:
                buf["bd"].append(bd)
                buf["side"].append(side)
                buf["result"].append(res)
                buf["game"].append(gh)
                buf["ply"].append(ply)
    if not stopped:
        flush()


def load(out: str | Path) -> dict[str, np.ndarray]:
    """All chunks in ``out`` concatenated: ``bd``, ``side``, ``result``, ``game``, ``ply``."""
    parts = sorted(Path(out).glob("chunk-[0-9][0-9][0-9][0-9].npz"))
    if not parts:
        raise SystemExit(f"no chunk-*.npz in {out}: run tools/texel_data.py --out {out} first")
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("bd", "side", "result", "game", "ply")}
    for p in parts:
        with np.load(p) as z:
            for k in cols:
                cols[k].append(z[k])
    return {k: np.concatenate(v) for k, v in cols.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=CORPUS, help="the CCPD .tar.gz (default: %(default)s)")
    ap.add_argument("--out", default="/work/tune-data", help="chunk directory (default: %(default)s)")
    ap.add_argument("--chunk", type=int, default=2000, help="master-game files per chunk")
    ap.add_argument("--min-ply", type=int, default=10, help="first ply whose position is used")
    ap.add_argument("--chunks", type=int, default=None, help="stop after this many chunks (a test run)")
    args = ap.parse_args()
    generate(args.corpus, Path(args.out), args.chunk, args.min_ply, args.chunks)


if __name__ == "__main__":
    main()
