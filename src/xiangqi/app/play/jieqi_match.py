"""揭棋 matches: ``xiangqi match A B --variant jieqi`` (the match tool's score, Elo and PGN).

Each game is a :class:`xiangqi.app.play.jieqi_game.JieqiGame` played by the page's code (every move
through :meth:`~xiangqi.app.play.jieqi_game.JieqiGame.play`, each player searching its own view of the
hidden pieces); the result, the Elo difference and the summary are
:class:`xiangqi.match.runner.MatchResult`'s. Games ``2k`` and ``2k+1`` share one deal (the same
identities under the same squares) with colours swapped, as the match tool's openings do.

Players: ``builtin`` / ``builtin:<level>`` (the 揭棋 search at level 1, 2 or 3 of
:data:`xiangqi.engine.jieqi_search.LEVELS`), ``random`` and ``greedy`` (the baselines of
:mod:`xiangqi.engine.jieqi_search`). External engines do not play 揭棋. The time control is a
time per move (``--tc 500ms``: the search's time, its depth the level's) or ``depth=N`` (no time
limit); without ``--tc`` each level's own (depth, seconds).
"""

from __future__ import annotations

import dataclasses
import random as _random
import time
from collections.abc import Callable
from typing import Any

from xiangqi.core.jieqi import JieqiBoard, JieqiMove, deal, write_pgn
from xiangqi.engine.jieqi_search import LEVELS, JieqiSearch, greedy_mover, random_mover
from xiangqi.match.runner import GameResult, MatchError, MatchResult, TimeControl

__all__ = ["JieqiPlayer", "JieqiMatchResult", "play_jieqi_game", "run_jieqi_match", "cmd_match_jieqi"]

DEFAULT_PLY_CAP = 300


@dataclasses.dataclass(frozen=True)
class JieqiPlayer:
    """A 揭棋 match player: ``name`` as given, ``kind`` builtin/random/greedy, ``depth`` and
    ``movetime`` (seconds) of a builtin search."""

    name: str
    kind: str
    depth: int = 2
    movetime: float = 1.0

    @classmethod
    def parse(cls, spec: str, tc: TimeControl | None = None) -> JieqiPlayer:
        """``builtin[:1|2|3]``, ``random`` or ``greedy``; ``tc`` a movetime or depth (module text).
        Raises :class:`~xiangqi.match.runner.MatchError` for anything else."""
        s = spec.strip()
        if s in ("random", "greedy"):
            return cls(s, s)
        head, _, level = s.partition(":")
        if head != "builtin":
            raise MatchError(f"{spec!r} cannot play 揭棋: players are builtin[:1|2|3], random or greedy")
        level = level or "2"
        if level not in LEVELS:
            raise MatchError(f"揭棋 levels are {', '.join(LEVELS)}, got {level!r}")
        depth, secs = LEVELS[level]
        if tc is not None:
            if tc.movetime is not None:
                secs = tc.movetime
            elif tc.depth is not None:
                depth, secs = tc.depth, 3600.0
            else:
                raise MatchError(f"a 揭棋 match takes a time per move or depth=N, not {tc}")
        return cls(s, "builtin", depth, secs)

    def mover(self, rng: _random.Random) -> Callable[[JieqiBoard], JieqiMove | None]:
        """A function from a view to a move (without identities), None when there is none."""
        if self.kind == "random":
            return random_mover(rng)
        if self.kind == "greedy":
            return greedy_mover(rng)
        search = JieqiSearch(self.depth, self.movetime)
        return lambda board: search.search(board).move


@dataclasses.dataclass
class JieqiGameResult(GameResult):
    """A finished 揭棋 game of a match: :class:`GameResult` with the game itself (``game``)."""

    game: Any = None


class JieqiMatchResult(MatchResult):
    """:class:`MatchResult` whose games are 揭棋 games (their PGN in the FEN/move extension)."""

    def game_pgn(self, g: GameResult) -> str:
        """One game as 揭棋 PGN (:func:`xiangqi.core.jieqi.write_pgn`); the reason in Termination."""
        headers = {
            "Event": f"{self.a} vs {self.b}",
            "Round": str(g.round),
            "Red": g.red,
            "Black": g.black,
            "Opening": g.opening,
            "TimeControl": self.tc_text,
            "Termination": g.reason,
        }
        return write_pgn(headers, g.game.board, g.result)


def play_jieqi_game(
    red: JieqiPlayer,
    black: JieqiPlayer,
    deals: dict[int, str],
    rng: _random.Random,
    *,
    ply_cap: int = DEFAULT_PLY_CAP,
    round_no: int = 1,
    opening: str = "",
) -> JieqiGameResult:
    """Play one game; a game that reaches ``ply_cap`` plies is a draw."""
    from xiangqi.app.play.jieqi_game import JieqiGame

    game = JieqiGame(red="engine", black="engine", deals=dict(deals), capture_reveal="capturer")
    movers = {True: red.mover(rng), False: black.mover(rng)}
    times: dict[str, list[float]] = {red.name: [], black.name: []}
    reason = ""
    while True:
        out = game.outcome
        if out is not None:
            result, reason = out.result(), out.reason_en
            break
        if len(game.board.moves) >= ply_cap:
            result, reason = "1/2-1/2", f"Draw — ply cap {ply_cap}"
            break
        side = game.board.turn
        t0 = time.monotonic()
        mv = movers[side](game.view(side))
        times[(red if side else black).name].append(time.monotonic() - t0)
        if mv is None:  # cannot happen: the outcome above covers a side without moves
            raise MatchError("a player found no move in a game that is not over")
        game.play(mv.iccs)
    return JieqiGameResult(red.name, black.name, opening, result, reason, None, round_no, times, game=game)


def run_jieqi_match(
    a: JieqiPlayer,
    b: JieqiPlayer,
    games: int,
    *,
    seed: int | None = None,
    ply_cap: int = DEFAULT_PLY_CAP,
    tc: TimeControl | None = None,
    on_game: Callable[[GameResult, MatchResult], None] | None = None,
) -> JieqiMatchResult:
    """Play ``games`` games, A with Red in the odd-numbered ones; pairs share a deal. ``seed``
    makes the deals and the baselines' choices repeatable. Raises :class:`MatchError` for
    ``games < 1``."""
    if games < 1:
        raise MatchError(f"games must be >= 1, got {games}")
    if a.name == b.name:
        b = dataclasses.replace(b, name=b.name + "#2")
    rng = _random.Random(seed)
    result = JieqiMatchResult(a.name, b.name, tc or TimeControl(movetime=a.movetime))
    pair_deal: dict[int, str] = {}
    for i in range(games):
        if i % 2 == 0:
            pair_deal = deal(rng)
        red, black = (a, b) if i % 2 == 0 else (b, a)
        g = play_jieqi_game(
            red,
            black,
            pair_deal,
            _random.Random(rng.random()),
            ply_cap=ply_cap,
            round_no=i + 1,
            opening=f"deal {i // 2 + 1}",
        )
        result.games.append(g)
        if on_game is not None:
            on_game(g, result)
    return result


def cmd_match_jieqi(args: Any) -> int:
    """``xiangqi match A B --variant jieqi``: the games printed one by one, then the score and Elo
    (and the PGN file when ``--pgn``)."""
    tc = TimeControl.parse(args.tc) if args.tc is not None else None
    a = JieqiPlayer.parse(args.a, tc)
    b = JieqiPlayer.parse(args.b, tc)
    mode = ["w"]

    def report(g: GameResult, res: MatchResult) -> None:
        print(
            f"Game {g.round}: {g.red} vs {g.black} ({g.opening}): {g.result} {g.reason}  "
            f"[{res.wins} - {res.losses} - {res.draws}]",
            flush=True,
        )
        if args.pgn:
            with open(args.pgn, mode[0], encoding="utf-8") as fh:
                fh.write(res.game_pgn(g) + "\n")
            mode[0] = "a"

    res = run_jieqi_match(
        a, b, args.games, seed=getattr(args, "seed", None), ply_cap=args.ply_cap, tc=tc, on_game=report
    )
    print(res.summary())
    if args.pgn:
        print(f"PGN: {args.pgn}")
    return 0
