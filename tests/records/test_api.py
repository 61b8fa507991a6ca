"""The records API as python-chess users expect it: streams (binary too), paths, header scans, errors."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import xiangqi
from xiangqi.core.errors import ReadError, XiangqiError
from xiangqi.core.pgn import read_game, read_headers, skip_game

DATA = Path(__file__).parent.parent / "data"
GBK = DATA / "records" / "pgn" / "xqbase_SAMPLE_chinese_gbk.PGN"
BIG5 = sorted((DATA / "corpus" / "ccpd").glob("ccpd_0*.pgn"))
XQF = DATA / "records" / "xqf" / "xqbase_SAMPLE.XQF"


def _big5_file() -> bytes:
    return b"\r\n".join(p.read_bytes() for p in BIG5)


@pytest.mark.parametrize("kind", ["gbk", "big5"])
def test_read_game_streams_a_binary_file_game_by_game(kind: str, tmp_path: Path) -> None:
    data = GBK.read_bytes() * 3 if kind == "gbk" else _big5_file()
    want = xiangqi.read_records(data)
    path = tmp_path / "many.pgn"
    path.write_bytes(data)
    for stream in (io.BytesIO(data), open(path, "rb"), io.BufferedReader(io.BytesIO(data))):  # noqa: SIM115
        with stream:
            got = []
            while (game := read_game(stream)) is not None:
                got.append(game)
        assert [g.headers for g in got] == [g.headers for g in want]
        assert [g.mainline_moves() for g in got] == [g.mainline_moves() for g in want]
        assert all(g.errors == [] for g in got)


def test_a_path_is_read_as_a_file_not_as_pgn_text(tmp_path: Path) -> None:
    by_path = xiangqi.read_game(str(GBK))
    assert by_path is not None and len(by_path.mainline_moves()) == 75 and by_path.errors == []
    assert xiangqi.read_game(GBK).mainline_moves() == by_path.mainline_moves()
    xqf = xiangqi.read_game(XQF)  # any format
    assert xqf.mainline_moves() == by_path.mainline_moves()
    with pytest.raises(XiangqiError, match="cannot read"):
        xiangqi.read_game(str(tmp_path / "missing.pgn"))
    assert xiangqi.read_game("1. h2e2 h9g7").mainline_moves()[0].iccs() == "h2e2"  # still text


def test_the_pgn_reader_refuses_a_path_and_names_the_reader_of_files() -> None:
    # The PGN module sits below the format dispatcher (tests/test_layers.py): a path is never
    # parsed as PGN text, and the message names the function that reads files of any format.
    for path in (XQF, str(XQF), str(GBK)):
        with pytest.raises(XiangqiError, match=r"file path, not PGN text: .*xiangqi\.read_game"):
            read_game(path)
    assert read_game("1. h2e2 h9g7").mainline_moves()[0].iccs() == "h2e2"


def test_read_headers_and_skip_game_walk_a_stream() -> None:
    data = _big5_file()
    want = xiangqi.read_records(data)
    stream = io.BytesIO(data)
    assert read_headers(stream) == want[0].headers | {}  # the tags as read, no moves
    assert skip_game(stream) is True
    third = read_game(stream)
    assert third.headers == want[2].headers and third.mainline_moves() == want[2].mainline_moves()
    seen = 3
    while read_headers(stream) is not None:
        seen += 1
    assert seen == len(want) and skip_game(stream) is False
    text_stream = io.StringIO(data.decode("big5"))
    assert [read_headers(text_stream)["Red"] for _ in want] == [g.headers["Red"] for g in want]


def test_problems_are_exception_objects_with_kind_and_ply() -> None:
    game = read_game("1. 炮二平五 马8进7 2. 车一进五 马二进三 *")
    assert game.errors and isinstance(game.errors[0], str) and game.errors[0].startswith("ply 3 (main line)")
    (problem,) = game.problems
    assert isinstance(problem, ReadError) and isinstance(problem, XiangqiError)
    assert (problem.kind, problem.ply) == ("move", 3) and str(problem) == game.errors[0]
    with pytest.raises(ReadError) as info:
        raise problem
    assert info.value.ply == 3
    # plain strings from elsewhere get a kind too
    game.errors.append("ply 7 (variation): something")
    assert (game.problems[1].kind, game.problems[1].ply) == ("variation", 7)


def test_records_api_is_exported_from_the_package() -> None:
    for name in ("read_game", "read_games", "read_headers", "skip_game", "write_game", "read_records",
                 "write_records", "Game", "GameNode", "ReadError", "RecordError", "RecordProblem"):
        assert name in xiangqi.__all__ and getattr(xiangqi, name) is not None
