"""Regression tests for faults found by trying to break the core (one test per fault).

Each test names the input that used to fail and what it did before the fix.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xiangqi
from xiangqi import Board, FenError, IllegalMoveError, Move, Piece, XiangqiError
from xiangqi.cli import main
from xiangqi.core import notation

START_BOARD = xiangqi.STARTING_FEN.split()[0]


@pytest.mark.parametrize("digit", ["²", "٩", "９", "①"])
def test_fen_board_rejects_non_ascii_digits(digit: str) -> None:
    # '²' used to crash with int()'s bare ValueError; '٩' and '９' were silently read as 9.
    fen = f"rnbakabnr/9/1c5c1/p1p1p1p1p/{digit}/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"
    with pytest.raises(FenError) as info:
        Board(fen)
    assert info.value.field == "board"
    assert info.value.position == 28  # the character itself
    assert repr(digit) in str(info.value)


@pytest.mark.parametrize("counter", ["²", "٣", "１"])
def test_fen_counters_reject_non_ascii_digits(counter: str) -> None:
    fen = f"{START_BOARD} w - - {counter} 1"
    with pytest.raises(FenError) as info:
        Board(fen)
    assert info.value.field == "counters"
    assert info.value.position == fen.index(counter)


def test_fen_error_positions_point_at_the_bad_field() -> None:
    # The position used to come from fen.find(text), which found the first '1' of the board.
    fen = f"{START_BOARD} w - - 0 1 1"
    with pytest.raises(FenError) as info:
        Board(fen)
    assert info.value.position == len(fen) - 1
    fen = f"{START_BOARD} w - - 0 x"
    with pytest.raises(FenError) as info:
        Board(fen)
    assert info.value.position == len(fen) - 1
    # Leading blanks shift every position, the side's too.
    fen = f"  {START_BOARD} x"
    with pytest.raises(FenError) as info:
        Board(fen)
    assert (info.value.field, info.value.position) == ("side", len(fen) - 1)
    fen = f"  {START_BOARD.replace('RNBAKABNR', 'RNBAKABNX')}"
    with pytest.raises(FenError) as info:
        Board(fen)
    assert info.value.position == len(fen) - 1


@pytest.mark.parametrize("move", [Move(100, 3), Move(3, 90), Move(-1, 3)])
def test_push_of_an_off_board_move_is_an_illegal_move_error(move: Move) -> None:
    # Move(100, 3) used to raise IndexError while formatting the error message.
    board = Board()
    with pytest.raises(IllegalMoveError, match=r"Move\(.*\).*square out of range"):
        board.push(move)
    assert board.fen() == xiangqi.STARTING_FEN
    with pytest.raises(IllegalMoveError, match="square out of range"):
        notation.move_to_chinese(board, move)


def test_piece_from_symbol_raises_the_projects_error() -> None:
    assert Piece.from_symbol("H") == Piece(xiangqi.HORSE, xiangqi.RED)
    for bad in ("x", "", "kk"):
        with pytest.raises(XiangqiError, match="not a piece letter"):
            Piece.from_symbol(bad)


def test_unknown_notation_raises_the_projects_error() -> None:
    board = Board()
    with pytest.raises(XiangqiError, match="unknown notation 'bogus'"):
        notation.move_to_text(board, Move.from_iccs("h2e2"), "bogus")
    with pytest.raises(XiangqiError, match="unknown notation 'bogus'"):
        notation.parse_text(board, "h2e2", "bogus")


def test_cli_perft_rejects_a_depth_it_could_never_finish(capsys: pytest.CaptureFixture[str]) -> None:
    # Depth 10**20 on a bare-kings position used to end in a RecursionError traceback.
    fen = "4k4/9/9/9/9/9/9/9/9/3K5 b - - 0 1"
    assert main(["perft", "--engine", "core", "--fen", fen, str(10**20)]) == 2
    err = capsys.readouterr().err
    assert "depth must be 0-100" in err and "Traceback" not in err
    assert main(["perft", "--engine", "core", "--fen", fen, "2"]) == 0
    # e9e8 (then only d0d1; d0e0 would face the king) and e9f9 (then d0d1, d0e0); d9 faces d0.
    assert capsys.readouterr().out.splitlines()[-1] == "3"


def test_cli_perft_bad_fen_digit_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/²9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"
    assert main(["perft", "--engine", "core", "--fen", fen, "1"]) == 2
    assert "unknown piece letter '²'" in capsys.readouterr().err


def test_rule_set_errors_are_the_projects_own() -> None:
    # An unknown rule set or a move limit of 0 used to raise a bare ValueError.
    from xiangqi.core.referee import get_rules

    for bad in ("xyz", 5):
        with pytest.raises(XiangqiError, match="unknown rule set"):
            Board().outcome(rules=bad)
    with pytest.raises(XiangqiError, match="move limit must be a positive number of plies, got 0"):
        get_rules("cxa").with_move_limit(0)
    assert get_rules("AXF").name == "axf"


def test_cli_perft_divide_works_with_the_default_engine(capsys: pytest.CaptureFixture[str]) -> None:
    # `xiangqi perft --divide 2` (Numba engine, the default) used to print the total only.
    fen = "4k4/9/9/9/9/9/9/4n4/3A5/3K5 w - - 0 1"  # reported.md R1: perft 1..3 = 2, 5, 14
    outputs = []
    for engine in ("numba", "core"):
        assert main(["perft", "--divide", "--engine", engine, "--fen", fen, "3"]) == 0
        outputs.append(capsys.readouterr().out.splitlines())
    assert outputs[0] == outputs[1]
    assert outputs[0] == ["d0e0: 6", "d1e2: 8", "14"]


def test_push_of_text_says_how_to_push_text() -> None:
    # board.push("h2e2") (a python-chess habit) used to fail with "'str' object has no attribute".
    board = Board()
    with pytest.raises(TypeError, match=r"push\(\) takes a Move, got str 'h2e2'.*push_iccs"):
        board.push("h2e2")  # type: ignore[arg-type]
    assert board.fen() == xiangqi.STARTING_FEN
    assert board.push_iccs("h2e2") == Move.from_iccs("h2e2")


_FEN_ALPHABET = [*"kabnrcpheKABNRCPHE0123456789/ -wrbWRB", "²", "٣", "９", "①", "\u2028", "\x00", "\u3000"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 80), st.sampled_from(_FEN_ALPHABET), st.booleans()), max_size=4))
def test_mutated_fen_gives_a_board_or_a_fen_error(edits: list[tuple[int, str, bool]]) -> None:
    # Every mutation of a FEN gives a board whose FEN reads back the same, or a FenError whose
    # position lies inside the text; never another exception (the '²' digit used to escape).
    text = list(xiangqi.STARTING_FEN)
    for pos, ch, insert in edits:
        pos = min(pos, len(text))
        if insert or pos == len(text):
            text.insert(pos, ch)
        else:
            text[pos] = ch
    fen = "".join(text)
    try:
        board = Board(fen)
    except FenError as exc:
        assert 0 <= exc.position <= len(fen)
        return
    assert Board(board.fen()).fen() == board.fen()


def test_fen_errors_come_in_field_order() -> None:
    # "bad line here" used to be reported as a bad halfmove clock ('here'), not as a bad board.
    with pytest.raises(FenError) as info:
        Board("bad line here")
    assert (info.value.field, info.value.position) == ("board", 0)
    with pytest.raises(FenError) as info:
        Board(f"{START_BOARD} x - - y 1")
    assert info.value.field == "side"


def test_fen_of_the_wrong_type_is_a_type_error() -> None:
    # Board(b"...") used to complain about the side "b'w'"; Board(123) raised AttributeError.
    for bad in (xiangqi.STARTING_FEN.encode(), 123):
        with pytest.raises(TypeError, match="a FEN is a str"):
            Board(bad)  # type: ignore[arg-type]


def test_a_fen_board_error_names_the_fen_row_and_the_rank_it_is():
    # FEN rows count from Black's side (row 1 = rank 9); the rest of the app speaks of ranks 0-9
    # (ICCS), so an error names both: the last row of the start position is rank 0.
    short = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w"
    with pytest.raises(FenError, match=r"at character 50: FEN row 10, rank 0 \('RNBAKABN'\) has 8 points"):
        Board(short)
    with pytest.raises(FenError, match=r"unknown piece letter 'X' in FEN row 1 \(rank 9\)"):
        Board("rnbakabnX/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w")
