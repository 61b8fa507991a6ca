"""Position validation for the position editor (摆谱): is this a position a real game can reach?

:func:`validate_position` lists every problem with a message in Chinese and
English naming the side, the piece and the square (reported.md R10: "the
**red** elephant on d0 stands on a square no elephant can reach"). The core's
FEN reader already refuses malformed FEN, piece counts above the full set and
kings outside their palace; this adds the placement rules of RULES.md §2
(advisors on their five palace points, elephants on their seven points, pawns
never behind their start rank nor on its empty files) and that the side not to
move is not in check (the side to move could take the king).
"""

from __future__ import annotations

import dataclasses

from xiangqi.core.board import (
    ADVISOR,
    BLACK,
    ELEPHANT,
    PAWN,
    PIECE_NAMES_ZH,
    RED,
    Board,
    Color,
    square_name,
)
from xiangqi.core.errors import FenError

_SIDE_ZH = {RED: "红", BLACK: "黑"}
_SIDE_EN = {RED: "red", BLACK: "black"}
_NAME_EN = {ADVISOR: "advisor", ELEPHANT: "elephant", PAWN: "pawn"}


def _mirror(names: list[str]) -> set[str]:
    return {n[0] + str(9 - int(n[1])) for n in names}


_ADVISOR_POINTS = {RED: {"d0", "f0", "e1", "d2", "f2"}}
_ADVISOR_POINTS[BLACK] = _mirror(list(_ADVISOR_POINTS[RED]))
_ELEPHANT_POINTS = {RED: {"a2", "c0", "c4", "e2", "g0", "g4", "i2"}}
_ELEPHANT_POINTS[BLACK] = _mirror(list(_ELEPHANT_POINTS[RED]))


@dataclasses.dataclass(frozen=True)
class Problem:
    """One reason a position is impossible: messages in Chinese and English, and the square (or None)."""

    zh: str
    en: str
    square: str | None = None


def _pawn_ok(color: Color, name: str) -> bool:
    file, rank = name[0], int(name[1])
    own = rank if color == RED else 9 - rank  # ranks counted from the pawn's own side
    if own < 3:
        return False
    if own <= 4:
        return file in "acegi"
    return True


def validate_position(fen: str) -> tuple[Board | None, list[Problem]]:
    """Check ``fen`` as a game position. Returns ``(board, problems)``; ``board`` is None when the FEN
    cannot be read at all. An empty problem list means the position is possible."""
    try:
        board = Board(fen)
    except FenError as exc:
        return None, [Problem(f"FEN 有误：{exc.reason}（{exc.field}，第{exc.position}个字符）", str(exc))]
    problems: list[Problem] = []
    for sq, code in enumerate(board.squares):
        if code == 0:
            continue
        color = code > 0
        kind = abs(code)
        name = square_name(sq)
        zh_piece = _SIDE_ZH[color] + PIECE_NAMES_ZH[kind][0 if color else 1]
        if kind == ADVISOR and name not in _ADVISOR_POINTS[color]:
            problems.append(Problem(f"{zh_piece}在{name}：仕（士）只能在本方九宫的五个点上",
                                    f"the {_SIDE_EN[color]} advisor on {name} stands on a square no advisor "
                                    f"can reach", name))
        elif kind == ELEPHANT and name not in _ELEPHANT_POINTS[color]:
            problems.append(Problem(f"{zh_piece}在{name}：相（象）只能在本方的七个象位上",
                                    f"the {_SIDE_EN[color]} elephant on {name} stands on a square "
                                    f"no elephant can reach", name))
        elif kind == PAWN and not _pawn_ok(color, name):
            problems.append(Problem(f"{zh_piece}在{name}：兵（卒）不会后退，也不会在未过河时横走",
                                    f"the {_SIDE_EN[color]} pawn on {name} stands on a square "
                                    f"no pawn can reach", name))
    # The side that has just moved may not be left in check.
    waiting = not board.turn
    probe = board.copy(stack=False)
    probe.turn = waiting
    if probe.is_check():
        ksq = square_name(board.king(waiting))
        if board.king(RED) % 9 == board.king(BLACK) % 9 and not any(
                board.squares[s] for s in range(min(board.king(RED), board.king(BLACK)) + 9,
                                                max(board.king(RED), board.king(BLACK)), 9)):
            zh_why, en_why = "将帅照面", "the kings face each other"
        else:
            zh_why, en_why = "不走棋的一方正被将军", "the side not to move is in check"
        problems.append(Problem(f"{zh_why}（{ksq}）：轮走方可以直接吃将",
                                f"{en_why} ({ksq}): the side to move could take the king", ksq))
    return board, problems
