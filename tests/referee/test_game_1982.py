"""The real 125-ply game 柳大华 – 杨官璘 (1982, tests/data/records/pgn/xiangqijs_readme_iccs_1982.pgn)
played through the core, with its recorded result (1/2-1/2, a draw by repetition) reached.

The record stops one ply before the third occurrence: its last position (after
63. b5a5) has occurred twice, so the referee (which rules at the third
occurrence, see xiangqi.core.referee) gives no result yet; the players agreed
the draw. We check both: the cycle the players saw, ruled by the referee, is
a draw (both sides forbidden: 不变作和), and one more ply of the same repetition makes
``Board.outcome()`` rule the draw itself.
"""

from __future__ import annotations

from pathlib import Path

from xiangqi import Board, Move, Termination
from xiangqi.core.classify import classify_cycle
from xiangqi.core.pgn import read_game
from xiangqi.core.referee import rule_cycle

PGN = Path(__file__).parent.parent / "data" / "records" / "pgn" / "xiangqijs_readme_iccs_1982.pgn"


def _game_board() -> tuple[Board, str]:
    game = read_game(PGN.read_text(encoding="utf-8"))
    assert game is not None and not game.errors
    board = game.board()
    for move in game.mainline_moves():
        board.push(move)  # validates every move through the core
    return board, game.headers["Result"]


def test_every_move_is_legal_and_the_record_ends_in_a_repetition() -> None:
    board, result = _game_board()
    assert len(board.move_stack) == 125
    assert result == "1/2-1/2"
    assert board.fen() == "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b - - 16 63"
    assert board.outcome() is None  # second occurrence: no ruling yet


def test_the_repetition_cycle_is_ruled_a_draw() -> None:
    board, _ = _game_board()
    keys = []
    b = board.copy()
    for _ in range(board.halfmove_clock):
        keys.append(b.position_key())
        b.pop()
    # The final position occurred 4 plies earlier: the cycle is the last 4 plies.
    assert keys.index(board.position_key(), 1) == 4
    out = rule_cycle(classify_cycle(board, len(board.move_stack) - 4))
    assert out.winner is None and out.termination == Termination.REPETITION
    assert out.result() == "1/2-1/2"


def test_one_more_repeating_ply_is_ruled_a_draw_by_the_board() -> None:
    board, result = _game_board()
    board.push(Move.from_iccs("a6b6"))  # the repetition goes on: third occurrence
    out = board.outcome()
    assert out is not None
    assert out.result() == result == "1/2-1/2"
    assert out.termination == Termination.REPETITION
    # Red's pawn chases the rook (a5/b5) while Black's rook keeps a mate threat:
    # both sides are forbidden, which the CXA rules (RULES.md §5.4.3) rule a draw.
    assert out.reason_zh == "和棋 — 红方长捉，黑方长杀，双方不变作和"
