"""The reader's fast path for plain Chinese moves gives the full parser's answer, or leaves it to it."""

from __future__ import annotations

import random
from pathlib import Path

from xiangqi.core.errors import XiangqiError
from xiangqi.core.notation import move_to_chinese, parse_chinese
from xiangqi.core.pgn import _fast_chinese
from xiangqi.core.records import read_records

CCPD = sorted((Path(__file__).parent.parent / "data" / "corpus" / "ccpd").glob("*.pgn"))


def test_fast_path_agrees_with_the_full_parser() -> None:
    rng = random.Random(7)
    fast = total = 0
    for path in CCPD[:8]:
        for game in read_records(path):
            board = game.board()
            for move in game.mainline_moves():
                legal = list(board.legal_moves)
                for cand in [move, *rng.sample(legal, min(4, len(legal)))]:
                    for fullwidth in (False, True):
                        text = move_to_chinese(board, cand, fullwidth_black=fullwidth)
                        total += 1
                        got = _fast_chinese(board, text)
                        if got is not None:
                            fast += 1
                            assert got == cand, (board.fen(), text)
                for text in ("车一进五", "马二进三", "炮八平五", "兵五进一", "相三进五", "士4进5", "帅五平四",
                             "马8退9"):
                    got = _fast_chinese(board, text)
                    try:
                        want = parse_chinese(board, text)
                    except XiangqiError:
                        want = None
                    assert got is None or got == want, (board.fen(), text)
                board.push(move)
    assert fast > 0.9 * total
