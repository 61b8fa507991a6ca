"""The review's confirmation step (xiangqi.study.review.confirm_line, classify_confirmed): candidate
marks searched again deeper, the played move and the best one valued child against child."""

from __future__ import annotations

import pytest

from xiangqi.core.board import Board, Move
from xiangqi.study import review as rv

START = Board().fen()
# Red: king e0, rook b0; Black: king f9, horse c8. b0b6 leaves the rook where the horse takes it.
HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"
# Red king e0 in check from the black rook e5 (Black king d9): the only legal move is e0f0 (e0d0
# would face the black king).
CHECKED = "3k5/9/9/9/4r4/9/9/9/9/4K4 w - - 0 1"


def _ev(cp: int, best: str | None) -> rv.PositionEval:
    return rv.PositionEval(cp, None, best, (best,) if best else (), 4, 0)


class Recorder:
    """A searcher that records the depth and position of each search, then lets the engine answer."""

    def __init__(self) -> None:
        from xiangqi.engine.api import Engine

        self.engine = Engine(hash_mb=4)
        self.calls: list[tuple[str, int]] = []

    def new_game(self) -> None:
        self.engine.new_game()

    def search(self, board, limit):
        self.calls.append((board.fen(), limit.depth))
        return self.engine.search(board, limit)


def test_hung_rook_is_confirmed_as_a_blunder_with_child_against_child_depths() -> None:
    moves = ["b0b6", "c8b6"]
    first = rv.evaluate_line(HANGING, moves, 0, 3, depth=4)
    rec = Recorder()
    conf = rv.confirm_line(HANGING, moves, first, 6, searcher=rec)
    assert list(conf) == [0]  # the capture is the engine's move: no candidate
    before, after = conf[0]
    assert before.best != "b0b6" and after is not None
    cls, loss = rv.classify_confirmed(True, before, after)
    assert cls == "blunder" and loss > 500
    b = Board(HANGING)
    fen_before = b.fen()
    b.push(Move.from_iccs("b0b6"))
    assert rec.calls == [(fen_before, 6), (b.fen(), 5)]


def test_a_mark_the_deeper_search_refutes_is_dropped() -> None:
    # first-pass evaluations that call the commonest first move a blunder (+100 -> -300 for Red)
    moves = ["h2e2"]
    first = [_ev(100, "b0c2"), _ev(-300, "h9g7")]
    assert rv.build_review(START, moves, first).plies[0].cls == "blunder"
    conf = rv.confirm_line(START, moves, first, 6)
    assert list(conf) == [0]
    cls, loss = rv.classify_confirmed(True, *conf[0])
    assert cls in ("good", "inaccuracy") and loss < rv.CONFIRM_THRESHOLDS[1][0]


def test_the_move_out_of_check_is_not_marked() -> None:
    b = Board(CHECKED)
    assert [m.iccs() for m in b.legal_moves] == ["e0f0"]
    # a first pass that had another best move and a 300 cp loss: the deeper search's best is the
    # only move, so the move is not marked and the position after it is not searched
    fake = [_ev(-200, "e0e1"), _ev(-500, "e5e9")]
    conf = rv.confirm_line(CHECKED, ["e0f0"], fake, 6)
    before, after = conf[0]
    assert before.best == "e0f0" and after is None
    assert rv.classify_confirmed(True, before, after) == ("good", 0)


def test_small_losses_are_not_candidates_and_bad_arguments_are_refused() -> None:
    moves = ["h2e2"]
    quiet = [_ev(20, "b0c2"), _ev(5, "h9g7")]  # a 15 cp loss, a drop of 4.9
    assert rv.confirm_line(START, moves, quiet, 4) == {}
    with pytest.raises(ValueError, match="confirmation depth"):
        rv.confirm_line(START, moves, quiet, 1)
    with pytest.raises(ValueError, match="evaluations"):
        rv.confirm_line(START, moves, quiet[:1], 4)


def test_classify_confirmed_thresholds() -> None:
    b = _ev(0, "b0c2")
    assert rv.classify_confirmed(True, b, None) == ("good", 0)
    assert rv.classify_confirmed(True, b, _ev(-rv.CONFIRM_THRESHOLDS[0][0], "x"))[0] == "blunder"
    assert rv.classify_confirmed(False, b, _ev(rv.CONFIRM_THRESHOLDS[1][0], "x"))[0] == "mistake"
    assert rv.classify_confirmed(True, b, _ev(rv.CONFIRM_THRESHOLDS[1][0], "x")) == ("good", 0)
    assert rv.classify_confirmed(True, _ev(5000, "x"), _ev(1000, "y")) == ("good", 0)  # clamped


def test_build_review_takes_the_confirmed_classes_and_counts_them() -> None:
    moves = ["h2e2"]
    first = [_ev(100, "b0c2"), _ev(-300, "h9g7")]
    conf = rv.confirm_line(START, moves, first, 6)
    r = rv.build_review(START, moves, first, confirmed=conf)
    assert r.plies[0].cls == rv.classify_confirmed(True, *conf[0])[0] != "blunder"
    assert r.red.blunders == 0
    assert rv.build_review(START, moves, first).red.blunders == 1
