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
