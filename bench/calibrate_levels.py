"""Measure the Elo of the playing levels 入门/初级/中级/高级/大师 by engine matches.

Run (all five levels, then write the package's rating file)::

    .venv/bin/python bench/calibrate_levels.py --concurrency 2 --write

Schedule. Every level plays Fairy-Stockfish (``/usr/games/fairy-stockfish``) with
``UCI_LimitStrength=true`` at several ``UCI_Elo`` values that bracket it, and its
neighbouring levels (初级–中级, 中级–高级, 高级–大师). The bracket is centred on the
level's current estimate (the fit of the games already in the results file, else
:data:`GUESS`): the ``--bracket`` nearest :data:`ANCHOR_ELOS` around it. ``--games``
is the number of games per pairing; ``--games-for master=4`` gives a slow level
fewer (a level–level pairing uses the smaller count of its two levels). ``--levels``
picks levels; ``--fsf-elos beginner=1350,1490`` sets a level's opponents by hand.

Above the scale. A level stronger than Fairy-Stockfish's highest ``UCI_Elo`` (2850) wins nearly
every game against every anchor, so its number would rest on a one-sided score. ``--fsf-full
master`` adds Fairy-Stockfish at full strength (player ``fsffull``: no ``UCI_LimitStrength``,
same time control, 1 thread, 16 MB hash) as that level's opponent. ``fsffull`` has no anchor:
its rating is fitted from its games against the ``UCI_Elo`` anchors of ``--full-vs 2820``
(``--games`` each, default none), so the chain reads anchor → fsffull → level; without such
games fsffull's rating is fitted from the level's games alone and says nothing about the level.

Results. Every game is appended to a JSON-lines file (``--results``, default
``bench/level_games.jsonl``) as soon as it ends, with the engine fingerprint and
each player's settings. A later run counts the games already there for each
pairing and plays only the missing ones (raise ``--games`` to extend a run);
games recorded under other settings or another version of the engine's source
(search.py, evaluate.py, …: :func:`engine_fingerprint`) are ignored, so a rerun
after an engine change starts afresh in the same file (``--same-engine FP`` keeps
counting the games of fingerprint FP when a change is known not to alter play).

Fit. All games are fitted at once by maximum likelihood under the Elo logistic
model (:func:`xiangqi.match.runner.fit_ratings`: draws count half, one virtual
draw per pairing), with every Fairy-Stockfish player anchored at its ``UCI_Elo``.
The error is the 95 % interval from the Hessian. The table shows level, Elo ±
error, games and the rank name of DESIGN.md; ``--write`` stores the levels'
numbers in ``src/xiangqi/engine/level_elo.json``, which ``xiangqi.engine.levels``
reads to fill ``Level.elo``.

What the numbers mean. They hold for: each level at its real in-game settings
(``builtin:<level>``, i.e. ``Engine.play`` with the level's own depth/time, asked
with ``go movetime`` equal to the level's time so nothing is capped; no game clock);
Fairy-Stockfish at ``--fsf-tc`` (default 200 ms per move), 1 thread, 16 MB hash;
this machine's speed (高级 and 大师 are time-limited, so a faster machine makes
them stronger); the 16 balanced openings of :data:`xiangqi.match.runner.OPENINGS`
with colours swapped; adjudication by our referee, draw at 300 plies. The scale is
Fairy-Stockfish's ``UCI_Elo``, which Stockfish calibrated for chess (CCRL 40/4
anchored, 60 s + 0.6 s): it says how strong a level is *relative to that engine
at those settings in xiangqi*, not a human xiangqi rating. Stockfish 11, whose
search Fairy-Stockfish 11.1 builds on, turns ``UCI_Elo`` into a whole ``Skill
Level`` ``int(((E - 1346.6) / 143.4) ** (1 / 0.806))``, so values between its steps
play alike; :data:`ANCHOR_ELOS` are those steps (the lowest ``UCI_Elo`` of each
skill level), so each anchor's rating is the one it claims for the level it plays
(if Debian's build differs, the anchors are still the values it was given). With
``UCI_Elo`` the engine also picks among 4 lines with a random weakness, so the
anchors play 200 ms searches with deliberate errors. Ratings below 1350 (the lowest
``UCI_Elo``) or above the strongest anchor played are extrapolated by the model.

Wall time: see ``--dry-run``, which prints the schedule with an estimate.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import hashlib
import json
import math
import os
import shlex
import sys
import time
from pathlib import Path

from xiangqi.engine.levels import BASE_LEVELS, ELO_FILE, Level, rank_name
from xiangqi.match.runner import OPENINGS, GameResult, PlayerSpec, Rating, TimeControl, fit_ratings, run_match

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = ROOT / "bench" / "level_games.jsonl"
FSF = "/usr/games/fairy-stockfish"
#: Source files whose change makes earlier games void (the engine's playing code).
ENGINE_FILES = ("search.py", "evaluate.py", "movegen.py", "tt.py", "consts.py", "api.py", "timeman.py",
                "_numba.py", "uci/server.py", "data/eval-texel-2026-12-01.npz", "nnue.py", "chase.py",
                "data/nnue-2026-12-01.npz")


def skill_level(uci_elo: int) -> int:
    """Stockfish 11's Skill Level for a UCI_Elo: ``int(((E - 1346.6) / 143.4) ** (1 / 0.806))``."""
    return int(((uci_elo - 1346.6) / 143.4) ** (1 / 0.806))


def _lowest_elo(level: int) -> int:
    e = max(1350, math.ceil(1346.6 + 143.4 * level ** 0.806))
    while ((e - 1346.6) / 143.4) ** (1 / 0.806) < level + 1e-6:  # clear of rounding at the step
        e += 1
    return e


#: Fairy-Stockfish's ``UCI_Elo`` range (its ``uci`` answer: ``min 1350 max 2850``). It ignores a value
#: outside it, as Stockfish does, and would then play at 1350 while the fit anchors it at the asked value.
FSF_ELO_MIN, FSF_ELO_MAX = 1350, 2850
#: Lowest UCI_Elo of each of Stockfish 11's skill levels 0–18 (1350 for level 0, the option's minimum).
ANCHOR_ELOS: tuple[int, ...] = tuple(_lowest_elo(lv) for lv in range(19))
#: Starting guesses (Elo on the UCI_Elo scale) for levels with no games yet: 初级 and 中级 from a
#: first small run (1508 ± 144, 1933 ± 177 on 2026-11-29), 高级 and 大师 extrapolated from them, 入门 a guess
#: below the lowest anchor (it scores 30-70 % against the greedy player).
GUESS = {"novice": 1000, "beginner": 1500, "intermediate": 1930, "advanced": 2250, "master": 2500}
#: Moves a side per game for the --dry-run estimate of pairings not played yet (games of 初级 and
#: 中级 against Fairy-Stockfish averaged 55 here, at most 140). Per move: 初级 ~0.005 s, 中级 ~0.02 s
#: (depth-limited), 高级 and 大师 use their full 1 s and 3 s, Fairy-Stockfish its movetime.
MOVES_PER_SIDE = 65


def engine_fingerprint() -> str:
    """First 12 hex digits of the SHA-256 of the engine's playing code (:data:`ENGINE_FILES`)."""
    h = hashlib.sha256()
    base = ROOT / "src" / "xiangqi" / "engine"
    for name in ENGINE_FILES:
        p = base / name
        h.update(name.encode())
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:12]


@dataclasses.dataclass(frozen=True)
class Player:
    """One calibration player: ``id`` (``beginner`` or ``fsf1490``), how to start it, its time control,
    ``setup`` (the settings that must match for old games to count) and the anchor Elo (FSF only)."""

    id: str
    spec: PlayerSpec
    tc: TimeControl
    setup: str
    anchor: int | None = None


def level_player(lv: Level, hash_mb: int) -> Player:
    """The level at its in-game settings: ``builtin:<key>`` asked with ``go movetime <level time>``."""
    spec = PlayerSpec.parse(f"builtin:{lv.key}", hash_mb=hash_mb)
    tc = TimeControl(movetime=lv.time) if lv.time else TimeControl(depth=lv.depth or 1)
    setup = (f"depth={lv.depth} nodes={lv.nodes} time={lv.time} multipv={lv.multipv} margin={lv.margin_cp} "
             f"temperature={lv.temperature_cp} hash={hash_mb}")
    if lv.miss_threat or lv.miss_capture:
        setup += f" miss_threat={lv.miss_threat} miss_capture={lv.miss_capture}"
    return Player(lv.key, spec, tc, setup)


def fsf_player(elo: int, command: str, tc: TimeControl) -> Player:
    """Fairy-Stockfish with UCI_LimitStrength at ``elo``, 1 thread, 16 MB hash, ``tc``."""
    spec = PlayerSpec.parse(command, [f"UCI_Elo={elo}", "UCI_LimitStrength=true", "Threads=1"], hash_mb=16)
    spec.name = f"fsf{elo}"
    return Player(f"fsf{elo}", spec, tc, f"{command} UCI_LimitStrength=true UCI_Elo={elo} {tc}", anchor=elo)


#: Player id of Fairy-Stockfish at full strength (``--fsf-full``); no anchor, fitted like a level.
FULL = "fsffull"


def fsf_full_player(command: str, tc: TimeControl) -> Player:
    """Fairy-Stockfish at full strength (no ``UCI_LimitStrength``), 1 thread, 16 MB hash, ``tc``;
    no anchor (its rating comes from games against the ``UCI_Elo`` anchors)."""
    spec = PlayerSpec.parse(command, ["Threads=1"], hash_mb=16)
    spec.name = FULL
    return Player(FULL, spec, tc, f"{command} full strength {tc}")


def read_results(path: Path) -> list[dict]:
    """Every record of the JSON-lines results file (a missing file is empty; bad lines are skipped)."""
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and {"red", "black", "result"} <= rec.keys():
            out.append(rec)
    return out


def valid(rec: dict, fingerprint: str | set[str], setups: dict[str, str]) -> bool:
    """True when ``rec`` was played by this engine version (or one of a set of fingerprints)
    with today's settings for both players."""
    ok = {fingerprint} if isinstance(fingerprint, str) else fingerprint
    if rec.get("engine") not in ok:
        return False
    su = rec.get("setup", {})
    return all(p in setups and su.get(p) == setups[p] for p in (rec["red"], rec["black"]))


def score_red(result: str) -> float | None:
    """Red's score for a PGN result text; None for anything else."""
    return {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(result)


def fit(records: list[dict], anchors: dict[str, int], prior_draws: float = 1.0) -> dict[str, Rating]:
    """:func:`fit_ratings` of the records' games (Red, Black, Red's score) with ``anchors`` fixed."""
    games = [(r["red"], r["black"], s) for r in records if (s := score_red(r["result"])) is not None]
    if not games:
        return {}
    return fit_ratings(games, anchors, prior_draws=prior_draws)


def pairing_lines(records: list[dict], ratings: dict[str, Rating]) -> list[str]:
    """Per pairing: games, the score of the first player and the score the fitted ratings expect.

    Large gaps (beyond about ``2 * sqrt(n) / 2`` points) mean the model does not fit, e.g. two
    anchors whose ``UCI_Elo`` values are further apart or closer in xiangqi than their numbers say.
    """
    tally: dict[tuple[str, str], list[float]] = {}
    for r in records:
        s = score_red(r["result"])
        if s is None:
            continue
        a, b = sorted((r["red"], r["black"]))
        acc = tally.setdefault((a, b), [0.0, 0.0])
        acc[0] += s if r["red"] == a else 1.0 - s
        acc[1] += 1
    lines = ["pairing                     games  score  expected"]
    for (a, b), (s, n) in sorted(tally.items()):
        if a in ratings and b in ratings:
            e = n / (1.0 + 10.0 ** ((ratings[b].elo - ratings[a].elo) / 400.0))
            lines.append(f"{a:>12} vs {b:<12} {int(n):6d} {s:6.1f} {e:9.1f}")
    return lines


def bracket(centre: float, n: int) -> list[int]:
    """The ``n`` values of :data:`ANCHOR_ELOS` nearest ``centre`` (sorted)."""
    near = sorted(ANCHOR_ELOS, key=lambda e: (abs(e - centre), e))[:n]
    return sorted(near)


def parse_map(items: list[str], what: str) -> dict[str, str]:
    """``key=value`` texts (level keys or Chinese names) as a dict keyed by level key.

    Raises :class:`SystemExit` with a message for a text without ``=`` or an unknown level.
    """
    out = {}
    for text in items:
        k, sep, v = text.partition("=")
        if not sep:
            raise SystemExit(f"{what}: expected LEVEL=VALUE, got {text!r}")
        out[_level(k, what).key] = v
    return out


def _level(name: str, what: str) -> Level:
    from xiangqi.engine.levels import get_level

    try:
        return get_level(name)
    except ValueError as exc:
        raise SystemExit(f"{what}: {exc}") from None


def parse_count(text: str, what: str, minimum: int = 0) -> int:
    """A whole number of at least ``minimum``; :class:`SystemExit` with a message otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise SystemExit(f"{what}: expected a whole number, got {text!r}") from None
    if n < minimum:
        raise SystemExit(f"{what}: must be >= {minimum}, got {n}")
    return n


def parse_fsf_elos(text: str, what: str) -> list[int]:
    """``E1,E2,…``: Fairy-Stockfish ``UCI_Elo`` values, each within :data:`FSF_ELO_MIN`..:data:`FSF_ELO_MAX`.

    Raises :class:`SystemExit` with a message for anything else (a value outside the range
    would be ignored by the engine, and its games fitted at the wrong anchor).
    """
    out = []
    for x in text.split(","):
        if x.strip():
            e = parse_count(x.strip(), what)
            if not FSF_ELO_MIN <= e <= FSF_ELO_MAX:
                raise SystemExit(f"{what}: Fairy-Stockfish's UCI_Elo goes from {FSF_ELO_MIN} to "
                                 f"{FSF_ELO_MAX}, got {e}")
            out.append(e)
    return out


def seconds_per_game(a: Player, b: Player) -> float:
    """A rough wall time of one game (see :data:`MOVES_PER_SIDE`)."""
    def per_move(p: Player) -> float:
        if p.tc.movetime is None:
            return 0.05
        if p.id in ("novice", "beginner"):
            return 0.01
        if p.id == "intermediate":
            return min(p.tc.movetime, 0.03)
        return p.tc.movetime
    return 3.0 + MOVES_PER_SIDE * (per_move(a) + per_move(b))


def main(argv: list[str] | None = None) -> int:
    """Run the calibration (module docstring); returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default=",".join(BASE_LEVELS), help="levels to calibrate (comma-separated)")
    ap.add_argument("--games", type=int, default=10, help="games per pairing (default 10)")
    ap.add_argument("--games-for", action="append", default=[], metavar="LEVEL=N",
                    help="games per pairing for one level, e.g. master=4 (repeatable)")
    ap.add_argument("--bracket", type=int, default=2, help="Fairy-Stockfish opponents per level (default 2)")
    ap.add_argument("--fsf-elos", action="append", default=[], metavar="LEVEL=E1,E2",
                    help="this level's UCI_Elo opponents instead of the automatic bracket (repeatable)")
    ap.add_argument("--fsf-full", default="", metavar="LEVEL,…",
                    help="these levels also play Fairy-Stockfish at full strength (player fsffull)")
    ap.add_argument("--full-vs", default="", metavar="E1,E2",
                    help="UCI_Elo anchors that fsffull plays (--games each) to place it on the scale")
    ap.add_argument("--fsf", default=FSF, help=f"Fairy-Stockfish command (default {FSF})")
    ap.add_argument("--fsf-tc", default="200ms", help="Fairy-Stockfish time control (default 200ms a move)")
    ap.add_argument("--no-level-pairs", action="store_true",
                    help="skip the games between neighbouring levels")
    ap.add_argument("--concurrency", type=int, default=1, help="games at once (default 1)")
    ap.add_argument("--hash", type=int, default=64, help="Hash (MB) of the built-in engine (default 64)")
    ap.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="JSON-lines file of all games")
    ap.add_argument("--prior-draws", type=float, default=1.0, help="virtual draws per pairing in the fit")
    ap.add_argument("--same-engine", action="append", default=[], metavar="FINGERPRINT",
                    help="also count games of this engine fingerprint (a change known not to alter play)")
    ap.add_argument("--fit-only", action="store_true", help="play nothing; fit the games in --results")
    ap.add_argument("--dry-run", action="store_true", help="print the schedule and a wall-time estimate")
    ap.add_argument("--write", action="store_true", help=f"write the levels' ratings to {ELO_FILE.name}")
    ap.add_argument("--note", default="", help="with --write: text added to the file's conditions "
                    "(when, machine load, nice)")
    ap.add_argument("--elo-file", type=Path, default=ELO_FILE, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    keys = [k.strip() for k in args.levels.split(",") if k.strip()]
    levels = [_level(k, "--levels") for k in keys]
    levels.sort(key=lambda lv: list(BASE_LEVELS).index(lv.key))
    for flag, value, minimum in (("--games", args.games, 0), ("--bracket", args.bracket, 0),
                                 ("--concurrency", args.concurrency, 1), ("--hash", args.hash, 1)):
        if value < minimum:
            raise SystemExit(f"{flag}: must be >= {minimum}, got {value}")
    if not args.prior_draws >= 0.0:
        raise SystemExit(f"--prior-draws: must be >= 0, got {args.prior_draws}")
    games_for = {k: parse_count(v, "--games-for")
                 for k, v in parse_map(args.games_for, "--games-for").items()}
    fsf_elos = {k: parse_fsf_elos(v, "--fsf-elos") for k, v in parse_map(args.fsf_elos, "--fsf-elos").items()}
    fsf_tc = TimeControl.parse(args.fsf_tc)
    full_levels = [_level(k.strip(), "--fsf-full").key for k in args.fsf_full.split(",") if k.strip()]
    full_vs = parse_fsf_elos(args.full_vs, "--full-vs")
    fingerprint = engine_fingerprint()

    players: dict[str, Player] = {lv.key: level_player(lv, args.hash) for lv in BASE_LEVELS.values()}
    records = read_results(args.results)
    seen = {r[c][3:] for r in records for c in ("red", "black") if str(r[c]).startswith("fsf")}
    for e in ANCHOR_ELOS + tuple(x for v in fsf_elos.values() for x in v) + \
            tuple(int(x) for x in seen if x.isdigit()):
        players.setdefault(f"fsf{e}", fsf_player(e, args.fsf, fsf_tc))
    players[FULL] = fsf_full_player(args.fsf, fsf_tc)
    setups = {p.id: p.setup for p in players.values()}
    anchors = {p.id: p.anchor for p in players.values() if p.anchor is not None}
    current = [r for r in records if valid(r, {fingerprint, *args.same_engine}, setups)]
    print(f"{args.results}: {len(records)} games, {len(current)} with engine {fingerprint} "
          f"and today's settings", flush=True)

    # schedule
    estimate = fit(current, anchors, args.prior_draws) if current else {}
    pairings: list[tuple[Player, Player, int]] = []
    for lv in levels:
        n = games_for.get(lv.key, args.games)
        centre = estimate[lv.key].elo if lv.key in estimate else GUESS.get(lv.key, 1600)
        for e in fsf_elos.get(lv.key) or bracket(centre, args.bracket):
            pairings.append((players[lv.key], players[f"fsf{e}"], n))
        if lv.key in full_levels:
            pairings.append((players[lv.key], players[FULL], n))
    for e in full_vs:
        pairings.append((players[FULL], players[f"fsf{e}"], args.games))
    if not args.no_level_pairs:
        for lo, hi in zip(levels, levels[1:], strict=False):
            n = min(games_for.get(lo.key, args.games), games_for.get(hi.key, args.games))
            pairings.append((players[lo.key], players[hi.key], n))

    def count(a: Player, b: Player) -> int:
        return sum(1 for r in current if {r["red"], r["black"]} == {a.id, b.id})

    def per_game(a: Player, b: Player) -> float:
        """Mean thinking seconds of this pairing's games so far (+3 s of start-up), else the model's guess."""
        secs = [r["seconds"] for r in current if {r["red"], r["black"]} == {a.id, b.id} and "seconds" in r]
        return 3.0 + sum(secs) / len(secs) if secs else seconds_per_game(a, b)

    todo = [(a, b, n, count(a, b)) for a, b, n in pairings]
    left = sum(max(0, n - done) * per_game(a, b) for a, b, n, done in todo)
    for a, b, n, done in todo:
        print(f"  {a.id:>12} ({a.tc}) vs {b.id:<12} ({b.tc}): {done}/{n} played")
    print(f"estimated wall time: {left / 60 / max(1, args.concurrency):.0f} min at concurrency "
          f"{args.concurrency}", flush=True)

    if not (args.fit_only or args.dry_run):
        args.results.parent.mkdir(parents=True, exist_ok=True)
        for a, b, n, done in todo:
            if done >= n:
                continue

            def save(g: GameResult, res, a=a, b=b) -> None:
                ids = {a.spec.name: a.id, b.spec.name: b.id}
                rec = {"red": ids[g.red], "black": ids[g.black], "result": g.result, "reason": g.reason,
                       "opening": g.opening, "round": g.round, "plies": len(g.board.move_stack),
                       "seconds": round(sum(sum(ts) for ts in g.move_times.values()), 1),
                       "engine": fingerprint, "setup": {a.id: a.setup, b.id: b.setup},
                       "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
                with open(args.results, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                current.append(rec)
                print(f"  game {g.round}: {rec['red']} - {rec['black']} {g.result} ({g.reason})", flush=True)

            t0 = time.monotonic()
            res = run_match(a.spec, b.spec, n - done, a.tc, tc_b=b.tc, openings=OPENINGS,
                            concurrency=args.concurrency, first=done, on_game=save)
            print(res.summary().splitlines()[0] + f" ({time.monotonic() - t0:.0f} s)", flush=True)

    if args.dry_run:
        return 0
    ratings = fit(current, anchors, args.prior_draws)
    if not ratings:
        print("no games to fit")
        return 1
    print(f"\nFit of {len(current)} games (Elo logistic model, anchors: Fairy-Stockfish UCI_Elo, "
          f"95% errors):")
    print(f"{'level':<14} {'Elo':>6} {'± 95%':>6} {'games':>6}  rank")
    for lv in BASE_LEVELS.values():
        r = ratings.get(lv.key)
        if r is not None:
            print(f"{lv.name_zh} {lv.key:<11} {r.elo:6.0f} {r.error:6.0f} {r.games:6d}  {rank_name(r.elo)}")
    if FULL in ratings:
        r = ratings[FULL]
        print(f"Fairy-Stockfish full strength ({FULL}) {r.elo:6.0f} {r.error:6.0f} {r.games:6d}")
    used = sorted((p for p in ratings if p in anchors), key=lambda p: anchors[p])
    print("anchors: " + ", ".join(f"{p} ({ratings[p].games} games)" for p in used))
    print("\n" + "\n".join(pairing_lines(current, ratings)))
    if args.write:
        from xiangqi.engine import nnue

        evaluation = "nnue" if nnue.selected() else os.environ.get("XIANGQI_EVAL", "")
        table = {lv.key: {"elo": int(round(ratings[lv.key].elo)), "error": int(round(ratings[lv.key].error)),
                          "games": ratings[lv.key].games, "evaluation": evaluation, "engine": fingerprint}
                 for lv in BASE_LEVELS.values() if lv.key in ratings}
        command = "python bench/calibrate_levels.py " + " ".join(
            shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
        data = {"levels": table,
                "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
                "command": command,
                "engine": fingerprint + "".join(f" (and the games of {fp}, --same-engine)"
                                                for fp in args.same_engine),
                "conditions": (f"each level at its in-game settings vs Fairy-Stockfish ({args.fsf}) with "
                               f"UCI_LimitStrength at {fsf_tc}, and neighbouring levels; Elo on "
                               f"Fairy-Stockfish's UCI_Elo scale; {os.cpu_count()} CPUs, concurrency "
                               f"{args.concurrency}; see bench/calibrate_levels.py"
                               + (f"; {args.note}" if args.note else "")),
                }
        args.elo_file.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.elo_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
