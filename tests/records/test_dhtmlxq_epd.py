"""DhtmlXQ/UBB and FEN/EPD lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.core.dhtmlxq import DhtmlxqError, read_dhtmlxq, read_dhtmlxq_games, write_dhtmlxq
from xiangqi.core.encoding import read_text_file
from xiangqi.core.epd import EpdEntry, EpdError, epd_to_games, read_epd, write_epd
from xiangqi.core.pgn import Game, GameNode, read_game, write_game
from xiangqi.core.xqf import read_xqf

SAMPLES = Path(__file__).parent.parent / "data" / "records"


def _tree(node: GameNode) -> list:
    return [(c.move.iccs() if c.move else None, c.comment, _tree(c)) for c in node.variations]


def test_dhtmlxq_sample_mainline() -> None:
    game = read_dhtmlxq(read_text_file(SAMPLES / "dhtmlxq" / "cchess_test_ubb_mainline.txt"))
    assert game.errors == []
    moves = game.mainline_moves()
    assert len(moves) == 77
    assert moves[:2] == [Move.from_iccs("h2e2"), Move.from_iccs("h9g7")]  # 7747 7062
    assert game.headers["Result"] == "1-0"
    assert game.headers["Event"] == "2025年第五届上海杯象棋大师公开赛"
    assert game.headers["Red"] == "成都 孟辰" and game.headers["Black"] == "江苏 刘柏宏"
    assert game.headers["Site"] == "上海" and game.headers["Round"] == "决赛"
    assert game.headers["TimeControl"] == "50分＋20秒"
    assert "FEN" not in game.headers  # the binit is the standard start (pieces right to left)
    board = game.board()
    for m in moves:
        board.push(m)


def test_dhtmlxq_round_trip_with_variations_and_comments() -> None:
    game = read_xqf(SAMPLES / "xqf" / "cchess_game_varations.xqf")
    game.comment = "第一行\n第二行"
    game.variations[0].comment = "中炮"
    game.variations[0].variations[1].comment = "屏风马"
    game.end().comment = "结束"
    text = write_dhtmlxq(game)
    assert "[DhtmlXQ_movelist]77477242796770628979808119271022[/DhtmlXQ_movelist]" in text
    assert "[DhtmlXQ_move_0_2_1]" in text and "[DhtmlXQ_move_1_6_2]" in text
    assert "[DhtmlXQ_comment0]第一行||第二行[/DhtmlXQ_comment0]" in text
    assert "[DhtmlXQ_comment1_2]屏风马[/DhtmlXQ_comment1_2]" in text
    again = read_dhtmlxq(text)
    assert again.errors == []
    assert _tree(again) == _tree(game)
    assert again.comment == game.comment
    assert write_game(again) == write_game(game)


def test_dhtmlxq_custom_start_black_first() -> None:
    fen = "4k4/9/9/9/9/9/9/1r7/r8/3K5 b - - 0 1"
    board = Board(fen)
    board.push_iccs("b2b0")
    game = Game.from_board(board)
    text = write_dhtmlxq(game)
    assert "[DhtmlXQ_binit]" in text
    again = read_dhtmlxq(text)
    assert again.headers["FEN"] == fen
    assert again.mainline_moves() == [Move.from_iccs("b2b0")]
    assert again.headers["Result"] == "0-1"


def test_dhtmlxq_quirks() -> None:
    text = ("[DhtmlXQ][DhtmlXQ_blacktime]10[/DhtmlXQ_time][DhtmlXQ_movelist]77477062[/DhtmlXQ_movelist]"
            "[DhtmlXQ_move_0_2_1]1022[/DhtmlXQ_move_0_2_1][DhtmlXQ_move_1_3_2]1927[/DhtmlXQ_move_1_3_2]"
            "[DhtmlXQ_move_0_9_3]1022[/DhtmlXQ_move_0_9_3][/DhtmlXQ]")
    game = read_dhtmlxq(text)
    assert game.headers["BlackTime"] == "10"  # malformed closing tag still closes the field
    assert game.mainline_moves() == [Move.from_iccs("h2e2"), Move.from_iccs("h9g7")]
    alt = game.variations[0].variations[1]
    assert alt.move == Move.from_iccs("b9c7") and alt.next() is not None
    assert alt.next().move == Move.from_iccs("b0c2")  # type: ignore[union-attr]
    assert len(game.errors) == 1 and "branch 3" in game.errors[0]
    with pytest.raises(DhtmlxqError):
        read_dhtmlxq("[Game \"Chinese Chess\"]\n1. 炮二平五 *")
    two = read_dhtmlxq_games(write_dhtmlxq(game) + "\n" + write_dhtmlxq(game, container="DhtmlXQHTML"))
    assert len(two) == 2 and two[1].mainline_moves() == game.mainline_moves()


def test_dhtmlxq_illegal_move_is_an_error() -> None:
    game = read_dhtmlxq("[DhtmlXQ_movelist]77477040[/DhtmlXQ_movelist]")
    assert game.mainline_moves() == [Move.from_iccs("h2e2")]
    assert len(game.errors) == 1 and "h9e9" in game.errors[0]  # 7040: x7 y0 -> x4 y0 (top origin)
    odd = read_dhtmlxq("[DhtmlXQ_movelist]7747x[/DhtmlXQ_movelist]")
    assert odd.errors and odd.mainline_moves() == []


# -- EPD ----------------------------------------------------------------------------------------

EPD = SAMPLES / "fen" / "xqwizard_ENDGAMES_A_gbk_big5.EPD"


def test_mixed_gbk_big5_epd() -> None:
    entries = read_epd(EPD)
    assert len(entries) == 41
    assert entries[0] == EpdEntry("r4k3/9/9/9/9/4R4/9/9/9/4K4 w - - 0 1", "01.对面笑(一)", "01.對面笑(一)", 1)
    assert entries[2].name == "03.双车错(一)" and entries[2].name_traditional == "03.雙車錯(一)"
    assert entries[-1].name_traditional == "41.三車鬧士"
    for e in entries:
        Board(e.fen)
    assert write_epd(entries, mixed=True) == EPD.read_bytes()  # byte for byte
    utf8 = write_epd(entries)
    assert read_epd(utf8) == entries
    games = epd_to_games(entries)
    assert games[0].headers["Event"] == "01.对面笑(一)" and games[0].headers["FEN"] == entries[0].fen


def test_epd_errors() -> None:
    errors: list[str] = []
    data = b"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w\nnot a fen ; x\n"
    entries = read_epd(data, errors)
    assert len(entries) == 1 and entries[0].fen.endswith("w - - 0 1")
    assert len(errors) == 1 and errors[0].startswith("line 2")
    with pytest.raises(EpdError, match="no position"):
        read_epd(b"hello\n")


def test_epd_games_to_pgn() -> None:
    games = epd_to_games(read_epd(EPD))
    text = write_game(games[0])
    again = read_game(text)
    assert again is not None and again.board().fen() == games[0].board().fen()
