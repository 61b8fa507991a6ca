"""Game records as a tree of moves, and Chinese-chess PGN read/write (after python-chess's ``chess.pgn``).

A :class:`Game` is the root :class:`GameNode`; every node holds the :class:`Move` that led to
it, its ``variations`` (``[0]`` is the main line), a ``comment`` (after the move), a
``starting_comment`` (before the first move of a variation) and ``nags``, the numeric
annotation glyphs of the move (``$2`` = ``?``, ``$4`` = ``??``, ``$6`` = ``?!``; :data:`NAG_SYMBOLS`).
The game has ``headers`` (tags, in order), ``errors`` found while reading, and a ``final_comment``
written after the result.

PGN (FORMATS.md §6, 中国象棋电脑应用规范(三) PGN文件格式): tags ``[Game "Chinese Chess"]``
first, ``Format`` = ``Chinese`` (default when absent), ``WXF`` or ``ICCS``; move text
``1. 炮二平五 马8进7``, variations ``( … )``, comments ``{ … }``, result ``1-0``/``0-1``/
``1/2-1/2``/``*``. The reader is tolerant: it accepts glued move numbers (``1.炮七进三``),
``N.`` continuation numbers, full-width WXF, tags with a colon (``[Round: "3"]``), any of the
three notations whatever the Format tag says, NAGs ``$N`` after a move and the move-suffix
glyphs ``! ? !! ?? !? ?!`` (read as their NAGs), and records problems on ``game.errors``
instead of raising. The writer writes NAGs as ``$N`` after the move.
"""

from __future__ import annotations

import datetime
import io
import os
import re
from collections.abc import Iterator
from typing import BinaryIO, TextIO, TypeGuard

from xiangqi.core.board import (
    ADVISOR,
    CANNON,
    ELEPHANT,
    HORSE,
    KING,
    ROOK,
    STARTING_FEN,
    Board,
    Move,
)
from xiangqi.core.board import ADVISOR_MOVES as _ADVISOR_MOVES
from xiangqi.core.board import ELEPHANT_MOVES as _ELEPHANT_MOVES
from xiangqi.core.board import HORSE_MOVES as _HORSE_MOVES
from xiangqi.core.board import KING_MOVES as _KING_MOVES
from xiangqi.core.board import PAWN_MOVES as _PAWN_MOVES
from xiangqi.core.encoding import decode_lenient, read_text_file
from xiangqi.core.errors import FenError, ReadError, RecordProblem, XiangqiError, excerpt
from xiangqi.core.notation import detect_notation, move_to_text, parse_text
from xiangqi.core.san import guess_rank_base, looks_like_san, parse_san

__all__ = ["GameNode", "Game", "read_game", "read_games", "read_headers", "skip_game", "split_headers",
           "write_game", "read_text_file", "iter_game_texts", "is_path", "read_pgn_file",
           "RESULTS", "NOTATIONS", "NAG_SYMBOLS"]

#: Result tokens of PGN.
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
#: Notation name -> value of the ``Format`` tag.
NOTATIONS = {"chinese": "Chinese", "wxf": "WXF", "iccs": "ICCS"}
#: Move-suffix glyph -> its NAG (PGN standard 8.2.4: $1 good, $2 mistake, $3 brilliant, $4 blunder,
#: $5 interesting, $6 dubious).
NAG_SYMBOLS = {"!": 1, "?": 2, "!!": 3, "??": 4, "!?": 5, "?!": 6}
_SUFFIX_RE = re.compile(r"(?<=[^!?])(!!|\?\?|!\?|\?!|!|\?)$")

_STANDARD_BOARD = STARTING_FEN.split()[0]


class GameNode:
    """A node of the game tree: the position after :attr:`move` (the root has no move).

    ``variations[0]`` is the main continuation, the others are alternatives to it.
    """

    def __init__(self, parent: GameNode | None = None, move: Move | None = None, *, comment: str = "",
                 starting_comment: str = "") -> None:
        self.parent = parent
        self.move = move
        self.variations: list[GameNode] = []
        self.comment = comment
        self.starting_comment = starting_comment
        #: Numeric annotation glyphs of the move (``$N``), e.g. ``{4}`` for a blunder (``??``).
        self.nags: set[int] = set()

    # -- tree navigation ---------------------------------------------------

    def game(self) -> Game:
        """The root :class:`Game`."""
        node = self
        while node.parent is not None:
            node = node.parent
        if not isinstance(node, Game):
            raise XiangqiError("this node is not attached to a Game")
        return node

    def root(self) -> GameNode:
        """The root node (normally the :class:`Game`)."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def ply(self) -> int:
        """Number of moves from the start position to this node (0 at the root)."""
        n = 0
        node = self
        while node.parent is not None:
            n += 1
            node = node.parent
        return n

    def path(self) -> list[GameNode]:
        """The nodes from the first move down to this one (excluding the root)."""
        nodes = []
        node: GameNode | None = self
        while node is not None and node.parent is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]

    def moves(self) -> list[Move]:
        """The moves leading from the start position to this node."""
        return [n.move for n in self.path() if n.move is not None]

    def board(self) -> Board:
        """A new :class:`Board` at this node, with the moves from the game's start on its stack."""
        board = self.game().board()
        for m in self.moves():
            board.push(m, validate=False)
        return board

    def next(self) -> GameNode | None:
        """The main continuation (``variations[0]``), or None at the end of a line."""
        return self.variations[0] if self.variations else None

    def end(self) -> GameNode:
        """The last node of the main continuation from here."""
        node = self
        while node.variations:
            node = node.variations[0]
        return node

    def mainline(self) -> Iterator[GameNode]:
        """The nodes of the main continuation after this node."""
        node = self
        while node.variations:
            node = node.variations[0]
            yield node

    def mainline_moves(self) -> list[Move]:
        """The moves of the main continuation after this node."""
        return [n.move for n in self.mainline() if n.move is not None]

    def is_main_variation(self) -> bool:
        """True if this node is the first child of its parent (or the root)."""
        return self.parent is None or self.parent.variations[0] is self

    def is_mainline(self) -> bool:
        """True if this node is on the game's main line."""
        node = self
        while node.parent is not None:
            if node.parent.variations[0] is not node:
                return False
            node = node.parent
        return True

    def is_end(self) -> bool:
        """True if no move follows."""
        return not self.variations

    def siblings(self) -> list[GameNode]:
        """The other continuations of this node's parent."""
        if self.parent is None:
            return []
        return [n for n in self.parent.variations if n is not self]

    def variation(self, move_or_index: Move | int) -> GameNode:
        """The child reached by ``move`` or the child at ``index``. Raises KeyError if absent."""
        if isinstance(move_or_index, int):
            return self.variations[move_or_index]
        for node in self.variations:
            if node.move == move_or_index:
                return node
        raise KeyError(f"no variation {move_or_index.iccs()}")

    def has_variation(self, move: Move) -> bool:
        """True if one of the continuations plays ``move``."""
        return any(n.move == move for n in self.variations)

    # -- editing -----------------------------------------------------------

    def add_variation(self, move: Move, *, comment: str = "", starting_comment: str = "") -> GameNode:
        """Append a continuation playing ``move`` (checked against this node's position) and return it.

        Raises :class:`~xiangqi.core.errors.IllegalMoveError` when the move is not legal here.
        """
        board = self.board()
        board.push(move)  # raises IllegalMoveError with the reason
        return self._add(move, comment=comment, starting_comment=starting_comment)

    def _add(self, move: Move, *, comment: str = "", starting_comment: str = "") -> GameNode:
        node = GameNode(self, move, comment=comment, starting_comment=starting_comment)
        self.variations.append(node)
        return node

    def add_main_variation(self, move: Move, *, comment: str = "") -> GameNode:
        """Insert a continuation playing ``move`` as the new main line (index 0) and return it."""
        node = self.add_variation(move, comment=comment)
        self.variations.remove(node)
        self.variations.insert(0, node)
        return node

    def add_line(self, moves: list[Move]) -> GameNode:
        """Append ``moves`` one after another from here (each checked); returns the last node."""
        node = self
        board = self.board()
        for m in moves:
            board.push(m)
            node = node._add(m)
        return node

    def promote_to_main(self, move: Move) -> None:
        """Make the continuation playing ``move`` the main one."""
        node = self.variation(move)
        self.variations.remove(node)
        self.variations.insert(0, node)

    def promote(self, move: Move) -> None:
        """Move the continuation playing ``move`` one place up."""
        node = self.variation(move)
        i = self.variations.index(node)
        if i > 0:
            self.variations[i - 1], self.variations[i] = self.variations[i], self.variations[i - 1]

    def demote(self, move: Move) -> None:
        """Move the continuation playing ``move`` one place down."""
        node = self.variation(move)
        i = self.variations.index(node)
        if i < len(self.variations) - 1:
            self.variations[i + 1], self.variations[i] = self.variations[i], self.variations[i + 1]

    def remove_variation(self, move: Move) -> None:
        """Delete the continuation playing ``move`` and everything after it."""
        self.variations.remove(self.variation(move))

    # -- text ----------------------------------------------------------------

    def text(self, notation: str = "chinese", **options: object) -> str:
        """The move leading to this node in ``notation`` (``chinese``, ``wxf``, ``iccs``); "" at the root."""
        if self.move is None or self.parent is None:
            return ""
        return move_to_text(self.parent.board(), self.move, notation, **options)

    def san(self) -> str:
        """The move in Chinese notation (the "standard" notation of xiangqi records), e.g. ``"炮二平五"``."""
        return self.text("chinese")

    def count_nodes(self) -> int:
        """Number of move nodes in the subtree below this node."""
        return sum(1 + child.count_nodes() for child in self.variations)

    def count_branches(self) -> int:
        """Number of alternative continuations (variations beyond the first) in the subtree."""
        return sum(max(0, len(n.variations) - 1) for n in self._walk())

    def _walk(self) -> Iterator[GameNode]:
        stack: list[GameNode] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.variations))

    def __repr__(self) -> str:
        mv = self.move.iccs() if self.move else "root"
        return f"<GameNode {mv} ply={self.ply()} variations={len(self.variations)}>"


class Game(GameNode):
    """The root of a game record: ``headers`` (tag → value, in order), ``errors`` and the tree.

    The start position is the ``FEN`` header when present, else the standard start.
    ``comment`` here is the comment before the first move; ``final_comment`` follows the result.
    """

    def __init__(self, headers: dict[str, str] | None = None) -> None:
        super().__init__()
        self.headers: dict[str, str] = {
            "Game": "Chinese Chess", "Event": "", "Date": "", "Red": "", "Black": "", "Result": "*"}
        if headers:
            self.headers.update(headers)
        self.errors: list[str] = []
        self.final_comment = ""

    @classmethod
    def from_board(cls, board: Board) -> Game:
        """A game holding ``board``'s history: start = ``board.starting_fen()``, moves = ``board.move_stack``.

        ``Result`` is set from ``board.outcome()`` when the game is over, else ``*``;
        ``Date`` is today (``yyyy.mm.dd``).
        """
        game = cls()
        game.setup(board.starting_fen())
        node: GameNode = game
        for m in board.move_stack:
            node = node._add(m)
        outcome = board.outcome()
        if outcome is not None:
            game.headers["Result"] = result_token(outcome.winner)
        game.headers["Date"] = datetime.date.today().strftime("%Y.%m.%d")
        return game

    def setup(self, fen: str) -> None:
        """Set the start position (``FEN`` header; removed when it is the standard start).

        Raises :class:`~xiangqi.core.errors.FenError` for a bad FEN.
        """
        board = Board(fen)
        if board.board_fen() == _STANDARD_BOARD and board.turn:
            self.headers.pop("FEN", None)
        else:
            self.headers["FEN"] = board.fen()

    def board(self) -> Board:
        """A new :class:`Board` at the start position. Raises FenError if the FEN header is bad."""
        fen = self.headers.get("FEN", "").strip()
        return Board(fen) if fen else Board()

    def game(self) -> Game:
        return self

    @property
    def problems(self) -> list[ReadError]:
        """The problems of :attr:`errors` as :class:`~xiangqi.core.errors.ReadError` exception objects,
        each with ``kind`` (``"truncated"``, ``"move"``, …), ``ply`` and ``offset`` (python-chess keeps
        exceptions on ``game.errors``; here ``errors`` keeps the strings and this gives the objects)."""
        return [e.error if isinstance(e, RecordProblem) else _guess_problem(e) for e in self.errors]

    def __str__(self) -> str:
        return write_game(self)

    def __repr__(self) -> str:
        return (f"<Game {self.headers.get('Red', '')!r} vs {self.headers.get('Black', '')!r} "
                f"{self.headers.get('Result', '*')} plies={len(self.mainline_moves())}>")


_PLY_RE = re.compile(r"\bply (\d+)")


def _guess_problem(message: str) -> ReadError:
    """A :class:`ReadError` for a plain message (code that gives no kind): kind and ply from its words."""
    m = _PLY_RE.search(message)
    low = message.lower()
    kind = ("truncated" if "truncated" in low or "cut short" in low or "end early" in low
            else "fen" if low.startswith(("fen", "start position", "binit")) else "tag" if "tag" in low
            else "variation" if "variation" in low or "branch" in low and "branch 0" not in low
            else "comment" if "comment" in low else "move" if m else "other")
    return ReadError(message, kind=kind, ply=int(m.group(1)) if m else None)


def result_token(winner: bool | None) -> str:
    """PGN result for a winner: True (Red) ``1-0``, False (Black) ``0-1``, None ``1/2-1/2``."""
    if winner is None:
        return "1/2-1/2"
    return "1-0" if winner else "0-1"


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

_TAG_RE = re.compile(r'^\[\s*([^\s\]":]+)\s*:?\s*"(.*)"\s*\]\s*$')
_TAG_LOOSE_RE = re.compile(r"^\[\s*([^\s\]\"':]+)\s*:?\s*(.*?)\s*\]\s*$")
_TOKEN_RE = re.compile(
    r"""
    (?P<comment>\{[^}]*\}?)                                  # { comment }, maybe unterminated
    | (?P<line_comment>;[^\n]*)                              # ; comment to end of line
    | (?P<open>\()
    | (?P<close>\))
    | (?P<result>(?:1-0|0-1|1/2-1/2|½-½)(?![\w/]) | \*)
    | (?P<number>\d+\s*(?:\.\s*)+(?![1-9=+\-.]))             # 1.  1...  3.   (not 26.5)
    | (?P<nag>\$\d+)
    | (?P<move>[^\s{}()\[\];]+)
    """,
    re.VERBOSE,
)


def iter_game_texts(text: str) -> Iterator[str]:
    """Split the text of a multi-game PGN file into the texts of single games.

    A new game starts at a tag line (``[Name "value"]`` at the start of a line, outside
    a comment) that follows move text.
    """
    lines = text.splitlines(keepends=True)
    # Fast path, one game (most files): after the first line of move text no line holds a "[", so no
    # line can be a tag line, and the tags before it hold at most one [Game] tag: the text is one game.
    games = offset = 0
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            games += _is_game_tag(stripped)
        elif stripped:
            if games <= 1 and "[" not in text[offset + len(line):]:
                yield text
                return
            break
        offset += len(line)
    buf: list[str] = []
    depth = 0
    seen_moves = seen_game_tag = False
    for line in lines:
        stripped = line.strip()
        is_tag = depth == 0 and stripped.startswith("[") and stripped.endswith("]")
        if is_tag and (seen_moves or (seen_game_tag and _is_game_tag(stripped))):
            yield "".join(buf)
            buf = []
            seen_moves = seen_game_tag = False
        buf.append(line)
        if is_tag:
            seen_game_tag = seen_game_tag or _is_game_tag(stripped)
            continue
        if stripped:
            seen_moves = True
        depth = max(0, depth + line.count("{") - line.count("}"))
    if buf and any(s.strip() for s in buf):
        yield "".join(buf)


def _is_game_tag(tag_line: str) -> bool:
    # [Game "Chinese Chess"] opens a record (it must come first, PGN spec), even one without moves
    return tag_line[1:].lstrip().startswith("Game ") or tag_line[1:].lstrip().startswith("Game:")


def _parse_game_text(text: str, last: bool = False) -> Game | None:
    """The game of one game's PGN text (None for blank text). ``last``: the text ends the file, so a move
    text that stops without its result where the ``Result`` tag gives one is reported as truncated."""
    headers, at, errors = split_headers(text)
    movetext = text[at:]
    if "\r" in movetext:
        movetext = movetext.replace("\r\n", "\n").replace("\r", "\n")
    if not headers and not movetext.strip():
        return None
    game = Game()
    game.headers = {"Game": "Chinese Chess"} if "Game" not in headers else {}
    game.headers.update(headers)
    game.errors = errors
    if headers.get("Variant", "").strip().lower() == "jieqi":  # hidden pieces: xiangqi.core.jieqi.read_pgn
        game.errors.append(RecordProblem("a 揭棋 (jieqi) record: read by xiangqi.core.jieqi", "variant"))
        return game
    try:
        board = _start_board(game.headers.get("FEN", "").strip())
    except FenError as exc:
        game.errors.append(RecordProblem(f"FEN tag: {exc}", "fen"))
        return game
    fmt = headers.get("Format", "").strip().lower()
    notation = {"chinese": "chinese", "wxf": "wxf", "iccs": "iccs"}.get(fmt)
    if headers.get("Variant", "").strip().lower() == "xiangqi" or (notation is None and _san_first(movetext)):
        # WinBoard/XBoard/Fairy-Stockfish SAN: White is Red; ranks 1-10 or 0-9 (xiangqi.core.san)
        if "White" in game.headers and not game.headers.get("Red", "").strip():
            game.headers["Red"] = game.headers.pop("White")
        base = guess_rank_base([m.group(0) for m in _TOKEN_RE.finditer(movetext) if m.lastgroup == "move"])
        kept = (list(game.errors), dict(game.headers))
        _parse_movetext(game, board, movetext, "san", last, 1 if base is None else base)
        if base is None and any(isinstance(e, RecordProblem) and e.kind in ("move", "truncated")
                                for e in game.errors):
            other = Game()
            other.headers, other.errors = dict(kept[1]), list(kept[0])
            _parse_movetext(other, other.board(), movetext, "san", last, 0)
            if len(other.end().path()) > len(game.end().path()):
                game = other
    else:
        _parse_movetext(game, board, movetext, notation, last)
    for tag in ("Event", "Date", "Red", "Black"):  # the tags every record has, as in Game()
        game.headers.setdefault(tag, "")
    game.headers.setdefault("Result", "*")
    return game


_new_node = object.__new__  # GameNode without __init__ (the reader sets every attribute itself)
_START_BOARDS: dict[str, Board] = {}


def _start_board(fen: str) -> Board:
    """A new board at ``fen`` ("" = the standard start), copied from a cache of parsed FENs."""
    board = _START_BOARDS.get(fen)
    if board is None:
        board = Board(fen) if fen else Board()
        if len(_START_BOARDS) < 1024:
            _START_BOARDS[fen] = board
    return board.copy()


def _san_first(movetext: str) -> bool:
    """True when the first move of the text is SAN with a piece letter (``1. Che3``)."""
    for m in _TOKEN_RE.finditer(movetext):
        if m.lastgroup == "move":
            return looks_like_san(m.group(0))
        if m.lastgroup in ("result", "open"):
            return False
    return False


def _parse_movetext(game: Game, board: Board, movetext: str, notation: str | None,
                    last: bool = False, rank_base: int = 1) -> None:
    node: GameNode = game
    last_kind = ""  # kind of the last token read (a cut file ends on a move number or half a move)
    stack: list[tuple[GameNode, Board]] = []  # where to return at ')' for each open '('
    at_variation_start = False
    pending_start = ""  # comment before the first move of a variation
    skipping = 0  # > 0 while skipping a broken variation: its count of open '('
    ended = False
    for m in _TOKEN_RE.finditer(movetext):
        kind = m.lastgroup
        tok = m.group(0)
        if kind == "comment":
            closed = tok.endswith("}")
            c = (tok[1:-1] if closed else tok[1:]).strip()
            if not closed:
                game.errors.append(RecordProblem(
                    f"truncated: unterminated comment at character {m.start()}, after ply "
                    f"{len(board.move_stack)}", "truncated", len(board.move_stack), m.start()))
            if skipping or not c:
                continue
            if ended:
                game.final_comment = f"{game.final_comment}\n{c}" if game.final_comment else c
            elif at_variation_start:
                pending_start = f"{pending_start}\n{c}" if pending_start else c
            elif node is game:
                game.comment = f"{game.comment}\n{c}" if game.comment else c
            else:
                node.comment = f"{node.comment}\n{c}" if node.comment else c
            continue
        if ended:
            continue
        if kind == "open":
            if skipping:
                skipping += 1
                continue
            stack.append((node, board.copy()))
            if node.parent is None:
                game.errors.append(RecordProblem(f"'(' before any move at character {m.start()}: variation "
                                                 "ignored", "variation", 0, m.start()))
                skipping = 1
                continue
            board.pop()
            node = node.parent
            at_variation_start, pending_start = True, ""
            continue
        if kind == "close":
            if skipping:
                skipping -= 1
                if skipping:
                    continue
            if not stack:
                game.errors.append(RecordProblem(f"unmatched ')' at character {m.start()}", "structure",
                                                 None, m.start()))
                continue
            node, board = stack.pop()
            at_variation_start, pending_start = False, ""
            continue
        if kind == "nag":
            # PGN's NAGs are $0-$255; a longer number is dropped (and never given to int() whole)
            if not skipping and node is not game and not at_variation_start and len(tok) <= 4 \
                    and int(tok[1:]) <= 255:
                node.nags.add(int(tok[1:]))
            continue
        if kind == "number" and not skipping:
            last_kind = "number"
        if skipping or kind in ("line_comment", "number"):
            continue
        if kind == "result":
            if not stack:
                res = "1/2-1/2" if tok == "½-½" else tok
                if game.headers.get("Result", "*") in ("", "*"):
                    game.headers["Result"] = res
                ended = True
            continue
        if tok in NAG_SYMBOLS:  # a glyph written apart from its move ("h2e2 ?!")
            if node is not game and not at_variation_start:
                node.nags.add(NAG_SYMBOLS[tok])
            continue
        glyph = _SUFFIX_RE.search(tok)
        if glyph:
            tok = tok[:glyph.start()]
        try:
            if notation == "san":
                move = parse_san(board, tok, rank_base)
            else:
                move = (_fast_chinese(board, tok) if notation in (None, "chinese") and tok[:1] > "\u2e7f"
                        else None)
                if move is None:
                    move = parse_text(board, tok, notation if notation and _fits(tok, notation) else None)
        except XiangqiError as exc:
            where = "variation" if stack else "main line"
            ply = len(board.move_stack) + 1
            if not stack and m.end() == len(movetext.rstrip()):
                game.errors.append(RecordProblem(
                    f"truncated: the move text ends in half a move {excerpt(tok)} after ply {ply - 1}: {exc}",
                    "truncated", ply - 1, m.start()))
                return
            game.errors.append(RecordProblem(f"ply {ply} ({where}): {exc}", "variation" if stack else "move",
                                             ply, m.start()))
            if stack:
                skipping = 1
                continue
            return  # the rest of the main line cannot be played
        board.push(move, validate=False)
        last_kind = "move"
        new = _new_node(GameNode)
        new.parent, new.move, new.variations, new.comment, new.starting_comment, new.nags = (
            node, move, [], "", pending_start, set())
        node.variations.append(new)
        node = new
        if glyph:
            node.nags.add(NAG_SYMBOLS[glyph.group(1)])
        at_variation_start, pending_start = False, ""
    ply = len(game.end().path())
    if skipping or stack:
        game.errors.append(RecordProblem(f"truncated: unclosed '(' at the end of the move text (main line "
                                         f"read to ply {ply})", "truncated", ply, len(movetext)))
    elif not ended and any(e.kind == "truncated" for e in game.errors if isinstance(e, RecordProblem)):
        pass
    elif not ended and last_kind == "number":
        game.errors.append(RecordProblem(f"truncated: the move text ends on a move number after ply {ply}",
                                         "truncated", ply, len(movetext)))
    elif not ended and last and last_kind == "move" and game.headers.get("Result", "*") in RESULTS[:3]:
        game.errors.append(RecordProblem(
            f"truncated: the move text stops after ply {ply} without its result "
            f"({game.headers['Result']}, as the Result tag says): the file looks cut", "truncated", ply,
            len(movetext)))


# -- the fast path of the reader: plain Chinese moves (炮二平五, 马８进７), about nine moves in ten ----------

_MOVE_CACHE: dict[int, Move] = {}
_PLAIN_CACHE: dict[str, tuple[int, int, str, int] | None] = {}
_DIAGONAL = (HORSE, ELEPHANT, ADVISOR)
_HORSE_LEG = [{to: leg for to, leg in _HORSE_MOVES[sq]} for sq in range(90)]
_ELEPHANT_EYE = [{to: eye for to, eye in _ELEPHANT_MOVES[sq]} for sq in range(90)]
_ADVISOR_TO = [frozenset(_ADVISOR_MOVES[sq]) for sq in range(90)]
_KING_TO = [frozenset(_KING_MOVES[sq]) for sq in range(90)]
_PAWN_TO = {color: [frozenset(_PAWN_MOVES[color][sq]) for sq in range(90)] for color in (True, False)}


def _plain_query(token: str) -> tuple[int, int, str, int] | None:
    """``(piece type, file, direction, target)`` of a Chinese move with no 前/后 (cached), else None."""
    try:
        return _PLAIN_CACHE[token]
    except KeyError:
        pass
    from xiangqi.core.notation import _chinese_queries

    plain = None
    try:
        queries = _chinese_queries(token)
    except XiangqiError:
        queries = ()
    if len(queries) == 1:
        q = queries[0]
        if q.qualifier is None and q.piece_type is not None and q.file is not None and 1 <= q.file <= 9:
            plain = (q.piece_type, q.file, q.direction, q.target)
    if len(_PLAIN_CACHE) < 100_000:
        _PLAIN_CACHE[token] = plain
    return plain


def _pseudo_ok(b: list[int], frm: int, to: int, kind: int, red: bool) -> bool:
    """True when the piece ``kind`` of colour ``red`` on ``frm`` may go to ``to`` (king safety aside):
    the rules of :meth:`Board._pseudo_targets` for one destination."""
    p = b[to]
    if p and (p > 0) == red:
        return False
    if kind == ROOK or kind == CANNON:
        if frm // 9 == to // 9:
            step = 1 if to > frm else -1
        elif frm % 9 == to % 9:
            step = 9 if to > frm else -9
        else:
            return False
        between = 0
        for x in range(frm + step, to, step):
            if b[x]:
                between += 1
        if kind == ROOK:
            return between == 0
        return between == (1 if p else 0)
    if kind == HORSE:
        leg = _HORSE_LEG[frm].get(to)
        return leg is not None and b[leg] == 0
    if kind == ELEPHANT:
        eye = _ELEPHANT_EYE[frm].get(to)
        return eye is not None and b[eye] == 0
    if kind == ADVISOR:
        return to in _ADVISOR_TO[frm]
    if kind == KING:
        return to in _KING_TO[frm]
    return to in _PAWN_TO[red][frm]


def _fast_chinese(board: Board, token: str) -> Move | None:
    """The legal move of a plain Chinese move text, or None when the full parser must decide (a 前/后
    form, no legal move, several: it then gives the error or the answer with its special cases)."""
    q = _plain_query(token)
    if q is None:
        return None
    kind, file, direction, target = q
    red = board.turn
    b = board.squares
    column = 9 - file if red else file - 1
    want = kind if red else -kind
    found = None
    for frm in range(column, 90, 9):
        if b[frm] != want:
            continue
        rank = frm // 9
        if direction == ".":
            if kind in _DIAGONAL:
                continue
            to = rank * 9 + (9 - target if red else target - 1)
        else:
            up = (direction == "+") == red  # towards higher ranks
            if kind in _DIAGONAL:
                tcol = 9 - target if red else target - 1
                dx = abs(tcol - column)
                dy = {HORSE: 3 - dx, ELEPHANT: 2, ADVISOR: 1}[kind]
                if dx == 0 or dx > 2 or (kind == ELEPHANT and dx != 2) or (kind == ADVISOR and dx != 1):
                    continue
                trank = rank + dy if up else rank - dy
                if not 0 <= trank <= 9:
                    continue
                to = trank * 9 + tcol
            else:
                trank = rank + target if up else rank - target
                if not 0 <= trank <= 9:
                    continue
                to = trank * 9 + column
        if to == frm or not _pseudo_ok(b, frm, to, kind, red) or not board._leaves_king_safe(frm, to):
            continue
        if found is not None:
            return None  # two pieces can: the full parser decides (or says it is ambiguous)
        found = frm * 90 + to
    if found is None:
        return None
    move = _MOVE_CACHE.get(found)
    if move is None:
        move = _MOVE_CACHE[found] = Move(found // 90, found % 90)
    return move


def _fits(token: str, notation: str) -> bool:
    try:
        return detect_notation(token) == notation
    except XiangqiError:
        return False


def read_game(source: str | TextIO | BinaryIO, *, encoding: str | None = None) -> Game | None:
    """Read one game from ``source``: PGN text or an open text or **binary** stream.

    From a stream, reads exactly one game so that repeated calls walk a multi-game file; returns None at
    the end. A binary stream (``open(path, "rb")``, ``io.BytesIO``) has its encoding sniffed once from
    its first 64 KB (UTF-8, GB18030/GBK or Big5, :func:`~xiangqi.core.encoding.decode_lenient`; or give
    ``encoding``), so GBK and Big5 files stream game by game.

    A path (``os.PathLike``, or a one-line string naming an existing file or ending in a record
    extension such as ``.pgn``/``.xqf``) is not taken for PGN text: it raises
    :class:`~xiangqi.core.errors.XiangqiError`. Read a file by its path, in whatever format it is,
    with :func:`xiangqi.read_game` (:func:`xiangqi.core.records.read_game`): the format dispatcher
    sits above this reader and the XQF, DhtmlXQ and EPD ones, which build on this module's
    :class:`Game` (tests/test_layers.py); :func:`read_pgn_file` reads a PGN file's every game.

    Never raises for bad content: problems (bad tags, illegal or unreadable moves, a bad FEN, a file cut
    short) are listed on ``game.errors`` (strings; ``game.problems`` gives them as
    :class:`~xiangqi.core.errors.ReadError` objects with ``kind`` and ``ply``) and the moves read before
    an error in the main line are kept.
    """
    if is_path(source):
        raise XiangqiError(f"{os.fspath(source)!r} is a file path, not PGN text: read a record file with "
                           "xiangqi.read_game (any format) or xiangqi.core.pgn.read_pgn_file")
    if isinstance(source, str):
        texts = iter_game_texts(source)
        text = next(texts, None)
        while text is not None:
            following = next(texts, None)
            game = _parse_game_text(text, last=following is None)
            if game is not None:
                return game
            text = following
        return None
    text, at_end = _next_game_text(source, encoding)
    if text is None:
        return None
    return _parse_game_text(text, last=at_end)


def read_headers(source: TextIO | BinaryIO, *, encoding: str | None = None) -> dict[str, str] | None:
    """The tags of the next game of a stream, without reading its moves (python-chess's ``read_headers``).

    The stream is left at the start of the following game, so ``read_headers`` and :func:`read_game`
    can be mixed; returns None at the end. Binary streams are decoded as in :func:`read_game`. About ten
    times faster than :func:`read_game` on master games: the move text is skipped, not played.
    """
    text, _at_end = _next_game_text(source, encoding)
    if text is None:
        return None
    return split_headers(text)[0]


def skip_game(source: TextIO | BinaryIO, *, encoding: str | None = None) -> bool:
    """Skip the next game of a stream without reading it; False at the end (python-chess's ``skip_game``)."""
    return _next_game_text(source, encoding)[0] is not None


_RECORD_SUFFIXES = (".pgn", ".txt", ".xqf", ".ubb", ".dhtml", ".dhtmlxq", ".epd", ".fen")


def is_path(source: object) -> TypeGuard[str | os.PathLike[str]]:
    """True for an ``os.PathLike`` or a string that names a file rather than holding PGN: one short line
    that is an existing file or ends in a record extension (``1. h2e2`` and ``[Event "x"]`` are text)."""
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str):
        return False
    text = source
    if not text or len(text) > 4096 or "\n" in text or text.lstrip().startswith(("[", "{")):
        return False
    if text.lower().endswith(_RECORD_SUFFIXES):
        return True
    try:
        return os.path.isfile(text)
    except (OSError, ValueError):
        return False


def _is_binary(stream: object) -> bool:
    if isinstance(stream, io.TextIOBase):
        return False
    if isinstance(stream, io.RawIOBase | io.BufferedIOBase):
        return True
    return "b" in getattr(stream, "mode", "")


def _stream_encoding(stream: BinaryIO, encoding: str | None) -> str:
    """The encoding of a binary stream: given, remembered from an earlier call, or sniffed from a sample."""
    if encoding:
        return encoding
    known = getattr(stream, "_xiangqi_encoding", None)
    if known:
        return known
    sample = b""
    if stream.seekable():
        pos = stream.tell()
        sample = stream.read(1 << 16)
        stream.seek(pos)
    elif hasattr(stream, "peek"):
        sample = stream.peek(1 << 16)
    if b"\n" in sample[:-1]:
        sample = sample[:sample.rindex(b"\n") + 1]  # whole lines: no character cut at the end
    try:
        enc = decode_lenient(sample)[1] if sample else "utf-8"
    except XiangqiError:
        enc = "gb18030"
    if enc == "utf-8-sig":
        enc = "utf-8"  # the BOM is stripped from the first tag line
    try:
        stream._xiangqi_encoding = enc  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return enc


def _next_game_text(stream: TextIO | BinaryIO, encoding: str | None = None) -> tuple[str | None, bool]:
    """The text of the next game of a stream (None at the end) and whether the stream ended with it.

    A game ends before a tag line that follows move text (as :func:`iter_game_texts`); the stream is
    put back to the start of that line (``seek``; a pushed-back line when it is not seekable).
    """
    binary = _is_binary(stream)
    enc = _stream_encoding(stream, encoding) if binary else ""  # type: ignore[arg-type]

    def decode(raw: bytes) -> str:
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            return decode_lenient(raw)[0] if len(raw) < 1 << 16 else raw.decode(enc, "replace")
        except XiangqiError:
            return raw.decode(enc, "replace")

    buf: list[str] = []
    depth = 0
    seen_moves = seen_game_tag = False
    pushback = getattr(stream, "_xiangqi_pushback", None)
    seekable = stream.seekable()
    line = ""
    while True:
        pos = stream.tell() if seekable else None
        if pushback is not None:
            line, pushback = pushback, None
            stream._xiangqi_pushback = None  # type: ignore[union-attr]
        else:
            raw = stream.readline()
            line = decode(raw) if binary else raw  # type: ignore[arg-type]
        if not line:
            break
        stripped = line.strip().lstrip("\ufeff")
        is_tag = depth == 0 and stripped.startswith("[") and stripped.endswith("]")
        if is_tag and (seen_moves or (seen_game_tag and _is_game_tag(stripped))):
            if pos is not None:
                stream.seek(pos)
                break
            # Not seekable: keep the line for the next call through a pushback attribute.
            stream._xiangqi_pushback = line  # type: ignore[union-attr]
            break
        buf.append(line)
        if is_tag:
            seen_game_tag = seen_game_tag or _is_game_tag(stripped)
        elif stripped:
            seen_moves = True
        depth = max(0, depth + line.count("{") - line.count("}"))
    text = "".join(buf)
    if not text.strip():
        return None, True
    return text, not line


def split_headers(text: str) -> tuple[dict[str, str], int, list[str]]:
    """The tags at the top of one game's PGN text, where its move text starts (a character offset) and
    the problems of unreadable tag lines. The fast header-only scan of :func:`read_headers` and the import."""
    headers: dict[str, str] = {}
    errors: list[str] = []
    pos = 0
    n = 0
    length = len(text)
    while pos < length:
        end = text.find("\n", pos)
        end = length if end < 0 else end + 1
        s = text[pos:end].strip().lstrip("\ufeff")
        n += 1
        if s:
            if not s.startswith("["):
                break
            m = _TAG_RE.match(s) or _TAG_LOOSE_RE.match(s)
            if m:
                headers[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
            else:
                errors.append(RecordProblem(f"line {n}: cannot read tag {s[:60]!r}", "tag"))
        pos = end
    return headers, pos, errors


def read_games(text: str) -> list[Game]:
    """Read every game of a (multi-game) PGN text; see :func:`read_game` for the error policy."""
    return [game for game, _start in read_games_at(text)]


def read_games_at(text: str) -> list[tuple[Game, int]]:
    """Every game of a PGN text with the character offset where its text starts."""
    out = []
    chunks = list(iter_game_texts(text))
    start = 0
    for i, chunk in enumerate(chunks):
        at = text.find(chunk[:64], start) if chunk else start
        start = at if at >= 0 else start
        game = _parse_game_text(chunk, last=i == len(chunks) - 1)
        if game is not None:
            out.append((game, start))
        start += len(chunk)
    return out


def replacement_places(game: Game) -> list[str]:
    """Where the U+FFFD characters of ``game`` are, in the order of the text: ``"tag Event"``,
    ``"the comment before the first move"``, ``"the comment after ply 7"``, …"""
    places = [f"tag {k}" for k, v in game.headers.items() for _ in range(v.count("\ufffd"))]
    places += ["the comment before the first move"] * game.comment.count("\ufffd")

    def walk(node: GameNode, ply: int) -> None:
        while node.variations:
            main = node.variations[0]
            for alt in [main, *node.variations[1:]]:
                places.extend([f"the comment before ply {ply + 1}"] * alt.starting_comment.count("\ufffd"))
                places.extend([f"the comment after ply {ply + 1}"] * alt.comment.count("\ufffd"))
                if alt is not main:
                    walk(alt, ply + 1)
            node, ply = main, ply + 1

    try:
        walk(game, 0)
    except RecursionError:
        pass
    places += ["the comment after the result"] * game.final_comment.count("\ufffd")
    return places


def read_pgn_file(path_or_bytes: str | bytes, encoding: str | None = None) -> list[Game]:
    """Read every game of a PGN file (path or bytes), sniffing its encoding (:func:`read_text_file`)."""
    return read_games(read_text_file(path_or_bytes, encoding))


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

_FIRST_TAGS = ("Game", "Event", "Site", "Date", "Round", "RedTeam", "Red", "BlackTeam", "Black", "Result")


def _clean_comment(text: str) -> str:
    return text.replace("}", "｝").replace("{", "｛")


def write_game(game: Game, *, notation: str = "chinese", fullwidth_black: bool = False,
               traditional: bool = False, columns: int = 80) -> str:
    """PGN text of ``game`` with moves in ``notation`` (``"chinese"``, ``"wxf"``, ``"iccs"`` or ``"san"``).

    ``"san"`` writes the chess-style PGN of WinBoard/XBoard and Fairy-Stockfish (:func:`_write_san_game`:
    White = Red, ``[Variant "xiangqi"]``, Fairy-Stockfish's SAN with ranks 1-10, :mod:`xiangqi.core.san`).

    ICCS moves are written ``H2-E2``, the form of 中国象棋电脑应用规范(三) that 象棋巫师 reads (its reader
    takes five characters from an upper-case file letter: FORMATS.md §3); the reader reads ``h2e2`` too.

    Tags: Game, Event, Site, Date, Round, RedTeam, Red, BlackTeam, Black, Result first (those
    present; Game, Event, Date, Red, Black, Result always), then the others in their order,
    FEN only when the start is not the standard one, and Format last. Variations are written
    in ``( )`` and comments in ``{ }`` (a brace inside a comment becomes the full-width ｛ ｝).
    Lines are wrapped at ``columns`` characters between tokens. ``fullwidth_black`` and
    ``traditional`` apply to Chinese text. A line break in a tag value becomes a space; a
    ``Result`` tag other than ``1-0 0-1 1/2-1/2 *`` is kept as a tag, and ``*`` ends the move text.
    Raises :class:`XiangqiError` (a ``ValueError``) for an unknown notation or variations nested
    too deeply to write (past Python's recursion limit, about 1000 levels), and FenError when the
    game's FEN header is bad.
    """
    key = notation.lower()
    if key == "san":
        return _write_san_game(game, columns)
    if key not in NOTATIONS:
        raise XiangqiError(f"unknown notation {notation!r} (expected chinese, wxf, iccs or san)")
    options: dict[str, object] = {}
    if key == "chinese":
        options = {"fullwidth_black": fullwidth_black, "traditional": traditional}
    if key == "iccs":
        key = "iccs-dash"
    start = game.board()
    headers = dict(game.headers)
    headers.pop("FEN", None)
    headers.pop("Format", None)
    out = io.StringIO()
    written = set()
    for tag in _FIRST_TAGS:
        if tag in headers or tag in ("Game", "Event", "Date", "Red", "Black", "Result"):
            value = headers.get(tag, "Chinese Chess" if tag == "Game" else ("*" if tag == "Result" else ""))
            out.write(f'[{tag} "{_escape(value)}"]\n')
            written.add(tag)
    for tag, value in headers.items():
        if tag not in written:
            out.write(f'[{tag} "{_escape(value)}"]\n')
    if not (start.board_fen() == _STANDARD_BOARD and start.turn):
        out.write(f'[FEN "{start.fen()}"]\n')
    out.write(f'[Format "{NOTATIONS[notation.lower()]}"]\n\n')

    return out.getvalue() + _movetext(game, start, headers, key, options, columns)


_SAN_FIRST_TAGS = ("Event", "Site", "Date", "Round", "White", "Black", "Result")


def _write_san_game(game: Game, columns: int) -> str:
    """The chess-style PGN of WinBoard/XBoard and Fairy-Stockfish: Seven Tag Roster with White = Red,
    ``[Variant "xiangqi"]``, ``FEN``/``SetUp`` for another start, SAN moves with ranks 1-10."""
    start = game.board()
    headers = {k: v for k, v in game.headers.items()
               if k not in ("Game", "Format", "FEN", "SetUp", "Variant")}
    headers["White"] = headers.pop("Red", "")
    out = io.StringIO()
    for tag in _SAN_FIRST_TAGS:
        default = "*" if tag == "Result" else "?" if tag in ("Site", "Round") else ""
        out.write(f'[{tag} "{_escape(headers.get(tag, default))}"]\n')
    for tag, value in headers.items():
        if tag not in _SAN_FIRST_TAGS:
            out.write(f'[{tag} "{_escape(value)}"]\n')
    out.write('[Variant "xiangqi"]\n')
    if not (start.board_fen() == _STANDARD_BOARD and start.turn):
        out.write(f'[SetUp "1"]\n[FEN "{start.fen()}"]\n')
    out.write("\n")
    return out.getvalue() + _movetext(game, start, headers, "san", {}, columns)


def _movetext(game: Game, start: Board, headers: dict[str, str], key: str, options: dict[str, object],
              columns: int) -> str:
    out = io.StringIO()
    tokens: list[str] = []
    if game.comment:
        tokens.append("{" + _clean_comment(game.comment) + "}")
    try:
        _write_line(game, start, tokens, key, options, force_number=True)
    except RecursionError:
        raise XiangqiError("the variations are nested too deeply to write as PGN") from None
    result = headers.get("Result", "*")
    tokens.append(result if result in RESULTS else "*")
    if game.final_comment:
        tokens.append("{" + _clean_comment(game.final_comment) + "}")
    line = ""
    for tok in tokens:
        if line and len(line) + 1 + len(tok) > columns:
            out.write(line + "\n")
            line = tok
        else:
            line = f"{line} {tok}" if line else tok
    if line:
        out.write(line + "\n")
    return out.getvalue()


def _escape(value: str) -> str:
    """A tag value for ``[Tag "value"]``: backslash and quote escaped, line breaks made spaces."""
    value = " ".join(value.splitlines())  # every line break str.splitlines knows (\r, \u2028, …)
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _number(board: Board) -> str:
    return f"{board.fullmove_number}." if board.turn else f"{board.fullmove_number}..."


def _write_line(node: GameNode, board: Board, tokens: list[str], notation: str, options: dict[str, object],
                *, force_number: bool) -> None:
    """Append the tokens of ``node``'s main continuation (with its side variations) to ``tokens``.

    ``board`` is the position at ``node``; it is the same again on return.
    """
    need_number = force_number
    pushed = 0
    while node.variations:
        main = node.variations[0]
        assert main.move is not None
        if main.starting_comment:
            tokens.append("{" + _clean_comment(main.starting_comment) + "}")
            need_number = True
        text = move_to_text(board, main.move, notation, **options)
        tokens.append(f"{_number(board)} {text}" if board.turn or need_number else text)
        tokens.extend(f"${n}" for n in sorted(main.nags))
        need_number = False
        if main.comment:
            tokens.append("{" + _clean_comment(main.comment) + "}")
            need_number = True
        for alt in node.variations[1:]:
            assert alt.move is not None
            tokens.append("(")
            if alt.starting_comment:
                tokens.append("{" + _clean_comment(alt.starting_comment) + "}")
            tokens.append(f"{_number(board)} {move_to_text(board, alt.move, notation, **options)}")
            tokens.extend(f"${n}" for n in sorted(alt.nags))
            if alt.comment:
                tokens.append("{" + _clean_comment(alt.comment) + "}")
            board.push(alt.move, validate=False)
            _write_line(alt, board, tokens, notation, options, force_number=bool(alt.comment))
            board.pop()
            tokens.append(")")
            need_number = True
        board.push(main.move, validate=False)
        pushed += 1
        node = main
    for _ in range(pushed):
        board.pop()
