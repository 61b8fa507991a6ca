"""App layer: game sessions (players, levels, undo, results, records), the game's round
(:mod:`xiangqi.app.play.hub`: the session under a lock, the clock's watchdog, the computer's move loop,
the save step) and the SQLite store.

No web imports here: the web layer and the CLI both build on these classes.
"""

from xiangqi.app.play.session import GameOverError, GameSession, MoveRecord, NotYourTurnError, SessionError
from xiangqi.app.play.store import Store, default_data_dir

__all__ = ["GameOverError", "GameSession", "MoveRecord", "NotYourTurnError", "SessionError", "Store",
           "default_data_dir"]
