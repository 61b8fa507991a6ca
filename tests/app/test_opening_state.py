"""The game's opening, live: the state's ``opening`` (ECCO code + name, recomputed from the moves after
each move and undo), and the ``[ECCO]``/``[Opening]``/``[Variation]`` tags of the saved PGN (export and
library).

Expected codes, read off the moves by hand against the ECCO 2004 definitions (docs/ECCO.md):
炮二平五 = B00 中炮局; + 马8进7 = B05 中炮对进左马; 炮二平五 马8进7 马二进三 车9平8 车一平二 马2进3
兵七进一 卒7进1 车二进六 = C30 中炮过河车互进七兵对屏风马; 炮八平五 (b2e2, the other wing) 马2进3 =
B05 too (mirrored); 炮二平五 马8进7 马二进三 车9平8 车一平二 马2进3 马八进七 (h2e2 h9g7 h0g2 i9h9 i0h0
b9c7 b0c2) = C01 中炮七路马对屏风马; 车一进一 (右横车) = C10, and 马七进六 after it = C11
中炮右横车对屏风马：红左马盘河, a variation after its "：".
"""

from __future__ import annotations

from tests.webclient import api_client

from xiangqi.app.play.session import GameSession
from xiangqi.core.board import Board
from xiangqi.core.pgn import read_game
from xiangqi.web.server import create_app

C30 = "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 g6g5 h0h6".split()


#: The state's opening for 炮二平五 马8进7 and for the C30 line (English names: study/data/ecco_terms_en.tsv).
OPENING_B05 = {"code": "B05", "name": "中炮对进左马", "name_en": "Central Cannon vs Left Horse"}
OPENING_C30 = {"code": "C30", "name": "中炮过河车互进七兵对屏风马",
       "name_en": "Central Cannon, River-Crossing Rook, Both Seventh Pawns vs Screen Horses"}

def test_opening_follows_the_moves():
    s = GameSession(red="human", black="human")
    assert s.state()["opening"] is None  # no move yet
    s.play("h2e2")
    assert s.state()["opening"] == {"code": "B00", "name": "中炮局", "name_en": "Central Cannon Opening"}
    s.play("h9g7")
    assert s.state()["opening"] == OPENING_B05
    for m in C30[2:]:
        s.play(m)
    assert s.state()["opening"] == OPENING_C30
    s.undo()
    assert s.state()["opening"]["code"] != "C30"


def test_mirrored_opening_and_custom_start():
    s = GameSession(red="human", black="human")
    s.play("b2e2")
    s.play("b9c7")
    assert s.state()["opening"]["code"] == "B05"
    endgame = GameSession(red="human", black="human", fen="3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1")
    endgame.play("e1d1")
    assert endgame.state()["opening"] is None  # ECCO names openings of the full board only


def test_pgn_tags_from_the_moves():
    s = GameSession(red="human", black="human")
    for m in C30:
        s.play(m)
    game = read_game(s.to_pgn("iccs"))
    assert (game.headers["ECCO"], game.headers["Opening"]) == ("C30", "中炮过河车互进七兵对屏风马")
    assert "Variation" not in game.headers
    # ZHAO GuoRong - KE YongQing (tests/data/corpus/wxf-masters): 车一进一 右横车 = C10, then
    # 马七进六 (c2d4) = C11 中炮右横车对屏风马：红左马盘河, written as Opening + Variation
    s = GameSession(red="human", black="human", headers={"ECCO": "A00", "Opening": "wrong"})
    for m in "h2e2 h9g7 h0g2 i9h9 c3c4 g6g5 b0c2 b9c7 i0i1 c9e7 i1f1 h7h5".split():
        s.play(m)
    h = s.pgn_headers("en")
    assert (h["ECCO"], h["Opening"], "Variation" in h) == ("C10", "中炮右横车对屏风马", False)
    s.play("c2d4")
    h = s.pgn_headers("en")
    assert (h["ECCO"], h["Opening"], h["Variation"]) == ("C11", "中炮右横车对屏风马", "红左马盘河")
    # no tag for a game without moves
    assert "ECCO" not in GameSession(red="human", black="human").pgn_headers()


def first_move(board: Board, level: str):
    return min(board.legal_moves, key=lambda m: m.iccs())


def test_state_and_saved_pgn_through_the_api(tmp_path):
    with api_client(create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)) as c:
        assert c.post("/api/game/new", json={"red": "human", "black": "human"}).status_code == 200
        for mv in ("h2e2", "h9g7"):
            st = c.post("/api/game/move", json={"move": mv}).json()
        assert st["opening"] == OPENING_B05
        text = c.get("/api/game/pgn", params={"notation": "iccs"}).text
        assert '[ECCO "B05"]' in text and '[Opening "中炮对进左马"]' in text
        c.post("/api/game/resign")
        gid = c.get("/api/library").json()[0]["id"]
        text = c.get(f"/api/library/{gid}/pgn").text
        assert '[ECCO "B05"]' in text and '[Opening "中炮对进左马"]' in text
        replay = c.get(f"/api/library/{gid}/replay").json()
        assert replay["opening"] == OPENING_B05
        assert all("book" not in m for m in replay["moves"])  # two humans: no book move
