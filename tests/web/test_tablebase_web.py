"""The analysis board's engine panel carries the endgame table's verdict (the data dir's tables):
win/draw/loss, the mate in moves, the winner and the best moves in every notation."""

from __future__ import annotations

from tests.webclient import api_client

from xiangqi.core.board import Board, Move
from xiangqi.engine import tablebase as tb
from xiangqi.web.server import create_app

# 马 vs 象: Red mates in 13 plies, the only fastest move i6h8 (马一进二)
FEN = "5kb2/9/9/8N/9/9/9/9/9/3K5 w - - 0 1"


def receive_until(ws, kind, limit=400):
    seen = []
    for _ in range(limit):
        msg = ws.receive_json()
        seen.append(msg)
        if msg["type"] == kind:
            return seen
    raise AssertionError(f"no {kind!r} message in {seen[-5:]}")


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


def test_analysis_socket_sends_the_tablebase_verdict(tmp_path):
    tb.generate("KNKB", tmp_path / "tablebases")
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as client, client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "start", "fen": FEN, "multipv": 1})
        info = receive_until(ws, "info")[-1]
        assert info["tablebase"] == {"wdl": "win", "dtm": 13, "mate": 7, "winner": "red", "ending": "KNKB",
                                     "best": ["i6h8"], "chinese": ["马一进二"], "wxf": ["H1+2"]}
        # the search uses the table too: its line is the table's mate
        assert info["lines"][0]["mate"] == 7 and info["lines"][0]["pv"][0] == "i6h8"
        ws.send_json({"type": "stop"})
        receive_until(ws, "stopped")
        # Black to move after a drawing move: a draw, every drawing move listed
        b = Board(FEN)
        b.push(Move.from_iccs("i6g7"))
        ws.send_json({"type": "start", "fen": b.fen(), "multipv": 1})
        info = receive_until(ws, "info")[-1]
        probe = tb.Tablebase(tmp_path / "tablebases").probe(b)
        assert info["tablebase"]["wdl"] == "draw" and info["tablebase"]["winner"] is None
        assert info["tablebase"]["best"] == probe.best and len(probe.best) >= 1
        # a position in no table: no verdict
        ws.send_json({"type": "start", "fen": Board().fen(), "multipv": 1})
        info = receive_until(ws, "info")[-1]
        assert info["tablebase"] is None
