"""How our engine lost its games: the decisive mistake of each lost game, found and classified.

    PYTHONPATH=src python bench/postmortem_losses.py bench-out/outside-fairy-stockfish-200ms.pgn \\
        --player eng-base --engine ./eng-base --tc 0.2 --long 2.0

For every game of ``--player`` lost in the PGNs (``xiangqi match`` files):

1. Fairy-Stockfish (``--fsf``, depth ``--depth``) scores the position after every ply, from our side;
   **the decisive mistake** is our move after which its score fell most (ties: the first) among the
   moves played while the game was still open (its score above −250 cp for us before the move);
2. our engine (``--engine``, an engine command, e.g. the wrapper the match played) searches the
   position before that move at the match's time (``--tc`` seconds) and at ``--long`` seconds;
3. the loss is classified:

   * ``mate not seen``: after our move Fairy-Stockfish sees a mate against us (or the game ended in
     mate within 20 plies of it) while our engine, at the match's time, scored its move above
     −300 cp;
   * ``unstable``: searched again at the match's time it already chooses another move (the choice
     depended on the machine's load or the game's hash contents, not on a clear misjudgement);
   * ``horizon``: it chooses the same move at the match's time, another with ``--long`` seconds
     (more time finds it);
   * ``evaluation``: it plays the same move with ``--long`` seconds too (a misjudged position);
   * ``time``: the game was lost on time or by an engine failure (no analysis);
   * ``rules``: lost by a repetition ruling (perpetual check or chase), a separate kind.

Prints one line per lost game and the counts per class. Nothing is asserted (time-limited searches
on a shared machine): this is a diagnosis of a set of games, not a test.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys

from xiangqi.core.board import Board, Move

MATE_CP = 30000


def games_of(path: str) -> list[tuple[dict[str, str], list[str]]]:
    """``(tags, ICCS moves)`` of every game of a ``xiangqi match`` PGN (moves written as ICCS)."""
    text = open(path, encoding="utf-8").read()
    out = []
    for chunk in re.split(r"\n\s*\n(?=\[)", text):
        tags = dict(re.findall(r'^\[(\w+) "(.*)"\]', chunk, re.M))
        if not tags:
            continue
        body = re.sub(r"^\[.*\]\s*$", "", chunk, flags=re.M)
        body = re.sub(r"\{[^}]*\}", " ", body)
        tokens = (t.lower().replace("-", "") for t in body.split())
        moves = [t for t in tokens if re.fullmatch(r"[a-i][0-9][a-i][0-9]", t)]
        out.append((tags, moves))
    return out


def score_cp(info: dict, red_to_move: bool, for_red: bool) -> int | None:
    """An analysis score as centipawns for one side (mates as ±30000 minus the distance)."""
    s = info.get("score")
    if s is None:
        return None
    v = s.cp if s.cp is not None else (MATE_CP - abs(s.mate)) * (1 if s.mate > 0 else -1)
    return v if red_to_move == for_red else -v


def main(argv: list[str] | None = None) -> int:
    """Analyse the lost games; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pgn", nargs="+")
    ap.add_argument("--player", required=True, help="our engine's name in the PGNs")
    ap.add_argument("--engine", required=True, help="our engine's command (as the match played it)")
    ap.add_argument("--fsf", default="/usr/games/fairy-stockfish")
    ap.add_argument("--depth", type=int, default=11, help="Fairy-Stockfish's depth per position")
    ap.add_argument("--tc", type=float, default=0.2, help="the match's seconds per move")
    ap.add_argument("--long", type=float, default=2.0, help="the longer search's seconds")
    args = ap.parse_args(argv)

    from xiangqi.engine import Limit
    from xiangqi.engine.uci.client import SimpleEngine
    from xiangqi.engine.uci.commands import resolve_command

    fsf = SimpleEngine.popen(args.fsf, options={"Threads": 1, "Hash": 64})
    ours = SimpleEngine.popen(resolve_command(args.engine), timeout=600, options={"Hash": 64},
                              env={**os.environ, "XIANGQI_ENGINE_WAIT_READY": "1"})
    kinds: collections.Counter[str] = collections.Counter()
    try:
        for path in args.pgn:
            for tags, moves in games_of(path):
                res = tags.get("Result")
                we_red = tags.get("Red") == args.player
                if tags.get("Red") != args.player and tags.get("Black") != args.player:
                    continue
                if res not in ("1-0", "0-1") or (res == "1-0") == we_red:
                    continue
                why = tags.get("Termination", "")
                label = f"{os.path.basename(path)} round {tags.get('Round')} ({tags.get('Opening')}, " \
                        f"{'Red' if we_red else 'Black'}, {len(moves)} plies, {why})"
                if "time" in why or "sent no move" in why or "illegal" in why or "died" in why:
                    kinds["time"] += 1
                    print(f"time        {label}")
                    continue
                if "repetition" in why or "perpetual" in why:
                    kinds["rules"] += 1
                    print(f"rules       {label}")
                    continue
                b = Board()
                evals: list[int | None] = []
                boards = []
                for mv in moves:
                    boards.append(b.copy())
                    b.push(Move.from_iccs(mv))
                    if b.outcome() is not None or not list(b.legal_moves):
                        evals.append(-MATE_CP if b.turn == we_red else MATE_CP)
                        continue
                    info = fsf.analyse(b, Limit(depth=args.depth), timeout=120)
                    evals.append(score_cp(info, b.turn, we_red))
                prev = 0
                worst = None
                for i in range(len(moves)):
                    ev = evals[i]
                    # only while the game was still open (Fairy-Stockfish above -250 for us before the move)
                    if boards[i].turn == we_red and ev is not None and prev is not None and prev > -250:
                        drop = prev - ev
                        if worst is None or drop > worst[1]:
                            worst = (i, drop, prev, ev)
                    prev = ev if ev is not None else prev
                if worst is None:
                    kinds["unknown"] += 1
                    print(f"unknown     {label}")
                    continue
                i, drop, before, after = worst
                pos = boards[i]
                played = Move.from_iccs(moves[i])
                short = ours.play(pos, Limit(time=args.tc))
                ours_short = score_cp(short.info, pos.turn, we_red)
                long_ = ours.play(pos, Limit(time=args.long))
                mate_after = after is not None and after <= -MATE_CP + 200
                mate_soon = "checkmate" in why and len(moves) - i <= 20
                if (mate_after or mate_soon) and (ours_short is None or ours_short > -300):
                    kind = "mate not seen"
                elif short.move != played:
                    kind = "unstable"
                elif long_.move != played:
                    kind = "horizon"
                else:
                    kind = "evaluation"
                kinds[kind] += 1
                print(f"{kind:<14}{label}: ply {i + 1} {played.iccs()} (FSF {before:+d} -> {after:+d}); "
                      f"ours at {args.tc:g} s: {short.move.iccs() if short.move else '-'} {ours_short}, "
                      f"at {args.long:g} s: {long_.move.iccs() if long_.move else '-'}", flush=True)
    finally:
        fsf.quit()
        ours.quit()
    print("counts: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
