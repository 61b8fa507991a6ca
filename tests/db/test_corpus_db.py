"""The whole corpus into the games database (slow): CCPD's master games and wxf-masters.

Credits: CCPD — Yu-Han Tseng and Bo-Nian Chen (2026), Chinese Chess Practical Dataset (CCPD),
CC BY 4.0; wxf-masters — maksimKorzh/wukong-xiangqi (games from wxf.ca), MIT.

The counts are what the import found (CCPD's README speaks of ~53.7k files holding ~27.9k games);
the four skipped CCPD games were looked at: three files hold headers and no move, and one has
士６進５ at ply 70 where that advisor move would leave the black king facing the red king.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from xiangqi.db import connect, count_games, import_paths, search_games

SHARED = Path(__file__).resolve().parents[3] / "shared" / "corpus"
TAR = SHARED / "ccpd" / "CCPD-Dataset-original-big5.tar.gz"
needs_shared = pytest.mark.skipif(not TAR.is_file(), reason=f"the shared corpus is not at {SHARED}")

AFTER_H2E2 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"  # 炮二平五


@pytest.mark.slow
@needs_shared
def test_whole_corpus(tmp_path):
    engine = connect(f"sqlite:///{tmp_path / 'games.db'}")
    ccpd = import_paths(engine, [TAR], glob="*大師對局*", jobs=2)
    counts = (ccpd.files, ccpd.games, ccpd.added, ccpd.duplicates, ccpd.skipped)
    assert counts == (53685, 53685, 27759, 25922, 4)
    skipped = sorted((Path(p.source.split("::")[1]).name, p.reason.split(":")[0]) for p in ccpd.problems)
    assert skipped == [("00000753.pgn", "ply 70 (main line)"), ("00001531.pgn", "no moves"),
                       ("00002674.pgn", "no moves"), ("00003259.pgn", "no moves")]
    wxf = import_paths(engine, [SHARED / "wxf-masters"], jobs=2)
    assert (wxf.files, wxf.games, wxf.skipped) == (5, 2561, 0)
    assert (wxf.added, wxf.duplicates) == WXF_ADDED_DUPLICATES
    total = ccpd.added + wxf.added
    assert count_games(engine) == total
    # a re-run stores nothing
    again = import_paths(engine, [SHARED / "wxf-masters"])
    assert again.added == 0 and again.duplicates == wxf.games
    # every game has its position index: one row per ply plus the start
    from sqlalchemy import func, select

    from xiangqi.db.schema import games, positions

    with engine.connect() as conn:
        plies = conn.execute(select(func.sum(games.c.plies + 1))).scalar_one()
        rows = conn.execute(select(func.count()).select_from(positions)).scalar_one()
    assert rows == plies == ccpd.positions + wxf.positions
    assert count_games(engine, fen=AFTER_H2E2, mirror=True) == COUNT_H2E2_MIRROR
    assert len(search_games(engine, player="胡榮華", limit=5)) == 5


#: As measured by the first import of the whole corpus (bench/bench_db.py, same numbers).
#: 2,414 distinct wxf-masters games, 1,943 of them already among CCPD's master games.
WXF_ADDED_DUPLICATES = (471, 2090)
COUNT_H2E2_MIRROR = 17366
