"""The coach while playing: its word on the player's move (:func:`advise`) and the threat display
(:func:`threat`).

The rating, which games are rated and the adaptive level are :mod:`xiangqi.app.play.ratings`.
"""

from __future__ import annotations

from typing import Any

from xiangqi.app.play.session import chinese_move_text
from xiangqi.core.board import BLACK, RED, Board, Move

#: Search depth of the coach's judgement of a move (two searches: before and after it) and of the
#: threat display: small, so that the warning comes at once (measured here: about 0.1 s for the
#: two searches of a middlegame move, once the kernels are loaded), deep enough for a hanging piece.
COACH_DEPTH = 6
#: Centipawns (clamped evaluation, the player's side) a move must lose besides its win-chance class
#: before the coach warns: in an even position the fitted curve is steep, and a shallow search's
#: noise of half a pawn would be called a mistake (a developing move like 马八进九 was).
COACH_MIN_CP_LOSS = 100
#: Plies of the refutation line walked to find the material it wins.
LINE_PLIES = 6
#: Names of the pieces a line wins (by piece kind, per colour) and of the move classes.
PIECE_ZH = {RED: {5: "车", 4: "马", 6: "炮", 2: "仕", 3: "相", 7: "兵"},
            BLACK: {5: "车", 4: "马", 6: "炮", 2: "士", 3: "象", 7: "卒"}}
PIECE_EN = {5: "rook", 4: "horse", 6: "cannon", 2: "advisor", 3: "elephant", 7: "pawn"}
CLASS_ZH = {"mistake": "错着", "blunder": "败着", "inaccuracy": "缓着"}
CLASS_EN = {"mistake": "a mistake", "blunder": "a blunder", "inaccuracy": "an inaccuracy"}


def _material(board: Any, color: bool) -> int:
    from xiangqi.app.opponents.players import MATERIAL_CP

    total = 0
    for code in board.squares:
        if code:
            v = MATERIAL_CP.get(abs(code), 0)
            total += v if (code > 0) == color else -v
    return total


def line_loss(board_after: Any, line: list[str], color: bool, start_material: int,
              plies: int = LINE_PLIES) -> dict[str, Any]:
    """What the refutation ``line`` (ICCS, from ``board_after``, the opponent to move) wins from
    ``color``: ``{"loss": centipawns (material of ``color`` minus the opponent's, ``start_material``
    less the worst value after one of ``color``'s replies, or after the line's only move),
    "piece": piece kind (1-7) of the most valuable piece of ``color`` captured up to there or None,
    "capture_at": index in ``line`` of that capture or None, "texts": the line in Chinese}``.
    Looking after the player's replies lets a recapture count (an exchange is not a loss)."""
    from xiangqi.app.opponents.players import MATERIAL_CP

    b = board_after.copy()
    worst = None
    piece = capture_at = None
    best_piece_at = None
    texts: list[str] = []
    captured: list[tuple[int, int]] = []  # (index, kind) of the player's pieces taken
    for i, text in enumerate(line[:plies]):
        mv = Move.from_iccs(text)
        if not b.is_legal(mv):
            break
        target = b.squares[mv.to_square]
        texts.append(chinese_move_text(b, mv))
        if target and (target > 0) == color:
            captured.append((i, abs(target)))
        b.push(mv)
        if i % 2 == 1 or (i == 0 and len(line) == 1):
            value = _material(b, color)
            if worst is None or value < worst:
                worst = value
                best_piece_at = list(captured)
    if worst is None and texts:  # the line stopped after the opponent's first move
        worst = _material(b, color)
        best_piece_at = list(captured)
    if best_piece_at:
        capture_at, piece = max(best_piece_at, key=lambda c: (MATERIAL_CP.get(c[1], 0), -c[0]))
    loss = 0 if worst is None else start_material - worst
    return {"loss": loss, "piece": piece, "capture_at": capture_at, "texts": texts}


def advise(board: Any, move: str, *, depth: int = COACH_DEPTH) -> dict[str, Any]:
    """The coach's word on ``move`` (ICCS) played in ``board`` (not changed; its history counts).

    Judges the move with :func:`xiangqi.study.review.review_move` (win-chance classes of
    docs/REVIEW.md) at ``depth`` and returns ``{"move", "text" (Chinese), "class", "warn", "drop" (win
    chance, -100..100 scale), "eval_before", "eval_after" (centipawns for the player), "mate" (moves to
    the opponent's mate after the move, or None), "refutation" (the opponent's best reply, ICCS),
    "refutation_text", "line" (Chinese), "lost" (the piece the line wins, English, or None),
    "loss_cp", "text_zh", "text_en"}``. ``warn`` is True for a mistake or blunder that loses at least
    :data:`COACH_MIN_CP_LOSS` or allows a mate. The words name the refutation and the material it
    wins when the line wins at least a pawn and a half, else the mate, else the change of the
    evaluation. Raises IllegalMoveError for an illegal move."""
    from xiangqi.study.review import review_move

    pr = review_move(board, move, depth=depth)
    color = board.turn
    sign = 1 if color == RED else -1
    mv = Move.from_iccs(move)
    after = board.copy()
    after.push(mv)
    refutation = pr.after.best
    line = list(pr.after.pv) or ([refutation] if refutation else [])
    info = line_loss(after, line, color, _material(board, color)) if line else \
        {"loss": 0, "piece": None, "capture_at": None, "texts": []}
    mate = pr.after.mate
    opp_mates = None if mate is None or (mate > 0) == (color == RED) else abs(mate)
    warn = pr.cls in ("mistake", "blunder") and (pr.cp_loss >= COACH_MIN_CP_LOSS or opp_mates is not None)
    note = {"move": move, "text": chinese_move_text(board, mv), "class": pr.cls,
            "warn": warn, "drop": round(pr.drop, 1),
            "eval_before": sign * pr.before.cp, "eval_after": sign * pr.after.cp, "mate": opp_mates,
            "refutation": refutation, "refutation_text": info["texts"][0] if info["texts"] else None,
            "line": info["texts"], "lost": None, "loss_cp": info["loss"], "text_zh": "", "text_en": ""}
    if not note["warn"]:
        return note
    first = note["refutation_text"] or ""
    if info["piece"] is not None and info["loss"] >= 150:
        kind = info["piece"]
        zh_piece, en_piece = PIECE_ZH[color][kind], PIECE_EN[kind]
        note["lost"] = en_piece
        at = info["capture_at"]
        if at == 0:
            note["text_zh"] = f"这步丢{zh_piece}：对方 {first} 吃{zh_piece}"
            note["text_en"] = f"This loses the {en_piece}: {first}"
        else:
            cap = info["texts"][at]
            note["text_zh"] = f"这步丢{zh_piece}：对方 {first} …… {cap} 吃{zh_piece}"
            note["text_en"] = f"This loses the {en_piece}: {first} … {cap}"
    elif opp_mates is not None:
        note["text_zh"] = f"这步让对方有杀：{first}（{opp_mates} 步杀）"
        note["text_en"] = f"This allows mate in {opp_mates}: {first}"
    else:
        b, a = note["eval_before"] / 100, note["eval_after"] / 100
        note["text_zh"] = f"这步是{CLASS_ZH[pr.cls]}（局面 {b:+.1f} → {a:+.1f}）：对方 {first} 好"
        note["text_en"] = f"This is {CLASS_EN[pr.cls]} (evaluation {b:+.1f} → {a:+.1f}): the reply {first}"
    return note


def threat(board: Any, *, depth: int = COACH_DEPTH) -> dict[str, Any]:
    """What the opponent of the side to move threatens: its best move if it were its turn (the side
    to move passes). ``{"in_check": bool, "move": ICCS or None, "text" (Chinese), "captures": piece
    kind name (English) or None, "check": bool, "mate": moves or None, "gain_cp": centipawns the pass
    is worth to the opponent, "real": bool (a capture, a check, a mate or a gain of 150 cp),
    "text_zh", "text_en"}``. In check the threat is the check itself (``in_check`` True, no search)."""
    from xiangqi.engine.api import Limit
    from xiangqi.study.review import _engine, evaluate_position

    if board.is_check():
        return {"in_check": True, "move": None, "text": None, "captures": None, "check": False, "mate": None,
                "gain_cp": 0, "real": True, "text_zh": "你正被将军：先应将",
                "text_en": "You are in check: answer it first"}
    parts = board.fen().split()
    parts[1] = "b" if parts[1] == "w" else "w"
    passed = Board(" ".join(parts))
    eng = _engine(16)
    limit = Limit(depth=depth)
    now = evaluate_position(eng, board.copy(), limit)
    then = evaluate_position(eng, passed, limit)
    me = 1 if board.turn == RED else -1
    gain = me * (now.cp - then.cp)  # what passing costs the side to move
    if then.best is None:
        return {"in_check": False, "move": None, "text": None, "captures": None, "check": False, "mate": None,
                "gain_cp": 0, "real": False, "text_zh": "对方眼下没有明显的威胁",
                "text_en": "The opponent threatens nothing in particular"}
    mv = Move.from_iccs(then.best)
    target = passed.squares[mv.to_square]
    text = chinese_move_text(passed, mv)
    after = passed.copy()
    after.push(mv)
    check = after.is_check()
    mate = None if then.mate is None or (then.mate > 0) == (board.turn == RED) else abs(then.mate)
    captures = PIECE_EN.get(abs(target)) if target else None
    real = bool(captures or check or mate or gain >= 150)
    zh = f"对方威胁：{text}"
    en = f"The opponent threatens {text}"
    if mate:
        zh, en = zh + f"（{mate} 步杀）", en + f" (mate in {mate})"
    elif captures:
        zh, en = zh + f" 吃{PIECE_ZH[board.turn][abs(target)]}", en + f", taking the {captures}"
    elif check:
        zh, en = zh + " 将军", en + ", check"
    if not real:
        zh, en = "对方眼下没有明显的威胁", "The opponent threatens nothing in particular"
    return {"in_check": False, "move": then.best, "text": text, "captures": captures, "check": check,
            "mate": mate, "gain_cp": gain, "real": real, "text_zh": zh, "text_en": en}
