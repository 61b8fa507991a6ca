"""The referee explains its repetition rulings: every move of the cycle with its class and the
article that decided it, in ``xiangqi outcome --explain`` and in the game's result (the state's
``result.explain``, shown in the page's result dialog)."""

from __future__ import annotations

from xiangqi.app.play.session import GameSession
from xiangqi.cli import main as cli_main
from xiangqi.core.board import RED, Board
from xiangqi.core.referee import explain_cycle

# The red rook follows a lone black horse between d7 and f6 along ranks 7 and 6; the horse flees
# each time. After eight plies the start position occurs for the third time: Red 长捉 (an
# unprotected horse, 24.3), Black two idle moves: Red must change and loses (24.13).
FEN = "3akab2/9/3n5/R8/9/9/9/9/4A4/3AK4 w - - 0 1"
MOVES = "a6a7 d7f6 a7a6 f6d7 a6a7 d7f6 a7a6 f6d7".split()
EXPECTED = [
    "红 车九进一: 捉 马 (第24.3条, 无根子)",
    "黑 马4进6: 闲 (第24.8条)",
    "红 车九退一: 捉 马 (第24.3条, 无根子)",
    "黑 马6退4: 闲 (第24.8条)",
] * 2 + [
    "红方: 长捉 — 禁止着法 (第24.13/24.14条)",
    "黑方: 闲 — 允许着法 (第24.13/24.14条)",
    "黑胜 — 红方长捉，判负 / Black wins — Red perpetually chases: Red loses",
]


def _board() -> Board:
    b = Board(FEN)
    for m in MOVES:
        b.push_iccs(m)
    return b


def test_explain_lines_name_class_target_and_article():
    assert explain_cycle(_board()) == EXPECTED
    b = _board()
    b.pop()
    assert explain_cycle(b) is None  # no ruling due yet: nothing to explain


def test_cli_outcome_explain_prints_the_same_lines(capsys):
    assert cli_main(["outcome", "--explain", "--fen", FEN, *MOVES]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "black"
    assert out[2:] == EXPECTED


def test_game_result_carries_the_explanation():
    s = GameSession(red="human", black="human", fen=FEN)
    for m in MOVES:
        s.play(m)
    res = s.state()["result"]
    assert res["termination"] == "perpetual" and res["winner"] == "black"
    assert res["explain"] == EXPECTED


def test_other_results_have_no_explanation():
    s = GameSession(red="human", black="human")
    s.resign(RED)
    assert s.state()["result"]["explain"] == []


def test_cli_explain_cites_the_block_and_the_pawn_articles(capsys):
    # 24.6 拦: the red rook on a7 attacks the lone horse on e7, and 炮3进2 stands in its way. 通则 3:
    # a pawn chasing by itself is 闲 (兵卒本身捉子为闲). Both cycles are allowed on both sides: draws.
    moves = "a6a7 c9c7 a7a6 c7c9".split() * 2
    assert cli_main(["outcome", "--explain", "--fen", "2c2k3/9/4n4/R8/9/9/9/9/9/3K5 w - - 0 1", *moves]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "draw"
    assert out[2:6] == ["红 车九进一: 捉 马 (第24.3条, 无根子)", "黑 炮3进2: 闲 (第24.6条, 拦)",
                        "红 车九退一: 闲 (第24.8条)", "黑 炮3退2: 闲 (第24.8条)"]
    moves = "d6e6 f9f8 e6d6 f8f9".split() * 2
    assert cli_main(["outcome", "--explain", "--fen", "5k3/9/3cn4/3P5/9/9/9/9/9/4K4 w - - 0 1", *moves]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "draw" and out[2] == "红 兵六平五: 闲 (通则3, 兵卒本身捉子为闲)"
