"""WinBoard/XBoard and Fairy-Stockfish SAN (``[Variant "xiangqi"]``, ``1. Che3 Hg8``), checked against
Fairy-Stockfish's own SAN (``pyffish.get_san``, the engine's C++ code) rather than written by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.core.pgn import read_game, write_game
from xiangqi.core.records import read_records
from xiangqi.core.san import move_to_san, parse_san

sf = pytest.importorskip("pyffish")

CCPD = Path(__file__).parent.parent / "data" / "corpus" / "ccpd"


def uci(move: Move) -> str:
    """Fairy-Stockfish's UCI move: ICCS with ranks 1-10."""
    s = move.iccs()
    return f"{s[0]}{int(s[1]) + 1}{s[2]}{int(s[3]) + 1}"


def fs_san(game) -> list[str]:
    fen = game.board().fen()
    out = []
    for move in game.mainline_moves():
        out.append(sf.get_san("xiangqi", fen, uci(move)))
        fen = sf.get_fen("xiangqi", fen, [uci(move)])
    return out


@pytest.mark.parametrize("name", ["ccpd_04.pgn", "ccpd_14.pgn"])
def test_every_legal_move_is_written_as_fairy_stockfish_writes_it(name: str) -> None:
    game = read_records(CCPD / name)[0]
    board = game.board()
    checked = 0
    for ply, move in enumerate(game.mainline_moves()):
        if ply % 8 == 0:
            fen = board.fen()
            for cand in board.legal_moves:
                text = move_to_san(board, cand)
                assert text == sf.get_san("xiangqi", fen, uci(cand)), (fen, cand.iccs())
                assert parse_san(board, text) == cand
                checked += 1
        board.push(move)
    assert checked > 150


def test_letters_and_ranks() -> None:
    board = Board()
    assert [move_to_san(board, Move.from_iccs(m)) for m in ("h2e2", "b0c2", "c0e2", "d0e1", "e0e1", "a3a4")] \
        == ["Che3", "Hc3", "Ece3", "Ade2", "Ke2", "Pa5"]
    assert sf.get_san("xiangqi", sf.start_fen("xiangqi"), "h3e3") == "Che3"
    # XBoard numbers the ranks 0-9; bare pawn moves and the FEN letters B/N read too
    assert parse_san(board, "Che2", rank_base=0) == Move.from_iccs("h2e2")
    assert parse_san(board, "a5") == parse_san(board, "Pa5") == Move.from_iccs("a3a4")
    assert parse_san(board, "Nc3") == parse_san(board, "Hb1c3") == Move.from_iccs("b0c2")
    assert parse_san(board, "Bce3") == Move.from_iccs("c0e2")
    assert parse_san(board, "h3e3") == Move.from_iccs("h2e2")  # Fairy-Stockfish's UCI move


def _fs_pgn(game, ranks: str = "1-10") -> str:
    moves = fs_san(game)
    if ranks == "0-9":
        moves = [re.sub(r"(10|[1-9])(?=[+#]?$)", lambda m: str(int(m.group(1)) - 1), mv) for mv in moves]
        moves = [re.sub(r"^([A-Z][a-i]?)(10|[1-9])(?=x?[a-i])",
                        lambda m: m.group(1) + str(int(m.group(2)) - 1), mv) for mv in moves]
    body = " ".join(f"{i // 2 + 1}. {mv}" if i % 2 == 0 else mv for i, mv in enumerate(moves))
    return (f'[Event "{game.headers["Event"]}"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "?"]\n'
            f'[White "{game.headers["Red"]}"]\n[Black "{game.headers["Black"]}"]\n'
            f'[Result "{game.headers["Result"]}"]\n[Variant "xiangqi"]\n\n{body} {game.headers["Result"]}\n')


@pytest.mark.parametrize("ranks", ["1-10", "0-9"])
def test_read_fairy_stockfish_and_xboard_pgn(ranks: str) -> None:
    source = read_records(CCPD / "ccpd_06.pgn")[0]
    text = _fs_pgn(source, ranks)
    moves = [t for t in text.split("\n\n")[1].split() if t[:1].isalpha()]
    assert any(t.endswith("0") and not t.endswith("10") for t in moves) == (ranks == "0-9")
    game = read_game(text)
    assert game is not None and game.errors == []
    assert game.mainline_moves() == source.mainline_moves()
    assert game.headers["Red"] == source.headers["Red"] and "White" not in game.headers


def test_read_uci_coordinates_with_ranks_1_to_10() -> None:
    text = '[Variant "xiangqi"]\n[White "Fairy-Stockfish"]\n\n1. h3e3 h10g8 2. h1g3 i10h10 *\n'
    game = read_game(text)
    assert game is not None and game.errors == []
    assert [m.iccs() for m in game.mainline_moves()] == ["h2e2", "h9g7", "h0g2", "i9h9"]
    assert game.headers["Red"] == "Fairy-Stockfish"


def test_write_san_and_read_it_back() -> None:
    source = read_records(CCPD / "ccpd_06.pgn")[0]
    text = write_game(source, notation="san")
    assert '[Variant "xiangqi"]' in text and f'[White "{source.headers["Red"]}"]' in text
    assert "[Format" not in text and "[Game " not in text
    body = " ".join(ln for ln in text.splitlines() if not ln.startswith("["))
    moves = [t for t in body.split() if not t.endswith(".") and t not in ("1-0", "0-1", "1/2-1/2", "*")]
    assert moves == fs_san(source)
    back = read_game(text)
    assert back is not None and back.errors == [] and back.mainline_moves() == source.mainline_moves()


def test_nags_are_kept_through_every_pgn_notation_and_encoding() -> None:
    from xiangqi.core.records import write_records

    game = read_game("1. h2e2 $1 h9g7 ?! (1... b9c7 $4 2. h0g2 !!) 2. h0g2 $146 *")
    assert game is not None and game.errors == []
    want = ([n.nags for n in game.mainline()], game.variations[0].variations[1].nags)
    assert want == ([{1}, {6}, {146}], {4})
    for notation in ("chinese", "wxf", "iccs", "san"):
        for encoding in ("utf-8", "gbk"):
            back = read_records(write_records([game], "pgn", notation=notation, encoding=encoding))[0]
            assert ([n.nags for n in back.mainline()], back.variations[0].variations[1].nags) == want
