"""Puzzles: the checks that make a position a puzzle, the themes, the import run and mining.

Positions are constructed here (no corpus file); the engine checks run at the module's depth."""

from __future__ import annotations

import json

import pytest

from xiangqi.core.board import STARTING_FEN, Board
from xiangqi.study import puzzles as P

# 闷宫: after 炮 a5-a9 the black king is checked by the cannon over its advisor d9, and e8 (horse),
# d9, f9 (advisors) are its own pieces; the black cannon d8 blocks the horse's way to c9.
MEN_GONG = "3aka3/3cn4/9/9/C8/9/9/9/4A4/5K3 w - - 0 1"
# 抽将: the horse leaves the e-file with a discovered check by the rook, then takes the rook on b8.
CHOU = "4k4/1r7/9/9/4N4/9/9/4R4/9/3K5 w - - 0 1"
TWO_ROOKS = "4k4/9/9/9/9/9/9/9/R7R/3K5 w - - 0 1"


@pytest.fixture(scope="module")
def engine():
    return P._engine()


def test_theme_men_gong_and_mate_in_one():
    b = Board(MEN_GONG)
    b.push_iccs("a5a9")
    assert b.is_checkmate()
    assert P.themes_of(MEN_GONG, ["a5a9"], "mate", 1) == ["mateIn1", "menGong"]


def test_theme_not_men_gong_when_a_palace_square_is_free():
    # f9 empty: still mate (f9 is on the cannon's line too), but the king is not shut in by its own men
    fen = "3ak4/3cn4/9/9/C8/9/9/9/4A4/5K3 w - - 0 1"
    b = Board(fen)
    b.push_iccs("a5a9")
    assert b.is_checkmate()
    assert "menGong" not in P.themes_of(fen, ["a5a9"], "mate", 1)


def test_theme_chou_jiang_and_win_rook():
    assert P.themes_of(CHOU, ["e5d7", "e9f9", "d7b8"], "material", None) == ["chouJiang", "winRook"]
    # a direct check by the moved piece followed by a capture is no 抽将
    fen = "4k4/1r7/9/9/9/9/9/9/9/R2K5 w - - 0 1"
    assert P.themes_of(fen, ["a0a9", "e9e8", "a9b9"], "material", None) == []


def test_material_points():
    assert P.material_points(Board(STARTING_FEN), True) == 0
    assert P.material_points(Board(CHOU), True) == 9 + 4 - 9


def test_goal_text():
    assert P.goal_text("mate", 3, True) == "红先 · 三步杀"
    assert P.goal_text("win", None, False) == "黑先胜"
    assert P.goal_text("mate", 2, True, "en") == "Red to move: mate in 2"


def test_verified_mate_in_one(engine):
    v = P.verify(MEN_GONG, ["a5a9"], engine=engine)
    assert isinstance(v, P.Puzzle), v
    assert (v.goal, v.mate, v.solution, v.themes) == ("mate", 1, ["a5a9"], ["mateIn1", "menGong"])
    assert v.check["win"] == 100.0 and v.check["second_win"] <= P.MATE1_SECOND_MAX


def test_rejected_when_not_winning(engine):
    v = P.verify(STARTING_FEN, ["h2e2"], engine=engine)
    assert isinstance(v, P.Rejected) and v.reason == "not_winning"


def test_rejected_with_two_winning_first_moves(engine):
    v = P.verify(TWO_ROOKS, ["a1a8"], engine=engine)
    assert isinstance(v, P.Rejected) and v.reason == "not_unique"
    d = json.loads(v.detail)
    assert d["win"] - d["second_win"] < P.MARGIN


def test_rejected_when_the_record_plays_another_move(engine):
    v = P.verify(MEN_GONG, ["a5a6"], engine=engine)
    assert isinstance(v, P.Rejected) and v.reason == "other_move"


def test_rejected_bad_record(engine):
    v = P.verify(MEN_GONG, ["a5b7"], engine=engine)
    assert isinstance(v, P.Rejected) and v.reason == "bad_record"


def test_mine_a_constructed_game(engine):
    # Red to move is not winning (the horse can still reach c9); Black blunders with 炮 d5-d8, which
    # shuts its own horse in; then 炮 a6-a9 is 闷宫, the only winning move.
    fen = "3aka3/4n4/9/9/C2c5/9/9/9/4A4/5K3 w - - 0 1"
    moves = ["a5a6", "d5d8", "a6a9"]
    b = Board(fen)
    for m in moves:
        b.push_iccs(m)
    assert b.is_checkmate()
    v = P.mine_game(fen, moves, "1-0", engine=engine, pid="g1")
    assert isinstance(v, P.Puzzle), v
    assert v.fen.split()[0] == "3aka3/3cn4/9/C8/9/9/9/9/4A4/5K3"
    assert (v.goal, v.mate, v.solution, v.ref["ply"]) == ("mate", 1, ["a6a9"], 2)
    assert "menGong" in v.themes
    assert P.mine_game(fen, moves, "1/2-1/2", engine=engine).reason == "no_winner"


def test_import_run_resumes_and_counts(tmp_path, engine, monkeypatch):
    calls = []
    rows = [("殺局_殺法_練習題", "00000001.pgn", MEN_GONG, "a5a9", "1-0"),
            ("殘局", "00000002.pgn", TWO_ROOKS, "a1a8", "1-0"),
            ("殘局", "00000003.pgn", MEN_GONG, "a5a9", "0-1")]

    def fake_iter(_source):
        for coll, name, fen, move, result in rows:
            calls.append(name)
            text = f'[Game "Chinese Chess"]\n[Result "{result}"]\n[FEN "{fen}"]\n\n1. {move}\n'
            yield coll, name, text.encode()

    monkeypatch.setattr(P, "iter_collection", fake_iter)
    monkeypatch.setattr(P, "_engine", lambda: engine)
    run = P.ImportRun(tmp_path / "state.jsonl")
    assert run.run("x", limit=1, out=tmp_path / "p.jsonl") == 1
    run2 = P.ImportRun(tmp_path / "state.jsonl")  # a new process: the first verdict is kept
    assert list(run2.done) == ["ccpd-mate-00000001"]
    assert run2.run("x", out=tmp_path / "p.jsonl") == 2
    assert run2.counts() == {"verified": 1, "not_unique": 1, "no_winner": 1}
    ps = P.load_puzzles(tmp_path / "p.jsonl")
    assert [p.id for p in ps] == ["ccpd-mate-00000001"] and ps[0].source == "ccpd/殺局_殺法_練習題"


def test_shipped_file_is_valid():
    ps = P.load_puzzles()
    assert ps, "the package ships puzzles"
    for p in ps[:200]:
        b = Board(p.fen)
        for m in p.solution:
            b.push_iccs(m)
        assert len(p.solution) % 2 == 1
        if p.goal == "mate":
            assert b.is_checkmate() or b.is_stalemate()
            assert p.mate == (len(p.solution) + 1) // 2


def test_iter_collection_reads_the_archive_and_the_folder(tmp_path):
    import tarfile

    text = f'[Game "Chinese Chess"]\n[Result "1-0"]\n[FEN "{MEN_GONG}"]\n\n1. 炮九進四\n'.encode("big5")
    root = tmp_path / "Dataset"
    for coll, name in (("殘局", "00000002.pgn"), ("殺局_殺法_練習題", "00000001.pgn"), ("大師對局", "x.pgn")):
        (root / coll).mkdir(parents=True)
        (root / coll / name).write_bytes(text)
    arc = tmp_path / "ccpd.tar.gz"
    with tarfile.open(arc, "w:gz") as tar:
        tar.add(root, arcname="Dataset")
    want = [("殺局_殺法_練習題", "00000001.pgn", text), ("殘局", "00000002.pgn", text)]
    assert list(P.iter_collection(arc)) == want
    assert list(P.iter_collection(root)) == want
    assert P.record_id("殘局", "00000002.pgn") == "ccpd-end-00000002"
