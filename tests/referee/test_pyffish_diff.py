"""Differential test against pyffish (Fairy-Stockfish's rules; a test-only dependency).

Random play-outs from the start position, seeded. In every position both must
list the same legal moves. Every few moves the play-out shuffles one piece of
each side back and forth until the position occurs a third time; wherever
pyffish then gives a repetition verdict (``is_optional_game_end``), our AXF
ruling must give the same winner.

Documented exceptions (not compared):
- the move limit: Fairy-Stockfish ends xiangqi games after 100 plies without a
  capture, the Chinese limit is 120 (endings.tsv, ``limit_not_yet``); positions
  with a halfmove clock of 100 or more are not compared;
- verdicts where the two chase models still differ: counted, listed in the
  failure message, and bounded by :data:`MAX_DISAGREEMENT` (the short default
  run must agree everywhere);
- the two AXF table rows where the WXF rule book and Fairy-Stockfish disagree
  (wxf574, wxf643) are covered in test_referee.py, not here.

Fairy-Stockfish numbers ranks 1-10 (``h3e3``); ICCS 0-9 (``h2e2``): converted
here at the boundary (DESIGN.md decision 3).
"""

from __future__ import annotations

import random

import pytest

from xiangqi.core.board import STARTING_FEN, Board, Move
from xiangqi.core.referee import AXF, judge

sf = pytest.importorskip("pyffish")


def to_fsf(m: Move) -> str:
    t = m.iccs()
    return f"{t[0]}{int(t[1]) + 1}{t[2]}{int(t[3]) + 1}"


def fsf_winner(fen: str, moves: list[str], turn_is_red: bool) -> str | None:
    """pyffish's repetition verdict as red/black/draw, or None when it gives none."""
    ended, value = sf.is_optional_game_end("xiangqi", fen, moves)
    if not ended:
        return None
    if value == 0:
        return "draw"
    side_to_move_wins = value > 0
    return "red" if side_to_move_wins == turn_is_red else "black"


def attacks_something(b: Board, m: Move) -> bool:
    """True if ``m`` gives check or leaves the moved piece attacking an enemy piece."""
    b.push(m)
    try:
        if b.is_check():
            return True
        b.turn = not b.turn
        hit = any(b.squares[t.to_square] for t in b.legal_moves if t.from_square == m.to_square)
        b.turn = not b.turn
        return hit
    finally:
        b.pop()


def playout(seed: int, plies: int, shuffle_every: int, disagreements: list | None = None) -> tuple[int, int]:
    """One play-out; returns (positions compared, repetition verdicts compared). Verdicts that
    differ are appended to ``disagreements`` (or fail at once when it is None)."""
    rng = random.Random(seed)
    b = Board()
    fsf_moves: list[str] = []
    compared = verdicts = 0

    def check_position() -> None:
        nonlocal compared
        ours = sorted(to_fsf(m) for m in b.legal_moves)
        theirs = sorted(sf.legal_moves("xiangqi", STARTING_FEN, fsf_moves))
        assert ours == theirs, (seed, b.fen(), fsf_moves)
        compared += 1

    def play(m: Move) -> None:
        b.push(m)
        fsf_moves.append(to_fsf(m))

    for ply in range(plies):
        check_position()
        moves = list(b.legal_moves)
        if not moves or b.outcome(AXF) is not None:
            break
        if ply % shuffle_every == shuffle_every - 1 and b.halfmove_clock < 90:
            # Shuffle: each side moves a piece away and back, twice (a third occurrence).
            quiet = [m for m in moves if not b.is_capture(m)]
            rng.shuffle(quiet)
            aggressive = rng.random() < 0.6
            if aggressive:
                # Prefer a piece that checks or attacks from both of its squares, so that perpetual
                # checks and chases (not only idle repetitions) get compared.
                quiet.sort(key=lambda m: not attacks_something(b, m))
            for m1 in quiet[:4]:
                b.push(m1)
                replies = [m for m in b.legal_moves if not b.is_capture(m)]
                rng.shuffle(replies)
                m2 = None
                for r in replies[:6]:
                    back = Move(m1.to_square, m1.from_square)
                    b.push(r)
                    good = b.is_legal(back) and (not aggressive or attacks_something(b, back))
                    b.pop()
                    if good:
                        m2 = r
                        break
                if m2 is None and replies:
                    m2 = replies[0]
                b.pop()
                if m2 is None:
                    continue
                loop = [m1, m2, Move(m1.to_square, m1.from_square), Move(m2.to_square, m2.from_square)]
                start = len(b.move_stack)
                ok = True
                for _ in range(2):
                    for m in loop:
                        if not b.is_legal(m):
                            ok = False
                            break
                        play(m)
                        check_position()
                        if b.outcome(AXF) is not None:
                            break
                    if not ok or b.outcome(AXF) is not None:
                        break
                ours = judge(b, AXF)
                theirs = fsf_winner(STARTING_FEN, fsf_moves, b.turn)
                if theirs is not None and b.halfmove_clock < 100:
                    mine = "none" if ours is None else ours.winner_name()
                    if mine != theirs:
                        if disagreements is None:
                            raise AssertionError((seed, b.fen(), fsf_moves, mine, theirs))
                        disagreements.append((seed, b.fen(), mine, theirs))
                    verdicts += 1
                if ours is not None:
                    # Take the loop back so the play-out goes on.
                    while len(b.move_stack) > start:
                        b.pop()
                        fsf_moves.pop()
                break
            continue
        play(rng.choice(moves))
    return compared, verdicts


def test_pyffish_version():
    assert sf.version() >= (0, 0, 90)


def test_differential_axf_table_rows():
    """Every row of repetition_axf.tsv: pyffish's verdict equals ours (it gives one for each row but
    wxf574, where neither side has a third occurrence yet). Unlike random play-outs, these rows are
    mostly perpetual checks and chases, so the wins are compared, not only draws."""
    import csv
    from pathlib import Path

    path = Path(__file__).parent.parent / "data" / "repetition_axf.tsv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    wins = 0
    for r in rows:
        fen = r["fen"].replace("[]", "")  # an empty pocket in Fairy-Stockfish's notation
        b = Board(fen)
        for m in r["moves"].split():
            b.push(Move.from_iccs(m))
        theirs = fsf_winner(fen, [to_fsf(m) for m in b.move_stack], b.turn) or "none"
        ours = judge(b, AXF)
        assert (ours.winner_name() if ours else "none") == theirs, r["id"]
        wins += theirs in ("red", "black")
    assert wins >= 100


def test_differential_short():
    compared = verdicts = 0
    for seed in range(3):
        c, v = playout(seed, plies=40, shuffle_every=10)
        compared += c
        verdicts += v
    assert compared >= 100 and verdicts >= 3


#: Longer play-outs meet rare chase patterns where our AXF chase model and Fairy-Stockfish's still
#: differ. Measured over seeds 100-139 (120 plies, a shuffle every 8): 8836 positions with equal
#: legal moves, 473 repetition verdicts (464 draws, 9 wins), one disagreement: seed 132, a black
#: rook alternately attacks an unprotected crossed pawn directly and uncovers a cannon's attack on
#: it; we rule Black's 长捉 (two pieces chasing one, AXF rule 32), pyffish rules a draw.
MAX_DISAGREEMENT = 0.02


@pytest.mark.slow
@pytest.mark.ci
def test_differential_ci():
    compared = verdicts = 0
    diff: list = []
    for seed in range(100, 112):
        c, v = playout(seed, plies=120, shuffle_every=8, disagreements=diff)
        compared += c
        verdicts += v
    assert compared >= 600 and verdicts >= 20
    assert len(diff) <= MAX_DISAGREEMENT * verdicts, (len(diff), verdicts, diff)


@pytest.mark.slow
def test_differential_long():
    compared = verdicts = 0
    diff: list = []
    for seed in range(1000, 1060):
        c, v = playout(seed, plies=160, shuffle_every=7, disagreements=diff)
        compared += c
        verdicts += v
    assert compared >= 10000 and verdicts >= 500
    assert len(diff) <= MAX_DISAGREEMENT * verdicts, (len(diff), verdicts, diff[:5])
