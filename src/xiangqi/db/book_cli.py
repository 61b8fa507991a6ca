"""The ``xiangqi book`` subcommands: ``build`` (from the games database) and ``probe`` (a position's book
moves), registered by :mod:`xiangqi.cli`. The parsers are built at import; numpy, SQLAlchemy and the
book modules are imported when a command runs.
"""

from __future__ import annotations

import argparse
import json
import sys

from xiangqi.db.cli import db_command

__all__ = ["register"]

# xiangqi.db.book.DEFAULT_MIN_GAMES / DEFAULT_MAX_PLY, written out so that building the parsers imports
# neither numpy nor the engine (tests/engine/test_book.py checks they agree)
DEFAULT_MIN_GAMES = 3
DEFAULT_MAX_PLY = 30


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``book`` with its ``build`` and ``probe`` subcommands to the CLI's subparsers."""
    bk = sub.add_parser("book", help="the opening book: build it from the games database, probe a position",
                        description="An opening book: for each position of the opening the moves masters "
                                    "played, with their number of games and score, in a sorted file read "
                                    "with numpy (memory-mapped). The engine uses it (UCI OwnBook/BookFile; "
                                    "the game's levels).")
    bsub = bk.add_subparsers(dest="book_command", metavar="{build,probe}", required=True)

    p = bsub.add_parser("build", help="build a book file from the games database",
                        description="Count, for every position of the first --max-ply plies of the games "
                                    "that start from the standard position, each move with its games and "
                                    "the side to move's score (mirrored positions merged); keep moves "
                                    "played in at least --min-games games. To rebuild the shipped book: "
                                    "import the CCPD master games and the WXF master files into a scratch "
                                    "database (see docs/BOOK.md), then build with the defaults into "
                                    "src/xiangqi/engine/data/openings.xqbook.")
    p.add_argument("--db", default=None,
                   help="database: an SQLAlchemy URL or an SQLite file path (default: games.db in "
                        "$XIANGQI_DATA_DIR or the user data dir)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the book file to write")
    p.add_argument("--min-games", type=int, default=DEFAULT_MIN_GAMES, metavar="N",
                   help=f"keep a move played in at least N games there (default {DEFAULT_MIN_GAMES})")
    p.add_argument("--max-ply", type=int, default=DEFAULT_MAX_PLY, metavar="P",
                   help=f"plies of each game to read (default {DEFAULT_MAX_PLY})")
    p.add_argument("--collection", default=None, help="only this collection's games (default: all)")
    p.add_argument("--source", default="", help="words for the book's header: where the games came from")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=db_command(cmd_book_build))

    p = bsub.add_parser("probe", help="print the book moves of a position",
                        description="The position is --fen (default: the start) after the ICCS MOVES. "
                                    "Prints each book move with its games, score and weight (the Wilson "
                                    "lower bound of the score), most played first.")
    p.add_argument("moves", nargs="*", metavar="MOVE", help="ICCS moves played from the position (h2e2 …)")
    p.add_argument("--fen", default=None, help="start position (default: the standard start)")
    p.add_argument("--book", default=None, metavar="FILE", help="book file (default: the shipped book)")
    p.add_argument("--json", action="store_true", help="print one JSON object per move per line")
    p.set_defaults(func=cmd_book_probe)


def cmd_book_build(args: argparse.Namespace) -> int:
    """``xiangqi book build``: write the book and print its counts."""
    from xiangqi.core.errors import XiangqiError
    from xiangqi.db.book import build_book
    from xiangqi.db.cli import open_db

    engine = open_db(args)
    try:
        stats = build_book(engine, args.output, min_games=args.min_games, max_ply=args.max_ply,
                           collection=args.collection, source=args.source, progress=not args.quiet)
    except ValueError as exc:
        raise XiangqiError(str(exc)) from None
    except OSError as exc:
        raise XiangqiError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"{args.output}: {stats.summary()}")
    return 0


def cmd_book_probe(args: argparse.Namespace) -> int:
    """``xiangqi book probe``: the book moves of a position, or ``(out of book)``."""
    from xiangqi.core.board import Board, Move
    from xiangqi.core.errors import IllegalMoveError, XiangqiError
    from xiangqi.core.notation import move_to_chinese
    from xiangqi.engine.book import default_book

    book = default_book(args.book)
    if book is None:
        raise XiangqiError("no book: the shipped book is missing; give one with --book FILE")
    from xiangqi.db.cli import fen_option

    board = Board(args.fen) if fen_option(args.fen, "--fen") is not None else Board()
    for i, text in enumerate(args.moves, 1):
        move = Move.from_iccs(text)
        if not board.is_legal(move):
            raise IllegalMoveError(f"move {i} ({text}) is illegal in {board.fen()}")
        board.push(move)
    found = book.probe(board)
    if not found:
        print("(out of book)", file=sys.stderr if args.json else sys.stdout)
        return 0
    total = sum(m.count for m in found)
    for m in found:
        if args.json:
            print(json.dumps({**m.as_dict(), "chinese": move_to_chinese(board, m.move)}, ensure_ascii=False))
            continue
        score = "  -  " if m.score is None else f"{100 * m.score:5.1f}%"
        share = 100 * m.count / total
        print(f"{m.iccs}  {move_to_chinese(board, m.move):<6}  {m.count:6d} games ({share:5.1f}%)"
              f"  score {score} of {m.scored}  weight {m.weight:.3f}")
    return 0
