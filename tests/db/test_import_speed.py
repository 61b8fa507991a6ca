"""The import's speed-ups give exactly the rows of the plain computations (issue 13, import speed).

- the fast path (one compiled pass) and the plain path (the reader and :func:`importer._index_data`) give
  identical ``positions`` and ``boards`` rows for the same games, in the writer's primary-key order;
- the writer's numpy assembly of a chunk (:func:`importer._index_rows`) equals the former tuple-by-tuple
  assembly (sorted tuples, the first game's board kept);
- the numpy encoding score equals the core's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi.core import encoding
from xiangqi.core.encoding import decode_lenient
from xiangqi.core.pgn import iter_game_texts
from xiangqi.db import importer

DATA = Path(__file__).parent.parent / "data"
CCPD = sorted((DATA / "corpus" / "ccpd").glob("*.pgn"))  # real CCPD games (Big5), tests/data/corpus/ccpd
WXF = sorted((DATA / "corpus" / "wxf-masters").glob("*.pgn"))  # ICCS multi-game PGN, same folder


def units() -> list[tuple[str, int, str, object]]:
    out = []
    for path in CCPD + WXF:
        text = decode_lenient(path.read_bytes())[0]
        chunks = [c for c in iter_game_texts(text) if c.strip()]
        for i, chunk in enumerate(chunks):
            whole = True if len(chunks) == 1 else (importer._LAST if i == len(chunks) - 1 else False)
            out.append((path.name, i, chunk, whole))
    return out


def rows_of(fast: bool, monkeypatch) -> list[dict]:
    monkeypatch.setattr(importer, "_FAST", fast)
    rows = []
    for name, i, chunk, whole in units():
        items = importer._parse_unit(name, i, chunk, whole, "master")
        rows.extend(item for kind, item in items if kind == "row")
    return rows


def test_fast_and_plain_paths_give_identical_position_rows(monkeypatch):
    fast, plain = rows_of(True, monkeypatch), rows_of(False, monkeypatch)
    assert len(fast) == len(plain) >= 15
    ids = list(range(1, len(fast) + 1))
    pos_fast, boards_fast = map(list, importer._index_rows(ids, [r["_ix"] for r in fast]))
    pos_plain, boards_plain = map(list, importer._index_rows(ids, [r["_ix"] for r in plain]))
    assert len(pos_fast) == sum(r["plies"] + 1 for r in plain) > 1000
    assert pos_fast == pos_plain
    assert boards_fast == boards_plain
    assert [r["moves"] for r in fast] == [r["moves"] for r in plain]


def test_the_chunk_assembly_equals_the_tuple_by_tuple_one(monkeypatch):
    monkeypatch.setattr(importer, "_FAST", False)
    games = []
    for name, i, chunk, whole in units():
        game = importer._parse_game_text(chunk, last=bool(whole))
        row = importer.game_row(game, name, i)
        importer._index_data(row)
        games.append(row)
    games.append(dict(games[0]))  # the same game twice: its boards are met twice, stored once
    ids = [10 * (i + 1) for i in range(len(games))]
    want_pos, want_boards = [], {}
    for gid, r in zip(ids, games, strict=True):
        want_pos.extend((k, gid, ply, mv) for k, ply, mv in r["_pos"])
        for b in r["_boards"]:
            want_boards.setdefault(b[1], b)
    ixs = [importer.index_arrays_of(r["_pos"], r["_boards"]) for r in games]
    pos, boards = map(list, importer._index_rows(ids, ixs))
    assert pos == sorted(want_pos)
    assert boards == sorted(want_boards.values())
    assert pos[0][3] is None or isinstance(pos[0][3], str)
    assert sum(mv is None for *_rest, mv in pos) == len(games)  # one last position per game


@pytest.mark.parametrize("path", CCPD[:4] + [DATA / "records" / "pgn" / "cchess_endgame_shortfen.pgn"],
                         ids=lambda p: p.name)
def test_the_numpy_encoding_score_is_the_cores(path):
    data = path.read_bytes()
    for enc in ("gb18030", "cp950", "utf-8"):
        text = data.decode(enc, errors="replace")
        assert importer.score_text(text) == encoding._score(text), enc
    odd = "炮二平五\ufffd\ue000\uf8ff\uf900 abc 馬８進７"
    assert importer.score_text(odd) == encoding._score(odd) == 4 * 4 - 8 * 3 + 4 * 2
    assert decode_lenient(data, score=importer.score_text) == decode_lenient(data)
