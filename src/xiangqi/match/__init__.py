"""Engine matches and their statistics: the runner of ``xiangqi match``, SPRT, an outside referee.

:mod:`.runner` plays the games (any two UCI/UCCI engines, ``builtin`` being ours, through
:mod:`xiangqi.engine.uci.client`) and rates the players. Layer: above the engine, beside study and db;
the app's tournaments and 揭棋 matches and the web's matches page build on it.
"""
