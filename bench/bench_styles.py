"""Measure the named opponents' styles: each style plays the plain level and we count what it does.

Every game is a styled player (``EnginePlayer.choose(..., style=...)``: the same book and search path
as the game's computer) against the same level without a style, colours alternating, from the
standard start with the shipped opening book. ``--styles none`` is the control: the plain level
against itself. For the styled side the script counts, per game:

- ``checks``: its checking moves per 100 of its moves;
- ``trades``: even exchanges it starts (a capture taken back by an even piece, or a piece offered
  and taken, then taken back), per game (:func:`xiangqi.app.opponents.persona_style.features`' rule, on the
  moves actually played);
- ``aim``: how many of its pieces aim at the enemy palace (:func:`aimed_at_palace`), the mean over
  the positions after its moves;
- ``sacrifices``: moves after which it is ≥ 200 cp of material down two plies later and not by
  an exchange, per game;
- ``cannon``: the share of its games as Red that open 炮二平五/炮八平五;
- ``score``: its points against the plain level (win 1, draw ½), with the Elo difference and its 95 %
  interval (from the standard error of the points per game).

Usage: ``python bench/bench_styles.py --level intermediate --games 12 --styles attacking,solid,positional,none
--out /tmp/styles.jsonl`` (one JSON line per game; ``--summary FILE`` prints the table from such a file).
Games end by the rules or at ``--max-plies`` (a draw).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

from xiangqi.app.opponents.persona_style import MATERIAL, aimed_at_palace, get_style
from xiangqi.app.opponents.players import DEFAULT_BOOK, EnginePlayer
from xiangqi.core.board import Board


def play_game(level: str, style_key: str | None, styled_red: bool, seed: int, max_plies: int) -> dict:
    """One game; returns its moves, result and the styled side's counts."""
    style = get_style(style_key) if style_key != "none" else None
    styled = EnginePlayer(hash_mb=16, book=DEFAULT_BOOK, book_seed=seed)
    plain = EnginePlayer(hash_mb=16, book=DEFAULT_BOOK, book_seed=seed + 10_000)
    styled._rng.seed(seed)
    board = Board()
    moves = []
    t0 = time.perf_counter()
    while len(moves) < max_plies and board.outcome() is None:
        mine = board.turn == styled_red
        mv = styled.choose(board.copy(), level, style=style) if mine else plain.choose(board.copy(), level)
        moves.append(mv.iccs())
        board.push(mv)
    out = board.outcome()
    result = "1/2-1/2" if out is None else out.result()
    counts = count(moves, styled_red)
    score = 0.5 if result == "1/2-1/2" else float((result == "1-0") == styled_red)
    return {"level": level, "style": style_key, "styled_red": styled_red, "seed": seed, "result": result,
            "score": score, "plies": len(moves), "moves": moves, "time_s": round(time.perf_counter() - t0, 1),
            **counts}


def count(moves: list[str], side: bool) -> dict:
    """The styled side's counts (see the module text) over a game's ICCS ``moves``."""
    b = Board()
    checks = trades = sacrifices = own = 0
    aims = []
    boards = [b.copy(stack=False)]
    for mv in moves:
        b.push_iccs(mv)
        boards.append(b.copy(stack=False))
    mat = [_material(x, side) for x in boards]
    for i, mv in enumerate(moves):
        before = boards[i]
        if before.turn != side:
            continue
        own += 1
        after = boards[i + 1]
        if after.is_check():
            checks += 1
        aims.append(aimed_at_palace(after, side))
        to = mv[2:]
        nxt = moves[i + 1] if i + 1 < len(moves) else None
        nxt2 = moves[i + 2] if i + 2 < len(moves) else None
        moved = abs(before.squares[_sq(mv[:2])])
        taken = abs(before.squares[_sq(to)])
        if nxt and nxt[2:] == to:
            recapturer = abs(after.squares[_sq(nxt[:2])])
            back = nxt2 is not None and nxt2[2:] == to
            if taken and abs(MATERIAL[taken] - MATERIAL[moved]) <= 150:
                trades += 1
                continue
            if not taken and back and abs(MATERIAL[moved] - MATERIAL[recapturer]) <= 150:
                trades += 1
                continue
        if i + 2 < len(mat) and mat[i] - mat[i + 2] >= 200 and not (nxt2 and nxt2[2:] == (nxt or "")[2:]):
            sacrifices += 1
    return {"own_moves": own, "checks": checks, "trades": trades, "sacrifices": sacrifices,
            "aim": round(sum(aims) / len(aims), 3) if aims else 0.0,
            "cannon_open": (moves[0] in ("h2e2", "b2e2")) if side and moves else None}


def _sq(name: str) -> int:
    return (ord(name[1]) - 48) * 9 + (ord(name[0]) - 97)


def _material(board: Board, side: bool) -> int:
    total = 0
    for code in board.squares:
        if code:
            v = MATERIAL[abs(code)]
            total += v if (code > 0) == side else -v
    return total


def elo(score: float) -> float | None:
    """The Elo difference of a score fraction (None at 0 or 1)."""
    if score <= 0 or score >= 1:
        return None
    return -400 * math.log10(1 / score - 1)


def summary(rows: list[dict]) -> str:
    """The table: per style, mean counts with their standard errors over games."""
    lines = ["| style | games | checks /100 moves | even trades started /game | pieces aimed at the palace |"
             " sacrifices /game | 中炮 first move (as Red) | score vs plain | Elo diff (95 %) |",
             "|---|---|---|---|---|---|---|---|---|"]
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["style"], []).append(r)
    for key, rs in by.items():
        def m(vals: list[float]) -> str:
            if not vals:
                return "-"
            mean = statistics.fmean(vals)
            se = statistics.stdev(vals) / math.sqrt(len(vals)) if len(vals) > 1 else 0.0
            return f"{mean:.2f} ± {se:.2f}"
        chk = [100 * r["checks"] / max(1, r["own_moves"]) for r in rs]
        cannon = [r["cannon_open"] for r in rs if r["cannon_open"] is not None]
        pts = [r["score"] for r in rs]
        sc = sum(pts) / len(rs)
        e = elo(sc)
        se = statistics.stdev(pts) / math.sqrt(len(pts)) if len(pts) > 1 else 0.0
        lo, hi = elo(max(1e-6, sc - 1.96 * se)), elo(min(1 - 1e-6, sc + 1.96 * se))
        trades, aim = m([r["trades"] for r in rs]), m([r["aim"] for r in rs])
        lines.append(f"| {key} | {len(rs)} | {m(chk)} | {trades} | {aim} "
                     f"| {m([r['sacrifices'] for r in rs])} | {sum(cannon)}/{len(cannon)} | "
                     f"{sc:.2f} | {'-' if e is None else f'{e:+.0f} ({lo:+.0f} … {hi:+.0f})'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--level", default="intermediate", help="level both sides play")
    ap.add_argument("--games", type=int, default=12, help="games per style (colours alternate)")
    ap.add_argument("--styles", default="attacking,solid,positional,none",
                    help="comma-separated styles; none = the plain level (control)")
    ap.add_argument("--max-plies", type=int, default=160, help="a game still going after this is a draw")
    ap.add_argument("--seed", type=int, default=1, help="first game seed")
    ap.add_argument("--out", type=Path, help="append one JSON line per game here")
    ap.add_argument("--summary", type=Path, help="only print the table of this JSON-lines file")
    a = ap.parse_args(argv)
    if a.summary:
        rows = [json.loads(x) for x in a.summary.read_text().splitlines() if x.strip()]
        print(summary(rows))
        return 0
    rows = []
    for g in range(a.games):
        for key in a.styles.split(","):
            r = play_game(a.level, key, g % 2 == 0, a.seed + g, a.max_plies)
            rows.append(r)
            print(f"{key:10s} game {g + 1}: {r['result']} in {r['plies']} plies ({r['time_s']} s) "
                  f"checks {r['checks']} trades {r['trades']} aim {r['aim']}", file=sys.stderr, flush=True)
            if a.out:
                with a.out.open("a") as f:
                    f.write(json.dumps(r) + "\n")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
