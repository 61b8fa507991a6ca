"""Values of the ``games`` table's columns that both readers of a game compute.

A game row is made by the reader (:func:`xiangqi.db.importer.game_row`) or, for plain PGN, by its fast
path (:func:`xiangqi.db.fastimport.fast_row`); both check the ``ECCO`` tag with :data:`ECCO_RE` and
fill ``ecco_computed`` with :func:`computed_ecco` (the ``Date`` column: :mod:`xiangqi.db.dates`). They
live here, below both, so the fast path does not import the reader that calls it
(tests/test_layers.py, issue 30).
"""

from __future__ import annotations

import re

__all__ = ["ECCO_RE", "computed_ecco"]

#: A well-formed ECCO code (``A00`` … ``E99``, any case): a tag that is not one goes to no column.
ECCO_RE = re.compile(r"^[A-Ea-e]\d\d$")


def computed_ecco(moves: list) -> str | None:
    """The ECCO code of a main line (core :class:`~xiangqi.core.board.Move` objects) from the standard
    start, by :func:`xiangqi.study.ecco.classify` (the file's ``[ECCO]`` tag is not read; it goes to the
    ``ecco`` column). About 80 µs a game; ``A00`` for no move."""
    from xiangqi.study.ecco import classify  # imported on first use: not on every CLI start

    found = classify(moves)
    return found.code if found is not None else None
