"""The user data dir, shared by every layer (the app's store, the games database, the tablebases).

It sits beside the layers, not in one of them, so that ``xiangqi.engine`` and ``xiangqi.db`` find the
same directory as ``xiangqi.app`` without importing it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA_DIR_ENV", "default_data_dir"]

#: Environment variable that moves the user data dir.
DATA_DIR_ENV = "XIANGQI_DATA_DIR"


def default_data_dir() -> Path:
    """``$XIANGQI_DATA_DIR`` if set (and not empty), else the platform's user data dir for ``pyxiangqi``
    (:func:`platformdirs.user_data_dir`). The directory is not created here."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("pyxiangqi", appauthor=False))
