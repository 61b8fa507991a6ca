"""Cost of the rules referee (issue 3): classifying a typical repetition cycle and
``forbidden_moves`` after a move, in milliseconds (pure Python, this machine).

Run: ``.venv/bin/python bench/bench_referee.py``. Prints one line per measurement
and, as the peer, the cost of generating the legal moves of the same position
(``ratio`` = referee cost / legal-move generation), so the numbers can be
compared across machines. Times are CPU time of this process (best of 5). No timing is
asserted anywhere.
"""

from __future__ import annotations

import time

from xiangqi.core.board import Board, Move
from xiangqi.core.classify import _MATE_CACHE
from xiangqi.core.referee import AXF, CXA, classify_cycle, forbidden_moves, judge, repetition_cycle

# Typical cycles: a CXA figure (图2, middlegame, 8 plies) and a perpetual check (R17); and the
# slowest figure of the CXA table (参考图38: many checks to search for the 不能离线 test).
CASES = {
    "cxa_ref38_slowest": ("2c1kab2/4a4/2n1b4/p3P3p/6p2/9/P7P/1CN1C4/4A3N/2BAKR1rc w - - 0 1",
                          "i1g2 h0g0 g2i1 g0h0 i1g2 h0g0 g2i1 g0h0"),
    "cxa_fig02": ("1r2kab1r/2c1a4/n1c1b1n2/4p2N1/p1p6/1C4P2/P1P1P4/2N1B3C/4A4/1RBAK2R1 w - - 0 1",
                  "h6i4 i9h9 i4h6 h9i9 h6i4 i9h9 i4h6 h9i9"),
    "r17_check": ("3k5/9/9/9/9/5p3/9/5p3/5K3/5C3 w - - 0 1", "f1e1 f2e2 e1f1 e2f2 f1e1 f2e2 e1f1 e2f2"),
}


def best_ms(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()  # CPU time: on a shared machine wall time counts the others' work
        fn()
        best = min(best, time.process_time() - t)
    return best * 1000


def main() -> None:
    for name, (fen, moves) in CASES.items():
        b = Board(fen)
        for m in moves.split():
            b.push(Move.from_iccs(m))
        start = repetition_cycle(b)[0]
        peer = best_ms(lambda b=b: list(b.legal_moves))
        for rules in (CXA, AXF):
            ms = best_ms(lambda b=b, rules=rules, start=start: classify_cycle(b, start, rules))
            print(f"classify_cycle {name} {rules.name}: {ms:.1f} ms ({len(b.move_stack) - start} plies), "
                  f"ratio {ms / peer:.0f}x legal-move generation ({peer:.2f} ms)")
        ms = best_ms(lambda b=b: judge(b, CXA))
        print(f"judge {name} cxa: {ms:.1f} ms")
        ms = best_ms(lambda b=b: (_MATE_CACHE.clear(), judge(b, CXA)))
        print(f"judge {name} cxa, cold (mate-search cache emptied first): {ms:.1f} ms")
        last = b.pop()
        for rules in (CXA, AXF):
            ms = best_ms(lambda b=b, rules=rules: forbidden_moves(b, rules))
            print(f"forbidden_moves {name} {rules.name} (before {last.iccs()}, repetition pending): "
                  f"{ms:.1f} ms")
    b = Board()
    for m in "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 b0c2 a9b9 a0b0 c6c5 g3g4 g6g5".split():
        b.push(Move.from_iccs(m))
    peer = best_ms(lambda: list(b.legal_moves))
    ms = best_ms(lambda: forbidden_moves(b, CXA))
    print(f"forbidden_moves opening (no repetition): {ms:.3f} ms, "
          f"ratio {ms / peer:.2f}x legal-move generation")


if __name__ == "__main__":
    main()
