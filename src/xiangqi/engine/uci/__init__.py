"""The engine's protocol side: the UCI/UCCI server of ``xiangqi engine`` and the client for external engines.

:mod:`.server` serves the built-in engine over UCI or UCCI (DESIGN.md decision 7); :mod:`.client`
drives an external UCI/UCCI program (Pikafish, Fairy-Stockfish, ElephantEye …); :mod:`.commands`
makes such a program's command line absolute before it is started.
"""
