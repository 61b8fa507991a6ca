"""App layer: the product's features on the layers below, grouped by what players call them.

- :mod:`xiangqi.app.play` — the game: the session, clocks, the hub's round (the session under a lock,
  the clock's watchdog, the computer's move loop, the save step), the computer's conduct, the
  rating, the settings, the SQLite store, 揭棋 games and matches;
- :mod:`xiangqi.app.opponents` — who you play: the computer player, named opponents and their
  styles, engines of the user's choice, engine matches;
- :mod:`xiangqi.app.training` — the coach, puzzles, endgame practice, game reviews, live analysis;
- :mod:`xiangqi.app.library` — the record library: the games database, record files, analysis trees;
- :mod:`xiangqi.app.tasks` — work behind the game: the foreground gate, the setup jobs.

They import one way: tasks ← opponents ← play ← training, library (docs/DESIGN.md, "The app's
packages"). No web imports here: the web layer and the CLI both build on these classes.
"""

# The 揭棋 game registers its stored records' replay check with the store when it is imported
# (store.RECORD_CHECKS): importing it here means any user of the app layer, not only the web server,
# gets a damaged 揭棋 record reported instead of taken as it is.
from xiangqi.app.play import jieqi_game as _jieqi_game  # noqa: F401
from xiangqi.app.play.session import GameOverError, GameSession, MoveRecord, NotYourTurnError, SessionError
from xiangqi.app.play.store import Store, default_data_dir

__all__ = ["GameOverError", "GameSession", "MoveRecord", "NotYourTurnError", "SessionError", "Store",
           "default_data_dir"]
