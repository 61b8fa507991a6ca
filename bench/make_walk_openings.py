"""Match openings that share nothing with the engine's book or training data: seeded random walks.

    PYTHONPATH=src python bench/make_walk_openings.py --out bench/openings-walk-8ply.tsv

Each candidate is a random walk of ``--plies`` legal moves from the start position, drawn with a
fixed seed and skewed toward plausible moves (:func:`move_weight`: rooks, horses, cannons and
pawns are moved more often than the king, advisors and elephants; a retreat and a second move of
the piece just moved are less likely; no move that leaves a piece capturable for free is
preferred over a safe one). A candidate is kept when

* Fairy-Stockfish (``--fsf``, ``UCI_Variant xiangqi``, one thread, 64 MB) scores its end position
  within ``--max-cp`` centipawns (default 60) at ``--depth`` plies (default 12): a balanced start,
  judged by a peer, not by our evaluation;
* its end position, and its left-right mirror, is **not** in the shipped opening book
  (``engine/data/openings.xqbook``: no book moves there) and its last move is not a book move of
  the position before it;
* its end position is not that of an opening of ``bench/openings-book-8ply.tsv`` nor of the match
  tool's 16 built-in openings (mirrors included);
* its end position does not occur (mirrors included) within the first ``--corpus-plies`` plies of
  any master game of the CCPD collection (``--corpus``), a superset of the network's and the Texel
  tables' training positions (quiet positions from ply 10 of those games); ``--corpus ''`` skips
  this check (the file then says so);
* it is not a transposition or mirror of an opening kept before.

The file has one ``name<TAB>ICCS moves<TAB># fsf cp`` line per opening (``xiangqi match
--openings-file`` reads it) and a header of ``#`` lines that records the seed, the settings and
the counts of every filter. The same seed, settings and Fairy-Stockfish build give the same file.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from xiangqi.core.board import Board, Move
from xiangqi.engine.book import default_book, position_keys

ROOT = Path(__file__).resolve().parent.parent
CORPUS = "/work/shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz"
#: Relative weights of a move by the moving piece type (king, advisor, elephant, horse, rook, cannon, pawn).
TYPE_WEIGHT = {1: 0.15, 2: 0.4, 3: 0.6, 4: 2.0, 5: 2.0, 6: 2.0, 7: 1.2}
#: Rough piece values for the hanging-piece test (centipawns).
VALUE = {1: 10000, 2: 200, 3: 200, 4: 400, 5: 900, 6: 450, 7: 100}


def canonical(board: Board) -> int:
    """The position's book key merged with its mirror's (as the book stores positions)."""
    return min(position_keys(board.squares, board.turn))


def _hangs(board: Board, m: Move) -> bool:
    """True when after ``m`` the opponent can capture a piece of the mover that is worth more than the
    capturer, or that the mover cannot take back (a one-ply look, enough to skew a random walk)."""
    board.push(m, validate=False)
    try:
        for r in board.legal_moves:
            victim = board.squares[r.to_square]
            if not victim:
                continue
            attacker = abs(board.squares[r.from_square])
            if VALUE[abs(victim)] > VALUE[attacker]:
                return True
            board.push(r, validate=False)
            retake = any(x.to_square == r.to_square for x in board.legal_moves)
            board.pop()
            if not retake:
                return True
        return False
    finally:
        board.pop()


def move_weight(board: Board, m: Move, last_to: int | None) -> float:
    """The walk's weight of legal move ``m`` (see the module docstring); ``last_to`` is where the side
    to move's previous move went (None at its first move)."""
    piece = board.squares[m.from_square]
    w = TYPE_WEIGHT[abs(piece)]
    fr, tr = m.from_square // 9, m.to_square // 9
    forward = tr - fr if piece > 0 else fr - tr
    if forward < 0:
        w *= 0.4
    if last_to is not None and m.from_square == last_to:
        w *= 0.3
    if _hangs(board, m):
        w *= 0.05
    return w


def walk(rng: random.Random, plies: int) -> list[Move] | None:
    """One seeded random walk of ``plies`` moves from the start (None if a side runs out of moves)."""
    b = Board()
    line: list[Move] = []
    last: dict[bool, int | None] = {True: None, False: None}
    for _ in range(plies):
        moves = list(b.legal_moves)
        if not moves:
            return None
        weights = [move_weight(b, m, last[b.turn]) for m in moves]
        m = rng.choices(moves, weights=weights)[0]
        last[b.turn] = m.to_square
        b.push(m)
        line.append(m)
    return line


def corpus_keys(path: str, plies: int) -> tuple[set[int], int]:
    """Canonical keys of every position in the first ``plies`` plies of the CCPD master games at
    ``path``, and the number of games read."""
    sys.path.insert(0, str(ROOT / "tools"))
    from corpus import read_games

    keys: set[int] = set()
    n = 0
    for _name, games in read_games(path, "/大師對局/"):
        for g in games:
            b = Board(g.board().fen()) if hasattr(g, "board") else Board()
            n += 1
            keys.add(canonical(b))
            for k, mv in enumerate(g.mainline_moves()):
                if k >= plies:
                    break
                try:
                    b.push(mv)
                except Exception:  # noqa: BLE001 - a broken record: keep the positions read so far
                    break
                keys.add(canonical(b))
    return keys, n


def fsf_score(engine, board: Board, depth: int) -> int | None:
    """Fairy-Stockfish's score of ``board`` in centipawns for the side to move (None for a mate score)."""
    from xiangqi.engine import Limit

    info = engine.analyse(board, Limit(depth=depth), timeout=120)
    score = info.get("score")
    if score is None or score.cp is None:
        return None
    return int(score.cp)


def main(argv: list[str] | None = None) -> int:
    """Write the openings file; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the .tsv to write")
    ap.add_argument("--count", type=int, default=60, help="openings to keep")
    ap.add_argument("--plies", type=int, default=8)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--max-cp", type=int, default=60, help="largest |Fairy-Stockfish score| kept")
    ap.add_argument("--depth", type=int, default=12, help="Fairy-Stockfish's search depth")
    ap.add_argument("--fsf", default="/usr/games/fairy-stockfish")
    ap.add_argument("--corpus", default=CORPUS, help="CCPD archive ('' to skip the master-game check)")
    ap.add_argument("--corpus-plies", type=int, default=40)
    ap.add_argument("--max-tries", type=int, default=5000)
    args = ap.parse_args(argv)

    from xiangqi.engine.uci.client import SimpleEngine
    from xiangqi.match.runner import OPENINGS, opening_board, read_openings

    t0 = time.time()
    book = default_book()
    if book is None:
        print("no opening book", file=sys.stderr)
        return 1
    banned = {canonical(opening_board(moves)) for _n, moves in OPENINGS}
    book_lines = read_openings(ROOT / "bench/openings-book-8ply.tsv")
    banned |= {canonical(opening_board(moves)) for _n, moves in book_lines}
    master: set[int] = set()
    games = 0
    if args.corpus:
        master, games = corpus_keys(args.corpus, args.corpus_plies)
        print(f"{games} master games, {len(master)} positions of their first {args.corpus_plies} plies "
              f"({time.time() - t0:.0f} s)", file=sys.stderr)
    rng = random.Random(args.seed)
    counts = dict(tries=0, dead=0, book=0, book_tsv=0, master=0, repeat=0, unbalanced=0)
    kept: list[tuple[list[Move], int]] = []
    seen: set[int] = set()
    fsf = SimpleEngine.popen(args.fsf, options={"Threads": 1, "Hash": 64})
    try:
        while len(kept) < args.count and counts["tries"] < args.max_tries:
            counts["tries"] += 1
            line = walk(rng, args.plies)
            if line is None:
                counts["dead"] += 1
                continue
            b = Board()
            for m in line[:-1]:
                b.push(m)
            before = b.copy()
            b.push(line[-1])
            key = canonical(b)
            if key in seen:
                counts["repeat"] += 1
                continue
            if book.probe(b) or any(bm.move == line[-1] for bm in book.probe(before)):
                counts["book"] += 1
                continue
            if key in banned:
                counts["book_tsv"] += 1
                continue
            if key in master:
                counts["master"] += 1
                continue
            cp = fsf_score(fsf, b, args.depth)
            if cp is None or abs(cp) >= args.max_cp:
                counts["unbalanced"] += 1
                continue
            seen.add(key)
            kept.append((line, cp))
            print(f"{len(kept):3d} {' '.join(m.iccs() for m in line)}  {cp:+d}", file=sys.stderr)
    finally:
        fsf.quit()
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(f"# {len(kept)} openings of {args.plies} plies: seeded random walks (seed {args.seed}) "
                 "over legal "
                 f"moves, written by bench/make_walk_openings.py\n")
        fh.write(f"# kept when Fairy-Stockfish ({args.fsf}) at depth {args.depth} scores "
                 f"|cp| < {args.max_cp}, "
                 "the position (or its mirror) is not in engine/data/openings.xqbook, its last move not a "
                 "book move,\n")
        master_text = (f"within the first {args.corpus_plies} plies of any of the {games} CCPD master games"
                       if args.corpus else "(master-game check skipped)")
        fh.write("# not an opening of bench/openings-book-8ply.tsv or the 16 built-in ones, and not "
                 f"{master_text}.\n")
        fh.write("# tries {tries}; no move {dead}; in the book {book}; in openings-book-8ply/built-in "
                 "{book_tsv}; "
                 "in master games {master}; repeated {repeat}; unbalanced {unbalanced}\n".format(**counts))
        fh.write("# name<TAB>ICCS moves<TAB># Fairy-Stockfish cp for the side to move\n")
        for k, (line, cp) in enumerate(kept, 1):
            fh.write(f"W{k:02d}\t{' '.join(m.iccs() for m in line)}\t# {cp:+d}\n")
    print(f"{len(kept)} openings in {args.out} ({time.time() - t0:.0f} s); {counts}", file=sys.stderr)
    return 0 if len(kept) == args.count else 1


if __name__ == "__main__":
    raise SystemExit(main())
