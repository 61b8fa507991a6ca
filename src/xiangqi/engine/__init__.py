"""The built-in xiangqi engine: Numba search core, levels, and its Python API.

>>> from xiangqi.core.board import Board
>>> from xiangqi.engine import Engine, Limit
>>> Engine(hash_mb=16).search(Board(), Limit(depth=3)).move is not None
True

Files follow Stockfish/Pikafish naming: :mod:`.movegen` (move generation,
perft), :mod:`.evaluate`, :mod:`.search` (kernels), :mod:`.tt`,
:mod:`.timeman`, :mod:`.levels`; :mod:`.api` is the driver behind
:class:`Engine`. Kernels compile on first use (cached on disk); call
:func:`warmup` early to do it in a background thread.
"""

from xiangqi.engine.api import Engine, Limit, SearchInfo, SearchResult, is_ready, warmup
from xiangqi.engine.levels import LEVELS, Level, get_level, rank_name

__all__ = ["LEVELS", "Engine", "Level", "Limit", "SearchInfo", "SearchResult", "get_level", "is_ready",
           "rank_name", "warmup"]
