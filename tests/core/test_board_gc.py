"""What a game's history costs the garbage collector: a board's move stack holds no objects of its own
that the collector tracks (shared Move objects, one int of undo record a ply), so a long game does
not lengthen the server's full collections (DESIGN.md, "Load on a quiet machine"). Also the API
around it: the moves handed out are equal to new ones, the undo records restore every field."""

from __future__ import annotations

import gc

from tests.fresh import run_fresh
from tests.randomgame import random_game

from xiangqi.core.board import _MOVES, RED, Board, Move, Piece


def _tracked_added(make) -> tuple[object, int]:
    """(what ``make()`` returned, how many more objects the collector tracks while it is kept)."""
    gc.collect()
    before = len(gc.get_objects())
    kept = make()
    gc.collect()
    return kept, len(gc.get_objects()) - before


def _replay(moves: list[str]) -> Board:
    b = Board()
    for text in moves:
        b.push_iccs(text)
    return b


def measure_history() -> dict[str, int]:
    """The tracked objects a board keeps: empty, after 120 plies, and a copy of the latter (run by
    :func:`tests.fresh.run_fresh` in a new interpreter)."""
    moves = random_game(120, seed=15)
    _replay(moves)  # the shared Move objects of these moves exist from now on (as in a server)
    kept0, empty = _tracked_added(lambda: _replay([]))
    kept, added = _tracked_added(lambda: _replay(moves))
    assert len(kept.move_stack) == 120 and kept0.fen() == Board().fen()
    # the same through the legal-move generator's moves and a copy of the board
    b = Board()
    for text in moves:
        b.push(next(m for m in b.generate_legal_moves() if m.iccs() == text))
    copy, added_copy = _tracked_added(b.copy)
    assert copy.move_stack == b.move_stack
    return {"empty": empty, "added": added, "copy": added_copy}


def test_a_game_history_adds_no_tracked_objects_per_ply() -> None:
    got = run_fresh(__file__, "measure_history")
    empty, added = got["empty"], got["added"]
    # Measured: 4 for the board (itself, its squares, its move stack and its undo records) whatever
    # the length; before, every ply added two (a Move and an undo record object): 244 for 120 plies.
    assert empty <= 6
    assert added <= empty + 2, f"a 120-ply game adds {added} tracked objects, an empty board {empty}"
    assert got["copy"] <= empty + 2, got


def test_shared_moves_equal_new_ones_and_pushed_moves_keep_their_identity() -> None:
    a = Move.from_iccs("h2e2")
    assert a is Move.from_iccs("H2-E2") and a == Move(25, 22) and hash(a) == hash(Move(25, 22))
    assert type(a) is Move and repr(a) == "Move.from_iccs('h2e2')"
    b = Board()
    legal = list(b.legal_moves)
    assert legal == [Move(m.from_square, m.to_square) for m in legal]
    assert all(m is _MOVES[m.from_square * 90 + m.to_square] for m in legal)
    mine = Move(25, 22)  # a caller's own object is what the history holds and what pop() returns
    b.push(mine)
    assert b.move_stack[-1] is mine and b.peek() is mine
    assert b.pop() is mine and b.move_stack == [] and b.fen() == Board().fen()


def test_undo_records_restore_the_captured_piece_and_any_halfmove_clock() -> None:
    b = Board("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 4000 77")
    fens = [b.fen()]
    for text in ("h2h9", "i9h9", "b2b9", "a9b9"):  # two captures by cannons, two re-captures
        b.push_iccs(text)
        fens.append(b.fen())
    assert [b.captured_piece(i) for i in range(4)] == [Piece.from_symbol("n"), Piece.from_symbol("C"),
                                                       Piece.from_symbol("n"), Piece.from_symbol("C")]
    assert b.halfmove_clock == 0 and b.captured_piece() == Piece(6, RED)
    b.halfmove_clock = 2**40  # any int the caller sets comes back on the undo
    b.push_iccs("h0g2")
    assert b.captured_piece() is None and b.halfmove_clock == 2**40 + 1
    b.pop()
    assert b.halfmove_clock == 2**40
    b.halfmove_clock = 0
    while b.move_stack:
        fens.pop()
        b.pop()
        assert b.fen() == fens[-1]
    assert b.fen().endswith(" 4000 77")
