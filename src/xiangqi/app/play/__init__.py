"""The game: a session with its clocks and rulings, the hub's round, the computer's conduct, the rating,
the settings, the SQLite store and its salvage, and 揭棋 games and matches."""
