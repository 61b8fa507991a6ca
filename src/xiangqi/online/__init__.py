"""Online play (issue 15): accounts, the online tables and move log, Glicko-2 ratings per category,
the lobby (identities, time controls, seeks, challenge links, abuse limits) and the event bus
(in-process and Redis). The rooms and the routes that use them are in :mod:`xiangqi.online.rooms`
and :mod:`xiangqi.web.online_api`; the contract is docs/ONLINE_API.md.

Layer: above ``db`` and ``study`` (the games database and the ratings), below ``web``.
"""
