"""The project's own exceptions. All derive from :class:`XiangqiError`, a ``ValueError``."""

from __future__ import annotations


class XiangqiError(ValueError):
    """Base class of every error raised for bad input (FEN, moves, records)."""


class FenError(XiangqiError):
    """A FEN string that cannot be read.

    ``field`` names the FEN field (``board``, ``side``, ``counters``) and
    ``position`` is the 0-based character index in the FEN where the problem is.
    """

    def __init__(self, message: str, *, field: str, position: int) -> None:
        super().__init__(f"bad FEN {field} at character {position}: {message}")
        self.field = field
        self.position = position
        self.reason = message


class InvalidMoveError(XiangqiError):
    """Text that is not a move in the expected notation (syntax)."""


class IllegalMoveError(XiangqiError):
    """A well-formed move that is not legal in the position."""


class AmbiguousMoveError(XiangqiError):
    """Move text that fits more than one legal move."""
