"""Study: analysis, game review, openings and puzzles."""
