"""随机开局 through the API: a shuffled start from the server, its shuffle named in the saved PGN."""

from __future__ import annotations

from tests.webclient import api_client

from xiangqi.core.board import Board
from xiangqi.core.variants import STANDARD_SHUFFLE, random_start_fen, shuffle_number
from xiangqi.web.server import create_app


def first_move(board, level):
    return min(board.legal_moves, key=lambda m: m.iccs())


def test_random_start_game_records_its_shuffle(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as client:
        seen = set()
        for _ in range(12):
            r = client.get("/api/variants/random").json()
            assert 0 <= r["number"] < 90 and r["number"] != STANDARD_SHUFFLE
            assert r["fen"] == random_start_fen(r["number"])
            seen.add(r["number"])
        assert len(seen) > 1
        fen = random_start_fen(7)
        st = client.post("/api/game/new", json={"red": "human", "black": "engine", "level": "beginner",
                                                "fen": fen}).json()
        assert st["start_fen"] == fen
        mv = min(Board(fen).legal_moves, key=lambda m: m.iccs()).iccs()
        assert client.post("/api/game/move", json={"move": mv}).status_code == 200
        pgn = client.get("/api/game/pgn", params={"notation": "iccs"}).text
        assert '[Variant "random"]' in pgn and '[Shuffle "7"]' in pgn and f'[FEN "{fen}"]' in pgn
        assert shuffle_number(fen) == 7
