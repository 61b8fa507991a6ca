"""Round trips of random game trees through every format, and fuzzing of the readers with mutated samples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xiangqi.core.dhtmlxq import read_dhtmlxq, write_dhtmlxq
from xiangqi.core.encoding import read_text_file
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import Game, GameNode, read_game, write_game
from xiangqi.core.records import read_records
from xiangqi.core.xqf import read_xqf, write_xqf

SAMPLES = Path(__file__).parent.parent / "data" / "records"
COMMENT_TEXT = st.text(alphabet=st.sampled_from(list("中炮马车 ab1,.!?\n（）：好棋") + ["{", "}", "(", ")"]),
                       max_size=12).map(str.strip)


def _tree(node: GameNode) -> list:
    return [(c.move.iccs() if c.move else None, c.comment, _tree(c)) for c in node.variations]


@st.composite
def game_trees(draw: st.DrawFn) -> Game:
    """A random game: a main line of up to 30 plies with random side variations and comments."""
    game = Game({"Event": draw(st.sampled_from(["", "测试", "Test 1"])), "Red": "红", "Black": "黑"})
    game.comment = draw(COMMENT_TEXT)
    board = game.board()
    frontier: list[tuple[GameNode, int]] = [(game, 0)]
    budget = draw(st.integers(min_value=1, max_value=45))
    while frontier and budget > 0:
        node, depth = frontier.pop(draw(st.integers(min_value=0, max_value=len(frontier) - 1)))
        b = node.board() if node is not game else board
        moves = list(b.legal_moves)
        if not moves or depth > 30:
            continue
        width = draw(st.integers(min_value=1, max_value=2 if node.variations == [] and depth else 1))
        picks = draw(st.lists(st.sampled_from(moves), min_size=1, max_size=width, unique=True))
        for m in picks:
            if node.has_variation(m):
                continue
            child = node.add_variation(m, comment=draw(COMMENT_TEXT))
            budget -= 1
            frontier.append((child, depth + 1))
    return game


def _unfull(text: str) -> str:
    # PGN and DhtmlXQ writers turn braces/brackets inside comments into their full-width forms
    return text.replace("｛", "{").replace("｝", "}").replace("［", "[").replace("］", "]")


def _comparable(game: Game) -> list:
    return _comparable_list(_tree(game))


def _comparable_list(tree: list) -> list:
    return [(i, _unfull(c), _comparable_list(t)) for i, c, t in tree]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_trees(), st.sampled_from(["chinese", "wxf", "iccs"]))
def test_pgn_xqf_pgn_and_pgn_dhtmlxq_pgn_keep_everything(game: Game, notation: str) -> None:
    pgn = write_game(game, notation=notation)
    g1 = read_game(pgn)
    assert g1 is not None and g1.errors == []
    assert _comparable(g1) == _comparable(game)
    assert _unfull(g1.comment) == game.comment
    via_xqf = read_xqf(write_xqf(g1))
    assert via_xqf.errors == []
    assert _tree(via_xqf) == _tree(g1) and via_xqf.comment == g1.comment
    via_ubb = read_dhtmlxq(write_dhtmlxq(g1))
    assert via_ubb.errors == []
    assert _comparable(via_ubb) == _comparable(g1)
    for g in (via_xqf, via_ubb):
        again = read_game(write_game(g, notation=notation))
        assert again is not None and _comparable(again) == _comparable(g1)


@pytest.mark.parametrize("name", [
    "xqbase_SAMPLE_chinese_gbk.PGN", "cchess_test2_chinese_timecontrol.pgn",
    "pychinesechess_cg245_chinese_fen_puzzle.pgn", "xiangqijs_readme_iccs_1982.pgn"])
def test_sample_pgn_through_xqf_and_dhtmlxq(name: str) -> None:
    game = read_game(read_text_file(SAMPLES / "pgn" / name))
    assert game is not None
    for kind, other in (("xqf", read_xqf(write_xqf(game))), ("ubb", read_dhtmlxq(write_dhtmlxq(game)))):
        assert other.errors == []
        assert _tree(other) == _tree(game)
        assert other.comment == game.comment
        assert other.board().fen() == game.board().fen()
        assert other.headers["Result"] == game.headers["Result"]
        if kind == "xqf":  # XQF keeps 15 bytes of a name (FORMATS.md §7)
            red = game.headers["Red"]
            assert red.startswith(other.headers["Red"]) and len(other.headers["Red"]) >= min(len(red), 7)
        else:
            assert other.headers["Red"] == game.headers["Red"]


# -- fuzzing ------------------------------------------------------------------------------------

FUZZ_FILES = sorted(p for p in SAMPLES.rglob("*") if p.is_file())


@st.composite
def mutations(draw: st.DrawFn) -> tuple[str, bytes]:
    path = draw(st.sampled_from(FUZZ_FILES))
    data = bytearray(path.read_bytes())
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        kind = draw(st.sampled_from(["flip", "set", "delete", "insert", "truncate"]))
        if not data:
            break
        i = draw(st.integers(min_value=0, max_value=len(data) - 1))
        if kind == "flip":
            data[i] ^= 1 << draw(st.integers(min_value=0, max_value=7))
        elif kind == "set":
            data[i] = draw(st.integers(min_value=0, max_value=255))
        elif kind == "delete":
            del data[i:i + draw(st.integers(min_value=1, max_value=16))]
        elif kind == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[i:]
    return path.name, bytes(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_mutated_samples_give_a_game_or_our_error(case: tuple[str, bytes]) -> None:
    _name, data = case
    try:
        games = read_records(data)
    except XiangqiError:
        return
    for game in games:
        assert isinstance(game.errors, list)
        try:
            board = game.board()
        except XiangqiError:  # a damaged FEN tag: reported on the game, and board() says why
            assert any("FEN" in e for e in game.errors)
            assert not game.variations
            continue
        for m in game.mainline_moves():
            board.push(m)  # whatever was kept is legal
        write_game(game)
        write_xqf(game)
        write_dhtmlxq(game)
