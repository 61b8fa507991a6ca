"""The engine panel's socket (/ws/analysis, web/analysis_api.py) answers every message whatever the order:
a stop before any start, two stops, a start while a search runs, an unknown type, malformed JSON. Each
answer is awaited with a follow-up message that is always answered at once (:data:`PROBE`), so that a
missing answer fails the test instead of leaving it waiting.

The searcher is a stand-in that searches until it is stopped (no kernels to load)."""

from __future__ import annotations

import time

import pytest
from tests.web.test_analysis_api import START, _SearchUntilStopped, first_move
from tests.webclient import api_client

from xiangqi.app.tasks.background import ForegroundGate
from xiangqi.app.training.analysis import LiveAnalysis
from xiangqi.web.analysis_api import UPDATE_INTERVAL_S
from xiangqi.web.server import create_app

#: A message the socket always answers at once, and with an error no other message here gets: sent
#: after the one under test.
PROBE = f'{{"type": "start", "fen": "{START}", "multipv": 9}}'


@pytest.fixture
def client(tmp_path, monkeypatch):
    import xiangqi.engine

    monkeypatch.setattr(xiangqi.engine, "Engine", _SearchUntilStopped)
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        yield c


def answers(ws, *texts: str) -> list[dict]:
    """The messages that come for ``texts``, up to the answer to the :data:`PROBE` sent after them."""
    for text in texts:
        ws.send_text(text)
    ws.send_text(PROBE)
    seen = []
    while True:
        msg = ws.receive_json()
        if msg["type"] == "error" and msg["detail"].startswith("start message: multipv:"):
            return seen
        seen.append(msg)


def test_a_stop_before_any_start_is_answered(client):
    with client.websocket_connect("/ws/analysis") as ws:
        assert answers(ws, '{"type": "stop"}') == [{"type": "stopped", "reason": "idle"}]
        assert answers(ws, '{"type": "stop"}') == [{"type": "stopped", "reason": "idle"}]


def test_stop_twice_then_start_while_running(client):
    start = f'{{"type": "start", "fen": "{START}"}}'
    with client.websocket_connect("/ws/analysis") as ws:
        assert answers(ws, start) == [{"type": "started", "id": 1}]
        assert answers(ws, start.replace(" w ", " b ")) == [{"type": "started", "id": 2}]  # replaces job 1
        # the two answers come in order (they are the analysis's events, sent with its next update,
        # after the probe's answer, which goes out at once): the probe is sent again and again, faster
        # than the updates, until they are in (the page's messages must not hold the news back)
        stop = '{"type": "stop"}'
        got = answers(ws, stop, stop)
        deadline = time.monotonic() + 60  # "eventually": a poll; the bound ends a hung test only
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(UPDATE_INTERVAL_S / 5)
            got += answers(ws)
        assert got == [{"type": "stopped", "reason": "stopped"}, {"type": "stopped", "reason": "idle"}]
        assert answers(ws, start) == [{"type": "started", "id": 3}]  # and it starts again


@pytest.mark.parametrize(("text", "detail"), [
    ('{"type": "pause"}', 'message must be {"type": "start"'),
    ('{"type": null}', 'message must be {"type": "start"'),
    ('"stop"', 'message must be {"type": "start"'),
    ('{"type": "stop"', "message "),
    ('{"type": "stop", "type": "start"}', "message "),
    ("", "message "),
])
def test_unknown_and_malformed_messages_are_answered_and_the_socket_goes_on(client, text, detail):
    with client.websocket_connect("/ws/analysis") as ws:
        got = answers(ws, text)
        assert len(got) == 1 and got[0]["type"] == "error" and got[0]["detail"].startswith(detail), got
        assert answers(ws, '{"type": "stop"}') == [{"type": "stopped", "reason": "idle"}]


def test_a_stop_after_the_search_ran_out_of_time_is_answered():
    """The analysis itself (app/training/analysis.py): the time limit ends the search with "time"; a stop
    after that has nothing to stop and says so."""
    analysis = LiveAnalysis(ForegroundGate(), engine=_SearchUntilStopped(), max_seconds=0.2)
    try:
        analysis.start(START)
        events: list[dict] = []
        deadline = time.monotonic() + 60  # "eventually": a poll; the bound ends a hung test only
        while not events and time.monotonic() < deadline:
            events += analysis.take_events()
            if not events:
                analysis._thread.join(0.05)
        assert events == [{"type": "stopped", "reason": "time"}] and not analysis.running
        analysis.stop()
        assert analysis.take_events() == [{"type": "stopped", "reason": "idle"}]
    finally:
        analysis.close()
