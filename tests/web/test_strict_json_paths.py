"""loads_strict's two quick paths (a text with few brackets skips the nesting scan, one without a
backslash the surrogate walk) answer as the full checks do, at and around their limits."""

from __future__ import annotations

import json

import pytest

from xiangqi.web.limits import MAX_JSON_DEPTH, BadJSON, loads_strict


def test_nesting_at_the_limit_and_past_it():
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_strict(ok) == json.loads(ok)
    with pytest.raises(BadJSON, match=f"nested too deeply at offset {MAX_JSON_DEPTH} "):
        loads_strict("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    # many brackets, but inside a string: counted, scanned, accepted (the nesting is 1)
    text = json.dumps({"note": "[{" * 40})
    assert loads_strict(text) == {"note": "[{" * 40}


def test_escapes_checked_only_when_present_and_still_refused():
    assert loads_strict('{"type":"move","move":"h2e2","version":12}') == {
        "type": "move", "move": "h2e2", "version": 12}
    assert loads_strict(r'{"a":"\u4e2d\n"}') == {"a": "中\n"}
    with pytest.raises(BadJSON, match="string at a.b\\[1\\] holds a lone UTF-16 surrogate"):
        loads_strict(r'{"a":{"b":["x","\udc00"]}}')
    with pytest.raises(BadJSON, match="holds a lone UTF-16 surrogate character"):
        loads_strict('{"a":"\ud800"}')  # the raw character in a text message
    with pytest.raises(BadJSON, match="not valid UTF-8"):
        loads_strict(b'{"a":"\xed\xa0\x80"}')  # encoded in the bytes


def test_message_size_counted_in_utf8_bytes_at_the_limit():
    from tests.webclient import run_coroutine

    from xiangqi.web.limits import receive_json_message

    class FakeSocket:
        def __init__(self, text: str) -> None:
            self.text = text

        async def receive(self) -> dict[str, str]:
            return {"type": "websocket.receive", "text": self.text}

    def message(n_chinese: int, pad: int) -> str:  # '{"a":"中中…xx"}': 8 + 3n + pad bytes
        return '{"a":"' + "中" * n_chinese + "x" * pad + '"}'

    limit = 100
    assert len(message(30, 2).encode()) == limit  # 34 characters, 100 bytes: accepted
    assert run_coroutine(receive_json_message(FakeSocket(message(30, 2)), limit)) == {"a": "中" * 30 + "xx"}
    with pytest.raises(BadJSON, match=r"message too large: 101 bytes \(limit 100\)"):
        run_coroutine(receive_json_message(FakeSocket(message(30, 3)), limit))
    short = message(0, 10)  # 20 characters: 4 x 20 <= 100, not encoded, accepted
    assert run_coroutine(receive_json_message(FakeSocket(short), limit)) == {"a": "x" * 10}
