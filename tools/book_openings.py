"""A larger set of balanced match openings from the shipped opening book (master games).

    python tools/book_openings.py --plies 8 --count 60 --out bench/openings-book-8ply.tsv

Walks the book (``engine/data/openings.xqbook``, built from master games) from the start position
along every move played in at least ``--min-games`` games, to ``--plies`` plies, and keeps the
end positions that

* are still in the book with at least ``--min-games`` games (the line is played, not invented),
* are balanced by the masters' results: the side to move scored between ``--low`` and ``--high``
  over the games that reached the position (draws ½),
* are not a left-right mirror of another kept position (the book merges mirrors: the two are
  one opening), and are not a position of :data:`xiangqi.match.runner.OPENINGS` (the match
  tool's own 16 starts, ≤ 7 plies).

The most played ``--count`` of them are written as ``name<TAB>ICCS moves`` lines, the name being
the ECCO code and name of the line (``xiangqi.study.ecco``) and a number, for ``xiangqi match
--openings-file``. Used for matches that must not replay the 16 built-in openings (an SPRT
continued past its first games, peer matches of more than 32 games).
"""

from __future__ import annotations

import argparse
import sys

from xiangqi.core.board import Board
from xiangqi.engine.book import default_book, position_keys
from xiangqi.match.runner import OPENINGS, opening_board


def canonical(board: Board) -> int:
    """The position's key merged with its mirror's (as the book stores it)."""
    return min(position_keys(board.squares, board.turn))


def walk(book, board: Board, line: list[str], plies: int, min_games: int, out: list) -> None:
    """Depth-first: every book line of ``plies`` plies whose moves each have >= ``min_games`` games;
    appends ``(games, score, line)`` for the end positions that are in the book."""
    moves = book.probe(board)
    if len(line) == plies:
        games = sum(m.count for m in moves)
        scored = sum(m.scored for m in moves)
        if games >= min_games and scored:
            score = sum((m.score or 0.0) * m.scored for m in moves) / scored
            out.append((games, score, list(line)))
        return
    for m in moves:
        if m.count < min_games:
            continue
        board.push(m.move)
        line.append(m.iccs)
        walk(book, board, line, plies, min_games, out)
        line.pop()
        board.pop()


def main(argv: list[str] | None = None) -> int:
    """Write the openings file; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plies", type=int, default=8)
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--min-games", type=int, default=20)
    ap.add_argument("--low", type=float, default=0.42, help="lowest score of the side to move")
    ap.add_argument("--high", type=float, default=0.58, help="highest score of the side to move")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    book = default_book()
    if book is None:
        print("no opening book", file=sys.stderr)
        return 1
    found: list = []
    walk(book, Board(), [], args.plies, args.min_games, found)
    builtin = {canonical(opening_board(moves)) for _name, moves in OPENINGS}
    from xiangqi.study import ecco

    kept, seen = [], set(builtin)
    for games, score, line in sorted(found, key=lambda t: (-t[0], t[2])):
        if not args.low <= score <= args.high:
            continue
        key = canonical(opening_board(" ".join(line)))
        if key in seen:
            continue
        seen.add(key)
        kept.append((games, score, line))
        if len(kept) == args.count:
            break
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(f"# {len(kept)} openings of {args.plies} plies from the opening book "
                 f"({book.header.get('games')} games), each move >= {args.min_games} games, "
                 f"side to move scoring {args.low}-{args.high};\n"
                 "# written by tools/book_openings.py. name<TAB>ICCS moves; the comment: games, score.\n")
        for i, (games, score, line) in enumerate(kept, 1):
            e = ecco.classify(line)
            name = f"{e.code} {e.name} #{i}" if e is not None else f"book #{i}"
            fh.write(f"{name}\t{' '.join(line)}\t# {games} games, {score:.3f}\n")
    print(f"{len(kept)} openings (of {len(found)} lines of {args.plies} plies) -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
