"""The 揭棋 game (xiangqi.app.play.jieqi_game): reveals from the deal, what each side sees, records and
PGN read back, the store's library rows (a damaged 揭棋 record is flagged, not opened)."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from xiangqi.app.play import jieqi_game
from xiangqi.app.play.jieqi_game import JieqiGame, record_problem
from xiangqi.app.play.store import Store, games
from xiangqi.core.jieqi import JieqiError, parse_square
from xiangqi.engine.jieqi_search import JieqiSearch


def test_reveals_come_from_the_deal_and_views_hide_what_was_not_seen():
    g = JieqiGame(red="human", black="human")
    m = g.play("b2b9")  # Red's hidden cannon takes Black's hidden horse-square piece
    assert m.reveal == g.deals[parse_square("b2")] and m.captured == g.deals[parse_square("b9")]
    assert g.unseen(False) == [m.captured] and g.unseen(True) == []
    black = g.view(False)
    assert sum(black.pool[False].values()) == 15 and black.hidden_count(False) == 14
    assert sum(g.view(True).pool[False].values()) == 14
    with pytest.raises(JieqiError, match="illegal"):
        g.play("a0a5")
    both = JieqiGame(red="human", black="human", capture_reveal="both", deals=g.deals)
    both.play("b2b9")
    assert both.unseen(False) == [] and sum(both.view(False).pool[False].values()) == 14


def test_record_and_pgn_round_trips():
    g = JieqiGame(red="engine", black="engine", level="1")
    for _ in range(8):
        g.engine_move(JieqiSearch(1, 0.05))
    again = JieqiGame.from_record(json.loads(json.dumps(g.to_record())))
    assert again.board.fen() == g.board.fen() and again.deals == g.deals
    from_pgn = JieqiGame.from_pgn(g.to_pgn())
    assert from_pgn.board.fen() == g.board.fen()
    for mv in g.board.moves:  # every identity the record shows is kept
        if mv.reveal:
            assert from_pgn.deals[mv.frm] == mv.reveal
    rec = g.to_record()
    k = next(i for i, m in enumerate(rec["moves"]) if "=" in m)  # the first move that reveals a piece
    rec["moves"][k] = rec["moves"][k][:4] + ("=P" if rec["moves"][k][5:6] != "P" else "=R")
    assert record_problem(rec) is not None  # a reveal the deal does not allow


def test_the_library_keeps_a_finished_game_and_flags_a_damaged_one(tmp_path):
    store = Store(tmp_path)
    try:
        g = JieqiGame(red="human", black="engine")
        g.play("h2e2")
        jieqi_game.save(store, g)
        assert store.list_games() == []  # unfinished: the current game only
        assert jieqi_game.load_current(store).board.fen() == g.board.fen()
        g.resign(True)
        jieqi_game.save(store, g)
        rows = store.list_games()
        assert len(rows) == 1 and rows[0]["variant"] == "jieqi" and rows[0]["result"] == "0-1"
        assert not rows[0]["damaged"] and store.get_game(rows[0]["id"])["record"]["variant"] == "jieqi"
        bad = g.to_record()
        bad["moves"] = ["a0a9=R"]
        with store.engine.begin() as conn:
            conn.execute(sa.update(games).values(record=json.dumps(bad, ensure_ascii=False)))
        assert store.list_games()[0]["damaged"]
    finally:
        store.close()


def test_a_saved_game_loads_back_equal_through_the_stores_text(tmp_path):
    # The store keeps a 揭棋 game as text (Store.save_record/load_record) and knows no 揭棋: the
    # game read back from it is the one saved (settings, secret deal, moves with their reveals,
    # the resignation), both as the current game and as the library row.
    g = JieqiGame(red="human", black="engine", level="1", capture_reveal="both")
    for iccs in ("b2b9", "h7e7", "h2e2", "a9a8", "b0c2"):  # each reveals; the first one captures
        g.play(iccs)
    assert all(m.reveal for m in g.board.moves) and g.board.moves[0].captured
    store = Store(tmp_path)
    try:
        jieqi_game.save(store, g)
        back = jieqi_game.load_current(store)
        assert back is not g and back.to_record() == g.to_record()
        assert back.deals == g.deals and back.board.fen() == g.board.fen()
        assert [m.token() for m in back.board.moves] == [m.token() for m in g.board.moves]
        assert json.loads(store.load_record(jieqi_game.SLOT)) == g.to_record()
        g.resign(False)  # Black resigns: the game ends and gets its library row
        jieqi_game.save(store, g)
        back = jieqi_game.load_current(store)
        assert back.to_record() == g.to_record() and back.resigned is False
        assert back.outcome.result() == "1-0"
        row = store.list_games()[0]
        assert (row["level"], row["result"], row["plies"]) == ("jieqi-1", "1-0", 5)
        library = JieqiGame.from_record(store.get_game(row["id"])["record"])
        assert library.to_record() == g.to_record()
    finally:
        store.close()
