"""Any game-record file in, any out: format detection and dispatch to the PGN, XQF, DhtmlXQ and EPD modules.

This module imports the readers and no reader imports it: :func:`read_game` (what
:func:`xiangqi.read_game` is) reads a file path in any format here and leaves text and streams to
:func:`xiangqi.core.pgn.read_game`.

Formats (FORMATS.md): ``pgn`` (Chinese/WXF/ICCS move text), ``xqf`` (binary, one game), ``dhtmlxq``
(UBB text), ``epd``/``fen`` (position lists). Detection: an ``XQ`` magic means XQF; otherwise
the text is decoded (:mod:`xiangqi.core.encoding`) and ``[DhtmlXQ`` means DhtmlXQ, a file of FEN
lines means EPD, anything else is read as PGN.
"""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path
from typing import BinaryIO, TextIO

from xiangqi.core.dhtmlxq import read_dhtmlxq_games, write_dhtmlxq
from xiangqi.core.encoding import decode_lenient, encode_text, read_source
from xiangqi.core.epd import EpdEntry, epd_to_games, read_epd, write_epd
from xiangqi.core.errors import RecordProblem, XiangqiError
from xiangqi.core.pgn import Game, is_path, read_games_at, replacement_places, write_game
from xiangqi.core.pgn import read_game as read_pgn_game
from xiangqi.core.xqf import read_xqf, write_xqf

__all__ = ["ACCEPTED", "FORMATS", "GB_ENCODINGS", "RecordError", "is_gb_encoding", "binary_kind",
           "detect_format", "format_from_path",
           "game_label", "read_game", "read_records", "start_problem", "write_records"]

#: Record formats and the file extensions that select them.
FORMATS = {"pgn": (".pgn", ".txt"), "xqf": (".xqf",), "dhtmlxq": (".ubb", ".dhtml", ".dhtmlxq"),
           "epd": (".epd", ".fen")}
_FEN_LINE = re.compile(rb"^\s*[rnbakcpheRNBAKCPHE1-9]+(/[rnbakcpheRNBAKCPHE1-9]+){9}(\s|;|$)")

#: Files that are no game record, by their signature (PNG spec §5.2; JPEG/JFIF SOI marker FF D8 FF;
#: GIF87a/89a; PDF 1.7 §7.5.2 "%PDF-"; ZIP APPNOTE local header "PK\\3\\4"; gzip RFC 1952 1F 8B;
#: WebP = RIFF….WEBP): ``(prefix, offset of a second mark, second mark, what it is)``.
_NOT_RECORDS = ((b"\x89PNG\r\n\x1a\n", 0, b"", "a PNG image"), (b"\xff\xd8\xff", 0, b"", "a JPEG image"),
                (b"GIF87a", 0, b"", "a GIF image"), (b"GIF89a", 0, b"", "a GIF image"),
                (b"%PDF-", 0, b"", "a PDF document"), (b"PK\x03\x04", 0, b"", "a ZIP archive"),
                (b"\x1f\x8b", 0, b"", "a gzip archive"), (b"RIFF", 8, b"WEBP", "a WebP image"))
#: What the page and the CLI can open, named in the refusal of a file that is no record.
ACCEPTED = "PGN, XQF, DhtmlXQ/UBB, EPD, FEN"


def binary_kind(data: bytes) -> str | None:
    """What a file that is certainly no game record is (``"a PNG image"``, …) by its signature, else None."""
    for prefix, at, mark, kind in _NOT_RECORDS:
        if data.startswith(prefix) and (not mark or data[at:at + len(mark)] == mark):
            return kind
    return None


class RecordError(XiangqiError):
    """A record file that cannot be read or written in the asked format."""


def game_label(game: Game, number: int) -> str:
    """How a message names a game of a file: ``game 2 (全国赛: 张三 vs 李四)`` from its 1-based ``number``
    and, when present, its Event, Red and Black tags."""
    h = game.headers
    players = " vs ".join(p for p in (h.get("Red", "").strip(), h.get("Black", "").strip()) if p)
    parts = [p for p in (h.get("Event", "").strip(), players) if p]
    return f"game {number}" + (f" ({': '.join(parts)})" if parts else "")


def start_problem(game: Game) -> str | None:
    """None when the game's start position can be set up, else why not: the reader's ``fen`` problem
    (``FEN tag: bad FEN board at character 0: ...``; every reader records one) or the FenError of its
    ``FEN`` header."""
    try:
        game.board()
    except XiangqiError as exc:
        told = next((e for e in game.errors if getattr(e, "kind", None) == "fen"), None)
        return str(told) if told is not None else f"FEN tag: {exc}"
    return None


def format_from_path(path: str | os.PathLike[str]) -> str | None:
    """The format named by a file's extension (``.pgn`` → ``"pgn"``, …), or None if unknown."""
    ext = Path(path).suffix.lower()
    for name, exts in FORMATS.items():
        if ext in exts:
            return name
    return None


def _utf16_as_utf8(data: bytes) -> bytes:
    """``data`` re-encoded as UTF-8 when it is UTF-16 text with its byte-order mark (Windows
    Notepad's "Unicode"), else ``data`` itself: the format checks below look for ASCII bytes
    (``[DhtmlXQ``, FEN lines), which UTF-16 spreads over two bytes each. A UTF-16 BOM followed by
    bytes that are no UTF-16 text is left alone (the decoder reports it)."""
    if not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data
    try:
        return data.decode("utf-16").encode("utf-8")
    except UnicodeError:
        return data


def detect_format(data: bytes) -> str:
    """The format of record bytes by content: ``xqf``, ``dhtmlxq``, ``epd`` or ``pgn``.

    EPD when every one of the first 20 lines that is not blank or a ``#`` comment is a FEN line.
    UTF-16 text (with its BOM) is checked as the text it holds.
    """
    if data[:2] == b"XQ":
        return "xqf"
    data = _utf16_as_utf8(data)
    if b"[DhtmlXQ" in data[:1 << 16] or b"[dhtmlxq" in data[:1 << 16].lower():
        return "dhtmlxq"
    lines = [ln for ln in data.splitlines()[:20] if ln.strip() and not ln.lstrip().startswith(b"#")]
    if lines and all(_FEN_LINE.match(ln) for ln in lines):
        return "epd"
    return "pgn"


def read_records(source: str | os.PathLike[str] | bytes, *, fmt: str | None = None,
                 encoding: str | None = None) -> list[Game]:
    """Every game in a record file (path or bytes), in ``fmt`` or the detected format.

    ``.txt`` files holding ``[DhtmlXQ`` are read as DhtmlXQ; a path ending in ``.epd``/``.fen``
    is read as EPD even when some of its lines are bad. Problems inside games are on each
    ``game.errors`` (an EPD list's skipped lines on the first game's); raises :class:`RecordError`
    (or another :class:`XiangqiError`) when the file cannot be read at all or holds no game, and
    before any decoding when its signature shows a picture, PDF or archive (:func:`binary_kind`).
    """
    data = read_source(source, RecordError)
    name = "<data>" if isinstance(source, bytes | bytearray) else os.fspath(source)
    kind = binary_kind(data)
    if kind is not None:  # before any decoding: its bytes read as text are only garbage
        where = "" if name == "<data>" else f"{name}: "
        raise RecordError(f"{where}this is {kind}, not a game record; accepted formats: {ACCEPTED}")
    if fmt != "xqf":
        data = _utf16_as_utf8(data)  # one decoding for every text format (EPD reads bytes)
    kind = fmt or detect_format(data)
    if kind == "pgn" and detect_format(data) == "dhtmlxq":
        kind = "dhtmlxq"  # .txt files from dpxq hold UBB text
    if fmt is None and kind == "pgn" and name != "<data>" and format_from_path(name) == "epd":
        kind = "epd"  # a FEN list with a bad line is still a FEN list
    if kind == "xqf":
        return [read_xqf(data)]
    if kind in ("epd", "fen"):
        problems: list[str] = []
        games = epd_to_games(read_epd(data, problems))
        games[0].errors.extend(f"EPD {p}" for p in problems)  # read_epd raised if no game
        return games
    text, enc, bad = decode_lenient(data, encoding)
    if kind == "dhtmlxq":
        games = read_dhtmlxq_games(text)
        for byte, _char in bad:
            games[0].errors.append(RecordProblem(f"encoding: byte {byte} is not valid {enc}: read as U+FFFD",
                                                 "encoding", None, byte))
        return games
    if kind != "pgn":
        raise RecordError(f"unknown record format {kind!r} (expected one of {', '.join(FORMATS)})")
    at = read_games_at(text)
    games = [g for g, _start in at]
    if bad and games:
        _place_bad_bytes(at, bad, enc)
    if not any(g.variations or any(v for k, v in g.headers.items() if k not in ("Game", "Result"))
               for g in games):
        detail = f": {games[0].errors[0]}" if games and games[0].errors else ""
        where = "" if name == "<data>" else f"{name}: "  # bytes have no name to give
        raise RecordError(f"{where}no game found (not a PGN, XQF, DhtmlXQ or EPD record){detail}")
    return games


def read_game(source: str | os.PathLike[str] | TextIO | BinaryIO, *,
              encoding: str | None = None) -> Game | None:
    """One game from ``source``: PGN text, an open text or binary stream, or a file path.

    A path (``os.PathLike``, or a one-line string naming an existing file or ending in a record
    extension such as ``.pgn``/``.xqf``: :func:`xiangqi.core.pgn.is_path`) gives the first game of
    the file in whatever format it is (:func:`read_records`, with ``encoding`` if given); a file
    that cannot be read raises :class:`RecordError` or another
    :class:`~xiangqi.core.errors.XiangqiError`. Text and streams are read as PGN by
    :func:`xiangqi.core.pgn.read_game` (one game per call on a stream; None at its end), which
    never raises for bad content: problems are on ``game.errors`` / ``game.problems``.
    """
    if is_path(source):
        games = read_records(os.fspath(source), encoding=encoding)
        return games[0] if games else None
    return read_pgn_game(source, encoding=encoding)  # type: ignore[arg-type]  # not a path here


#: Encodings of the old Chinese programs (象棋巫师, XQStudio): their Chinese PGN gets full-width black digits.
GB_ENCODINGS = frozenset({"gbk", "gb2312", "gb18030", "hz"})


def is_gb_encoding(encoding: str) -> bool:
    """True for GBK and its relatives (GB2312, GB18030, cp936), whatever the spelling of the name."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name in GB_ENCODINGS or name in ("cp936", "ms936")


def _place_bad_bytes(at: list[tuple[Game, int]], bad: list[tuple[int, int]], enc: str) -> None:
    """Add an ``encoding`` problem to the game holding each replaced byte, naming the byte, game and place."""
    seen: dict[int, int] = {}
    for byte, char in bad:
        i = max((k for k, (_g, start) in enumerate(at) if start <= char), default=0)
        game = at[i][0]
        places = replacement_places(game)
        n = seen.get(i, 0)
        seen[i] = n + 1
        place = places[n] if n < len(places) else "the move text"
        m = re.search(r"ply (\d+)", place)
        game.errors.append(RecordProblem(
            f"encoding: byte {byte} (game {i + 1}, {place}) is not valid {enc}: read as U+FFFD, the rest "
            "kept",
            "encoding", int(m.group(1)) if m else None, byte))


def write_records(games: list[Game], fmt: str, *, notation: str = "chinese", encoding: str = "utf-8",
                  fullwidth_black: bool | None = None, traditional: bool = False,
                  warnings: list[str] | None = None) -> bytes:
    """The bytes of ``games`` in ``fmt`` (``pgn``, ``xqf``, ``dhtmlxq``, ``epd``).

    PGN and DhtmlXQ hold several games (separated by a blank line); XQF holds exactly one (raises
    :class:`RecordError` otherwise); EPD writes each game's start position with its ``Event`` as
    the name. Text is encoded with ``encoding`` (UTF-8 by default, ``gbk`` for old programs);
    ``fullwidth_black`` (象棋巫师's ``马２进３``) and ``traditional`` apply to Chinese PGN move text;
    ``fullwidth_black=None`` (the default) means full-width for a GBK-family ``encoding`` and ASCII
    otherwise: 象棋巫师's reader takes every Chinese move as 8 GBK bytes (4 double-byte characters, xqbase
    ``pgnfile.cpp``), so an ASCII black digit makes it read the wrong move without a word.
    XQF cannot hold every header, long strings or NAGs: when ``warnings`` is a list, what is dropped or
    cut is appended to it (:func:`xiangqi.core.xqf.xqf_losses`). Raises :class:`RecordError` naming the
    game (:func:`game_label`) when one's start position is unreadable.
    """
    if fullwidth_black is None:
        fullwidth_black = is_gb_encoding(encoding)
    if fmt == "xqf":
        if len(games) != 1:
            raise RecordError(f"an XQF file holds one game, got {len(games)}: convert them one at a time")
        return write_xqf(games[0], warnings=warnings)
    for number, game in enumerate(games, 1):  # name the game whose start cannot be written
        problem = start_problem(game)
        if problem is not None:
            raise RecordError(f"{game_label(game, number)}: {problem}")
    if fmt == "pgn":
        texts = (write_game(g, notation=notation, fullwidth_black=fullwidth_black, traditional=traditional)
                 for g in games)
        return encode_text("\n".join(texts), encoding)
    if fmt == "dhtmlxq":
        return encode_text("\n".join(write_dhtmlxq(g) for g in games), encoding)
    if fmt in ("epd", "fen"):
        entries = [EpdEntry(g.board().fen(), g.headers.get("Event", "")) for g in games]
        return write_epd(entries, encoding=encoding)
    raise RecordError(f"unknown record format {fmt!r} (expected one of {', '.join(FORMATS)})")
