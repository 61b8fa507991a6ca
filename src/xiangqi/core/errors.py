"""The project's own exceptions. All derive from :class:`XiangqiError`, a ``ValueError``."""

from __future__ import annotations

#: How many characters of a user's input an error message quotes (:func:`excerpt`).
EXCERPT_LIMIT = 80


def excerpt(text: str, limit: int = EXCERPT_LIMIT) -> str:
    """``repr(text)`` for an error message, cut to its first ``limit`` characters followed by ``…`` and
    the full length when longer, so that a 5,000-character bad FEN is not echoed whole."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


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


class ReadError(XiangqiError):
    """A problem found while reading a game record, as an exception object (python-chess's ``game.errors``).

    ``kind`` is one of :data:`PROBLEM_KINDS` (``"truncated"``, ``"move"``, ``"variation"``, ``"tag"``,
    ``"fen"``, ``"comment"``, ``"encoding"``, ``"structure"``, ``"other"``); ``ply`` is the 1-based ply
    where it is (None when it is not at a move); ``offset`` the character (text) or byte (binary)
    offset when known. ``str(error)`` is the message that ``game.errors`` holds.
    """

    def __init__(self, message: str, *, kind: str = "other", ply: int | None = None,
                 offset: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.ply = ply
        self.offset = offset


#: The kinds of :class:`ReadError` / :class:`RecordProblem`.
PROBLEM_KINDS = ("truncated", "move", "variation", "tag", "fen", "comment", "encoding", "structure", "other")


class RecordProblem(str):
    """A message on ``game.errors``: a ``str`` (the string form every caller knows) with ``kind``, ``ply``
    and ``offset`` as on :class:`ReadError`; :attr:`error` is the exception object."""

    kind: str
    ply: int | None
    offset: int | None

    def __new__(cls, message: str, kind: str = "other", ply: int | None = None,
                offset: int | None = None) -> RecordProblem:
        self = super().__new__(cls, message)
        self.kind = kind
        self.ply = ply
        self.offset = offset
        return self

    @property
    def error(self) -> ReadError:
        """This problem as a :class:`ReadError` exception (to raise, or to handle like python-chess's)."""
        return ReadError(str(self), kind=self.kind, ply=self.ply, offset=self.offset)

    def __reduce__(self):  # kept through pickling (worker processes of the import)
        return (RecordProblem, (str(self), self.kind, self.ply, self.offset))
