"""Work behind the game: the foreground gate that background work gives way to, and the setup jobs."""
