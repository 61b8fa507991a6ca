"""The SPRT state of a match from its PGN (``xiangqi match --pgn``), e.g. of a match that was
stopped before a bound was reached.

    python tools/sprt_pgn.py match.pgn [part2.pgn ...] PLAYER ELO0 ELO1 [--alpha 0.05 --beta 0.05]
                             [--model trinomial]

Games are taken in file order (the match writes them in game order, so games 2k and 2k+1 are the
colour-swapped pair); PLAYER is A's name as in the Red/Black tags. Prints
:meth:`xiangqi.match.sprt.Sprt.summary`.
"""

from __future__ import annotations

import argparse
import sys

from xiangqi.match.sprt import Sprt, pgn_scores


def scores(text: str, player: str) -> list[float]:
    """PLAYER's score in each game of the PGN ``text``, in order (:func:`xiangqi.match.sprt.pgn_scores`)."""
    return pgn_scores(text, player)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pgn", nargs="+", help="PGN files of the match, in order (its parts)")
    ap.add_argument("player")
    ap.add_argument("elo0", type=float)
    ap.add_argument("elo1", type=float)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--model", choices=("pentanomial", "trinomial"), default="pentanomial")
    args = ap.parse_args()
    games = []
    for path in args.pgn:  # several files: the parts of one match, in order
        with open(path, encoding="utf-8") as fh:
            part = scores(fh.read(), args.player)
        if len(part) % 2 and args.model == "pentanomial":
            print(f"{path}: {len(part)} games, the last one's pair is incomplete and is left out",
                  file=sys.stderr)
            part = part[:-1]
        games += part
    s = Sprt(args.elo0, args.elo1, args.alpha, args.beta, args.model)
    stopped = None
    for i, g in enumerate(games):
        s.add(g)
        if stopped is None and s.status() != "continue" and (args.model == "trinomial" or i % 2 == 1):
            stopped = i + 1
    print(f"{len(games)} games of {args.player}" + (f"; a bound was first crossed after game {stopped}"
                                                   if stopped else ""))
    print(s.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
