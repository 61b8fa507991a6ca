"""Concurrency of the game server: the engine thread, many clients, hints and versioned state.

These tests drive :class:`xiangqi.web.hub.GameHub` on an event loop of their own (``asyncio.run``),
with move providers and fake engines whose timing is fixed, so they assert orderings and counts,
not milliseconds.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time

from xiangqi.app.store import Store
from xiangqi.core.board import Board
from xiangqi.web.hub import GameHub


class QuietStore(Store):
    """A real store whose saves are skipped: these tests are about threads, not disks."""

    def save_current(self, session, slot="current"):
        pass

    def save_finished(self, session, pgn, language="zh"):
        return 0


def consistent(board: Board) -> bool:
    """Whether ``board``'s squares, kings and side to move are what its own move history gives."""
    try:
        ref = Board(board.starting_fen())
        for mv in board.move_stack:
            ref.push(mv)
    except Exception:
        return False
    return (ref.squares == board.squares and ref.turn == board.turn
            and ref._kings == board._kings and ref.halfmove_clock == board.halfmove_clock)


def test_engine_never_sees_a_board_that_state_is_changing(tmp_path):
    """The event loop answers state() (legal-move marks, forbidden moves: they make and take back
    moves) all the time while the engine plays both sides, with the interpreter switching threads
    often: every board the engine gets is consistent and every move it picks is played (no
    "illegal move", no stalled game)."""
    target = 2000
    seen = {"copies": 0, "corrupt": 0, "stalls": 0}
    rng = random.Random(7)

    def provider(board: Board, level: str):
        seen["copies"] += 1
        if not consistent(board):
            seen["corrupt"] += 1
        return rng.choice(list(board.legal_moves))

    async def run() -> None:
        hub = GameHub(QuietStore(tmp_path), move_provider=provider, engine_delay_s=0)
        stop = False

        async def hammer() -> None:  # pages asking for the state between any two engine steps
            while not stop:
                hub.state()
                await asyncio.sleep(0)

        ham = asyncio.get_running_loop().create_task(hammer())
        deadline = time.monotonic() + 150  # about 10 s on an idle machine
        await hub.new_game(red="engine", black="engine", level="beginner")
        while seen["copies"] < target and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
            idle = hub._engine_task is None or hub._engine_task.done()
            if not hub.session.is_over and idle:
                seen["stalls"] += 1  # the engine loop gave up on a game that goes on
            if hub.session.is_over or idle:
                await hub.new_game(red="engine", black="engine", level="beginner")
        stop = True
        await ham
        await hub.shutdown()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-3)  # switch threads often: a copy lands inside a make/unmake if it can
    try:
        asyncio.run(run())
    finally:
        sys.setswitchinterval(interval)
    assert seen["corrupt"] == 0, f"{seen['corrupt']} of {seen['copies']} boards the engine got were corrupt"
    assert seen["stalls"] == 0, f"{seen['stalls']} games stalled in {seen['copies']} engine moves"
    assert seen["copies"] >= target
