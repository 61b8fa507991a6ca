"""EnginePlayer: the pure-Python search answers 初级 while the kernels compile; the kernels otherwise."""

from __future__ import annotations

import pytest

import xiangqi.engine
from xiangqi.app.opponents.players import EnginePlayer
from xiangqi.core.board import Board, Move


class FakeEngine:
    """Stands in for the kernel engine: records the calls, answers h2e2 / a fixed score."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def play(self, board, level):
        self.calls.append("play")
        return type("R", (), {"move": Move.from_iccs("h2e2")})()

    def search(self, board, limit):
        self.calls.append("search")
        mv = Move.from_iccs("h2e2")
        return type("R", (), {"move": mv, "score_cp": 12, "mate": None, "pv": [mv]})()


@pytest.fixture
def player(monkeypatch):
    """A player with a fake kernel engine; the kernels are "not ready" and warmup only counted."""
    warmups: list[bool] = []
    monkeypatch.setattr(xiangqi.engine, "is_ready", lambda: False)
    monkeypatch.setattr(xiangqi.engine, "warmup", lambda background=True: warmups.append(background))
    p = EnginePlayer()
    p._engine = FakeEngine()
    p.warmups = warmups
    return p


def test_beginner_uses_the_python_search_while_kernels_compile(player):
    b = Board()
    b.push_iccs("h2e2")
    mv = player.choose(b, "beginner")
    assert mv in b.legal_moves and player._engine.calls == []
    assert player.warmups == [True]  # nobody had started the warm-up: the player did
    player.choose(b, "初级")
    assert player.warmups == [True] and player._engine.calls == []
    assert player.waits_for_warmup("beginner") is False


def test_python_search_takes_the_free_piece(player):
    b = Board("4k4/9/9/9/n8/9/9/9/9/R2K5 w")
    assert player.choose(b, "beginner") == Move.from_iccs("a0a5")


def test_stronger_levels_wait_for_the_kernels(player):
    for level in ("intermediate", "advanced", "master"):
        assert player.waits_for_warmup(level) is True
        assert player.choose(Board(), level) == Move.from_iccs("h2e2")
    assert player._engine.calls == ["play"] * 3


def test_kernels_when_ready(player, monkeypatch):
    monkeypatch.setattr(xiangqi.engine, "is_ready", lambda: True)
    assert player.choose(Board(), "beginner") == Move.from_iccs("h2e2")
    assert player._engine.calls == ["play"]
    assert player.waits_for_warmup("master") is False
    hint = player.hint(Board(), "beginner")
    assert hint == {"move": "h2e2", "score_cp": 12, "mate": None, "pv": ["h2e2"], "quick": False,
                    "tablebase": None}
    assert player.evaluate(Board()) == (12, None)
    assert player._engine.calls == ["play", "search", "search"] and player.warmups == []


def test_hint_and_draw_judgement_do_not_wait(player):
    b = Board("3k5/1R7/R8/9/9/9/9/9/9/4K4 w")
    hint = player.hint(b, "master")
    assert hint["quick"] is True and hint["move"] == "a7a9" and hint["mate"] == 1
    assert player.evaluate(Board("4k4/9/9/9/n8/9/9/9/9/R2K5 w"))[0] > 250
    assert player._engine.calls == []


def test_clock_budget_still_gives_a_searched_move(player):
    b = Board("4k4/9/9/9/n8/9/9/9/9/R2K5 w")
    assert player.choose(b, "beginner", time_s=0.0) == Move.from_iccs("a0a5")  # 1 ply always completes
