"""Chinese / WXF / ICCS notation: R3–R8 of tests/data/reported.md, tandems, glyphs, errors, round trips."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xiangqi.core.board import STARTING_FEN, Board, Move
from xiangqi.core.errors import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, XiangqiError
from xiangqi.core.notation import (
    detect_notation,
    move_to_chinese,
    move_to_text,
    move_to_wxf,
    moves_to_chinese,
    parse_chinese,
    parse_iccs,
    parse_move,
    parse_wxf,
)

DATA = Path(__file__).parent.parent / "data"


def _play(fen: str, iccs: str) -> tuple[Board, Move]:
    return Board(fen), Move.from_iccs(iccs)


# -- R6: black file numbers, and the start of a game -------------------------------------------

R6_MOVES = "h2e2 h9g7 h0g2 c9e7 a0a2 i9h9".split()


def test_r6_wxf_black_file_numbers() -> None:
    board = Board()
    eq, dot = [], []
    for t in R6_MOVES:
        m = Move.from_iccs(t)
        eq.append(move_to_wxf(board, m, traverse="="))
        dot.append(move_to_wxf(board, m))
        board.push(m)
    assert eq == ["C2=5", "H8+7", "H2+3", "E3+5", "R9+2", "R9=8"]
    assert dot == ["C2.5", "H8+7", "H2+3", "E3+5", "R9+2", "R9.8"]


def test_r6_chinese_and_moves_to_chinese() -> None:
    board = Board()
    moves = [Move.from_iccs(t) for t in R6_MOVES]
    assert moves_to_chinese(board, moves) == [
        "炮二平五", "马8进7", "马二进三", "象3进5", "车九进二", "车9平8"]
    assert board.fen() == STARTING_FEN  # untouched
    assert moves_to_chinese(board, moves, fullwidth_black=True)[1] == "马８进７"
    assert moves_to_chinese(board, moves, traditional=True) == [
        "炮二平五", "馬8進7", "傌二進三", "象3進5", "俥九進二", "車9平8"]


# -- R3, R4, R5: WXF pawns and no check marks ----------------------------------------------------

R3_FEN = "5k3/9/3P5/3P1P1P1/5P3/9/9/9/9/4K4 w - - 0 1"
R4_FEN = "rnbakabnr/9/1c5c1/p1p1P1p1p/4P4/9/P3P3P/1C5C1/9/RNBAKABNR w - - 0 1"
R5_FEN = "4k4/4a3R/9/9/9/9/9/9/4K4/9 w - - 0 1"


@pytest.mark.parametrize(("fen", "iccs", "wxf_eq", "wxf_dot", "chinese"), [
    (R3_FEN, "d6e6", "26=5", "26.5", "后六平五"),
    (R3_FEN, "f5e5", "24=5", "24.5", "后四平五"),
    (R3_FEN, "d7e7", "16=5", "16.5", "前六平五"),
    (R4_FEN, "e6d6", "15=6", "15.6", "前兵平六"),
    (R4_FEN, "e5d5", "25=6", "25.6", "中兵平六"),
    (R4_FEN, "e3e4", "35+1", "35+1", "后兵进一"),
    (R5_FEN, "i8e8", "R1=5", "R1.5", "车一平五"),
    (R5_FEN, "i8i9", "R1+1", "R1+1", "车一进一"),
])
def test_r3_r4_r5_output(fen: str, iccs: str, wxf_eq: str, wxf_dot: str, chinese: str) -> None:
    board, move = _play(fen, iccs)
    assert move_to_wxf(board, move, traverse="=") == wxf_eq
    assert move_to_wxf(board, move) == wxf_dot
    assert move_to_chinese(board, move) == chinese
    for text in (wxf_eq, wxf_dot, chinese):
        assert parse_move(board, text) == move


@pytest.mark.parametrize(("fen", "text", "iccs"), [
    # WXF page forms (R4): P+ / P- for front/rear of three, the middle keeps the plain file form.
    (R4_FEN, "P+.6", "e6d6"),
    (R4_FEN, "P5.6", "e5d5"),
    (R4_FEN, "P-+1", "e3e4"),
    # WXF page file-first form for pawns tandem on two files (R3).
    (R3_FEN, "6-.5", "d6e6"),
    (R3_FEN, "4-=5", "f5e5"),
    (R3_FEN, "6+.5", "d7e7"),
])
def test_r3_r4_alternative_wxf_forms_are_read(fen: str, text: str, iccs: str) -> None:
    board = Board(fen)
    assert parse_wxf(board, text) == Move.from_iccs(iccs)


def test_r3_never_ambiguous_p_plus() -> None:
    # With two files of two pawns each, "P+" does not say which file: the reader must refuse to guess.
    board = Board(R3_FEN)
    with pytest.raises(AmbiguousMoveError):
        parse_wxf(board, "P+.5")


# -- R7: pawns stacked on two files ---------------------------------------------------------------

R7_FEN = "4k4/9/9/2P3P2/2P3P2/9/9/9/9/3K5 w - - 0 1"  # red pawns c6 c5 (file 七) and g6 g5 (file 三)


@pytest.mark.parametrize(("text", "iccs"), [
    ("前七进一", "c6c7"),   # old style: qualifier + file
    # new style (xqbase cchess_move): stacked pawns numbered right to left, front first
    ("三兵进一", "c6c7"),
    ("前三进一", "g6g7"),
    ("一兵进一", "g6g7"),
    ("二兵平四", "g5f5"),
    ("后七平六", "c5d5"),
    ("四兵平六", "c5d5"),
    ("前兵七进一", "c6c7"),  # five-character old form
])
def test_r7_both_styles_parse(text: str, iccs: str) -> None:
    assert parse_chinese(Board(R7_FEN), text) == Move.from_iccs(iccs)


def test_r7_output_convention() -> None:
    board = Board(R7_FEN)
    assert move_to_chinese(board, Move.from_iccs("c6c7")) == "前七进一"
    assert move_to_chinese(board, Move.from_iccs("g5f5")) == "后三平四"
    black = Board("4k4/9/9/9/9/2p3p2/2p3p2/9/9/3K5 b - - 0 1")  # black pawns c4 c3 (file 3), g4 g3 (file 7)
    assert move_to_chinese(black, Move.from_iccs("c3c2")) == "前3进1"
    assert parse_chinese(black, "一卒进1") == Move.from_iccs("c3c2")
    assert parse_chinese(black, "三卒平6") == Move.from_iccs("g3f3")


# -- R8: tandem pieces ----------------------------------------------------------------------------

def test_r8_tandem_cannons() -> None:
    board = Board("5k3/9/9/9/9/9/4C4/9/4C4/3K5 w - - 0 1")  # cannons e3, e1 on file 五
    assert move_to_chinese(board, Move.from_iccs("e3i3")) == "前炮平一"
    assert move_to_chinese(board, Move.from_iccs("e1i1")) == "后炮平一"
    assert move_to_wxf(board, Move.from_iccs("e3i3")) == "C+.1"
    assert move_to_wxf(board, Move.from_iccs("e1i1")) == "C-.1"
    assert move_to_chinese(board, Move.from_iccs("e1i1"), traditional=True) == "後炮平一"
    assert parse_chinese(board, "前炮平一") == Move.from_iccs("e3i3")
    assert parse_chinese(board, "後砲平一") == Move.from_iccs("e1i1")
    assert parse_wxf(board, "+C=1") == Move.from_iccs("e3i3")
    with pytest.raises(AmbiguousMoveError, match="e3i3"):
        parse_chinese(board, "炮五平一")  # never 炮五平一: both cannons fit


def test_r8_advisors_and_elephants_never_take_front_rear() -> None:
    board = Board("3k5/9/9/9/9/9/9/3A5/9/3AK4 w - - 0 1")  # advisors d2 and d0 on file 六
    assert move_to_chinese(board, Move.from_iccs("d0e1")) == "仕六进五"
    assert move_to_chinese(board, Move.from_iccs("d2e1")) == "仕六退五"
    assert move_to_wxf(board, Move.from_iccs("d2e1")) == "A6-5"
    board = Board("3k5/9/9/9/9/2B6/9/9/9/2B1K4 w - - 0 1")  # elephants c4 and c0 on file 七
    assert move_to_chinese(board, Move.from_iccs("c4e2")) == "相七退五"
    assert move_to_chinese(board, Move.from_iccs("c0e2")) == "相七进五"
    assert parse_chinese(board, "相七退五") == Move.from_iccs("c4e2")


def test_tandem_rooks_and_horses_black() -> None:
    board = Board("3k5/9/2r6/9/2r6/9/9/9/9/4K4 b - - 0 1")  # black rooks c7, c5: file 3; c5 is the front one
    assert move_to_chinese(board, Move.from_iccs("c5c0")) == "前车进5"
    assert move_to_chinese(board, Move.from_iccs("c7d7")) == "后车平4"
    assert move_to_wxf(board, Move.from_iccs("c5c0")) == "R++5"
    assert parse_wxf(board, "R-.4") == Move.from_iccs("c7d7")
    assert parse_chinese(board, "後車平４") == Move.from_iccs("c7d7")


@pytest.mark.parametrize(("iccs", "chinese", "wxf"), [
    ("e7d7", "前兵平六", "15.6"),
    ("e6d6", "二兵平六", "25.6"),
    ("e5d5", "三兵平六", "35.6"),
    ("e4e5", None, None),  # blocked by its own pawn: not legal
    ("e3d3", None, None),  # not across the river: cannot move sideways
])
def test_five_pawns_on_one_file(iccs: str, chinese: str | None, wxf: str | None) -> None:
    board = Board("3k5/9/4P4/4P4/4P4/4P4/4P4/9/9/3K5 w - - 0 1")
    move = Move.from_iccs(iccs)
    if chinese is None:
        with pytest.raises(IllegalMoveError):
            move_to_chinese(board, move)
        return
    assert move_to_chinese(board, move) == chinese
    assert move_to_wxf(board, move) == wxf
    assert parse_chinese(board, chinese) == move


def test_four_and_five_pawns_first_and_last_forms() -> None:
    board = Board("3k5/9/4P4/4P4/4P4/4P4/4P4/9/9/3K5 w - - 0 1")  # e7 e6 e5 e4 e3
    # Last of five: 五兵 and 后兵 both name e3, which cannot move (blocked, and not across the river).
    for text in ("五兵进一", "后兵进一"):
        with pytest.raises(IllegalMoveError, match="e3|no red"):
            parse_chinese(board, text)
    assert parse_chinese(board, "一兵平六") == Move.from_iccs("e7d7")
    assert parse_wxf(board, "++.6") == Move.from_iccs("e7d7")
    assert parse_wxf(board, "P+.6") == Move.from_iccs("e6d6")  # WXF page: P+ is the second of four or five
    board4 = Board("5k3/4P4/4P4/4P4/4P4/9/9/9/9/3K5 w - - 0 1")  # e8 e7 e6 e5
    assert move_to_chinese(board4, Move.from_iccs("e5d5")) == "四兵平六"
    assert move_to_chinese(board4, Move.from_iccs("e6d6")) == "三兵平六"
    assert move_to_wxf(board4, Move.from_iccs("e5d5")) == "45.6"
    assert parse_chinese(board4, "后兵平六") == Move.from_iccs("e5d5")
    assert parse_wxf(board4, "P-.6") == Move.from_iccs("e6d6")  # P- is the second to last of four
    assert parse_wxf(board4, "--.6") == Move.from_iccs("e5d5")
    assert parse_wxf(board4, "--.4") == Move.from_iccs("e5f5")


# -- glyphs, full width, ICCS --------------------------------------------------------------------

@pytest.mark.parametrize("text", ["马8进7", "馬8進7", "马８进７", "马8上7", " 马 8 进 7 "])
def test_black_horse_variants(text: str) -> None:
    board = Board()
    board.push(Move.from_iccs("h2e2"))
    assert parse_chinese(board, text) == Move.from_iccs("h9g7")


@pytest.mark.parametrize("text", ["炮2平5", "砲2平5", "包2平5", "炮２平５", "C2.5", "C2=5", "C25", "c2.5",
                                  "Ｃ２＝５", "Ｃ２．５", "b7e7", "B7-E7"])
def test_black_cannon_every_notation(text: str) -> None:
    board = Board()
    board.push(Move.from_iccs("h2e2"))
    assert parse_move(board, text) == Move.from_iccs("b7e7")


@pytest.mark.parametrize(("text", "iccs"), [
    ("傌二進三", "h0g2"), ("俥九進一", "a0a1"), ("帥五進一", "e0e1"), ("仕四進五", "f0e1"),
    ("相三进五", "g0e2"), ("兵七进一", "c3c4"), ("H2+3", "h0g2"), ("N2+3", "h0g2"), ("B3+5", "g0e2"),
    ("A4+5", "f0e1"), ("K5+1", "e0e1"), ("P7+1", "c3c4"), ("h2e2", "h2e2"), ("H2-E2", "h2e2"),
])
def test_red_start_moves(text: str, iccs: str) -> None:
    assert parse_move(Board(), text) == Move.from_iccs(iccs)


def test_detect_notation() -> None:
    assert detect_notation("h2e2") == "iccs"
    assert detect_notation("炮二平五") == "chinese"
    assert detect_notation("C2.5") == "wxf"
    assert detect_notation("Ｃ２＝５") == "wxf"
    with pytest.raises(InvalidMoveError):
        detect_notation("hello")


def test_move_to_text_all_notations() -> None:
    board, move = Board(), Move.from_iccs("h2e2")
    assert move_to_text(board, move, "chinese") == "炮二平五"
    assert move_to_text(board, move, "wxf") == "C2.5"
    assert move_to_text(board, move, "iccs") == "h2e2"
    assert move_to_text(board, move, "iccs-dash") == "H2-E2"
    assert move_to_text(board, move, "san") == "Che3"  # Fairy-Stockfish's SAN (test_san.py)
    with pytest.raises(ValueError, match="unknown notation"):
        move_to_text(board, move, "lan")


# -- errors ----------------------------------------------------------------------------------------

def test_error_names_the_problem() -> None:
    board = Board()
    board.push(Move.from_iccs("h2e2"))
    with pytest.raises(IllegalMoveError, match="马8进6: no black horse on file 8 can move forward to file 6"):
        parse_chinese(board, "马8进6")
    with pytest.raises(IllegalMoveError, match="no black rook on file 5"):
        parse_chinese(board, "车5进1")
    with pytest.raises(IllegalMoveError, match="C3.5: no red cannon on file 3"):
        parse_wxf(Board(), "C3.5")


def test_error_pinned_piece_says_why() -> None:
    # Red rook e1 is pinned by the facing kings (R2): moving it sideways exposes the king.
    board = Board("4k4/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1")
    with pytest.raises(IllegalMoveError, match="e1d1 would leave the red king"):
        parse_chinese(board, "车五平六")


@pytest.mark.parametrize("text", ["", "炮二平", "炮二平五六七", "炮二走五", "X2.5", "hello", "C2.",
                                  "炮炮平五"])
def test_invalid_text(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        parse_move(Board(), text)


def test_illegal_move_to_text() -> None:
    with pytest.raises(IllegalMoveError):
        move_to_chinese(Board(), Move.from_iccs("h2h8"))  # the cannon cannot jump without taking
    with pytest.raises(IllegalMoveError):
        parse_iccs(Board(), "a0a5")
    with pytest.raises(XiangqiError):
        move_to_wxf(Board(), Move.from_iccs("e5e6"))  # empty square


# -- round trips -----------------------------------------------------------------------------------

def _perft_fens() -> list[str]:
    with open(DATA / "perft.tsv", encoding="utf-8", newline="") as fh:
        return sorted({row["fen"] for row in csv.DictReader(fh, delimiter="\t")})


def _round_trip(board: Board) -> int:
    n = 0
    for move in board.legal_moves:
        for text in (move_to_chinese(board, move), move_to_chinese(board, move, traditional=True),
                     move_to_chinese(board, move, fullwidth_black=True), move_to_wxf(board, move),
                     move_to_wxf(board, move, traverse="="), move.iccs(), move.iccs_dash()):
            assert parse_move(board, text) == move, (board.fen(), move, text)
        n += 1
    return n


@pytest.mark.parametrize("fen", _perft_fens())
def test_round_trip_every_legal_move_of_perft_positions(fen: str) -> None:
    board = Board(fen)
    n = _round_trip(board)
    assert n == len(list(board.legal_moves))
    # and one ply deeper, so that the other side's notation is covered too
    for move in list(board.legal_moves)[:8]:
        board.push(move)
        _round_trip(board)
        board.pop()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=80))
def test_round_trip_random_playouts(choices: list[int]) -> None:
    board = Board()
    for c in choices:
        moves = list(board.legal_moves)
        if not moves:
            break
        _round_trip(board)
        board.push(moves[c % len(moves)])
