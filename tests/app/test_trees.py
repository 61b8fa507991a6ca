"""Analysis trees (app/library/trees.py): the page's flat tree to a game tree and back through PGN, and a
saved tree hung on a game whose moves changed (an undo, a different continuation)."""

from __future__ import annotations

import pytest

from xiangqi.app.library.trees import MAX_NODES, TreeError, count_variations, game_from_nodes, merge_main_line
from xiangqi.core import pgn

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def flat(*nodes):
    return [{"parent": None, "move": None, "comment": ""}] + [
        {"parent": p, "move": m, "comment": c} for p, m, c in nodes]


def test_flat_tree_to_pgn_and_back():
    game = game_from_nodes(START, flat((0, "h2e2", ""), (1, "h9g7", ""), (1, "h7e7", "顺炮"),
                                       (0, "b2e2", "")))
    text = pgn.write_game(game)
    back = pgn.read_game(text)
    assert [v.move.iccs() for v in back.variations] == ["h2e2", "b2e2"]
    assert [v.move.iccs() for v in back.variations[0].variations] == ["h9g7", "h7e7"]
    assert back.variations[0].variations[1].comment == "顺炮"
    assert count_variations(back) == 2


def test_merge_keeps_branches_where_they_fit():
    stored = game_from_nodes(START, flat((0, "h2e2", "中炮"), (1, "h9g7", ""), (2, "h0g2", ""),
                                         (1, "h7e7", "")))
    # the game was taken back to 炮二平五 and went on with 炮8平5: the game's moves are the main line,
    # the stored 马8进7 line becomes the alternative, the comment stays
    game = merge_main_line(START, ["h2e2", "h7e7", "b0c2"], stored)
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h7e7", "b0c2"]
    first = game.variations[0]
    assert first.comment == "中炮"
    assert [v.move.iccs() for v in first.variations] == ["h7e7", "h9g7"]
    assert [m.iccs() for m in first.variations[1].mainline_moves()] == ["h0g2"]
    # another start position: the stored tree is not this game's, nothing of it is used
    other = merge_main_line("4k4/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1", ["e1e2"], stored)
    assert count_variations(other) == 0 and other.variations[0].comment == ""


@pytest.mark.parametrize("nodes, words", [
    ([], "no nodes"),
    (flat((0, "h2e2", ""), (0, "h2e2", "")), "given twice"),
    (flat((0, "h2e2", ""), (3, "h9g7", "")), "node 2: parent"),
    (flat((0, "a0a5", "")), "not a legal move"),
    (flat((0, "zz", "")), "ICCS"),
    (flat((0, "h2e2", "x" * 2001)), "at most 2000"),
    ([{"parent": 0, "move": None}], "node 0"),
])
def test_bad_trees_are_named(nodes, words):
    with pytest.raises(TreeError, match=words):
        game_from_nodes(START, nodes)


def test_too_many_nodes():
    nodes = flat(*[(0, "h2e2", "")] * MAX_NODES)
    with pytest.raises(TreeError, match=f"at most {MAX_NODES}"):
        game_from_nodes(START, nodes)
