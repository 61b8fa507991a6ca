"""XQF (象棋演播室 XQStudio) binary game records: read versions 1.0 and the encrypted 1.1–1.8, write 1.0.

Layout and cipher follow the XQF 1.0 specification by 过河象 (xqbase/eleeye ``XQFTOOLS/XQF.TXT``)
and the decryption credited to 小月儿 (FORMATS.md §7):

* a 1024-byte header: ``XQ``, version byte (10 = 1.0 plain; ≥ 11 encrypted moves; ≥ 12 also a
  permuted piece table), key bytes 0x03–0x0F, 32 piece squares at 0x10 (order 车马相仕帅仕相马车炮炮兵×5,
  Red then Black; square byte = file·10 + rank, ranks from Red's side; > 89 = off the board),
  result at 0x33 (0 unknown, 1 Red wins, 2 Black wins, 3 or 4 draw), type at 0x40 and Pascal
  strings (GBK) for title, event, date, site, players, time rules, annotator and author;
* from 0x400 the move tree in pre-order, one record per node: ``from+0x18, to+0x20, flags, 0``
  (plus the key offsets when encrypted), then the comment. Version 1.0: flags ``0xF0`` = a move
  follows, ``0x0F`` = a sibling variation follows, and every record carries a 4-byte comment
  length. Later versions: ``0x80`` next, ``0x40`` sibling, ``0x20`` comment present (its length is
  stored plus ``KeyRMKSize``). Record 0 is a dummy root whose comment is the game comment.
* The side to move is not stored: it is the colour of the piece moved first.
"""

from __future__ import annotations

import os
import struct

from xiangqi.core.board import (
    ADVISOR,
    CANNON,
    ELEPHANT,
    HORSE,
    KING,
    PAWN,
    PIECE_SYMBOLS,
    ROOK,
    STARTING_FEN,
    Board,
    Move,
    grid_board_fen,
)
from xiangqi.core.encoding import read_source
from xiangqi.core.errors import FenError, RecordProblem, XiangqiError
from xiangqi.core.pgn import Game, GameNode

__all__ = ["XqfError", "read_xqf", "write_xqf", "xqf_losses", "XQF_RESULTS", "XQF_HEADERS"]

HEADER_SIZE = 0x400
_SLOT_TYPES = (ROOK, HORSE, ELEPHANT, ADVISOR, KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, CANNON,
               PAWN, PAWN, PAWN, PAWN, PAWN)
#: XQF result byte -> PGN result.
XQF_RESULTS = {0: "*", 1: "1-0", 2: "0-1", 3: "1/2-1/2", 4: "1/2-1/2"}
_RESULT_BYTES = {"*": 0, "1-0": 1, "0-1": 2, "1/2-1/2": 3}
# Pascal string fields: (offset, size including the length byte, header name).
_STRINGS = (
    (0x50, 64, "Title"), (0xD0, 64, "Event"), (0x110, 16, "Date"), (0x120, 16, "Site"), (0x130, 16, "Red"),
    (0x140, 16, "Black"), (0x150, 64, "TimeControl"), (0x190, 16, "RedTime"), (0x1A0, 16, "BlackTime"),
    (0x1D0, 16, "Annotator"), (0x1E0, 16, "Author"),
)
#: The headers an XQF file holds (Pascal strings), besides ``Result`` (a byte) and ``FEN`` (the piece table).
XQF_HEADERS = tuple(name for _offset, _size, name in _STRINGS)
# PGN-only tags that say nothing XQF needs: the game kind, the move notation, the start position (stored
# as the piece table) and the result (stored as a byte)
_NOT_LOST = {"Game", "Format", "FEN", "SetUp", "Result"}
_COPYRIGHT = b"[(C) Copyright Mr. Dong Shiwei.]"
_MAX_COMMENT = 1 << 20  # larger comment lengths are corrupt data


class XqfError(XiangqiError):
    """An XQF file that cannot be read (bad magic, truncated header, impossible position)."""


def _f(x: int) -> int:
    return ((((x * x * 3 + 9) * 3 + 8) * 2 + 1) * 3 + 8)


class _Keys:
    def __init__(self, h: bytes) -> None:
        self.xy = (_f(h[0x0D]) * h[0x0D]) & 0xFF
        self.xyf = (_f(h[0x0E]) * self.xy) & 0xFF
        self.xyt = (_f(h[0x0F]) * self.xyf) & 0xFF
        self.rmk_size = ((h[0x0C] * 256 + h[0x0D]) % 32000) + 767
        mask = h[0x03]
        fkeys = [(h[0x0C + i] & mask) | h[0x08 + i] for i in range(4)]
        self.f32 = bytes(_COPYRIGHT[i] & fkeys[i % 4] for i in range(32))


def _decode_string(raw: bytes) -> str:
    n = min(raw[0], len(raw) - 1)
    data = raw[1:1 + n]
    for enc in ("gb18030", "big5"):
        try:
            return data.decode(enc).rstrip("\x00").strip()
        except UnicodeDecodeError:
            continue
    return data.decode("gb18030", errors="replace").rstrip("\x00").strip()


def _decode_comment(data: bytes) -> str:
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        text = data.decode("gb18030", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\x00").strip()


class _Record:
    __slots__ = ("frm", "to", "comment", "children")

    def __init__(self, frm: int, to: int, comment: str) -> None:
        self.frm = frm
        self.to = to
        self.comment = comment
        self.children: list[_Record] = []


def read_xqf(source: str | os.PathLike[str] | bytes) -> Game:
    """Read an XQF file (a path or its bytes) into a :class:`~xiangqi.core.pgn.Game`.

    The whole variation tree and every comment are read; headers come from the XQF strings
    (``Title``, ``Event``, ``Date``, ``Site``, ``Red``, ``Black``, ``TimeControl``, ``RedTime``,
    ``BlackTime``, ``Annotator``, ``Author``), ``Result`` from the result byte and ``FEN`` when the
    stored position is not the standard start. A move that is not legal is recorded on
    ``game.errors`` and its subtree dropped (the file's structure is still read to the end).
    Raises :class:`XqfError` when the data is not a readable XQF file.
    """
    data = read_source(source, XqfError)
    if len(data) < HEADER_SIZE:
        raise XqfError(f"not an XQF file: {len(data)} bytes, the header alone is {HEADER_SIZE}")
    if data[:2] != b"XQ":
        raise XqfError(f"not an XQF file: it starts with {data[:2]!r}, expected b'XQ'")
    version = data[2]
    keys = _Keys(data) if version >= 11 else None
    squares = _piece_squares(data, version, keys)
    body = data[HEADER_SIZE:]
    if keys is not None:
        body = bytes((b - keys.f32[(HEADER_SIZE + i) % 32]) & 0xFF for i, b in enumerate(body))
    game = Game()
    # keeps the Seven Tag defaults of Game(): Game, Event, Date, Red, Black, Result
    for offset, _size, name in _STRINGS:
        value = _decode_string(data[offset:offset + _size])
        if value:
            game.headers[name] = value
    game.headers["Result"] = XQF_RESULTS.get(data[0x33], "*")
    root, errors = _read_records(body, version, keys)
    game.errors.extend(errors)
    game.comment = root.comment
    board_fen = _board_fen(squares)
    red_first = True
    if root.children:
        first = root.children[0]
        code = _code_at(squares, first.frm)
        if code is not None:
            red_first = code > 0
    fen = f"{board_fen} {'w' if red_first else 'b'} - - 0 1"
    try:
        board = Board(fen)
    except FenError as exc:
        raise XqfError(f"the XQF position is impossible: {exc.reason}") from None
    game.setup(fen)
    _build(game, root, board, game.errors)
    return game


def _piece_squares(data: bytes, version: int, keys: _Keys | None) -> list[int]:
    raw = data[0x10:0x30]
    if keys is None:
        return [b if b <= 89 else 0xFF for b in raw]
    table = [0] * 32
    for i in range(32):
        slot = (keys.xy + 1 + i) & 31 if version >= 12 else i
        table[slot] = raw[i]
    out = []
    for v in table:
        v = (v - keys.xy) & 0xFF
        out.append(v if v <= 89 else 0xFF)
    return out


def _xy_to_square(v: int) -> int | None:
    x, y = divmod(v, 10)
    if v > 89 or x > 8:
        return None
    return y * 9 + x


def _code_at(squares: list[int], xy: int) -> int | None:
    for i, v in enumerate(squares):
        if v == xy:
            t = _SLOT_TYPES[i % 16]
            return t if i < 16 else -t
    return None


def _board_fen(squares: list[int]) -> str:
    grid: list[str | None] = [None] * 90
    for i, v in enumerate(squares):
        if v == 0xFF:
            continue
        sq = _xy_to_square(v)
        if sq is None:
            continue
        if grid[sq] is not None:
            raise XqfError(f"two pieces on the same point {v:02d} in the XQF piece table")
        letter = PIECE_SYMBOLS[_SLOT_TYPES[i % 16]]
        grid[sq] = letter.upper() if i < 16 else letter
    return grid_board_fen(grid)


def _read_records(body: bytes, version: int, keys: _Keys | None) -> tuple[_Record, list[str]]:
    """Parse the pre-order record stream into a tree of raw records (iteratively: files can be deep)."""
    errors: list[str] = []
    pos = 0
    count = 0  # records read

    def read_one() -> tuple[int, int, bool, bool, str] | None:
        nonlocal pos, count
        if pos + 4 > len(body):
            return None
        a, b, flags = body[pos], body[pos + 1], body[pos + 2]
        pos += 4
        count += 1
        if keys is None:
            has_next, has_var = bool(flags & 0xF0), bool(flags & 0x0F)
            frm, to = (a - 0x18) & 0xFF, (b - 0x20) & 0xFF
            length = _read_int(4)
        else:
            has_next, has_var = bool(flags & 0x80), bool(flags & 0x40)
            frm, to = (a - 0x18 - keys.xyf) & 0xFF, (b - 0x20 - keys.xyt) & 0xFF
            length = 0
            if flags & 0x20:
                raw_length = _read_int(4)
                length = None if raw_length is None else raw_length - keys.rmk_size
        comment = ""
        if length is None:
            errors.append(RecordProblem(
                f"truncated: record {count} at byte {HEADER_SIZE + pos - 4}: the file ends in its comment "
                "length", "truncated", None, HEADER_SIZE + pos))
            length = 0
        if length > 0:
            if length > _MAX_COMMENT or pos + length > len(body):
                errors.append(RecordProblem(
                    f"truncated: record {count} at byte {HEADER_SIZE + pos - 8}: comment length {length} "
                    f"runs past the end of the file ({len(body) - pos} bytes left)", "truncated", None,
                    HEADER_SIZE + pos))
                length = max(0, min(length, len(body) - pos))
            comment = _decode_comment(body[pos:pos + length])
            pos += length
        return frm, to, has_next, has_var, comment

    def _read_int(n: int) -> int | None:
        nonlocal pos
        if pos + n > len(body):
            pos = len(body)
            return None
        value = struct.unpack_from("<i", body, pos)[0]
        pos += n
        return value

    head = read_one()
    root = _Record(0, 0, head[4] if head else "")
    if head is None:
        if body:
            errors.append(RecordProblem(f"truncated: the first record is cut short ({len(body)} of 4 bytes)",
                                        "truncated", 0, HEADER_SIZE))
        else:
            errors.append(RecordProblem("truncated: the file ends right after its 1024-byte header, with no "
                                        "move record", "truncated", 0, HEADER_SIZE))
        return root, errors
    parent = root
    pending: list[_Record] = []
    # like XQStudio, read on whatever the root's flag says; a set flag with nothing after it is an error
    expect_more = pos < len(body) or head[2]
    while expect_more:
        rec = read_one()
        if rec is None:
            break
        frm, to, has_next, has_var, comment = rec
        node = _Record(frm, to, comment)
        parent.children.append(node)
        if has_var:
            pending.append(parent)
        if has_next:
            parent = node
        elif pending:
            parent = pending.pop()
        else:
            expect_more = False
    if expect_more:
        errors.append(RecordProblem(f"truncated: the move records end early, after {count - 1} move "
                                    f"record(s) (byte {HEADER_SIZE + pos}; the records promise more)",
                                    "truncated", None, HEADER_SIZE + pos))
    return root, errors


def _build(game: Game, root: _Record, board: Board, errors: list[str]) -> None:
    stack: list[tuple[_Record, GameNode, Board]] = [(root, game, board)]
    while stack:
        rec, node, here = stack.pop()
        depth = len(here.move_stack)
        for child in reversed(rec.children):
            frm, to = _xy_to_square(child.frm), _xy_to_square(child.to)
            if frm is None or to is None or frm == to:
                errors.append(f"ply {depth + 1}: move record {child.frm:02d}->{child.to:02d} "
                              "is off the board")
                continue
            move = Move(frm, to)
            reason = here.illegal_reason(move)
            if reason is not None:
                errors.append(f"ply {depth + 1}: illegal move {move.iccs()} ({reason}); its line is dropped")
                continue
            after = here.copy()
            after.push(move, validate=False)
            new = GameNode(node, move, comment=child.comment)
            node.variations.insert(0, new)
            stack.append((child, new, after))


def _fit(text: str, size: int) -> tuple[bytes, str]:
    """The GB18030 bytes of ``text`` that fit a ``size``-byte Pascal string, and their text."""
    data = b""
    n = 0
    for ch in text:
        enc = ch.encode("gb18030")
        if len(data) + len(enc) > size - 1:
            break
        data += enc
        n += 1
    return data, text[:n]


def _encode_string(text: str, size: int) -> bytes:
    data, _kept = _fit(text, size)
    return bytes([len(data)]) + data + b"\x00" * (size - 1 - len(data))


def xqf_losses(game: Game) -> list[str]:
    """What :func:`write_xqf` cannot keep of ``game``, one sentence each (empty when nothing is lost).

    XQF (FORMATS.md §7) holds the headers :data:`XQF_HEADERS` as Pascal strings of fixed size (15 bytes
    of GBK for the names, the date and the site, 63 for title, event and time rule), the result as
    ``*``/``1-0``/``0-1``/``1/2-1/2``, and one comment per move; it has no field for other headers
    (``Round``, ``ECCO``, ``Opening``, ``Variation``, ``RedTeam``, …), for NAGs (``$1``…) or for the
    comment after the result. Each header that is dropped is named, and each string cut at its field
    size is given with what is kept.
    """
    out: list[str] = []
    dropped = [k for k, v in game.headers.items()
               if v.strip() and k not in _NOT_LOST and k not in XQF_HEADERS]
    if dropped:
        out.append(f"XQF has no field for {', '.join(dropped)}: dropped")
    for _offset, size, name in _STRINGS:
        value = game.headers.get(name, "")
        data, kept = _fit(value, size)
        if kept != value:
            out.append(f"{name} cut to the {size - 1} bytes of its XQF field: {value!r} -> {kept!r}")
    result = game.headers.get("Result", "*").strip()
    if result not in _RESULT_BYTES:
        out.append(f"Result {result!r} is not one XQF holds (1-0, 0-1, 1/2-1/2, *): written as unknown")
    nags = sum(1 for node in game._walk() if node.nags)
    if nags:
        out.append(f"XQF has no annotation glyphs: the NAGs of {nags} move(s) dropped")
    if game.final_comment:
        out.append(f"XQF has no comment after the result: {_short(game.final_comment)!r} dropped")
    return out


def _short(text: str, n: int = 30) -> str:
    return text if len(text) <= n else text[:n] + "…"


def write_xqf(game: Game, *, warnings: list[str] | None = None) -> bytes:
    """The XQF 1.0 bytes (unencrypted, version byte 10) of ``game``, with every variation and comment.

    Strings are GBK (GB18030), cut to their field sizes (names: 15 bytes). What XQF cannot hold
    (:func:`xqf_losses`: headers it has no field for, strings cut, NAGs, the final comment) is appended to
    ``warnings`` when a list is given, one sentence each. A variation's
    ``starting_comment`` has no place in XQF and is put before the move's own comment.
    Type byte: 0 (全局) from the standard start, 3 (残局) from another position.
    Raises :class:`~xiangqi.core.errors.FenError` when the game's FEN header is bad.
    """
    board = game.board()
    if warnings is not None:
        warnings.extend(xqf_losses(game))
    header = bytearray(HEADER_SIZE)
    header[0:2] = b"XQ"
    header[2] = 10
    slots = [0xFF] * 32
    used = [False] * 32
    for sq in range(90):
        code = board.squares[sq]
        if not code:
            continue
        base = 0 if code > 0 else 16
        for i in range(16):
            if _SLOT_TYPES[i] == abs(code) and not used[base + i]:
                used[base + i] = True
                slots[base + i] = (sq % 9) * 10 + sq // 9
                break
    header[0x10:0x30] = bytes(slots)
    header[0x33] = _RESULT_BYTES.get(game.headers.get("Result", "*"), 0)
    standard = board.board_fen() == STARTING_FEN.split()[0]
    header[0x40] = 0 if standard else 3
    for offset, size, name in _STRINGS:
        value = game.headers.get(name, "")
        header[offset:offset + size] = _encode_string(value, size)
    out = bytearray(header)
    out += _record(0x18, 0x20, 0xF0 if game.variations else 0x00, game.comment, root=True)
    # pre-order: node, its continuation subtree, then its next sibling
    stack: list[tuple[GameNode, bool]] = []
    _push_children(stack, game)
    while stack:
        node, has_sibling = stack.pop()
        assert node.move is not None
        m = node.move
        flags = (0xF0 if node.variations else 0) | (0x0F if has_sibling else 0)
        text = "\n".join(t for t in (node.starting_comment, node.comment) if t)
        out += _record((m.from_square % 9) * 10 + m.from_square // 9 + 0x18,
                       (m.to_square % 9) * 10 + m.to_square // 9 + 0x20, flags, text)
        _push_children(stack, node)
    return bytes(out)


def _push_children(stack: list[tuple[GameNode, bool]], node: GameNode) -> None:
    # The first child is visited first; later siblings follow the whole subtree of the earlier one.
    n = len(node.variations)
    for i in range(n - 1, -1, -1):
        stack.append((node.variations[i], i + 1 < n))


def _record(a: int, b: int, flags: int, comment: str, *, root: bool = False) -> bytes:
    data = comment.replace("\r\n", "\n").replace("\n", "\r\n").encode("gb18030") if comment else b""
    return bytes([a & 0xFF, b & 0xFF, flags, 0xFF if root else 0]) + struct.pack("<I", len(data)) + data
