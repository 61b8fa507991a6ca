"""Algebraic notation (SAN) of xiangqi, as Fairy-Stockfish, XBoard/WinBoard and pychess-variants write it.

``1. Che3 Hg8 2. Hc3 Ri9``: a piece letter, the disambiguation (from-file, from-rank or both, only when
another piece of the same kind could go to the same point), ``x`` for a capture, the target point, and
``+`` for check or ``#`` for mate. Points are files ``a``–``i`` from Red's left and ranks counted from
Red's side. Facts checked against Fairy-Stockfish 11.1 (``pyffish.get_san``, variant ``xiangqi``):

* letters K (帅/将), A (仕/士), E (相/象), H (马), R (车), C (炮), P (兵/卒); a pawn move keeps its ``P``
  (``Pe5``). Reading also takes the FEN letters B (elephant) and N (horse) and a pawn move without a
  letter (``e5``), as chess-minded tools write it;
* ranks 1–10 (``Che3`` = h2e2 of ICCS, ``Hg8`` = h9g7) in Fairy-Stockfish's SAN and UCI. XBoard/WinBoard
  number the ranks of a 10-rank board 0–9 (Fairy-Stockfish in XBoard mode takes and sends ``h2e2``), so
  their records read ``Che2``; :func:`parse_san` takes ``rank_base`` 1 or 0, and the PGN reader tries
  1 first and then 0 when a game does not read (the rank ``10`` or ``0`` in a game decides at once);
* long forms ``Ch3-e3``/``Ch3xe3`` and bare coordinates ``h3e3`` (Fairy-Stockfish's UCI moves) read too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xiangqi.core.errors import AmbiguousMoveError, IllegalMoveError, InvalidMoveError
from xiangqi.core.pieces import ADVISOR, CANNON, ELEPHANT, HORSE, KING, PAWN, ROOK, Move

if TYPE_CHECKING:
    from xiangqi.core.board import Board

__all__ = ["SAN_LETTERS", "parse_san", "move_to_san", "looks_like_san", "guess_rank_base"]

#: Piece type -> SAN letter (Fairy-Stockfish).
SAN_LETTERS = {KING: "K", ADVISOR: "A", ELEPHANT: "E", HORSE: "H", ROOK: "R", CANNON: "C", PAWN: "P"}
_TYPES = {"K": KING, "A": ADVISOR, "E": ELEPHANT, "B": ELEPHANT, "H": HORSE, "N": HORSE, "R": ROOK,
          "C": CANNON, "P": PAWN}
_SAN_RE = re.compile(r"^([KAEBHNRCP])?([a-i])?(10|[0-9])?([x:-])?([a-i])(10|[0-9])[+#]?[!?]*$")
_FILES = "abcdefghi"


def looks_like_san(token: str) -> bool:
    """True when ``token`` has the shape of a SAN move with a piece letter (``Che3``, ``Hg8``, ``Rxa10``)."""
    return bool(token[:1].isupper() and _SAN_RE.match(token))


def guess_rank_base(tokens: list[str]) -> int | None:
    """1 when a move names rank 10, 0 when one names rank 0, None when the moves do not tell."""
    for tok in tokens:
        m = _SAN_RE.match(tok)
        if m:
            if "10" in (m.group(3), m.group(6)):
                return 1
            if "0" in (m.group(3), m.group(6)):
                return 0
    return None


def parse_san(board: Board, text: str, rank_base: int = 1) -> Move:
    """The legal move that SAN ``text`` names on ``board``; ranks counted from ``rank_base`` (1 or 0).

    Raises :class:`InvalidMoveError` for text that is not SAN (or names a rank outside the board),
    :class:`IllegalMoveError` when no legal move fits and :class:`AmbiguousMoveError` when several do.
    """
    m = _SAN_RE.match(text.strip())
    if not m:
        raise InvalidMoveError(f"not a SAN move: {text!r} (expected e.g. Che3, Hg8, Rxa10)")
    letter, ffile, frank, _sep, tfile, trank = m.groups()

    def rank(r: str) -> int:
        v = int(r) - rank_base
        if not 0 <= v <= 9:
            raise InvalidMoveError(f"{text!r}: rank {r} is off the board (ranks {rank_base}-{rank_base + 9})")
        return v

    to = rank(trank) * 9 + _FILES.index(tfile)
    from_rank = rank(frank) if frank is not None else None
    want = _TYPES[letter] if letter else (None if ffile and frank else PAWN)
    found = []
    for move in board.legal_moves:
        if move.to_square != to:
            continue
        code = board.squares[move.from_square]
        if want is not None and abs(code) != want:
            continue
        if ffile is not None and move.from_square % 9 != _FILES.index(ffile):
            continue
        if from_rank is not None and move.from_square // 9 != from_rank:
            continue
        found.append(move)
    if len(found) == 1:
        return found[0]
    if not found:
        raise IllegalMoveError(f"{text}: no legal move fits (ranks counted from {rank_base})")
    raise AmbiguousMoveError(f"{text}: fits {', '.join(mv.iccs() for mv in found)}")


def move_to_san(board: Board, move: Move, rank_base: int = 1) -> str:
    """``move`` (legal on ``board``) in SAN as Fairy-Stockfish writes it, ranks from ``rank_base``."""
    code = board.squares[move.from_square]
    kind = abs(code)
    frm, to = move.from_square, move.to_square
    others = [m.from_square for m in board.legal_moves
              if m.to_square == to and m.from_square != frm and board.squares[m.from_square] == code]
    dis = ""
    if others:
        if all(o % 9 != frm % 9 for o in others):
            dis = _FILES[frm % 9]
        elif all(o // 9 != frm // 9 for o in others):
            dis = str(frm // 9 + rank_base)
        else:
            dis = f"{_FILES[frm % 9]}{frm // 9 + rank_base}"
    capture = "x" if board.squares[to] else ""
    text = f"{SAN_LETTERS[kind]}{dis}{capture}{_FILES[to % 9]}{to // 9 + rank_base}"
    board.push(move, validate=False)
    try:
        if board.is_check():
            text += "#" if board.is_checkmate() else "+"
    finally:
        board.pop()
    return text
