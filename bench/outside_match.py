"""The outside measurement: our engine against peers on unfamiliar openings, judged by pyffish.

    PYTHONPATH=src python bench/outside_match.py --tc 200ms --tc 1s --games 120
    PYTHONPATH=src python bench/outside_match.py --summary bench-out/*.pgn      (the table of played PGNs)

For every peer (``--peer``, default those installed of Fairy-Stockfish, Sjaak II and ElephantEye
(``XIANGQI_ELEEYE=/path/to/eleeye``); any engine command line may be given; a program named
``eleeye…`` runs in its own folder, where it finds its book and evaluation files) and every time
control (``--tc``) it plays ``--games`` games of
``--engine`` (default ``builtin``, this checkout's engine at full strength) against the peer with
:func:`xiangqi.match.runner.run_match`: the openings of ``bench/openings-walk-8ply.tsv`` (random
walks that share no position with the book, its 8-ply match lines or the master games the
evaluation was trained on; ``bench/make_walk_openings.py``), each with colours swapped, Hash 64 MB,
the games ended by pyffish's rules (:mod:`xiangqi.match.outside_referee`) while our referee rules
along. The PGNs go to ``--out`` (one file per peer and time control; a stopped run can be continued
with ``xiangqi match … --first-game N``), and the table printed at the end gives per match the
games, W–L–D and score under pyffish, the Elo with its 95 % interval (per game and per
colour-swapped pair, :mod:`xiangqi.match.sprt`), our referee's W–L–D of the same games and the
number of games the two referees rule differently.

Nothing is asserted: time-limited results depend on the machine's load, so the table is a
measurement, the matches of ``xiangqi match`` its source.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPENINGS = ROOT / "bench" / "openings-walk-8ply.tsv"
#: ``--peer`` short names; ElephantEye 3.31 (UCCI, built from xqbase's sources) is wherever
#: ``XIANGQI_ELEEYE`` points (or ``eleeye`` on the PATH)
PEERS = {"fsf": "/usr/games/fairy-stockfish", "sjaakii": "/usr/games/sjaakii",
         "eleeye": os.environ.get("XIANGQI_ELEEYE", "eleeye")}
_TAG = re.compile(r'^\[(\w+) "(.*)"\]\s*$')


def read_pgn_games(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The tag pairs of every game in a ``xiangqi match`` PGN, in file order."""
    games: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = _TAG.match(line)
            if m:
                if m.group(1) in cur:  # a tag seen again: the next game's
                    games.append(cur)
                    cur = {}
                cur[m.group(1)] = m.group(2)
    if cur:
        games.append(cur)
    return games


def _score(result: str, player: str, red: str) -> float:
    if result == "1/2-1/2":
        return 0.5
    return 1.0 if (result == "1-0") == (player == red) else 0.0


def table_row(path: str | os.PathLike[str], player: str | None = None) -> dict[str, object]:
    """The summary of one match PGN for ``player`` (default: the first game's Red, A of the match)."""
    from xiangqi.match.runner import elo_difference
    from xiangqi.match.sprt import Sprt

    games = [g for g in read_pgn_games(path) if g.get("Result") in ("1-0", "0-1", "1/2-1/2")]
    if not games:
        raise SystemExit(f"{path}: no finished games")
    player = player or games[0]["Red"]
    opponent = games[0]["Black"] if games[0]["Red"] == player else games[0]["Red"]
    scores = [_score(g["Result"], player, g["Red"]) for g in games]
    w, d = scores.count(1.0), scores.count(0.5)
    losses = len(scores) - w - d
    elo, err = elo_difference(w, d, losses)
    sprt = Sprt(0, 10)
    for s in scores[: len(scores) // 2 * 2]:
        sprt.add(s)
    mid, lo, hi = _pair_elo(sprt)
    own_w = own_l = own_d = none = differ = 0
    for g in games:
        text = g.get("OwnReferee")
        if text is None:
            continue
        if text == "no ruling":
            none += 1
            differ += 1
            continue
        r = text.split()[0]
        s = _score(r, player, g["Red"])
        own_w += s == 1.0
        own_l += s == 0.0
        own_d += s == 0.5
        differ += r != g["Result"]
    return {"pgn": str(path), "player": player, "opponent": opponent, "tc": games[0].get("TimeControl", "?"),
            "games": len(games), "wld": (w, losses, d), "score": (w + d / 2) / len(games), "elo": (elo, err),
            "pair_elo": (mid, lo, hi), "pairs": len(scores) // 2,
            "own": (own_w, own_l, own_d, none) if any(g.get("OwnReferee") for g in games) else None,
            "differ": differ}


def _pair_elo(sprt) -> tuple[float, float, float]:
    from xiangqi.match.sprt import elo_interval

    counts, values = sprt.counts
    if sum(counts) == 0:
        return float("nan"), float("nan"), float("nan")
    return elo_interval(counts, values)


def format_table(rows: list[dict[str, object]]) -> str:
    """The rows as a markdown table (the form of docs/ENGINE.md)."""
    out = ["| ours vs | tc | games | W–L–D (pyffish) | score | Elo (95 %) | pairs: Elo [95 %] "
           "| our referee W–L–D (no ruling) | rulings differ |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        w, ls, d = r["wld"]  # type: ignore[misc]
        elo, err = r["elo"]  # type: ignore[misc]
        mid, lo, hi = r["pair_elo"]  # type: ignore[misc]
        own = r["own"]
        own_text = "—" if own is None else f"{own[0]}–{own[1]}–{own[2]} ({own[3]})"  # type: ignore[index]
        out.append(f"| {r['opponent']} | {r['tc']} | {r['games']} | {w}–{ls}–{d} | "
                   f"{100 * r['score']:.1f} % | {elo:+.0f} ± {err:.0f} | "
                   f"{mid:+.0f} [{lo:+.0f}, {hi:+.0f}] ({r['pairs']} pairs) | {own_text} | {r['differ']} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Play the matches (or read their PGNs with ``--summary``) and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="builtin", help="our engine: 'builtin' or a command (a wrapper)")
    ap.add_argument("--peer", action="append", default=[],
                    help="fsf, sjaakii, eleeye (XIANGQI_ELEEYE) or an engine command (repeatable; default "
                         "those installed)")
    ap.add_argument("--tc", action="append", default=[], help="time control(s), default 200ms")
    ap.add_argument("--games", type=int, default=120, help="games per match (default: every opening twice)")
    ap.add_argument("--first-game", type=int, default=1, help="continue a stopped match at game N")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--out", default="bench-out", help="folder for the PGNs")
    ap.add_argument("--summary", nargs="+", metavar="PGN", help="print the table of these PGNs and exit")
    ap.add_argument("--player", default=None, help="with --summary: our engine's name in the PGNs")
    args = ap.parse_args(argv)
    if args.summary:
        print(format_table([table_row(p, args.player) for p in args.summary]))
        return 0

    from xiangqi.match.outside_referee import PyffishReferee
    from xiangqi.match.runner import PlayerSpec, TimeControl, read_openings, run_match

    peers = args.peer or [k for k, v in PEERS.items() if shutil.which(v)]
    openings = read_openings(OPENINGS)
    referee = PyffishReferee()
    ours = PlayerSpec.parse(args.engine, hash_mb=64)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for peer in peers:
        spec = PlayerSpec.parse(PEERS.get(peer, peer), hash_mb=64)
        if Path(spec.command[0]).name.lower().startswith("eleeye"):
            program = shutil.which(spec.command[0]) or spec.command[0]
            spec.cwd = str(Path(program).resolve().parent)  # its BOOK.DAT etc. beside it
        for tc_text in args.tc or ["200ms"]:
            tc = TimeControl.parse(tc_text)
            pgn = Path(args.out) / f"outside-{Path(spec.command[0]).name}-{tc_text}.pgn"
            mode = ["a" if args.first_game > 1 else "w"]

            def save(g, res, pgn=pgn, mode=mode) -> None:
                print(f"{pgn.name} game {g.round}: {g.result} {g.reason}  [{res.wins} - {res.losses} - "
                      f"{res.draws}]", flush=True)
                with open(pgn, mode[0], encoding="utf-8") as fh:
                    fh.write(res.game_pgn(g) + "\n")
                mode[0] = "a"

            res = run_match(ours, spec, args.games, tc, openings=openings, on_game=save, referee=referee,
                            concurrency=args.concurrency, first=args.first_game - 1)
            print(res.summary(), flush=True)
            rows.append(table_row(pgn, ours.name))
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
