"""A greedy test opponent, spoken to over UCI: it always takes the most valuable piece it can,
else plays a random legal move (seeded). Issue 16: the weakest level (入门) should score 30–70 %
against it.

    python tools/greedy_engine.py [--seed N]

"Most valuable" by the engine's ordering values (``xiangqi.engine.evaluate.ORDER_VALUE``: rook 650,
horse and cannon 300, advisor and elephant 120, pawn 60); among equal captures, and among the
non-captures, the choice is random. It looks at nothing else: not whether the capturing piece is
lost at once, not the opponent's threats, not checks or mates (a mate it plays only by chance).
The random stream is seeded once per process, so a match against it repeats exactly.
"""

from __future__ import annotations

import argparse
import random
import sys


def choose(board, rng: random.Random):
    """The greedy move for a core Board (None when there is no legal move)."""
    from xiangqi.engine.evaluate import ORDER_VALUE

    moves = sorted(board.legal_moves, key=lambda m: m.iccs())
    if not moves:
        return None
    best, caps = 0, []
    for m in moves:
        target = board.squares[m.to_square]
        if target:
            v = int(ORDER_VALUE[abs(target)])
            if v > best:
                best, caps = v, [m]
            elif v == best:
                caps.append(m)
    return rng.choice(caps or moves)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    # imported before the handshake is answered, so that the first 'go' is not slowed by it
    from xiangqi.engine.evaluate import ORDER_VALUE  # noqa: F401 (numba and the tables load here)
    from xiangqi.engine.uci.server import parse_position

    rng = random.Random(args.seed)
    board = None

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    for raw in sys.stdin:
        tokens = raw.split()
        if not tokens:
            continue
        cmd = tokens[0]
        if cmd == "uci":
            say("id name Greedy")
            say("id author pyxiangqi")
            say("uciok")
        elif cmd == "isready":
            say("readyok")
        elif cmd == "position":
            board = parse_position(tokens[1:])
        elif cmd == "go":
            m = choose(board, rng) if board is not None else None
            say(f"bestmove {m.iccs()}" if m is not None else "bestmove (none)")
        elif cmd == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
