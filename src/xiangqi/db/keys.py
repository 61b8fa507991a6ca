"""Position keys for the games database: a stable 64-bit Zobrist key, the mirrored key, material signatures.

The key of a position is the XOR of one 64-bit number per (piece, square) on the board, XORed with
:data:`BLACK_TO_MOVE` when Black is to move. The numbers are drawn from SplitMix64 seeded with
:data:`SEED`, in the fixed order red king, advisor, elephant, horse, rook, cannon, pawn, then the same
for black, squares 0–89 (``a0`` … ``i9``) within each piece, then the side number. They are computed
once at import in pure Python, so the key is the same on every run, machine and Python version.
Keys are stored as *signed* 64-bit integers (:func:`to_signed`) because SQLite and PostgreSQL
``BIGINT`` are signed.

Castling and en passant do not exist in xiangqi, so board + side to move is the whole position
(repetition history is not part of the key).

The *material signature* packs the number of pieces of each type and colour and the side to move into
one small integer (:func:`material_signature`); similar-position search uses it as its prefilter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xiangqi.core.board import Board

__all__ = ["SEED", "BLACK_TO_MOVE", "PIECE_ORDER", "zobrist", "key_of", "mirror_squares", "mirror_key_of",
           "to_signed", "piece_set", "material_signature", "signature_counts", "pack_pieces", "unpack_pieces",
           "iter_game_keys", "iter_game_index"]

#: Seed of the SplitMix64 stream that gives the Zobrist numbers (never change it: stored keys depend on it).
SEED = 0x58_49_41_4E_47_51_49_31  # "XIANGQI1"
_MASK = (1 << 64) - 1

#: Piece codes (board.squares values: Red positive, Black negative) in table and signature order.
PIECE_ORDER = (1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7)
_MAX = (1, 2, 2, 2, 2, 2, 5)  # king, advisor, elephant, horse, rook, cannon, pawn


def _splitmix64(state: int):
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        yield z ^ (z >> 31)


def _tables() -> tuple[dict[int, list[int]], int]:
    gen = _splitmix64(SEED)
    table = {code: [next(gen) for _ in range(90)] for code in PIECE_ORDER}
    return table, next(gen)


#: ``ZOBRIST[code][square]``: the unsigned 64-bit number of a piece code on a square.
zobrist, BLACK_TO_MOVE = _tables()
# indexable by the signed code directly: _Z[code + 7][sq]
_Z = [zobrist.get(code - 7, [0] * 90) for code in range(15)]


def to_signed(key: int) -> int:
    """The unsigned 64-bit ``key`` as the signed integer stored in a ``BIGINT`` column."""
    return key - (1 << 64) if key >= 1 << 63 else key


def _key(squares: Sequence[int], red_to_move: bool) -> int:
    k = 0 if red_to_move else BLACK_TO_MOVE
    for sq, code in enumerate(squares):
        if code:
            k ^= _Z[code + 7][sq]
    return k


def key_of(board: Board) -> int:
    """The signed 64-bit key of ``board``'s position (pieces and side to move)."""
    return to_signed(_key(board.squares, board.turn))


def mirror_squares(squares: Sequence[int]) -> list[int]:
    """The 90-square array mirrored left-right (file ``a`` ↔ ``i``, ranks kept)."""
    return [squares[r * 9 + 8 - f] for r in range(10) for f in range(9)]


def mirror_key_of(board: Board) -> int:
    """The signed key of ``board`` mirrored left-right (the same side to move)."""
    return to_signed(_key(mirror_squares(board.squares), board.turn))


def _counts(squares: Iterable[int]) -> list[int]:
    counts = [0] * 15
    for code in squares:
        if code:
            counts[code + 7] += 1
    return counts


def material_signature(squares: Sequence[int], red_to_move: bool) -> int:
    """One integer for the piece counts of both sides and the side to move.

    Each side's counts (king 0–1, advisor, elephant, horse, rook, cannon 0–2, pawn 0–5) are packed in
    mixed radix (red high, black low), then ``signature * 2 + (1 if red_to_move else 0)``. Counts above
    the usual maximum (custom positions) are clamped, so every board has a signature.
    """
    counts = _counts(squares)
    sig = 0
    for code in PIECE_ORDER:
        n = min(counts[code + 7], _MAX[abs(code) - 1])
        sig = sig * (_MAX[abs(code) - 1] + 1) + n
    return sig * 2 + (1 if red_to_move else 0)


def signature_counts(signature: int) -> tuple[dict[int, int], bool]:
    """The inverse of :func:`material_signature`: ``({piece code: count}, red_to_move)``."""
    red_to_move = bool(signature & 1)
    sig = signature >> 1
    counts: dict[int, int] = {}
    for code in reversed(PIECE_ORDER):
        radix = _MAX[abs(code) - 1] + 1
        sig, counts[code] = divmod(sig, radix)
    return {c: counts[c] for c in PIECE_ORDER}, red_to_move


def pack_pieces(squares: Sequence[int]) -> bytes:
    """The squares of the pieces, grouped in :data:`PIECE_ORDER` and ascending within a group, as bytes.

    With the piece counts (from the material signature) this gives back the (piece, square) set.
    """
    groups: list[list[int]] = [[] for _ in range(15)]
    for sq, code in enumerate(squares):
        if code:
            groups[code + 7].append(sq)
    return bytes(sq for code in PIECE_ORDER for sq in groups[code + 7])


def unpack_pieces(packed: bytes, signature: int) -> set[int]:
    """The (piece, square) set of a packed board as integers ``(code + 7) * 90 + square``."""
    counts, _ = signature_counts(signature)
    out = set()
    i = 0
    for code in PIECE_ORDER:
        base = (code + 7) * 90
        for _ in range(counts[code]):
            if i < len(packed):
                out.add(base + packed[i])
            i += 1
    return out


def piece_set(squares: Sequence[int]) -> set[int]:
    """The (piece, square) set of a 90-square array, in the form of :func:`unpack_pieces`."""
    return {(code + 7) * 90 + sq for sq, code in enumerate(squares) if code}


def _key_after(k: int, code: int, cap: int, frm: int, to: int) -> int:
    """The key ``k`` after the piece ``code`` goes ``frm`` -> ``to`` taking ``cap`` (0: nothing); the side
    to move changes."""
    k ^= _Z[code + 7][frm] ^ _Z[code + 7][to] ^ BLACK_TO_MOVE
    if cap:
        k ^= _Z[cap + 7][to]
    return k


def iter_game_keys(squares: Sequence[int], red_to_move: bool, moves: Sequence[tuple[int, int]]):
    """Yield ``(unsigned key, squares after that ply)`` for ply 0 … len(moves) of a game.

    ``moves`` are (from, to) square pairs already known legal (read by the core readers); the squares
    list yielded is the same object each time, updated in place, so copy what you keep.
    """
    b = list(squares)
    k = _key(b, red_to_move)
    yield k, b
    for frm, to in moves:
        code = b[frm]
        k = _key_after(k, code, b[to], frm, to)
        b[to] = code
        b[frm] = 0
        yield k, b


# weights of the mixed-radix signature: signature = 2 * sum(count * weight) + side
_WEIGHTS: dict[int, int] = {}
_w = 1
for _code in reversed(PIECE_ORDER):
    _WEIGHTS[_code] = _w
    _w *= _MAX[abs(_code) - 1] + 1
del _w, _code
_ORDER_BYTES = bytes(code + 7 for code in PIECE_ORDER)


def iter_game_index(squares: Sequence[int], red_to_move: bool, moves: Sequence[tuple[int, int]]):
    """Yield ``(unsigned key, material signature, packed pieces thunk)`` for ply 0 … len(moves).

    The same as :func:`iter_game_keys` with :func:`material_signature` and :func:`pack_pieces` of each
    ply, computed incrementally for the importer: the signature changes only on captures, and the
    third item is a function that packs the pieces of that ply when called (before the next item is
    taken), so callers pay for it only for positions they store.
    """
    b = list(squares)
    cells = bytearray(c + 7 for c in b)  # piece code + 7 per square (7 = empty)
    red = red_to_move
    k = _key(b, red)
    counts = _counts(b)
    clamped = any(counts[c + 7] > _MAX[abs(c) - 1] for c in PIECE_ORDER)
    base = material_signature(b, True) >> 1

    def pack() -> bytes:
        out = bytearray()
        find = cells.find
        for v in _ORDER_BYTES:
            i = find(v)
            while i >= 0:
                out.append(i)
                i = find(v, i + 1)
        return bytes(out)

    yield k, base * 2 + (1 if red else 0), pack
    for frm, to in moves:
        code = b[frm]
        cap = b[to]
        k = _key_after(k, code, cap, frm, to)
        if cap:
            if clamped:
                b[to] = code
                b[frm] = 0
                base = material_signature(b, True) >> 1
            else:
                base -= _WEIGHTS[cap]
        b[to] = code
        b[frm] = 0
        cells[to] = code + 7
        cells[frm] = 7
        red = not red
        yield k, base * 2 + (1 if red else 0), pack
