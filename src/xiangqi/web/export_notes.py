"""What a record export could not keep, told to the page: the ``X-Xiangqi-Warnings`` response header.

XQF has fixed-size string fields and no place for many PGN headers, NAGs or the comment after the
result (:func:`xiangqi.core.xqf.xqf_losses`). A download is a file, not JSON, so the export routes
(``/api/game/export``, ``/api/record/export``, ``/api/analysis/export``) put those sentences in a
response header, a JSON list of strings in ASCII (``\\uXXXX`` escapes keep HTTP's Latin-1 rule); the
page (``static/js/exportnotes.js``) shows them in its language after the download.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

__all__ = ["HEADER", "MAX_BYTES", "warnings_header"]

#: The response header carrying the export's warnings.
HEADER = "X-Xiangqi-Warnings"
#: At most this many bytes of JSON in the header (servers and proxies limit header sizes to 8 KB).
MAX_BYTES = 4000
_MORE = "{n} more not shown"


def warnings_header(warnings: Iterable[str]) -> dict[str, str]:
    """``{HEADER: '["…", …]'}`` for a non-empty list of warning sentences, else ``{}``.

    Sentences past :data:`MAX_BYTES` of JSON are left out, the last item then says how many
    (``"3 more not shown"``).
    """
    items = [str(w) for w in warnings]
    if not items:
        return {}
    kept: list[str] = []
    size = 2
    for i, w in enumerate(items):
        cost = len(json.dumps(w)) + 1
        if size + cost > MAX_BYTES - 40:
            kept.append(_MORE.format(n=len(items) - i))
            break
        kept.append(w)
        size += cost
    return {HEADER: json.dumps(kept, ensure_ascii=True)}
