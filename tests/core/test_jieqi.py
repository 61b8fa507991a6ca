"""揭棋 rules (xiangqi.core.jieqi): hidden pieces move as their starting squares' pieces, the reveal,
revealed advisors/elephants anywhere, captures of hidden pieces and the pools, check and mate,
repetition, the FEN extension and the PGN round trip."""

from __future__ import annotations

import random

import pytest

from xiangqi.core.jieqi import (
    START_FEN,
    JieqiBoard,
    JieqiError,
    JieqiMove,
    deal,
    parse_square,
    parse_token,
    read_pgn,
    write_pgn,
)
from xiangqi.core.pgn import read_game


def sq(name: str) -> int:
    return parse_square(name)


def targets(board: JieqiBoard, frm: str) -> list[str]:
    return sorted(m.iccs[2:] for m in board.legal_moves() if m.frm == sq(frm))


def test_the_start_position_moves_as_xiangqi():
    b = JieqiBoard()
    assert b.fen() == START_FEN
    assert len(b.legal_moves()) == 44  # the standard start's count: every hidden piece moves as its square's
    assert targets(b, "b0") == ["a2", "c2"]  # a horse
    assert targets(b, "d0") == ["e1"]  # a hidden advisor stays in the palace
    assert targets(b, "c0") == ["a2", "e2"]  # an elephant
    assert targets(b, "h2") == ["c2", "d2", "e2", "f2", "g2", "h1", "h3", "h4", "h5", "h6", "h9", "i2"]
    assert targets(b, "e3") == ["e4"]  # a pawn on its own side: forward only
    assert b.pool[True] == {"A": 2, "B": 2, "N": 2, "R": 2, "C": 2, "P": 5}


def test_a_move_reveals_and_the_revealed_piece_moves_as_itself():
    b = JieqiBoard()
    with pytest.raises(JieqiError, match="needs the identity"):
        b.push(JieqiMove(sq("h2"), sq("e2")))
    b.push(JieqiMove(sq("h2"), sq("e2"), "A"))  # the hidden 'cannon' was an advisor
    assert b.squares[sq("e2")] == "A" and b.pool[True]["A"] == 1
    b.push(JieqiMove(sq("a6"), sq("a5"), "P"))
    # a revealed advisor leaves the palace: one step diagonally anywhere
    assert targets(b, "e2") == ["d1", "d3", "f1", "f3"]
    b.pop()
    b.pop()
    assert b.fen() == START_FEN


def test_revealed_elephants_cross_the_river_and_advisors_roam():
    b = JieqiBoard("3k5/9/9/9/9/4B4/9/9/3A5/4K4 w - - 0 1")
    assert targets(b, "e4") == ["c2", "c6", "g2", "g6"]  # across the river
    assert targets(b, "d1") == ["c0", "c2", "e2"]  # out of the palace; e0 is the king's


def test_the_elephant_eye_blocks():
    b = JieqiBoard("3k5/9/9/9/9/9/3p5/4B4/9/4K4 w - - 0 1")
    assert targets(b, "e2") == ["c0", "g0", "g4"]  # the pawn on d3 is the eye of c4


def test_a_revealed_pawn_in_its_own_half_only_goes_forward():
    b = JieqiBoard("3k5/9/9/9/9/9/9/9/9/P3K4 w - - 0 1")
    assert targets(b, "a0") == ["a1"]
    b = JieqiBoard("3k5/9/9/9/P8/9/9/9/9/4K4 w - - 0 1")
    assert targets(b, "a5") == ["a6", "b5"]


def test_capturing_a_hidden_piece_takes_its_identity_out_of_the_pool():
    b = JieqiBoard()
    b.push(JieqiMove(sq("b2"), sq("b9"), "C", "N"))  # the hidden cannon takes the hidden 'horse' on b9: an N
    assert b.squares[sq("b9")] == "C" and b.pool[False]["N"] == 1 and b.pool[True]["C"] == 1
    assert b.fen().split()[1] == "A2B2N2R2C1P5a2b2n1r2c2p5"
    with pytest.raises(JieqiError, match="not hidden"):
        JieqiBoard("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1").push(JieqiMove(sq("a0"), sq("a1"), None, "N"))
    # the one who did not see it keeps the identity in its pool (a view)
    v = b.view(False, ["N"])
    assert v.pool[False]["N"] == 2 and v.hidden_count(False) == 14 and sum(v.pool[False].values()) == 15
    odds = dict(v.reveal_odds(False))
    assert odds["P"] == pytest.approx(5 / 15) and odds["N"] == pytest.approx(2 / 15)
    b.pop()
    assert b.fen() == START_FEN


def test_an_impossible_reveal_is_refused():
    b = JieqiBoard(
        "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX A2B2N2R2C2P5a2b2n2r2c2p5 w - - 0 1"
    )
    b.push(JieqiMove(sq("h2"), sq("e2"), "R"))
    b.push(JieqiMove(sq("h7"), sq("e7"), "R"))
    b.push(JieqiMove(sq("b2"), sq("d2"), "R"))
    b.push(JieqiMove(sq("b7"), sq("d7"), "R"))
    with pytest.raises(JieqiError, match="no hidden R"):
        b.push(JieqiMove(sq("a0"), sq("a1"), "R"))
    assert b.squares[sq("a0")] == "X" and b.pool[True]["R"] == 0


def test_a_hidden_piece_gives_check_as_its_squares_piece_and_mate_ends_the_game():
    # Black's king on e9 faces Red's revealed rook on the e-file: check; the hidden advisor may block on e8
    b = JieqiBoard("3xk4/9/9/9/9/9/9/9/9/4RK3 a1 b - - 0 1")
    assert b.is_check()
    assert sorted(m.iccs for m in b.legal_moves()) == ["d9e8"]  # e8 still on the file, f9 faces Red's king
    # a hidden piece is a cannon's screen: Red's cannon on e2 checks over the hidden pawn on e3
    b = JieqiBoard("4k4/9/9/9/9/9/4X4/4C4/9/3K5 P1 b - - 0 1")
    assert b.is_check()
    assert "e9e8" not in [m.iccs for m in b.legal_moves()] and "e9f9" in [m.iccs for m in b.legal_moves()]
    m = JieqiBoard("4k4/9/4R4/9/9/9/9/9/3R5/4K4 b - - 0 1")
    m.push(JieqiMove(sq("e9"), sq("f9")))
    m.push(JieqiMove(sq("d1"), sq("f1")))  # the second rook to the f-file: mate
    out = m.outcome()
    assert out is not None and out.result() == "1-0" and "将死" in out.reason_zh


def test_threefold_repetition_and_perpetual_check():
    b = JieqiBoard("3k5/9/9/9/9/9/9/9/9/4K3R w - - 0 1")
    for _ in range(2):
        b.push_token("i0i9")  # check
        b.push_token("d9d8")
        b.push_token("i9i0")
        b.push_token("d8d9")
    out = b.outcome()
    assert out is not None and out.result() == "1/2-1/2"  # i9i0 was no check: a plain repetition
    c = JieqiBoard("4k4/9/9/9/9/9/9/9/9/3KR4 b - - 0 1")
    seq = ["e9f9", "e0f0", "f9e9", "f0e0"]  # Red checks with every move
    for _ in range(2):
        for t in seq:
            c.push_token(t)
    out = c.outcome()
    assert out is not None and out.result() == "0-1" and "长将" in out.reason_zh


def test_fen_extension_round_trip_and_errors():
    b = JieqiBoard()
    rng = random.Random(5)
    d = deal(rng)
    for _ in range(40):
        moves = b.legal_moves()
        if not moves:
            break
        m = rng.choice(moves)
        b.push(
            JieqiMove(
                m.frm, m.to, d[m.frm] if b.is_hidden(m.frm) else None, d[m.to] if b.is_hidden(m.to) else None
            )
        )
        again = JieqiBoard(b.fen())
        assert again.fen() == b.fen() and again.pool == b.pool
    with pytest.raises(JieqiError, match="not one of that side's starting squares"):
        JieqiBoard(
            "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/X8/X1X1X1X1X/1X5X1/9/XXXXKXXXX A2B2N2R2C2P5a2b2n2r2c2p5 w - - 0 1"
        )
    with pytest.raises(JieqiError, match="pool of 14"):
        JieqiBoard(
            "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX A2B2N2R2C2P4a2b2n2r2c2p5 w - - 0 1"
        )
    # a FEN without the pool field: the full set less the revealed pieces
    assert (
        JieqiBoard("xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X2R2X1/9/XXXXKXXX1 w - - 0 1").pool[True]["R"]
        == 1
    )


def test_move_tokens():
    assert parse_token("b0c2=PxN") == JieqiMove(sq("b0"), sq("c2"), "P", "N")
    assert parse_token("h2e2").token() == "h2e2"
    with pytest.raises(JieqiError):
        parse_token("h2e2=K")


def test_pgn_round_trip_and_the_xiangqi_reader_names_it():
    b = JieqiBoard()
    rng = random.Random(11)
    d = deal(rng)
    while b.outcome() is None and len(b.moves) < 120:
        m = rng.choice(b.legal_moves())
        b.push(
            JieqiMove(
                m.frm, m.to, d[m.frm] if b.is_hidden(m.frm) else None, d[m.to] if b.is_hidden(m.to) else None
            )
        )
    text = write_pgn({"Event": "test", "Red": "甲", "Black": "乙"}, b, "*")
    assert '[Variant "jieqi"]' in text and f'[FEN "{START_FEN}"]' in text
    rec = read_pgn(text)
    assert rec.errors == [] and rec.board.fen() == b.fen() and rec.board.moves == b.moves
    assert rec.headers["Red"] == "甲"
    g = read_game(text)  # the xiangqi reader does not misread it as xiangqi moves
    assert g is not None and g.headers["Variant"] == "jieqi" and g.end() is g
    assert any("揭棋" in str(e) for e in g.errors)
    bad = text.replace(b.moves[3].token(), "a0a9=R", 1)
    assert read_pgn(bad).errors and len(read_pgn(bad).board.moves) == 3


def test_chinese_names():
    b = JieqiBoard()
    assert b.chinese(JieqiMove(sq("h2"), sq("e2"), "R")) == "暗炮二平五=车"
    assert b.chinese(JieqiMove(sq("b2"), sq("b9"), "P", "N")) == "暗炮八进七=兵×马"
    assert b.chinese(JieqiMove(sq("b2"), sq("b9"), "P", "N"), show_captured=False) == "暗炮八进七=兵×?"
    b.push(JieqiMove(sq("h2"), sq("e2"), "R"))
    assert b.chinese(JieqiMove(sq("b9"), sq("c7"), "P")) == "暗马２进３=卒"
