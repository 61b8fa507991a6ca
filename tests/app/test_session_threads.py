"""GameSession's queries leave the shared board alone; worker threads get snapshots."""

from __future__ import annotations

import pytest

from xiangqi.app.play.clock import TimeControl
from xiangqi.app.play.session import GameSession


class Watched(list):
    """A list that fails the test on any write (the board's squares or move stack)."""

    def _refuse(self, *args, **kw):
        raise AssertionError("a query wrote to the session's board")

    __setitem__ = __delitem__ = append = pop = extend = insert = remove = _refuse


def watch(session: GameSession) -> None:
    b = session.board
    b.squares = Watched(b.squares)
    b.move_stack = Watched(b.move_stack)
    b._stack = Watched(b._stack)


# Horses out and back, twice but for the last move: the next move can make a position occur the
# third time, so state() also runs the referee's look-ahead for forbidden repetitions.
SHUFFLE = (["h0g2", "h9g7", "g2h0", "g7h9"] * 2)[:-1]


@pytest.mark.parametrize("moves", [[], ["h2e2", "h7e7"], SHUFFLE])
def test_state_and_other_queries_never_write_to_the_board(moves):
    s = GameSession(red="human", black="human")
    for m in moves:
        s.play(m)
    before = (s.board.fen(), list(s.board.move_stack))
    watch(s)
    st = s.state()
    assert st["legal"] and st["fen"] == before[0]
    s.legal_moves_by_square()
    s.repetitions()
    assert (s.board.fen(), list(s.board.move_stack)) == before


def test_snapshot_is_a_private_copy_with_the_clock_budget():
    s = GameSession(red="human", black="engine", level="advanced",
                    time_control=TimeControl(kind="fischer", base_s=300, increment_s=2))
    s.play("h2e2")
    snap = s.snapshot()
    assert (snap.game_id, snap.version, snap.level) == (s.id, s.version, "advanced")
    assert snap.board is not s.board and snap.board == s.board
    assert snap.think_s is not None and 0 < snap.think_s < 300
    snap.board.push_iccs("h7e7")
    assert len(s.board.move_stack) == 1  # the session's board did not move


def test_move_records_as_dicts_are_what_dataclasses_gives():
    import dataclasses

    s = GameSession(red="human", black="human")
    for m in ("h2e2", "h9g7", "e2e6"):
        s.play(m)
    assert s.state()["moves"] == tuple(dataclasses.asdict(m) for m in s.moves)
    assert s.state()["moves"][2]["capture"] is True
