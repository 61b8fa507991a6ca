"""The importer's fast index rows equal the reference computation of :mod:`xiangqi.db.keys`."""

from __future__ import annotations

from pathlib import Path

from xiangqi.core.records import read_records
from xiangqi.db.importer import _index_data, game_row
from xiangqi.db.keys import iter_game_index, to_signed

DATA = Path(__file__).parent.parent / "data"
FILES = [*sorted((DATA / "corpus" / "ccpd").glob("*.pgn")), DATA / "records" / "xqf" / "xqbase_SAMPLE.XQF",
         DATA / "records" / "pgn" / "cchess_endgame_shortfen.pgn"]


def test_index_rows_equal_iter_game_index() -> None:
    checked = 0
    for path in FILES:
        for game in read_records(path):
            if any(e.startswith("FEN tag") for e in game.errors):
                continue
            row = game_row(game, str(path))
            board, moves = row["_board"], list(row["_moves"])
            names = [*row["moves"].split(), None]
            want_pos, want_brd, seen = [], [], set()
            for ply, (key, material, pack) in enumerate(iter_game_index(board.squares, board.turn, moves)):
                k = to_signed(key)
                want_pos.append((k, ply, names[ply]))
                if k not in seen:
                    seen.add(k)
                    want_brd.append((material, k, pack()))
            _index_data(row)
            assert row["_pos"] == want_pos and row["_boards"] == want_brd, path
            checked += len(want_pos)
    assert checked > 1000
