"""The opening book: build from a games database, the file format, probes (mirrored positions merged),
the levels' choice, the shipped book, and OwnBook/BookFile in the UCI/UCCI protocol.

The tiny database is written here by hand (ICCS PGN), so every count below can be checked on paper:

====  ==========================  =======  ==========================================================
game  moves                       result   note
====  ==========================  =======  ==========================================================
G1    h2e2 h9g7 h0g2              1-0      炮二平五 马8进7 马二进三
G2    h2e2 h9g7 b0c2              0-1      the same two first moves, another third
G3    h2e2 b9c7 h0g2              1/2-1/2  炮二平五 马2进3
G4    b2e2 b9c7 b0c2              1-0      炮八平五 马2进3 马八进七: G1's first two moves mirrored
G5    c3c4 g6g5                   *        兵七进一 卒7进1, no result
====  ==========================  =======  ==========================================================

Start position (its own mirror: no merge): h2e2 3 games (G1-G3), Red scored 1 + 0 + ½ = 1.5 of 3;
b2e2 1 game (G4) 1 of 1; c3c4 1 game, no scored game. After 炮二平五 (Black to move), merged with its
mirror after 炮八平五 (G4, whose 马2进3 b9c7 mirrors to h9g7): h9g7 3 games (G1, G2, G4), Black scored
0 + 1 + 0 = 1 of 3; b9c7 1 game (G3), ½. Probing after 炮八平五 gives the same counts mirrored back.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from tests.engine.test_protocol import Conversation

from xiangqi.core.board import Board, Move
from xiangqi.db import connect, import_paths
from xiangqi.db.book import build_book
from xiangqi.engine import book as books
from xiangqi.engine.book import OpeningBook, position_keys, wilson_lower

GAMES = [("h2e2 h9g7 h0g2", "1-0"), ("h2e2 h9g7 b0c2", "0-1"), ("h2e2 b9c7 h0g2", "1/2-1/2"),
         ("b2e2 b9c7 b0c2", "1-0"), ("c3c4 g6g5", "*")]


def board_after(moves: str) -> Board:
    b = Board()
    for m in moves.split():
        b.push(Move.from_iccs(m))
    return b


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(database engine, folder) of the five hand-written games."""
    d = tmp_path_factory.mktemp("book")
    text = "".join(f'[Event "G{i}"]\n[Format "ICCS"]\n[Result "{res}"]\n\n{moves} {res}\n\n'
                   for i, (moves, res) in enumerate(GAMES, 1))
    (d / "tiny.pgn").write_text(text, encoding="utf-8")
    engine = connect(str(d / "games.db"))
    report = import_paths(engine, [d / "tiny.pgn"])
    assert (report.added, report.skipped) == (5, 0)
    return engine, d


@pytest.fixture(scope="module")
def tiny_book(tiny):
    engine, d = tiny
    stats = build_book(engine, d / "tiny.xqbook", min_games=1, max_ply=30, source="hand-written")
    assert (stats.games, stats.plies) == (5, 3 + 3 + 3 + 3 + 2)
    return OpeningBook(d / "tiny.xqbook")


def by_move(found):
    return {m.iccs: (m.count, m.scored, m.score) for m in found}


def test_counts_at_the_start_by_hand(tiny_book):
    assert by_move(tiny_book.probe(Board())) == {"h2e2": (3, 3, 0.5), "b2e2": (1, 1, 1.0),
                                                 "c3c4": (1, 0, None)}
    # most played first
    assert [m.iccs for m in tiny_book.probe(Board())][0] == "h2e2"


def test_mirrored_positions_are_merged(tiny_book):
    after_h = by_move(tiny_book.probe(board_after("h2e2")))
    assert after_h["h9g7"][:2] == (3, 3) and after_h["h9g7"][2] == pytest.approx(1 / 3)
    assert after_h["b9c7"] == (1, 1, 0.5)
    after_b = by_move(tiny_book.probe(board_after("b2e2")))  # the mirror: the same counts, mirrored moves
    assert after_b["b9c7"][:2] == (3, 3) and after_b["h9g7"] == (1, 1, 0.5)
    # third moves: after 炮二平五 马8进7 Red played 马二进三 (G1) and 马八进七 (G2), and G4's 马八进七 after
    # 炮八平五 马2进3 mirrors to 马二进三
    third = by_move(tiny_book.probe(board_after("h2e2 h9g7")))
    assert third == {"h0g2": (2, 2, 1.0), "b0c2": (1, 1, 0.0)}
    assert tiny_book.probe(board_after("c3c4 g6g5")) == []  # the last position of G5: no next move
    assert tiny_book.probe(board_after("h2e2 h9g7 h0g2")) == []  # out of book


def test_min_games_and_max_ply(tiny):
    engine, d = tiny
    stats = build_book(engine, d / "min2.xqbook", min_games=2)
    b = OpeningBook(d / "min2.xqbook")
    assert by_move(b.probe(Board())) == {"h2e2": (3, 3, 0.5)}
    assert [m.iccs for m in b.probe(board_after("h2e2"))] == ["h9g7"]
    assert [m.iccs for m in b.probe(board_after("h2e2 h9g7"))] == ["h0g2"]
    assert (stats.positions, stats.entries) == (3, 3)
    build_book(engine, d / "ply1.xqbook", min_games=1, max_ply=1)
    b1 = OpeningBook(d / "ply1.xqbook")
    assert len(b1) == 3 and b1.probe(board_after("h2e2")) == []
    with pytest.raises(ValueError, match="at least 1"):
        build_book(engine, d / "bad.xqbook", min_games=0)


def test_file_format(tiny_book):
    raw = tiny_book.path.read_bytes()
    assert raw[:8] == b"XQBOOK01"
    n = int.from_bytes(raw[8:12], "little")
    header = json.loads(raw[12:12 + n])
    assert header["version"] == 1 and header["entries"] == len(tiny_book)
    assert header["source"] == "hand-written"
    positions = header["positions"]
    index_at = (12 + n + len(tiny_book) * 22 + 15) // 16 * 16
    assert (12 + n) % 16 == 0 and len(raw) == index_at + positions * 8 + (positions + 1) * 4
    assert isinstance(tiny_book.table, np.memmap) and tiny_book.table.dtype.itemsize == 22
    table = np.asarray(tiny_book.table)
    assert np.all(np.diff(table["key"].astype(object)) >= 0)  # sorted by key (then move)
    # the index: distinct keys, contiguous (searchsorted copies a strided column), and row starts
    keys = tiny_book.keys
    assert isinstance(keys, np.memmap) and keys.flags["C_CONTIGUOUS"] and np.all(keys[1:] > keys[:-1])
    assert list(keys) == sorted(set(table["key"].tolist()))
    starts = tiny_book.starts
    assert starts[0] == 0 and starts[-1] == len(tiny_book)
    assert all(set(table["key"][starts[i]:starts[i + 1]]) == {keys[i]} for i in range(positions))


def test_keys_are_the_position_index_keys(tiny):
    from xiangqi.db.keys import key_of, mirror_key_of, to_signed

    b = Board()
    for m in "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 g6g5 h0h6 h7i7 h6g6 i7i8".split():
        b.push(Move.from_iccs(m))
        k, mk = position_keys(b.squares, b.turn)
        assert (to_signed(k), to_signed(mk)) == (key_of(b), mirror_key_of(b))


def test_bad_files(tmp_path):
    (tmp_path / "x.xqbook").write_bytes(b"not a book at all")
    with pytest.raises(books.BookError, match="not an opening book"):
        OpeningBook(tmp_path / "x.xqbook")
    with pytest.raises(books.BookError, match="no opening book"):
        books.default_book(tmp_path / "missing.xqbook")


def test_wilson_lower_bound():
    # p = 0.5, n = 100, z = 1.96: (0.519208 - 0.099864) / 1.038416
    assert wilson_lower(0.5, 100) == pytest.approx(0.40383, abs=1e-5)  # the textbook 0.4038
    assert wilson_lower(1.0, 3) == pytest.approx(0.438494, abs=1e-6)  # 3 / (3 + 1.96²)
    assert wilson_lower(0.7, 0) == 0.0
    assert wilson_lower(0.55, 5000) > wilson_lower(0.7, 20)  # many games at 55% beat a few at 70%


def test_levels_choose_with_seeded_randomness(tiny_book):
    found = tiny_book.probe(Board())
    master = books.candidates(found, "master", 0)
    # 大师: share >= 5% keeps all three; weights: h2e2 0.5 of 3 -> 0.1253, b2e2 1 of 1 -> 0.2065,
    # c3c4 none scored -> 0; chance ∝ count * exp(30 * (weight - best))
    probs = {m.iccs: p for m, p in master}
    assert max(probs, key=probs.get) == "b2e2" and probs["c3c4"] < 0.002  # 1 * exp(-30 * 0.2065)
    beginner = dict((m.iccs, p) for m, p in books.candidates(found, "beginner", 0))
    assert beginner["h2e2"] == pytest.approx(3 ** 0.5 / (3 ** 0.5 + 1 + 1))  # count ** (1/2), no score term
    assert books.candidates(found, "beginner", 6) == []  # 初级 leaves the book after 6 plies
    a = [books.choose(found, "beginner", 0, random.Random(7)).iccs for _ in range(1)]
    b = [books.choose(found, "beginner", 0, random.Random(7)).iccs for _ in range(1)]
    assert a == b  # repeatable with a seed
    rng = random.Random(1)
    seen = {books.choose(found, "beginner", 0, rng).iccs for _ in range(200)}
    assert seen == {"h2e2", "b2e2", "c3c4"}
    assert books.best(found).iccs == "b2e2"  # the best weight
    assert books.best(found, min_count=2).iccs == "h2e2"


def test_engine_player_and_session_mark_book_moves(tiny_book):
    from xiangqi.app.opponents.players import EnginePlayer, book_choices
    from xiangqi.app.play.session import GameSession

    player = EnginePlayer(book=tiny_book, book_seed=3)
    picks = {player.book_move(Board(), "beginner").iccs() for _ in range(100)}
    assert picks == {"h2e2", "b2e2", "c3c4"}  # the lower levels vary
    assert player.choose(board_after("h2e2"), "master").iccs() in ("h9g7", "b9c7")  # from the book, no search
    assert book_choices(board_after("h2e2 h9g7 h0g2"), "master", tiny_book) == []  # out of book: it searches
    assert EnginePlayer(book=None).book_move(Board(), "master") is None

    # the game marks the computer's book moves: the player remembers what it took from the book
    s = GameSession(red="engine", black="human", level="master")
    mv = player.choose(s.snapshot().board, "master")
    assert mv.iccs() in ("h2e2", "b2e2", "c3c4")
    s.play(mv)              # the computer's move, from the book
    s.play("h7g7")          # the human's: never marked
    s.play("a3a4")          # a computer move that did not come from the book (e.g. a search)
    st = s.state()
    assert [m.get("book", False) for m in st["moves"]] == [True, False, False]
    assert st["moves"][0]["book"] is True
    assert set(st["moves"][1]) == {"iccs", "chinese", "capture", "check", "wxf"}
    # kept in the saved record, so a restored game keeps its marks
    rec = s.to_record()
    assert rec["book"] == [0]
    again = GameSession.from_record(json.loads(json.dumps(rec)))
    assert [m.book for m in again.moves] == [True, False, False]
    assert "book" not in GameSession(red="human", black="human").to_record()


def test_the_player_leaves_the_book_and_searches(tiny_book, monkeypatch):
    import xiangqi.engine
    from xiangqi.app.opponents.players import EnginePlayer

    monkeypatch.setattr(xiangqi.engine, "is_ready", lambda: True)  # the kernels "compiled": no pysearch
    searched = []

    class FakeEngine:
        def play(self, board, level):
            searched.append(board.fen())
            return type("R", (), {"move": Move.from_iccs("a3a4")})()

    p = EnginePlayer(book=tiny_book, book_seed=1)
    p._engine = FakeEngine()
    assert p.choose(board_after("h2e2"), "master").iccs() in ("h9g7", "b9c7") and searched == []
    out = board_after("h2e2 h9g7 h0g2")  # not in the book
    assert p.choose(out, "master") == Move.from_iccs("a3a4") and searched == [out.fen()]
    # 初级 leaves the book after 6 plies even where the book goes on: the same start position, told it
    # is ply 6 by its move counter, is searched
    late = Board("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 4")
    assert p.choose(late, "beginner") == Move.from_iccs("a3a4") and len(searched) == 2
    assert p.choose(late, "master").iccs() in ("h2e2", "b2e2", "c3c4") and len(searched) == 2
    # a damaged shipped book: the level searches (the problem is logged), the game goes on
    def broken(path=None):
        raise books.BookError("openings.xqbook: cut short")

    monkeypatch.setattr(books, "default_book", broken)
    q = EnginePlayer(book="default")
    q._engine = FakeEngine()
    assert q.choose(Board(), "master") == Move.from_iccs("a3a4") and len(searched) == 3


def test_the_games_computer_opens_from_the_shipped_book(tmp_path):
    """The server's own player uses the shipped book: the computer's first moves come at once, without
    the engine (no warm-up here: a search would wait for the kernels), and are marked."""
    import time

    from tests.webclient import api_client

    from xiangqi.web.server import create_app

    with api_client(create_app(tmp_path, warmup=False, engine_delay_s=0)) as c:
        r = c.post("/api/game/new", json={"red": "engine", "black": "human", "level": "master"})
        assert r.status_code == 200
        deadline = time.monotonic() + 60
        st = c.get("/api/game").json()
        while not st["moves"] and time.monotonic() < deadline:
            time.sleep(0.05)
            st = c.get("/api/game").json()
        assert st["moves"][0]["iccs"] in ("h2e2", "c3c4", "g0e2") and st["moves"][0]["book"] is True
        reply = "h9g7" if st["moves"][0]["iccs"] != "g0e2" else "h7e7"
        st = c.post("/api/game/move", json={"move": reply}).json()
        assert "book" not in st["moves"][1]
        while len(st["moves"]) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
            st = c.get("/api/game").json()
        assert st["moves"][2]["book"] is True and st["opening"] is not None


# -- the UCI/UCCI options ------------------------------------------------------------------------------

def test_uci_ownbook_on_and_off(tiny_book):
    c = Conversation()
    c.send("uci")
    assert "option name OwnBook type check default false" in c.out
    assert "option name BookFile type string default <empty>" in c.out
    c.send(f"setoption name BookFile value {tiny_book.path}", "position startpos moves h2e2")
    n = len(c.out)
    c.send("go depth 2")
    first = c.wait_for("bestmove", start=n)
    assert first.startswith("bestmove a6a5 ")  # book off (the default): the fake engine's search answers
    assert [k for k, _ in c.engine.calls].count("search") == 1
    c.send("setoption name OwnBook value true")
    n = len(c.out)
    c.send("go depth 2")
    assert c.wait_for("bestmove", start=n) == "bestmove h9g7"
    book_line = next(x for x in c.out[n:] if x.startswith("info string book"))
    # h9g7: 3 games, Black scored 1 of 3 -> weight 0.0615; b9c7: ½ of 1 -> 0.0546; so h9g7
    assert book_line == "info string book h9g7 games 3 score 33.3% weight 0.061 (2 book moves)"
    assert [k for k, _ in c.engine.calls].count("search") == 1  # no search for the book move
    # out of the book: it searches normally
    c.send("position startpos moves h2e2 h9g7 h0g2")
    n = len(c.out)
    c.send("go depth 2")
    assert c.wait_for("bestmove", start=n).startswith("bestmove a6a5 ")
    assert [k for k, _ in c.engine.calls].count("search") == 2
    assert not any(x.startswith("info string book") for x in c.out[n:])
    c.send("setoption name OwnBook value false", "position startpos moves h2e2")
    n = len(c.out)
    c.send("go depth 2")
    assert c.wait_for("bestmove", start=n).startswith("bestmove a6a5 ")
    assert c.errors() == []


def test_ucci_usebook_and_a_bad_book_file(tiny_book, tmp_path):
    c = Conversation()
    c.send("ucci")
    assert "option usebook type check default false" in c.out
    c.send(f"setoption bookfiles {tiny_book.path}", "setoption usebook true", "position startpos")
    n = len(c.out)
    c.send("go depth 2")
    assert c.wait_for("bestmove", start=n) == "bestmove b2e2"  # the best weight at the start
    (tmp_path / "bad.xqbook").write_bytes(b"garbage")
    c.send(f"setoption bookfiles {tmp_path / 'bad.xqbook'}")
    assert any("BookFile" in e and "not an opening book" in e for e in c.errors())
    n = len(c.out)
    c.send("go depth 2")  # the good book is still in force
    assert c.wait_for("bestmove", start=n) == "bestmove b2e2"


# -- the book shipped in the package -------------------------------------------------------------------

def test_shipped_book_start_position():
    book = books.default_book()
    assert book is not None, "the shipped book is missing: xiangqi book build (docs/BOOK.md)"
    assert book.path.stat().st_size < 5_000_000
    h = book.header
    assert h["min_games"] == 3 and h["max_ply"] == 30 and "CCPD" in h["source"]
    found = book.probe(Board())
    top = [m.iccs for m in found[:3]]
    assert "h2e2" in top
    h2e2 = next(m for m in found if m.iccs == "h2e2")
    assert h2e2.count == SHIPPED_H2E2_GAMES
    # 炮二平五 and 炮八平五 are the same opening on two wings: together the most played first move
    b2e2 = next(m for m in found if m.iccs == "b2e2")
    assert h2e2.count + b2e2.count > max(m.count for m in found if m.iccs not in ("h2e2", "b2e2"))
    # after 炮二平五 马8进7 the mirrored games (炮八平五 马2进3) are counted in
    after = book.probe(board_after("h2e2 h9g7"))
    assert after and after[0].iccs in ("h0g2", "i0h0", "b0c2")


def test_shipped_book_levels_start_differently():
    book = books.default_book()
    found = book.probe(Board())
    # 大师: the three moves played in >= 5% of the games, pulled to the best weight (兵七进一 0.600):
    # chance ∝ count * exp(30 * (weight - 0.600))
    master = {m.iccs: p for m, p in books.candidates(found, "master", 0)}
    assert set(master) == {"h2e2", "c3c4", "g0e2"}
    assert master["c3c4"] == pytest.approx(0.603, abs=0.002)
    assert master["h2e2"] == pytest.approx(0.328, abs=0.002)
    assert books.best(found).iccs == "c3c4"  # the UCI OwnBook answer: the best weight
    beginner = books.candidates(found, "beginner", 0)
    assert len(beginner) == len(found) == 19 and max(p for _, p in beginner) < 0.3
    rng = random.Random(2026)
    firsts = {lv: {books.choose(found, lv, 0, rng).iccs for _ in range(300)} for lv in books.LEVEL_STYLES}
    assert firsts["master"] == {"h2e2", "c3c4", "g0e2"} and len(firsts["beginner"]) >= 10


def test_book_cli(tiny_book, capsys):
    from xiangqi.cli import main
    from xiangqi.db import book as db_book
    from xiangqi.db import book_cli

    assert (book_cli.DEFAULT_MIN_GAMES, book_cli.DEFAULT_MAX_PLY) == (db_book.DEFAULT_MIN_GAMES,
                                                                      db_book.DEFAULT_MAX_PLY)

    assert main(["book", "probe", "--book", str(tiny_book.path), "h2e2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("h9g7  马8进7") and "3 games ( 75.0%)" in out[0]
    assert "score  33.3% of 3" in out[0]
    assert main(["book", "probe", "--book", str(tiny_book.path), "--json", "h2e2", "b9c7"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rows == [{"move": "h0g2", "count": 1, "scored": 1, "score": 0.5, "weight": 0.0546,
                     "chinese": "马二进三"}]
    assert main(["book", "probe", "--book", str(tiny_book.path), "a0a1"]) == 0
    assert capsys.readouterr().out.strip() == "(out of book)"
    assert main(["book", "probe", "--book", str(tiny_book.path), "a0a5"]) == 2


#: 炮二平五's games at the start in the shipped book (build of 2026-12-01, docs/BOOK.md).
SHIPPED_H2E2_GAMES = 16857
