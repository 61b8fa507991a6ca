"""An independent referee for engine matches: Fairy-Stockfish's xiangqi rules through pyffish.

``xiangqi match --referee pyffish`` ends every game where pyffish (the Python binding of
Fairy-Stockfish, a test dependency: ``pip install pyffish``) says the game is over, not where our
own referee (:meth:`xiangqi.core.board.Board.outcome`) does, so a match measured for the outside
does not depend on our reading of the rules. Our referee still rules every position as the game
goes on; its first ruling is kept with the game (:attr:`xiangqi.match.runner.GameResult.own`) and
the match reports both tallies and every game where they differ.

pyffish's xiangqi (Fairy-Stockfish's variant ``xiangqi``), as asked here after every move:

* no legal move: the side to move loses (mate or stalemate, ``pyffish.game_result``);
* ``pyffish.is_immediate_game_end``: an end that needs no claim;
* ``pyffish.is_optional_game_end``: a repetition (Fairy-Stockfish's perpetual check and chase
  rules: the side that checks or chases perpetually loses, else a draw) or its move rule (a draw
  after 100 plies without a capture; the Chinese rules' limit is 120). A referee applies a claimable
  end at once, as a tournament arbiter would on the claim.

Values are from the side to move's point of view (positive: it wins). Fairy-Stockfish writes
ranks 1–10 (``h3e3``) where ICCS writes 0–9 (``h2e2``): converted here (DESIGN.md decision 3).
"""

from __future__ import annotations

from typing import Any

from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError

VARIANT = "xiangqi"


def to_fsf(move: Move) -> str:
    """An ICCS move in Fairy-Stockfish's coordinates: ``h2e2`` → ``h3e3``."""
    t = move.iccs()
    return f"{t[0]}{int(t[1]) + 1}{t[2]}{int(t[3]) + 1}"


class PyffishReferee:
    """Fairy-Stockfish's game-end rules (module docstring) for a :class:`~xiangqi.core.board.Board`.

    Raises :class:`~xiangqi.core.errors.XiangqiError` when pyffish is not installed.
    """

    name = "pyffish"

    def __init__(self) -> None:
        try:
            import pyffish
        except ImportError:
            raise XiangqiError("--referee pyffish needs the pyffish package (pip install pyffish, a test "
                               "dependency of this project)") from None
        self._sf: Any = pyffish
        self.version = ".".join(str(x) for x in pyffish.version())
        self.name = f"pyffish {self.version}"

    def outcome(self, board: Board) -> tuple[str, str] | None:
        """``(result, reason)`` when pyffish ends the game in ``board``'s position (``1-0``, ``0-1``,
        ``1/2-1/2``; the reason in English, naming pyffish), else None. The game's moves are read from
        ``board``'s move stack, from its starting position."""
        sf = self._sf
        fen = board.starting_fen()
        moves = [to_fsf(m) for m in board.move_stack]
        red_to_move = board.turn
        if not sf.legal_moves(VARIANT, fen, moves):
            value = sf.game_result(VARIANT, fen, moves)
            what = "checkmate" if board.is_check() else "stalemate (no legal move)"
            return self._result(value, red_to_move), f"pyffish: {what}"
        ended, value = sf.is_immediate_game_end(VARIANT, fen, moves)
        if ended:
            return self._result(value, red_to_move), "pyffish: game end"
        ended, value = sf.is_optional_game_end(VARIANT, fen, moves)
        if ended:
            if board.halfmove_clock >= 100 and value == 0:
                why = "move rule (100 plies without a capture)"
            elif value == 0:
                why = "repetition, drawn"
            else:
                loser = "Black" if (value > 0) == red_to_move else "Red"
                why = f"repetition, {loser} checks or chases perpetually"
            return self._result(value, red_to_move), f"pyffish: {why}"
        return None

    @staticmethod
    def _result(value: int, red_to_move: bool) -> str:
        if value == 0:
            return "1/2-1/2"
        return "1-0" if (value > 0) == red_to_move else "0-1"


def get_referee(name: str | None) -> PyffishReferee | None:
    """The referee named ``name``: None or ``ours`` for our own (None is returned), ``pyffish``.
    Raises :class:`~xiangqi.core.errors.XiangqiError` for another name."""
    if name in (None, "", "ours"):
        return None
    if name == "pyffish":
        return PyffishReferee()
    raise XiangqiError(f"unknown referee {name!r}: expected 'ours' or 'pyffish'")
