"""Make the weak-player game set of the review benchmark: ``bench/review_games_weak.pgn``.

Master games hold too few blunders to measure whether the review finds them (7 moves losing
≥ 300 cp in 1,099). These games are played by Fairy-Stockfish (``/usr/games/fairy-stockfish``,
``UCI_Variant xiangqi``, 1 thread, 16 MB hash) against itself with ``UCI_LimitStrength=true``:
each game pairs two ``UCI_Elo`` values drawn (seeded, :data:`SEED`) from :data:`ELOS` (1350, the
option's minimum, to 1500), each side ``go movetime`` :data:`MOVETIME_MS`, from an opening of
``bench/openings-book-8ply.tsv`` chosen with the same seed, until the game ends or :data:`PLY_CAP`
plies. The engine's evaluation never saw these games (it was fitted on CCPD master games).

Fairy-Stockfish's strength limit picks its weakened move with a generator seeded from the clock,
so a rerun plays other games; the PGN is the data (the seed fixes the pairings and openings only).
The first half of the games is the tuning set, the second half the held-out set (``Set`` tag),
as in ``bench/review_games.pgn``. Run::

    PYTHONPATH=src .venv/bin/python bench/weak_games.py [--games 10]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "review_games_weak.pgn"
FAIRY = "/usr/games/fairy-stockfish"
SEED = 29
ELOS = (1350, 1400, 1450, 1500)
MOVETIME_MS = 100
PLY_CAP = 110


def main() -> None:
    """Play ``--games`` games and write them (module docstring)."""
    from xiangqi.core.pgn import Game, write_game
    from xiangqi.match.runner import PlayerSpec, TimeControl, play_game, read_openings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    rng = random.Random(SEED)
    openings = list(read_openings(HERE / "openings-book-8ply.tsv"))
    tc = TimeControl(movetime=MOVETIME_MS / 1000)
    texts = []
    for k in range(args.games):
        elo_r, elo_b = rng.choice(ELOS), rng.choice(ELOS)
        opening = rng.choice(openings)
        engines = []
        for elo in (elo_r, elo_b):
            spec = PlayerSpec.parse(FAIRY, [f"UCI_Elo={elo}", "UCI_LimitStrength=true", "Threads=1"],
                                    hash_mb=16)
            spec.name = f"fsf{elo}"
            engines.append(spec.start())
        try:
            res = play_game(engines[0], engines[1], opening, tc, round_no=k + 1, ply_cap=PLY_CAP)
        finally:
            for e in engines:
                e.quit()
        g = Game.from_board(res.board)
        g.headers.update({"Event": "review benchmark, weak players", "Round": str(k + 1),
                          "Red": f"Fairy-Stockfish UCI_Elo {elo_r}",
                          "Black": f"Fairy-Stockfish UCI_Elo {elo_b}",
                          "Result": res.result, "Opening": opening[0], "Date": "",
                          "Termination": res.reason, "TimeControl": f"movetime {MOVETIME_MS} ms",
                          "Set": "tuning" if k < args.games // 2 else "heldout"})
        texts.append(write_game(g))
        print(f"game {k + 1}: {elo_r} vs {elo_b}, {opening[0]}, {len(res.board.move_stack)} plies, "
              f"{res.result} ({res.reason})", flush=True)
    Path(args.out).write_text("\n".join(texts) + "\n", encoding="utf-8")
    print(f"wrote {len(texts)} games to {args.out}")


if __name__ == "__main__":
    main()
