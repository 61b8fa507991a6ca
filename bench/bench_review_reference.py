"""Review quality against a deeper reference: ``xiangqi analyse``'s marks compared with Fairy-Stockfish.

One command (the reference's evaluations are cached in ``bench/review_reference.json``, so a rerun
only times and scores our review)::

    PYTHONPATH=src nice -n 10 .venv/bin/python bench/bench_review_reference.py [--set tuning|heldout|all]
        [--depth N] [--deep N] [--confirm D] [--ref-depth 16] [--jobs 2]

**Games** (``bench/review_games.pgn``): master games of Hu Ronghua and Liu Dahua from the WXF
collection (``../shared/corpus/wxf-masters``, MIT, games from wxf.ca) that are *not* among the CCPD
master games the engine's evaluation was trained on (docs/NNUE.md, engine/data/EVAL-README.md:
the Texel tables and the network were fitted on CCPD ``對局/大師對局`` only). A WXF game is kept
only when neither its move list, nor its first 30 plies, nor any of its positions at plies
24, 28, … 120 occurs in any CCPD master game (``--select`` redoes the choice: it reads the whole
CCPD archive, a few minutes). Of those, games of 80–110 plies, a seeded sample (seed 29); the
first half is the **tuning** set (the review's constants were chosen on it), the second half the
**held-out** set (looked at only to report).

(The weak set, ``--games weak``, has its reference cached at depth 14 in
``bench/review_reference_weak.json`` and at depth 16 in ``bench/review_reference_weak_d16.json``:
``--ref-depth 16`` reads and fills the latter.)

**Reference**: Fairy-Stockfish (``/usr/games/fairy-stockfish``, ``UCI_Variant xiangqi``, 1 thread,
64 MB hash cleared before each position) at ``--ref-depth`` (16), each position searched with the
game's moves as history. A move's **reference loss** is the mover's evaluation before it minus after
it, both clamped to ±1000 cp (a mate counts 1000), as the review clamps its centipawn loss; a
**reference blunder** loses ≥ 300 cp that way.

Printed: (a) of the reference blunders, the share we mark mistake or blunder (? or ??); (b) of our
blunders (??), the share that are reference blunders; (c) Spearman's rank correlation of our drop
with the reference's loss over all moves; (d) seconds per 100 plies, wall and CPU (this process
and its children), since the machine is shared. No number is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GAMES = HERE / "review_games.pgn"
CACHE = HERE / "review_reference.json"
#: ``--games`` name → (games, reference cache). The weak set is bench/weak_games.py's.
GAME_SETS = {"masters": (GAMES, CACHE),
             "weak": (HERE / "review_games_weak.pgn", HERE / "review_reference_weak.json")}
CORPUS = HERE.parent.parent / "shared" / "corpus"
FAIRY = "/usr/games/fairy-stockfish"
BLUNDER_CP = 300
CLAMP_CP = 1000


# -- choosing the games -----------------------------------------------------------------------------

def _pos_key(board) -> str:
    f = " ".join(board.fen().split()[:2])
    return hashlib.blake2b(f.encode(), digest_size=8).hexdigest()


def _probe_plies(n: int) -> range:
    return range(24, min(n, 120) + 1, 4)


def select(corpus: Path, count: int, seed: int = 29) -> None:
    """Write ``bench/review_games.pgn``: ``count`` WXF master games unseen in CCPD (module docstring)."""
    sys.path.insert(0, str(HERE.parent / "tools"))
    from corpus import read_games
    from texel_data import game_hash

    from xiangqi.core.pgn import write_game
    from xiangqi.core.records import read_records

    full, prefix, positions = set(), set(), set()
    for _name, recs in read_games(str(corpus / "ccpd/CCPD-Dataset-original-big5.tar.gz"), "/大師對局/"):
        for g in recs:
            moves = g.mainline_moves()
            iccs = [m.iccs() for m in moves]
            full.add(game_hash(iccs))
            prefix.add(game_hash(iccs[:30]))
            b = g.board()
            want = set(_probe_plies(len(moves)))
            for ply, m in enumerate(moves, 1):
                if not b.is_legal(m):
                    break
                b.push(m, validate=False)
                if ply in want:
                    positions.add(_pos_key(b))
    print(f"CCPD master games: {len(full)} distinct move lists, {len(positions)} probe positions", flush=True)
    pool = []
    for fname in ("Hu_Ronghua_1391_UCI_games.pgn", "Liu_Dahua_1125_UCI_games.pgn"):
        for g in read_records(str(corpus / "wxf-masters" / fname)):
            moves = g.mainline_moves()
            iccs = [m.iccs() for m in moves]
            if g.errors or not 80 <= len(iccs) <= 110:
                continue
            if game_hash(iccs) in full or game_hash(iccs[:30]) in prefix:
                continue
            b = g.board()
            seen = False
            want = set(_probe_plies(len(moves)))
            for ply, m in enumerate(moves, 1):
                b.push(m)
                if ply in want and _pos_key(b) in positions:
                    seen = True
                    break
            if not seen and game_hash(iccs) not in {game_hash([m.iccs() for m in p.mainline_moves()])
                                                    for p in pool}:
                pool.append(g)
    print(f"WXF games of 80-110 plies unseen in CCPD: {len(pool)}", flush=True)
    random.Random(seed).shuffle(pool)
    chosen = pool[:count]
    with open(GAMES, "w", encoding="utf-8") as fh:  # where they come from: the module docstring
        for k, g in enumerate(chosen):
            g.headers["Set"] = "tuning" if k < count // 2 else "heldout"
            fh.write(write_game(g) + "\n")
    print(f"wrote {len(chosen)} games to {GAMES}")


# -- the reference ----------------------------------------------------------------------------------

def _lines(games):
    from xiangqi.study.review import _game_line

    return [_game_line(g) for g in games]


def _key(start: str, moves: list[str], i: int) -> str:
    return hashlib.blake2b((start + "|" + " ".join(moves[:i])).encode(), digest_size=10).hexdigest()


def load_cache() -> dict:
    """The cached reference evaluations: ``{"engine", "depth", "evals": {key: {"cp", "mate", "best"}}}``."""
    if CACHE.exists():
        return json.loads(CACHE.read_text())
    return {"engine": None, "depth": None, "evals": {}}


def save_cache(cache: dict) -> None:
    """Write ``cache``, merged with what another run may have written meanwhile (two reference runs,
    one per game set, can share the file)."""
    on_disk = load_cache()
    on_disk["evals"].update(cache["evals"])
    cache["evals"] = on_disk["evals"]
    tmp = CACHE.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(cache, sort_keys=True, indent=0))
    os.replace(tmp, CACHE)


def reference(games, depth: int, cache: dict, order: list[int] | None = None) -> None:
    """Fill ``cache`` with Fairy-Stockfish's evaluation (Red's side) of every position of ``games``
    (in the order of the indices ``order``, default all in turn), saving the file after each position
    (merged with what other runs wrote: several runs may fill one cache)."""
    from xiangqi.core.board import Board, Move
    from xiangqi.engine.api import Limit
    from xiangqi.engine.uci.client import SimpleEngine

    if cache["depth"] not in (None, depth):
        raise SystemExit(f"{CACHE} holds depth {cache['depth']}; remove it to use depth {depth}")
    cache["depth"] = depth
    with SimpleEngine.popen(FAIRY, "uci", options={"Threads": 1, "Hash": 64}) as eng:
        cache["engine"] = eng.id.get("name")
        lines = _lines(games)
        for gi in order if order is not None else range(len(lines)):
            start, moves = lines[gi]
            board = Board(start)
            t0 = time.perf_counter()
            fresh = 0
            for i in range(len(moves) + 1):
                if i:
                    board.push(Move.from_iccs(moves[i - 1]))
                k = _key(start, moves, i)
                if k in cache["evals"]:
                    continue
                out = board.outcome()
                if out is not None:
                    cp = 0 if out.winner is None else (10000 if out.winner else -10000)
                    cache["evals"][k] = {"cp": cp, "mate": None, "best": None}
                    save_cache(cache)  # (a finished game's last position: no search, but kept too)
                    continue
                eng.new_game()
                info = eng.analyse(board, Limit(depth=depth))
                sc = info["score"]
                sign = 1 if board.turn else -1
                if sc.mate is not None:
                    m = sign * sc.mate
                    cache["evals"][k] = {"cp": (10000 - abs(m)) * (1 if m > 0 else -1), "mate": m,
                                         "best": info["pv"][0].iccs() if info.get("pv") else None}
                else:
                    cache["evals"][k] = {"cp": sign * sc.cp, "mate": None,
                                         "best": info["pv"][0].iccs() if info.get("pv") else None}
                fresh += 1
                save_cache(cache)
            print(f"reference: game {gi + 1}/{len(games)}: {fresh} positions searched "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)


# -- scoring ----------------------------------------------------------------------------------------

def _clamp(cp: int) -> int:
    return max(-CLAMP_CP, min(CLAMP_CP, cp))


def ref_losses(start: str, moves: list[str], cache: dict) -> list[int]:
    """The reference's loss (clamped cp, the mover's view) of each move of the line."""
    ev = [cache["evals"][_key(start, moves, i)]["cp"] for i in range(len(moves) + 1)]
    red = start.split()[1] in ("w", "r")
    out = []
    for i in range(len(moves)):
        sign = 1 if (i % 2 == 0) == red else -1
        out.append(sign * (_clamp(ev[i]) - _clamp(ev[i + 1])))
    return out


def _ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else 0.0


def score(reviews, lines, cache: dict) -> dict:
    """The four numbers (module docstring) of ``reviews`` (GameReview) against the cached reference."""
    drops, losses = [], []
    ref_bl = marked = ours = confirmed = 0
    for r, (start, moves) in zip(reviews, lines, strict=True):
        for p, loss in zip(r.plies, ref_losses(start, moves, cache), strict=True):
            drops.append(p.drop)
            losses.append(loss)
            if loss >= BLUNDER_CP:
                ref_bl += 1
                marked += p.cls in ("mistake", "blunder")
            if p.cls == "blunder":
                ours += 1
                confirmed += loss >= BLUNDER_CP
    return {"plies": len(drops), "ref_blunders": ref_bl, "marked": marked, "ours": ours,
            "confirmed": confirmed, "recall": marked / ref_bl if ref_bl else float("nan"),
            "precision": confirmed / ours if ours else float("nan"), "spearman": spearman(drops, losses)}


def confirmed_reviews(reviews, lines, depth: int, second_from: int | None = None):
    """``reviews`` rebuilt with the confirmation (``study.review.confirm_line`` at ``depth``; the
    second-best search from a loss of ``second_from``, default the review's blunder threshold), per
    review ``{ply: the deeper clamped cp loss}`` of its candidates, and per review the confirmation
    itself (``{ply: (before, after, second)}``, PositionEval or None)."""
    from xiangqi.study.review import build_review, classify_confirmed, confirm_line

    out, losses, confs = [], [], []
    for r, (start, moves) in zip(reviews, lines, strict=True):
        conf = confirm_line(start, moves, r.evals(), depth, second_from=second_from)
        out.append(build_review(start, moves, r.evals(), limit=r.limit, headers=r.headers, errors=r.errors,
                                confirmed=conf))
        losses.append({i + 1: classify_confirmed(r.plies[i].color == "red", *c)[1] for i, c in conf.items()})
        confs.append({i + 1: c for i, c in conf.items()})
    return out, losses, confs


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (engine processes, workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=["tuning", "heldout", "all"], default="all")
    ap.add_argument("--depth", type=int, default=None, help="our review's depth (default: the review's)")
    ap.add_argument("--deep", type=int, default=None, help="our review's second-pass depth (default none)")
    ap.add_argument("--ref-depth", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--confirm", type=int, default=None, metavar="D",
                    help="confirm the candidate marks by a depth-D search (study.review.confirm_line)")
    ap.add_argument("--second-from", type=int, default=None, metavar="CP",
                    help="with --confirm: search the second-best move from this deeper loss (default: the "
                         "blunder threshold; lower for bench/fit_review_confirm.py's grid)")
    ap.add_argument("--select", type=int, metavar="N", default=0,
                    help="choose N new games from the corpora first (reads all of CCPD)")
    ap.add_argument("--corpus", default=str(CORPUS),
                    help="the shared corpus folder (ccpd/, wxf-masters/) for --select")
    ap.add_argument("--reference-only", action="store_true", help="fill the cache, do not review")
    ap.add_argument("--order", default=None, metavar="I,J,...",
                    help="with --reference-only: the games (0-based, within --set) to search, in this order")
    ap.add_argument("--engine", default=None, help="review with this engine command instead of ours")
    ap.add_argument("--dump", default=None, help="write our per-ply drops and the losses here (JSON)")
    ap.add_argument("--games", choices=sorted(GAME_SETS), default="masters",
                    help="the game set: masters (review_games.pgn) or weak (review_games_weak.pgn, "
                         "bench/weak_games.py), each with its own reference cache")
    args = ap.parse_args()
    global GAMES, CACHE
    GAMES, CACHE = GAME_SETS[args.games]
    if args.games == "weak" and args.ref_depth != 14:  # the weak set's first cache is depth 14
        CACHE = HERE / f"review_reference_weak_d{args.ref_depth}.json"
    if args.select and args.games != "masters":
        raise SystemExit("--select chooses master games: use it with --games masters")
    if args.select:
        select(Path(args.corpus), args.select)
    from xiangqi.core.records import read_records
    from xiangqi.engine import warmup
    from xiangqi.study.review import review_games

    games = [g for g in read_records(str(GAMES)) if args.set in ("all", g.headers.get("Set"))]
    cache = load_cache()
    reference(games, args.ref_depth, cache,
              [int(x) for x in args.order.split(",")] if args.order and args.reference_only else None)
    if args.reference_only:
        return
    lines = _lines(games)
    plies = sum(len(m) for _, m in lines)
    warmup(background=False)
    print(f"{len(games)} games ({args.set}), {plies} plies; reference {cache['engine']} depth "
          f"{cache['depth']}; load average {os.getloadavg()[0]:.1f}", flush=True)
    kw = {} if args.depth is None else {"depth": args.depth}
    if args.deep:
        kw["deep"] = args.deep
    if args.engine:
        from xiangqi.study.analyse import engine_command

        kw["engine"] = engine_command(args.engine)
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    reviews = list(review_games(games, jobs=args.jobs, **kw))
    deep_loss: list[dict] = [{} for _ in reviews]
    confs: list[dict] = [{} for _ in reviews]
    if args.confirm:
        reviews, deep_loss, confs = confirmed_reviews(reviews, lines, args.confirm, args.second_from)
    wall = time.perf_counter() - t0
    c1 = cpu_seconds()
    s = score(reviews, lines, cache)
    print(f"limit {reviews[0].limit}")
    print(f"(a) reference blunders (loss >= {BLUNDER_CP} cp) marked ? or ??: "
          f"{s['marked']}/{s['ref_blunders']} = {100 * s['recall']:.1f} %")
    print(f"(b) our ?? confirmed by the reference: {s['confirmed']}/{s['ours']} = "
          f"{100 * s['precision']:.1f} %")
    print(f"(c) rank correlation of our drop with the reference's loss: {s['spearman']:.3f}")
    print(f"(d) {100 * wall / plies:.1f} s wall, {100 * (c1 - c0) / plies:.1f} s CPU per 100 plies "
          f"(load average {os.getloadavg()[0]:.1f})")
    if args.dump:
        rows = []
        for gi, (r, dl, cf, (start, moves)) in enumerate(zip(reviews, deep_loss, confs, lines, strict=True)):
            for p, loss in zip(r.plies, ref_losses(start, moves, cache), strict=True):
                c = cf.get(p.ply)
                rows.append({"game": gi, "round": r.headers.get("Round"), "drop": p.drop, "cls": p.cls,
                             "cp_loss": p.cp_loss, "loss": loss, "ply": p.ply, "color": p.color,
                             "deep_loss": dl.get(p.ply), "before": p.before.to_dict(),
                             "after": p.after.to_dict(), "best": p.best == p.move,
                             "confirm": None if c is None
                             else [None if e is None else e.to_dict() for e in c]})
        Path(args.dump).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
