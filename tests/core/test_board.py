"""Board, Move and FEN: the rows of reported.md that concern the core, and the basic API."""

from __future__ import annotations

import random

import pytest

import xiangqi
from xiangqi import (
    BLACK,
    RED,
    Board,
    FenError,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Termination,
)
from xiangqi.core.board import STARTING_FEN


def iccs_set(board: Board) -> set[str]:
    return {m.iccs() for m in board.legal_moves}


# -- reported.md rows --------------------------------------------------------

def test_r1_horse_leg_is_next_to_the_horse() -> None:
    board = Board("4k4/9/9/9/9/9/9/4n4/3A5/3K5 w - - 0 1")
    assert board.is_check()
    assert iccs_set(board) == {"d0e0", "d1e2"}
    assert [board.perft(d) for d in (1, 2, 3)] == [2, 5, 14]


def test_r2_flying_general_pin() -> None:
    board = Board("4k4/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1")
    rook_moves = {m.iccs() for m in board.legal_moves if m.from_square == xiangqi.parse_square("e1")}
    assert rook_moves and all(m[2] == "e" for m in rook_moves)
    assert [board.perft(d) for d in (1, 2, 3, 4, 5)] == [10, 16, 290, 262, 4734]


def test_r9_cannon_screens() -> None:
    board = Board("2bca3r/4k4/2n1cC3/1pp2R3/8p/9/1PPPN1P2/4C4/4A2r1/2BAK3R b - - 0 23")
    moves = iccs_set(board)
    assert len(moves) == 41
    assert "e7e2" in moves and "d9d0" in moves


def test_r13_pawn_on_last_rank_only_moves_sideways() -> None:
    board = Board("P2k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1")
    pawn_moves = {m.iccs() for m in board.legal_moves if m.from_square == xiangqi.parse_square("a9")}
    assert pawn_moves == {"a9b9"}
    board.push(Move.from_iccs("a9b9"))
    assert board.piece_at(xiangqi.parse_square("b9")) == xiangqi.Piece(xiangqi.PAWN, RED)


def test_r14_flying_general_with_a_blocker() -> None:
    board = Board("4k4/4p4/9/9/9/9/9/9/9/3K5 w - - 0 1")
    assert Move.from_iccs("d0e0") in board.legal_moves
    board = Board("4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1")
    assert Move.from_iccs("d0e0") not in board.legal_moves


def test_r15_king_move_that_faces_the_other_king_is_refused() -> None:
    board = Board("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1")
    with pytest.raises(IllegalMoveError, match="e0d0"):
        board.push(Move.from_iccs("e0d0"))
    assert board.fen() == "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1"
    out = board.outcome()  # two bare kings: a dead draw, never a win (RULES.md §6)
    assert out is not None and out.winner is None
    assert out.termination == Termination.INSUFFICIENT_MATERIAL


# -- FEN -----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("fen", "expected"),
    [
        # R11: short forms default the missing fields to "- - 0 1".
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", STARTING_FEN),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR", STARTING_FEN),
        # R12: h/e letters and r for Red.
        ("rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r - - 0 1", STARTING_FEN),
        # R16: two-number tail and E for elephant.
        ("4k4/8R/9/9/9/9/9/9/9/rrEA1K3 w 0 1", "4k4/8R/9/9/9/9/9/9/9/rrBA1K3 w - - 0 1"),
        ("4k4/9/9/9/9/9/9/9/9/4K4 b - - 7 30", "4k4/9/9/9/9/9/9/9/9/4K4 b - - 7 30"),
    ],
)
def test_fen_forms(fen: str, expected: str) -> None:
    assert Board(fen).fen() == expected


@pytest.mark.parametrize(
    ("fen", "field", "position", "words"),
    [
        ("", "board", 0, "empty"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w", "board", 0, "10 ranks"),
        ("rnbakabnr/9/1c5c1/p1p1x1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "board", 22, "'x'"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w", "board", 50, "8 points"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x", "side", 60, "w, r or b"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - z 1", "counters", 66, "halfmove"),
        ("9/9/9/9/9/9/9/9/9/4K4 w", "board", 0, "black must have exactly one king"),
        ("4k4/9/9/9/9/9/9/9/9/K8 w", "board", 0, "outside its palace"),
        ("4k4/9/9/9/9/9/9/9/9/RRR1K4 w", "board", 0, "3 rooks"),
    ],
)
def test_bad_fen_names_field_and_position(fen: str, field: str, position: int, words: str) -> None:
    with pytest.raises(FenError) as info:
        Board(fen)
    assert info.value.field == field
    assert info.value.position == position
    assert words in str(info.value)
    assert isinstance(info.value, ValueError)


# -- moves ----------------------------------------------------------------------

def test_move_iccs_forms() -> None:
    h2e2 = Move(xiangqi.square(7, 2), xiangqi.square(4, 2))
    assert Move.from_iccs("h2e2") == Move.from_iccs("H2-E2") == h2e2
    assert Move.from_iccs("H2-E2").iccs() == "h2e2"
    assert Move.from_iccs("h2e2").iccs_dash() == "H2-E2"
    assert repr(Move.from_iccs("h2e2")) == "Move.from_iccs('h2e2')"
    for bad in ("", "h2e", "j2e2", "h2e2e", "h2h2", "z9z9"):
        with pytest.raises(InvalidMoveError):
            Move.from_iccs(bad)


def test_illegal_move_leaves_board_unchanged() -> None:
    board = Board()
    board.push(Move.from_iccs("h2e2"))
    fen = board.fen()
    for text, why in [("h2e2", "no piece on h2"), ("e0e1", "not black's"), ("b7b1", "cannot move"),
                      ("a9a6", "own piece")]:
        with pytest.raises(IllegalMoveError, match=why):
            board.push(Move.from_iccs(text))
        assert board.fen() == fen
        assert len(board.move_stack) == 1


def test_push_pop_restores_every_position_on_random_playouts() -> None:
    rng = random.Random(20261129)
    for _ in range(20):
        board = Board()
        fens = [board.fen()]
        for _ in range(80):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            fens.append(board.fen())
        while board.move_stack:
            board.pop()
            fens.pop()
            assert board.fen() == fens[-1]


def test_counters_and_turn() -> None:
    board = Board()
    board.push_iccs("h2e2")
    assert board.turn == BLACK and board.fullmove_number == 1 and board.halfmove_clock == 1
    board.push_iccs("h9g7")
    assert board.turn == RED and board.fullmove_number == 2 and board.halfmove_clock == 2
    board.push_iccs("e2e6")  # cannon takes the pawn
    assert board.halfmove_clock == 0
    assert board.captured_piece() == xiangqi.Piece(xiangqi.PAWN, BLACK)
    assert board.fen() == "rnbakab1r/9/1c4nc1/p1p1C1p1p/9/9/P1P1P1P1P/1C7/9/RNBAKABNR b - - 0 2"


def test_legal_moves_view() -> None:
    board = Board()
    assert len(board.legal_moves) == 44
    assert Move.from_iccs("h2e2") in board.legal_moves
    assert Move.from_iccs("h2h9") in board.legal_moves  # cannon takes the h9 horse over the h7 cannon
    assert Move.from_iccs("e3e5") not in board.legal_moves
    assert board.root().fen() == STARTING_FEN


# -- outcome -----------------------------------------------------------------

def test_checkmate_loses_for_side_to_move() -> None:
    board = Board("3k5/9/9/9/9/9/9/9/9/3RK4 b - - 0 1")
    assert board.is_checkmate() and not board.is_stalemate()
    out = board.outcome()
    assert out is not None
    assert out.winner == RED and out.termination == Termination.CHECKMATE
    assert out.result() == "1-0"
    assert out.reason_zh == "红胜 — 将死"


def test_stalemate_loses_for_side_to_move() -> None:
    board = Board("3k5/9/3P5/9/9/9/9/9/9/4K4 b - - 0 1")
    assert board.is_stalemate() and not board.is_check()
    out = board.outcome()
    assert out is not None
    assert out.winner == RED and out.termination == Termination.STALEMATE
    assert "困毙" in out.reason_zh


def test_no_outcome_in_start_position() -> None:
    assert Board().outcome() is None


def test_board_str_and_unicode() -> None:
    board = Board()
    text = str(board).splitlines()
    assert text[0] == "9 r n b a k a b n r"
    assert text[-1] == "  a b c d e f g h i"
    assert board.unicode().splitlines()[0] == "9 车马象士将士象马车"
