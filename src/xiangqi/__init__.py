"""pyxiangqi: xiangqi (Chinese chess) rules, engine, records and a game in the browser.

The public API of the rules library is one import away::

    >>> import xiangqi
    >>> board = xiangqi.Board()
    >>> board.push(xiangqi.Move.from_iccs("h2e2"))
    >>> len(board.legal_moves)
    45
    >>> board.parse_move("马8进7")
    Move.from_iccs('h9g7')

Game records (PGN, XQF, DhtmlXQ/UBB, EPD) read and write from the same place::

    >>> game = xiangqi.read_game("1. 炮二平五 马8进7 2. 马二进三 *")
    >>> [node.san() for node in game.mainline()]
    ['炮二平五', '马8进7', '马二进三']
"""

from xiangqi.core import notation, pgn
from xiangqi.core.board import (
    ADVISOR,
    BLACK,
    CANNON,
    ELEPHANT,
    HORSE,
    KING,
    PAWN,
    PIECE_TYPES,
    RED,
    ROOK,
    SQUARE_NAMES,
    STARTING_FEN,
    Board,
    Color,
    LegalMoveGenerator,
    Move,
    Piece,
    Termination,
    parse_square,
    square,
    square_file,
    square_name,
    square_rank,
)
from xiangqi.core.errors import (
    AmbiguousMoveError,
    FenError,
    IllegalMoveError,
    InvalidMoveError,
    ReadError,
    RecordProblem,
    XiangqiError,
)
from xiangqi.core.notation import move_to_chinese, move_to_text, move_to_wxf, parse_move
from xiangqi.core.outcome import Outcome
from xiangqi.core.pgn import Game, GameNode, read_games, read_headers, skip_game, write_game
from xiangqi.core.records import RecordError, read_game, read_records, write_records

__version__ = "0.1.0"

__all__ = [
    "ADVISOR", "BLACK", "CANNON", "ELEPHANT", "HORSE", "KING", "PAWN", "PIECE_TYPES", "RED", "ROOK",
    "SQUARE_NAMES", "STARTING_FEN", "AmbiguousMoveError", "Board", "Color", "FenError",
    "IllegalMoveError", "InvalidMoveError", "LegalMoveGenerator", "Move", "Outcome", "Piece",
    "Termination", "XiangqiError", "parse_square", "square", "square_file", "square_name",
    "square_rank", "notation", "pgn", "move_to_chinese", "move_to_text", "move_to_wxf", "parse_move",
    "Game", "GameNode", "ReadError", "RecordError", "RecordProblem", "read_game", "read_games",
    "read_headers",
    "read_records", "skip_game", "write_game", "write_records",
]
