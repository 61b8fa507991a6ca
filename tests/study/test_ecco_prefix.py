"""The incremental ECCO classification (``ecco.Prefix``, ``classify_tokens``) and the session's use of it:
the same codes as :func:`ecco.classify` of the whole move list, also after a takeback or another line."""

from __future__ import annotations

import random

import pytest

from xiangqi.app.session import GameSession
from xiangqi.core.board import Board
from xiangqi.core.errors import XiangqiError
from xiangqi.study import ecco


def _random_game(seed: int, plies: int = 24) -> list[str]:
    rng = random.Random(seed)
    b = Board()
    out = []
    for _ in range(plies):
        moves = list(b.generate_legal_moves())
        if not moves:
            break
        m = rng.choice(moves)
        b.push(m)
        out.append(m.iccs())
    return out


# a real opening: 中炮过河车对屏风马 (C17 from ply 7; B00, B05, C00 before)
MAIN_LINE = "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 h0h6 c6c5 h6g6 h7i7".split()


def test_prefix_gives_classify_of_every_prefix():
    for line in [MAIN_LINE, *(_random_game(seed) for seed in range(25))]:
        here = ecco.Prefix()
        for n, move in enumerate(line[:ecco.WINDOW], start=1):
            here = here.extend(move)
            assert here.moves == tuple(line[:n])
            assert here.ecco() == ecco.classify(line[:n]), (line[:n], here.ecco())
            assert here.tokens == tuple(tuple(t) for t in ecco.wxf_tokens(line[:n]))
    assert ecco.Prefix().of(MAIN_LINE).ecco().code == ecco.classify(MAIN_LINE).code
    assert ecco.Prefix().of(MAIN_LINE).ecco().code.startswith("C")


def test_prefix_mirrored_opening_and_errors():
    mirrored = "b2e2 b9c7".split()
    assert ecco.Prefix().of(mirrored).mirror is True
    assert ecco.Prefix().of(mirrored).ecco() == ecco.classify(mirrored) == ecco.classify(["h2e2", "h9g7"])
    assert ecco.Prefix().ecco() is None
    with pytest.raises(XiangqiError, match="no piece on e5"):
        ecco.Prefix().extend("e5e6")
    full = ecco.Prefix().of(_random_game(3, 30))
    assert len(full.moves) == ecco.WINDOW
    with pytest.raises(ValueError, match="first 20 plies"):
        full.extend("a0a1")


def test_prefix_of_goes_back_to_the_start_when_not_a_continuation():
    line = _random_game(11)
    at10 = ecco.Prefix().of(line[:10])
    shorter = at10.of(line[:6])  # a takeback: not a continuation of at10
    assert shorter.moves == tuple(line[:6]) and shorter.ecco() == ecco.classify(line[:6])
    other = _random_game(12)
    assert at10.of(other[:8]).ecco() == ecco.classify(other[:8])
    assert at10.of(other[:8]).moves == tuple(other[:8])


def test_session_opening_after_takeback_and_another_line():
    s = GameSession(red="human", black="human")
    for move in MAIN_LINE:
        s.play(move)
    deep = ecco.classify(MAIN_LINE)
    assert s.opening()["code"] == deep.code
    # takebacks: the opening is that of the moves left, not the cached deeper one
    assert deep.code == "C17"
    for _ in range(5):  # back to ply 5: B05 (a kept deeper answer would still say C17)
        s.undo()
    assert s.opening()["code"] == "B05" == ecco.classify(MAIN_LINE[:5]).code
    s.play(MAIN_LINE[5])
    assert s.opening()["code"] == "C00"
    for _ in range(6):
        s.undo()
    assert s.opening() is None
    s.play("h2e2")
    assert s.opening()["code"] == "B00" == ecco.classify(["h2e2"]).code
    # another line after the takeback: 仙人指路 (E), a code of its own
    s.undo()
    for move in "g3g4 c6c5".split():
        s.play(move)
    assert s.opening() == {"code": ecco.classify(["g3g4", "c6c5"]).code,
                           "name": ecco.classify(["g3g4", "c6c5"]).name,
                           "name_en": ecco.name_en(ecco.classify(["g3g4", "c6c5"]).code)}
    assert s.opening()["code"].startswith("E")


def test_session_opening_follows_random_games_with_takebacks():
    rng = random.Random(5)
    s = GameSession(red="human", black="human")
    for _ in range(120):
        if s.board.move_stack and rng.random() < 0.3:
            s.undo()
        else:
            legal = [m for ms in s.legal_moves_by_square().values() for m in ms]
            if not legal:
                break
            s.play(rng.choice(legal))
        line = [m.iccs() for m in s.board.move_stack]
        want = ecco.classify(line) if line else None
        got = s.opening()
        assert (got and got["code"]) == (want and want.code), line


def test_session_from_another_position_has_no_opening():
    s = GameSession(red="human", black="human",
                    fen="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1")
    s.play("h7e7")
    assert s.opening() is None
