"""A hint's cancel reaches the built-in engine's search at once, even when it comes in the moment
between the player's last check and the start of the search (the search resets the engine's stop flag
when it begins: before, such a cancel was lost and the hint searched its whole second, noticed only at
the check after it). Nothing here is measured by the clock: the search's own result says whether it
was stopped (no iteration completed, next to no nodes) or ran (many iterations, many nodes)."""

from __future__ import annotations

import pytest

from xiangqi.app.opponents.players import EnginePlayer, SearchCancelledError, SearchTicket
from xiangqi.core.board import Board
from xiangqi.engine import Engine, Limit, warmup


@pytest.fixture(scope="module")
def player():
    warmup(background=False)  # the kernels (from the Numba cache when there is one)
    p = EnginePlayer(hash_mb=4)
    assert p.kernels_ready()
    return p


def _cancel_as_the_search_begins(player, monkeypatch, ticket, results):
    """Make the player's engine take the cancel after the player's last check, just before the
    search itself begins, and keep the search's result."""
    eng = player._get()
    assert isinstance(eng, Engine)
    real = Engine.search

    def search(self, board, limit, **kw):
        player.cancel(ticket, "a newer hint request from the same page replaced this one")
        res = real(self, board, limit, **kw)
        results.append(res)
        return res

    monkeypatch.setattr(Engine, "search", search)


@pytest.mark.parametrize("what", ["hint", "evaluate"])
def test_a_cancel_just_before_the_search_begins_stops_it_at_once(player, monkeypatch, what):
    ticket, results = SearchTicket("query"), []
    _cancel_as_the_search_begins(player, monkeypatch, ticket, results)
    ask = player.hint if what == "hint" else player.evaluate
    args = (Board(), "master", 3.0) if what == "hint" else (Board(), 3.0)
    with pytest.raises(SearchCancelledError, match="a newer hint request"):
        ask(*args, ticket=ticket)
    (res,) = results
    assert res.depth == 0 and res.nodes < 100, res  # stopped before its first iteration


def test_the_same_search_not_cancelled_runs_its_iterations(player):
    """The measure above against the search it stops: uncancelled, the same engine completes
    iterations and searches many nodes (here bounded by depth, not by time)."""
    res = player._get().search(Board(), Limit(depth=6), stop=SearchTicket("query").stop_event)
    assert res.depth == 6 and res.nodes > 1000


def test_a_stale_stop_event_of_another_request_does_not_stop_a_search(player):
    """Engine.stop() between searches has no effect on the next one (its docstring), and a search
    given its own, unset event runs as usual."""
    eng = player._get()
    eng.stop()
    res = eng.search(Board(), Limit(depth=4))
    assert res.depth == 4
