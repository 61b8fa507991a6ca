"""FEN/EPD position lists, including 象棋巫师's endgame sets with mixed GBK|Big5 names.

One position per line: ``FEN`` or ``FEN ; name`` (FORMATS.md §2). 象棋巫师 (xqwizard
``ENDGAMES/*.EPD``) writes ``FEN ; <GBK simplified name>|<Big5 traditional name>``: two encodings
in one line, so each line is split as bytes and each half decoded on its own. Lines starting
with ``#`` and blank lines are skipped.
"""

from __future__ import annotations

import dataclasses
import os

from xiangqi.core.board import Board
from xiangqi.core.encoding import decode_bytes, read_source
from xiangqi.core.errors import FenError, XiangqiError
from xiangqi.core.pgn import Game

__all__ = ["EpdEntry", "EpdError", "read_epd", "write_epd", "epd_to_games"]


class EpdError(XiangqiError):
    """A position list that cannot be read at all (unreadable file, no position in it)."""


@dataclasses.dataclass
class EpdEntry:
    """One line of a position list: ``fen`` (normalised six-field FEN), ``name`` (simplified or only
    name), ``name_traditional`` (the Big5 half of a 象棋巫师 name, else ""), ``line`` (1-based)."""

    fen: str
    name: str = ""
    name_traditional: str = ""
    line: int = 0


def _decode(part: bytes, prefer: str) -> str:
    for enc in ("utf-8", prefer):
        try:
            return part.decode(enc).strip()
        except UnicodeDecodeError:
            continue
    try:
        return decode_bytes(part)[0].strip()
    except XiangqiError:
        return part.decode(prefer, errors="replace").strip()


def read_epd(source: str | os.PathLike[str] | bytes, errors: list[str] | None = None) -> list[EpdEntry]:
    """Positions of a FEN/EPD list (a path or the bytes).

    Lines with a bad FEN are skipped and described in ``errors`` (when a list is given).
    Raises :class:`EpdError` when the file cannot be read or holds no position.
    """
    data = read_source(source, EpdError)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out: list[EpdEntry] = []
    problems = errors if errors is not None else []
    for number, raw in enumerate(data.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        fen_part, _, name_part = line.partition(b";")
        try:
            fen_text = fen_part.decode("ascii").strip()
        except UnicodeDecodeError:
            problems.append(f"line {number}: the FEN is not ASCII text")
            continue
        try:
            board = Board(fen_text)
        except FenError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        simplified, _, traditional = name_part.strip().partition(b"|")
        out.append(EpdEntry(board.fen(), _decode(simplified, "gb18030"),
                            _decode(traditional, "big5") if traditional else "", number))
    if not out:
        detail = f": {problems[0]}" if problems else ""
        raise EpdError(f"no position found in the list{detail}")
    return out


def write_epd(entries: list[EpdEntry], *, encoding: str = "utf-8", mixed: bool = False) -> bytes:
    """The bytes of a position list: ``FEN ; name`` per line (CRLF when ``mixed``).

    ``mixed=True`` writes 象棋巫师's form ``FEN ; GBK-name|Big5-name``; otherwise names are
    encoded with ``encoding`` and the traditional name, if any, follows after ``|``.
    """
    lines = []
    for e in entries:
        if mixed:
            name = e.name.encode("gb18030", errors="replace")
            if e.name_traditional:
                name += b"|" + e.name_traditional.encode("big5", errors="replace")
        else:
            text = e.name + (f"|{e.name_traditional}" if e.name_traditional else "")
            name = text.encode(encoding, errors="replace")
        lines.append(e.fen.encode("ascii") + (b" ; " + name if name else b""))
    sep = b"\r\n" if mixed else b"\n"
    return sep.join(lines) + sep


def epd_to_games(entries: list[EpdEntry]) -> list[Game]:
    """One move-less :class:`Game` per position (``FEN`` header, ``Event`` = the name)."""
    games = []
    for e in entries:
        game = Game({"Event": e.name})
        if e.name_traditional:
            game.headers["Title"] = e.name_traditional
        game.setup(e.fen)
        games.append(game)
    return games
