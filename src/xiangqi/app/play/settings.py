"""The settings schema: which settings exist and which values each may take.

These are the settings the front end reads and writes (static/js/app.js ``ui.settings`` and the
settings dialog of index.html). :func:`validate_settings` checks a change before it is stored;
:func:`clean_settings` keeps only the valid stored values when they are read, so one bad value in
the database (written by an older version, or by hand) can never stop the page from loading.
"""

from __future__ import annotations

import json
from typing import Any

from xiangqi.core.errors import XiangqiError

#: Every setting and its allowed values (the first one is the front end's default).
SCHEMA: dict[str, tuple[Any, ...]] = {
    "theme": ("wood", "flat", "contrast"),
    "pieces": ("traditional", "flat", "contrast"),
    "mode": ("light", "dark"),
    "language": ("zh", "en"),
    "sound": ("on", "off"),
    "traditional": (False, True),
    "notation": ("auto", "chinese", "wxf", "iccs"),  # auto: Chinese in zh, WXF in en
    "computer_tendency": ("normal", "stubborn", "compliant"),  # app/play/conduct.py: resigning, draw offers
    # the named opponents' remarks (app/opponents/persona.py) and speaking them (the browser's speech
    # synthesis)
    "talk": ("on", "off"),
    "talk_speech": ("off", "on"),
}
#: Longest stored value (characters of its JSON text) that is even looked at when reading.
MAX_VALUE_CHARS = 2000


class SettingsError(XiangqiError):
    """A settings change that is refused: an unknown setting or a value it cannot take."""


def _allowed(key: str) -> str:
    return ", ".join(json.dumps(v) for v in SCHEMA[key])


def check_value(key: str, value: Any) -> str | None:
    """None if ``value`` is a valid value of setting ``key``, else the reason (English)."""
    if key not in SCHEMA:
        return f"unknown setting {key[:64]!r} (settings: {', '.join(SCHEMA)})"
    allowed = SCHEMA[key]
    # type() as well as ==, so that 1 is not taken for True nor "1" for anything
    if not any(type(value) is type(a) and value == a for a in allowed):
        shown = json.dumps(value, ensure_ascii=False, default=str)
        if len(shown) > 40:
            shown = shown[:40] + "…"
        return f"setting {key!r} cannot be {shown} (allowed: {_allowed(key)})"
    return None


def validate_settings(values: Any) -> dict[str, Any]:
    """``values`` if it is an object of known settings with allowed values; raises
    :class:`SettingsError` naming the first bad key or value otherwise."""
    if not isinstance(values, dict):
        raise SettingsError(f"settings must be a JSON object of setting: value, got {type(values).__name__}")
    for key, value in values.items():
        if len(key) > 64 or len(json.dumps(value, default=str)) > MAX_VALUE_CHARS:
            raise SettingsError(f"setting {key[:64]!r} is too long "
                                f"(name 64, value {MAX_VALUE_CHARS} characters)")
        reason = check_value(key, value)
        if reason:
            raise SettingsError(reason)
    return values


def clean_settings(stored: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The valid settings among ``stored`` (key: JSON text, as in the database) and the keys that
    were left out (unreadable, unknown, too long or not an allowed value). Never raises."""
    good: dict[str, Any] = {}
    bad: list[str] = []
    for key, text in stored.items():
        if not isinstance(text, str) or len(text) > MAX_VALUE_CHARS or key not in SCHEMA:
            bad.append(key)
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            bad.append(key)
            continue
        if check_value(key, value) is None:
            good[key] = value
        else:
            bad.append(key)
    return good, bad
