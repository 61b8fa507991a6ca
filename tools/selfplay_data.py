"""Training positions from where the engine plays: self-play from random-walk openings, search-labelled.

One command, resumable::

    nice -n 19 python tools/selfplay_data.py --out /work/selfplay-data --chunks 100

Chunk ``k`` (``chunk-NNNN.npz``) holds the positions of ``--games`` self-play games, each started from a
seeded random walk of ``--plies`` moves (:func:`bench.make_walk_openings.walk`, seed ``--seed`` + k: the
same moves skewed to plausible ones as the outside-measurement openings, but not filtered by a peer,
so the games cover unbalanced starts too). The engine (this checkout's, full strength, the default
evaluation) plays both sides at ``--nodes`` nodes per move, the game ended by our referee or after
``--max-plies``. Every position from ply ``--min-ply`` on that is quiet by
:class:`tools.texel_data.QuietTest` (not in check, its own capture-only quiescence leaf) is searched
again to ``--label-depth`` plies with a fresh hash: that score (centipawns for the side to move, mates
as ±``MATE_CP``) is its label, with the game's result. A chunk is written when complete (temporary
name, then renamed); a rerun skips the chunks on disk, so an interrupted run goes on where it stopped.

Arrays of a chunk: those of ``tools/texel_data.py`` (``bd`` int8 (n, 90), ``side`` int8, ``result``
float32 for Red, ``game`` int64 hash of the game's moves, ``ply`` int16, ``games`` int64) plus
``score`` int32 (the search label, side to move) and ``depth`` int16 (the depth it reached), so
``tools/texel_data.load`` reads them as it reads the master-game chunks.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

from texel_data import QuietTest, game_hash  # noqa: E402

MATE_CP = 20000
RESULT_FOR_RED = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def play_game(engine, opening, nodes: int, max_plies: int):
    """Self-play from the board ``opening``; returns ``(board, result for Red)``."""
    from xiangqi.engine import Limit

    b = opening
    engine.new_game()
    while len(b.move_stack) < max_plies:
        out = b.outcome()
        if out is not None:
            return b, RESULT_FOR_RED[out.result()]
        res = engine.search(b, Limit(nodes=nodes))
        if res.move is None:
            break
        b.push(res.move)
    out = b.outcome()
    if out is not None:
        return b, RESULT_FOR_RED[out.result()]
    if not list(b.legal_moves):
        return b, 0.0 if b.turn else 1.0
    return b, 0.5


def label(engine, board, depth: int) -> tuple[int, int]:
    """``(score, depth reached)`` of a ``depth``-ply search of ``board`` with a fresh hash."""
    from xiangqi.engine import Limit

    engine.new_game()
    res = engine.search(board, Limit(depth=depth))
    if res.mate is not None:
        return (MATE_CP if res.mate > 0 else -MATE_CP), res.depth
    return int(res.score_cp or 0), res.depth


def make_chunk(k: int, args, engine, labeller, quiet) -> dict[str, np.ndarray]:
    """The arrays of chunk ``k`` (module docstring)."""
    from make_walk_openings import walk

    from xiangqi.core.board import Board

    rng = random.Random(args.seed + k)
    keys = ("bd", "side", "result", "game", "ply", "games", "score", "depth")
    buf: dict[str, list] = {key: [] for key in keys}
    for _ in range(args.games):
        line = walk(rng, args.plies)
        if line is None:
            continue
        b = Board()
        for m in line:
            b.push(m)
        final, result = play_game(engine, b, args.nodes, args.max_plies)
        moves = list(final.move_stack)
        gh = game_hash([m.iccs() for m in moves])
        buf["games"].append(gh)
        replay = Board()
        for ply, m in enumerate(moves, 1):
            replay.push(m, validate=False)
            if ply < args.min_ply or replay.outcome() is not None:
                continue
            q, bd, side = quiet(replay)
            if not q:
                continue
            score, depth = label(labeller, replay, args.label_depth)
            buf["bd"].append(bd)
            buf["side"].append(side)
            buf["result"].append(result)
            buf["game"].append(gh)
            buf["ply"].append(ply)
            buf["score"].append(score)
            buf["depth"].append(depth)
    return {"bd": np.array(buf["bd"], np.int8).reshape(-1, 90), "side": np.array(buf["side"], np.int8),
            "result": np.array(buf["result"], np.float32), "game": np.array(buf["game"], np.int64),
            "ply": np.array(buf["ply"], np.int16), "games": np.array(buf["games"], np.int64),
            "score": np.array(buf["score"], np.int32), "depth": np.array(buf["depth"], np.int16)}


def main(argv: list[str] | None = None) -> int:
    """Write the missing chunks; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="chunk directory")
    ap.add_argument("--chunks", type=int, default=100, help="chunks to have on disk when done")
    ap.add_argument("--games", type=int, default=20, help="self-play games per chunk")
    ap.add_argument("--seed", type=int, default=27_000)
    ap.add_argument("--plies", type=int, default=8, help="random-walk plies of each opening")
    ap.add_argument("--nodes", type=int, default=20_000, help="nodes per self-play move")
    ap.add_argument("--label-depth", type=int, default=9, help="depth of the labelling search")
    ap.add_argument("--min-ply", type=int, default=10)
    ap.add_argument("--max-plies", type=int, default=300)
    args = ap.parse_args(argv)

    from xiangqi.engine import Engine

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    engine, labeller = Engine(hash_mb=16), Engine(hash_mb=16)
    quiet = QuietTest()
    t0 = time.time()
    for k in range(args.chunks):
        path = out / f"chunk-{k:04d}.npz"
        if path.exists():
            continue
        arrays = make_chunk(k, args, engine, labeller, quiet)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
        print(f"chunk {k}: {len(arrays['games'])} games, {len(arrays['side'])} positions "
              f"({time.time() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
