"""Rules referee: repetition rulings (棋例), the natural move limit and dead draws.

:func:`outcome_of` is what :meth:`Board.outcome` calls: mate and stalemate first
(:func:`xiangqi.core.outcome.terminal_outcome`), then :func:`judge`. The rule sets
(:class:`RuleSet`, :data:`CXA`, :data:`AXF`, :func:`get_rules`) live in
:mod:`xiangqi.core.rules` and are importable from here. :func:`judge` rules, in this order:

1. **Repetition** (RULES.md §5). The ruling is made when the current position
   (board and side to move) occurs for the **third** time: the CXA rules speak
   of a cycle "repeated three times" (循环反复三次 / 循环达三次, RULES_CXA §1.2,
   §2) and the AXF rules let the offender be warned on the second occurrence
   and lose on the third (RULES_CXA §6). The second occurrence only warns: it
   is what :func:`forbidden_moves` looks at, one move ahead. The ruling looks
   at every move from the **first** occurrence of the position on (RULES.md
   §5.6), classified by :mod:`xiangqi.core.classify` (将/杀/捉/闲), and applies
   the rule set:

   - a side whose every move checks (长将) loses, unless both do (draw);
   - CXA (RULES.md §5.3–§5.4): a side whose every move attacks (打 = 将, 杀 or
     捉, in any mix, of one or several pieces) is forbidden; forbidden against
     allowed loses; both allowed, or both forbidden, is a draw, except that
     under the 2020 responsibility comparison a side that only chases plainly
     (长捉 of an unrooted piece or of a rook) loses against a side whose
     chases include a joint chase / a chase of an under-protected piece other
     than a rook (RULES_CXA §4.4); a pawn winning material by itself is 闲
     (通则 3) unless both sides attack on every move with it counted (相互长打);
   - AXF (RULES.md §5.5): perpetual mate threats and check-chase alternation are
     allowed; a side is forbidden when it chases **the same piece** with every
     move (one piece chasing two in turn is allowed; two pieces chasing one
     are not); pawn and king chases are allowed.

2. **Natural move limit** (自然限着, RULES.md §4): :attr:`RuleSet.move_limit_plies`
   plies (default 120 = 60 moves) without a capture is a draw. Mate on the last
   ply wins because mate is ruled before the referee is asked.
3. **Insufficient material** (RULES.md §6): neither side has a rook, horse,
   cannon or pawn.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from xiangqi.core.classify import CHASE, CHECK, IDLE, JOINT, KILL, MoveClass, classify_cycle
from xiangqi.core.notation import move_to_chinese
from xiangqi.core.outcome import SIDE_EN, SIDE_ZH, Outcome, Termination, draw, terminal_outcome, win
from xiangqi.core.pieces import BLACK, PIECE_NAMES_ZH, RED, ROOK, Color, Move
from xiangqi.core.rules import AXF, CXA, RULE_SETS, RuleSet, get_rules

if TYPE_CHECKING:
    from collections.abc import Iterator

    from xiangqi.core.board import Board


# ---------------------------------------------------------------------------
# Finding the cycle
# ---------------------------------------------------------------------------

def _key(b: Board) -> tuple:
    return (tuple(b.squares), b.turn)


def _history_keys(board: Board) -> list[tuple]:
    """Keys of the positions since the last capture, oldest first; the last is the current one.

    Positions before a capture cannot occur again, so the walk stops there."""
    b = board.copy()
    keys = [_key(b)]
    n = min(len(b.move_stack), b.halfmove_clock)
    for _ in range(n):
        b.pop()
        keys.append(_key(b))
    keys.reverse()
    return keys


def _walk_back(board: Board) -> Iterator[tuple[int, dict[int, int]]]:
    """The positions since the last capture, newest first, as ``(plies back, diff)``: ``diff``
    maps each square whose content then differed from now to that content (the same dict,
    changed at each step: read it before the next). A position equals the current one when its
    diff is empty and the plies back are even (the same side to move). A few dictionary steps a
    ply instead of a copy of the 90 squares (:func:`_history_keys`): the per-move checks below
    look through the history with it first and build the keys only when a repetition is possible."""
    sq = board.squares
    stack = board._stack  # the undo records: the captured code is (undo & 15) - 8 (board.py)
    moves = board.move_stack
    diff: dict[int, int] = {}
    for i in range(1, min(len(stack), board.halfmove_clock) + 1):
        move = moves[-i]
        frm, to = move.from_square, move.to_square
        piece = diff.get(to, sq[to])
        for s, v in ((frm, piece), (to, (stack[-i] & 15) - 8)):
            if v == sq[s]:
                diff.pop(s, None)
            else:
                diff[s] = v
        yield i, diff


def repetition_cycle(board: Board) -> list[int] | None:
    """Plies (indexes into ``board.move_stack``) from the first occurrence of the
    current position to now, when the position occurs for the third time or more;
    else None."""
    if sum(1 for i, diff in _walk_back(board) if not diff and i % 2 == 0) < 2:
        return None  # (the usual case, found without the keys)
    keys = _history_keys(board)
    cur = keys[-1]
    hits = [i for i, k in enumerate(keys) if k == cur]
    if len(hits) < 3:
        return None
    n = len(board.move_stack)
    first = n - (len(keys) - 1 - hits[0])
    return list(range(first, n))


# ---------------------------------------------------------------------------
# Ruling a cycle
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SideVerdict:
    """How one side played a cycle: ``classes`` of its moves (after the rule set's
    adjustments), ``perpetual_check``, ``forbidden``, and ``label`` (长将, 长捉,
    一将一捉 …) with its English ``label_en``."""

    classes: tuple[str, ...]
    perpetual_check: bool
    forbidden: bool
    label: str
    label_en: str
    plain_chase: bool = False
    joint_chase: bool = False


_EN_VERB = {CHECK: "checks", KILL: "threatens mate", CHASE: "chases"}
_ORDER = {CHECK: 3, KILL: 2, CHASE: 1, IDLE: 0}
_COUNT_ZH = {1: "一", 2: "两", 3: "三", 4: "四"}


def effective_class(mc: MoveClass, rules: object | None = None, count_pawn: bool = False) -> str:
    """The class of a move as the rule set counts it: under AXF a 杀 is 闲; a pawn's own
    winning attack (``mc.pawn_chases``) is 闲 (CXA 通则 3, AXF) unless the rule set counts
    pawn chases or ``count_pawn`` says the cycle is one of 相互长打 (see RuleSet.pawn_mutual
    and :func:`rule_cycle`)."""
    return _effective(mc, get_rules(rules), count_pawn)


def _effective(mc: MoveClass, rs: RuleSet, count_pawn: bool = False) -> str:
    cls = mc.cls
    if cls == KILL and not rs.kill_is_attack:
        return IDLE
    if (cls == IDLE and (rs.pawn_chases or count_pawn) and mc.pawn_chases
            and not (mc.answers_check and rs.answer_check_idle)):
        return CHASE
    return cls


def _pawn_mutual(moves: list[MoveClass], other: SideVerdict, rs: RuleSet) -> bool:
    """通则 3's exception (RuleSet.pawn_mutual): ``moves`` (one side's) include a pawn's own chase
    and another attack, counting the pawn's chases makes every move an attack, and the other side
    (``other``) attacks on every move too (相互长打)."""
    if not rs.pawn_mutual or not other.forbidden:
        return False
    plain = [_effective(m, rs) for m in moves]
    counted = [_effective(m, rs, True) for m in moves]
    return (plain != counted and any(c != IDLE for c in plain) and all(c != IDLE for c in counted))


def side_verdict(moves: list[MoveClass], rs: RuleSet, count_pawn: bool = False) -> SideVerdict:
    """Whether the moves of one side in a cycle are forbidden under ``rs`` (RULES.md §5.3, §5.5);
    ``count_pawn``: the pawn's own chases count as 捉 (通则 3, 相互长打)."""
    classes = tuple(_effective(m, rs, count_pawn) for m in moves)
    if not classes:
        return SideVerdict(classes, False, False, "闲", "idle")
    perpetual_check = all(c == CHECK for c in classes)
    if perpetual_check:
        return SideVerdict(classes, True, True, "长将", "perpetually checks")
    if rs.mixed_attacks_forbidden:
        forbidden = all(c != IDLE for c in classes)
    else:
        forbidden = all(c == CHASE for c in classes)
    if rs.chase_same_piece:
        # AXF: the same piece chased by every move of the cycle, checks included.
        common = moves[0].targets
        for m in moves[1:]:
            common = common & m.targets
        forbidden = bool(common)
        if forbidden:
            classes = tuple(CHASE for _ in classes)
    kinds = set(classes)
    if len(kinds) == 1:
        only = classes[0]
        label = {CHECK: "长将", KILL: "长杀", CHASE: "长捉", IDLE: "闲"}[only]
        label_en = "perpetually " + _EN_VERB[only] if only != IDLE else "idle"
    elif IDLE not in kinds and len(kinds) == 2:
        a, b = sorted(kinds, key=lambda c: -_ORDER[c])
        label = "一" + a + "一" + b
        label_en = f"alternately {_EN_VERB[a]} and {_EN_VERB[b]}"
    elif IDLE not in kinds:
        label = "长打"
        label_en = "attacks perpetually (checks, mate threats and chases)"
    else:
        label = "".join(f"{_COUNT_ZH.get(classes.count(c), str(classes.count(c)))}{c}"
                        for c in sorted(kinds, key=lambda c: -_ORDER[c]))
        label_en = "mixes attacks with idle moves"
    chases = [ch for m in moves for ch in m.chases]
    # 2020 responsibility comparison (RULES_CXA §4.4, 26.9.x "按长杀、长捉车、长捉无根子及联合捉"):
    # the categories are named by what is chased: a chase of a rook is 捉车 however it is made
    # (图26: 炮8进3 wins the rook with the other cannon's help and is "长捉车"); a joint chase
    # (联合捉) of any other piece is the heavier responsibility.
    joint = any((ch.kind == JOINT or ch.joint) and ch.target_type != ROOK for ch in chases)
    plain = forbidden and all(c == CHASE for c in classes) and not joint
    return SideVerdict(classes, False, forbidden, label, label_en, plain, joint)


def _verdicts(cycle: list[MoveClass], rs: RuleSet) -> tuple[dict[Color, SideVerdict], dict[Color, bool]]:
    """Both sides' verdicts, with 通则 3's 相互长打 exception applied (:func:`_pawn_mutual`), and for
    each side whether its pawn's own chases were counted."""
    moves = {side: [m for m in cycle if m.side == side] for side in (RED, BLACK)}
    v = {side: side_verdict(moves[side], rs) for side in (RED, BLACK)}
    mutual = {side: _pawn_mutual(moves[side], v[not side], rs) for side in (RED, BLACK)}
    for side in (RED, BLACK):
        if mutual[side]:
            v[side] = side_verdict(moves[side], rs, count_pawn=True)
    return v, mutual


def rule_cycle(cycle: list[MoveClass], rules: object | None = None) -> Outcome:
    """The ruling for a classified repetition cycle (RULES.md §5.4, §5.5): who loses
    and why, or a draw. ``cycle`` holds the moves of both sides."""
    rs = get_rules(rules)
    v, _ = _verdicts(cycle, rs)
    red, black = v[RED], v[BLACK]

    def lose(loser: Color, extra_zh: str = "", extra_en: str = "") -> Outcome:
        lab = v[loser]
        return win(Termination.PERPETUAL, not loser, f"{SIDE_ZH[loser]}{lab.label}{extra_zh}，判负",
                   f"{SIDE_EN[loser]} {lab.label_en}{extra_en}: {SIDE_EN[loser]} loses")

    if red.perpetual_check and black.perpetual_check:
        return draw(Termination.REPETITION, "双方长将，不变作和", "both sides check perpetually")
    if red.perpetual_check or black.perpetual_check:
        return lose(RED if red.perpetual_check else BLACK)
    if red.forbidden and black.forbidden:
        if rs.responsibility:
            for side in (RED, BLACK):
                me, other = v[side], v[not side]
                if me.plain_chase and other.joint_chase:
                    return lose(side, "（对方联合捉子）", " against a joint chase (CXA 2020)")
        return draw(Termination.REPETITION, f"红方{red.label}，黑方{black.label}，双方不变作和",
                    f"Red {red.label_en} and Black {black.label_en}: both forbidden, a draw")
    if red.forbidden or black.forbidden:
        return lose(RED if red.forbidden else BLACK)
    return draw(Termination.REPETITION, "双方不变，判和", "both sides repeat with allowed moves")


def judge_cycle(board: Board, rules: object | None = None) -> Outcome | None:
    """The repetition ruling for the current position of ``board``, or None when
    the position has not occurred three times (see the module docstring)."""
    cycle = repetition_cycle(board)
    if not cycle:
        return None
    return rule_cycle(classify_cycle(board, cycle[0], rules), rules)


def judge(board: Board, rules: object | None = None) -> Outcome | None:
    """Ruling for the current position of ``board``: repetition (at its third
    occurrence), the natural move limit, insufficient material; None if the game
    goes on. Mate and stalemate are ruled before this (:func:`outcome_of`)."""
    rs = get_rules(rules)
    out = judge_cycle(board, rs)
    if out is not None:
        return out
    if board.halfmove_clock >= rs.move_limit_plies:
        n = rs.move_limit_plies
        moves = f"{n // 2}回合" if n % 2 == 0 else f"{n}着"
        moves_en = f"{n // 2} moves" if n % 2 == 0 else f"{n} plies"
        return draw(Termination.MOVE_LIMIT, f"{moves}未吃子，判和", f"{moves_en} without a capture")
    if board.is_insufficient_material():
        return draw(Termination.INSUFFICIENT_MATERIAL, "双方均无进攻子力，判和",
                    "neither side has a rook, horse, cannon or pawn")
    return None


def outcome_of(board: Board, rules: object | None = None) -> Outcome | None:
    """The outcome of ``board``'s game so far, or None if it goes on: mate and stalemate
    (:func:`~xiangqi.core.outcome.terminal_outcome`), then :func:`judge` with ``rules``
    (a :class:`RuleSet`, its name or None for CXA). What :meth:`Board.outcome` returns."""
    out = terminal_outcome(board)
    if out is not None:
        return out
    return judge(board, rules)


def _may_complete_repetition(board: Board) -> bool:
    """Whether some quiet move of the side to move leads to a position that occurred at least twice
    since the last capture (:func:`forbidden_moves` has nothing to rule otherwise). Such a
    position differs from the current one on exactly two squares, the move's: its from-square
    empty then, its to-square holding the piece that stands on the from-square now (and empty
    now); the other side is to move in it (odd plies back)."""
    sq = board.squares
    seen: set[tuple[int, int]] = set()
    for i, diff in _walk_back(board):
        if i % 2 == 0 or len(diff) != 2:
            continue
        (a, va), (b, vb) = diff.items()
        if va == 0 and sq[b] == 0 and sq[a] != 0 and vb == sq[a]:
            move = (a, b)
        elif vb == 0 and sq[a] == 0 and sq[b] != 0 and va == sq[b]:
            move = (b, a)
        else:
            continue
        if move in seen:
            return True
        seen.add(move)
    return False


def forbidden_moves(board: Board, rules: object | None = None) -> dict[Move, Outcome]:
    """Legal moves of the side to move that complete a repetition ruled against it.

    For each legal move that makes a position occur for the third time, the
    cycle is ruled as :func:`judge` would; the move is returned with that
    :class:`Outcome` when the mover loses. Cheap when no position of the
    history since the last capture has occurred twice (the usual case): then
    no move can complete a third occurrence and nothing is classified.
    """
    if not _may_complete_repetition(board):
        return {}
    keys = _history_keys(board)
    counts: dict[tuple, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    twice = {k for k, c in counts.items() if c >= 2}
    if not twice:
        return {}
    rs = get_rules(rules)
    mover = board.turn
    out: dict[Move, Outcome] = {}
    b = board.copy()
    for m in list(b.generate_legal_moves()):
        if b.squares[m.to_square]:
            continue  # a capture changes the material: no repetition
        sq = list(b.squares)
        sq[m.to_square] = sq[m.from_square]
        sq[m.from_square] = 0
        if (tuple(sq), not mover) not in twice:
            continue
        b.push(m, validate=False)
        res = judge_cycle(b, rs)
        b.pop()
        if res is not None and res.winner is not None and res.winner != mover:
            out[m] = res
    return out


__all__ = ["AXF", "CXA", "RULE_SETS", "Outcome", "RuleSet", "SideVerdict", "classify_cycle",
           "effective_class", "explain_cycle", "forbidden_moves", "get_rules",
           "judge", "judge_cycle", "outcome_of", "repetition_cycle", "rule_cycle", "side_verdict"]


# ---------------------------------------------------------------------------
# Explaining a ruling
# ---------------------------------------------------------------------------

def _article(mc: MoveClass, cls: str) -> str:
    """The article that decided the class ``cls`` (as the rule set counts it) of ``mc``: the
    classifier's own (:attr:`MoveClass.article`), or the rule set's reason when it counted the
    move differently."""
    if cls == mc.cls:
        return mc.article
    if cls == CHASE and mc.pawn_chases:
        return "通则3, 相互长打, 兵卒的捉按捉"
    if mc.cls == KILL and cls == IDLE:
        return "AXF: 长杀允许"
    return mc.article


def _pawn_idle_article(mc: MoveClass, cls: str, rs: RuleSet) -> str:
    """The article of a move that is 闲 although its pawn wins material by itself (通则 3)."""
    if cls == IDLE and mc.cls == IDLE and mc.pawn_chases and rs.chase_model == "cxa":
        return "通则3, 兵卒本身捉子为闲"
    return _article(mc, cls)


def explain_cycle(board: Board, rules: object | None = None) -> list[str] | None:
    """Lines that explain the repetition ruling of the current position, or None when
    no ruling is due (see :func:`judge_cycle`).

    One line per move of the cycle, in order: side, the move in Chinese notation, the
    class as the rule set counts it, the pieces chased and the article that decided
    it, e.g. ``红 车二进三: 捉 马 (第24.3条, 无根子)``; then one line per side with its
    verdict (长捉 …, forbidden or allowed) and the ruling."""
    cycle = repetition_cycle(board)
    if not cycle:
        return None
    rs = get_rules(rules)
    classes = classify_cycle(board, cycle[0], rs)
    b = board.copy()
    for _ in cycle:
        b.pop()
    lines = []
    verdicts, mutual = _verdicts(classes, rs)
    for mc in classes:
        text = move_to_chinese(b, mc.move)
        b.push(mc.move, validate=False)
        cls = _effective(mc, rs, mutual[mc.side])
        chased = mc.chases or (mc.pawn_chases if cls == CHASE else ())
        names = " ".join(PIECE_NAMES_ZH[c.target_type][0 if mc.side == BLACK else 1] for c in chased)
        what = f"{cls} {names}" if cls == CHASE and names else cls
        lines.append(f"{SIDE_ZH[mc.side][0]} {text}: {what} ({_pawn_idle_article(mc, cls, rs)})")
    for side in (RED, BLACK):
        v = verdicts[side]
        lines.append(f"{SIDE_ZH[side]}: {v.label} — {'禁止着法' if v.forbidden else '允许着法'} "
                     f"(第24.13/24.14条)")
    out = rule_cycle(classes, rs)
    lines.append(f"{out.reason_zh} / {out.reason_en}")
    return lines
