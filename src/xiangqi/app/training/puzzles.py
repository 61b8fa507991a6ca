"""The puzzle trainer behind the page's puzzle mode: attempts, judging moves, ratings and progress.

Puzzles come from :func:`xiangqi.study.puzzles.load_puzzles` (the shipped CCPD set) plus the mined
ones in ``<data dir>/puzzles/mined.jsonl`` (``xiangqi puzzles mine``). An :class:`Attempt` is one
try at one puzzle, kept in memory (at most :data:`MAX_ATTEMPTS`, the oldest dropped).

Judging a move (:meth:`Trainer.move`):

- the solution's move is right; the opponent answers with the solution's next move;
- in a mate puzzle any move that mates at once is right (lichess accepts every mate in one);
- any other legal move is asked of the engine (depth :data:`xiangqi.study.puzzles.DEFAULT_DEPTH`,
  a private engine): it is right when the solver still wins clearly afterwards (win chance >=
  :data:`~xiangqi.study.puzzles.WIN_MIN`; in a mate puzzle a forced mate within the moves left);
  the opponent then plays the engine's best defence and the attempt goes on off the book, judged the
  same way, until the goal is reached (mate; the material gain; for a won ending, as many moves as the
  solution has);
- a wrong move is taken back: the player retries from the same position.

Ratings (Glicko-2, :mod:`xiangqi.study.rating`): when an attempt ends (solved, or the solution shown)
the player and the puzzle play one game: the player scores 1 for a solve with no wrong move, no
hint and no solution, else 0, and the puzzle the opposite. A puzzle starts at its data file's rating
with RD :data:`PUZZLE_RD`. The next puzzle (:meth:`Trainer.next_puzzle`) is one not yet solved,
drawn at random from those nearest to the player's rating (within :data:`NEAR` points, widened in
steps of :data:`NEAR` until some match the filter).

State in the app's SQLite store (its own tables, created on first use): ``puzzle_player`` (the
player's rating, streak, best streak, counts), ``puzzle_ratings`` (per puzzle), ``puzzle_progress``
(per puzzle: ``solved``/``failed``, attempts, last time).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import random
import threading
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from xiangqi.core.board import Board, Move, square_name
from xiangqi.study import puzzles as P
from xiangqi.study import rating as G

__all__ = ["Trainer", "Attempt", "PuzzleError", "MAX_ATTEMPTS", "PUZZLE_RD", "NEAR"]

MAX_ATTEMPTS = 64
#: RD of a puzzle's start rating (its seed from the data file is a guess).
PUZZLE_RD = 250.0
#: Width of the rating window the next puzzle is drawn from (Glicko points).
NEAR = 150.0

_meta = sa.MetaData()
player_table = sa.Table(
    "puzzle_player", _meta,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("rating", sa.Float, nullable=False), sa.Column("rd", sa.Float, nullable=False),
    sa.Column("volatility", sa.Float, nullable=False),
    sa.Column("streak", sa.Integer, nullable=False, server_default="0"),
    sa.Column("best_streak", sa.Integer, nullable=False, server_default="0"),
    sa.Column("solved", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failed", sa.Integer, nullable=False, server_default="0"),
)
rating_table = sa.Table(
    "puzzle_ratings", _meta,
    sa.Column("puzzle_id", sa.String(80), primary_key=True),
    sa.Column("rating", sa.Float, nullable=False), sa.Column("rd", sa.Float, nullable=False),
    sa.Column("volatility", sa.Float, nullable=False),
    sa.Column("plays", sa.Integer, nullable=False, server_default="0"),
)
progress_table = sa.Table(
    "puzzle_progress", _meta,
    sa.Column("puzzle_id", sa.String(80), primary_key=True),
    sa.Column("status", sa.String(10), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last", sa.String(32), nullable=False),
)


class PuzzleError(Exception):
    """A request the trainer refuses: ``status`` is the HTTP status (404 unknown, 409 finished, 422
    illegal move)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclasses.dataclass
class Attempt:
    """One try at one puzzle. ``board`` the position now (solver to move unless done);
    ``ply`` the index into the solution while ``on_book``; ``solver_moves`` made so far."""

    id: str
    puzzle: P.Puzzle
    board: Board
    ply: int = 0
    on_book: bool = True
    solver_moves: int = 0
    wrong: int = 0
    hints: int = 0
    shown: bool = False
    done: bool = False
    rated: bool = False
    played: list[str] = dataclasses.field(default_factory=list)
    rating_change: dict | None = None
    #: One request at a time per attempt (the routes run in a thread pool: a double click).
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def clean(self) -> bool:
        """True when the attempt counts as a solve for the ratings."""
        return not (self.wrong or self.hints or self.shown)


def _dests(board: Board) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in board.legal_moves:
        text = m.iccs()
        out.setdefault(text[:2], []).append(text)
    return out


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Trainer:
    """Puzzles, attempts and ratings over a store's database (``engine`` an SQLAlchemy engine, e.g.
    ``Store.engine``; ``data_dir`` for the mined puzzles). ``puzzles`` replaces the loaded set (tests).
    ``search_engine``: an :class:`xiangqi.engine.Engine` for judging moves (made on first need)."""

    def __init__(self, db: sa.Engine, data_dir: str | Path | None = None, *,
                 puzzles: list[P.Puzzle] | None = None, search_engine=None, seed: int | None = None) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._engine_lock = threading.Lock()
        self._search_engine = search_engine
        self._rng = random.Random(seed)
        self.attempts: collections.OrderedDict[str, Attempt] = collections.OrderedDict()
        if puzzles is None:
            puzzles = P.load_puzzles()
            if data_dir is not None:
                mined = Path(data_dir) / "puzzles" / "mined.jsonl"
                try:
                    puzzles += P.load_puzzles(mined)
                except (OSError, ValueError, KeyError, TypeError):
                    pass  # a damaged mined file: the shipped set still works
        self.puzzles = {p.id: p for p in puzzles}
        self._ready = False

    # -- storage ---------------------------------------------------------------

    def _tables(self) -> None:
        if not self._ready:
            _meta.create_all(self.db)
            self._ready = True

    def player(self) -> dict[str, Any]:
        """``{"rating", "rd", "volatility", "streak", "best_streak", "solved", "failed"}``."""
        self._tables()
        with self.db.connect() as conn:
            row = conn.execute(sa.select(player_table).where(player_table.c.id == 1)).mappings().first()
        if row is None:
            r = G.Rating()
            return {"rating": r.rating, "rd": r.rd, "volatility": r.volatility, "streak": 0, "best_streak": 0,
                    "solved": 0, "failed": 0}
        keys = ("rating", "rd", "volatility", "streak", "best_streak", "solved", "failed")
        return {k: row[k] for k in keys}

    def puzzle_rating(self, pid: str) -> G.Rating:
        """The puzzle's Glicko-2 rating now (its seed until it has been played)."""
        self._tables()
        with self.db.connect() as conn:
            q = sa.select(rating_table).where(rating_table.c.puzzle_id == pid)
            row = conn.execute(q).mappings().first()
        if row is None:
            return G.Rating(self.puzzles[pid].rating, PUZZLE_RD)
        return G.Rating(row["rating"], row["rd"], row["volatility"])

    def progress(self) -> dict[str, str]:
        """``{puzzle id: "solved" | "failed"}`` of every puzzle tried."""
        self._tables()
        with self.db.connect() as conn:
            return {r.puzzle_id: r.status for r in conn.execute(sa.select(progress_table))}

    def _finish(self, a: Attempt) -> None:
        """Rate the attempt once (player vs puzzle) and store progress and the streak."""
        if a.rated:
            return
        a.rated = True
        pl = self.player()
        me = G.Rating(pl["rating"], pl["rd"], pl["volatility"])
        pz = self.puzzle_rating(a.puzzle.id)
        score = 1.0 if a.clean else 0.0
        me2 = G.update(me, [G.Result(pz.rating, pz.rd, score)])
        pz2 = G.update(pz, [G.Result(me.rating, me.rd, 1.0 - score)])
        streak = pl["streak"] + 1 if a.clean else 0
        values = {"rating": me2.rating, "rd": me2.rd, "volatility": me2.volatility, "streak": streak,
                  "best_streak": max(pl["best_streak"], streak),
                  "solved": pl["solved"] + (1 if a.clean else 0),
                  "failed": pl["failed"] + (0 if a.clean else 1)}
        status = "solved" if a.clean else "failed"
        with self.db.begin() as conn:
            if conn.execute(sa.select(player_table.c.id).where(player_table.c.id == 1)).first() is None:
                conn.execute(player_table.insert().values(id=1, **values))
            else:
                conn.execute(player_table.update().where(player_table.c.id == 1).values(**values))
            pid = a.puzzle.id
            old = conn.execute(sa.select(rating_table.c.plays).where(rating_table.c.puzzle_id == pid)).first()
            rv = {"rating": pz2.rating, "rd": pz2.rd, "volatility": pz2.volatility}
            if old is None:
                conn.execute(rating_table.insert().values(puzzle_id=a.puzzle.id, plays=1, **rv))
            else:
                conn.execute(rating_table.update().where(rating_table.c.puzzle_id == a.puzzle.id)
                             .values(plays=old.plays + 1, **rv))
            prev = conn.execute(sa.select(progress_table).where(progress_table.c.puzzle_id == pid)).first()
            if prev is None:
                conn.execute(progress_table.insert().values(puzzle_id=a.puzzle.id, status=status, attempts=1,
                                                            last=_now()))
            else:
                keep = "solved" if prev.status == "solved" else status
                conn.execute(progress_table.update().where(progress_table.c.puzzle_id == a.puzzle.id)
                             .values(status=keep, attempts=prev.attempts + 1, last=_now()))
        a.rating_change = {"before": round(me.rating, 1), "after": round(me2.rating, 1),
                           "rd": round(me2.rd, 1), "score": score, "streak": streak,
                           "puzzle_before": round(pz.rating, 1), "puzzle_after": round(pz2.rating, 1)}

    # -- catalogue -------------------------------------------------------------

    def _match(self, p: P.Puzzle, theme: str | None, source: str | None) -> bool:
        return ((not theme or theme in p.themes or theme == p.goal)
                and (not source or p.source.startswith(source)))

    def catalog(self, theme: str | None = None, source: str | None = None) -> dict[str, Any]:
        """Counts for the filters: ``{"count", "solved", "themes": {tag: n}, "sources": {src: n},
        "player"}``."""
        themes: dict[str, int] = {}
        sources: dict[str, int] = {}
        prog = self.progress()
        count = solved = 0
        for p in self.puzzles.values():
            for t in [p.goal, *p.themes]:
                themes[t] = themes.get(t, 0) + 1
            sources[p.source] = sources.get(p.source, 0) + 1
            if self._match(p, theme, source):
                count += 1
                solved += prog.get(p.id) == "solved"
        return {"count": count, "solved": solved, "themes": dict(sorted(themes.items())),
                "sources": dict(sorted(sources.items())), "player": self.player()}

    def next_puzzle(self, theme: str | None = None, source: str | None = None,
                    exclude: str | None = None) -> P.Puzzle | None:
        """A puzzle matching the filter, not solved yet (any, when all are), near the player's rating."""
        prog = self.progress()
        pool = [p for p in self.puzzles.values() if self._match(p, theme, source) and p.id != exclude]
        fresh = [p for p in pool if prog.get(p.id) != "solved"] or pool
        if not fresh:
            return None
        me = self.player()["rating"]
        with self.db.connect() as conn:
            now = {r.puzzle_id: r.rating for r in conn.execute(sa.select(rating_table.c.puzzle_id,
                                                                         rating_table.c.rating))}
        rated = [(abs(now.get(p.id, p.rating) - me), p) for p in fresh]
        width = NEAR
        while True:
            near = [p for d, p in rated if d <= width]
            if near:
                return self._rng.choice(sorted(near, key=lambda p: p.id))
            width += NEAR

    # -- attempts --------------------------------------------------------------

    def _get(self, aid: str) -> Attempt:
        a = self.attempts.get(aid)
        if a is None:
            raise PuzzleError(f"no attempt {aid!r} (it ended or the server restarted)", 404)
        return a

    def start(self, pid: str) -> dict[str, Any]:
        """Begin an attempt at puzzle ``pid``: :meth:`view` of the new attempt. 404 for an unknown id."""
        p = self.puzzles.get(pid)
        if p is None:
            raise PuzzleError(f"no puzzle {pid!r}", 404)
        a = Attempt(uuid.uuid4().hex[:16], p, Board(p.fen))
        with self._lock:
            self.attempts[a.id] = a
            while len(self.attempts) > MAX_ATTEMPTS:
                self.attempts.popitem(last=False)
        return self.view(a)

    def view(self, a: Attempt) -> dict[str, Any]:
        """What the page shows of an attempt."""
        p = a.puzzle
        pr = self.puzzle_rating(p.id)
        return {"attempt": a.id, "id": p.id, "fen": a.board.fen(), "start_fen": p.fen, "red": p.red,
                "goal": p.goal, "mate": p.mate, "goal_zh": P.goal_text(p.goal, p.mate, p.red, "zh"),
                "goal_en": P.goal_text(p.goal, p.mate, p.red, "en"), "themes": p.themes, "source": p.source,
                "ref": p.ref, "rating": round(pr.rating), "moves": (len(p.solution) + 1) // 2,
                "played": list(a.played), "dests": {} if a.done else _dests(a.board), "done": a.done,
                "check": square_name(a.board.king(a.board.turn)) if a.board.is_check() else None,
                "clean": a.clean, "rating_change": a.rating_change}

    def _engine(self):
        if self._search_engine is None:
            from xiangqi.engine.api import Engine

            self._search_engine = Engine(P.HASH_MB)
        return self._search_engine

    def _judge(self, board: Board, a: Attempt) -> tuple[bool, str | None]:
        """After the solver's move (on ``board``): ``(still winning, the engine's best reply)``."""
        from xiangqi.engine.api import Limit

        with self._engine_lock:
            eng = self._engine()
            eng.new_game()
            res = eng.search(board, Limit(depth=P.DEFAULT_DEPTH, time=5.0))
        if res.move is None:
            return True, None
        from xiangqi.study.review import eval_win_chance

        solver_win = -eval_win_chance(res.score_cp or 0, res.mate)
        if a.puzzle.goal == "mate":
            left = (a.puzzle.mate or 0) - a.solver_moves - 1  # solver moves left after this one
            ok = res.mate is not None and res.mate < 0 and -res.mate <= left
        else:
            ok = solver_win >= P.WIN_MIN
        return ok, res.move.iccs()

    def move(self, aid: str, text: str) -> dict[str, Any]:
        """Judge the solver's move ``text`` (ICCS): ``{"verdict": "right"|"wrong"|"solved", "reply":
        ICCS or None, **view}``. 422 for an illegal or malformed move, 409 when the attempt is over."""
        a = self._get(aid)
        with a.lock:
            return self._move(a, text)

    def _move(self, a: Attempt, text: str) -> dict[str, Any]:
        if a.done:
            raise PuzzleError("the puzzle is already finished", 409)
        try:
            mv = Move.from_iccs(text)
        except Exception:
            raise PuzzleError(f"not an ICCS move: {text!r}") from None
        if not a.board.is_legal(mv):
            raise PuzzleError(f"illegal move {mv.iccs()} in {a.board.fen()}")
        p = a.puzzle
        sol = p.solution
        iccs = mv.iccs()
        b = a.board
        b.push(mv)
        mates = not any(True for _ in b.legal_moves)
        reply: str | None = None
        if a.on_book and a.ply < len(sol) and sol[a.ply] == iccs:
            ok = True
            reply = sol[a.ply + 1] if a.ply + 1 < len(sol) else None
            finished = reply is None
        elif mates:
            ok, finished = True, True
        else:
            ok, reply = self._judge(b, a)
            a.on_book = False
            finished = False
        if not ok:
            b.pop()
            a.wrong += 1
            return {"verdict": "wrong", "reply": None, **self.view(a)}
        a.solver_moves += 1
        a.played.append(iccs)
        a.ply += 1
        if not finished and not a.on_book:
            gain = P._gain_after_recapture(b, p.red) - P.material_points(Board(p.fen), p.red)
            if p.goal == "material" and gain >= P.MATERIAL_MIN:
                finished = True
            elif p.goal == "win" and a.solver_moves >= (len(sol) + 1) // 2:
                finished = True
        if mates:
            finished = True
        if finished or reply is None:
            a.done = True
            self._finish(a)
            return {"verdict": "solved", "reply": None, **self.view(a)}
        b.push(Move.from_iccs(reply))
        a.played.append(reply)
        a.ply += 1
        return {"verdict": "right", "reply": reply, **self.view(a)}

    def hint(self, aid: str) -> dict[str, Any]:
        """The piece to move (first hint: ``{"from", "piece"}``, its square and FEN letter), then the whole
        move (``"move"`` ICCS, ``"text"`` Chinese notation, ``"text_en"`` WXF).
        Off the book the engine's best move. A hint makes the attempt count as failed for the ratings."""
        a = self._get(aid)
        with a.lock:
            return self._hint(a)

    def _hint(self, a: Attempt) -> dict[str, Any]:
        if a.done:
            raise PuzzleError("the puzzle is already finished", 409)
        best = self._best(a)
        a.hints += 1
        mv = Move.from_iccs(best)
        piece = a.board.piece_at(mv.from_square)
        out = {"from": best[:2], "piece": piece.symbol() if piece else None, "hints": a.hints}
        if a.hints >= 2:
            out.update({"move": best, "text": a.board.move_text(mv, "chinese"),
                        "text_en": a.board.move_text(mv, "wxf")})
        return out

    def _best(self, a: Attempt) -> str:
        if a.on_book and a.ply < len(a.puzzle.solution):
            return a.puzzle.solution[a.ply]
        from xiangqi.engine.api import Limit

        with self._engine_lock:
            eng = self._engine()
            eng.new_game()
            res = eng.search(a.board, Limit(depth=P.DEFAULT_DEPTH, time=5.0))
        return res.move.iccs()

    def solution(self, aid: str) -> dict[str, Any]:
        """Give up: ``{"solution": the whole line from the start, "rest": the moves from here}``; the
        attempt ends as failed (rated once)."""
        a = self._get(aid)
        with a.lock:
            return self._solution(a)

    def _solution(self, a: Attempt) -> dict[str, Any]:
        a.shown = True
        rest = list(a.puzzle.solution[a.ply:]) if a.on_book else []
        if not a.on_book and not a.done:
            rest = [self._best(a)]
        if not a.done:
            a.done = True
            self._finish(a)
        return {"solution": a.puzzle.solution, "rest": rest, **self.view(a)}
