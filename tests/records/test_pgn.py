"""PGN game model, reader and writer; encoding sniffing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.core.encoding import RecordEncodingError, decode_bytes, encode_text, read_text_file
from xiangqi.core.errors import IllegalMoveError, XiangqiError
from xiangqi.core.pgn import Game, GameNode, read_game, read_games, write_game

SAMPLES = Path(__file__).parent.parent / "data" / "records"
PGN = SAMPLES / "pgn"


def _replay(game: Game) -> Board:
    board = game.board()
    for m in game.mainline_moves():
        board.push(m)  # validates every move through the core
    return board


# -- the real 1982 game (issue 2) --------------------------------------------------------------------

def test_iccs_1982_game_reads_125_legal_plies() -> None:
    game = read_game(read_text_file(PGN / "xiangqijs_readme_iccs_1982.pgn"))
    assert game is not None
    assert game.errors == []
    assert game.headers["Red"] == "柳大华"
    assert game.headers["Black"] == "杨官璘"
    assert game.headers["Result"] == "1/2-1/2"
    assert game.headers["Format"] == "ICCS"
    moves = game.mainline_moves()
    assert len(moves) == 125
    assert moves[0] == Move.from_iccs("b2e2") and moves[-1] == Move.from_iccs("b5a5")
    board = _replay(game)
    assert len(board.move_stack) == 125
    assert not board.turn  # 125 plies from a Red start: Black to move


@pytest.mark.parametrize("notation", ["chinese", "wxf", "iccs"])
def test_1982_game_round_trips_in_every_notation(notation: str) -> None:
    game = read_game(read_text_file(PGN / "xiangqijs_readme_iccs_1982.pgn"))
    assert game is not None
    text = write_game(game, notation=notation)
    assert f'[Format "{ {"chinese": "Chinese", "wxf": "WXF", "iccs": "ICCS"}[notation] }"]' in text
    again = read_game(text)
    assert again is not None and again.errors == []
    assert again.mainline_moves() == game.mainline_moves()
    assert again.headers["Result"] == "1/2-1/2"


def test_written_pgn_layout() -> None:
    board = Board()
    for t in ("h2e2", "h9g7", "h0g2"):
        board.push_iccs(t)
    game = Game.from_board(board)
    game.headers.update({"Event": "test", "Red": "甲", "Black": "乙"})
    text = str(game)
    lines = text.splitlines()
    assert lines[0] == '[Game "Chinese Chess"]'
    assert [ln.split()[0][1:] for ln in lines if ln.startswith("[")] == [
        "Game", "Event", "Date", "Red", "Black", "Result", "Format"]
    assert "FEN" not in text
    assert '[Format "Chinese"]' in text
    assert lines[-1] == "1. 炮二平五 马8进7 2. 马二进三 *"
    assert write_game(game, notation="wxf").splitlines()[-1] == "1. C2.5 H8+7 2. H2+3 *"
    assert write_game(game, notation="iccs").splitlines()[-1] == "1. H2-E2 H9-G7 2. H0-G2 *"
    assert write_game(game, fullwidth_black=True).splitlines()[-1] == "1. 炮二平五 马８进７ 2. 马二进三 *"


def test_from_board_custom_start_and_black_first() -> None:
    fen = "4k4/9/9/9/9/9/9/1r7/r8/3K5 b - - 0 1"
    board = Board(fen)
    board.push_iccs("b2b0")
    game = Game.from_board(board)
    assert game.headers["FEN"] == fen
    text = write_game(game)
    assert f'[FEN "{fen}"]' in text
    assert "1... 车2进2 0-1" in text
    assert game.headers["Result"] == "0-1"  # mate: the side to move (Red) loses
    again = read_game(text)
    assert again is not None and again.errors == []
    assert again.mainline_moves() == [Move.from_iccs("b2b0")]
    assert again.board().fen() == fen


def test_variations_and_comments_round_trip() -> None:
    game = Game()
    game.comment = "game comment"
    n1 = game.add_variation(Move.from_iccs("h2e2"), comment="central cannon")
    alt = game.add_variation(Move.from_iccs("b0c2"), starting_comment="or the horse")
    alt.add_variation(Move.from_iccs("b9c7"))
    n2 = n1.add_variation(Move.from_iccs("h9g7"))
    n2b = n1.add_variation(Move.from_iccs("b9c7"), comment="屏风马 {quoted}")
    n2b.add_variation(Move.from_iccs("h0g2"))
    n2.add_variation(Move.from_iccs("h0g2"))
    game.final_comment = "the end"
    text = write_game(game)
    flat = " ".join(text.split("\n"))
    assert ("1. 炮二平五 {central cannon} ( {or the horse} 1. 马八进七 马2进3 ) 1... 马8进7 "
            "( 1... 马2进3 {屏风马 ｛quoted｝} 2. 马二进三 ) 2. 马二进三 * {the end}") in flat
    again = read_game(text)
    assert again is not None and again.errors == []
    assert _tree(again) == _tree(game)
    assert again.comment == "game comment" and again.final_comment == "the end"
    assert again.variations[1].starting_comment == "or the horse"
    for notation in ("wxf", "iccs"):
        other = read_game(write_game(game, notation=notation))
        assert other is not None and _tree(other) == _tree(game)


def _tree(node: GameNode) -> list:
    return [(c.move.iccs() if c.move else None, c.comment.replace("｛", "{").replace("｝", "}"),
             c.starting_comment, _tree(c)) for c in node.variations]


def test_game_node_navigation() -> None:
    game = read_game("1. h2e2 h9g7 (1... b9c7 2. h0g2) 2. h0g2 *")
    assert game is not None and game.errors == []
    first = game.next()
    assert first is not None and first.san() == "炮二平五" and first.ply() == 1
    assert first.is_mainline() and not first.variations[1].is_main_variation()
    assert [n.text("wxf") for n in game.mainline()] == ["C2.5", "H8+7", "H2+3"]
    end_fen = game.end().board().fen()
    assert end_fen == "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R b - - 3 2"
    side = first.variations[1]
    assert side.san() == "马2进3" and not side.is_mainline()
    assert side.next() is not None and side.next().board().move_stack == [Move.from_iccs(t) for t in
                                                                           ("h2e2", "b9c7", "h0g2")]
    first.promote_to_main(Move.from_iccs("b9c7"))
    assert game.mainline_moves() == [Move.from_iccs(t) for t in ("h2e2", "b9c7", "h0g2")]
    assert game.count_nodes() == 5 and game.count_branches() == 1
    with pytest.raises(IllegalMoveError):
        first.add_variation(Move.from_iccs("h0g2"))  # Red's move when Black is to play
    main = first.add_main_variation(Move.from_iccs("a9a8"))
    assert first.variations[0] is main


# -- tolerance --------------------------------------------------------------------------------------

def test_illegal_move_is_recorded_and_the_next_game_is_read() -> None:
    text = ('[Game "Chinese Chess"]\n[Red "a"]\n\n1. 炮二平五 马8进7 2. 车一进五 马二进三 *\n\n'
            '[Game "Chinese Chess"]\n[Red "b"]\n\n1. 炮二平五 (1. 兵七进一 马9进9) 马8进7 1-0\n')
    games = read_games(text)
    assert len(games) == 2
    first, second = games
    assert first.mainline_moves() == [Move.from_iccs("h2e2"), Move.from_iccs("h9g7")]
    assert len(first.errors) == 1 and "ply 3" in first.errors[0] and "车一进五" in first.errors[0]
    assert second.headers["Red"] == "b" and len(second.mainline_moves()) == 2
    assert second.headers["Result"] == "1-0"
    assert len(second.errors) == 1 and "variation" in second.errors[0]
    assert second.variations[1].move == Move.from_iccs("c3c4")  # kept up to the bad move


def test_bad_fen_and_bad_tags_are_errors_not_exceptions() -> None:
    game = read_game('[FEN "rnbakabnr/9/9 w"]\n[Broken tag\n\n1. 炮二平五 *\n')
    assert game is not None
    assert any("FEN" in e for e in game.errors)
    assert game.mainline_moves() == []


def test_read_game_from_stream_walks_the_file() -> None:
    text = read_text_file(PGN / "xiangqijs_readme_iccs_1982.pgn")
    stream = io.StringIO(text + "\n" + text.replace("柳大华", "second"))
    first = read_game(stream)
    second = read_game(stream)
    assert first is not None and second is not None
    assert first.headers["Red"] == "柳大华" and second.headers["Red"] == "second"
    assert len(second.mainline_moves()) == 125
    assert read_game(stream) is None
    assert read_game("") is None


def test_colon_tags_glued_numbers_and_result_comment() -> None:
    game = read_game('[Round: "3"]\n[Generator: "x"]\n1.炮二平五 马8进7\n2.马二进三 1-0 {红胜}')
    assert game is not None and game.errors == []
    assert game.headers["Round"] == "3" and game.headers["Generator"] == "x"
    assert len(game.mainline_moves()) == 3
    assert game.final_comment == "红胜"


# -- the sample files -------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "plies", "result", "encoding"), [
    ("cchess_endgame_shortfen.pgn", 25, "*", "gb18030"),
    ("cchess_test2_chinese_timecontrol.pgn", 102, "1/2-1/2", "gb18030"),
    ("pychinesechess_cg245_chinese_fen_puzzle.pgn", 27, "1-0", "utf-8"),
    ("wukong_test_ok_wxf_fullwidth.pgn", 127, "*", "utf-8"),
    ("xiangqijs_readme_iccs_1982.pgn", 125, "1/2-1/2", "utf-8"),
    ("xqbase_SAMPLE_chinese_gbk.PGN", 75, "1-0", "gb18030"),
])
def test_every_sample_pgn_reads(name: str, plies: int, result: str, encoding: str) -> None:
    data = (PGN / name).read_bytes()
    assert decode_bytes(data)[1] == encoding
    games = read_games(read_text_file(data))
    assert len(games) == 1
    game = games[0]
    assert game.errors == []
    assert len(game.mainline_moves()) == plies
    assert game.headers["Result"] == result
    _replay(game)
    again = read_game(write_game(game))
    assert again is not None and again.mainline_moves() == game.mainline_moves()
    assert [n.comment for n in again.mainline()] == [n.comment for n in game.mainline()]


def test_xqbase_sample_details() -> None:
    game = read_game(read_text_file(PGN / "xqbase_SAMPLE_chinese_gbk.PGN"))
    assert game is not None
    assert game.headers["FEN"] == "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/9/1C5C1/9/RN2K2NR w - - 0 1"
    assert game.comment.startswith("象棋让九子原属茶余饭后的娱乐")
    nodes = list(game.mainline())
    assert [n.san() for n in nodes[:3]] == ["炮八平五", "炮8平5", "炮五进五"]
    assert nodes[1].comment.startswith("红方首着架中炮必走之着")
    assert nodes[22 * 2].san() == "前马退二"


# -- encodings --------------------------------------------------------------------------------------

def test_encodings_are_sniffed() -> None:
    text = '[Event "象棋"]\n1. 炮二平五 马8进7 *\n'
    assert decode_bytes(text.encode("utf-8"))[1] == "utf-8"
    assert decode_bytes(b"\xef\xbb\xbf" + text.encode("utf-8")) == (text, "utf-8-sig")
    assert decode_bytes(text.encode("gbk")) == (text, "gb18030")
    trad = '[Event "象棋對局"]\n1. 炮二平五 馬８進７ 2. 傌二進三 車９平８ *\n'
    assert decode_bytes(trad.encode("big5")) == (trad, "big5")
    assert read_game(read_text_file(trad.encode("big5"))).mainline_moves() == [  # type: ignore[union-attr]
        Move.from_iccs(t) for t in ("h2e2", "h9g7", "h0g2", "i9h9")]
    with pytest.raises(RecordEncodingError):
        decode_bytes(text.encode("utf-8"), "ascii")
    assert encode_text(text, "gbk") == text.encode("gbk")
    with pytest.raises(RecordEncodingError, match="cannot be written"):
        encode_text("😀", "gbk")
    with pytest.raises(XiangqiError, match="cannot read"):
        read_text_file(SAMPLES / "no-such-file.pgn")


def test_games_without_move_text_are_split_at_the_game_tag() -> None:
    text = ('[Game "Chinese Chess"]\n[FEN "4k4/9/9/9/9/9/9/9/9/3K5 w"]\n'
            '[Game "Chinese Chess"]\n[Event "second"]\n\n1. 炮二平五 *\n')
    games = read_games(text)
    assert [g.headers.get("Event", "") for g in games] == ["", "second"]
    assert games[0].board().fen() == "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1"
    stream = io.StringIO(text)
    assert read_game(stream).headers.get("Event", "") == ""  # type: ignore[union-attr]
    assert read_game(stream).headers["Event"] == "second"  # type: ignore[union-attr]
    assert read_game(stream) is None


def test_nags_are_kept_in_the_tree_and_written_back() -> None:
    text = "1. h2e2 $6 h9g7 $4 (1... b9c7 $2 $1 2. h0g2) 2. h0g2 $3 {good} *"
    game = read_game(text)
    assert game is not None and game.errors == []
    assert [n.nags for n in game.mainline()] == [{6}, {4}, {3}]
    assert game.variations[0].variations[1].nags == {1, 2}
    assert game.variations[0].variations[1].next().nags == set()
    out = write_game(game, notation="iccs")
    assert "1. H2-E2 $6 H9-G7 $4 ( 1... B9-C7 $1 $2 2. H0-G2 ) 2. H0-G2 $3 {good} *" in " ".join(out.split())
    for notation in ("chinese", "wxf", "iccs"):
        again = read_game(write_game(game, notation=notation))
        assert again is not None and again.errors == []
        assert [n.nags for n in again.mainline()] == [{6}, {4}, {3}]
        assert again.variations[0].variations[1].nags == {1, 2}


def test_move_suffix_glyphs_are_read_as_nags() -> None:
    game = read_game("1. 炮二平五?! 马8进7?? 2. 马二进三! 车9平8!? 3. 车一平二? 马2进3!! *")
    assert game is not None and game.errors == []
    assert [n.nags for n in game.mainline()] == [{6}, {4}, {1}, {5}, {2}, {3}]
    assert [m.iccs() for m in game.mainline_moves()][:2] == ["h2e2", "h9g7"]
    wxf = read_game("1. C2.5?! H8+7 *")
    assert wxf is not None and wxf.errors == [] and wxf.variations[0].nags == {6}


def test_misplaced_or_huge_nags_are_dropped_without_error() -> None:
    game = read_game("$5 1. h2e2 ( $7 1. b0c2 ) $400 $" + "9" * 5000 + " h9g7 *")
    assert game is not None and game.errors == []
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h9g7"]
    assert game.variations[0].nags == set() and game.variations[1].nags == set()
