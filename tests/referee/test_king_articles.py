"""The article a repetition explanation gives for a king's move (core/classify.py, RULES_CXA §3):
the king is no chaser (通则 1), so a 闲 king move is 24.8 (not 将, 杀 or 捉), or 通则 1 when the king
attacks a piece by itself; never 29.2's 从捉到捉, which would say the king's move keeps up a chase.
A king's move that chases does so through another piece (通则 2), which the article names as the
book does ("帅五平六，车捉马，判捉", 参考图18)."""

from __future__ import annotations

import csv
from pathlib import Path

from xiangqi.core.board import Board
from xiangqi.core.referee import explain_cycle

DATA = Path(__file__).resolve().parents[1] / "data"


def _played(fen: str, moves: str) -> Board:
    b = Board(fen)
    for m in moves.split():
        b.push_iccs(m)
    return b


def test_king_moves_beside_a_rooks_chase_and_a_king_attacking_alone():
    # The red rook on a7 attacks the lone black horse on d7 all along (a chase that was there
    # before the cycle); the red king steps 帅五平六 / 帅六平五. On d1 it attacks the lone cannon
    # on d2 by itself (通则 1: 闲); on e1 it attacks nothing (24.8). Black's king steps up and down.
    b = _played("5k3/9/R2n5/9/9/9/9/3c5/4K4/9 w - - 0 1", "e1d1 f9f8 d1e1 f8f9 e1d1 f9f8 d1e1 f8f9")
    assert explain_cycle(b) == [
        "红 帅五平六: 闲 (通则1, 帅单独捉子为闲)",
        "黑 将6进1: 闲 (第24.8条)",
        "红 帅六平五: 闲 (第24.8条)",
        "黑 将6退1: 闲 (第24.8条)",
    ] * 2 + [
        "红方: 闲 — 允许着法 (第24.13/24.14条)",
        "黑方: 闲 — 允许着法 (第24.13/24.14条)",
        "和棋 — 双方不变，判和 / Draw — both sides repeat with allowed moves",
    ]


def _figure(name: str) -> list[str]:
    """The explanation of the CXA figure ``name`` of tests/data/repetition_cxa.tsv, as played there."""
    with open(DATA / "repetition_cxa.tsv", encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f, delimiter="\t")}
    row = rows[name]
    return explain_cycle(_played(row["fen"], row["moves"]), "cxa")


def test_reference_figure_30_black_king_move_is_plain_idle():
    # CXA 2020 参考图30: 将6平5 is 闲 in the book; the black elephant's attack on the crossed pawn is
    # still there after it, made by the elephant, not by the king.
    lines = _figure("CXA-ref30")
    assert lines[3] == lines[7] == "黑 将6平5: 闲 (第24.8条)"
    assert not [line for line in lines if "从捉到捉" in line and ("帅" in line[:4] or "将" in line[:4])]
    assert lines[-1] == ("黑胜 — 红方一杀一捉，判负 / "
                         "Black wins — Red alternately threatens mate and chases: Red loses")


def test_a_king_move_that_chases_names_the_piece_that_chases():
    # 参考图18: "红方帅五平六，车捉马，判捉"; 参考图20: "帅五退一，九路车捉炮判捉"; 图15: "帅（将）允许长捉，
    # 但走动后，双马也轮流捉卒，判“捉”" (the king's move lets another piece take: 通则 2).
    assert _figure("CXA-ref18")[0] == "红 帅五平六: 捉 马 (通则2, 帅走动后车捉, 无根子)"
    assert _figure("CXA-ref20")[0] == "红 帅五退一: 捉 炮 (通则2, 帅走动后车捉, 无根子)"
    fig15 = _figure("CXA-fig15")
    assert fig15[0] == "红 帅六平五: 捉 卒 (通则2, 帅走动后马捉, 无根子)"
    assert fig15[-1] == "黑胜 — 红方长捉，判负 / Black wins — Red perpetually chases: Red loses"
