"""The importer's fast path (xiangqi.db.fastimport) gives exactly the reader's rows, or leaves the game to
the reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xiangqi.core.encoding import decode_lenient
from xiangqi.core.pgn import iter_game_texts
from xiangqi.db import importer
from xiangqi.db.fastimport import fast_row

DATA = Path(__file__).parent.parent / "data"
PGNS = sorted(p for p in DATA.rglob("*") if p.suffix.lower() == ".pgn")


def reference(text: str, name: str, index: int, last: bool) -> list[tuple]:
    fast, importer._FAST = importer._FAST, False
    try:
        return importer._parse_unit(name, index, text, last, "master")
    finally:
        importer._FAST = fast


def same_row(row: dict, expected: dict) -> bool:
    """The two rows are equal, their index arrays (``_ix``) element by element and of the same dtype."""
    assert row.keys() == expected.keys()
    for k in expected:
        if k == "_ix":
            assert len(row[k]) == len(expected[k]) == 6
            for a, b in zip(row[k], expected[k], strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b), k
        else:
            assert row[k] == expected[k], k
    return True


def texts(path: Path) -> list[str]:
    try:
        text = decode_lenient(path.read_bytes())[0]
    except Exception:  # noqa: BLE001 - a file no encoding reads is the reader's to report
        return []
    return [c for c in iter_game_texts(text) if c.strip()]


def test_the_data_files_hold_plain_games():
    assert len(PGNS) >= 30
    plain = sum(fast_row(t, "x", 0, "master", True, importer._start) is not None
                for p in PGNS for t in texts(p))
    assert plain >= 40


@pytest.mark.parametrize("path", PGNS, ids=lambda p: p.relative_to(DATA).as_posix())
def test_fast_rows_equal_the_readers(path):
    chunks = texts(path)
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        row = fast_row(chunk, path.name, i, "master", last, importer._start)
        whole = True if len(chunks) == 1 else (importer._LAST if last else False)
        ref = reference(chunk, path.name, i, whole)
        if row is None:
            continue
        assert [k for k, _ in ref] == ["row"], (i, ref)
        expected = ref[0][1]
        assert same_row(row, expected), i


PLAIN = """[Event "t"]
[Result "1-0"]

1. 炮二平五 马８进７ {a comment} 2. 炮八进二 马２进３ 3. 炮八平五 士４进５ 4. 前炮平四 车９平８
5. 马八进七 1-0 {after}
"""


def test_a_plain_game_and_what_sends_a_game_to_the_reader():
    row = fast_row(PLAIN, "x", 0, "master", True, importer._start)
    assert row is not None  # 前炮平四: the 前/后 form is read by the kernel too
    assert row["moves"].split()[6:] == ["e4f4", "i9h9", "b0c2"] and row["plies"] == 9
    assert row["comments"] == "a comment\nafter"
    assert same_row(row, reference(PLAIN, "x", 0, True)[0][1])
    cases = {
        "variation": PLAIN.replace("2. 炮八进二", "(2. 马八进七) 2. 炮八进二"),
        "NAG": PLAIN.replace("{a comment}", "$1"),
        "glyph": PLAIN.replace("马８进７ ", "马８进７!? "),
        "unterminated comment": PLAIN.replace("{after}", "{after"),
        "illegal move": PLAIN.replace("马八进七", "车九进九"),
        "no such piece": PLAIN.replace("马八进七", "前马进一"),
        "cut on a move number": PLAIN.replace("马八进七 1-0 {after}", "马八进七 6."),
        "cut before the result": PLAIN.replace(" 1-0 {after}", ""),
        "WXF": PLAIN.replace('[Result "1-0"]', '[Result "1-0"]\n[Format "WXF"]'),
        "SAN": '[Variant "xiangqi"]\n\n1. Che3 *\n',
        "bad FEN": '[FEN "rnbakabnr/9 w"]\n\n1. h2e2 *\n',
    }
    for why, text in cases.items():
        assert fast_row(text, "x", 0, "master", True, importer._start) is None, why
    # a text that stops without its result is only cut when it ends the file
    assert fast_row(cases["cut before the result"], "x", 0, "master", False, importer._start) is not None


def test_the_import_gives_the_same_database_both_ways(tmp_path, monkeypatch):
    from sqlalchemy import select

    from xiangqi.db import connect, import_paths
    from xiangqi.db.schema import boards, games, positions

    folder = [DATA / "records", DATA / "db"]  # with broken files
    out = []
    for fast in (True, False):
        monkeypatch.setattr(importer, "_FAST", fast)
        engine = connect(f"sqlite:///{tmp_path / f'{fast}.db'}")
        report = import_paths(engine, folder)
        with engine.connect() as conn:
            out.append((report.added, report.skipped, sorted(map(str, report.problems)),
                        conn.execute(select(games).order_by(games.c.id)).all(),
                        conn.execute(select(positions).order_by(*positions.c)).all(),
                        conn.execute(select(boards).order_by(*boards.c)).all()))
        engine.dispose()
    assert out[0][0] >= 10 and out[0][2]  # games stored, and problems reported
    assert out[0] == out[1]
