"""Search keys of names: one spelling for a player's or an event's name whatever its script and case.

The master games are mostly read from Big5 files (CCPD), so their names are in traditional characters
(胡榮華, 全國象棋個人賽), while most users type simplified ones (胡荣华), and files made on the mainland
are the other way round. The ``games`` table keeps, beside ``red``, ``black`` and ``event``, their keys
(``red_key``, ``black_key``, ``event_key``, migration 0005) and the search compares the key of the query
with them (:class:`xiangqi.db.search.Filters`), so that either script finds both.
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["search_key"]


@functools.cache
def _t2s():
    """OpenCC's ``t2s`` converter (traditional → simplified Chinese), built once (it loads its tables)."""
    import opencc

    try:
        return opencc.OpenCC("t2s")
    except Exception:  # OpenCC 1.1 bindings before the name normalisation want the file name
        return opencc.OpenCC("t2s.json")


@functools.lru_cache(maxsize=1 << 16)
def search_key(text: str) -> str:
    """The search key of a name or a query: ``text`` NFKC-normalised (full-width Latin letters and digits
    become ASCII: ``ＸＵ１`` → ``XU1``; compatibility ideographs become the unified ones), converted from
    traditional to simplified Chinese by OpenCC's ``t2s`` table (OpenCC project, Apache-2.0: its
    ``TSCharacters`` and ``TSPhrases`` dictionaries; ``胡榮華`` → ``胡荣华``; simplified text is left as it
    is), then case-folded (``Xu Yinchuan`` → ``xu yinchuan``) and stripped.

    The same function keys the stored names and the queries, so a substring of a name's key is found with
    the key of that substring. Pure ASCII text does not reach OpenCC. Cached per distinct text (an import
    meets the same few thousand names again and again).
    """
    if not text:
        return ""
    s = unicodedata.normalize("NFKC", text)
    if not s.isascii():
        s = _t2s().convert(s)
    return s.casefold().strip()
