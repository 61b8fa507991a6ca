"""Importing record files into the games database: files, folders, tarballs; dedupe; the position index.

:func:`import_paths` reads every record file it is given (PGN with one or many games, XQF,
DhtmlXQ/UBB, EPD; folders recursively; ``.tar``/``.tar.gz``/``.tgz`` archives member by member,
without unpacking them), and stores each game once with its position index. It never aborts on bad
input: a file that cannot be read or a game that cannot be played is reported as a :class:`Problem`
(file, game index, reason) and skipped, and the import goes on. It can be re-run on the same files:
games already stored are recognised by their content hash and skipped.

Identical games: the content hash is SHA-1 of the start position (board and side to move) and the main
line in ICCS, so the same game in two files, or imported twice, is stored once (the first source
wins; headers and comments of later copies are not merged). Before parsing, a PGN game's text is
fingerprinted (its decoded move text plus its ``FEN`` and ``Format`` tags, which fix how the moves
read); a text already seen in this run is a duplicate without being parsed again, which halves the
work on the CCPD set (53.7k files, about 31k distinct move texts).

Which games are skipped: EPD/FEN position lists (one problem for the file); a game with no move,
with an unreadable start position, or whose main line stops at an unreadable or illegal move (or
is cut short: a problem of kind ``truncated`` in any format, e.g. a PGN that ends inside a comment or
a variation) is skipped with the reader's message. Other reader messages (a broken variation, an
unreadable tag) are reported as warnings and the game is stored. Only the main line is stored;
variations are not.

Speed: plain tar and tar.gz archives are read by :func:`_plain_tar_members` (the rest by :mod:`tarfile`);
plain PGN games are read by :mod:`xiangqi.db.fastimport` (one compiled pass per game; the
rest by the general reader); a game's index rows travel as numpy arrays (from worker processes too) and
a chunk of :data:`CHUNK` games is assembled, sorted into primary-key order and deduplicated in numpy
(:func:`_index_rows`), then written in one transaction: on SQLite with ``executemany`` (the games rows
too, their ids read back by hash), the writing connection with ``synchronous=OFF``, no foreign-key
checks and a 256 MiB cache; on PostgreSQL (psycopg 3) the index rows by ``COPY`` (the boards through a
temporary table, for ``ON CONFLICT DO NOTHING``). After an import that added master games the
explorer's aggregates are rebuilt (:func:`xiangqi.db.aggregate.rebuild`, a few seconds).
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import dataclasses
import fnmatch
import functools
import hashlib
import itertools
import json
import os
import re
import sys
import tarfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
from sqlalchemy import Engine, insert, select, text

from xiangqi.core import encoding as _encoding
from xiangqi.core.board import STARTING_BOARD_FEN, Board
from xiangqi.core.encoding import COMMON_CHARS, decode_lenient
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import RESULTS, Game, _parse_game_text, iter_game_texts
from xiangqi.core.records import FORMATS, detect_format, format_from_path, read_records
from xiangqi.db import aggregate
from xiangqi.db import keys as _keys
from xiangqi.db.columns import ECCO_RE, computed_ecco
from xiangqi.db.dates import normalise_date
from xiangqi.db.fastimport import ICCS_MOVES, WIDTH, fast_row
from xiangqi.db.names import search_key
from xiangqi.db.schema import boards, games, positions

__all__ = ["CHUNK", "Problem", "ImportReport", "ImportProgress", "import_paths", "iter_sources",
           "input_bytes", "game_row", "content_hash", "computed_ecco"]

#: Games per transaction (5,000: on the whole corpus 18 CPU s of writing instead of 24 with 1,000, each
#: chunk touching most pages of the index B-trees; a crash loses at most one chunk, and a re-run goes on).
CHUNK = 5000
_BATCH = 100  # game texts per unit of work (per worker task)
_RECORD_EXTS = {ext for exts in FORMATS.values() for ext in exts}
_ARCHIVE_EXTS = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
# reader messages that mean the main line (or the start) is not what the file says
_FATAL = ("main line", "FEN tag", "start position", "truncated", "end early", "cut short", "binit",
          "not a list of 4-digit moves", "is off the board", "branch 0,")
_HEADER_RE = re.compile(r"\A(?:[ \t\ufeff]*\[[^\n]*\][ \t\r]*\n|[ \t\r]*\n)*")
_KEEP_TAG_RE = re.compile(r"^\s*\[\s*(?:FEN|Format)\b[^\n]*", re.MULTILINE)
#: Plain PGN games go through :mod:`xiangqi.db.fastimport` (the same rows, several times faster);
#: False reads every game with the general reader (the tests compare both).
_FAST = True


@dataclasses.dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in the input: ``source`` (file, or ``archive::member``), ``index`` (0-based
    game in that file, None for the whole file), ``reason``; ``skipped`` is False for a warning on a
    stored game."""

    source: str
    index: int | None
    reason: str
    skipped: bool = True

    def __str__(self) -> str:
        where = self.source if self.index is None else f"{self.source} game {self.index + 1}"
        return f"{where}: {'skipped' if self.skipped else 'warning'}: {self.reason}"


@dataclasses.dataclass(slots=True)
class ImportReport:
    """Counts of one import: ``files`` read, ``games`` found in them, ``added`` (new rows),
    ``duplicates`` (already stored or seen earlier in the run), ``skipped`` (bad games), ``problems``,
    ``positions`` (index rows written) and ``seconds`` of wall time."""

    files: int = 0
    games: int = 0
    added: int = 0
    duplicates: int = 0
    skipped: int = 0
    positions: int = 0
    seconds: float = 0.0
    problems: list[Problem] = dataclasses.field(default_factory=list)

    def summary(self) -> str:
        """One line: the counts and the speed in games read per second."""
        rate = self.games / self.seconds if self.seconds else 0.0
        return (f"{self.files} files, {self.games} games: {self.added} added, {self.duplicates} duplicates, "
                f"{self.skipped} skipped, {self.positions} positions indexed, {self.seconds:.1f} s "
                f"({rate:.0f} games/s)")


def _is_archive(name: str) -> bool:
    return name.lower().endswith(_ARCHIVE_EXTS)


#: A single compressed record file (``games.pgn.xz``): its suffix -> the module that opens it.
_COMPRESSED = {".gz": "gzip", ".xz": "lzma", ".bz2": "bz2"}


def _compression(name: str) -> str | None:
    """The module name (gzip, lzma, bz2) when ``name`` is a compressed record file (not an archive)."""
    low = name.lower()
    if _is_archive(low):
        return None
    for ext, module in _COMPRESSED.items():
        if low.endswith(ext) and Path(low[: -len(ext)]).suffix in _RECORD_EXTS:
            return module
    return None


def _wanted_file(path: Path, explicit: bool, glob: str | None) -> bool:
    """Whether :func:`iter_sources` reads ``path`` (met in a folder unless ``explicit``)."""
    name = os.fspath(path)
    if explicit or _is_archive(name):
        return True
    if path.suffix.lower() not in _RECORD_EXTS and _compression(name) is None:
        return False
    return glob is None or fnmatch.fnmatch(name, glob)


def input_bytes(paths: Iterable[str | os.PathLike[str]], *, glob: str | None = None) -> int:
    """Bytes on disk of the files :func:`iter_sources` would read under ``paths`` (archives and
    compressed files counted as stored): the total of an import's progress. Unreadable paths count 0."""
    total = 0

    def size(path: Path) -> int:
        try:
            return path.stat().st_size
        except OSError:
            return 0

    for p in paths:
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                total += sum(size(Path(root) / f) for f in files if _wanted_file(Path(root) / f, False, glob))
        elif path.exists():
            total += size(path)
    return total


def iter_sources(paths: Iterable[str | os.PathLike[str]], *, glob: str | None = None,
                 problems: list[Problem] | None = None,
                 on_read: Callable[[int], None] | None = None) -> Iterator[tuple[str, bytes]]:
    """Yield ``(name, bytes)`` of every record file under ``paths``.

    Folders are walked recursively in name order, keeping files with a record extension
    (``.pgn .txt .xqf .ubb .dhtml .dhtmlxq .epd .fen``) and archives; archives (``.tar``, ``.tar.gz``,
    ``.tgz``, ``.tar.bz2``, ``.tar.xz``) are read member by member, keeping members with a record
    extension, named ``archive::member``. A file named on the command line is read whatever its
    extension. ``glob`` keeps only names (archive members, or paths) matching it (fnmatch, e.g.
    ``*大師對局*``). A compressed record file (``.pgn.gz``, ``.pgn.xz``, ``.pgn.bz2``, any record
    extension) is read decompressed, under its own name. Unreadable paths are appended to ``problems``
    and skipped. ``on_read(n)``, when given, is told each time ``n`` more bytes of the files on disk have
    been read (compressed bytes for archives; the sum over the run is :func:`input_bytes`), before the
    sources they hold are yielded: an import's progress.
    """
    problems = problems if problems is not None else []
    read = on_read or (lambda _n: None)

    def wanted(name: str) -> bool:
        return glob is None or fnmatch.fnmatch(name, glob)

    def from_file(path: Path, explicit: bool) -> Iterator[tuple[str, bytes]]:
        name = os.fspath(path)
        if _is_archive(name):
            yield from from_archive(path)
            return
        if not _wanted_file(path, explicit, glob):
            return
        try:
            raw = path.read_bytes()
        except OSError as exc:
            problems.append(Problem(name, None, f"cannot read: {exc.strerror or exc}"))
            return
        read(len(raw))
        module = _compression(name)
        if module is not None:
            import importlib
            import lzma

            try:
                raw = importlib.import_module(module).decompress(raw)
            except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:  # gzip.BadGzipFile, bz2's OSError
                problems.append(Problem(name, None, f"cannot decompress ({module}): {exc}"))
                return
        yield name, raw

    def from_archive(path: Path) -> Iterator[tuple[str, bytes]]:
        name = os.fspath(path)
        told = 0  # bytes of the archive reported to on_read

        def tell_read(n: int) -> None:
            nonlocal told
            told += n
            read(n)

        try:
            yield from members(path, name, tell_read)
        finally:
            with contextlib.suppress(OSError):
                rest = path.stat().st_size - told
                if rest > 0:
                    read(rest)

    def members(path: Path, name: str, tell_read: Callable[[int], None]) -> Iterator[tuple[str, bytes]]:
        done = 0  # members yielded by the fast reader, when it hands over to tarfile
        if name.lower().endswith((".tar", ".tar.gz", ".tgz")):
            try:
                for member_name, data in _plain_tar_members(path, tell_read):
                    if Path(member_name).suffix.lower() not in _RECORD_EXTS or not wanted(member_name):
                        continue
                    done += 1
                    yield f"{name}::{member_name}", data
                return
            except _NotPlainTar:
                pass
            except OSError as exc:
                problems.append(Problem(name, None, f"cannot read the archive: {exc}"))
                return
        try:
            with tarfile.open(path) as tar:
                for member in tar:
                    if not member.isfile() or Path(member.name).suffix.lower() not in _RECORD_EXTS:
                        continue
                    if not wanted(member.name):
                        continue
                    fh = tar.extractfile(member)
                    if fh is not None:
                        if done:  # the fast reader gave this one already
                            done -= 1
                            continue
                        yield f"{name}::{member.name}", fh.read()
        except (OSError, tarfile.TarError, EOFError) as exc:
            problems.append(Problem(name, None, f"cannot read the archive: {exc}"))

    for p in paths:
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for f in sorted(files):
                    yield from from_file(Path(root) / f, False)
        elif path.exists():
            yield from from_file(path, True)
        else:
            problems.append(Problem(os.fspath(path), None, "no such file or folder"))


class _NotPlainTar(Exception):
    """The archive holds something :func:`_plain_tar_members` leaves to :mod:`tarfile`."""


_TAR_REGULAR = (b"0", b"\0", b"7")  # tarfile's regular files (its GNU sparse type goes to tarfile)
_TAR_OTHER = (b"1", b"2", b"3", b"4", b"5", b"6")  # links, devices, folders, FIFOs: no data blocks read
_TAR_READ = 1 << 20


def _plain_tar_members(path: Path,
                       on_read: Callable[[int], None] | None = None) -> Iterator[tuple[str, bytes]]:
    """``(name, bytes)`` of the regular files of a plain ``.tar`` or gzip-compressed tar, in order.

    The same members as :mod:`tarfile` gives (names decoded as UTF-8 with ``surrogateescape``, the POSIX
    ``prefix`` field joined), about 8x faster on the CCPD tarball (4.3 CPU s -> 0.5, mostly the gzip
    inflate): :mod:`tarfile` builds a ``TarInfo`` with a dozen fields per member in Python. Only the
    common case is read here: ustar or GNU headers with a valid checksum, regular files, folders and
    links. Anything else (pax or GNU long-name headers, sparse files, a bad checksum, a cut archive)
    raises :class:`_NotPlainTar`, and the caller goes on with :mod:`tarfile` from where this stopped
    (it skips the members already given), so what is read never differs from :mod:`tarfile`'s answer.
    ``on_read(n)`` is told of each ``n`` bytes read from the file.
    """
    import zlib

    read = on_read or (lambda _n: None)

    with open(path, "rb") as fh:
        head = fh.read(2)
        fh.seek(0)
        inflate = zlib.decompressobj(wbits=47) if head == b"\x1f\x8b" else None
        buf = bytearray()
        eof = False

        def need(n: int) -> bool:
            nonlocal eof
            while len(buf) < n and not eof:
                raw = fh.read(_TAR_READ)
                read(len(raw))
                if not raw:
                    eof = True
                    if inflate is not None:
                        buf.extend(inflate.flush())
                    break
                if inflate is None:
                    buf.extend(raw)
                    continue
                buf.extend(inflate.decompress(raw))
                if inflate.eof and (inflate.unused_data or fh.read(1)):
                    raise _NotPlainTar  # several gzip members: tarfile's gzip reader takes them
            return len(buf) >= n

        pos = 0  # offset in buf
        while True:
            if pos >= _TAR_READ:
                del buf[:pos]
                pos = 0
            if not need(pos + 512):
                if pos == len(buf) and (inflate is None or inflate.eof):
                    return  # end of the data without the end-of-archive blocks: tarfile stops there too
                raise _NotPlainTar
            header = bytes(buf[pos:pos + 512])
            if header.count(0) == 512:
                return  # end of archive
            if header[257:263] not in (b"ustar\0", b"ustar "):
                raise _NotPlainTar
            try:
                size = int(header[124:136].split(b"\0", 1)[0].strip() or b"0", 8)
                chksum = int(header[148:156].split(b"\0", 1)[0].strip(), 8)
            except ValueError:
                raise _NotPlainTar from None
            if chksum != sum(header) - sum(header[148:156]) + 256:
                raise _NotPlainTar
            kind = header[156:157]
            pos += 512
            if kind in _TAR_OTHER:
                continue
            if kind not in _TAR_REGULAR:
                raise _NotPlainTar
            name = header[:100].split(b"\0", 1)[0]
            if header[257:263] == b"ustar\0" and header[345] != 0:
                name = header[345:500].split(b"\0", 1)[0] + b"/" + name
            if not need(pos + size):
                raise _NotPlainTar
            data = bytes(buf[pos:pos + size])
            pos += (size + 511) // 512 * 512
            yield name.decode("utf-8", "surrogateescape"), data


_SCORE_TABLE: np.ndarray | None = None


def score_text(text: str) -> int:
    """The encoding sniffer's common-character score of ``text`` (:func:`xiangqi.core.encoding._score`:
    +4 per common character, -8 per private-use or replacement character), by a table lookup per
    character in numpy: the same number, about 5x faster on a CCPD file (the sniffer scores each Big5
    file twice, as GB18030 and as Big5)."""
    global _SCORE_TABLE
    if _SCORE_TABLE is None:
        table = np.zeros(0x110000, np.int8)
        table[0xE000:0xF900] = -8
        table[0xFFFD] = -8
        table[[ord(c) for c in COMMON_CHARS]] = 4
        _SCORE_TABLE = table
    try:
        codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    except UnicodeEncodeError:  # a lone surrogate: not from a decoder, but the plain count takes it
        return _encoding._score(text)
    return int(_SCORE_TABLE[codes].sum(dtype=np.int64))


def _fingerprint(chunk: str) -> bytes:
    m = _HEADER_RE.match(chunk)
    head = chunk[:m.end()]
    keep = "\n".join(t.strip() for t in _KEEP_TAG_RE.findall(head))
    return hashlib.sha1(f"{keep}\n{chunk[m.end():].strip()}".encode("utf-8", "surrogatepass")).digest()


def _split_file(name: str, data: bytes, seen: set[bytes],
                problems: list[Problem]) -> Iterator[tuple[int | None, str | bytes | None, bool]]:
    """The units of work of one file: ``(index, game text, whole)`` for each new PGN game text (``whole``:
    True when the file holds that text only, :data:`_LAST` for the last of several texts, else False),
    ``(index, None, whole)`` for a PGN game text already seen in this
    run, ``(None, data, True)`` for a file of another format."""
    fmt = format_from_path(name.rsplit("::", 1)[-1])
    kind = detect_format(data)
    if kind == "epd" or fmt == "epd":
        problems.append(Problem(name, None, "a list of positions (EPD/FEN), not games: skipped"))
        return
    if kind != "pgn":
        yield None, data, True
        return
    try:
        text, enc, bad = decode_lenient(data, score=score_text)
    except XiangqiError as exc:
        problems.append(Problem(name, None, str(exc)))
        return
    chunks = [c for c in iter_game_texts(text) if c.strip()]
    whole = len(chunks) == 1
    if bad:
        _tell_bad_bytes(name, text, chunks, bad, enc, problems)
    for index, chunk in enumerate(chunks):
        fp = _fingerprint(chunk)
        if fp in seen:
            yield index, None, whole
            continue
        seen.add(fp)
        yield index, chunk, whole if index < len(chunks) - 1 else (whole or _LAST)
    if not chunks:
        problems.append(Problem(name, None, "no game found (not a PGN, XQF, DhtmlXQ or EPD record)"))


def _tell_bad_bytes(name: str, text: str, chunks: list[str], bad: list[tuple[int, int]], enc: str,
                    problems: list[Problem]) -> None:
    """A warning per byte that was read as U+FFFD (a stray byte in a comment), naming its game."""
    starts = []
    pos = 0
    for chunk in chunks:
        at = text.find(chunk[:64], pos)
        pos = at if at >= 0 else pos
        starts.append(pos)
        pos += len(chunk)
    for byte, char in bad:
        index = max((i for i, s in enumerate(starts) if s <= char), default=0)
        problems.append(Problem(name, index, f"encoding: byte {byte} is not valid {enc}: read as U+FFFD, "
                                "the rest kept", skipped=False))


def _has_content(game: Game) -> bool:
    return bool(game.variations or any(v for k, v in game.headers.items() if k not in ("Game", "Result")))


#: The ``whole`` value of the last game text of a file holding several (a cut file's last game is flagged).
_LAST = 2


def _parse_unit(name: str, index: int | None, unit: str | bytes, whole: bool | int,
                collection: str) -> list[tuple]:
    """Read one unit (:func:`_split_file`) into ``("row", row)``, ``("skip", Problem)`` and
    ``("warn", Problem)`` items, the rows with their index data (runs in worker processes too)."""
    out: list[tuple] = []
    if isinstance(unit, bytes):
        try:
            games = list(enumerate(read_records(unit)))
        except (XiangqiError, ValueError) as exc:
            return [("file", Problem(name, None, str(exc)))]
    else:
        if _FAST:
            row = fast_row(unit, name, index, collection, bool(whole), _start)
            if row is not None:
                return [("row", row)]
        game = _parse_game_text(unit, last=bool(whole))  # one game's text already (no split again)
        if game is None or not _has_content(game):
            where = None if whole is True else index
            return [("file", Problem(name, where, "no game found (not a PGN, XQF, DhtmlXQ or EPD record)"))]
        games = [(index, game)]
    for i, game in games:
        fatal = _fatal(game.errors)
        if fatal is None and not game.variations:
            fatal = "no moves"
        if fatal is not None:
            out.append(("skip", Problem(name, i, fatal)))
            continue
        try:
            row = game_row(game, name, i, collection)
        except (XiangqiError, ValueError) as exc:
            out.append(("skip", Problem(name, i, str(exc))))
            continue
        _index_data(row)
        row["_ix"] = index_arrays_of(row.pop("_pos"), row.pop("_boards"))
        out.extend(("warn", Problem(name, i, e, skipped=False)) for e in game.errors)
        out.append(("row", row))
    return out


def _parse_batch(batch: list[tuple[str, int | None, str | bytes, bool]],
                 collection: str) -> list[list[tuple]]:
    return [_parse_unit(name, index, unit, whole, collection) for name, index, unit, whole in batch]


def content_hash(start_board_fen: str, red_to_move: bool, iccs_moves: str) -> str:
    """SHA-1 (hex) of a game's content: its start board, side to move and main line in ICCS."""
    return hashlib.sha1(f"{start_board_fen} {'w' if red_to_move else 'b'}|{iccs_moves}".encode()).hexdigest()


def _comments(game: Game) -> str:
    parts = [game.comment] if game.comment else []
    for node in game.mainline():
        if node.starting_comment:
            parts.append(node.starting_comment)
        if node.comment:
            parts.append(node.comment)
    if game.final_comment:
        parts.append(game.final_comment)
    return "\n".join(parts)


@functools.lru_cache(maxsize=4096)
def _start(fen: str) -> tuple[Board, str, str]:
    """The start board of a FEN tag (read-only: shared between games), its board FEN and full FEN."""
    board = Board(fen) if fen else Board()
    return board, board.board_fen(), board.fen()


def game_row(game: Game, source: str = "", index: int = 0, collection: str = "master") -> dict:
    """The ``games`` row of a read game (without ``id``), with ``_moves``: its (from, to) squares
    and ``_board``: its start board, shared between games and not to be changed (both for the position
    index; not columns).

    Raises :class:`~xiangqi.core.errors.XiangqiError` for a bad start position (FEN tag).
    """
    h = game.headers
    board, start, full_fen = _start(h.get("FEN", "").strip())
    moves = game.mainline_moves()
    iccs = " ".join(m.iccs() for m in moves)
    custom = start != STARTING_BOARD_FEN or not board.turn
    result = h.get("Result", "*").strip()
    ecco = h.get("ECCO", "").strip()
    date_raw = h.get("Date", "").strip()
    event, black_name = h.get("Event", "").strip(), h.get("Black", "").strip()
    red_name = h.get("Red", "").strip() or h.get("White", "").strip()
    opening = h.get("Opening", "").strip()
    if h.get("Variation", "").strip():
        opening = f"{opening} {h['Variation'].strip()}".strip()
    return {
        "hash": content_hash(start, board.turn, iccs),
        "collection": collection,
        "event": event,
        "site": h.get("Site", "").strip(),
        "round": h.get("Round", "").strip(),
        "date": normalise_date(date_raw),
        "date_raw": date_raw,
        "red": red_name,
        "black": black_name,
        "red_key": search_key(red_name),
        "black_key": search_key(black_name),
        "event_key": search_key(event),
        "result": result if result in RESULTS else ("1/2-1/2" if result == "½-½" else "*"),
        "ecco": ecco.upper() if ECCO_RE.match(ecco) else None,
        "ecco_computed": None if custom else computed_ecco(moves),
        "opening": opening,
        "headers": json.dumps(h, ensure_ascii=False),
        "fen": full_fen if custom else None,
        "moves": iccs,
        "plies": len(moves),
        "comments": _comments(game),
        "source": source,
        "source_index": index,
        "_moves": [(m.from_square, m.to_square) for m in moves],
        "_board": board,
    }


def _index_data(row: dict) -> None:
    """Add ``_pos`` (key, ply, next move) and ``_boards`` (material, key, packed pieces) to a row.

    The same rows as :func:`xiangqi.db.keys.iter_game_index` gives (the test compares them), computed
    for speed with the pieces kept in per-kind sorted lists updated by each move, so that packing a
    position is one ``bytes`` of their concatenation instead of a scan of the 90 squares.
    """
    board = row.pop("_board")
    moves = row.pop("_moves")
    names: list[str | None] = row["moves"].split()
    names.append(None)
    b = list(board.squares)
    red = board.turn
    z = _keys._Z
    side = _keys.BLACK_TO_MOVE
    k = _keys._key(b, red)
    groups: list[list[int]] = [[] for _ in range(15)]
    for sq, code in enumerate(b):
        if code:
            groups[code + 7].append(sq)
    ordered = [groups[code + 7] for code in _keys.PIECE_ORDER]
    counts = _keys._counts(b)
    clamped = any(counts[c + 7] > _keys._MAX[abs(c) - 1] for c in _keys.PIECE_ORDER)
    base = _keys.material_signature(b, True) >> 1
    weights = _keys._WEIGHTS
    chain = itertools.chain.from_iterable
    top, wrap = 1 << 63, 1 << 64
    pos: list[tuple] = []
    brd: list[tuple] = []
    known: set[int] = set()
    ply = 0
    while True:
        s = k - wrap if k >= top else k  # to_signed
        pos.append((s, ply, names[ply]))
        if s not in known:
            known.add(s)
            brd.append((base * 2 + (1 if red else 0), s, bytes(chain(ordered))))
        if ply == len(moves):
            break
        frm, to = moves[ply]
        code = b[frm]
        cap = b[to]
        k ^= z[code + 7][frm] ^ z[code + 7][to] ^ side
        group = groups[code + 7]
        group.remove(frm)
        bisect.insort(group, to)
        if cap:
            k ^= z[cap + 7][to]
            groups[cap + 7].remove(to)
        b[to] = code
        b[frm] = 0
        if cap:
            base = (_keys.material_signature(b, True) >> 1) if clamped else base - weights[cap]
        red = not red
        ply += 1
    row["_pos"] = pos
    row["_boards"] = brd


_MOVE_CODES = {m: i for i, m in enumerate(ICCS_MOVES[:-1])}


def index_arrays_of(pos: list[tuple], brd: list[tuple]) -> tuple:
    """The index rows of :func:`_index_data` (``_pos``: (key, ply, next move); ``_boards``: (material, key,
    packed pieces)) as the arrays of :func:`xiangqi.db.fastimport.index_arrays`, the form the writer takes."""
    keys = np.array([k for k, _ply, _mv in pos], np.int64)
    moves = np.array([-1 if mv is None else _MOVE_CODES[mv] for _k, _ply, mv in pos], np.int16)
    pieces = np.zeros((len(brd), WIDTH), np.uint8)
    for i, (_m, _k, pk) in enumerate(brd):
        pieces[i, :len(pk)] = np.frombuffer(pk, np.uint8)
    material = np.array([m for m, _k, _pk in brd], np.int64)
    board_keys = np.array([k for _m, k, _pk in brd], np.int64)
    return keys, moves, material, board_keys, pieces, np.array([len(pk) for _m, _k, pk in brd], np.uint8)


def _fatal(errors: list[str]) -> str | None:
    for e in errors:
        if any(f in e for f in _FATAL):
            return e
    return None


#: SQLite settings of the writing connection during a chunk: no fsync, no foreign-key lookup per index
#: row, a 256 MiB page cache (the position index outgrows the usual 64 MiB); then the usual ones again.
_BULK_PRAGMAS = ("synchronous=OFF", "foreign_keys=OFF", "cache_size=-262144")
_NORMAL_PRAGMAS = ("synchronous=NORMAL", "foreign_keys=ON", "cache_size=-65536")


class _Writer:
    """Buffers rows and writes them one chunk per transaction."""

    def __init__(self, engine: Engine, report: ImportReport) -> None:
        self.engine = engine
        self.report = report
        self.rows: list[dict] = []
        self.hashes: set[str] = set()
        dialect = engine.dialect.name
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as dialect_insert
        elif dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as dialect_insert
        else:
            dialect_insert = None
        self.board_insert = (dialect_insert(boards).on_conflict_do_nothing() if dialect_insert is not None
                             else insert(boards))
        self.sqlite = dialect == "sqlite"
        # PostgreSQL through psycopg 3: the index rows by COPY (_pg_copy)
        self.pg_copy = dialect == "postgresql" and engine.dialect.driver == "psycopg"
        # the two big tables go through the driver's executemany with tuples (no per-row SQLAlchemy work)
        mark = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(engine.dialect.paramstyle)
        self.raw_positions = self.raw_boards = None
        if mark is not None and dialect in ("sqlite", "postgresql"):
            four, three = ", ".join([mark] * 4), ", ".join([mark] * 3)
            self.raw_positions = f'INSERT INTO positions ("key", game_id, ply, move) VALUES ({four})'
            self.raw_boards = (f'INSERT INTO boards (material, "key", pieces) VALUES ({three}) '
                               "ON CONFLICT DO NOTHING")

    def add(self, row: dict) -> None:
        if row["hash"] in self.hashes:
            self.report.duplicates += 1
            return
        self.hashes.add(row["hash"])
        self.rows.append(row)
        if len(self.rows) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        rows, self.rows = self.rows, []
        if not rows:
            return
        with self.engine.connect() as conn:
            if self.sqlite:
                # bulk-import settings for this connection, set before the transaction (SQLite ignores
                # foreign_keys inside one); every positions row refers to a games row of the same chunk
                for pragma in _BULK_PRAGMAS:
                    conn.exec_driver_sql(f"PRAGMA {pragma}")
            try:
                self._write(conn, rows)
                conn.commit()
            finally:
                conn.rollback()
                if self.sqlite:
                    for pragma in _NORMAL_PRAGMAS:
                        conn.exec_driver_sql(f"PRAGMA {pragma}")
                    conn.commit()

    def _write(self, conn, rows: list[dict]) -> None:
        """Insert the new games of ``rows`` and their index rows (the caller commits)."""
        existing = set()
        hashes = [r["hash"] for r in rows]
        for i in range(0, len(hashes), 500):
            existing.update(conn.execute(select(games.c.hash).where(games.c.hash.in_(hashes[i:i + 500])))
                            .scalars())
        new = [r for r in rows if r["hash"] not in existing]
        self.report.duplicates += len(rows) - len(new)
        if not new:
            return
        ids = self._insert_games(conn, new)
        pos, board_rows = _index_rows(ids, [r["_ix"] for r in new])
        if self.raw_positions is None:
            conn.execute(insert(positions), [dict(zip(("key", "game_id", "ply", "move"), p, strict=True))
                                             for p in pos])
            conn.execute(self.board_insert, [dict(zip(("material", "key", "pieces"), b, strict=True))
                                             for b in board_rows])
        elif self.pg_copy:
            _pg_copy(conn, pos, board_rows)
        else:
            # the driver's own executemany (SQLAlchemy's wants a list), in the connection's transaction
            cur = conn.connection.dbapi_connection.cursor()
            try:
                cur.executemany(self.raw_positions, pos)
                cur.executemany(self.raw_boards, board_rows)
            finally:
                cur.close()
        self.report.added += len(new)
        self.report.positions += len(pos)

    def _insert_games(self, conn, new: list[dict]) -> list[int]:
        """Insert the ``games`` rows of ``new``; their ids in the same order."""
        cols = [k for k in new[0] if not k.startswith("_")]
        if self.sqlite:
            # one executemany, then the ids by hash (SQLAlchemy's RETURNING in parameter order is one
            # statement per row on SQLite)
            marks = ", ".join("?" * len(cols))
            names = ", ".join(f'"{c}"' for c in cols)
            conn.exec_driver_sql(f"INSERT INTO games ({names}) VALUES ({marks})",
                                 [tuple(r[c] for c in cols) for r in new])
            hashes = [r["hash"] for r in new]
            id_of: dict[str, int] = {}
            for i in range(0, len(hashes), 500):
                id_of.update((h, gid) for h, gid in conn.execute(
                    select(games.c.hash, games.c.id).where(games.c.hash.in_(hashes[i:i + 500]))))
            return [id_of[h] for h in hashes]
        values = [{c: r[c] for c in cols} for r in new]
        return list(conn.execute(insert(games).returning(games.c.id, sort_by_parameter_order=True),
                                 values).scalars().all())


class _Rows:
    """Rows given as equal-length column lists: ``len()`` and iteration as tuples (a fresh ``zip`` each
    time), what ``executemany`` and ``COPY`` need without a tuple per row kept in memory."""

    __slots__ = ("cols",)

    def __init__(self, cols: tuple[list, ...]) -> None:
        self.cols = cols

    def __len__(self) -> int:
        return len(self.cols[0])

    def __iter__(self) -> Iterator[tuple]:
        return zip(*self.cols, strict=True)


def _index_rows(ids: list[int], ixs: list[tuple]) -> tuple[_Rows, list[tuple]]:
    """The ``positions`` rows (key, game id, ply, move) and the distinct ``boards`` rows (material, key,
    pieces) of games ``ids`` with index arrays ``ixs`` (:func:`xiangqi.db.fastimport.index_arrays`), each
    list in its primary-key order (each B-tree page is then visited once per chunk, not once per row);
    a board met in several games is the first game's."""
    lens = np.array([len(ix[0]) for ix in ixs], np.int64)
    keys = np.concatenate([ix[0] for ix in ixs])
    moves = np.concatenate([ix[1] for ix in ixs])
    gids = np.repeat(np.array(ids, np.int64), lens)
    ply = np.arange(len(keys), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    order = np.lexsort((ply, gids, keys))
    # a zip over column lists, not a list of tuples: the driver's executemany takes one row at a time and
    # zip hands it the same reused tuple (no 2.5M tuples built, kept and freed; rows read in memory order)
    cols = (keys[order].tolist(), gids[order].tolist(), ply[order].tolist(),
            list(map(ICCS_MOVES.__getitem__, moves[order].tolist())))
    pos = _Rows(cols)
    material = np.concatenate([ix[2] for ix in ixs])
    bkeys = np.concatenate([ix[3] for ix in ixs])
    pieces = np.concatenate([ix[4] for ix in ixs])
    counts = np.concatenate([ix[5] for ix in ixs])
    first = np.unique(bkeys, return_index=True)[1]
    sel = first[np.lexsort((bkeys[first], material[first]))]
    blob = pieces.tobytes()
    w = WIDTH
    packed = [blob[i * w:i * w + c] for i, c in zip(sel.tolist(), counts[sel].tolist(), strict=True)]
    return pos, _Rows((material[sel].tolist(), bkeys[sel].tolist(), packed))


def _pg_copy(conn, pos: _Rows, board_rows: _Rows) -> None:
    """PostgreSQL: the index rows by ``COPY`` (psycopg 3), the boards through a temporary table so that a
    board already stored is skipped (``COPY`` has no ``ON CONFLICT``)."""
    cur = conn.connection.dbapi_connection.cursor()
    try:
        with cur.copy('COPY positions ("key", game_id, ply, move) FROM STDIN') as copy:
            for row in pos:
                copy.write_row(row)
        cur.execute("CREATE TEMPORARY TABLE IF NOT EXISTS pg_temp.boards_in "
                    "(material INTEGER, \"key\" BIGINT, pieces BYTEA) ON COMMIT DELETE ROWS")
        with cur.copy('COPY pg_temp.boards_in (material, "key", pieces) FROM STDIN') as copy:
            for row in board_rows:
                copy.write_row(row)
        cur.execute('INSERT INTO boards (material, "key", pieces) SELECT material, "key", pieces '
                    'FROM pg_temp.boards_in ORDER BY material, "key" ON CONFLICT DO NOTHING')
        cur.execute("TRUNCATE pg_temp.boards_in")
    finally:
        cur.close()


@dataclasses.dataclass(frozen=True)
class ImportProgress:
    """Where an import is, as told to the ``progress`` callback of :func:`import_paths`.

    ``phase``: ``"read"`` (reading, checking and writing games; ``done`` of ``total`` bytes of the input
    files on disk, :func:`input_bytes`, ``total`` 0 when nothing is to be read), ``"counts"`` (the
    explorer's counts of common positions are being rebuilt, :func:`xiangqi.db.aggregate.rebuild`, a
    few seconds on the master games) or ``"done"``. ``report``: the counts so far (the live
    :class:`ImportReport`; read it in the callback, do not keep it)."""

    phase: str
    done: int
    total: int
    report: ImportReport

    @property
    def fraction(self) -> float:
        """``done / total`` in 0..1 (1 once the reading is over or when there is nothing to read)."""
        if self.phase != "read" or self.total <= 0:
            return 1.0
        return min(1.0, self.done / self.total)


class _Progress:
    """The progress of one import: tells ``callback`` (an :class:`ImportProgress`) at most ten times a
    second while reading, and at every change of phase; ``True`` draws a one-line report on stderr."""

    def __init__(self, report: ImportReport, callback: bool | Callable[[ImportProgress], None] | None,
                 total: int) -> None:
        self.report = report
        self.total = total
        self.done = 0.0
        self.phase = "read"
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.line = callback is True
        self.callback = callback if callable(callback) else None
        self.enabled = self.line or self.callback is not None

    def advance(self, nbytes: float) -> None:
        self.done += nbytes

    def update(self, force: bool = False, phase: str | None = None) -> None:
        if not self.enabled:
            return
        if phase is not None and phase != self.phase:
            self.phase = phase
            force = True
        now = time.perf_counter()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        if self.callback is not None:
            done = self.total if self.phase != "read" else min(int(self.done), self.total)
            self.callback(ImportProgress(self.phase, done, self.total, self.report))
        if self.line:
            r = self.report
            rate = r.games / (now - self.t0) if now > self.t0 else 0.0
            pct = f"{100 * self.done / self.total:3.0f} %  " if self.total and self.phase == "read" else ""
            what = "  counting the explorer's positions…" if self.phase == "counts" else ""
            sys.stderr.write(f"\r{pct}{r.files} files  {r.games} games  {r.added} added  {r.duplicates} dup  "
                             f"{r.skipped} skipped  {rate:.0f} games/s{what} ")
            sys.stderr.flush()

    def done_(self) -> None:
        self.update(phase="done")
        if self.line:
            sys.stderr.write("\n")


def import_paths(engine: Engine, paths: Iterable[str | os.PathLike[str]], *, collection: str = "master",
                 glob: str | None = None, progress: bool | Callable[[ImportProgress], None] = False,
                 jobs: int = 1, on_problem: Callable[[Problem], None] | None = None) -> ImportReport:
    """Import every game under ``paths`` (files, folders, archives: :func:`iter_sources`) into ``engine``.

    The engine must be at the head schema (:func:`xiangqi.db.database.connect` does that). Games get
    ``collection`` as their collection name. ``progress``: True draws a progress line on stderr; a
    callable is called with an :class:`ImportProgress` (from this thread) at most ten times a second
    while reading and once per phase (``read``, ``counts``, ``done``); it may block (a background
    import waits there while the game's engine searches) or raise to stop the import (what was
    committed stays, a re-run goes on). ``on_problem`` is called with each :class:`Problem` as it is
    found (they are also in the report).
    ``jobs`` > 1 reads the games in that many worker processes (the database is written by this one);
    the result is the same as with one. Never raises for bad input; database errors (disk full,
    locked) propagate after the chunks already written are committed, so a re-run continues.
    """
    paths = list(paths)
    report = ImportReport()
    t0 = time.perf_counter()
    writer = _Writer(engine, report)
    bar = _Progress(report, progress, input_bytes(paths, glob=glob) if progress else 0)
    unread = 0  # bytes read from disk not yet credited to the games parsed from them
    seen: set[bytes] = set()
    problems: list[Problem] = []
    told = 0

    def tell() -> None:
        nonlocal told
        while told < len(problems):
            p = problems[told]
            told += 1
            report.problems.append(p)
            if on_problem is not None:
                on_problem(p)

    def take(results: list[list[tuple]], weight: float) -> None:
        bar.advance(weight)
        for items in results:
            for kind, item in items:
                if kind == "row":
                    report.games += 1
                    writer.add(item)
                elif kind == "skip":
                    report.games += 1
                    report.skipped += 1
                    problems.append(item)
                elif kind in ("warn", "file"):
                    problems.append(item)
        tell()
        bar.update()

    pool = None
    pending: collections.deque = collections.deque()
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=jobs)
    batch: list[tuple[str, int | None, str | bytes, bool]] = []
    weight = 0.0  # input bytes the games of ``batch`` stand for

    def on_read(n: int) -> None:
        nonlocal unread
        unread += n

    try:
        def submit() -> None:
            nonlocal batch, weight
            if not batch:
                return
            if pool is None:
                take(_parse_batch(batch, collection), weight)
            else:
                pending.append((pool.submit(_parse_batch, batch, collection), weight))
                while len(pending) > 2 * jobs:
                    future, w = pending.popleft()
                    take(future.result(), w)
            batch, weight = [], 0.0

        for name, data in iter_sources(paths, glob=glob, problems=problems, on_read=on_read):
            report.files += 1
            units = list(_split_file(name, data, seen, problems))
            share, unread = (unread / len(units) if units else 0.0), (0 if units else unread)
            for index, unit, whole in units:
                if unit is None:
                    report.games += 1
                    report.duplicates += 1
                    bar.advance(share)
                    continue
                batch.append((name, index, unit, whole))
                weight += share
                if len(batch) >= _BATCH:
                    submit()
            tell()
            bar.update()
        submit()
        while pending:
            future, w = pending.popleft()
            take(future.result(), w)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    tell()
    writer.flush()
    bar.advance(unread)
    bar.update(force=True)
    if collection != "mine":  # the explorer's counts of common positions (xiangqi.db.aggregate)
        with engine.connect() as conn:
            stale = report.added > 0 or not aggregate.valid(conn)
        if stale:
            bar.update(phase="counts")
            aggregate.rebuild(engine)
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            conn.execute(text("PRAGMA optimize"))
    report.seconds = time.perf_counter() - t0
    bar.done_()
    return report
