"""Perpetual chase judged inside the search (engine/chase.py, issue 16 "Search with the rules").

The kernels' model of 捉 (RULES.md §5.1, RULES_CXA.md 24.3 and 29.x) on small positions, their
rulings of the CXA rule-book cycles (tests/data/repetition_cxa.tsv, the figures of the 2020 rule
book) against the book, and the engine using them: it avoids a perpetual chase that loses and
values the opponent's forced one as the win it is.
"""

from __future__ import annotations

import numpy as np
import pytest

from xiangqi import Board, Move
from xiangqi.engine import Engine, Limit
from xiangqi.engine import consts as K
from xiangqi.engine.chase import cycle_verdict, find_cycle, move_chases
from xiangqi.engine.movegen import board_arrays

from ..conftest import read_tsv  # type: ignore[import-not-found]


def _sq(name: str) -> int:
    return (int(name[1]) * 9) + "abcdefghi".index(name[0])


def _name(sq: int) -> str:
    return "abcdefghi"[sq % 9] + str(sq // 9)


def chased(fen: str, move: str, pawn_chases: bool = True) -> list[str]:
    """Squares the move chases, by the kernel (the board arrays are left with the move played)."""
    bd, ks, side = board_arrays(Board(fen))
    m = Move.from_iccs(move)
    out = np.zeros(16, np.int64)
    scratch = np.zeros(K.MAX_MOVES, np.int64)
    n = move_chases(bd, ks, m.from_square, m.to_square, side, pawn_chases, out, scratch)
    assert bd[m.to_square] != 0 and bd[m.from_square] == 0  # the move stays played
    return sorted(_name(int(s)) for s in out[:n])


@pytest.mark.parametrize(("fen", "move", "expected"), [
    # a rook attacks an unprotected cannon: 捉
    ("3k5/9/9/9/2c6/9/9/9/9/R3K4 w", "a0a5", ["c5"]),
    # the same cannon protected by a horse (b7 → c5): a rook on a protected cannon wins nothing
    ("3k5/9/1n7/9/2c6/9/9/9/9/R3K4 w", "a0a5", []),
    # a horse attacks a protected rook: 捉 by value (子力价值, a horse for a rook)
    ("3k5/9/1n7/9/2r6/9/9/9/N8/4K4 w", "a1b3", ["c5"]),
    # a rook offered to an unprotected rook that can take it back: 兑, not a chase
    ("3k5/9/9/9/2r6/9/9/9/9/R3K4 w", "a0a5", []),
    # a pawn that has not crossed the river is no 子力; a crossed one is
    ("3k5/9/9/2p6/9/9/9/9/9/R3K4 w", "a0a6", []),
    ("3k5/9/9/9/9/2p6/9/9/9/R3K4 w", "a0a4", ["c4"]),
    # a discovered attack: the horse leaves the rook's rank, the rook now attacks the cannon
    ("3k5/9/9/9/RN1c5/9/9/9/9/4K4 w", "b5a7", ["d5"]),
    # the protector is pinned against its king by the rook on the file (假根): still a chase
    ("4k4/9/9/4n4/9/3c5/9/9/4R4/R3K4 w", "a0a4", ["d4"]),
])
def test_move_chases(fen: str, move: str, expected: list[str]) -> None:
    assert chased(fen, move) == expected


def test_a_pawn_chases_only_when_the_rules_count_it() -> None:
    # a crossed red pawn steps next to an unprotected black cannon (CXA counts it, AXF does not)
    fen = "3k5/9/9/9/2c6/3P5/9/9/9/4K4 w"
    assert chased(fen, "d4d5", pawn_chases=True) == ["c5"]
    assert chased(fen, "d4d5", pawn_chases=False) == []


def _kernel_ruling(fen: str, moves: list[str], rules: int = K.RULES_CXA) -> str:
    """The kernel's ruling of the cycle ending the game: 'red', 'black' (the winner) or 'draw'."""
    b = Board(fen)
    for m in moves:
        b.push_iccs(m)
    eng = Engine(hash_mb=1)
    bd, ks, st = eng._load(b)
    hp = int(st[K.S_HP])
    j = find_cycle(eng._rk, eng._rf, hp)
    assert j >= 0 and (hp - j) % 2 == 0
    before = bd.copy()
    s = cycle_verdict(bd, ks, int(st[K.S_SIDE]), eng._rk, eng._rf, j, hp, rules)
    assert (bd == before).all()  # the board is restored
    if s == 0:
        return "draw"
    to_move = "red" if b.turn else "black"
    return to_move if s > 0 else ("black" if b.turn else "red")


#: The kernel's rulings of the rule-book cycles where it rules a loss. Every one is the book's
#: ruling except fig18 (the core referee rules it so too: black's king answers a check, then its
#: mate threat; the book's draw rests on 通则 text the referee and the kernel do not model) and
#: ref47 (red's 炮五平三 chases a horse through a complete exchange the kernel does not play out, so it
#: sees red as allowed and black, 一将一捉, as forbidden; the book: both forbidden, a draw).
#: ref16 is a draw here: a pawn chasing by itself is 闲 (通则 3), and the rook's attack on the
#: crossed pawn that makes red's moves 捉 in the book is an uncovered attack the kernel does not see.
KERNEL_WINS = {
    "CXA-fig15": "black", "CXA-fig18": "black", "CXA-fig22": "black", "CXA-fig25": "red",
    "CXA-fig27": "black", "CXA-fig28": "red", "CXA-ref10": "black",
    "CXA-ref20": "red", "CXA-ref21": "black", "CXA-ref36": "black", "CXA-ref38": "black",
    "CXA-ref47": "red",
}
MODEL_DIFFERS = {"CXA-fig18", "CXA-ref47"}


def test_kernel_rulings_of_the_rule_book_cycles() -> None:
    rows = [r for r in read_tsv("repetition_cxa.tsv") if r["moves"]]
    assert len(rows) == 52
    got = {}
    for row in rows:
        moves = row["moves"].split()
        ruling = _kernel_ruling(row["fen"], moves)
        if ruling != "draw":
            got[row["id"]] = ruling
        # checks only (the search before chases were judged): only perpetual check decides
        assert _kernel_ruling(row["fen"], moves, K.RULES_CHECKS) in ("draw", row["winner"], ruling)
    assert got == KERNEL_WINS
    book = {r["id"]: r["winner"] for r in rows}
    assert {k for k, v in got.items() if book[k] != v} == MODEL_DIFFERS
    # where the kernel rules a loss it agrees with the rule book 10 times in 12
    assert sum(book[k] == v for k, v in got.items()) == 10


def _texel_engine() -> Engine:
    """An engine playing the tuned tables (``Engine.evaluation = "texel"``), which these figures'
    margins were measured with."""
    eng = Engine(hash_mb=8)
    eng.evaluation = "texel"
    return eng


def test_engine_avoids_a_losing_perpetual_chase() -> None:
    # 参考图36: red's horse chases black's rook a2c1 / c1a2 while black shuffles it a0b0 / b0a0; the
    # rule book rules red's perpetual chase a loss. Red is behind (-7 pawns by our evaluation), so
    # a search that sees only perpetual check takes the repetition as the draw it is not.
    # The figure's balance is the tuned tables' (the test is of the chase model, not of an evaluation:
    # the network values the position differently and finds a2c1 best on its merits, -5.6 pawns).
    fen = "4ka3/4a4/4c3b/p7p/2r1p1b2/P7P/2P6/N3BR3/n3A1C2/r1B1KA3 w"
    blind = _texel_engine()
    blind.repetition_rules = "checks"
    res = blind.search(Board(fen), Limit(depth=6))
    assert res.move == Move.from_iccs("a2c1")
    eng = _texel_engine()
    res = eng.search(Board(fen), Limit(depth=6))
    assert res.move != Move.from_iccs("a2c1")


def test_engine_values_the_opponents_forced_perpetual_chase() -> None:
    # 参考图38 after red's 马一进三 (i1g2, a chase of the rook): black's rook steps aside h0g0, and
    # red's only way to keep the balance is to chase it again, which the rules forbid. Black, to
    # move, goes into the cycle and scores it far better than a search blind to chases does.
    b = Board("2c1kab2/4a4/2n1b4/p3P3p/6p2/9/P7P/1CN1C4/4A3N/2BAKR1rc w")
    b.push_iccs("i1g2")
    blind = _texel_engine()  # the margin below is the tuned tables' (see the test above)
    blind.repetition_rules = "checks"
    r0 = blind.search(b, Limit(depth=8))
    r1 = _texel_engine().search(b, Limit(depth=8))
    assert r0.move == r1.move == Move.from_iccs("h0g0")
    assert r0.score_cp is not None and r1.score_cp is not None
    assert r1.score_cp >= r0.score_cp + 60
