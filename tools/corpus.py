"""Reading the team's CCPD corpus for the tuning tools (tools/fit_win_chance.py, tools/tune_eval.py).

The Chinese Chess Practical Dataset (CCPD, CC BY 4.0, "Yu-Han Tseng and Bo-Nian Chen (2026)") is a
``.tar.gz`` of Big5 Chinese PGN files; a folder such as ``/大師對局/`` holds one kind of game.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable, Iterator

#: The corpus as the team keeps it, relative to the repository's working directory.
CORPUS = "../shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz"
#: PGN result -> score for Red.
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def _is_game(member: tarfile.TarInfo, folder: str) -> bool:
    return member.isfile() and folder in member.name and member.name.endswith(".pgn")


def game_names(path: str, folder: str) -> list[str]:
    """Names (tar member paths) of the ``.pgn`` files under ``folder`` in the archive at ``path``."""
    with tarfile.open(path, "r:gz") as tar:
        return [m.name for m in tar if _is_game(m, folder)]


def read_games(path: str, folder: str,
               keep: Callable[[str], bool] | None = None) -> Iterator[tuple[str, list]]:
    """``(member name, games)`` for each ``.pgn`` file under ``folder`` in the archive at ``path``, in
    archive order, parsed by :func:`xiangqi.core.records.read_records`. ``keep(name)``, when given, is
    asked once per such file before it is read; a file it refuses, or one that cannot be parsed, is
    skipped. Stop early by leaving the loop."""
    from xiangqi.core.records import read_records

    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if not _is_game(member, folder) or (keep is not None and not keep(member.name)):
                continue
            data = tar.extractfile(member)
            if data is None:
                continue
            try:
                recs = read_records(data.read())
            except Exception:  # noqa: BLE001 - a damaged record is skipped, the rest is used
                continue
            yield member.name, recs
