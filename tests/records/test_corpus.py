"""Real game collections: small excerpts kept in tests/data, and (marked slow) the whole corpora in ../shared.

Credits: CCPD — Yu-Han Tseng and Bo-Nian Chen (2026), Chinese Chess Practical Dataset (CCPD),
CC BY 4.0; wxf-masters — maksimKorzh/wukong-xiangqi (games from wxf.ca), MIT. See
tests/data/SOURCES.md and the LICENSE files beside the excerpts.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from xiangqi.core.encoding import decode_bytes, read_text_file
from xiangqi.core.pgn import Game, read_games
from xiangqi.core.records import read_records

DATA = Path(__file__).parent.parent / "data" / "corpus"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "corpus"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared corpus is not at {SHARED}")


def _check_legal(game: Game) -> int:
    board = game.board()
    for m in game.mainline_moves():
        board.push(m)  # every move through the core's legality check
    return len(board.move_stack)


def test_three_notations_give_the_same_games() -> None:
    iccs = read_games(read_text_file(DATA / "wxf-masters" / "bulk_games_uci.pgn"))
    wxf = read_games(read_text_file(DATA / "wxf-masters" / "xqdb_international.pgn"))
    chinese = read_games(read_text_file(DATA / "wxf-masters" / "xqdb_traditional.pgn"))
    assert len(iccs) == len(wxf) == len(chinese) == 15
    for i, (a, b, c) in enumerate(zip(iccs, wxf, chinese, strict=True)):
        assert a.errors == b.errors == c.errors == []
        assert b.mainline_moves() == c.mainline_moves()
        assert a.headers["Red"] == b.headers["Red"] == c.headers["Red"]
        for g in (a, b):
            _check_legal(g)
        if i == 1:
            # A discrepancy in the source data: at 36. the ICCS file plays the front pawn (e5e6) where
            # the WXF and Chinese files write "-P+1" / 后兵进一, the rear pawn (e3e4). Both are legal.
            ma, mb = a.mainline_moves(), b.mainline_moves()
            diff = [k for k in range(len(ma)) if ma[k] != mb[k]]
            assert diff[0] == 70 and (ma[70].iccs(), mb[70].iccs()) == ("e5e6", "e3e4")
            assert [n.san() for n in list(b.mainline())[68:71]] == ["兵六平五", "马5进3", "后兵进一"]
        else:
            assert a.mainline_moves() == b.mainline_moves()
    assert sum(len(g.mainline_moves()) for g in iccs) == 1378


def test_ccpd_excerpt_big5() -> None:
    files = sorted((DATA / "ccpd").glob("*.pgn"))
    assert len(files) == 15
    plies = []
    for path in files:
        data = path.read_bytes()
        assert decode_bytes(data)[1] == "big5"
        (game,) = read_records(data)
        assert game.errors == []
        assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
        plies.append(_check_legal(game))
    assert plies == [9, 49, 101, 115, 108, 76, 85, 76, 65, 52, 64, 60, 113, 65, 23]
    lu_qin = read_records(DATA / "ccpd" / "ccpd_04.pgn")[0]
    assert lu_qin.headers["Red"] or lu_qin.headers["Black"]


@pytest.mark.slow
@pytest.mark.ci
@needs_shared
def test_wxf_masters_collections_read_completely() -> None:
    counts = {}
    for name in ("Hu_Ronghua_1391_UCI_games.pgn", "Liu_Dahua_1125_UCI_games.pgn"):
        games = read_games(read_text_file(SHARED / "wxf-masters" / name))
        assert all(g.errors == [] for g in games)
        counts[name] = (len(games), sum(_check_legal(g) for g in games))
    assert counts == {"Hu_Ronghua_1391_UCI_games.pgn": (1391, 120357),
                      "Liu_Dahua_1125_UCI_games.pgn": (1125, 101321)}


# Games of the CCPD set that cannot be read completely, with the reason (checked by hand in the Big5 source).
# 6 FEN tags lack a king (five opening lines written …/RNBA1ABNR, one midgame without the black king),
# so no move can be checked; in 6 games a main-line move leaves the mover's own king in check (the
# side is already in check and the recorded move does not answer it; three are computer games that
# ended on an illegal move). The moves before the bad one are kept.
_NO_RED_KING = "FEN tag: bad FEN board at character 0: red must have exactly one king, found 0"
_SELF_CHECK = "would leave the {} king in check or facing the other king"
CCPD_DAMAGED: dict[str, tuple[str, int]] = {
    "Dataset/開局/00000068.pgn": (_NO_RED_KING, 0),
    "Dataset/開局/00000100.pgn": (_NO_RED_KING, 0),
    "Dataset/開局/00000207.pgn": (_NO_RED_KING, 0),
    "Dataset/開局/00000226.pgn": (_NO_RED_KING, 0),
    "Dataset/開局/00000240.pgn": (_NO_RED_KING, 0),
    "Dataset/中局/00002096.pgn":
        ("FEN tag: bad FEN board at character 0: black must have exactly one king", 0),
    "Dataset/中局/00002173.pgn": ("ply 18 (main line): 士４進５: d9e8 " + _SELF_CHECK.format("black"), 17),
    "Dataset/中局/00002680.pgn": ("ply 19 (main line): 馬６退７: f4g6 " + _SELF_CHECK.format("black"), 18),
    "Dataset/對局/大師對局/以賽事分類/其他/00000753.pgn":
        ("ply 70 (main line): 士６進５: f9e8 " + _SELF_CHECK.format("black"), 69),
    "Dataset/對局/電腦對局/電腦對局競賽/00000011.pgn":
        ("ply 115 (main line): 帥五進一: e1e2 " + _SELF_CHECK.format("red"), 114),
    "Dataset/對局/電腦對局/電腦對局競賽/00000019.pgn":
        ("ply 72 (main line): 將５進１: e9e8 " + _SELF_CHECK.format("black"), 71),
    "Dataset/對局/電腦對局/電腦對局競賽/00000048.pgn":
        ("ply 72 (main line): 將５平４: e7d7 " + _SELF_CHECK.format("black"), 71),
}


@pytest.mark.slow
@needs_shared
def test_ccpd_every_game() -> None:
    """Every file of the CCPD set is read; every move kept is legal; the damaged games are exactly
    the 12 listed above (58,468 files, 58,468 games, 4,856,874 main-line plies)."""
    tar_path = SHARED / "ccpd" / "CCPD-Dataset-original-big5.tar.gz"
    files = games = plies = 0
    damaged: dict[str, tuple[str, int]] = {}
    with tarfile.open(tar_path) as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".pgn"):
                continue
            fh = tar.extractfile(member)
            assert fh is not None
            files += 1
            for game in read_records(fh.read()):
                games += 1
                kept = 0 if any(e.startswith("FEN tag") for e in game.errors) else _check_legal(game)
                plies += kept
                if game.errors:
                    assert len(game.errors) == 1, game.errors
                    damaged[member.name] = (game.errors[0], kept)
    assert (files, games, plies) == (58468, 58468, 4856874)
    assert damaged.keys() == CCPD_DAMAGED.keys()
    for name, (error, kept) in damaged.items():
        expected, expected_kept = CCPD_DAMAGED[name]
        assert error.startswith(expected), (name, error)
        assert kept == expected_kept, name
