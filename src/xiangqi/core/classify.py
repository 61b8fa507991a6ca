"""The move classifier of the repetition rulings (棋例): 将 check, 杀 kill, 捉 chase, 闲 idle.

RULES.md §5.1–§5.2 and RULES_CXA.md §1, §3 define the classes. This module
classifies one move (:func:`classify_move`) or every move of a repetition
cycle (:func:`classify_cycle`); the rulings built on the classes are in
:mod:`xiangqi.core.referee`. A move gets the heaviest class that applies,
将 > 杀 > 捉 > 闲 (从重, RULES.md §5.2.4).

CXA model (the default rule set): one decision procedure per article of the
rule book (2020 edition 第24条 术语 and the 棋例通则; RULES.md §5, RULES_CXA.md
§1, §3). :data:`ARTICLES` lists them; each function cites its article.

- **将** 24.1: after the move the opponent's king is attacked, by the moved
  piece or a piece it uncovers (:func:`classify_move`).
- **杀** 24.2: not a check; with the mover to move again it would mate by one
  check or consecutive checks, within :data:`KILL_DEPTH` checking moves and
  :data:`KILL_NODES` nodes, against every defence, and it could not before
  (:func:`mates_by_checks`). Where the model stops: a kill needing more checks,
  or a quiet (non-checking) move, or more nodes than the budget, is not found.
- **捉** 24.3 (and the 29.x conditions of the 2011 line): after the move, with
  the mover to move again, some enemy 子力 (25.3: rook, horse, cannon,
  advisor, elephant, crossed pawn) can be won (:func:`_chases`): taken
  directly, by a piece the move uncovers, by several pieces together (联合捉),
  or by one check or a series of up to :data:`CHECK_WIN_DEPTH` checks that
  wins material against **every** defence, counter-checks and captures of the
  checker included (抽将, :func:`_win_by_checks`). Judging a capture
  (:func:`_exchange_gain`):

  * the exchange on the square (:func:`_see`, legal moves only) decides
    有根/无根 and 子力价值: a pinned protector, a protector whose recapture
    faces the other king, a cannon whose screen goes and the king as a
    protector are judged as in a game (真根/假根, 24.15);
  * 26.5: the opponent's best answering capture elsewhere weighs against it:
    one the capture opens (被牵子捉子) must not leave a loss (得不偿失), an
    unchanged independent threat (各吃各子) must be outweighed, and one improved
    only because the capturer was its root does not count (做根子捉子 is 捉);
  * 24.3 "完整互吃交换": an even trade on the square still chases when the
    exchange played out on every square (:func:`_qs`, captures with legal
    moves, both sides free to stop) wins material, e.g. a recapture that
    unguards or uncovers another piece;
  * 29.4: a capture after which the capturer is mated at once gains nothing.

  29.2: the chase is created by the move (:func:`_is_new`): it did not exist
  before (a capture that a check or mate threat against the mover kept from
  being played did not exist yet), and the move takes part in it
  (:func:`_caused_by`); a chase state the victim caused itself is 闲; a chaser
  that moves on and still wins the same target it won from the square it left
  is 从捉到捉 whatever else changed (:func:`_same_chaser_before`, RULES.md §5.2.8).
- **兑/献** 24.4/24.5: a same-type attacker that the target may take back
  offers an exchange; see :func:`_chases`.
- **拦** 24.6: a 闲 move that stands in the way of the opponent's mate threat or
  winning capture (lifted off its square, the threat is back) is cited as 拦
  (:func:`_blocks`). 通则 9 (不能离线): a piece that must stay on its line to stop
  a mate does not really protect or take (:func:`_tied`, :func:`_ties`); a chase
  whose capture the defence answers with mate (a block that uncovers a check, 还将)
  wins nothing (29.4, in :func:`_win_by_checks` as in :func:`_exchange_gain`).
- **联合捉** 24.3 "使另一子可以与之联合吃子": a capture in which the moved piece
  takes part in the exchange (:func:`_needs_helper`), or a win by checks given
  by another piece that fails without the moved piece (:func:`_joint_check_win`).
- **闲** 24.8: everything else, including 兑/献/拦/跟, and a king move that
  answers a check (通则 2, "走动帅应将后产生的捉、杀为闲").

Each :class:`MoveClass` names the article that decided it (``article``), which
``xiangqi outcome --explain`` and the game's result show.

Values (25.3 子力价值): rook 4, horse 2, cannon 2, advisor 1, elephant 1, pawn 1
(车 = 2 马 = 2 炮 = 马 + 炮, 马 = 炮, 士 = 相); an uncrossed pawn is no 子力 and
wins nothing; a crossed pawn's value floats, as the article says: one pawn for
several pieces, or one piece for several pawns, is no gain (:func:`_balance`).
Where the model stops: positional judgements (占据要点, 通则 4 — occupying a key
drawing point) are not modelled; the complete exchange searches captures only
(:data:`QS_DEPTH` plies, :data:`QS_NODES` nodes), the checks that win material
:data:`CHECK_WIN_DEPTH` checks deep within :data:`CHECK_WIN_NODES` nodes, and a
search that runs out of nodes wins nothing.

The king chasing by itself is 闲 (通则 1); it counts when it only protects,
recaptures, or lets another piece chase (通则 2, 借帅之力). A pawn's chase
(通则 3) is kept apart in ``pawn_chases`` for the rule set to decide.

Under the AXF rule set chases are found by :func:`axf_chased`, the model of
Fairy-Stockfish's xiangqi rules. Each chase records its target's identity
through the cycle, so a rule set can ask whether the same piece is chased on
every move (AXF rule 32) and what kind of chase it is (unrooted, by value,
joint, by check), which the CXA 2020 responsibility comparison uses
(RULES_CXA §4.4). Measured agreement with the CXA figures: see
tests/referee/test_referee.py.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from xiangqi.core.pieces import (
    ADVISOR,
    ADVISOR_MOVES,
    CANNON,
    ELEPHANT,
    ELEPHANT_MOVES,
    HORSE,
    HORSE_MOVES,
    KING,
    KING_MOVES,
    PAWN,
    PAWN_MOVES,
    PIECE_NAMES_ZH,
    RAYS,
    RED,
    ROOK,
    Color,
    Move,
    own_half,
)
from xiangqi.core.rules import get_rules

if TYPE_CHECKING:
    # The functions work on the board they are given; the board module sits above this one.
    from xiangqi.core.board import Board

CHECK = "将"
KILL = "杀"
CHASE = "捉"
IDLE = "闲"
#: Classes by weight: the heaviest effect decides (RULES.md §5.2.4).
WEIGHT = {IDLE: 0, CHASE: 1, KILL: 2, CHECK: 3}
CLASS_EN = {CHECK: "check", KILL: "kill", CHASE: "chase", IDLE: "idle"}

#: Material values for gains (RULES.md §5.1); the king's is only a sentinel.
VALUE = {KING: 100, ROOK: 4, HORSE: 2, CANNON: 2, ADVISOR: 1, ELEPHANT: 1, PAWN: 1}
#: Checks searched when testing whether a piece must stay on its line (不能离线, 通则 9): a
#: shorter search than the kill test keeps it cheap; a longer mate that ties the piece is missed.
TIE_DEPTH = 2
#: Moves of the attacking side searched for a mate by consecutive checks (杀, 第24.2条 "连续照将"):
#: a mate within KILL_DEPTH checking moves against every defence.
KILL_DEPTH = 5
#: Node budget (checking moves tried) of one kill search; a search that runs out proves no kill.
KILL_NODES = 4000
#: Depth of the mate searches inside the chase tests (a capturer mated at once gains nothing,
#: 29.4; a capture a mating attack answers was no chase yet): the shorter search of the threats
#: that answer a capture.
REPLY_MATE_DEPTH = 3

#: Kinds of chase (RULES_CXA §4.4): the target has no real protector; the
#: target is protected but worth more than the chaser (e.g. a horse on a rook);
#: the target is protected but the exchange still wins (联合捉 / 少根子).
UNROOTED = "unrooted"
BY_VALUE = "value"
JOINT = "joint"
#: A chase that wins material through a check (抽将得子, RULES_CXA §1.1 24.3).
CHECK_WIN = "check"

#: Names of the kinds of chase as the rule book says them (for explanations).
KIND_ZH = {UNROOTED: "无根子", BY_VALUE: "子力价值", JOINT: "联合捉", CHECK_WIN: "抽将"}
#: The article behind each class when nothing more specific decided it.
ARTICLE_TEXT = {CHECK: "第24.1条", KILL: "第24.2条, 连续照将", CHASE: "第24.3条", IDLE: "第24.8条"}

#: One decision procedure per article (2020 edition 第24条 术语, 第25/26条, 2011 line 29.x and the
#: 棋例通则; RULES.md §5, RULES_CXA.md §1-§3): article -> (term, the function that implements it).
#: tests/referee/test_articles.py checks that each function exists and cites its article.
ARTICLES: dict[str, tuple[str, str]] = {
    "24.1": ("将 check", "classify_move"),
    "24.2": ("杀 kill: mate by one or consecutive checks", "mates_by_checks"),
    "24.3": ("捉 chase: material won on the next move", "_chases"),
    "24.3 抽将": ("捉 by one check or a series of checks that wins material against every defence",
                "_win_by_checks"),
    "24.3 完整互吃交换": ("the exchange played out on every square, legal captures only", "_qs"),
    "24.3 联合捉 (抽将)": ("a win by checks in which the moved piece and the checking piece act together",
                       "_joint_check_win"),
    "24.4": ("兑 offer to exchange (not a chase)", "_chases"),
    "24.4/24.5": ("兑/献: the attacked piece may take the attacker", "_chases"),
    "24.6": ("拦 block: the move stands in the way of a threat of mate or of a winning capture", "_blocks"),
    "24.15": ("有根/无根, 真根/假根: a real, legal recapture", "_see"),
    "25.3": ("子力 and 子力价值, the floating pawn value", "_balance"),
    "26.5": ("得不偿失: a losing full exchange is no chase", "_exchange_gain"),
    "29.2": ("从无捉到有捉: the chase is created by the move", "_is_new"),
    "29.4": ("the capturer is not mated at once", "_exchange_gain"),
    "29.4 抽将": ("a win by checks that a defence answers with mate wins nothing", "_win_by_checks"),
    "29.2 从捉到捉": ("the chaser moving on, still attacking the same target, is 闲", "_same_chaser_before"),
    "通则 1/2": ("the king chasing alone is 闲; 借帅之力 counts; 走动帅应将 is 闲", "classify_move"),
    "通则 3": ("a pawn's own chase is kept apart: 闲, or 捉 in 相互长打 (the referee decides)", "_chases"),
    "通则 7": ("从捉到捉 and a self-caused chase state are 闲", "_caused_by"),
    "通则 9": ("不能离线: a piece tied to its line", "_tied"),
}


@dataclasses.dataclass(frozen=True)
class Chase:
    """One chased piece: its square after the move, its type, the first capturer's
    square and type, the kind (:data:`UNROOTED`, :data:`BY_VALUE`, :data:`JOINT`,
    :data:`CHECK_WIN`), the material gain in value units, and ``joint``: a win by checks
    in which the moved piece and another piece act together (联合捉, 24.3; see
    :func:`_all_chases`)."""

    target: int
    target_type: int
    chaser: int
    chaser_type: int
    kind: str
    gain: int
    joint: bool = False


@dataclasses.dataclass
class MoveClass:
    """The class of one move of a cycle.

    ``cls`` is one of :data:`CHECK`, :data:`KILL`, :data:`CHASE`, :data:`IDLE`
    (将/杀/捉/闲); ``side`` the mover (True = Red); ``ply`` the index of the move
    in the board's ``move_stack``; ``chases`` the chases created by the move;
    ``pawn_chases`` chases whose first capturer is a pawn (kept apart so the rule
    set decides, see the module docstring); ``answers_check`` whether the mover
    was in check before it; ``targets`` the identities of the chased pieces
    and ``pawn_targets`` (the same for ``pawn_chases``), stable through the
    cycle and filled by :func:`classify_cycle`.
    """

    move: Move
    side: Color
    cls: str
    ply: int = -1
    chases: tuple[Chase, ...] = ()
    pawn_chases: tuple[Chase, ...] = ()
    answers_check: bool = False
    article: str = ""
    targets: frozenset[int] = frozenset()
    pawn_targets: frozenset[int] = frozenset()

    @property
    def en(self) -> str:
        """English name of the class: check, kill, chase or idle."""
        return CLASS_EN[self.cls]

    def __str__(self) -> str:
        return f"{self.move.iccs()}({self.cls})"


# ---------------------------------------------------------------------------
# Low-level helpers on a Board (they use the core's private move helpers: same
# package, and much cheaper than generating every legal move).
# ---------------------------------------------------------------------------

def _is_material(code: int, sq: int) -> bool:
    """True if the piece ``code`` on ``sq`` is 子力 (RULES.md §5.1)."""
    t = abs(code)
    if t == KING:
        return False
    if t == PAWN:
        return not own_half(sq, code > 0)
    return True


def _legal_captures_to(b: Board, sq: int) -> list[int]:
    """Squares of the side to move's pieces that can legally capture on ``sq``."""
    squares = b.squares
    victim = squares[sq]
    if victim == 0 or (victim > 0) == b.turn:
        return []
    out = []
    turn = b.turn
    for s in range(90):
        code = squares[s]
        if code and (code > 0) == turn and sq in b._pseudo_targets(s) and b._leaves_king_safe(s, sq):
            out.append(s)
    return out


def _has_legal_move(b: Board) -> bool:
    return any(True for _ in b.generate_legal_moves())


def _mate_in_one(b: Board) -> bool:
    """True if the side to move can mate at once."""
    for m in list(b.generate_legal_moves()):
        b.push(m, validate=False)
        mate = b.is_check() and not _has_legal_move(b)
        b.pop()
        if mate:
            return True
    return False


def _val(code: int, chaser: Color | None = None) -> int:
    """Value (25.3 子力价值, :data:`VALUE`) of the piece ``code`` in the exchange on one square
    (:func:`_see`); ``chaser`` is the side the exchange is judged for (the values are the same for
    both sides). The floating pawn value (one pawn for several pieces is no gain) needs the whole
    exchange: :func:`_balance` applies it to the complete exchange (:func:`_qs`)."""
    return VALUE[abs(code)]


def _see(b: Board, sq: int, chaser: Color | None) -> int:
    """Static exchange value (>= 0) for the side to move capturing on ``sq``, with the
    least valuable legal capturer first at every step; standing pat is allowed.

    24.15 有根子/无根子 and 真根/假根: a protector counts only through a legal
    recapture, so a protector pinned to its king, one whose recapture would face
    the other king (将帅不能照面), a cannon whose screen is gone and the king as a
    protector are judged as the game's rules judge them. Where the model stops: a
    recapture that is legal but walks into a mate is still counted here (the
    callers test mates separately, 29.4 / 通则 9)."""
    caps = _legal_captures_to(b, sq)
    if not caps:
        return 0
    frm = min(caps, key=lambda s: VALUE[abs(b.squares[s])])
    victim = _val(b.squares[sq], chaser)
    b.push(Move(frm, sq), validate=False)
    gain = victim - _see(b, sq, chaser)
    b.pop()
    return gain if gain > 0 else 0


#: Value of a mate in the exchange search: more than all the material on the board.
MATE = 1000
#: Plies of captures the exchange search (:func:`_qs`) plays out, and its node budget per call:
#: a longer sequence, or one needing more nodes, is cut there and judged as it stands.
QS_DEPTH = 8
QS_NODES = 400


def _worth(code: int, sq: int) -> int:
    """Material value (25.3 子力价值) of the piece ``code`` on ``sq``: :data:`VALUE`, and nothing for
    an uncrossed pawn (not 子力)."""
    if abs(code) == PAWN and own_half(sq, code > 0):
        return 0
    return VALUE[abs(code)]


def _balance(won: list[int], lost: list[int]) -> int:
    """What a side gains by an exchange in which it took the pieces ``won`` and gave the pieces
    ``lost`` (their types; uncrossed pawns left out): the values' difference, except that a crossed
    pawn's value floats (25.3 "兵卒价值浮动"): one pawn traded for several pieces, or one piece for
    several pawns, is no gain either way (0). One pawn for one piece is judged by the values."""
    for a, b in ((won, lost), (lost, won)):
        if len(a) >= 2 and b == [PAWN] and PAWN not in a:
            return 0
        if len(a) >= 2 and len(b) == 1 and b[0] != PAWN and all(t == PAWN for t in a):
            return 0
    return sum(VALUE[t] for t in won) - sum(VALUE[t] for t in lost)


def _captures(b: Board) -> list[tuple[int, int]]:
    """Legal captures (from, to) of the side to move, most valuable victim first, then least
    valuable capturer (a king is never a victim: a position where it could be is not legal)."""
    squares = b.squares
    turn = b.turn
    out = []
    for s in range(90):
        code = squares[s]
        if code and (code > 0) == turn:
            for t in b._pseudo_targets(s):
                v = squares[t]
                if v and abs(v) != KING and b._leaves_king_safe(s, t):
                    out.append((s, t))
    out.sort(key=lambda m: (-VALUE[abs(squares[m[1]])], VALUE[abs(squares[m[0]])]))
    return out


def _qs(b: Board, chaser: Color, won: list[int], lost: list[int], alpha: int, beta: int, depth: int,
        budget: _Budget, last: int = -1) -> int:
    """The complete mutual-capture sequence (24.3 "完整互吃交换") from ``b``: what ``chaser`` has
    gained (:func:`_balance` of ``won`` and ``lost``, the pieces taken so far) when both sides go on
    capturing with legal moves only, on any square, and either may stop when capturing no longer
    pays. Legal moves judge every protector: a piece pinned to its king, a recapture that would face
    the other king (将帅不能照面), a cannon whose screen has gone, the king as a protector (24.15
    真根/假根). A side in check may not stop: it is mated (±:data:`MATE`) without a legal move and
    must capture when every answer is a capture. The chaser's king and pawns only take back on the
    square of the last capture: the king or a pawn winning material alone is no chase (通则 1, 3).
    Alpha-beta bounds ``alpha``/``beta`` are from the chaser's side. Where the model stops: quiet
    moves are not searched (a mate by quiet checks is tested separately, 29.4), and the sequence is
    cut after ``depth`` captures or when ``budget`` runs out (the position then stands)."""
    budget.left -= 1
    mover_is_chaser = b.turn == chaser
    stand = _balance(won, lost)
    caps = _captures(b)
    if b._king_attacked(b.turn):
        quiet = any(not b.squares[m.to_square] for m in b.generate_legal_moves())
        if not quiet:
            if not caps:
                return -MATE if mover_is_chaser else MATE
            stand = -MATE if mover_is_chaser else MATE
    if depth <= 0 or budget.left <= 0 or not caps:
        return stand if abs(stand) < MATE or not caps else _balance(won, lost)
    squares = b.squares
    best = stand
    for s, t in caps:
        if mover_is_chaser:
            if best >= beta:
                return best
            alpha = max(alpha, best)
        else:
            if best <= alpha:
                return best
            beta = min(beta, best)
        code = squares[s]
        if mover_is_chaser and t != last and abs(code) in (KING, PAWN):
            continue
        victim = squares[t]
        kind = abs(victim) if _worth(victim, t) else 0
        b.push(Move(s, t), validate=False)
        if kind:
            (won if mover_is_chaser else lost).append(kind)
        score = _qs(b, chaser, won, lost, alpha, beta, depth - 1, budget, t)
        if kind:
            (won if mover_is_chaser else lost).pop()
        b.pop()
        if (score > best) if mover_is_chaser else (score < best):
            best = score
    return best


def _full_exchange(b: Board, frm: int, sq: int) -> int:
    """What the side to move wins by capturing on ``sq`` with the piece on ``frm`` and playing the
    complete exchange out (:func:`_qs`): the victim's value less the best the opponent then gets."""
    me = b.turn
    victim = b.squares[sq]
    won = [abs(victim)] if _worth(victim, sq) else []
    b.push(Move(frm, sq), validate=False)
    gain = _qs(b, me, won, [], -MATE - 1, MATE + 1, QS_DEPTH, _Budget(QS_NODES), sq)
    b.pop()
    return gain


def _capture_values(b: Board, chaser: Color | None) -> dict[tuple[int, int], int]:
    """Every legal capture of the side to move with its static exchange value."""
    out = {}
    squares = b.squares
    for m in list(b.generate_legal_moves()):
        v = squares[m.to_square]
        if v:
            b.push(m, validate=False)
            out[(m.from_square, m.to_square)] = _val(v, chaser) - _see(b, m.to_square, chaser)
            b.pop()
    return out


def _exchange_gain(b: Board, frm: int, sq: int, strict: bool = False) -> int | None:
    """What the side to move gains by capturing on ``sq`` with the piece on ``frm``.

    The exchange on ``sq`` is a static exchange evaluation; it must gain. Then the
    opponent's best other capture answers it (the full exchange of RULES_CXA §3.8,
    2020 26.5):

    - a capture it gets only because the capturer left ``frm`` (the capturer was
      pinned, 被牵子捉子, 26.5): a result that loses (得不偿失) is no chase, an
      equal one still is (24.3 "互吃交换" ends equal or better);
    - a capture it could already make, worth no more than before (an independent
      threat, 各吃各子 26.5): the result must gain;
    - a capture that became better because the capturer was its target's root
      (做根子捉子, 26.5) does not count after the move but does in ``strict`` mode.

    ``strict`` judges whether a chase already existed before a move: every
    capture the opponent has answers it and the result must gain. A chase that
    threats or a root's duty kept from being played was no chase yet; the move
    that frees it chases (29.2 从无捉到有捉). Returns the gain (0 when the exchange does
    not gain), or None if the capturer is mated at once (29.4, RULES.md §5.2.9).
    """
    me = b.turn
    victim = _val(b.squares[sq], me)
    pre: dict[tuple[int, int], int] = {}
    if not strict:
        b.turn = not b.turn
        pre = _capture_values(b, None)
        b.turn = not b.turn
    b.push(Move(frm, sq), validate=False)
    on_square = _see(b, sq, me)
    gain = victim - on_square
    if gain > 0:
        reply_pin = reply_other = on_square
        squares = b.squares
        for m in list(b.generate_legal_moves()):
            v = squares[m.to_square]
            if not v or m.to_square == sq:
                continue
            val = VALUE[abs(v)]
            if val <= min(reply_pin, reply_other):
                continue
            b.push(m, validate=False)
            g = val - _see(b, m.to_square, None)
            b.pop()
            key = (m.from_square, m.to_square)
            if strict:
                reply_other = max(reply_other, g)
            elif key not in pre:
                reply_pin = max(reply_pin, g)
            elif g <= pre[key]:
                reply_other = max(reply_other, g)
        if victim - reply_pin < 0 or victim - reply_other < (1 if strict else 0):
            gain = 0
    if victim == on_square:
        # 24.3 完整互吃交换: an even trade on the square that wins more material when the exchange
        # is played out on every square (a recapture that unguards or uncovers another piece).
        b.pop()
        full = _full_exchange(b, frm, sq)
        b.push(Move(frm, sq), validate=False)
        if full > 0:
            gain = full
    # 29.4 / 29.2: before a move, a capture met by a mating attack was no chase yet: the move that
    # parries the mate creates the chase.
    mated = gain > 0 and (mates_by_checks(b, REPLY_MATE_DEPTH) if strict else _mate_in_one(b))
    b.pop()
    return None if mated else gain


def _chases(b: Board, moved_to: int = -1, strict: bool = False,
            offers: set[int] | None = None) -> tuple[dict[int, Chase], dict[int, Chase]]:
    """Enemy pieces the side to move of ``b`` could capture with a gain now (24.3 捉).

    Targets are 子力 only (25.3). The first capturer is never the king (通则 1: the king
    chasing alone is 闲; it still protects and recaptures inside the exchange, 通则 2).
    Same-type mutual attacks are offers (24.4 兑), see the comment in the body.
    The kind of each chase feeds the 2020 responsibility comparison (RULES_CXA §4.4):
    :data:`JOINT` when two or more pieces (not king or pawn) attack a protected target
    (联合捉 / 少根子, 24.15), :data:`UNROOTED`, or :data:`BY_VALUE`.

    Returns two dicts keyed by target square: chases by pieces other than the
    king and pawns, and chases whose only gaining first capturer is a pawn.
    ``moved_to`` is the square of the piece that just moved (-1: none); it is
    the only pawn whose chases are reported (see :func:`classify_move`).
    ``strict`` is passed on to :func:`_exchange_gain`. ``offers``, if given, collects
    the squares of the pieces the side to move offers to exchange (24.4).
    """
    out: dict[int, Chase] = {}
    by_pawn: dict[int, Chase] = {}
    squares = b.squares
    me = b.turn
    for sq in range(90):
        code = squares[sq]
        if not code or (code > 0) == me or not _is_material(code, sq):
            continue
        caps = _legal_captures_to(b, sq)
        if not caps:
            continue
        tt = abs(code)
        b.push(Move(caps[0], sq), validate=False)
        rooted = bool(_legal_captures_to(b, sq))
        b.pop()
        # 第24.4条 兑: a same-type attacker that the target may take back (legally, and not then
        # mated: a piece tied to its line cannot, 通则 9) offers an exchange: if the opponent
        # takes, the mover takes back (the attacker is protected) or the trade was even anyway (the
        # target is protected), or the mover's piece goes for nothing and it gained nothing (the
        # target takes first). That attacker does not chase the target. 通则 5 从重 (兑兼捉): another
        # attacker that wins the target by itself still chases it; a win that needs two attackers
        # (联合捉) with only one left besides the exchanging piece is the exchange itself: the
        # opponent answers it by exchanging.
        offered_here = False
        mutual_from = [frm for frm in caps if abs(squares[frm]) == tt and frm in b._pseudo_targets(sq)]
        if mutual_from:
            b.turn = not b.turn
            takes_back = []
            for frm in mutual_from:
                if not b.is_legal(Move(sq, frm)):
                    continue
                b.push(Move(sq, frm), validate=False)
                if not mates_by_checks(b, REPLY_MATE_DEPTH):  # 通则 9: tied to its line, it cannot take
                    takes_back.append(frm)
                b.pop()
            b.turn = not b.turn
            if takes_back:
                if offers is not None:
                    offers.add(sq)
                caps = [c for c in caps if c not in takes_back]
                if not caps:
                    continue
                offered_here = True
                b.push(Move(caps[0], sq), validate=False)
                rooted = bool(_legal_captures_to(b, sq))
                b.pop()
        tval = VALUE[tt]
        best: Chase | None = None
        best_pawn: Chase | None = None
        for frm in sorted(caps, key=lambda s: VALUE[abs(squares[s])]):
            ctype = abs(squares[frm])
            if ctype == KING:
                continue  # the king chasing alone is idle (RULES.md §5.2.1)
            if ctype == PAWN and frm != moved_to:
                continue
            gain = _exchange_gain(b, frm, sq, strict)
            if gain is None or gain <= 0:
                continue
            if _needs_helper(b, frm, sq, moved_to, strict):
                kind = JOINT  # the moved piece helps another take (联合捉, 24.3)
            elif not rooted:
                kind = UNROOTED
            elif sum(1 for a in caps if abs(squares[a]) not in (KING, PAWN)) >= 2:
                kind = JOINT  # two pieces attack a protected piece (联合捉, 少根子)
            elif tval > VALUE[ctype]:
                kind = BY_VALUE
            else:
                kind = JOINT
            ch = Chase(sq, tt, frm, ctype, kind, gain)
            if ctype == PAWN:
                if best_pawn is None:
                    best_pawn = ch
                continue
            best = ch
            break
        if (best is not None and offered_here and best.kind == JOINT
                and sum(1 for a in caps if abs(squares[a]) not in (KING, PAWN)) < 2):
            best = None  # 兑: the joint win needs the exchanging piece
        if best is not None:
            out[sq] = best
        elif best_pawn is not None:
            by_pawn[sq] = best_pawn
    return out, by_pawn


#: Checking moves in a row that a win of material by checks may use (24.3 "照将或连续照将得子"),
#: and the node budget of one such search; a longer series, or a search out of nodes, wins nothing.
CHECK_WIN_DEPTH = 3
CHECK_WIN_NODES = 600


def _win_by_checks(b: Board, depth: int, budget: _Budget, won: list[int] | None = None,
                   lost: list[int] | None = None,
                   offered: frozenset[int] = frozenset()) -> tuple[int, int, int]:
    """Material the side to move wins by one check or a series of up to ``depth`` checks, against
    every defence (24.3 抽将 "可以下一着开始运用照将或连续照将得子"): the best over its checking
    moves of the worst over the opponent's replies of the complete exchange that follows (a capture
    sequence, :func:`_qs`, or another check), counting what the checks and the replies took
    (:func:`_balance`). A reply that takes the checker, blocks, or counter-checks is a defence like
    any other. A mating check is 杀 (24.2), not a win of material, and is skipped; a line in which
    the winner is mated on the immediate reply wins nothing (29.4): neither a line in which the
    answer to the check mates the checking side (a block or a capture that uncovers a check, 还将)
    nor one in which the capture that follows is met by a mate in one. A first check that lands
    on a square of ``offered`` is not tried (24.4, see :func:`_check_wins`). Returns (gain, square
    of the checking piece, square of the piece won after the worst reply); (0, -1, -1) if no check
    wins."""
    me = b.turn
    won = [] if won is None else won
    lost = [] if lost is None else lost
    squares = b.squares
    best = (0, -1, -1)
    for m in _checking_moves(b):
        if m.to_square in offered:
            continue  # 24.4: the opponent, to move, exchanges that piece first
        if budget.left <= 0:
            break
        budget.left -= 1
        first = squares[m.to_square]
        k1 = abs(first) if first and _worth(first, m.to_square) else 0
        b.push(m, validate=False)
        if k1:
            won.append(k1)
        worst: tuple[int, int] | None = None
        for r in list(b.generate_legal_moves()):
            taken = squares[r.to_square]
            k2 = abs(taken) if taken and _worth(taken, r.to_square) else 0
            b.push(r, validate=False)
            if k2:
                lost.append(k2)
            line, won_sq = _balance(won, lost), (m.to_square if k1 else -1)
            if not _has_legal_move(b):
                # 29.4 / 24.3: the reply mates the winner (e.g. a block that uncovers a check, 还将):
                # the line wins nothing; the defence that mates is the worst the checker can meet.
                line, won_sq = -MATE, -1
            for s, t in (_captures(b) if line > -MATE else ()):
                if abs(squares[s]) in (KING, PAWN):
                    continue  # 通则 1/3: the king or a pawn winning material alone is no chase
                victim = squares[t]
                k3 = abs(victim) if _worth(victim, t) else 0
                b.push(Move(s, t), validate=False)
                if k3:
                    won.append(k3)
                g = _qs(b, me, won, lost, line, MATE + 1, QS_DEPTH, budget, t)
                if g > line and _mate_in_one(b):
                    g = line  # 29.4: the winner must not be mated on the immediate reply
                if k3:
                    won.pop()
                b.pop()
                if g > line:
                    line, won_sq = g, t
            if depth > 1 and line > -MATE:
                deeper = _win_by_checks(b, depth - 1, budget, won, lost)
                if deeper[0] > line:
                    line, won_sq = deeper[0], deeper[2]
            if k2:
                lost.pop()
            b.pop()
            if worst is None or line < worst[0]:
                worst = (line, won_sq)
            if worst[0] <= best[0]:
                break
        if k1:
            won.pop()
        b.pop()
        if worst is not None and worst[0] > best[0] and worst[1] >= 0:
            best = (worst[0], m.from_square, worst[1])
    return best


def _needs_helper(b: Board, frm: int, sq: int, helper: int, strict: bool) -> bool:
    """True if the capture on ``sq`` by the piece on ``frm`` is a joint capture with the piece on
    ``helper`` (the piece just moved; 24.3 "使另一子可以与之联合吃子", 联合捉): the helper takes part
    in the exchange (it attacks ``sq`` too: it recaptures, or it covers the square so that the
    target's protector cannot take back), and without it the capture would be impossible (it is
    also the capturing cannon's screen) or would not gain. A move that only lets another piece
    capture (it is only a screen, it unpins the capturer, it parries a threat) is 24.3's
    "使另一子可以吃子", not a joint capture."""
    if helper < 0 or helper == frm:
        return False
    squares = b.squares
    code = squares[helper]
    if not code or (code > 0) != b.turn or abs(code) == KING:
        return False
    if sq not in _attacks_from(squares, helper):
        return False
    squares[helper] = 0
    try:
        if sq not in b._pseudo_targets(frm):
            return True  # it is also the capturing cannon's screen
        if not b._leaves_king_safe(frm, sq):
            return False  # it only blocked a line to the capturer's king: 使另一子可以吃子
        gain = _exchange_gain(b, frm, sq, strict)
        return gain is None or gain <= 0
    finally:
        squares[helper] = code


def _check_wins(b: Board, offered: frozenset[int] = frozenset()) -> dict[int, Chase]:
    """Material the side to move wins by a check or a series of checks against every defence
    (24.3 抽将, :func:`_win_by_checks`), keyed by the square of the piece won (after the worst
    reply; the piece is looked up there, or on its square now when the reply moved it). A first
    check that captures a piece on a square of ``offered`` (pieces the side to move offers to
    exchange, 24.4) is not tried: the opponent, to move, exchanges that piece first."""
    gain, frm, sq = _win_by_checks(b, CHECK_WIN_DEPTH, _Budget(CHECK_WIN_NODES), offered=offered)
    if gain <= 0:
        return {}
    code = b.squares[sq]
    if not code or (code > 0) == b.turn or not _is_material(code, sq):
        return {}
    return {sq: Chase(sq, abs(code), frm, abs(b.squares[frm]), CHECK_WIN, gain)}


def _check_squares(k: int) -> tuple[frozenset[int], frozenset[int]]:
    """For an enemy king on ``k``: the squares a moving piece must leave or reach for a move to be
    able to give check at all (the king's file and rank: rook and cannon lines, screens; the king's
    diagonal neighbours: the legs of horses attacking it), and the squares from which a horse
    attacks it. A cheap necessary condition; :func:`_checking_moves` then plays the move."""
    hit = _CHECK_SQUARES.get(k)
    if hit is None:
        f, r = k % 9, k // 9
        line = {x for x in range(90) if x % 9 == f or x // 9 == r}
        line |= {x for x in _diagonal_neighbours(k)}
        horse = {x for x in range(90) if {abs(x % 9 - f), abs(x // 9 - r)} == {1, 2}}
        hit = _CHECK_SQUARES[k] = (frozenset(line), frozenset(horse | set(_orthogonal_neighbours(k))))
    return hit


_CHECK_SQUARES: dict[int, tuple[frozenset[int], frozenset[int]]] = {}


def _checking_moves(b: Board) -> list[Move]:
    """Legal moves of the side to move that give check. Only moves that leave or reach the enemy
    king's lines, leave a horse leg next to it, or bring a horse or pawn next to it can check
    (:func:`_check_squares`); those are played and tested."""
    out = []
    me = b.turn
    k = b._kings[not me]
    if k < 0:
        return out
    line, near = _check_squares(k)
    squares = b.squares
    for frm in range(90):
        code = squares[frm]
        if not code or (code > 0) != me:
            continue
        t = abs(code)
        from_line = frm in line
        for to in b._pseudo_targets(frm):
            if not (from_line or to in line or (t in (HORSE, PAWN) and to in near)):
                continue
            m = Move(frm, to)
            b.push(m, validate=False)
            if b.is_check() and not b._king_attacked(me):
                out.append(m)
            b.pop()
    return out


class _Budget:
    """Nodes left for one mate search (see :data:`KILL_NODES`)."""

    __slots__ = ("left",)

    def __init__(self, nodes: int) -> None:
        self.left = nodes


#: Results of finished mate searches, keyed by (position, side to move, depth); bounded.
_MATE_CACHE: dict[tuple, bool] = {}
_MATE_CACHE_MAX = 20000


def mates_by_checks(b: Board, depth: int = KILL_DEPTH, nodes: int = KILL_NODES) -> bool:
    """True if the side to move of ``b`` mates within ``depth`` of its own moves, every
    one of them a check, against every defence (the test for 杀, 第24.2条: "一着或连续
    照将将死对方"). ``nodes`` bounds the positions visited; when the budget runs out
    the answer is False ("no mate proven"), so a kill that needs a longer or wider
    search than the budget is classified as not a kill (see :func:`mate_status`).
    ``b`` is left unchanged."""
    return mate_status(b, depth, nodes) is True


def mate_status(b: Board, depth: int = KILL_DEPTH, nodes: int = KILL_NODES) -> bool | None:
    """:func:`mates_by_checks` with the budget's verdict: True (mate proven), False (no
    mate within ``depth`` checking moves: the search finished), None (the node budget
    ran out first: nothing proven either way)."""
    key = (tuple(b.squares), b.turn, depth)
    hit = _MATE_CACHE.get(key)
    if hit is not None:
        return hit
    budget = _Budget(nodes)
    res = _mates(b, depth, budget)
    if not res and budget.left <= 0:
        return None  # exhausted: not cached, proves nothing
    if len(_MATE_CACHE) >= _MATE_CACHE_MAX:
        _MATE_CACHE.clear()
    _MATE_CACHE[key] = res
    return res


def _mates(b: Board, depth: int, budget: _Budget) -> bool:
    for m in _checking_moves(b):
        budget.left -= 1
        if budget.left <= 0:
            return False
        b.push(m, validate=False)
        replies = list(b.generate_legal_moves())
        if not replies:
            b.pop()
            return True
        ok = depth > 1
        if ok:
            for r in replies:
                b.push(r, validate=False)
                ok = _mates(b, depth - 1, budget)
                b.pop()
                if not ok:
                    break
        b.pop()
        if ok:
            return True
    return False


def _null(b: Board) -> Board:
    """A copy of ``b`` (no history) with the other side to move (a null move)."""
    c = b.copy(stack=False)
    c.turn = not c.turn
    return c


def _all_chases(b: Board, moved_to: int, strict: bool = False,
                offers: set[int] | None = None) -> tuple[dict[int, Chase], dict[int, Chase]]:
    """Chases by capture (:func:`_chases`) and by check (:func:`_check_wins`) of the side to move.

    24.4 兑: a piece the side to move offers to exchange (it may take the offered piece back,
    evenly) is not won by a check either, nor is anything won by a check that starts by taking
    it: the opponent, to move, exchanges it first."""
    offers = set() if offers is None else offers
    plain, by_pawn = _chases(b, moved_to, strict, offers)
    for sq, ch in _check_wins(b, frozenset(offers)).items():
        if sq not in plain and sq not in offers:
            if not strict and _joint_check_win(b, ch, moved_to):
                ch = dataclasses.replace(ch, joint=True)
            plain[sq] = ch
    return plain, by_pawn


def _joint_check_win(b: Board, ch: Chase, moved_to: int) -> bool:
    """True if the win by checks ``ch`` is a joint capture (联合捉, 24.3 "使另一子可以与之联合
    吃子"): another piece gives the check and the piece just moved on ``moved_to`` takes part: with
    it taken off the board, no check wins material. A win in which the moved piece checks by itself
    is its own chase; one that needs no help from it is not this move's joint capture."""
    if moved_to < 0 or ch.chaser == moved_to:
        return False
    code = b.squares[moved_to]
    if not code or (code > 0) != b.turn or abs(code) == KING:
        return False
    b.squares[moved_to] = 0
    try:
        return not _check_wins(b)
    finally:
        b.squares[moved_to] = code


def classify_move(board: Board, move: Move, rules: object | None = None) -> MoveClass:
    """Classify ``move`` (legal for the side to move of ``board``) as 将/杀/捉/闲.

    ``board`` is the position before the move; it is not changed. ``rules`` is a
    :class:`~xiangqi.core.referee.RuleSet` or its name (default CXA); it decides
    whether a king move that answers a check can be an attack. The order is the
    weight of 从重 (通则 5, RULES.md §5.2.4): 将 (24.1) first, then 杀 (24.2, a new
    mate threat), then 捉 (24.3, a new chase, 29.2), else 闲 (24.8). A king move
    that answers a check is 闲 (通则 2 "走动帅应将后产生的捉、杀为闲"). See the
    module docstring and :data:`ARTICLES`.

    Raises :class:`~xiangqi.core.errors.IllegalMoveError` if ``move`` is not legal.
    """
    rs = get_rules(rules)
    b = board.copy(stack=False)
    side = b.turn
    in_check = b.is_check()
    if rs.chase_model == "axf":
        if not b.is_legal(move):
            b.push(move)  # raises IllegalMoveError naming the move and the reason
        gives_check = b.gives_check(move)
        chased = axf_chased(board, move)
        b.push(move, validate=False)
        mover_type = abs(b.squares[move.to_square])
        chases = tuple(Chase(t, abs(b.squares[t]), move.to_square, mover_type, UNROOTED, 0)
                       for t in sorted(chased))
        cls = CHECK if gives_check else CHASE if chases else IDLE
        art = ("AXF: 将" if gives_check else "AXF: 捉 (rule 32 model)" if chases else "AXF: 闲")
        return MoveClass(move, side, cls, chases=chases, answers_check=in_check, article=art)
    king_move = abs(b.squares[move.from_square]) == KING
    before = b.copy(stack=False)
    b.push(move)
    if b.is_check():
        return MoveClass(move, side, CHECK, answers_check=in_check, article=ARTICLE_TEXT[CHECK])
    if in_check and king_move and rs.answer_check_idle:
        # 通则 2: "走动帅应将后产生的捉、杀为闲" — the king stepping out of check is 闲 even if it
        # creates an attack. Other answers to a check (a block, a capture of the checker) are
        # classified like any move: the article names the king's move only.
        return MoveClass(move, side, IDLE, answers_check=True, article="通则2, 走动帅应将")
    after = _null(b)
    # 24.2: a new mate threat — proven after the move, and proven absent before it (a search
    # that ran out of nodes before the move proves no absence: then the move is no new kill).
    kill = mates_by_checks(after) and mate_status(before) is False
    offers: set[int] = set()
    after_chase, after_pawn = _all_chases(after, move.to_square, offers=offers)
    threatened = False
    old: set[int] = set()
    old_check: set[int] = set()
    if after_chase or after_pawn:
        # 29.2: a side under a mate threat (杀) must parry first: its attacks in that position were
        # no chases yet, and the parry creates them. A side in check has no captures but the
        # answers to the check before its move; the chases of its answer must be created by it
        # (the moved piece attacks, uncovers or changes the protection, :func:`_caused_by`).
        threatened = not in_check and mates_by_checks(_null(before), REPLY_MATE_DEPTH)
        if not threatened and not in_check:
            before_chase, before_pawn = _all_chases(before, move.from_square, strict=True)
            old = {s for s, c in before_chase.items() if c.kind != CHECK_WIN} | set(before_pawn)
            old_check = set(before_chase)
            if any(c.kind == CHECK_WIN for c in before_chase.values()):
                old_check.add(-1)  # a check already won material before the move (29.2)
    new = tuple(c for s, c in sorted(after_chase.items()) if _is_new(c, s, old, old_check, threatened,
                                                                    b, before, after, move))
    new_pawn = tuple(c for s, c in sorted(after_pawn.items()) if s not in old)
    if kill:
        cls = KILL
    elif new:
        cls = CHASE
    else:
        cls = IDLE
    if cls == KILL:
        art = ARTICLE_TEXT[KILL]
    elif cls == CHASE and king_move:
        # 通则 2: the king is no chaser itself (通则 1); its move chases when another piece chases
        # with it or through it (借帅之力), as the book says it: "帅五平六，车捉马，判捉" (参考图18)
        own = 0 if side == RED else 1
        art = (f"通则2, {PIECE_NAMES_ZH[KING][own]}走动后{PIECE_NAMES_ZH[new[0].chaser_type][own]}捉, "
               + KIND_ZH[new[0].kind])
    elif cls == CHASE:
        art = "第24.3条, " + KIND_ZH[new[0].kind]
    elif king_move:
        art = _king_idle_article(after, move.to_square)
    elif after_chase:
        art = "第29.2条, 从捉到捉"  # the chases it leaves existed before, or the move takes no part
    elif offers:
        art = "第24.4条, 兑"
    elif _blocks(before, b, move):
        art = "第24.6条, 拦"
    else:
        art = ARTICLE_TEXT[IDLE]
    return MoveClass(move, side, cls, chases=new, pawn_chases=new_pawn, answers_check=in_check, article=art)


def _blocks(before: Board, played: Board, move: Move) -> bool:
    """True if ``move`` is a block (拦, 24.6: "a move that blocks an opponent piece and has no
    attacking function"; the caller has found no attack): ``before`` is the position before it (the
    mover to move), ``played`` after it (the opponent to move). The opponent had a threat that the
    move takes away by standing in its way: a mate by checks (杀, 24.2, :func:`mates_by_checks`) or
    a capture that won material by the exchange on its square (:func:`_see`), and with the moved
    piece lifted off its new square that threat is back (a move that answers the threat otherwise,
    by moving the attacked piece away or protecting it, is no block). ``played`` is restored."""
    to = move.to_square
    code = played.squares[to]
    if not code or abs(code) == KING:
        return False
    threat_before = _null(before)

    def winning_captures(b: Board) -> set[tuple[int, int]]:
        out = set()
        for s, t in _captures(b):
            v = b.squares[t]
            b.push(Move(s, t), validate=False)
            gain = _worth(v, t) - _see(b, t, None)
            b.pop()
            if gain > 0 and t != to:
                out.add((s, t))
        return out

    if mates_by_checks(threat_before) and mate_status(played) is False:
        played.squares[to] = 0
        try:
            if mates_by_checks(played):
                return True
        finally:
            played.squares[to] = code
    lost = winning_captures(threat_before) - winning_captures(played)
    if not lost:
        return False
    played.squares[to] = 0
    try:
        return bool(lost & winning_captures(played))
    finally:
        played.squares[to] = code


#: The article of a king's move that is 闲 while the king attacks a piece by itself (通则 1,
#: RULES_CXA §3.1: the king attacking a piece step after step is 闲, "帅（将）允许长捉", 图15), by
#: the mover's colour (帅 for Red, 将 for Black).
KING_ALONE_TEXT = {RED: "通则1, 帅单独捉子为闲", not RED: "通则1, 将单独捉子为闲"}


def _king_idle_article(after: Board, king_sq: int) -> str:
    """The article of a king's move classified 闲 (not a check, kill or chase), ``after`` being the
    position after it with the mover to move again and the king on ``king_sq``: 通则 1
    (:data:`KING_ALONE_TEXT`) when the king can now take an enemy 子力 by itself, else 24.8 (闲: a
    move that is not 将, 杀 or 捉). Never 29.2's 从捉到捉: the king is no chaser (通则 1), so a chase
    still on the board after its move is another piece's, one the king's move took no part in
    (had it taken part, 借帅之力 or uncovering the chaser, the move would be 捉, 通则 2)."""
    me = after.turn
    for m in after.generate_legal_moves():
        code = after.squares[m.to_square]
        if m.from_square == king_sq and code and (code > 0) != me and _is_material(code, m.to_square):
            return KING_ALONE_TEXT[me]
    return ARTICLE_TEXT[IDLE]


def _is_new(c: Chase, sq: int, old: set[int], old_check: set[int], threatened: bool,
            played: Board, before: Board, after: Board, move: Move) -> bool:
    """Whether chase ``c`` is created by ``move`` (29.2 从无捉到有捉): it did not exist before, or
    the move ties its target down (不能离线); and the move takes part in it (see :func:`_caused_by`),
    or it parried a check or a mate threat, or it took away the target's real root, or before it
    the capture would have been met by a mate."""
    if sq in (old_check if c.kind == CHECK_WIN else old) or _same_chaser_before(before, move, c):
        return _ties(played, move, c)
    # A check that wins material is new when no check won material before the move; when one
    # did, a different piece won in the worst line is 从捉到捉 unless the move takes part (29.2).
    return (threatened or (c.kind == CHECK_WIN and -1 not in old_check)
            or _caused_by(before.squares, after.squares, move, c)
            or _root_changed(before, after, c) or _was_mated_for(before, c) or _ties(played, move, c))


def _same_chaser_before(before: Board, move: Move, chase: Chase) -> bool:
    """True if the moved piece is the chaser and already won the same target from the square it
    left, by the exchange on the target's square (RULES.md §5.2.8, 29.2 从捉到捉: a piece that was
    already chasing, moving again without creating a new chase, is 闲), whatever else the opponent
    threatened then: a chaser that moves away from an attack or guards another piece with its move
    keeps the chase it had."""
    frm, t = move.from_square, chase.target
    if chase.kind == CHECK_WIN or chase.chaser != move.to_square or before.squares[t] == 0:
        return False
    if t not in before._pseudo_targets(frm) or not before._leaves_king_safe(frm, t):
        return False
    before.push(Move(frm, t), validate=False)
    gain = VALUE[chase.target_type] - _see(before, t, None)
    before.pop()
    return gain > 0


def _caused_by(before: list[int], after: list[int], move: Move, chase: Chase) -> bool:
    """True if ``move`` takes part in ``chase``: the moved piece attacks the target or screens a
    cannon that does; a piece of the mover attacks the target now but did not (uncovered); the
    target's protectors changed; or the moved piece was protected by the first capturer before
    (its root is free now). A chase that exists only because the opponent's threats went away,
    with the cycle's pieces not taking part, is no chase of this move (29.2; 通则 7: a chase state
    the victim caused itself, 自己造成的被捉状态, is 闲)."""
    t, frm, to = chase.target, move.from_square, move.to_square
    me = after[to] > 0
    att_after = set(_attackers_to(after, t, me))
    att_before = set(_attackers_to(before, t, me)) - {frm}
    if to in att_after or att_after - att_before:
        return True
    for a in att_after:  # the moved piece as a cannon's screen
        if abs(after[a]) == CANNON and _between(a, t, to):
            return True
    if set(_attackers_to(after, t, not me)) != set(_attackers_to(before, t, not me)):
        return True
    return frm in _attacks_from(before, chase.chaser) if before[chase.chaser] else False


def _tied(b: Board, sq: int) -> bool:
    """True if the piece on ``sq`` (side to move) cannot leave its line (不能离线, 通则 9): it has
    no legal move at all (pinned), or some of its moves let the other side mate by checks and its
    other quiet moves all stay on one rank or one file through ``sq``."""
    moves = [m for m in b.generate_legal_moves() if m.from_square == sq]
    if not moves:
        return True
    unsafe = False
    on_rank = on_file = True  # every safe quiet move so far stays on the rank / on the file
    for m in moves:
        capture = b.squares[m.to_square] != 0
        b.push(m, validate=False)
        mated = mates_by_checks(b, TIE_DEPTH)
        b.pop()
        if mated:
            unsafe = True
        elif not capture:
            on_rank = on_rank and m.to_square // 9 == sq // 9
            on_file = on_file and m.to_square % 9 == sq % 9
            if not (on_rank or on_file):
                return False
    return unsafe


def _ties(b: Board, move: Move, chase: Chase) -> bool:
    """True if ``move`` (just played on ``b``, the opponent to move) ties the chased piece to its
    line (see :func:`_tied`) and would not without the moved piece: an unchanged attack on a piece
    that the move ties down is a chase again (通则 9 不能离线: the tied piece is a 假根, 24.15)."""
    if chase.kind == CHECK_WIN or not _tied(b, chase.target):
        return False
    to = move.to_square
    code = b.squares[to]
    if abs(code) == KING:
        return False
    b.squares[to] = 0
    try:
        return not _tied(b, chase.target)
    finally:
        b.squares[to] = code


def _rooted(b: Board, frm: int, sq: int) -> bool | None:
    """Whether the piece on ``sq`` may legally be recaptured after the side to move takes it
    with the piece on ``frm``; None if that capture is not legal."""
    m = Move(frm, sq)
    if not b.is_legal(m):
        return None
    b.push(m, validate=False)
    r = bool(_legal_captures_to(b, sq))
    b.pop()
    return r


def _root_changed(before: Board, after: Board, chase: Chase) -> bool:
    """True if the target had a real protector before the move and has none now, e.g. the king
    that may no longer recapture because the kings would face (假根, 24.15; 通则 2 借帅之力)."""
    was = _rooted(before, chase.chaser, chase.target)
    now = _rooted(after, chase.chaser, chase.target)
    return was is True and now is False


def _was_mated_for(before: Board, chase: Chase) -> bool:
    """True if, before the move, the same capture would have been answered by a mate: the move
    that parries the mate creates the chase (29.2, 29.4)."""
    m = Move(chase.chaser, chase.target)
    if not before.is_legal(m):
        return False
    before.push(m, validate=False)
    mated = mates_by_checks(before, REPLY_MATE_DEPTH)
    before.pop()
    return mated


def _between(a: int, b: int, x: int) -> bool:
    """True if ``x`` lies strictly between ``a`` and ``b`` on one rank or file."""
    if a % 9 == b % 9 == x % 9:
        return min(a, b) < x < max(a, b)
    if a // 9 == b // 9 == x // 9:
        return min(a, b) < x < max(a, b)
    return False


def classify_cycle(board: Board, start_ply: int, rules: object | None = None) -> list[MoveClass]:
    """Classify every move of ``board.move_stack[start_ply:]`` (a repetition cycle).

    Returns one :class:`MoveClass` per move, in order, with ``ply`` set and
    ``targets`` holding stable identities of the chased pieces (an identity
    follows its piece through the cycle's moves, so a rule set can tell one
    piece chased on every move from several pieces chased in turn).

    Raises :class:`ValueError` if ``start_ply`` is outside the move history.
    """
    n = len(board.move_stack)
    if not 0 <= start_ply <= n:
        raise ValueError(f"start_ply {start_ply} is outside the move history (0..{n})")
    b = board.copy()
    for _ in range(n - start_ply):
        b.pop()
    ident = {sq: sq for sq in range(90) if b.squares[sq]}
    out = []
    for ply in range(start_ply, n):
        m = board.move_stack[ply]
        mc = classify_move(b, m, rules)
        mc.ply = ply
        b.push(m, validate=False)
        ident[m.to_square] = ident.pop(m.from_square)
        mc.targets = frozenset(ident.get(c.target, 100 + c.target) for c in mc.chases)
        mc.pawn_targets = frozenset(ident.get(c.target, 100 + c.target) for c in mc.pawn_chases)
        out.append(mc)
    return out


__all__ = ["ARTICLES", "BY_VALUE", "CHASE", "CHECK", "CHECK_WIN", "IDLE", "JOINT", "KILL", "KILL_DEPTH",
           "KILL_NODES", "UNROOTED", "VALUE", "Chase", "MoveClass", "classify_cycle", "classify_move",
           "mate_status", "mates_by_checks"]


# ---------------------------------------------------------------------------
# AXF chase detection (the model of Fairy-Stockfish's xiangqi rules)
# ---------------------------------------------------------------------------

def _attacks_from(squares: list[int], sq: int) -> list[int]:
    """Squares the piece on ``sq`` attacks, whoever stands there (for roots and chases)."""
    code = squares[sq]
    t = abs(code)
    color = code > 0
    out: list[int] = []
    if t == ROOK or t == CANNON:
        for ray in RAYS[sq]:
            screened = False
            for x in ray:
                if squares[x] == 0:
                    continue
                if t == ROOK or screened:
                    out.append(x)
                    break
                screened = True
    elif t == HORSE:
        out = [x for x, leg in HORSE_MOVES[sq] if squares[leg] == 0]
    elif t == ELEPHANT:
        out = [x for x, eye in ELEPHANT_MOVES[sq] if squares[eye] == 0]
    elif t == ADVISOR:
        out = list(ADVISOR_MOVES[sq])
    elif t == KING:
        out = list(KING_MOVES[sq])
    elif t == PAWN:
        out = list(PAWN_MOVES[color][sq])
    return out


def _attackers_to(squares: list[int], sq: int, color: Color) -> list[int]:
    return [s for s in range(90)
            if squares[s] and (squares[s] > 0) == color and sq in _attacks_from(squares, s)]


def _king_attackers(squares: list[int], king_sq: int, by: Color) -> set[int]:
    """Pieces of ``by`` attacking the king on ``king_sq``, the facing king included."""
    out = set(_attackers_to(squares, king_sq, by))
    f = king_sq % 9
    for ray in RAYS[king_sq]:
        for x in ray:
            if squares[x]:
                if x % 9 == f and abs(squares[x]) == KING:
                    out.add(x)
                break
    return out


def _blockers(squares: list[int], color: Color) -> set[int]:
    """Pieces (of either side) whose removal would let the enemy attack ``color``'s king
    with a piece that does not attack it now (blockers for the king: pins and screens)."""
    try:
        k = squares.index(KING if color else -KING)
    except ValueError:
        return set()
    now = _king_attackers(squares, k, not color)
    out = set()
    for s in range(90):
        code = squares[s]
        if not code or s == k:
            continue
        squares[s] = 0
        if _king_attackers(squares, k, not color) - now:
            out.add(s)
        squares[s] = code
    return out


def axf_chased(board: Board, move: Move) -> set[int]:
    """Squares (after ``move``) of the opponent's pieces chased by ``move`` under AXF.

    The model of Fairy-Stockfish's xiangqi chasing rule, the reference the AXF
    cases follow: new attacks by the moved piece (rooks and cannons only off
    the line they moved along) and by the pieces it uncovers; a target counts
    when it has no root (protectors that are pinned, and the attacker's own
    line, excluded; the king is no root where recapturing would face the other
    king) or when it is a rook attacked by a horse or cannon (or a rook, horse or
    cannon attacked by an advisor or elephant). Kings and uncrossed pawns are
    never chased; the king and pawns never chase directly; attacks between two
    pieces of the same type are exchanges unless the target is pinned. A move
    that pins a protector chases what it protected (假根), and a move that sets
    up a discovered check chases what the discovering piece attacks.
    ``board`` is the position before the move; it is not changed.
    """
    before = list(board.squares)
    b = board.copy(stack=False)
    b.push(move)
    sq = b.squares
    me = not b.turn  # the mover
    opp = b.turn
    frm, to = move.from_square, move.to_square
    try:
        opp_king = sq.index(KING if opp else -KING)
        my_king = sq.index(KING if me else -KING)
    except ValueError:
        return set()
    blockers_opp = _blockers(sq, opp)
    pins = {s for s in blockers_opp if sq[s] and (sq[s] > 0) == opp}
    # Flying general: a lone piece of the opponent between the kings on one file is pinned.
    if opp_king % 9 == my_king % 9:
        lo, hi = sorted((opp_king, my_king))
        between = [s for s in range(lo + 9, hi, 9) if sq[s]]
        if len(between) == 1 and (sq[between[0]] > 0) == opp:
            pins.add(between[0])
    chased: set[int] = set()

    def is_opp(s: int) -> bool:
        return sq[s] != 0 and (sq[s] > 0) == opp

    def add(attacker: int, atype: int, attacks: set[int]) -> None:
        attacks = {s for s in attacks if is_opp(s) and _is_material(sq[s], s)}
        if not attacks - chased:
            return
        if atype in (HORSE, CANNON):
            chased.update(s for s in attacks if abs(sq[s]) == ROOK)
        if atype in (ELEPHANT, ADVISOR):
            chased.update(s for s in attacks if abs(sq[s]) in (ROOK, CANNON, HORSE))
        # Attacks between two pieces of one type are exchanges when the target can take back
        # (and is not pinned). Whether a horse can take back depends on the target horse's own
        # leg, the point next to the target towards the attacker (a lame horse, 蹩马腿, RULES.md
        # §2), not on the attacker's legs: judge it by the target's moves.
        attacks = {s for s in attacks
                   if abs(sq[s]) != atype or s in pins or attacker not in _attacks_from(sq, s)}
        for s in attacks:
            code = sq[attacker]
            sq[attacker] = 0
            roots = [r for r in _attackers_to(sq, s, opp) if r not in pins]
            king_line = False
            if roots == [opp_king]:
                # The king recapturing on s must not face the other king.
                king_line = s % 9 == my_king % 9 and not any(
                    sq[x] for x in range(min(s, my_king) + 9, max(s, my_king), 9))
            sq[attacker] = code
            if not roots or king_line:
                chased.add(s)

    moved = abs(sq[to])
    if moved not in (KING, PAWN):
        direct = set(_attacks_from(sq, to))
        if moved in (ROOK, CANNON):
            same_line = (frm % 9 == to % 9, frm // 9 == to // 9)
            direct = {s for s in direct if not ((same_line[0] and s % 9 == to % 9)
                                                 or (same_line[1] and s // 9 == to // 9))}
        add(to, moved, direct)
    # Pieces of the mover uncovered by the move (a horse's leg, an elephant's eye, a line).
    candidates = set()
    for x in _orthogonal_neighbours(frm):
        if sq[x] and (sq[x] > 0) == me and abs(sq[x]) == HORSE:
            candidates.add(x)
    for x in _diagonal_neighbours(frm):
        if sq[x] and (sq[x] > 0) == me and abs(sq[x]) == ELEPHANT:
            candidates.add(x)
    for line_sq, types in ((frm, (ROOK, CANNON)), (to, (CANNON,))):
        for ray in RAYS[line_sq]:
            for x in ray:
                if sq[x] and (sq[x] > 0) == me and abs(sq[x]) in types:
                    candidates.add(x)
    old = list(before)
    for s in candidates:
        if s == to:
            continue
        now_att = set(_attacks_from(sq, s))
        old_att = set(_attacks_from(old, s)) if old[s] == sq[s] else set()
        add(s, abs(sq[s]), {x for x in now_att - old_att})
    # Fake roots: a protector newly pinned no longer protects.
    before_pins = _blockers(before, opp)
    for s in blockers_opp - before_pins:
        if not is_opp(s):
            continue
        for s2 in _attacks_from(sq, s):
            if is_opp(s2) and abs(sq[s2]) != KING and _is_material(sq[s2], s2):
                my_blockers = _blockers(sq, me)
                if any(a not in my_blockers for a in _attackers_to(sq, s2, me)):
                    chased.add(s2)
    # Discovered checks: a piece of the mover that now uncovers a check attacks freely.
    for s in blockers_opp - before_pins:
        if is_opp(s) or not sq[s]:
            continue
        king_reach = set(KING_MOVES[opp_king])
        for s2 in _attacks_from(sq, s):
            if not is_opp(s2) or s2 == opp_king:
                continue
            if s2 not in king_reach:
                chased.add(s2)
            else:
                code_s, code_k = sq[s], sq[opp_king]
                sq[s] = 0
                sq[opp_king] = 0
                others = _attackers_to(sq, s2, me)
                sq[s], sq[opp_king] = code_s, code_k
                if others:
                    chased.add(s2)
    return chased


def _orthogonal_neighbours(sq: int) -> list[int]:
    f, r = sq % 9, sq // 9
    return [x for x, ok in ((sq - 1, f > 0), (sq + 1, f < 8), (sq - 9, r > 0), (sq + 9, r < 9)) if ok]


def _diagonal_neighbours(sq: int) -> list[int]:
    f, r = sq % 9, sq // 9
    out = []
    for df, dr in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        if 0 <= f + df < 9 and 0 <= r + dr < 10:
            out.append(sq + df + 9 * dr)
    return out
