"""ECCO opening codes (中国象棋开局编号, ECCO 2004): the code → name table and a classifier from the moves.

ECCO (Encyclopedia of Chinese Chess Openings) names an opening by a letter and two digits, A00–E48:
A 非中炮 (飞相, 起马, 仕角炮, 过宫炮, side openings), B 中炮 against defences other than 屏风马 and
顺/列炮, C 中炮对屏风马, D 顺炮 and 列炮, E 仙人指路 and 对兵局. It is what 象棋巫师, 东萍象棋网 and
most Chinese game databases write in a PGN's ``[ECCO]`` tag.

Source of the definitions (the moves that make each code) and of the names: the published ECCO 2004
system, on the xqbase ECCO pages (https://www.xqbase.com/ecco/ and its FAQ) and in English on
xqinenglish's "ECCO classification code A…E" pages. The names ship as data
(``data/ecco_names.tsv``); the definitions are written as a readable table of rules in
:mod:`xiangqi.study.ecco_rules` (our own form and code).

The classifier looks at the first 20 plies. A game whose first move is on Red's left wing
(炮八平五, 兵七进一, …) is mirrored first, so mirrored openings get the same code; a code's moves
may come in another order where the definition allows it (transpositions). A game that stops
before a variation's defining move gets the parent code.

>>> classify(["h2e2", "h9g7"])
Ecco(code='B05', name='中炮对进左马')
>>> classify(["b2e2", "b9c7"]).code          # the same on the other wing
'B05'
>>> name("E10")
'仙人指路对卒底炮'
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import NamedTuple

from xiangqi.core.board import STARTING_BOARD_FEN, Board, Move, board_fen_grid
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import GameNode
from xiangqi.study import ecco_rules

__all__ = ["WINDOW", "Ecco", "classify", "classify_path", "code_names", "code_names_en", "english_name",
           "name", "name_en", "wxf_tokens"]

#: Plies the classifier reads (the ECCO window).
WINDOW = ecco_rules.WINDOW


class Ecco(NamedTuple):
    """An ECCO code (``"C30"``) and its published name (``"中炮过河车互进七兵对屏风马"``)."""

    code: str
    name: str


@functools.cache
def code_names() -> dict[str, str]:
    """The ECCO 2004 code → name table: 260 named codes from A00 to E48 (gaps are unassigned).

    Read once from the package data ``xiangqi/study/data/ecco_names.tsv`` (its header names the
    source). Names are as published; ``"："`` separates an opening from its variation.
    """
    text = resources.files("xiangqi.study").joinpath("data/ecco_names.tsv").read_text(encoding="utf-8")
    table: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            code, label = line.split("\t", 1)
            table[code] = label
    return table


def name(code: str) -> str:
    """The name of an ECCO code, e.g. ``name("C30")``.

    Raises KeyError naming the code when it is unknown or unassigned (e.g. ``A09``).
    """
    try:
        return code_names()[code.strip().upper()]
    except KeyError:
        raise KeyError(f"not a named ECCO 2004 code: {code!r} "
                       "(A00-E48, see xiangqi.study.ecco.code_names())") from None


@functools.cache
def _terms() -> tuple[dict[str, tuple[str, str]], int]:
    import unicodedata

    text = resources.files("xiangqi.study").joinpath("data/ecco_terms_en.tsv").read_text(encoding="utf-8")
    terms: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            zh, en, kind = line.split("\t")
            terms[unicodedata.normalize("NFKC", zh)] = (en, kind)
    return terms, max(map(len, terms))


def english_name(chinese: str) -> str:
    """The English form of an ECCO name, term by term from the table ``data/ecco_terms_en.tsv``.

    The name (NFKC: full-width digits and colon as ASCII) is read left to right, the longest term of the
    table that fits at each place; the parts of one side are joined with ", ", 对 gives "vs", 转 "to",
    红/黑 "Red"/"Black" before a part, 局 "Opening" and the opening/variation mark ":" (the table's header
    gives its source). ``english_name("中炮过河车互进七兵对屏风马")`` is ``"Central Cannon, River-Crossing
    Rook, Both Seventh Pawns vs Screen Horses"``. Raises ValueError naming the first character no term covers.
    """
    import unicodedata

    terms, longest = _terms()
    s = unicodedata.normalize("NFKC", chinese).strip()
    out: list[str] = []
    last = ""
    i = 0
    while i < len(s):
        for n in range(min(longest, len(s) - i), 0, -1):
            found = terms.get(s[i:i + n])
            if found is not None:
                break
        else:
            raise ValueError(f"ECCO name {chinese!r}: no English term for {s[i]!r} at {i}")
        en, kind = found
        if kind == "colon":
            out.append(en)
        elif kind == "suffix":
            out.append(f" {en}")
        elif kind in ("term", "side") and last in ("term", "suffix"):
            out.append(f", {en}")
        else:
            out.append(f" {en}" if out else en)
        last = kind
        i += n
    return "".join(out)


@functools.cache
def code_names_en() -> dict[str, str]:
    """The ECCO code → English name table (:func:`english_name` of every name of :func:`code_names`)."""
    return {code: english_name(label) for code, label in code_names().items()}


def name_en(code: str) -> str:
    """The English name of an ECCO code (``name_en("B00")`` is ``"Central Cannon Opening"``); KeyError as
    :func:`name`."""
    name(code)  # the same error for an unknown code
    return code_names_en()[code.strip().upper()]


_LETTERS = {"k": "K", "a": "A", "b": "E", "n": "H", "r": "R", "c": "C", "p": "P"}
_DIAGONAL = {"A", "E", "H"}


def _start_grid() -> list[str | None]:
    return board_fen_grid(STARTING_BOARD_FEN)


_START = _start_grid()


def _as_move(m: Move | str) -> Move:
    return m if isinstance(m, Move) else Move.from_iccs(m)


def wxf_tokens(moves: Iterable[Move | str], *, plies: int = WINDOW) -> tuple[list[str], list[str]]:
    """The first ``plies`` moves from the standard start as the ECCO rules read them: (Red's, Black's).

    Each move is a WXF token from the mover's side (``C2.5``, ``H8+7``; horse H, elephant E, ``.``
    sideways), without the tandem-piece marks, after mirroring the game when Red's first move starts
    on files 6–9 (Red's left wing). ``moves`` are :class:`Move` objects or ICCS strings; they are
    taken as legal (a move from an empty square raises :class:`XiangqiError`).
    """
    grid = list(_START)
    seq = [_as_move(m) for _, m in zip(range(plies), moves, strict=False)]
    mirror = bool(seq) and 9 - seq[0].from_square % 9 > 5
    out: tuple[list[str], list[str]] = ([], [])
    for ply, m in enumerate(seq):
        frm, to = m.from_square, m.to_square
        piece = grid[frm]
        if piece is None:
            raise XiangqiError(f"ply {ply + 1}: no piece on {m.iccs()[:2]} to move ({m.iccs()})")
        grid[to], grid[frm] = piece, None
        key = (piece, frm, to, mirror)
        tok = _TOKENS.get(key)
        if tok is None:
            tok = _TOKENS[key] = _wxf_token(piece, frm, to, mirror)
        out[0 if piece.isupper() else 1].append(tok)
    return out


#: WXF token of (piece letter of the FEN, from, to, mirrored): a token depends on nothing else, and a
#: corpus's openings use a few thousand (at most 14 * 90 * 90 * 2); the import classifies every game.
_TOKENS: dict[tuple[str, int, int, bool], str] = {}


def _wxf_token(piece: str, frm: int, to: int, mirror: bool) -> str:
    ff, fr, tf, tr = frm % 9, frm // 9, to % 9, to // 9
    if mirror:
        ff, tf = 8 - ff, 8 - tf
    red = piece.isupper()
    letter = _LETTERS[piece.lower()]
    num = (lambda f: 9 - f) if red else (lambda f: f + 1)
    ahead = (tr - fr) if red else (fr - tr)
    if letter in _DIAGONAL:
        return f"{letter}{num(ff)}{'+' if ahead > 0 else '-'}{num(tf)}"
    if ahead == 0:
        return f"{letter}{num(ff)}.{num(tf)}"
    return f"{letter}{num(ff)}{'+' if ahead > 0 else '-'}{abs(ahead)}"


def _moves_of(source: object) -> list[Move] | None:
    """The moves from the start of a Board, Game/GameNode or move sequence; None when the game does not
    start from the standard position (ECCO then does not apply)."""
    if isinstance(source, Board):
        start, moves = source.starting_fen(), list(source.move_stack)
    elif isinstance(source, GameNode):
        game = source.game()
        start = game.headers.get("FEN", "").strip() or None
        moves = game.mainline_moves() if source is game else source.moves()
    elif isinstance(source, str):
        raise TypeError("classify() takes a list of moves (Move or ICCS strings), a Board or a Game, "
                        "not one string; split the ICCS moves first")
    else:
        start, moves = None, [_as_move(m) for m in source]  # type: ignore[attr-defined]
    if start is not None:
        board_fen, *rest = start.split()
        if board_fen != STARTING_BOARD_FEN or (rest and rest[0] not in ("w", "r")):
            return None
    return moves


def classify_path(source: Board | GameNode | Sequence[Move | str], *, plies: int = WINDOW) -> list[str]:
    """The codes from the most general to the game's own, e.g. ``['A00', 'B00', 'B05', 'C00', 'C30']``.

    The chain of definitions the game's first ``plies`` moves satisfy; the last one is its code
    (see :func:`classify`). An empty list when the game does not start from the standard position.
    """
    moves = _moves_of(source)
    if moves is None:
        return []
    tokens = wxf_tokens(moves, plies=plies)
    path: list[str] = []
    here: ecco_rules.Node | str = ecco_rules.ROOT
    while isinstance(here, ecco_rules.Node):
        if here.code is not None and (not path or path[-1] != here.code):
            path.append(here.code)
        for condition, target in here.branches:
            if condition(tokens):
                here = target
                break
        else:
            break
    if isinstance(here, str) and path[-1] != here:
        path.append(here)
    return path


def classify(source: Board | GameNode | Sequence[Move | str], *, plies: int = WINDOW) -> Ecco | None:
    """The ECCO code and name of a game's opening, from its moves (any ``[ECCO]`` tag is not read).

    ``source``: a list of moves from the standard start (:class:`Move` or ICCS strings such as
    ``"h2e2"``), a :class:`Board` (its move stack) or a :class:`Game` (its main line; a
    :class:`GameNode`: the moves up to it). Only the first ``plies`` (default 20) count.
    Returns None when the game starts from another position (ECCO names openings of the full
    board only). Raises :class:`XiangqiError` for a move from an empty square.

    Definitions: the published ECCO 2004 system (xqbase ECCO pages; xqinenglish's
    "ECCO classification code A…E"), as written in :mod:`xiangqi.study.ecco_rules`.
    """
    path = classify_path(source, plies=plies)
    if not path:
        return None
    code = path[-1]
    return Ecco(code, code_names()[code])
