"""A scripted UCI/UCCI engine for the client tests (run as a program; not a test module).

Usage: ``python fake_engine.py MODE``. Every mode answers the handshake; what
happens on ``go`` depends on MODE:

* ``empty-pv`` (R19): ``info`` lines with an empty PV, then ``bestmove h2e2``.
* ``echo``: reports each ``position`` line it got as ``info string got <line>``,
  then ``info … score mate -2 … pv`` and ``bestmove h0g2`` (legal from the start position).
* ``die``: exits with status 3 on ``go``.
* ``hang``: never answers ``go`` (not even after ``stop``).
* ``illegal``: ``bestmove e0e5``.
* ``ucci-only``: like ElephantEye, exits unless the first line is ``ucci``; mate score 9997.
* ``eleeye-331``: ElephantEye 3.31's handshake (exits unless the first line is ``ucci``; its
  ``hashsize`` option, no ``Hash``), plays like ``first``; on ``go`` first reports
  ``info string cwd <folder it runs in>`` and ``info string got <hashsize setting>``.
* ``variant``: announces ``UCI_Variant`` and answers in ranks 1–10 (``bestmove h3e3``).
* ``first``: plays the first legal move in ICCS order of the position it was given
  (from the start both sides then shuffle a rook: a threefold repetition at ply 8).
* ``scored``: like ``first``, with an ``info depth 1 score cp 0 nodes 5 pv <move>`` line before it.
* ``slow``: like ``first`` after sleeping 0.4 s.
* ``claim``: like ``first``, but answers ``nobestmove`` (ElephantEye's draw claim) when the
  position it was given occurred before in the game.
* ``nobestmove``: always ``nobestmove``; ``none``: always ``bestmove (none)``;
  ``resign``: always ``bestmove resign``.
* ``slow-start SECONDS``: like ``first``, but sleeps SECONDS before its first answer (an engine
  that compiles before it speaks); ``slow-ready SECONDS``: like ``first``, but sleeps SECONDS
  before every ``readyok`` (a loaded machine).
"""

from __future__ import annotations

import os
import sys
import time


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "echo"
    # the slow modes' SECONDS; other modes ignore further arguments (a test may pass e.g. --book=FILE)
    delay = float(sys.argv[2]) if mode in ("slow-start", "slow-ready") and len(sys.argv) > 2 else 0.0
    out = sys.stdout

    def say(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    if mode in _PLAYING:
        # load the rules before the handshake, as a real engine loads before 'uciok': imported at the
        # first 'go' instead, a loaded machine's seconds of import counted against the move's time
        _load_rules()
    first = True
    position = ""
    hashsize = "no hashsize"
    for raw in sys.stdin:
        line = raw.strip()
        cmd = line.split()[0] if line else ""
        if first and mode in ("ucci-only", "eleeye-331") and cmd != "ucci":
            return 1
        if first and mode == "slow-start":
            time.sleep(delay)
        first = False
        if cmd == "uci":
            say("id name FakeEngine")
            say("id author tests")
            say("option name Hash type spin default 16 min 1 max 1024")
            say("option name MultiPV type spin default 1 min 1 max 10")
            if mode == "variant":
                say("option name UCI_Variant type combo default chess var chess var xiangqi")
            say("uciok")
        elif cmd == "ucci" and mode == "eleeye-331":
            say("id name ElephantEye")
            say("id version 3.31")
            say("option usemillisec type check default true")
            say("option hashsize type spin min 16 max 1024 default 16")
            say("option newgame type button")
            say("ucciok")
        elif cmd == "ucci":
            say("id name FakeUCCI")
            say("option usemillisec type check default false")
            say("option newgame type button")
            say("ucciok")
        elif cmd == "isready":
            if mode == "slow-ready":
                time.sleep(delay)
            say("readyok")
        elif line.startswith("setoption hashsize"):
            hashsize = line
        elif cmd == "position":
            position = line
            if mode == "echo":
                say(f"info string got {line}")
        elif cmd == "go":
            if mode == "die":
                return 3
            if mode == "hang":
                continue
            if mode == "claim":
                say("nobestmove" if repeated(position) else f"bestmove {first_legal(position)}")
            elif mode == "nobestmove":
                say("nobestmove")
            elif mode == "none":
                say("bestmove (none)")
            elif mode == "resign":
                say("bestmove resign")
            elif mode == "scored":
                move = first_legal(position)
                say(f"info depth 1 score cp 0 nodes 5 pv {move}")
                say(f"bestmove {move}")
            elif mode == "eleeye-331":
                say(f"info string cwd {os.getcwd()}")
                say(f"info string got {hashsize}")
                say(f"bestmove {first_legal(position)}")
            elif mode in ("first", "slow", "slow-start", "slow-ready"):
                if mode == "slow":
                    time.sleep(0.4)
                say(f"bestmove {first_legal(position)}")
            elif mode == "empty-pv":
                say("info depth 1 score cp 12 pv")
                say("info depth 2 seldepth 3 score cp 15 nodes 100 time 5 pv")
                say("bestmove h2e2")
            elif mode == "illegal":
                say("info depth 1 score cp 0 pv e0e5")
                say("bestmove e0e5")
            elif mode == "ucci-only":
                say(f"info string got {line}")
                say("info depth 3 score 9997 pv h2e2")
                say("bestmove h2e2")
            elif mode == "variant":
                say("info depth 1 score cp 30 pv h3e3 h10g8")
                say("bestmove h3e3 ponder h10g8")
            else:
                say("info depth 1 score mate -2 nodes 10 time 1 pv")
                say("bestmove h0g2")
        elif cmd == "quit":
            return 0
    return 0


#: the modes that read the position and play a legal move in it
_PLAYING = ("first", "scored", "slow", "claim", "slow-start", "slow-ready", "eleeye-331")

_Board = None


def _load_rules() -> None:
    """Import the rules library (only its core: a third of the engine package's import time)."""
    global _Board
    from xiangqi.core.board import Board

    _Board = Board


def parse_position(tokens: list[str]):
    """The board of a ``position`` command's tokens: ``startpos|fen <FEN> [moves m1 m2 ...]``."""
    if _Board is None:
        _load_rules()
    mi = tokens.index("moves") if "moves" in tokens else len(tokens)
    head, moves = tokens[:mi], tokens[mi + 1:]
    board = _Board() if head[0] == "startpos" else _Board(" ".join(head[1:]))
    for m in moves:
        board.push_iccs(m)
    return board


def first_legal(position: str) -> str:
    board = parse_position(position.split()[1:])
    moves = sorted(m.iccs() for m in board.legal_moves)
    return moves[0] if moves else "(none)"


def repeated(position: str) -> bool:
    board = parse_position(position.split()[1:])
    now = board.position_key()
    b = board.copy()
    while b.move_stack:
        b.pop()
        if b.position_key() == now:
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
