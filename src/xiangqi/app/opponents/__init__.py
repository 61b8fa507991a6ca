"""Who you play: the computer player, the named opponents and their styles, engines of the user's
choice, and engine matches in the page."""
