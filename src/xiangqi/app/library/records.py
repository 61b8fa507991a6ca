"""Game records in the app: open any record file for browsing, export the current game, play on from a record.

Opening a record never touches the current (autosaved) game: :func:`load_records` reads the
bytes (format from the file name's extension, else sniffed: XQF, DhtmlXQ/UBB, EPD/FEN, PGN in
Chinese/WXF/ICCS; see :mod:`xiangqi.core.records`) and :func:`record_view` turns one game's tree
into JSON the page browses. Only :func:`session_from_line` — the player's "play on from here" —
makes a new :class:`GameSession`.
"""

from __future__ import annotations

from typing import Any

from xiangqi.app.play.session import DEFAULT_LEVEL, GameSession, SessionError
from xiangqi.core.board import Board
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import Game, GameNode

#: Record formats the page can save the current game in.
EXPORT_FORMATS = ("pgn", "xqf")
#: Move-text notations of the move list and of PGN export.
NOTATIONS = ("chinese", "wxf", "iccs")
#: Headers copied from a record into a game played on from it.
_KEPT_HEADERS = ("Event", "Date", "Red", "Black", "Site", "Round", "Opening", "Game")


class RecordOpenError(SessionError):
    """A record the app cannot open: empty, not a known format, or no game in it (the text says which)."""


def load_records(data: bytes, name: str = "") -> list[Game]:
    """Every game in the record ``data`` (file bytes or pasted text as UTF-8).

    ``name`` is the file name; its extension picks the format (``.pgn``/``.txt`` PGN or UBB text,
    ``.xqf``, ``.epd``/``.fen``); without one the content decides. Raises :class:`RecordOpenError`
    naming the file and the problem; never any other exception for bad bytes.
    """
    from xiangqi.core.records import format_from_path, read_records

    label = name or "pasted text"
    if not data.strip():
        raise RecordOpenError(f"{label}: empty: nothing to open")
    fmt = format_from_path(name) if name else None
    if fmt == "pgn" and data[:2] == b"XQ":
        fmt = "xqf"  # an XQF file with a wrong extension
    try:
        games = read_records(data, fmt=fmt)
    except XiangqiError as exc:
        raise RecordOpenError(f"{label}: {str(exc).replace('<data>: ', '')}") from None
    except Exception as exc:  # a reader bug must give a message, not a crash of the page
        raise RecordOpenError(
            f"{label}: cannot be read as a game record ({type(exc).__name__}: {exc})") from None
    if not games:
        raise RecordOpenError(f"{label}: no game found (not a PGN, XQF, DhtmlXQ/UBB, EPD or FEN record)")
    return games


def game_title(game: Game, index: int = 0) -> str:
    """A one-line title: Event, Red vs Black, or ``Game n`` when the record names nothing."""
    h = game.headers
    players = " – ".join(p for p in (h.get("Red", ""), h.get("Black", "")) if p)
    parts = [p for p in (h.get("Event", "").strip(), players) if p]
    return " · ".join(parts) or f"#{index + 1}"


def record_view(game: Game) -> dict[str, Any]:
    """JSON of one record for the page's browser.

    ``{"headers": {tag: value}, "title", "comment" (game comment), "final_comment", "errors",
    "lines" (number of leaf lines: main line plus variations), "branches" (alternatives),
    "nodes": [...]}`` where ``nodes[0]`` is the start position and every node is ``{"id",
    "parent" (id or None), "ply", "move" (ICCS or None), "text": {"chinese", "wxf", "iccs"}
    ("H2-E2" style for ICCS), "comment", "fen", "children" (ids, main continuation first)}``.
    Raises :class:`RecordOpenError` when the start position is bad.
    """
    from xiangqi.core.notation import move_to_text

    try:
        start = game.board()
    except XiangqiError as exc:
        raise RecordOpenError(f"the record's start position is bad: {exc}") from None
    nodes: list[dict[str, Any]] = []

    def add(node: GameNode, parent: int | None, board: Board, ply: int) -> int:
        nid = len(nodes)
        entry: dict[str, Any] = {"id": nid, "parent": parent, "ply": ply, "move": None,
                                 "text": {"chinese": "", "wxf": "", "iccs": ""},
                                 "comment": node.comment or "", "fen": board.fen(), "children": []}
        nodes.append(entry)
        return nid

    root = add(game, None, start, 0)
    stack: list[tuple[GameNode, int, Board, int]] = [(game, root, start, 0)]
    lines = 0
    while stack:
        node, nid, board, ply = stack.pop()
        if not node.variations:
            lines += 1
        pending = []
        for child in node.variations:
            mv = child.move
            if mv is None or not board.is_legal(mv):
                continue  # the readers keep only legal moves; guard anyway
            text = {k: move_to_text(board, mv, "iccs-dash" if k == "iccs" else k) for k in NOTATIONS}
            after = board.copy()
            after.push(mv)
            cid = add(child, nid, after, ply + 1)
            nodes[cid]["move"] = mv.iccs()
            nodes[cid]["text"] = text
            comment = child.comment or ""
            if child.starting_comment:
                comment = (child.starting_comment + "\n" + comment).strip()
            nodes[cid]["comment"] = comment
            nodes[nid]["children"].append(cid)
            pending.append((child, cid, after, ply + 1))
        stack.extend(reversed(pending))
    return {
        "headers": dict(game.headers),
        "title": game_title(game),
        "comment": game.comment or "",
        "final_comment": getattr(game, "final_comment", "") or "",
        "errors": list(getattr(game, "errors", []) or []),
        "lines": lines,
        "branches": sum(max(0, len(n["children"]) - 1) for n in nodes),
        "nodes": nodes,
    }


def open_record(data: bytes, name: str = "", index: int = 0, *,
                first_readable: bool = False) -> dict[str, Any]:
    """:func:`load_records` then :func:`record_view` of game ``index``, plus ``"count"`` (games in
    the file), ``"index"`` and ``"games"`` (the titles of the first 500). Raises
    :class:`RecordOpenError` for a bad file or an index out of range, and for a game whose start
    cannot be read, naming it. With ``first_readable`` (a file just opened, no game chosen yet) a
    multi-game file whose game ``index`` cannot be shown opens its next game that can, and the
    view's ``"skipped"`` lists why the games before it were not shown (``[]`` otherwise), so one
    broken game does not hide the rest of the file."""
    games = load_records(data, name)
    if not 0 <= index < len(games):
        raise RecordOpenError(f"the record holds {len(games)} game(s); there is no game {index + 1}")
    skipped: list[str] = []
    for i in range(index, len(games) if first_readable else index + 1):
        try:
            view = record_view(games[i])
            break
        except RecordOpenError as exc:  # name the file (and the game of several), as load_records does
            from xiangqi.core.records import game_label

            which = f"{game_label(games[i], i + 1)}: " if len(games) > 1 else ""
            skipped.append(f"{name or 'pasted text'}: {which}{exc}")
    else:
        raise RecordOpenError(skipped[0] if len(skipped) == 1 else
                              f"{skipped[0]} (and none of the other {len(skipped) - 1} games can be shown)")
    view.update(count=len(games), index=i, games=[game_title(g, k) for k, g in enumerate(games[:500])],
                skipped=skipped)
    return view


def session_from_line(start_fen: str, moves: list[str], *, red: str = "human", black: str = "engine",
                      level: str = DEFAULT_LEVEL, headers: dict[str, str] | None = None) -> GameSession:
    """A new game from a record position: start at ``start_fen`` and replay ``moves`` (ICCS), so the
    move list keeps the record's moves, then the players go on. No clock.

    Raises :class:`SessionError` naming the first move that cannot be played (or a bad FEN).
    """
    try:
        s = GameSession(red=red, black=black, level=level, fen=start_fen,
                        headers={k: v for k, v in (headers or {}).items() if k in _KEPT_HEADERS})
    except XiangqiError as exc:
        raise SessionError(f"cannot start from the record's position: {exc}") from None
    for i, mv in enumerate(moves):
        try:
            s.play(mv, clocked=False)
        except XiangqiError as exc:
            raise SessionError(f"move {i + 1} ({mv}) cannot be played: {exc}") from None
    s.clock.start(s.board.turn)
    s.version += 1
    return s


def export_game(session: GameSession, fmt: str = "pgn", notation: str = "chinese",
                language: str = "zh", *, warnings: list[str] | None = None) -> tuple[bytes, str, str]:
    """The current game as a file: ``(bytes, media type, file extension)``.

    ``fmt`` is ``pgn`` (UTF-8 text, moves in ``notation``) or ``xqf`` (binary XQF 1.0); tags (Event,
    player names) are in ``language`` (``zh``/``en``, :meth:`GameSession.pgn_headers`). Raises
    :class:`SessionError` for an unknown format, notation or language. What XQF cannot keep is appended
    to ``warnings`` when a list is given (:func:`xiangqi.core.xqf.xqf_losses`).
    """
    if fmt not in EXPORT_FORMATS:
        raise SessionError(f"format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
    if notation not in NOTATIONS:
        raise SessionError(f"notation must be one of {', '.join(NOTATIONS)}, got {notation!r}")
    if fmt == "pgn":
        data = session.to_pgn(notation, language).encode("utf-8")
        return data, "application/x-chess-pgn; charset=utf-8", "pgn"
    from xiangqi.core import pgn
    from xiangqi.core.xqf import write_xqf

    game = pgn.Game.from_board(session.board)
    game.headers.update(session.pgn_headers(language))
    return write_xqf(game, warnings=warnings), "application/octet-stream", "xqf"


def convert_record(data: bytes, name: str, index: int, fmt: str, notation: str, *,
                   warnings: list[str] | None = None) -> tuple[bytes, str, str]:
    """A browsed record (with all its variations and comments) saved as ``fmt`` (``pgn``/``xqf``):
    ``(bytes, media type, extension)``; what XQF cannot keep is appended to ``warnings`` when a list is
    given. Raises :class:`RecordOpenError` / :class:`SessionError`."""
    if fmt not in EXPORT_FORMATS:
        raise SessionError(f"format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
    if notation not in NOTATIONS:
        raise SessionError(f"notation must be one of {', '.join(NOTATIONS)}, got {notation!r}")
    games = load_records(data, name)
    if not 0 <= index < len(games):
        raise RecordOpenError(f"the record holds {len(games)} game(s); there is no game {index + 1}")
    from xiangqi.core.records import write_records

    out = write_records([games[index]], fmt, notation=notation, warnings=warnings)
    media = "application/octet-stream" if fmt == "xqf" else "application/x-chess-pgn; charset=utf-8"
    return out, media, fmt
