"""The master games shipped with the package: ``data/masters.pgn.xz``, and importing them.

The file holds the 28,225 distinct master games of the Chinese Chess Practical Dataset (CCPD, CC BY 4.0:
Yu-Han Tseng and Bo-Nian Chen (2026)) and of the WXF collections of Hu Ronghua and Liu Dahua (MIT), as
PGN with their tags (Event, Round, Date, Site, Red, Black, Result, ECCO) and the main line in ICCS, no
comments, xz-compressed (3.4 MB; 17 MB of PGN). The opening book (``engine/data/openings.xqbook``) was
built from the same games. How the file is made: ``tools/masters_pack.py``; the credit and licences:
``data/NOTICE.md`` beside it.

On a new install the games database is empty, so the opening explorer and the database browser have
nothing to show: ``xiangqi db import --masters`` or the page's import button (a background job,
:mod:`xiangqi.app.tasks.jobs`) fill it through the ordinary importer
(:func:`xiangqi.db.importer.import_paths`, collection ``master``): identical games are stored once,
so importing again, or importing the CCPD archive after it, adds nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from xiangqi.db.importer import ImportProgress, ImportReport

__all__ = ["MASTER_GAMES", "masters_path", "import_masters"]

#: Games in the shipped file (tools/masters_pack.py printed it; a test counts them).
MASTER_GAMES = 28225


def masters_path() -> Path:
    """The shipped ``masters.pgn.xz`` (inside the installed package). Raises FileNotFoundError when the
    installation lacks it."""
    path = Path(str(resources.files("xiangqi.db") / "data" / "masters.pgn.xz"))
    if not path.is_file():
        raise FileNotFoundError(f"the master games file is missing from the installation: {path}")
    return path


def import_masters(engine: Engine, *, progress: bool | Callable[[ImportProgress], None] = False,
                   jobs: int = 1) -> ImportReport:
    """Import the shipped master games into ``engine`` (collection ``master``); ``progress`` and
    ``jobs`` as for :func:`xiangqi.db.importer.import_paths`. Returns its report (about 30 s on one
    core; a second run finds every game already stored and adds none)."""
    from xiangqi.db.importer import import_paths

    return import_paths(engine, [masters_path()], collection="master", progress=progress, jobs=jobs)
