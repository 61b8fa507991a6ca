"""The page's style sheet is well formed: every rule closed, and rules nested only inside at-rules
(@media, @supports). An unclosed rule swallows every rule after it (the browser reads them as
nested rules of a pseudo-element, which it drops), so this is checked on the file itself."""

from __future__ import annotations

import re
from pathlib import Path

import xiangqi.web

CSS = Path(xiangqi.web.__file__).parent / "static" / "css" / "app.css"


def test_every_rule_is_closed_and_none_is_nested_in_a_rule() -> None:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), CSS.read_text(encoding="utf-8"),
                  flags=re.S)
    stack: list[tuple[str, int]] = []  # (selector or at-rule, line)
    line, start = 1, 0
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            head = text[start:i].strip().split(";")[-1].strip()
            assert not stack or stack[-1][0].startswith("@"), (
                f"app.css line {line}: {head!r} is nested inside the rule {stack[-1][0]!r} of line "
                f"{stack[-1][1]} (a missing closing brace?)")
            stack.append((head, line))
            start = i + 1
        elif ch == "}":
            assert stack, f"app.css line {line}: a closing brace with no rule open"
            stack.pop()
            start = i + 1
    assert not stack, f"app.css: the rule {stack[-1][0]!r} of line {stack[-1][1]} is never closed"
