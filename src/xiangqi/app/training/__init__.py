"""Study aids: the coach while playing, puzzles, endgame practice, game reviews and live analysis."""
