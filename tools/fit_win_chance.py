"""Fit the win-chance constant of the game review on master games (docs/REVIEW.md).

Data: the Chinese Chess Practical Dataset (CCPD, CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen
(2026)"), master games with results, read from the team corpus
``../shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz`` (folder ``Dataset/對局/大師對局``,
Big5 Chinese PGN, one game per file, parsed by :mod:`xiangqi.core.records` as in
``tools/tune_eval.py``).

Two steps::

    nice -n 10 .venv/bin/python tools/fit_win_chance.py extract --games 2000 --depth 6 --out /tmp/wc.tsv
    .venv/bin/python tools/fit_win_chance.py fit --data /tmp/wc.tsv

``extract`` draws a random sample of the master-game files (seeded), keeps games with a 1-0 /
0-1 / 1/2-1/2 result, no reading problem and at least 40 plies, drops repeated games (the
collection files many games under a player, a tournament and an opening), and evaluates the
positions at the plies given (default 16 30 44 60 80, those the game reaches) exactly as the
review does: :func:`xiangqi.study.review.evaluate_line`, a fixed-depth search from a cleared
transposition table, with the game's moves as history. It writes ``game<TAB>ply<TAB>cp<TAB>mate
<TAB>result`` lines (cp and mate from Red's side, result 1 / 0.5 / 0 for Red).

``fit`` maximises the likelihood of the results under ``P(Red scores) = 1 / (1 + exp(-K · cp))``
(a draw counts half a win: the Bernoulli log-likelihood with the score 0, ½ or 1), by bisection
on its derivative (it is concave in K) over the positions whose score is not decided (a mate, a
win by rule such as the opponent's perpetual check, or a finished game: ``|cp| >= 10000``); it
prints K with a bootstrap 95 % interval (games resampled, since positions of one game are not
independent), the fit per ply, the fit with an intercept (Red's first-move advantage, for
information: the review keeps the curve symmetric), the mean log-loss against lichess's chess
constant 0.00368208, and a calibration table (observed against predicted score by cp bucket).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/corpus.py, also when loaded by path
from corpus import CORPUS, RESULTS, game_names, read_games  # noqa: E402

FOLDER = "/大師對局/"
LICHESS_K = 0.00368208


def extract(path: str, games: int, plies: list[int], depth: int, out: str, seed: int, hash_mb: int) -> None:
    """Evaluate the positions at ``plies`` of up to ``games`` sampled master games; write them to ``out``."""
    from xiangqi.study.review import evaluate_line

    t0 = time.time()
    names = game_names(path, FOLDER)
    rng = random.Random(seed)
    wanted = set(rng.sample(names, min(len(names), int(games * 1.6) + 50)))
    order = {n: i for i, n in enumerate(sorted(wanted, key=lambda _: rng.random()))}
    print(f"{len(names)} master-game files; {len(wanted)} drawn", file=sys.stderr)
    picked: list[tuple[int, str, str, list[str], float]] = []
    for name, recs in read_games(path, FOLDER, wanted.__contains__):
        for g in recs[:1]:
            res = RESULTS.get(g.headers.get("Result", "").strip())
            moves = g.mainline_moves()
            if res is None or g.errors or len(moves) < 40:
                continue
            line = [m.iccs() for m in moves]
            picked.append((order[name], name, g.board().fen(), line, res))
    picked.sort()  # the random order, so that the first ``games`` are a random sample
    seen: set[tuple[str, ...]] = set()
    n_games = n_pos = dup = 0
    with open(out, "w", encoding="utf-8") as fh:
        for _, name, fen, moves, res in picked:
            if n_games >= games:
                break
            key = (fen, *moves)
            if key in seen:
                dup += 1
                continue
            seen.add(key)
            n_games += 1
            for ply in plies:
                if ply > len(moves):
                    continue
                ev = evaluate_line(fen, moves, ply, ply + 1, depth=depth, hash_mb=hash_mb)[0]
                fh.write(f"{name}\t{ply}\t{ev.cp}\t{'' if ev.mate is None else ev.mate}\t{res}\n")
                n_pos += 1
            fh.flush()
            if n_games % 100 == 0:
                print(f"{n_games} games, {n_pos} positions, {time.time() - t0:.0f} s", file=sys.stderr)
    print(f"{n_games} games ({dup} repeated games dropped), {n_pos} positions at plies {plies}, "
          f"depth {depth}, hash {hash_mb} MB -> {out} in {time.time() - t0:.0f} s")


def _load(path: str):
    games, plies, cps, mates, res = [], [], [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            g, ply, cp, mate, r = line.rstrip("\n").split("\t")
            games.append(g)
            plies.append(int(ply))
            cps.append(float(cp))
            mates.append(mate != "")
            res.append(float(r))
    return np.array(games), np.array(plies), np.array(cps), np.array(mates), np.array(res)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))


def _loglik(z: np.ndarray, s: np.ndarray) -> float:
    """Bernoulli log-likelihood of scores ``s`` under ``sigmoid(z)``, computed stably."""
    return float(np.sum(s * z - np.logaddexp(0.0, z)))


def fit_k(x: np.ndarray, s: np.ndarray, lo: float = 0.0, hi: float = 0.1) -> float:
    """Maximum-likelihood K of ``P = sigmoid(K x)`` for scores ``s`` in [0, 1].

    The log-likelihood is concave in K, so its derivative ``sum((s - P) x)`` falls with K: the
    root is found by bisection (Newton's method alone overshoots on positions with large scores).
    """
    def grad(k: float) -> float:
        return float(np.sum((s - _sigmoid(k * x)) * x))

    if grad(hi) > 0:
        return hi
    if grad(lo) < 0:
        return lo
    for _ in range(200):
        mid = (lo + hi) / 2
        if grad(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2


def fit_k_intercept(x: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """Maximum-likelihood ``(a, K)`` of ``P = sigmoid(a + K x)``: Newton's method with step halving
    (the log-likelihood is concave, so a step is halved until it does not lower it)."""
    theta = np.array([0.0, fit_k(x, s)])
    X = np.stack([np.ones_like(x), x], axis=1)
    cur = _loglik(X @ theta, s)
    for _ in range(100):
        p = _sigmoid(X @ theta)
        grad = X.T @ (s - p)
        hess = -(X.T * (p * (1 - p))) @ X
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6:
            trial = theta - t * step
            val = _loglik(X @ trial, s)
            if val >= cur:
                break
            t /= 2
        if t <= 1e-6:
            break
        theta, cur = trial, val
        if np.max(np.abs(t * step)) < 1e-12:
            break
    return float(theta[0]), float(theta[1])


def log_loss(x: np.ndarray, s: np.ndarray, k: float, a: float = 0.0) -> float:
    """Mean negative log-likelihood per position (natural log)."""
    p = np.clip(_sigmoid(a + k * x), 1e-12, 1 - 1e-12)
    return float(-np.mean(s * np.log(p) + (1 - s) * np.log(1 - p)))


def fit(data: str, boot: int, seed: int) -> None:
    """Print the fitted K and its diagnostics for the positions in ``data``."""
    games, plies, cps, mates, res = _load(data)
    decided = mates | (np.abs(cps) >= 10000)
    keep = ~decided
    g, ply, x, s = games[keep], plies[keep], cps[keep], res[keep]
    ug = np.unique(games)
    print(f"{len(ug)} games, {len(cps)} positions ({int(decided.sum())} decided ones left out: "
          f"{int(mates.sum())} mates, {int(decided.sum() - mates.sum())} rule wins or finished games), "
          f"{len(x)} fitted; results: Red wins {np.mean(res == 1):.1%}, draws {np.mean(res == 0.5):.1%}, "
          f"Black wins {np.mean(res == 0):.1%}")
    k = fit_k(x, s)
    # bootstrap over games
    rng = np.random.default_rng(seed)
    idx_of = {name: np.flatnonzero(g == name) for name in np.unique(g)}
    names = list(idx_of)
    ks = []
    for _ in range(boot):
        draw = rng.choice(len(names), len(names))
        idx = np.concatenate([idx_of[names[i]] for i in draw])
        ks.append(fit_k(x[idx], s[idx]))
    lo, hi = (np.percentile(ks, [2.5, 97.5]) if ks else (float("nan"), float("nan")))
    print(f"K = {k:.6f} per centipawn (bootstrap 95% {lo:.6f} .. {hi:.6f}, {boot} resamples of games)")
    print(f"  win chance of +100 cp: {100 * (2 * _sigmoid(np.array(100 * k)) - 1):.1f}; "
          f"cp of win chance 50 (expected score 75%): {np.log(3) / k:.0f}")
    base = log_loss(x, s, 0.0)
    print(f"mean log-loss: fitted {log_loss(x, s, k):.5f}, "
          f"lichess K {LICHESS_K} {log_loss(x, s, LICHESS_K):.5f}, "
          f"no information (K = 0) {base:.5f}")
    a, k2 = fit_k_intercept(x, s)
    print(f"with an intercept: a = {a:.4f} (Red's edge: {a / k2:.0f} cp), K = {k2:.6f}, "
          f"log-loss {log_loss(x, s, k2, a):.5f}")
    print("per ply:  ply  positions  K         mean |cp|")
    for p in np.unique(ply):
        m = ply == p
        print(f"         {p:4d} {int(m.sum()):9d}  {fit_k(x[m], s[m]):.6f}  {np.mean(np.abs(x[m])):.0f}")
    print("calibration (fitted K): cp bucket, positions, observed Red score, predicted")
    edges = [-np.inf, -600, -300, -150, -75, -25, 25, 75, 150, 300, 600, np.inf]
    for lo_e, hi_e in zip(edges[:-1], edges[1:], strict=True):
        m = (x >= lo_e) & (x < hi_e)
        if m.any():
            pred = np.mean(_sigmoid(k * x[m]))
            print(f"  [{lo_e:>6}, {hi_e:>6}) {int(m.sum()):6d}  {np.mean(s[m]):.3f}  {pred:.3f}")


def main(argv: list[str] | None = None) -> int:
    """Command line: ``extract`` then ``fit`` (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract", help="evaluate sampled positions of master games")
    e.add_argument("--corpus", default=CORPUS)
    e.add_argument("--games", type=int, default=2000)
    e.add_argument("--plies", default="16,30,44,60,80", help="plies to evaluate (comma-separated)")
    e.add_argument("--depth", type=int, default=6)
    e.add_argument("--hash", type=int, default=16, help="hash MB (as the review's default)")
    e.add_argument("--seed", type=int, default=12)
    e.add_argument("--out", default="/tmp/win_chance_positions.tsv")
    f = sub.add_parser("fit", help="fit K on the extracted positions")
    f.add_argument("--data", default="/tmp/win_chance_positions.tsv")
    f.add_argument("--boot", type=int, default=200)
    f.add_argument("--seed", type=int, default=12)
    args = ap.parse_args(argv)
    if args.cmd == "extract":
        plies = [int(p) for p in args.plies.split(",") if p.strip()]
        extract(args.corpus, args.games, plies, args.depth, args.out, args.seed, args.hash)
    else:
        fit(args.data, args.boot, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
