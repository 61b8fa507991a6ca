"""The games database: import (with broken files), dedupe, every search kind, keys, dates, the CLI.

Expected counts were worked out by hand from the files' tags and first moves (tests/data/SOURCES.md):
the 15 CCPD files are 15 different games; the three wxf-masters files hold the same 15 games in ICCS,
WXF and Chinese, except that in LIU DianZhong - LIU DaHua the ICCS file plays the front pawn at move 36
(``e5e6``) where the WXF and Chinese files play the rear one (``－Ｐ＋１``, ``后兵进一``), so they are
16 different games; xqbase's SAMPLE is one game in PGN and XQF; the UBB file is one game.

The shared database of most tests is built twice, in a new SQLite file and in a new PostgreSQL database
(``$XIANGQI_TEST_PG_URL``, see conftest.py): every import, dedupe and search test runs on both.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from xiangqi.cli import main
from xiangqi.core.board import STARTING_FEN, Board, Move
from xiangqi.db import (
    Filters,
    SearchError,
    connect,
    count_games,
    import_paths,
    key_of,
    mirror_key_of,
    normalise_date,
    search_games,
    similar_games,
    similarity,
)
from xiangqi.db.database import current_revision, head_revision
from xiangqi.db.keys import BLACK_TO_MOVE, iter_game_keys, to_signed

DATA = Path(__file__).resolve().parents[1] / "data"
CCPD = sorted((DATA / "corpus" / "ccpd").glob("*.pgn"))
WXF = sorted((DATA / "corpus" / "wxf-masters").glob("*.pgn"))
XQBASE = [DATA / "records" / "pgn" / "xqbase_SAMPLE_chinese_gbk.PGN",
          DATA / "records" / "xqf" / "xqbase_SAMPLE.XQF"]
UBB = [DATA / "records" / "dhtmlxq" / "cchess_test_ubb_mainline.txt"]
BROKEN_AND_COPIES = [DATA / "db"]  # a folder: walked recursively
SOURCES = [*CCPD, *WXF, *XQBASE, *UBB, *BROKEN_AND_COPIES]

AFTER_H2E2 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"  # 炮二平五
AFTER_B2E2 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/4C2C1/9/RNBAKABNR b - - 1 1"  # 炮八平五


@pytest.fixture(scope="module")
def db(backend):
    """(engine, report) of a new database holding SOURCES, on SQLite and on PostgreSQL (conftest.py)."""
    engine = backend.connect()
    report = import_paths(engine, SOURCES)
    return engine, report


# -- import -----------------------------------------------------------------------------------------

def test_import_counts(db):
    _engine, report = db
    # 15 CCPD + 16 wxf (45 games in 3 notations) + xqbase (PGN+XQF) + UBB + mixed_bad_and_good's good game
    assert report.added == 15 + 16 + 1 + 1 + 1
    # wxf: 29 copies; xqbase's XQF; the two copies of ccpd_03
    assert report.duplicates == 29 + 1 + 2
    assert report.skipped == 2  # the illegal move game, the bad FEN game
    assert report.files == len(CCPD) + len(WXF) + 2 + 1 + 7


def test_bad_files_and_games_are_reported_with_file_index_and_reason(db):
    _engine, report = db
    got = {(Path(p.source).name, p.index): p.reason for p in report.problems if p.skipped}
    assert set(got) == {("mixed_bad_and_good.pgn", 0), ("bad_fen.pgn", 0), ("not_a_record.pgn", None),
                        ("empty.pgn", None), ("cut_header.xqf", None)}
    assert "illegal move h0h5" in got[("mixed_bad_and_good.pgn", 0)]
    assert "2 kings" in got[("bad_fen.pgn", 0)]
    assert "header" in got[("cut_header.xqf", None)]
    assert "no game found" in got[("empty.pgn", None)]


def test_rerun_stores_nothing_twice(db, tmp_path):
    engine, _ = db
    before = count_games(engine)
    again = import_paths(engine, SOURCES)
    assert again.added == 0 and again.positions == 0
    assert again.duplicates == 34 + 32  # every stored game is now a duplicate too
    assert count_games(engine) == before == 34


def test_same_game_in_two_files_keeps_the_first_source(db):
    engine, _ = db
    hits = search_games(engine, red="韓福德")
    assert len(hits) == 1
    assert Path(hits[0].source).name == "ccpd_03.pgn"
    assert hits[0].event.startswith("042-")  # not the retagged copy's event


def test_stored_game_fields(db):
    engine, _ = db
    (hit,) = search_games(engine, red="張雄飛")
    assert (hit.date, hit.date_raw, hit.black, hit.result, hit.ecco, hit.site) == \
           ("1955-05", "1955.5", "楊官璘", "0-1", "C84", "北京")
    assert hit.plies == 76 and hit.source_index == 0 and hit.collection == "master"


def test_worker_processes_store_the_same_games(db, tmp_path):
    from sqlalchemy import select

    from xiangqi.db.schema import boards, games, positions

    engine, report = db
    parallel = connect(f"sqlite:///{tmp_path / 'jobs.db'}")
    again = import_paths(parallel, SOURCES, jobs=2)
    assert (again.added, again.duplicates, again.skipped) == (report.added, report.duplicates, report.skipped)
    assert sorted(map(str, again.problems)) == sorted(map(str, report.problems))

    def content(e):
        with e.connect() as conn:
            return (conn.execute(select(games.c.hash, games.c.source, games.c.moves)
                                 .order_by(games.c.id)).all(),
                    conn.execute(select(positions).order_by(positions.c.key, positions.c.game_id,
                                                            positions.c.ply)).all(),
                    conn.execute(select(boards).order_by(boards.c.key)).all())

    assert content(parallel) == content(engine)


def test_archive_members_are_read_without_unpacking(tmp_path):
    tar_path = tmp_path / "set.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        for f in CCPD[:4]:
            tar.add(f, arcname=f"Dataset/對局/大師對局/{f.name}")
        tar.add(CCPD[4], arcname=f"Dataset/殘局/{CCPD[4].name}")
        info = tarfile.TarInfo("Dataset/readme.md")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    report = import_paths(engine, [tar_path], glob="*大師對局*")
    assert (report.files, report.added, report.problems) == (4, 4, [])
    assert all("::Dataset/對局/大師對局/" in h.source for h in search_games(engine))


def test_migration_creates_the_schema_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    engine = connect(url, migrate=False)
    assert current_revision(engine) is None
    engine = connect(url)
    assert current_revision(engine) == head_revision() == "0005"
    connect(url)  # a second upgrade is a no-op
    assert current_revision(engine) == "0005"


def test_migration_0002_indexes_the_computed_ecco(tmp_path):
    """A database made at 0001 gets the index on ecco_computed, and a search by code uses it."""
    from sqlalchemy import inspect as sa_inspect
    from sqlalchemy import text as sa_text

    from xiangqi.db.database import upgrade

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = connect(url, migrate=False)
    upgrade(engine, "0001")
    assert "ix_games_ecco_computed" not in {i["name"] for i in sa_inspect(engine).get_indexes("games")}
    upgrade(engine)
    assert current_revision(engine) == "0005"
    assert "ix_games_ecco_computed" in {i["name"] for i in sa_inspect(engine).get_indexes("games")}
    with engine.connect() as conn:
        plan = " ".join(str(r[-1]) for r in conn.execute(sa_text(
            "EXPLAIN QUERY PLAN SELECT id FROM games WHERE ecco_computed = 'C30' OR ecco = 'C30'")))
    assert "ix_games_ecco_computed" in plan and "SCAN games" not in plan


# -- search by headers ------------------------------------------------------------------------------

@pytest.mark.parametrize(("filters", "expected"), [
    ({"player": "胡榮華"}, 5),                 # ccpd 03 (black), 04, 07, 09 (red), 14 (black)
    ({"red": "胡榮華"}, 3),
    ({"black": "胡榮華"}, 2),
    ({"player": "liu dahua"}, 4),            # case-insensitive: wxf games of LIU DaHua (3 + the variant)
    ({"event": "全國"}, 5),                   # ccpd 05, 09, 10, 11, 12
    ({"site": "北京"}, 2),                    # ccpd 06, 07
    ({"date_from": "1990", "date_to": "1999"}, 3),  # ccpd 09, 10 and xqbase's 1999.12.09
    ({"date_from": "2001", "date_to": "2001-12"}, 3),  # ccpd 02 (2001年), 11 (19/12/2001), 15 (01-2-6)
    ({"date_from": "2001-02-06", "date_to": "2001-02-06"}, 1),
    ({"result": "red"}, 7 + 1 + 1 + 1),       # ccpd 7, xqbase, UBB, mixed's good game
    ({"result": "0-1"}, 7),
    ({"result": "draw"}, 1),
    ({"result": "unknown"}, 16),             # the wxf games have no result
    ({"ecco": "A1"}, 2),                     # A11, A15
    ({"ecco": "E"}, 3 + 2),                  # tags E44, E46, E38; computed: wxf E01, E00
    ({"ecco": "C00-C99"}, 3 + 8 + 1),        # tags C84, C32, C04; computed: 8 wxf, mixed's good game C00
    ({"ecco": "d03"}, 1),
    ({"opening": "三步虎"}, 1),               # the UBB game's Opening tag
    ({"comment": "聂棋圣"}, 1),               # xqbase's annotated game
    ({"comment": "ROOKS"}, 1),               # mixed_bad_and_good's good game
    ({"player": "胡榮華", "result": "red"}, 3),  # 03 (he is black and loses), 07, 09 (he is red and wins)
    ({"collection": "master"}, 34),
    ({"player": "100%_"}, 0),               # LIKE wildcards are escaped
])
def test_header_search_counts(db, filters, expected):
    engine, _ = db
    assert count_games(engine, **filters) == expected
    assert len(search_games(engine, **filters)) == expected


def test_pagination(db):
    engine, _ = db
    everything = [h.id for h in search_games(engine)]
    assert len(everything) == 34 and everything == sorted(everything)
    pages = [h.id for off in range(0, 34, 10) for h in search_games(engine, limit=10, offset=off)]
    assert pages == everything


@pytest.mark.parametrize("bad", [{"result": "won"}, {"date_from": "1998/3"}, {"ecco": "F10"}])
def test_bad_filter_values_are_clear_errors(db, bad):
    engine, _ = db
    with pytest.raises(SearchError):
        search_games(engine, **bad)


# -- search by position -----------------------------------------------------------------------------

def test_position_search(db):
    engine, _ = db
    # 炮二平五 first: ccpd 06 08 10 11 13, 11 wxf games, the UBB game, mixed_bad_and_good's good game
    hits = search_games(engine, fen=AFTER_H2E2)
    assert len(hits) == 18
    assert all(h.ply == 1 and h.mirrored is False for h in hits)
    assert count_games(engine, fen=AFTER_H2E2, player="胡榮華") == 0
    # ccpd 01 02 14 15 and the xqbase handicap game start from their own FEN
    assert count_games(engine, fen=STARTING_FEN) == 11 + 16 + 1 + 1


def test_mirrored_position_search(db):
    engine, _ = db
    assert count_games(engine, fen=AFTER_B2E2) == 1  # ccpd_03 opens 炮八平五
    both = search_games(engine, fen=AFTER_H2E2, mirror=True)
    assert len(both) == 19
    (mirrored,) = [h for h in both if h.mirrored]
    assert mirrored.red == "東北韓福德" and mirrored.ply == 1
    assert count_games(engine, fen=AFTER_B2E2, mirror=True) == 19


def test_position_deep_in_a_game_reports_its_ply(db):
    engine, _ = db
    (hit,) = search_games(engine, red="張雄飛")
    board = Board()
    (row,) = [h for h in search_games(engine, red="張雄飛")]
    moves = _moves(engine, row.id)
    for m in moves[:40]:
        board.push(Move.from_iccs(m))
    found = search_games(engine, fen=board.fen())
    assert [(h.id, h.ply) for h in found] == [(hit.id, 40)]


def _moves(engine, game_id):
    from sqlalchemy import select

    from xiangqi.db.schema import games

    with engine.connect() as conn:
        return conn.execute(select(games.c.moves).where(games.c.id == game_id)).scalar_one().split()


def test_bad_fen_is_a_search_error(db):
    engine, _ = db
    with pytest.raises(SearchError, match="bad FEN"):
        search_games(engine, fen="rnbakabnr/9/9 w")


# -- similar positions ------------------------------------------------------------------------------

def test_similarity_values():
    # the start and the position after 炮二平五 share 31 of 32 pieces: 31 / 33
    assert similarity(STARTING_FEN, STARTING_FEN.replace(" w ", " w ")) == 1.0
    after = AFTER_H2E2.replace(" b ", " w ")
    assert similarity(STARTING_FEN, after) == pytest.approx(31 / 33)
    assert similarity(STARTING_FEN, AFTER_H2E2) == 0.0  # other side to move
    mirrored_after = AFTER_B2E2.replace(" b ", " w ")
    # cannons b2 e2 against e2 h2: 31 pieces shared, 33 in the union
    assert similarity(after, mirrored_after) == pytest.approx(31 / 33)
    assert similarity(after, mirrored_after, mirror=True) == 1.0


def test_similar_games_finds_the_game_with_one_piece_moved(db):
    engine, _ = db
    (hit,) = search_games(engine, red="張雄飛")
    board = Board()
    for m in _moves(engine, hit.id)[:30]:
        board.push(Move.from_iccs(m))
    n = sum(1 for c in board.squares if c)
    # move one piece to an empty square, material kept: similarity (n - 1) / (n + 1)
    empty = next(sq for sq in range(90) if board.squares[sq] == 0 and 36 <= sq < 54)
    rook = next(sq for sq in range(90) if board.squares[sq] in (5, -5))
    board.squares[empty], board.squares[rook] = board.squares[rook], 0
    board._kings = {True: board.squares.index(1), False: board.squares.index(-1)}
    fen = board.fen()
    best = similar_games(engine, fen, limit=3, min_similarity=0.5)
    assert best[0].id == hit.id
    assert best[0].ply == 30
    assert best[0].similarity == pytest.approx((n - 1) / (n + 1), abs=1e-6)
    assert all(a.similarity >= b.similarity for a, b in zip(best, best[1:], strict=False))
    # a header filter that excludes that game
    assert hit.id not in [h.id for h in similar_games(engine, fen, limit=3, min_similarity=0.5, red="許")]


def test_similar_games_with_mirror(db):
    engine, _ = db
    # the mirror of ccpd_03's position after ply 1 is the 炮二平五 position: 18 games at 1.0 plus ccpd_03
    plain = similar_games(engine, AFTER_B2E2, limit=None, min_similarity=0.999)
    assert [h.red for h in plain] == ["東北韓福德"]
    both = similar_games(engine, AFTER_B2E2, limit=None, min_similarity=0.999, mirror=True)
    assert len(both) == 19 and all(h.similarity == 1.0 for h in both)


def test_similar_games_checks_its_parameters(db):
    engine, _ = db
    with pytest.raises(SearchError):
        similar_games(engine, STARTING_FEN, min_similarity=1.5)
    with pytest.raises(SearchError):
        similar_games(engine, STARTING_FEN, spread=5)


# -- keys and dates ---------------------------------------------------------------------------------

def test_keys_are_stable_and_incremental():
    start = Board()
    # pinned: a stored key must never change between runs, machines or versions
    assert key_of(start) == KEY_OF_START
    assert mirror_key_of(start) == key_of(start)  # the start is symmetric
    board = Board()
    moves = ["h2e2", "h9g7", "h0g2", "i9h9", "e2e6", "g7e6"]  # with a capture
    incremental = [to_signed(k) for k, _ in iter_game_keys(start.squares, True,
                                                           [(Move.from_iccs(m).from_square,
                                                             Move.from_iccs(m).to_square) for m in moves])]
    full = [key_of(board)]
    for m in moves:
        board.push(Move.from_iccs(m))
        full.append(key_of(board))
    assert incremental == full
    assert len(set(full)) == len(full)
    assert all(-(1 << 63) <= k < (1 << 63) for k in full)
    black = Board(STARTING_FEN.replace(" w ", " b "))
    assert key_of(black) == to_signed((KEY_OF_START % (1 << 64)) ^ BLACK_TO_MOVE)


#: The key of the standard start position as first computed (SplitMix64 seeded with keys.SEED).
KEY_OF_START = -4656361692618544098


@pytest.mark.parametrize(("raw", "expected"), [
    ("1998.3.31", "1998-03-31"), ("1962年11月21日", "1962-11-21"), ("19521103", "1952-11-03"),
    ("1978-09-19", "1978-09-19"), ("2010-09-16 09:00", "2010-09-16"), ("15-6-2009", "2009-06-15"),
    ("10/31/1960", "1960-10-31"), ("19/12/2001", "2001-12-19"), ("83-7-24", "1983-07-24"),
    ("11/23/97", "1997-11-23"), ("1959年7月", "1959-07"), ("1955.5", "1955-05"), ("1954", "1954"),
    ("1983.*.*", "1983"), ("2001年", "2001"), ("1999年8月20日-25日", "1999-08-20"),
    ("20090620-13：00", "2009-06-20"), ("19990925上午", "1999-09-25"), ("2001。3。17", "2001-03-17"),
    ("1995 8 15", "1995-08-15"), ("2001·8·14", "2001-08-14"), ("01-2-6    ", "2001-02-06"),
    ("２００３．７．２７", "2003-07-27"), ("1999.2.30", "1999-02"), ("1999.13.1", "1999"),
    ("7.13", None), ("11月11日", None), ("003年12月3日", None), ("", None), ("   ", None),
    ("????.??.??", None),
    # short forms (dates.py rule 5): CCPD writes 26.5.01 / 26.05.01 for a 2001 event, 1-20-83 for 1983
    ("26.5.01", "2001-05-26"), ("26.05.01", "2001-05-26"), ("27.05.01", "2001-05-27"),
    ("1-20-83", "1983-01-20"), ("1-27--83", "1983-01-27"), ("97-11-19", "1997-11-19"),
    ("01-2-4", "2001-02-04"), ("02.6.22", "2002-06-22"), ("56。12。26", "1956-12-26"),
    ("31.12.99", "1999-12-31"), ("20/11/97", "1997-11-20"), ("1-2-3", None),
])
def test_date_normalisation(raw, expected):
    assert normalise_date(raw) == expected


# -- CLI --------------------------------------------------------------------------------------------

def test_cli_import_and_search(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["db", "import", "--db", url, "-q", *map(str, CCPD), str(DATA / "db")]) == 0
    out = capsys.readouterr()
    assert "16 added" in out.out and "cut_header.xqf: skipped" in out.err
    assert main(["db", "search", "--db", url, "--player", "胡榮華"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["id", "date", "red", "black"] and out[-1] == "5 games"
    assert main(["db", "search", "--db", url, "--fen", AFTER_H2E2, "--mirror", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 7  # ccpd 06 08 10 11 13, mixed_bad_and_good's good game and mirrored 03
    assert {"red", "black", "event", "date", "result", "ecco", "ply", "mirrored"} <= set(rows[0])
    assert [r["ply"] for r in rows] == [1] * 7 and sum(r["mirrored"] for r in rows) == 1
    assert main(["db", "search", "--db", url, "--fen", AFTER_H2E2, "--json", "--limit", "2"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    # a limited table says how many matched in all (issue 31: "3 games" when 836 matched)
    assert main(["db", "search", "--db", url, "--player", "胡榮華", "--limit", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "showing 2 of 5 games"
    assert main(["db", "search", "--db", url, "--player", "胡榮華", "--limit", "2", "--offset", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "showing 4–5 of 5 games"
    assert main(["db", "search", "--db", url, "--similar", AFTER_H2E2, "--limit", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 games shown (--limit 1, --offset 0)"
    assert main(["db", "search", "--db", url, "--result", "won"]) == 2
    assert "result 'won'" in capsys.readouterr().err
    assert main(["db", "info", "--db", url]) == 0
    assert "games     16" in capsys.readouterr().out


def test_filters_object_and_keywords_are_the_same(db):
    engine, _ = db
    assert search_games(engine, Filters(player="胡榮華")) == search_games(engine, player="胡榮華")


def test_incremental_index_matches_the_direct_computation():
    from xiangqi.db.keys import iter_game_index, material_signature, pack_pieces

    board = Board()
    moves = [Move.from_iccs(m) for m in ("h2e2", "h9g7", "e2e6", "g7e6", "b2e2", "b9c7", "e2e6", "c7e6")]
    pairs = [(m.from_square, m.to_square) for m in moves]
    got = [(k, sig, pack()) for k, sig, pack in iter_game_index(board.squares, True, pairs)]
    want = []
    for i in range(len(moves) + 1):
        want.append((key_of(board) % (1 << 64), material_signature(board.squares, board.turn),
                     pack_pieces(board.squares)))
        if i < len(moves):
            board.push(moves[i])
    assert got == want
    assert len({sig for _, sig, _ in got}) > 2  # captures and the side to move change the signature


@pytest.mark.parametrize("mirror", [False, True])
def test_position_pages_are_slices_of_the_whole_answer(db, mirror):
    engine, _ = db
    whole = search_games(engine, fen=AFTER_H2E2, mirror=mirror)
    for offset in (0, 3, 10, 17):
        page = search_games(engine, fen=AFTER_H2E2, mirror=mirror, limit=4, offset=offset)
        assert page == whole[offset:offset + 4]


def test_similar_search_sees_games_imported_after_it_ran(tmp_path):
    engine = connect(f"sqlite:///{tmp_path / 'c.db'}")
    import_paths(engine, CCPD[:3])
    later = DATA / "records" / "dhtmlxq" / "cchess_test_ubb_mainline.txt"
    board = Board()
    from xiangqi.core.records import read_records

    for m in read_records(later)[0].mainline_moves()[:24]:
        board.push(m)
    before = similar_games(engine, board.fen(), limit=None, min_similarity=0.95)
    assert before == []  # none of the first three CCPD games comes close (and the cache now holds them)
    import_paths(engine, [later])
    after = similar_games(engine, board.fen(), limit=None, min_similarity=0.95)
    assert [(h.red, h.ply, h.similarity) for h in after] == [("成都 孟辰", 24, 1.0)]
