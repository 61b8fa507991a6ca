"""The ECCO 2004 definitions as data: a tree of codes, each reached by a condition on the first moves.

Source of the definitions: the published ECCO 2004 system (中国象棋开局编号), code by code with the
moves that make it, on the xqbase ECCO pages (https://www.xqbase.com/ecco/, and their FAQ) and in
English on xqinenglish ("ECCO classification code A…E", e.g.
http://www.xqinenglish.com/opeccoclassificationcodea4x-a6x.html). Written here in our own form;
where those pages were not at hand the facts (which moves make which code) were read from vschess's
LGPL classifier, never its code (docs/ECCO.md).

How to read the table
---------------------
Moves are WXF tokens from the mover's side (``C2.5`` = 炮二平五, ``H8+7`` = 马8进7, ``P3+1`` = 兵三进一,
``E3+5`` = 相三进五, ``.`` sideways, ``+`` forward, ``-`` back; files are numbered from each player's
right), after the game was mirrored so that Red's first move is on Red's right wing (files 1–5).
Only the first :data:`WINDOW` plies (10 moves a side) are looked at.

A node is ``node(CODE, branch, branch, …)``; a branch is ``when(CONDITION, target)``, the target a
node or a code. The classifier starts at the root, takes the first branch whose condition holds and
goes on from its target; when no branch holds, the node's code is the answer. So every code's
definition is its parent's plus its own condition, and a game that stops before a variation's
defining move gets the parent code. A node whose code is None groups branches and gives back its
parent's code.

Conditions:

- ``red(n, moves)`` / ``black(n, moves)``: that side's n-th move is one of ``moves`` (space-separated).
- ``plies(p, moves)``: the plies from ply p on (ply 1 = Red's first move) are exactly these.
- ``opening(red_moves, black_moves)``: the first moves of each side are these, in any order
  (a transposition reaches the same code).
- ``only(side, first, last, moves)``: every move of the side in moves first…last is one of ``moves``.
- A :class:`Scan` reads one side's moves from move ``start`` on, passing over ``skip`` moves (quiet
  developing moves that do not change the opening) and ``noted`` moves (passed over but remembered);
  the first other move is "the first new move". ``scan.first(moves)``: the first new move is one of
  them; ``scan.seen(moves)``: each of them was played before the first new move; ``scan.last(move)``:
  the last noted move before it was this one. The first new move can be the end of the game.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

#: Plies the definitions look at (the usual ECCO window).
WINDOW = 20

# A game's moves as the rules see them: tokens[side][n - 1] is the side's n-th move, side 0 = Red.
Moves = tuple[Sequence[str], Sequence[str]]
Condition = Callable[[Moves], bool]


def _set(moves: str) -> frozenset[str]:
    return frozenset(moves.split())


def _move(moves: Moves, side: int, n: int) -> str | None:
    seq = moves[side]
    return seq[n - 1] if 0 < n <= len(seq) else None


def red(n: int, moves: str) -> Condition:
    """Red's n-th move (1-based) is one of ``moves``."""
    wanted = _set(moves)
    return lambda m: _move(m, 0, n) in wanted


def black(n: int, moves: str) -> Condition:
    """Black's n-th move (1-based) is one of ``moves``."""
    wanted = _set(moves)
    return lambda m: _move(m, 1, n) in wanted


def plies(first: int, moves: str) -> Condition:
    """The plies from ``first`` on (ply 1 = Red's first move, 2 = Black's) are ``moves`` in order."""
    seq = moves.split()

    def test(m: Moves) -> bool:
        for i, tok in enumerate(seq):
            p = first + i
            if _move(m, (p - 1) % 2, (p + 1) // 2) != tok:
                return False
        return True
    return test


def opening(red_moves: str, black_moves: str) -> Condition:
    """Red's first moves are ``red_moves`` and Black's are ``black_moves``, each in any order."""
    r, b = sorted(red_moves.split()), sorted(black_moves.split())

    def test(m: Moves) -> bool:
        return (len(m[0]) >= len(r) and sorted(m[0][:len(r)]) == r
                and len(m[1]) >= len(b) and sorted(m[1][:len(b)]) == b)
    return test


def only(side: str, first: int, last: int, moves: str) -> Condition:
    """Every move of ``side`` (``"red"``/``"black"``) numbered ``first``…``last`` is one of ``moves``."""
    s, wanted = (0 if side == "red" else 1), _set(moves)
    return lambda m: all(_move(m, s, n) in wanted for n in range(first, last + 1))


def both(*conditions: Condition) -> Condition:
    """All of ``conditions`` hold."""
    return lambda m: all(c(m) for c in conditions)


def either(*conditions: Condition) -> Condition:
    """One of ``conditions`` holds."""
    return lambda m: any(c(m) for c in conditions)


def negate(condition: Condition) -> Condition:
    """``condition`` does not hold."""
    return lambda m: not condition(m)


@dataclasses.dataclass(frozen=True)
class Scan:
    """One side's moves from move ``start`` to ``end``, read up to the first new move (see the module doc).

    ``skip_once_noted`` maps a move to a noted move after which it is passed over too
    (e.g. a rook move that is quiet once the cannon has gone to the 6th file).
    """

    side: str
    skip: str = ""
    noted: str = ""
    start: int = 2
    end: int = WINDOW // 2
    skip_once_noted: tuple[tuple[str, str], ...] = ()

    def _read(self, m: Moves) -> tuple[int, str | None, list[str]]:
        s = 0 if self.side == "red" else 1
        skip, noted, later = _set(self.skip), _set(self.noted), dict(self.skip_once_noted)
        seen: list[str] = []
        for n in range(self.start, self.end + 1):
            tok = _move(m, s, n)
            if tok is None:
                return n, None, seen
            if tok in skip or (tok in later and later[tok] in seen):
                continue
            if tok in noted:
                seen.append(tok)
                continue
            return n, tok, seen
        return self.end + 1, None, seen

    def first(self, moves: str, *, before: str | None = None, after: str | None = None) -> Condition:
        """The first new move is one of ``moves``; with ``before``/``after``, the opponent's ply just
        before it / just after it was that move."""
        wanted, s = _set(moves), (0 if self.side == "red" else 1)

        def test(m: Moves) -> bool:
            n, tok, _seen = self._read(m)
            if tok not in wanted:
                return False
            if before is not None:  # the opponent's ply just before: Black's n-1 for Red, Red's n for Black
                if _move(m, 1 - s, n - 1 if s == 0 else n) != before:
                    return False
            if after is not None:
                if _move(m, 1 - s, n if s == 0 else n + 1) != after:
                    return False
            return True
        return test

    def seen(self, moves: str) -> Condition:
        """Each of ``moves`` was played (as a noted move) before the first new move."""
        wanted = moves.split()
        return lambda m: all(t in self._read(m)[2] for t in wanted)

    def last(self, move: str) -> Condition:
        """The last noted move before the first new move was ``move``."""
        def test(m: Moves) -> bool:
            seen = self._read(m)[2]
            return bool(seen) and seen[-1] == move
        return test


@dataclasses.dataclass(frozen=True)
class Node:
    """A code and the branches to its more specific codes (tried in order)."""

    code: str | None
    branches: tuple[tuple[Condition, Node | str], ...]


def node(code: str | None, *branches: tuple[Condition, Node | str]) -> Node:
    """A node of the tree: ``code`` unless one of ``branches`` leads further (see the module doc)."""
    return Node(code, branches)


def when(condition: Condition, target: Node | str) -> tuple[Condition, Node | str]:
    """A branch: if ``condition`` holds, go on to ``target`` (a node or a code)."""
    return condition, target


# ---------------------------------------------------------------------------------------------------
# C: 中炮对屏风马 (1. 炮二平五 马8进7 and 马2进3 for Black; 屏风马 = both horses up)
# ---------------------------------------------------------------------------------------------------

# C50s 五六炮: Red's left cannon to the 6th file.
_C50 = node(
    "C50",
    when(both(only("red", 2, 5, "H2+3 R1.2 C8.6 H8+9"), only("black", 2, 4, "H2+3 H8+7 R9.8 P7+1")),
         node("C51", when(plies(10, "R1.2 R9.8"), node("C52", when(black(6, "C2+4"), "C53"))))),
    when(both(only("red", 2, 5, "H2+3 R1.2 C8.6 R2+6"), only("black", 2, 4, "H2+3 H8+7 R9.8 P7+1")),
         node("C54", when(black(5, "P3+1"), "C56"), when(black(5, "R1.2"), "C55"))),
    when(Scan("red", skip="H2+3 R1.2 C8.6 P3+1 P7+1").first("R2+6"), "C54"),
    when(Scan("red", skip="H2+3 R1.2 C8.6 P3+1 P7+1").first("H8+9"), "C51"),
)

# C60s/C70s 五七炮: Red's left cannon to the 7th file.
_C60_SCAN = Scan("black", skip="H2+3 H8+7 R9.8", noted="P3+1")
_C60 = node(
    "C60",
    when(_C60_SCAN.first("P7+1"),
         node("C60", when(Scan("red", skip="H2+3 H8+9 R1.2 R2+6 C8.7").first("P7+1"), "C68"))),
    when(_C60_SCAN.first("H3+2"), "C71"),
    when(_C60_SCAN.seen("P3+1"), "C70"),
)

# C80s 中炮巡河炮: Red's left cannon two steps up.
_C80_SCAN = Scan("black", skip="P7+1 P3+1 H8+7 H2+3 R9.8", noted="E7+5")
_C80 = node(
    "C80",
    when(both(only("red", 2, 5, "H2+3 H8+7 C8+2 P7+1"), only("black", 2, 4, "H8+7 H2+3 R9.8 P7+1"),
              black(5, "H7+8")),
         node("C85", when(both(red(6, "H7+6"), red(7, "R1+1")), "C86"))),
    when(_C80_SCAN.first("E3+5"), "C84"),
    when(both(_C80_SCAN.first("C8+2"), _C80_SCAN.seen("E7+5")), "C83"),
    when(both(_C80_SCAN.first("R1+1"), _C80_SCAN.seen("E7+5")), "C82"),
    when(_C80_SCAN.first("C8+2 R1+1"), "C80"),
    when(_C80_SCAN.seen("E7+5"), "C81"),
)

# C90s 五八炮: Red's left cannon four steps up (to Black's river bank); 互进三兵 and the left horse.
_C93 = node(
    "C93",
    when(both(black(5, "E7+5 E3+5"), black(6, "P1+1"), red(7, "C8.7")), "C97"),
    when(both(black(5, "E7+5 E3+5"), black(6, "P1+1")), "C96"),
    when(both(black(5, "E7+5 E3+5"), black(6, "A6+5 A4+5")), "C94"),
    when(both(black(5, "E7+5 E3+5"), black(6, "P7+1")), "C95"),
    when(black(5, "E7+5 E3+5"), "C93"),
    when(both(black(5, "P1+1"), red(7, "C8.7")), "C97"),
    when(black(5, "P1+1"), "C96"),
    when(black(5, "A6+5 A4+5"), "C94"),
    when(black(5, "P7+1"), "C95"),
)
_C91_SCAN = Scan("red", skip="H2+3 R1.2 C8+4 P3+1")
_C90 = node(
    "C90",
    when(both(Scan("red", skip="H2+3 H8+7 H8+9 R1.2 R2+6 C8+4").first("P3+1"),
              Scan("black", skip="H8+7 H2+3 R9.8").first("P3+1")),
         node("C91",
              when(_C91_SCAN.first("H8+9"), _C93),
              when(_C91_SCAN.first("C8.7"), "C98"),
              when(_C91_SCAN.first("H8+7"), "C92"))),
)

# The 过河车互进七兵 main lines, reached in any move order (C20s, C30s, C40s), 五七炮 (C61-C67), C72-C78.
_C20 = node(
    "C20",
    when(red(6, "R9+1"), node(
        "C21",
        when(plies(12, "C2+1 R2-2 E3+5"), node(
            "C22",
            when(both(red(8, "P3+1"), red(9, "P7+1")), "C25"),
            when(red(8, "P3+1"), "C23"),
            when(both(red(8, "P7+1"), red(9, "P7+1")), "C25"),
            when(red(8, "P7+1"), "C24"))))),
)
_C40 = node(
    "C40",
    when(plies(11, "R2.3 C9-1"), node(
        "C41",
        when(red(7, "H8+7"), node(
            "C42",
            when(black(7, "A4+5"), node(
                "C43",
                when(red(8, "C8.9"), node("C45", when(either(black(8, "R1.2"), black(9, "R1.2")), "C46"))),
                when(red(8, "H7+6"), "C44"))))),
        when(red(7, "P5+1"), "C49"),
        when(red(7, "C8.6"), "C48"),
        when(red(7, "H8+9"), "C47"))),
)
_C30 = node(
    "C30",
    when(black(5, "H7+6"), node(
        "C35",
        when(red(6, "H8+7"), node(
            "C36",
            when(black(6, "E3+5"), node(
                "C37",
                when(red(7, "C8.9"), "C39"),
                when(red(7, "C8+1"), "C38"))))))),
    when(black(5, "C8.9"), _C40),
    when(black(5, "E7+5 E3+5"), "C32"),
    when(black(5, "A6+5 A4+5"), "C31"),
    when(black(5, "C2+4"), "C34"),
    when(black(5, "R1+1"), "C33"),
)
_C61 = node(
    "C61",
    when(black(5, "R1.2"), node(
        "C62",
        when(red(6, "R9.8"), node(
            "C63",
            when(black(6, "C2+4"), "C66"),
            when(black(6, "C2+2"), "C65"),
            when(black(6, "C8+4"), "C64"))))),
    when(black(5, "C2+2"), "C67"),
)
_C72 = node(
    "C72",
    when(red(7, "R9+1"), node(
        "C73",
        when(black(7, "E7+5"), node("C74", when(red(8, "R2+4"), "C76"), when(red(8, "H3+4"), "C75"))),
        when(black(7, "P1+1"), "C78"),
        when(black(7, "E3+5"), "C77"))),
)

# The first new Red move after the quiet developing ones decides the system against 屏风马.
_SCREEN = Scan("red", skip="H2+3 R1.2 P3+1 P7+1", noted="H8+9 H8+7 R2+6", end=9)
_C10_SCAN = Scan("red", skip="H2+3 H8+7 R1+1 R1.4 R1.6 P3+1 P7+1")
_C01_SCAN = Scan("red", skip="H2+3 H8+7 R1.2 P3+1 P7+1")
_C03_SCAN = Scan("black", skip="H2+3 H8+7 R9.8 P7+1 P3+1", noted="C8+4 C2+4")
SCREEN_HORSE = node(
    "C00",
    when(opening("C2.5 H2+3 R1.2 R2+6 H8+7", "H8+7 R9.8 P7+1 H2+3 P3+1"), _C20),
    when(opening("C2.5 H2+3 R1.2 R2+6 P7+1", "H8+7 R9.8 P7+1 H2+3"), _C30),
    when(opening("C2.5 H2+3 R1.2 H8+9 C8.7", "H8+7 R9.8 P7+1 H2+3"), _C61),
    when(opening("C2.5 H2+3 R1.2 P3+1 H8+9 C8.7", "H8+7 R9.8 H2+3 P3+1 P1+1 H3+2"), _C72),
    when(_SCREEN.first("R2+4"),
         node("C15", when(Scan("red", skip="H2+3 R1.2 R2+4 P3+1 P7+1").first("H8+7 H8+9"), "C16"))),
    when(_SCREEN.first("R1+1"), node(
        "C10",
        when(_C10_SCAN.first("P5+1"), "C14"),
        when(_C10_SCAN.first("C8.9"), "C13"),
        when(_C10_SCAN.first("C8+2"), "C12"),
        when(_C10_SCAN.first("H7+6"), "C11"))),
    when(_SCREEN.first("C8.7"), _C60),
    when(_SCREEN.first("C8+4"), _C90),
    when(_SCREEN.first("C8+2"), _C80),
    when(_SCREEN.first("C8.6"), _C50),
    when(_SCREEN.first("C8.9"), "C99"),
    when(_SCREEN.seen("R2+6"), node(
        "C17",
        when(Scan("red", skip="H2+3 R1.2 R2+6 P3+1 P7+1").first("H8+9"), "C19"),
        when(Scan("red", skip="H2+3 R1.2 R2+6 P3+1 P7+1").first("H8+7"), "C18"))),
    when(_SCREEN.seen("H8+7"), node(
        "C01",
        when(_C01_SCAN.first("P5+1"), node("C03", when(_C03_SCAN.seen("C8+4 C2+4"), "C04"))),
        when(_C01_SCAN.first("H7+6"), "C02"))),
    when(_SCREEN.seen("H8+9"), node(
        "C05", when(Scan("red", skip="H2+3 H8+9 R1.2 P3+1 P7+1").first("R9+1"), "C06"))),
)

# ---------------------------------------------------------------------------------------------------
# B: 中炮 against other defences (1. 炮二平五 马2进3 …, or 马8进7 without the second horse)
# ---------------------------------------------------------------------------------------------------

_B54_SETUP = both(only("red", 2, 5, "H2+3 H8+9 R1.2 P3+1"), only("black", 2, 4, "H8+7 C8.6 P3+1"))
_B50_SCAN = Scan("black", skip="E7+5 E3+5 H8+7 C8.6 P7+1 P3+1")
_B50 = node(
    "B50",
    when(_B54_SETUP, node(
        "B54",
        when(plies(10, "E7+5 C8.7 R1.2 R9.8 C2+4"), node("B55", when(plies(15, "P7+1 P3+1 P3+1"), "B56"))))),
    when(_B50_SCAN.first("R1.2"), "B53"),
    when(_B50_SCAN.first("R9+1"), "B52"),
    when(_B50_SCAN.first("R9.8"), "B51"),
)

# 反宫马 (Black: a cannon to the palace corner between the two horses).
_FGM_BLACK = Scan("black", skip="E7+5 E3+5 C8.6 P7+1 P3+1")
_FGM_RED = Scan("red", skip="H2+3 R1.2 P3+1 P7+1", noted="H8+9 H8+7 C8.6",
                skip_once_noted=(("R1+1", "C8.6"), ("R2+6", "C8.6")))
_B40 = node(
    "B40",
    when(plies(3, "H2+3 C8.6 R1.2 H8+7"), node(
        None,
        when(_FGM_RED.seen("H8+7"), node(
            "B41",
            when(both(red(4, "C8.6"), black(4, "R1.2")), node(
                "B42", when(black(5, "C2.1"), node("B43", when(black(6, "P7+1"), "B44"))))))),
        when(_FGM_RED.seen("H8+9"), "B45"))),
)
FAN_GONG_MA = node(
    "B30",
    when(plies(3, "P7+1 C8.6 H8+7"), "B32"),
    when(_FGM_BLACK.first("H8+7"), node(
        "B31",
        when(_FGM_RED.first("R1+1"), "B34"),
        when(_FGM_RED.first("R2+6"), "B33"),
        when(_FGM_RED.first("C8.7"), _B50),
        when(_FGM_RED.first("C8+4"), "B36"),
        when(_FGM_RED.first("C8+2"), "B35"),
        when(_FGM_RED.seen("C8.6"), _B40))),
)

_B01 = node(
    "B01",
    when(black(2, "R9+1"), node(
        "B10",
        when(both(red(2, "H2+3"), plies(5, "R1.2 R9.4")), node(
            "B12", when(red(4, "P7+1"), "B14"), when(red(4, "C8+2"), "B13"))))),
    when(both(black(2, "C8.6"), black(3, "H8+9 R9+1")), "B11"),
    when(black(2, "C8.6"), FAN_GONG_MA),
    when(black(2, "P3+1 P7+1"), node(
        "B01",
        when(black(3, "A6+5 A4+5"), "B02"),
        when(black(3, "C8.6"), FAN_GONG_MA),
        when(black(3, "H8+7"), SCREEN_HORSE),
        when(black(3, "R9+2"), "B03"))),
    when(black(2, "H8+7"), SCREEN_HORSE),
    when(black(2, "H8+9"), "B10"),
    when(black(2, "C2.1"), "B04"),
)

# After 1. 炮二平五 马8进7: Black's next telling move (passing over the rook and pawn moves).
_AFTER_LEFT_HORSE = Scan("black", skip="R9.8 R8+5 P7+1 P3+1", noted="C8+4 C8.9")
_B20_SCAN = Scan("red", skip="H2+3 H8+7", noted="P3+1 P7+1")
_B20 = node(  # 左三步虎: Black's left cannon to the edge
    "B20",
    when(_B20_SCAN.seen("P3+1 P7+1"), "B25"),
    when(_B20_SCAN.first("E7+9", before="R8+5"), "B21"),
    when(_B20_SCAN.first("C8+4"), "B24"),
    when(_B20_SCAN.first("C8+2"), "B23"),
    when(_B20_SCAN.first("R1+1"), "B22"),
)

# ---------------------------------------------------------------------------------------------------
# D: 顺炮 (1. 炮二平五 炮8平5) and 列炮 (炮2平5, also after 马8进7: 后补列炮 and the 转列炮 lines)
# ---------------------------------------------------------------------------------------------------

_D30 = node(  # 左炮封车 then 列炮
    "D30",
    when(plies(3, "H2+3 R9.8 R1.2 C8+4 P3+1 C2.5"), node(
        "D31",
        when(red(5, "P7+1"), "D36"),
        when(red(5, "C8+5"), "D35"),
        when(red(5, "H8+9"), "D34"),
        when(red(5, "H8+7"), "D33"),
        when(red(5, "H3+4"), "D32"))),
)
_D40_SCAN = Scan("red", skip="H2+3 H8+7", noted="P3+1 P7+1")
_D40 = node(  # 左三步虎 then 列炮
    "D40",
    when(_D40_SCAN.seen("P3+1 P7+1"), "D43"),
    when(_D40_SCAN.first("P5+1", before="R8+5", after="C2.5"), "D41"),
    when(_D40_SCAN.first("R9.8"), "D42"),
)
_D51_SCAN = Scan("red", skip="H2+3 H8+7 P3+1 P7+1", noted="R1.2 R9.8")
_D51 = node(  # 后补列炮
    "D51",
    when(_D51_SCAN.seen("R1.2 R9.8"), "D55"),  # both rooks out before any other move: 双直车
    when(_D51_SCAN.first("R2+6"), "D53"),
    when(_D51_SCAN.seen("R1.2"), "D52"),
    when(_D51_SCAN.seen("R9.8"), "D54"),
)
LEFT_HORSE = node(  # 1. 炮二平五 马8进7 without 马2进3 at once
    "B05",
    when(both(_AFTER_LEFT_HORSE.first("C2.5"), _AFTER_LEFT_HORSE.last("C8.9")), _D40),
    when(both(_AFTER_LEFT_HORSE.first("C2.5"), _AFTER_LEFT_HORSE.last("C8+4")), _D30),
    when(_AFTER_LEFT_HORSE.first("C2.5"), _D51),
    when(_AFTER_LEFT_HORSE.last("C8.9"), _B20),
    when(_AFTER_LEFT_HORSE.last("C8+4"), "B07"),
    when(_AFTER_LEFT_HORSE.first("H2+3"), SCREEN_HORSE),
    when(_AFTER_LEFT_HORSE.first("R9+1"), "B06"),
)

_D10_SCAN = Scan("black", skip="H2+3 P7+1 P3+1", start=3)
_D10 = node(  # 顺炮直车对缓开车
    "D10",
    when(_D10_SCAN.first("C2.1"), "D15"),
    when(_D10_SCAN.first("C2+4"), "D14"),
    when(_D10_SCAN.first("R9.8"), "D13"),
    when(_D10_SCAN.first("R1+1"), "D12"),
    when(_D10_SCAN.first("R9+1"), "D11"),
)
_D20_SCAN = Scan("red", skip="H8+7", noted="P3+1 P7+1", start=4)
_D20 = node(  # 顺炮直车对横车
    "D20",
    when(_D20_SCAN.seen("P3+1 P7+1"), node(
        "D28", when(Scan("black", skip="H2+3 R9.4", start=4).first("R1+1"), "D29"))),
    when(_D20_SCAN.first("A4+5 A6+5"), "D21"),
    when(_D20_SCAN.first("H8+9"), "D22"),
    when(_D20_SCAN.first("R2+4"), "D23"),
    when(_D20_SCAN.first("R2+6"), "D24"),
    when(_D20_SCAN.first("C8.6"), "D25"),
    when(_D20_SCAN.seen("P3+1"), "D26"),
    when(_D20_SCAN.seen("P7+1"), "D27"),
)
SAME_SIDE_CANNONS = node(  # 顺炮: 1. 炮二平五 炮8平5
    "D00",
    when(both(red(2, "H2+3"), black(2, "H8+7")), node(
        None,
        when(both(red(3, "R1.2"), black(3, "R9+1")), _D20),
        when(red(3, "R1.2"), _D10),
        when(red(3, "R1+1"), node("D03", when(black(3, "R9.8"), node("D04", when(black(4, "R8+4"), "D05"))))),
        when(black(3, "R9.8"), "D02"),
        when(black(3, "R9+1"), "D01"))),
    when(both(red(2, "H2+3"), black(2, "R9+1")), node("D01", when(plies(5, "R1.2 H8+7"), _D20))),
    when(red(2, "R1+1"), node(
        "D03", when(plies(4, "R9.8 H8+7"), node("D04", when(black(3, "R8+4"), "D05"))))),
)

CENTRAL_CANNON = node(
    "B00",
    when(black(1, "C8.5"), SAME_SIDE_CANNONS),
    when(black(1, "H8+7"), LEFT_HORSE),
    when(black(1, "H2+3"), _B01),
    when(black(1, "C2.5"), "D50"),
)

# ---------------------------------------------------------------------------------------------------
# E: 仙人指路 (1. 兵三进一, or 兵七进一 mirrored) and 对兵局
# ---------------------------------------------------------------------------------------------------

_E24 = node(
    "E24",
    when(plies(11, "C2.1 H2+1 H3+4"), node(
        "E24",
        when(black(7, "P1+1"), "E27"),
        when(black(7, "R8+6"), "E26"),
        when(black(7, "A6+5"), "E25"))),
)
_E31 = node(
    "E31",
    when(red(5, "H2+1 R9.8"), node(
        "E31",
        when(black(5, "R1+1"), node(
            "E33",
            when(red(6, "R1.2"), "E36"),
            when(red(6, "R8+4"), "E35"),
            when(red(6, "A4+5"), "E34"))),
        when(black(5, "H8+6"), "E32"))),
)
_E20 = node(  # 转左中炮对卒底炮飞左象
    "E20",
    when(red(3, "H8+7"), node(
        "E22",
        when(black(3, "R1+1"), node("E23", when(plies(7, "R9.8 R1.8 H2+3 H8+6"), _E24))),
        when(black(3, "P7+1"), node(
            "E30", when(either(plies(7, "H2+1 P7+1"), plies(7, "R9.8 P7+1")), _E31))))),
    when(red(3, "C5+4"), "E38"),
    when(red(3, "H2+1"), "E37"),
    when(red(3, "A4+5"), "E21"),
)
_E42 = node(
    "E42",
    when(red(3, "E3+5 E7+5"), "E43"),
    when(red(3, "C2.1"), "E45"),
    when(red(3, "R1+1"), "E44"),
)
PAWN_OPENING = node(
    "E00",
    when(black(1, "C8.7"), node(  # 卒底炮
        "E10",
        when(red(2, "C8.5"), node(
            "E13",
            when(black(2, "E3+5"),
                 node("E14", when(red(3, "H2+1"), node("E15", when(black(3, "H8+9"), "E16"))))),
            when(black(2, "E7+5"), _E20),
            when(black(2, "C2.5"), "E17"))),
        when(red(2, "E7+5 E3+5"), "E11"),
        when(red(2, "C2.5"), "E12"))),
    when(black(1, "H2+3"), node(
        "E06",
        when(both(red(2, "H2+3"), black(2, "P3+1")), _E42),
        when(red(2, "H2+3"), "E07"),
        when(both(red(2, "P7+1"), black(2, "C8.7")), "E09"),
        when(red(2, "P7+1"), "E08"))),
    when(black(1, "P3+1"), node(  # 对兵局
        "E40",
        when(both(red(2, "H2+3"), black(2, "H2+3")), _E42),
        when(red(2, "H2+3"), "E41"),
        when(red(2, "C8.7"), node("E46", when(black(2, "C8.5"), "E48"), when(black(2, "C2.5"), "E47"))))),
    when(black(1, "E7+5 E3+5"), node("E01", when(red(2, "H2+3"), "E02"))),
    when(black(1, "C8.6 C8.4 C2.6 C2.4"), "E04"),
    when(black(1, "C8.5 C2.5"), "E03"),
    when(black(1, "C2.7"), "E05"),
)

# ---------------------------------------------------------------------------------------------------
# A: the other first moves (飞相, 起马, 仕角炮, 过宫炮, the side openings)
# ---------------------------------------------------------------------------------------------------


def _both_horses(quiet: str) -> Condition:
    """Red brings out both horses before any move other than ``quiet`` ones (转屏风马, 转反宫马)."""
    scan = Scan("red", skip=quiet, noted="H2+3 H8+7")
    return scan.seen("H2+3 H8+7")


ELEPHANT = node(  # 飞相局: 1. 相三进五
    "A10",
    when(black(1, "H2+3"), node("A14", when(red(2, "P7+1"), "A16"), when(red(2, "P3+1"), "A15"))),
    when(black(1, "C2.4"), node(
        "A21",
        when(red(2, "P7+1"), "A26"),
        when(red(2, "P3+1"), "A25"),
        when(red(2, "R9+1"), "A24"),
        when(red(2, "H8+9"), "A23"),
        when(red(2, "H8+7"), "A22"))),
    when(black(1, "C8.4"), node(
        "A30",
        when(red(2, "H2+3"), node(
            "A31",
            when(plies(4, "H8+7 R1.2 P7+1"), node("A32", when(red(4, "P7+1"), "A34"),
                                                   when(red(4, "C2.1"), "A33"))))))),
    when(black(1, "P7+1"), node("A36", when(red(2, "P7+1"), "A38"), when(red(2, "H8+7"), "A37"))),
    when(black(1, "C8.5"), node("A27", when(_both_horses("R1.2 P3+1 P7+1"), "A28"))),
    when(black(1, "P3+1"), "A39"),
    when(black(1, "C2.6"), "A35"),
    when(black(1, "C2.5"), "A29"),
    when(black(1, "C8.6"), "A20"),
    when(black(1, "H8+7"), "A13"),
    when(black(1, "E3+5"), "A12"),
    when(black(1, "E7+5"), "A11"),
)

ROOT = node(
    "A00",
    when(red(1, "E3+5"), ELEPHANT),
    when(red(1, "H2+3"), node(  # 起马局
        "A40",
        when(black(1, "P7+1"), node(
            "A41",
            when(red(2, "P7+1"), "A45"),
            when(red(2, "C8.5"), "A44"),
            when(red(2, "C8.6"), "A43"),
            when(red(2, "C2.1"), "A42"))))),
    when(red(1, "C2.4"), node(  # 仕角炮局
        "A50",
        when(black(1, "C2.5"), node("A52", when(_both_horses("R9.8 P3+1 P7+1"), "A53"))),
        when(black(1, "P7+1"), "A54"),
        when(black(1, "H8+7"), "A51"))),
    when(red(1, "C2.5"), CENTRAL_CANNON),
    when(red(1, "C2.6"), node(  # 过宫炮局
        "A60",
        when(black(1, "C8.5"), node(
            "A63",
            when(both(red(2, "H2+3"), red(3, "R1.2")), node(
                "A64",
                when(either(both(black(2, "H8+7"), black(3, "R9+1")),
                            both(black(2, "R9+1"), black(3, "H8+7"))), "A65"))))),
        when(black(1, "R9+1"), "A62"),
        when(black(1, "H8+7"), "A61"))),
    when(red(1, "P3+1"), PAWN_OPENING),
    when(red(1, "P1+1"), "A08"),
    when(red(1, "C2.7"), "A07"),
    when(red(1, "C2.3"), "A06"),
    when(red(1, "C2+4"), "A05"),
    when(red(1, "C2+2"), "A04"),
    when(red(1, "C2.1"), "A03"),
    when(red(1, "H2+1"), "A02"),
    when(red(1, "A4+5"), "A01"),
)
