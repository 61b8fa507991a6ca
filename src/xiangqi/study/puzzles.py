"""Puzzles (残局 / 杀法练习): checked by the engine, imported from collections and mined from games.

A :class:`Puzzle` is a position, the side to move (the solver), a goal and the solution line
(ICCS, the solver's moves and the replies alternating, starting and ending with a solver move):

- ``mate``: the line ends in checkmate (or stalemate, which loses in xiangqi) after ``mate``
  solver moves, the engine's mate distance at the start (三步杀 = mate in 3);
- ``material``: after the line the solver is at least :data:`MATERIAL_MIN` points up on the start
  (车 9, 马 4, 炮 4.5, 士 象 2, 兵 1), counted after the defender's best immediate recapture;
- ``win``: a won ending (残局): the line keeps a clear win (win chance at least :data:`WIN_MIN`,
  or the endgame table's win) without a mate or material goal in reach.

How a position becomes a puzzle (the lichess/pychess method, `ornicar/lichess-puzzler`'s
``is_valid_attack``): the engine searches the start with two lines (multi-PV 2, depth
:data:`DEFAULT_DEPTH`, its own transposition table cleared). The first move must be *the only
clearly winning move*: the best line's win chance (:func:`xiangqi.study.review.eval_win_chance`,
-100..100 from the solver's side) is at least :data:`WIN_MIN`, the second best's is at least
:data:`MARGIN` lower (lichess: 0.7 on its -1..1 scale, i.e. 70 here), and the best move is the
collection's (or game's) move. A mate in one passes when the second move is no mate and its win
chance is at most :data:`MATE1_SECOND_MAX` (lichess's ``is_valid_mate_in_one``); at the last
move of a mate any mating move is accepted by the puzzle mode. Where an endgame table holds the position
(``tablebase=``), the table decides instead: it must be a win with exactly one winning move.

Then the line is followed: the solver's recorded moves while the engine still calls them winning
(a search of the position after the move), the engine's own move where the record ends or the
defence left it; the defender plays the recorded reply, except in a mate puzzle, where it plays the
engine's best defence (so that "三步杀" really takes three moves). The line stops at the goal.
Rejected positions get one reason of :data:`REASONS`.

Sources: :func:`candidates_from_game` decides per record: a record that starts from its own FEN
(CCPD 中局, 殘局 and most of 殺局_殺法_練習題) *is* the puzzle, the side to move solving; a record
of a whole game from the opening position (CCPD 全盤戰術 and the rest of 殺局) holds the puzzle
where the winner's decisive sequence begins: scanning the winner's positions back from the end,
the earliest one of the final run that the engine calls clearly winning (:func:`decisive_start`),
then forward to the first that verifies. Mining games (:func:`mine_game`) uses the same scan.

Data: the verified CCPD puzzles ship in ``study/data/puzzles.jsonl`` (credit in the README
beside it: Yu-Han Tseng and Bo-Nian Chen (2026), Chinese Chess Practical Dataset (CCPD),
CC BY 4.0); :func:`load_puzzles` reads it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tarfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from xiangqi.core.board import (
    ADVISOR,
    CANNON,
    ELEPHANT,
    HORSE,
    KING,
    PAWN,
    ROOK,
    STARTING_BOARD_FEN,
    Board,
    Move,
    in_palace,
    square_file,
    square_rank,
)
from xiangqi.study.review import eval_win_chance

__all__ = ["Puzzle", "Rejected", "Verdict", "verify", "candidates_from_game", "decisive_start",
           "mine_game", "material_points", "themes_of", "load_puzzles", "iter_collection", "ImportRun",
           "WIN_MIN", "MARGIN", "MATE1_SECOND_MAX", "MATERIAL_MIN", "DEFAULT_DEPTH", "REASONS",
           "DATA_FILE", "COLLECTIONS", "goal_text", "normalise"]

#: Win chance (-100..100, solver's side) the best move must reach: about +2.7 pawns (265 cp).
WIN_MIN = 70.0
#: How far below the best the second-best move must be (lichess-puzzler: 0.7 on -1..1).
MARGIN = 70.0
#: A mate in one passes when the second-best move's win chance is at most this (lichess: 0.5).
MATE1_SECOND_MAX = 50.0
#: Points the solver must gain for a ``material`` goal (a horse or a cannon or more).
MATERIAL_MIN = 3.0
#: Search depth of every check (plies); results depend on it and on the hash size.
DEFAULT_DEPTH = 8
HASH_MB = 16
#: The longest mate made into a ``mate`` puzzle, and the longest line otherwise (solver moves).
MAX_MATE = 7
MAX_LINE = 5
#: Material points per piece type (the values used in Chinese teaching texts: 车 9, 马 4, 炮 4.5,
#: 士 2, 象 2, 兵 1; the king 0).
POINTS = {KING: 0.0, ADVISOR: 2.0, ELEPHANT: 2.0, HORSE: 4.0, ROOK: 9.0, CANNON: 4.5, PAWN: 1.0}
#: Why a position is not a puzzle.
REASONS = {
    "bad_record": "the record cannot be read or played",
    "no_winner": "drawn or unknown result, or the side to move is not the winner",
    "game_over": "no move to play (the game is over at the puzzle's position)",
    "not_winning": "the engine finds no clearly winning move",
    "not_unique": "a second move wins as well (first move not the only clearly winning one)",
    "other_move": "the engine's only winning move is not the recorded one",
    "goal_not_reached": "the line reaches no mate, no material gain and no won ending",
    "no_decisive_moment": "no position of the game's final run is clearly winning",
}
DATA_FILE = Path(__file__).with_name("data") / "puzzles.jsonl"
#: The CCPD folders imported, by their (Big5, traditional) names, with the English label.
COLLECTIONS = {"殺局_殺法_練習題": "mating", "殘局": "endgame", "全盤戰術": "whole-game tactics",
               "中局": "midgame"}


def goal_text(goal: str, mate: int | None, red: bool, lang: str = "zh") -> str:
    """The puzzle's task as shown: ``红先胜`` / ``三步杀`` / ``红先得子``; English with ``lang="en"``."""
    digits = "零一二三四五六七八九十"
    side = ("红" if red else "黑") if lang == "zh" else ("Red" if red else "Black")
    if goal == "mate" and mate:
        if lang == "zh":
            n = digits[mate] if mate <= 10 else str(mate)
            return f"{side}先 · {n}步杀"
        return f"{side} to move: mate in {mate}"
    if goal == "material":
        return f"{side}先得子" if lang == "zh" else f"{side} to move and win material"
    return f"{side}先胜" if lang == "zh" else f"{side} to move and win"


@dataclasses.dataclass
class Puzzle:
    """A checked puzzle. ``fen`` the start, ``solution`` ICCS moves (solver first and last),
    ``goal`` ``mate|material|win``, ``mate`` solver moves to mate (mate goal), ``themes`` tags,
    ``source`` ``ccpd/<collection>`` or ``mined``, ``ref`` the record (file, ply), ``rating``
    the puzzle's Glicko-2 start rating, ``check`` the engine's numbers at the start."""

    id: str
    fen: str
    solution: list[str]
    goal: str
    mate: int | None
    themes: list[str]
    source: str
    ref: dict
    rating: float
    check: dict

    @property
    def red(self) -> bool:
        """True when Red solves."""
        return self.fen.split()[1] in ("w", "r")

    def to_dict(self) -> dict:
        """JSON-ready fields (one line of the data file)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Puzzle:
        """Inverse of :meth:`to_dict`; KeyError/TypeError on a malformed line."""
        return cls(id=str(d["id"]), fen=str(d["fen"]), solution=[str(m) for m in d["solution"]],
                   goal=str(d["goal"]), mate=d.get("mate"), themes=[str(t) for t in d.get("themes", [])],
                   source=str(d["source"]), ref=dict(d.get("ref", {})), rating=float(d.get("rating", 1500)),
                   check=dict(d.get("check", {})))


@dataclasses.dataclass
class Rejected:
    """A position that is not a puzzle: ``reason`` is a key of :data:`REASONS`; ``detail`` numbers."""

    reason: str
    detail: str = ""


Verdict = Puzzle | Rejected


# ---------------------------------------------------------------------------
# Material and themes
# ---------------------------------------------------------------------------

def material_points(board: Board, red: bool) -> float:
    """Points of ``red``'s side minus the other side's (:data:`POINTS`)."""
    total = 0.0
    for p in board.squares:
        if p:
            v = POINTS[abs(p)]
            total += v if (p > 0) == red else -v
    return total


def _gain_after_recapture(board: Board, red: bool) -> float:
    """Material for ``red`` after the side to move (the defender) makes its best capture (or none)."""
    base = material_points(board, red)
    worst = base
    for m in board.legal_moves:
        p = board.squares[m.to_square]
        if p:
            worst = min(worst, base - POINTS[abs(p)])
    return worst


def _is_mated(board: Board) -> bool:
    return not any(True for _ in board.legal_moves)


def _men_gong(board: Board) -> bool:
    """闷宫: the side to move is mated by a cannon alone and every palace square next to its king
    is taken by its own pieces (it is smothered by its advisors/elephants/pieces)."""
    if not board.is_check() or not _is_mated(board):
        return False
    checkers = board.checkers()
    if len(checkers) != 1 or abs(board.squares[checkers[0]]) != CANNON:
        return False
    color = board.turn
    k = board.king(color)
    f, r = square_file(k), square_rank(k)
    own = 1 if color else -1
    for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        nf, nr = f + df, r + dr
        if not (0 <= nf <= 8 and 0 <= nr <= 9):
            continue
        sq = nr * 9 + nf
        if not in_palace(sq, color):
            continue
        p = board.squares[sq]
        if not p or (p > 0) != (own > 0):
            return False
    return True


def themes_of(fen: str, solution: Sequence[str], goal: str, mate: int | None) -> list[str]:
    """Mechanical theme tags of a line (no judgement):

    - ``mateIn1``.. ``mateIn5``, ``mateLong`` (more): the goal is mate in N;
    - ``menGong`` 闷宫: the final mate is by a cannon with every palace square next to the king
      taken by the king's own pieces;
    - ``winRook`` 得车: the defender loses more rooks in the line than the solver;
    - ``chouJiang`` 抽将: a solver move gives check with a piece other than the one moved
      (discovered check) or with two pieces, and the solver's next move takes a horse, cannon or
      rook that is not giving check.
    Raises on an illegal line (callers check lines first).
    """
    board = Board(fen)
    red = board.turn
    tags: list[str] = []
    if goal == "mate" and mate:
        tags.append(f"mateIn{mate}" if mate <= 5 else "mateLong")
    rooks = {True: 0, False: 0}  # rooks lost by each side in the line
    pending_discovery = False
    chou = False
    for i, text in enumerate(solution):
        mv = Move.from_iccs(text)
        solver_move = i % 2 == 0
        captured = board.squares[mv.to_square]
        if solver_move and pending_discovery and captured and abs(captured) in (HORSE, CANNON, ROOK):
            chou = True
        if captured and abs(captured) == ROOK:
            rooks[captured > 0] += 1
        board.push(mv)
        if solver_move:
            pending_discovery = False
            if board.is_check():
                checkers = board.checkers()
                if len(checkers) >= 2 or any(c != mv.to_square for c in checkers):
                    pending_discovery = True
    if chou:
        tags.append("chouJiang")
    if rooks[not red] > rooks[red]:
        tags.append("winRook")
    if _men_gong(board):  # the line ends in this mate (whatever the stated goal)
        tags.append("menGong")
    return tags


def _start_rating(goal: str, solver_moves: int) -> float:
    """Glicko-2 start rating of a new puzzle: 1200 plus 150 per solver move after the first
    (a seed only; players' results move it), at most 2400."""
    return float(min(2400, 1200 + 150 * (solver_moves - 1) + (100 if goal == "win" else 0)))


# ---------------------------------------------------------------------------
# Engine checks
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class _Line:
    move: str
    win: float  # solver's side (the side to move at the root), -100..100
    cp: int | None
    mate: int | None  # > 0: side to move mates in N


def _engine():
    from xiangqi.engine.api import Engine

    return Engine(HASH_MB)


def _two_lines(engine, board: Board, depth: int) -> list[_Line]:
    """The best two root moves by a multi-PV 2 search (clean tables); empty when no legal move."""
    from xiangqi.engine.api import Limit

    engine.new_game()
    infos: dict[int, object] = {}

    def keep(info) -> None:
        infos[info.multipv] = info

    res = engine.search(board, Limit(depth=depth), multipv=2, on_info=keep)
    if res.move is None:
        return []
    lines = []
    for k in sorted(infos):
        info = infos[k]
        if not info.pv:
            continue
        lines.append(_Line(info.pv[0].iccs(), eval_win_chance(info.score_cp or 0, info.mate),
                           info.score_cp, info.mate))
    if not lines or lines[0].move != res.move.iccs():
        lines.insert(0, _Line(res.move.iccs(), eval_win_chance(res.score_cp or 0, res.mate), res.score_cp,
                              res.mate))
    return lines[:2]


def _search(engine, board: Board, depth: int):
    """One line: ``(best move ICCS or None, win chance of the side to move, mate)``."""
    from xiangqi.engine.api import Limit

    engine.new_game()
    res = engine.search(board, Limit(depth=depth))
    if res.move is None:
        return None, -100.0, 0
    return res.move.iccs(), eval_win_chance(res.score_cp or 0, res.mate), res.mate


def _unique(lines: list[_Line]) -> str | None:
    """None when the first line is the only clearly winning move, else the reason."""
    best = lines[0]
    second = lines[1] if len(lines) > 1 else None
    if best.win < WIN_MIN:
        return "not_winning"
    if second is None:
        return None
    if best.mate == 1:
        if second.mate is not None and second.mate > 0:
            return "not_unique"
        return None if second.win <= MATE1_SECOND_MAX else "not_unique"
    return None if best.win - second.win >= MARGIN else "not_unique"


def _tb_winning_moves(tb, board: Board) -> tuple[str, list[str], int | None] | None:
    """``(wdl, winning moves, dtm)`` of a position in an endgame table, None outside them."""
    try:
        pr = tb.probe(board)
    except Exception:  # a damaged table file: no table verdict
        return None
    if pr is None:
        return None
    wins = []
    for m in list(board.legal_moves):
        board.push(m, validate=False)
        try:
            child = tb.value(board)
        finally:
            board.pop()
        if child is not None and child[0] < 0 and child[0] != -32768:
            wins.append(m.iccs())
    return pr.wdl, wins, pr.dtm


def verify(fen: str, line: Sequence[str], *, engine=None, depth: int = DEFAULT_DEPTH, tablebase=None,
           source: str = "", ref: dict | None = None, pid: str = "", allow_win_goal: bool = True) -> Verdict:
    """Check the position ``fen`` with its recorded continuation ``line`` (ICCS; the first move is the
    solver's, may be empty for a mined position) and make it a :class:`Puzzle`, or say why not.

    ``engine`` an :class:`xiangqi.engine.Engine` (a new one with :data:`HASH_MB` MB when None);
    ``tablebase`` an :class:`xiangqi.engine.tablebase.Tablebase` consulted where it holds the start;
    ``allow_win_goal``: a line that reaches neither mate nor material may still be a ``win``
    puzzle (endings); else it is rejected (``goal_not_reached``). The rules are the module's.
    """
    try:
        board = Board(fen)
        for text in line:  # the recorded line must be legal as a whole
            board.push(Move.from_iccs(text))
    except Exception as exc:
        return Rejected("bad_record", str(exc))
    board = Board(fen)
    red = board.turn
    if _is_mated(board):
        return Rejected("game_over")
    engine = engine if engine is not None else _engine()
    check: dict = {"depth": depth}
    tb_info = _tb_winning_moves(tablebase, board) if tablebase is not None else None
    if tb_info is not None:
        wdl, wins, dtm = tb_info
        check.update({"tablebase": wdl, "dtm": dtm, "winning_moves": len(wins)})
        if wdl != "win":
            return Rejected("not_winning", f"tablebase: {wdl}")
        if len(wins) > 1:
            return Rejected("not_unique", f"tablebase: {len(wins)} winning moves")
        first = wins[0]
        root_mate = (dtm + 1) // 2 if dtm is not None else None
    else:
        lines = _two_lines(engine, board, depth)
        if not lines:
            return Rejected("game_over")
        check.update({"best": lines[0].move, "win": round(lines[0].win, 1), "mate": lines[0].mate})
        if len(lines) > 1:
            check.update({"second": lines[1].move, "second_win": round(lines[1].win, 1),
                          "second_mate": lines[1].mate})
        why = _unique(lines)
        if why:
            return Rejected(why, json.dumps(check, ensure_ascii=False))
        first = lines[0].move
        root_mate = lines[0].mate if lines[0].mate is not None and lines[0].mate > 0 else None
    if line and line[0] != first:
        return Rejected("other_move", f"engine {first}, record {line[0]}")
    goal_mate = root_mate is not None and root_mate <= MAX_MATE
    start_points = material_points(board, red)
    solution: list[str] = []
    on_record = True
    mv = first
    solver_moves = 0
    goal = None
    limit = MAX_MATE if goal_mate else MAX_LINE
    while True:
        board.push(Move.from_iccs(mv))
        solution.append(mv)
        solver_moves += 1
        if on_record and (len(solution) > len(line) or line[len(solution) - 1] != mv):
            on_record = False
        if _is_mated(board):
            goal = "mate"
            break
        if not goal_mate and _gain_after_recapture(board, red) - start_points >= MATERIAL_MIN:
            goal = "material"
            break
        if solver_moves >= limit:
            break
        # the defender's reply
        reply, dwin, dmate = _search(engine, board, depth)
        if reply is None:
            goal = "mate"
            break
        if -dwin < WIN_MIN:  # the solver's last move no longer wins clearly: the line ends before it
            for _ in range(2 if len(solution) > 1 else 1):
                solution.pop()
                board.pop()
            solver_moves -= 1
            break
        if not goal_mate and on_record and len(line) > len(solution):
            reply = line[len(solution)]
        else:
            on_record = on_record and len(line) > len(solution) and line[len(solution)] == reply
        board.push(Move.from_iccs(reply))
        solution.append(reply)
        # the solver's next move: the recorded one while it still wins, else the engine's
        nxt = line[len(solution)] if on_record and len(line) > len(solution) else None
        best, swin, smate = _search(engine, board, depth)
        if best is None or swin < WIN_MIN:
            solution.pop()
            board.pop()
            break
        if nxt is not None and nxt != best:
            board.push(Move.from_iccs(nxt))
            _r, nwin, _m = _search(engine, board, depth)
            board.pop()
            if -nwin >= WIN_MIN and not (goal_mate and (_m is None or _m >= 0)):
                best = nxt
            else:
                on_record = False
        mv = best
    if goal is None:
        if goal_mate:
            return Rejected("goal_not_reached", f"engine mate in {root_mate}, line {solution}")
        if not solution or not allow_win_goal:
            return Rejected("goal_not_reached", f"line {solution}")
        goal = "win"
    mate_n = solver_moves if goal == "mate" else None
    themes = themes_of(fen, solution, goal, mate_n)
    return normalise(Puzzle(id=pid, fen=fen, solution=solution, goal=goal, mate=mate_n, themes=themes,
                            source=source, ref=dict(ref or {}), rating=_start_rating(goal, solver_moves),
                            check=check))


def normalise(p: Puzzle) -> Puzzle:
    """A ``mate`` goal only when the engine's (or the table's) forced mate at the start has the
    line's length: a line that mates sooner (a weak defence in the record) or a mate the search did
    not see at the start is stated as ``win`` (the line still ends in mate). Themes follow."""
    if p.goal != "mate":
        return p
    dtm = p.check.get("dtm")
    forced = p.check.get("mate") if "tablebase" not in p.check else ((dtm + 1) // 2 if dtm else None)
    if forced == p.mate:
        return p
    return dataclasses.replace(p, goal="win", mate=None, themes=themes_of(p.fen, p.solution, "win", None),
                               rating=_start_rating("win", (len(p.solution) + 1) // 2))


# ---------------------------------------------------------------------------
# Records: which position is the puzzle
# ---------------------------------------------------------------------------

def _winner(result: str | None) -> bool | None:
    return {"1-0": True, "0-1": False}.get((result or "").strip())


def decisive_start(engine, fen: str, moves: Sequence[str], winner: bool, *, depth: int = DEFAULT_DEPTH,
                   max_back: int = 12) -> int | None:
    """The ply (index into ``moves``) where the winner's decisive run begins: going back from the end
    over the winner's positions (at most ``max_back``), the earliest of the final run that the engine
    calls clearly winning (win chance >= :data:`WIN_MIN`) for the winner; None if the last is not."""
    board = Board(fen)
    boards = []
    for i, text in enumerate(moves):
        if board.turn == winner:
            boards.append((i, board.copy(stack=False)))
        board.push(Move.from_iccs(text))
    earliest = None
    for i, b in reversed(boards[-max_back:]):
        _m, win, _mate = _search(engine, b, max(4, depth - 2))
        if win < WIN_MIN:
            break
        earliest = i
    return earliest


def candidates_from_game(game) -> tuple[str, list[str], bool | None, bool]:
    """``(start fen, ICCS moves, winner, whole_game)`` of a record: ``whole_game`` is True when the
    record starts from the opening position (then the puzzle is searched for in it)."""
    board = game.board()
    fen = board.fen()
    moves = [m.iccs() for m in game.mainline_moves()]
    whole = fen.split()[0] == STARTING_BOARD_FEN
    return fen, moves, _winner(game.headers.get("Result")), whole


def _fen_after(fen: str, moves: Sequence[str], ply: int) -> str:
    b = Board(fen)
    for t in moves[:ply]:
        b.push(Move.from_iccs(t))
    return b.fen()


def puzzle_from_record(game, *, engine, source: str, pid: str, ref: dict, depth: int = DEFAULT_DEPTH,
                       tablebase=None, tries: int = 8) -> Verdict:
    """The puzzle of one record (see the module docstring for which position), or why none."""
    try:
        fen, moves, winner, whole = candidates_from_game(game)
    except Exception as exc:
        return Rejected("bad_record", str(exc))
    if game.errors and not moves:
        return Rejected("bad_record", "; ".join(game.errors)[:200])
    if not moves:
        return Rejected("game_over", "no moves")
    if not whole:
        side = Board(fen).turn
        if winner is None or winner != side:
            return Rejected("no_winner", f"result {game.headers.get('Result')}")
        v = verify(fen, moves, engine=engine, depth=depth, tablebase=tablebase, source=source, ref=ref,
                   pid=pid, allow_win_goal=True)
        if not (isinstance(v, Rejected) and v.reason == "not_winning"):
            return v
        # not yet decided at the recorded position: the puzzle is where the decisive run begins
        later = _from_whole_game(fen, moves, winner, engine=engine, depth=depth, tablebase=tablebase,
                                 source=source, ref=ref, pid=pid, tries=tries, allow_win_goal=True,
                                 skip_first=True)
        return later if isinstance(later, Puzzle) or later.reason != "no_decisive_moment" else v
    if winner is None:
        return Rejected("no_winner", f"result {game.headers.get('Result')}")
    return _from_whole_game(fen, moves, winner, engine=engine, depth=depth, tablebase=tablebase,
                            source=source, ref=ref, pid=pid, tries=tries)


def _from_whole_game(fen, moves, winner, *, engine, depth, tablebase, source, ref, pid, tries,
                     allow_win_goal: bool = False, skip_first: bool = False) -> Verdict:
    start = decisive_start(engine, fen, moves, winner, depth=depth)
    if start is not None and skip_first and start == 0:
        start = 2  # the recorded position itself was checked already
    if start is None or start >= len(moves):
        return Rejected("no_decisive_moment")
    last: Verdict = Rejected("no_decisive_moment")
    for ply in range(start, len(moves), 2)[:tries]:
        v = verify(_fen_after(fen, moves, ply), moves[ply:], engine=engine, depth=depth, tablebase=tablebase,
                   source=source, ref={**ref, "ply": ply}, pid=pid, allow_win_goal=allow_win_goal)
        if isinstance(v, Puzzle):
            return v
        last = v
    return last


def mine_game(fen: str, moves: Sequence[str], result: str | None, *, engine=None, depth: int = DEFAULT_DEPTH,
              source: str = "mined", ref: dict | None = None, pid: str = "", tablebase=None) -> Verdict:
    """A puzzle mined from a played game: where the winner's decisive run begins and exactly one move
    wins decisively (the same checks as the collections; a ``mate`` or ``material`` goal only)."""
    winner = _winner(result)
    if winner is None:
        return Rejected("no_winner", f"result {result}")
    try:
        b = Board(fen)
        for t in moves:
            b.push(Move.from_iccs(t))
    except Exception as exc:
        return Rejected("bad_record", str(exc))
    engine = engine if engine is not None else _engine()
    return _from_whole_game(fen, list(moves), winner, engine=engine, depth=depth, tablebase=tablebase,
                            source=source, ref=dict(ref or {}), pid=pid, tries=8, allow_win_goal=False)


# ---------------------------------------------------------------------------
# Collections: reading CCPD, the resumable import, the shipped file
# ---------------------------------------------------------------------------

def iter_collection(path: str | os.PathLike[str]) -> Iterator[tuple[str, str, bytes]]:
    """``(collection, file name, bytes)`` of every record of the CCPD puzzle folders
    (:data:`COLLECTIONS`) under a directory (``Dataset/<collection>/*.pgn``) or inside the
    ``CCPD-Dataset-*.tar.gz`` archive, in a stable order (collection, file)."""
    p = Path(path)
    if p.is_dir():
        for coll in COLLECTIONS:
            found = sorted(p.rglob(f"{coll}/*.pgn"))
            for f in found:
                yield coll, f.name, f.read_bytes()
        return
    with tarfile.open(p) as tar:
        members = []
        for m in tar.getmembers():
            parts = m.name.split("/")
            if m.isfile() and len(parts) >= 2 and parts[-2] in COLLECTIONS and parts[-1].endswith(".pgn"):
                members.append((list(COLLECTIONS).index(parts[-2]), parts[-1], m))
        members.sort(key=lambda t: (t[0], t[1]))
        for _i, name, m in members:
            f = tar.extractfile(m)
            if f is not None:
                yield m.name.split("/")[-2], name, f.read()


def record_id(collection: str, name: str) -> str:
    """Stable puzzle id of a CCPD record: ``ccpd-<label>-<file stem>`` (label from :data:`COLLECTIONS`)."""
    label = {"中局": "mid", "殘局": "end", "殺局_殺法_練習題": "mate", "全盤戰術": "game"}[collection]
    return f"ccpd-{label}-{Path(name).stem}"


class ImportRun:
    """A resumable import: every record's verdict is appended to ``state`` (JSON lines
    ``{"id", "ok", "reason"?, "puzzle"?}``) as it is decided, so a rerun skips what is done;
    :meth:`write` rebuilds the data file from all verdicts so far (sorted by id)."""

    def __init__(self, state: str | os.PathLike[str]) -> None:
        self.state = Path(state)
        self.done: dict[str, dict] = {}
        if self.state.exists():
            for text in self.state.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(text)
                except ValueError:
                    continue  # a line cut by a kill: decided again
                self.done[row["id"]] = row

    def record(self, pid: str, verdict: Verdict) -> None:
        """Store one verdict (appended and flushed at once)."""
        if isinstance(verdict, Puzzle):
            row = {"id": pid, "ok": True, "puzzle": verdict.to_dict()}
        else:
            row = {"id": pid, "ok": False, "reason": verdict.reason, "detail": verdict.detail[:200]}
        self.done[pid] = row
        self.state.parent.mkdir(parents=True, exist_ok=True)
        with self.state.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    def counts(self) -> dict[str, int]:
        """``{"verified": n, <reason>: n, ...}`` over the verdicts so far."""
        out: dict[str, int] = {"verified": 0}
        for row in self.done.values():
            key = "verified" if row["ok"] else row["reason"]
            out[key] = out.get(key, 0) + 1
        return out

    def counts_by_collection(self) -> dict[str, dict[str, int]]:
        """:meth:`counts` per collection label (``mid``, ``end``, ``mate``, ``game``)."""
        out: dict[str, dict[str, int]] = {}
        for pid, row in self.done.items():
            label = pid.split("-")[1] if pid.count("-") >= 2 else "other"
            d = out.setdefault(label, {"verified": 0})
            key = "verified" if row["ok"] else row["reason"]
            d[key] = d.get(key, 0) + 1
        return out

    def puzzles(self) -> list[Puzzle]:
        """The verified puzzles so far, sorted by id."""
        return [normalise(Puzzle.from_dict(r["puzzle"])) for _k, r in sorted(self.done.items()) if r["ok"]]

    def write(self, out: str | os.PathLike[str]) -> int:
        """Write the data file (JSON lines, compact); returns the number of puzzles."""
        ps = self.puzzles()
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for p in ps:
                f.write(json.dumps(p.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
        os.replace(tmp, out)
        return len(ps)

    def run(self, source: str | os.PathLike[str], *, depth: int = DEFAULT_DEPTH, limit: int | None = None,
            chunk: int = 50, out: str | os.PathLike[str] | None = None, tablebase=None,
            only: str | None = None,
            on_progress: Callable[[int, str, Verdict], None] | None = None) -> int:
        """Decide up to ``limit`` records not decided yet (all when None), rewriting ``out`` after every
        ``chunk`` records and at the end; ``only`` a collection label or folder name. Returns the
        number decided."""
        from xiangqi.core.records import read_records

        engine = _engine()
        n = 0
        for coll, name, data in iter_collection(source):
            if only and only not in (coll, record_id(coll, name).split("-")[1]):
                continue
            pid = record_id(coll, name)
            if pid in self.done:
                continue
            if limit is not None and n >= limit:
                break
            ref = {"file": f"{coll}/{name}"}
            try:
                games = read_records(data)
                game = games[0]
                ref.update({k.lower(): game.headers.get(k, "") for k in ("Event", "Red", "Black", "Date")})
                verdict = puzzle_from_record(game, engine=engine, source=f"ccpd/{coll}", pid=pid, ref=ref,
                                             depth=depth, tablebase=tablebase)
            except Exception as exc:  # a record our readers refuse
                verdict = Rejected("bad_record", f"{type(exc).__name__}: {exc}")
            self.record(pid, verdict)
            n += 1
            if on_progress is not None:
                on_progress(n, pid, verdict)
            if out is not None and n % chunk == 0:
                self.write(out)
        if out is not None:
            self.write(out)
        return n


def load_puzzles(path: str | os.PathLike[str] | None = None) -> list[Puzzle]:
    """The puzzles of a data file (default: the shipped :data:`DATA_FILE`; [] when it is absent)."""
    p = Path(path) if path is not None else DATA_FILE
    if not p.exists():
        return []
    out = []
    with open(p, encoding="utf-8") as f:
        for text in f:
            if text.strip():
                out.append(Puzzle.from_dict(json.loads(text)))
    return out


def iter_games_for_mining(records: Iterable) -> Iterator[tuple[str, list[str], str | None, dict]]:
    """``(fen, moves, result, ref)`` of core games (from a record file) for :func:`mine_game`."""
    for i, g in enumerate(records):
        try:
            fen = g.board().fen()
            moves = [m.iccs() for m in g.mainline_moves()]
        except Exception:
            continue
        yield fen, moves, g.headers.get("Result"), {"index": i, "event": g.headers.get("Event", ""),
                                                    "red": g.headers.get("Red", ""),
                                                    "black": g.headers.get("Black", "")}
