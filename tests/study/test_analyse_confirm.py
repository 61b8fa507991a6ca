"""``xiangqi analyse`` confirms its candidate marks (``--confirm D``, default 11; 0: off):
the hung rook stays ??, a depth-2 ?? that a deeper search refutes loses its mark."""

from __future__ import annotations

import json

import pytest

from xiangqi.cli import main
from xiangqi.core.board import Move
from xiangqi.core.pgn import Game, write_game

# Red: king e0, rook b0; Black: king f9, horse c8 (tests/study/test_review_confirm.py): b0b6 hangs the rook.
HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"
# A 10-ply game from the start whose last move (b0d0, Black's rook takes the advisor-less corner
# file) a depth-2 first pass calls a blunder and a depth-6 confirmation finds good.
REFUTED = ["h2h6", "a9a8", "h6e6", "b7b0", "b2b6", "i9i8", "f0e1", "i8i7", "b6b1", "b0d0"]


def _pgn(tmp_path, fen: str | None, moves: list[str]) -> str:
    g = Game()
    if fen:
        g.setup(fen)
    node = g
    for m in moves:
        node = node.add_variation(Move.from_iccs(m))
    path = tmp_path / "g.pgn"
    path.write_text(write_game(g), encoding="utf-8")
    return str(path)


def _classes(capsys, path: str, *extra: str) -> tuple[list[str], dict]:
    assert main(["analyse", path, "--depth", "2", "--json", "-q", *extra]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[0])
    return [p["class"] for p in out["plies"]], out


def test_hung_rook_is_a_confirmed_blunder(tmp_path, capsys) -> None:
    path = _pgn(tmp_path, HANGING, ["b0b6", "c8b6"])
    cls, out = _classes(capsys, path, "--confirm", "6")
    assert cls[0] == "blunder" and out["limit"]["confirm"] == 6
    assert out["counts"]["red"]["blunder"] == 1


def test_a_refuted_mark_is_dropped_and_confirm_0_keeps_it(tmp_path, capsys) -> None:
    path = _pgn(tmp_path, None, REFUTED)
    plain, out0 = _classes(capsys, path, "--confirm", "0")
    assert plain[9] == "blunder" and "confirm" not in out0["limit"]
    confirmed, out = _classes(capsys, path, "--confirm", "6")
    assert confirmed[9] not in ("mistake", "blunder")
    assert out["counts"]["black"]["blunder"] < out0["counts"]["black"]["blunder"]
    # the same with processes (the confirmation as one task per game)
    assert _classes(capsys, path, "--confirm", "6", "--jobs", "2")[0] == confirmed


def test_default_is_confirmed_at_11(tmp_path, capsys) -> None:
    path = _pgn(tmp_path, HANGING, ["b0b6", "c8b6"])
    cls, out = _classes(capsys, path)
    assert out["limit"]["confirm"] == 11 and cls[0] == "blunder"


@pytest.mark.parametrize("extra, message", [
    (["--confirm", "1"], "--confirm must be 0"),
    (["--confirm", "6", "--engine", "fairy-stockfish"], "not with --engine"),
])
def test_bad_confirm_is_refused(tmp_path, capsys, extra, message) -> None:
    path = _pgn(tmp_path, HANGING, ["b0b6"])
    assert main(["analyse", path, "--depth", "2", "-q", *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_counts_the_confirmation_and_ends_at_its_total(jobs) -> None:
    from xiangqi.study.review import confirm_candidates, evaluate_line, review_games

    g = Game()
    node = g
    for m in REFUTED:
        node = node.add_variation(Move.from_iccs(m))
    start = g.board().fen()
    n = len(confirm_candidates(start, REFUTED, evaluate_line(start, REFUTED, 0, len(REFUTED) + 1, depth=2)))
    assert n > 0
    seen: list[tuple[int, int]] = []
    list(review_games([g, g], depth=2, confirm=4, jobs=jobs, on_progress=lambda d, t: seen.append((d, t))))
    positions = 2 * (len(REFUTED) + 1)
    # done never goes back and ends at every position plus both games' candidates: the bar does not
    # stand at its end while the confirmations run
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:], strict=False))
    assert seen[-1] == (positions + 2 * n, positions + 2 * n)
    assert max(d for d, t in seen if t == positions + 2 * n) > positions
