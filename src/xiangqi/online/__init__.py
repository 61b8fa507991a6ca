"""Online play (issue 15): accounts now; the lobby, rooms, server clocks and spectators build on them.

Layer: above ``db`` and ``study`` (the games database and the ratings), below ``web``.
"""
