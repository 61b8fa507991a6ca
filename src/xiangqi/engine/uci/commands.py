"""An engine's command line made absolute before the engine is started: :func:`resolve_command`.

Engines run in their program's folder (where they look for their networks and books: the app's added
engines, :mod:`xiangqi.app.opponents.engines`; ``xiangqi match``), so a program or an argument given
relative to the folder the user typed it in must be made absolute first, against that folder. Used by
the app's engine list and by ``xiangqi match`` (this module is in the engine layer so that both can).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from xiangqi.core.errors import XiangqiError

__all__ = ["EngineSetupError", "resolve_command"]

#: Where Debian and Ubuntu install engines (fairy-stockfish, sjaakii), searched after $PATH.
_GAMES_DIRS = ("/usr/games", "/usr/local/games")
#: The longest program path, and the longest total of the arguments, accepted (characters).
_MAX_ARG_CHARS = 4096


class EngineSetupError(XiangqiError):
    """An engine cannot be added, changed or used: a missing program, a failed handshake, a bad
    option value, an unknown engine id. The message says what and where."""


def _absolute_arg(arg: str, base: Path) -> str:
    """``arg`` with a relative path in it made absolute against ``base`` when that path exists there:
    the whole argument (``nets/big.nnue``, ``./book.dat``, ``~/eng/net``) or the value of an
    ``--opt=PATH`` / ``NAME=PATH`` argument. Anything else (flags, words, numbers, paths that do
    not exist in ``base``) is kept as given."""
    def fix(text: str) -> str | None:
        if not text or text.startswith("-"):
            return None
        if Path(text).is_absolute():
            return None  # already where it is
        p = base / os.path.expanduser(text)
        try:
            return os.path.abspath(p) if p.exists() else None
        except (OSError, ValueError):
            return None

    whole = fix(arg)
    if whole is not None:
        return whole
    name, eq, value = arg.partition("=")
    if eq and name and (fixed := fix(value)) is not None:
        return f"{name}={fixed}"
    return arg


def resolve_command(command: str, args: Sequence[str] = (), *, base: str | os.PathLike[str] | None = None
                    ) -> list[str]:
    """``[program, *args]`` with the program made an absolute path: ``command`` is a path (``~``
    expanded; relative to ``base``) or a name found on ``$PATH``, in ``/usr/games``
    (``fairy-stockfish``) or in ``base``. ``base``: the folder the user gave the command from
    (default: the current working directory, where ``xiangqi play`` was started); an argument that
    names a file or folder relative to it is stored as an absolute path too (:func:`_absolute_arg`),
    because the engine runs in its program's folder (where engines look for their networks and
    books), not in ``base``. Raises :class:`EngineSetupError` when the program is empty, not found,
    a directory, or not executable."""
    base_dir = Path(os.path.abspath(base if base is not None else os.getcwd()))
    command = (command or "").strip()
    if not command:
        raise EngineSetupError("the engine's program is empty: give its path, "
                               "e.g. /usr/games/fairy-stockfish")
    if len(command) > _MAX_ARG_CHARS or sum(len(a) for a in args) > _MAX_ARG_CHARS:
        raise EngineSetupError("the engine's command line is too long")
    if "\x00" in command or any("\x00" in a for a in args):
        raise EngineSetupError("the engine's command line holds a NUL character")
    path = Path(os.path.expanduser(command))
    if not path.is_absolute() and os.sep not in command:
        # Debian and Ubuntu install engines (fairy-stockfish, sjaakii) in /usr/games, which a server
        # started outside a login shell may not have on its PATH
        search = os.pathsep.join([os.environ.get("PATH", os.defpath), *_GAMES_DIRS])
        found = shutil.which(command, path=search)
        if found is None and (base_dir / command).is_file() and os.access(base_dir / command, os.X_OK):
            found = str(base_dir / command)  # a program in the folder the user started from
        if found is None:
            raise EngineSetupError(f"no program named {command!r} on the PATH nor in {base_dir}; "
                                   "give the engine's full path")
        path = Path(found)
    elif not path.is_absolute():
        path = base_dir / path
    # absolute, but links kept: a virtualenv's python is a link whose own path makes it that venv's
    path = Path(os.path.abspath(path))
    if not path.exists():
        raise EngineSetupError(f"{path}: no such file")
    if path.is_dir():
        raise EngineSetupError(f"{path} is a folder, not a program")
    if not os.access(path, os.X_OK):
        raise EngineSetupError(f"{path} is not executable (chmod +x, or give the program that runs it)")
    return [str(path), *(_absolute_arg(a, base_dir) for a in args)]
