"""Command line: ``xiangqi play | serve | perft | ...``.

Each subcommand is a small function ``cmd_<name>(args) -> int``; the parser is
built in :func:`build_parser`. Errors in user input print one clear line on
stderr and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from xiangqi.core.board import STARTING_FEN, Board
from xiangqi.core.errors import XiangqiError


def cmd_perft(args: argparse.Namespace) -> int:
    """Print perft per root move (with --divide) and the total node count on the last line."""
    board = Board(args.fen)
    if args.depth < 0:
        raise XiangqiError("depth must be >= 0")
    if args.engine == "numba":
        from xiangqi.engine.movegen import perft as fast_perft

        total = fast_perft(board, args.depth)
    else:
        if args.divide and args.depth >= 1:
            total = 0
            for m in list(board.legal_moves):
                board.push(m, validate=False)
                n = board.perft(args.depth - 1)
                board.pop()
                print(f"{m.iccs()}: {n}")
                total += n
        else:
            total = board.perft(args.depth)
    print(total)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="xiangqi", description="Xiangqi (Chinese chess) tools and game")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("perft", help="count the leaf nodes of the legal move tree")
    p.add_argument("depth", type=int, help="depth in plies")
    p.add_argument("--fen", default=STARTING_FEN, help="start position (default: the standard start)")
    p.add_argument("--divide", action="store_true", help="also print the count under each root move")
    p.add_argument("--engine", choices=["core", "numba"], default="numba",
                   help="move generator: the Numba engine (default) or the pure-Python core")
    p.set_defaults(func=cmd_perft)

    # -- further subcommands are registered below this line --

    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``xiangqi`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except XiangqiError as exc:
        print(f"xiangqi {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
