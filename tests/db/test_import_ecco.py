"""ECCO at import: the ``ecco_computed`` column is filled from the moves by our classifier, the file's
own tag stays in ``ecco``, and search by ECCO code or opening name finds games that carry no tag.

Data (tests/data/SOURCES.md): ``corpus/wxf-masters/bulk_games_uci.pgn`` (15 master games in ICCS, no
ECCO tag, no Opening tag) and the 15 CCPD files (Big5, ``[ECCO]`` tags on the master games, custom FEN
on the middlegame/endgame/problem files). The expected codes were read off the first moves by hand:

- game 1 ZHAO GuoRong - KE YongQing: 炮二平五 马8进7 马二进三 车9平8 兵七进一 卒7进1 马八进七 马2进3
  车一进一 (右横车) … 马七进六 (左马盘河): C11 中炮右横车对屏风马：红左马盘河.
- games 13 and 14 (HO Shing Kin - DONG JianXuong, WONG Steve - ZHANG RongQing): 马二进三 卒7进1
  兵七进一 马8进7 马八进七: A45 起马互进七兵局, the only two A45 games of the set.
- game 10 DING Wa Chong - SCHAEFER Nobert: 相三进五 炮8平6: A20 飞相对左士角炮.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from xiangqi.db import connect, count_games, import_paths, search_games
from xiangqi.db.importer import computed_ecco
from xiangqi.db.schema import games

DATA = Path(__file__).resolve().parents[1] / "data"
WXF = DATA / "corpus" / "wxf-masters" / "bulk_games_uci.pgn"
CCPD = DATA / "corpus" / "ccpd"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    engine = connect(str(tmp_path_factory.mktemp("ecco") / "games.db"))
    report = import_paths(engine, [WXF, CCPD])
    assert (report.added, report.skipped) == (30, 0)
    return engine


def _rows(engine):
    with engine.connect() as conn:
        return {r.red + " - " + r.black: r for r in conn.execute(
            select(games.c.red, games.c.black, games.c.ecco, games.c.ecco_computed, games.c.fen))}


def test_untagged_games_get_the_computed_code(db):
    rows = _rows(db)
    assert rows["ZHAO GuoRong - KE YongQing"].ecco is None
    assert rows["ZHAO GuoRong - KE YongQing"].ecco_computed == "C11"
    assert rows["DING Wa Chong - SCHAEFER Nobert"].ecco_computed == "A20"
    assert rows["HO Shing Kin - DONG JianXuong"].ecco_computed == "A45"
    # every one of the 15 untagged games from the standard start has a code
    wxf = [r for r in rows.values() if r.fen is None and r.ecco is None]
    assert len(wxf) == 15 and all(r.ecco_computed for r in wxf)


def test_tag_kept_beside_the_computed_code(db):
    rows = _rows(db)
    # 東北韓福德 - 上海胡榮華: [ECCO "D03"], 炮八平五 炮8平5 (顺炮) 车九进一 (横车) … the classifier agrees
    r = rows["東北韓福德 - 上海胡榮華"]
    assert (r.ecco, r.ecco_computed) == ("D03", "D03")
    # games from a custom position (CCPD middlegames, endgames, problems) get no computed code
    custom = [r for r in rows.values() if r.fen is not None]
    assert len(custom) == 4 and all(r.ecco_computed is None for r in custom)


def test_search_by_code_finds_untagged_games(db):
    hits = search_games(db, ecco="A45")
    assert sorted(h.red + " - " + h.black for h in hits) == ["HO Shing Kin - DONG JianXuong",
                                                              "WONG Steve - ZHANG RongQing"]
    assert all(h.ecco is None and h.ecco_computed == "A45" for h in hits)
    # prefix: A45 (2) + A20 (game 10) + the tagged A11 and A15 CCPD games
    assert count_games(db, ecco="A") == 5


def test_search_by_opening_name_finds_untagged_games(db):
    # no game has an Opening tag: the name is matched through the ECCO 2004 names of the codes
    hits = search_games(db, opening="起马互进七兵")
    assert [h.ecco_computed for h in hits] == ["A45", "A45"]
    assert count_games(db, opening="飞相对左士角炮") == 1
    assert count_games(db, opening="no such opening") == 0


def test_computed_ecco_of_moves():
    from xiangqi.core.board import Move

    assert computed_ecco([Move.from_iccs(m) for m in "h2e2 h9g7".split()]) == "B05"
    assert computed_ecco([]) == "A00"
