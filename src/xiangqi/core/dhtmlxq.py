"""DhtmlXQ / UBB game records (东萍象棋 dpxq.com; also 象棋桥 and 天天象棋 "复制UBB"): read and write.

Layout (FORMATS.md §8; the dpxq player script and vschess ``dataToNode_DhtmlXQ``): a block
``[DhtmlXQ] … [/DhtmlXQ]`` (or ``[DhtmlXQHTML]``/``[DhtmlXQiFrame]``) of fields
``[DhtmlXQ_key]value[/DhtmlXQ_key]``:

* ``binit``: 64 digits, 32 pieces × ``xy`` in the XQF order 车马相仕帅仕相马车炮炮兵×5 (Red, then
  Black); ``x`` 0–8 from the left, ``y`` 0–9 **from the top** (Black's side); ``99`` = off the board.
  Absent: the standard start.
* ``movelist``: the main line as 4-digit moves ``x1y1x2y2`` (same axes): ``7747`` is h2e2.
* ``move_<p>_<n>_<b>``: branch ``b`` forks from branch ``p``; its first move replaces ply ``n``
  (1-based) of ``p``. The main line is branch 0.
* ``comment<n>`` (main line, ply ``n``; ``comment0`` = game comment) and ``comment<b>_<n>``;
  ``||`` stands for a line break.
* metadata: title, event, date, place, round, red, black, redteam, …, result (红胜/黑胜/和棋).
"""

from __future__ import annotations

import re

from xiangqi.core.board import STARTING_FEN, Board, Move, grid_board_fen
from xiangqi.core.errors import FenError, RecordProblem, XiangqiError
from xiangqi.core.pgn import Game, GameNode

__all__ = ["DhtmlxqError", "read_dhtmlxq", "read_dhtmlxq_games", "write_dhtmlxq"]

_ORDER = "RNBAKABNRCCPPPPPrnbakabnrccppppp"
_FIELD_RE = re.compile(r"\[DhtmlXQ_([A-Za-z0-9_]+)\](.*?)\[/DhtmlXQ_?[A-Za-z0-9_]*\]", re.S)
_BLOCK_RE = re.compile(r"\[(DhtmlXQ(?:HTML|iFrame)?)\](.*?)(?:\[/\1\]|$)", re.S | re.I)
_OPEN_MOVELIST_RE = re.compile(r"\[DhtmlXQ_movelist\]", re.I)
_BRANCH_RE = re.compile(r"^move_(\d+)_(\d+)_(\d+)$")
_COMMENT_RE = re.compile(r"^comment(?:(\d+)_)?(\d+)$")
#: DhtmlXQ field -> PGN header.
_HEADERS = {
    "title": "Title", "event": "Event", "date": "Date", "place": "Site", "round": "Round", "table": "Table",
    "red": "Red", "redteam": "RedTeam", "redname": "RedName", "redrating": "RedElo", "redtime": "RedTime",
    "black": "Black", "blackteam": "BlackTeam", "blackname": "BlackName", "blackrating": "BlackElo",
    "blacktime": "BlackTime", "timerule": "TimeControl", "open": "Opening", "remark": "Remark",
    "author": "Author", "owner": "Owner", "generator": "Generator", "type": "Type", "gametype": "GameType",
    "class": "Class", "group": "Group", "other": "Other", "refer": "Refer",
}
_REVERSE = {v: k for k, v in _HEADERS.items()}
_TECHNICAL = {"init", "firstnum", "length", "ver", "binit", "movelist", "fen", "result"}
_PGN_ONLY = {"Game", "Format", "FEN", "Result"}
_RESULTS_IN = {"红胜": "1-0", "紅勝": "1-0", "黑胜": "0-1", "黑勝": "0-1", "和棋": "1/2-1/2",
               "和局": "1/2-1/2", "先和": "1/2-1/2", "后和": "1/2-1/2", "1-0": "1-0", "0-1": "0-1",
               "1/2-1/2": "1/2-1/2"}
_RESULTS_OUT = {"1-0": "红胜", "0-1": "黑胜", "1/2-1/2": "和棋", "*": "未知"}


class DhtmlxqError(XiangqiError):
    """Text that holds no readable DhtmlXQ record."""


def _square(x: int, y: int) -> int:
    return (9 - y) * 9 + x


def _xy(sq: int) -> str:
    return f"{sq % 9}{9 - sq // 9}"


def read_dhtmlxq_games(text: str) -> list[Game]:
    """Every DhtmlXQ record in ``text`` (one per ``[DhtmlXQ…]`` block; bare fields make one game).

    Raises :class:`DhtmlxqError` when there is none. Problems inside a record (bad moves, bad
    ``binit``) go to ``game.errors``.
    """
    blocks = [m.group(2) for m in _BLOCK_RE.finditer(text)]
    if not blocks and "[DhtmlXQ_" in text:
        blocks = [text]
    games = [_read_block(b) for b in blocks if "[DhtmlXQ_" in b]
    if not games:
        raise DhtmlxqError("no DhtmlXQ record found (expected [DhtmlXQ_movelist]… fields)")
    return games


def read_dhtmlxq(text: str) -> Game:
    """The first DhtmlXQ record in ``text``; see :func:`read_dhtmlxq_games`."""
    return read_dhtmlxq_games(text)[0]


def _read_block(block: str) -> Game:
    fields: dict[str, str] = {}
    for m in _FIELD_RE.finditer(block):
        key = m.group(1)
        low = key.lower()
        if low in _HEADERS or low in _TECHNICAL or _COMMENT_RE.match(low) or _BRANCH_RE.match(low):
            key = low
        fields.setdefault(key, m.group(2).strip())
    game = Game()
    # keeps the Seven Tag defaults of Game(): Game, Event, Date, Red, Black, Result
    for key, value in fields.items():
        if not value or key in _TECHNICAL or _COMMENT_RE.match(key) or _BRANCH_RE.match(key):
            continue
        game.headers[_HEADERS.get(key, key)] = value.replace("||", "\n")
    game.headers["Result"] = _RESULTS_IN.get(fields.get("result", "").strip(), "*")
    comments: dict[tuple[int, int], str] = {}
    branches: list[tuple[int, int, int, str]] = []
    for key, value in fields.items():
        if m := _COMMENT_RE.match(key):
            comments[(int(m.group(1) or 0), int(m.group(2)))] = value.replace("||", "\n").strip()
        elif m := _BRANCH_RE.match(key):
            branches.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), value))
    # start position
    if fields.get("fen"):
        fen_board = fields["fen"].split()[0]
    else:
        fen_board = _binit_to_board_fen(fields.get("binit", ""), game.errors)
    movelist = fields.get("movelist", "")
    cut = None
    if "movelist" not in fields and (m := _OPEN_MOVELIST_RE.search(block)):
        # [DhtmlXQ_movelist] without its closing tag: the text was cut inside the move list
        cut = re.match(r"[\d\s]*", block[m.end():]).group(0)
        digits = re.sub(r"\s+", "", cut)
        movelist = digits[: len(digits) // 4 * 4]
        cut = (len(digits), m.end())
    main_moves = _moves(movelist, game.errors, "movelist")
    turn = "w"
    if fields.get("fen") and len(fields["fen"].split()) > 1:
        turn = fields["fen"].split()[1]
    elif main_moves:
        turn = "w" if _red_piece_at(fen_board, main_moves[0][0]) else "b"
    try:
        board = Board(f"{fen_board} {turn} - - 0 1")
    except FenError as exc:  # kept as the FEN tag, so that game.board() raises as for a PGN's bad [FEN]
        game.errors.append(RecordProblem(f"start position: {exc}", "fen"))
        game.headers["FEN"] = f"{fen_board} {turn} - - 0 1"
        return game
    game.setup(board.fen())
    game.comment = comments.get((0, 0), "")
    # parents[(branch, ply)] = (node whose child is ply `ply` of `branch`, board at that node)
    parents: dict[tuple[int, int], tuple[GameNode, Board]] = {}
    _add_line(game, board, 0, 1, main_moves, comments, parents, game.errors)
    if cut is not None:
        ply = len(game.end().path())
        game.errors.append(RecordProblem(
            f"truncated: the text ends inside the move list (no [/DhtmlXQ_movelist], {cut[0]} digits): "
            f"main line read to ply {ply}", "truncated", ply, cut[1]))
    pending = sorted(branches, key=lambda b: (b[2], b[1]))
    progress = True
    while pending and progress:
        progress = False
        rest = []
        for parent_branch, ply, branch, value in pending:
            target = parents.get((parent_branch, ply))
            if target is None:
                rest.append((parent_branch, ply, branch, value))
                continue
            progress = True
            node, here = target
            moves = _moves(value, game.errors, f"move_{parent_branch}_{ply}_{branch}")
            _add_line(node, here, branch, ply, moves, comments, parents, game.errors)
        pending = rest
    for parent_branch, ply, branch, _value in pending:
        game.errors.append(f"branch {branch}: it forks from branch {parent_branch} at ply {ply}, which does "
                           "not exist")
    return game


def _add_line(node: GameNode, board: Board, branch: int, ply: int, moves: list[tuple[int, int]],
              comments: dict[tuple[int, int], str], parents: dict[tuple[int, int], tuple[GameNode, Board]],
              errors: list[str]) -> None:
    here = board.copy()
    parents.setdefault((branch, ply), (node, here.copy()))
    for frm, to in moves:
        move = Move(frm, to)
        reason = here.illegal_reason(move) if frm != to else "no move"
        if reason is not None:
            errors.append(f"branch {branch}, ply {ply}: illegal move {move.iccs()} ({reason}); "
                          "the rest of the branch is dropped")
            return
        here.push(move, validate=False)
        node = node._add(move, comment=comments.get((branch, ply), ""))
        ply += 1
        parents[(branch, ply)] = (node, here.copy())


def _moves(text: str, errors: list[str], where: str) -> list[tuple[int, int]]:
    digits = re.sub(r"\s+", "", text)
    if not digits:
        return []
    if not digits.isdigit() or len(digits) % 4:
        errors.append(f"{where}: not a list of 4-digit moves: {digits[:24]!r}")
        digits = digits[: len(digits) // 4 * 4] if digits.isdigit() else ""
    out = []
    for i in range(0, len(digits), 4):
        x1, y1, x2, y2 = (int(c) for c in digits[i:i + 4])
        if x1 > 8 or x2 > 8:
            errors.append(f"{where}: move {digits[i:i + 4]} is off the board")
            break
        out.append((_square(x1, y1), _square(x2, y2)))
    return out


def _binit_to_board_fen(binit: str, errors: list[str]) -> str:
    binit = re.sub(r"\s+", "", binit)
    if not binit:
        return STARTING_FEN.split()[0]
    binit = "".join(c if c.isdigit() else "9" for c in binit)[:64].ljust(64, "9")
    grid: list[str | None] = [None] * 90
    for i in range(32):
        x, y = int(binit[2 * i]), int(binit[2 * i + 1])
        if x > 8:
            continue
        sq = _square(x, y)
        if grid[sq] is not None:
            errors.append(f"binit: two pieces on {x}{y}; the second one is ignored")
            continue
        grid[sq] = _ORDER[i]
    return grid_board_fen(grid)


def _red_piece_at(board_fen: str, sq: int) -> bool:
    rank, file = divmod(sq, 9)
    row = board_fen.split("/")[9 - rank] if len(board_fen.split("/")) == 10 else ""
    f = 0
    for ch in row:
        if ch.isdigit():
            f += int(ch)
            continue
        if f == file:
            return ch.isupper()
        f += 1
    return True


def write_dhtmlxq(game: Game, *, container: str = "DhtmlXQ") -> str:
    """``game`` as a DhtmlXQ block (UTF-8 text) with every variation and comment.

    Headers become the matching fields (``Site`` → ``place``, ``TimeControl`` → ``timerule``, …;
    other ASCII-named headers keep their name, headers with other names are left out),
    the start position ``binit``, the main line ``movelist``, each variation a ``move_p_n_b`` field
    and each comment ``comment[b_]n`` (line breaks as ``||``). A ``starting_comment`` is put before
    the move's own comment. Raises FenError when the game's FEN header is bad and
    :class:`DhtmlxqError` when the variations are nested too deeply to write (past Python's
    recursion limit, about 1000 levels).
    """
    board = game.board()
    lines = [f"[{container}]", "[DhtmlXQ_ver]www_dpxq_com[/DhtmlXQ_ver]"]
    for header, value in game.headers.items():
        if header in _PGN_ONLY or not value or not re.fullmatch(r"[A-Za-z0-9]+", header):
            continue
        key = _REVERSE.get(header, header)
        lines.append(f"[DhtmlXQ_{key}]{_comment(value)}[/DhtmlXQ_{key}]")
    result = _RESULTS_OUT.get(game.headers.get("Result", "*"), "未知")
    lines.append(f"[DhtmlXQ_result]{result}[/DhtmlXQ_result]")
    if board.board_fen() != STARTING_FEN.split()[0] or not board.turn:
        lines.append(f"[DhtmlXQ_binit]{_binit(board)}[/DhtmlXQ_binit]")
    fields: list[str] = []
    comments: list[str] = []
    if game.comment:
        comments.append(f"[DhtmlXQ_comment0]{_comment(game.comment)}[/DhtmlXQ_comment0]")
    counter = [0]
    try:
        main = _write_branch(game, 0, 1, fields, comments, counter)
    except RecursionError:
        raise DhtmlxqError("the variations are nested too deeply to write as DhtmlXQ") from None
    lines.append(f"[DhtmlXQ_movelist]{main}[/DhtmlXQ_movelist]")
    lines.extend(fields)
    lines.extend(comments)
    lines.append(f"[/{container}]")
    return "\n".join(lines) + "\n"


def _write_branch(start: GameNode, branch: int, ply: int, fields: list[str], comments: list[str],
                  counter: list[int], first: GameNode | None = None) -> str:
    """Digits of the line from ``start`` (first move ``first`` or the main child) as branch ``branch``."""
    moves = ""
    node = start
    child = first if first is not None else (start.variations[0] if start.variations else None)
    while child is not None:
        assert child.move is not None
        moves += _xy(child.move.from_square) + _xy(child.move.to_square)
        text = "\n".join(t for t in (child.starting_comment, child.comment) if t)
        if text:
            key = f"comment{ply}" if branch == 0 else f"comment{branch}_{ply}"
            comments.append(f"[DhtmlXQ_{key}]{_comment(text)}[/DhtmlXQ_{key}]")
        for alt in node.variations[1:] if child is node.variations[0] else []:
            counter[0] += 1
            b = counter[0]
            digits = _write_branch(node, b, ply, fields, comments, counter, first=alt)
            fields.append(f"[DhtmlXQ_move_{branch}_{ply}_{b}]{digits}[/DhtmlXQ_move_{branch}_{ply}_{b}]")
        node = child
        child = node.variations[0] if node.variations else None
        ply += 1
    return moves


def _binit(board: Board) -> str:
    slots = ["99"] * 32
    used = [False] * 32
    for sq in range(90):
        code = board.squares[sq]
        if not code:
            continue
        letter = "_KABNRCP"[abs(code)]
        base = 0 if code > 0 else 16
        for i in range(16):
            if _ORDER[i] == letter and not used[base + i]:
                used[base + i] = True
                slots[base + i] = _xy(sq)
                break
    return "".join(slots)


def _clean(value: str) -> str:
    return value.replace("[", "［").replace("]", "］")


def _comment(text: str) -> str:
    return _clean(text).replace("\r\n", "\n").replace("\n", "||")
