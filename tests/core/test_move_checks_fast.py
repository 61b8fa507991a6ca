"""The per-move checks' shortcuts give what the plain method gives (the server runs them on every move).

``Board.generate_legal_moves`` (and ``legal_destinations``, the page's list) skips the king-safety
test for moves that cannot expose the king;
``board_fen`` reads ranks from a memo; the referee's repetition checks walk the history by
differences before they build its keys. Each is compared here with the method it shortcuts, on
positions from random games (with many repetitions) and on random sparse positions.
"""

from __future__ import annotations

import random

from xiangqi.core import referee
from xiangqi.core.board import SQUARES, Board, Move


def legal_tried(b: Board) -> list[Move]:
    """Every pseudo-legal move tried for the king's safety (the generator without shortcuts)."""
    out = []
    for sq in SQUARES:
        code = b.squares[sq]
        if code and (code > 0) == b.turn:
            out.extend(Move(sq, to) for to in b._pseudo_targets(sq) if b._leaves_king_safe(sq, to))
    return out


def plain_fen(b: Board) -> str:
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(9):
            code = b.squares[r * 9 + f]
            if code == 0:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            s = " kabnrcp"[abs(code)]
            row += s.upper() if code > 0 else s
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def games(seed: int, n: int, plies: int):
    """Positions of ``n`` random games that often move a piece back (repetitions)."""
    rng = random.Random(seed)
    for _ in range(n):
        b = Board()
        for _ in range(plies):
            yield b
            legal = list(b.generate_legal_moves())
            if not legal:
                break
            if len(b.move_stack) >= 2 and rng.random() < 0.5:
                last = b.move_stack[-2]
                back = Move(last.to_square, last.from_square)
                if back in legal:
                    b.push(back, validate=False)
                    continue
            b.push(rng.choice(legal), validate=False)


def test_legal_moves_and_fen_match_the_plain_methods_in_games():
    checks = 0
    for b in games(11, 16, 150):
        assert list(b.generate_legal_moves()) == legal_tried(b), b.fen()
        assert [Move(f, t) for f, tos in b.legal_destinations() for t in tos] == legal_tried(b)
        assert b.board_fen() == plain_fen(b)
        checks += b.is_check()
    assert checks > 10  # positions in check (every move tested) were among them


def test_legal_moves_match_in_sparse_positions():
    rng = random.Random(5)
    facing = 0
    for _ in range(3000):
        b = Board("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1")
        rk = rng.choice([3, 4, 5]) + 9 * rng.randrange(3)
        bk = rng.choice([3, 4, 5]) + 9 * rng.choice([7, 8, 9])
        b.squares[4], b.squares[85] = 0, 0
        b.squares[rk], b.squares[bk] = 1, -1
        b._kings = {True: rk, False: bk}
        for _ in range(rng.randint(1, 12)):
            s = rng.randrange(90)
            if b.squares[s] == 0:
                b.squares[s] = rng.choice([2, 3, 4, 5, 6, 7]) * rng.choice([1, -1])
        b.turn = rng.random() < 0.5
        facing += rk % 9 == bk % 9
        assert list(b.generate_legal_moves()) == legal_tried(b), b.fen()
        assert [Move(f, t) for f, tos in b.legal_destinations() for t in tos] == legal_tried(b)
        assert b.board_fen() == plain_fen(b)
    assert facing > 500


def test_repetition_checks_match_the_history_keys():
    cycles = candidates = 0
    for b in games(3, 10, 200):
        keys = referee._history_keys(b)
        third = sum(1 for k in keys if k == keys[-1]) >= 3
        assert (referee.repetition_cycle(b) is not None) == third
        cycles += third
        counts: dict[tuple, int] = {}
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
        reaches_twice = False
        for m in b.generate_legal_moves():
            if not b.squares[m.to_square]:
                sq = list(b.squares)
                sq[m.to_square], sq[m.from_square] = sq[m.from_square], 0
                reaches_twice |= counts.get((tuple(sq), not b.turn), 0) >= 2
        if reaches_twice:  # the shortcut may say yes more often, never no when it matters
            assert referee._may_complete_repetition(b)
        candidates += reaches_twice
    assert cycles > 40 and candidates > 40
