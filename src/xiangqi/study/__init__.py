"""Study: analysis, game review, openings and puzzles.

Imports :mod:`xiangqi.core` and :mod:`xiangqi.engine`, never the app or web layers.
:mod:`xiangqi.study.ecco` classifies a game's opening by the ECCO 2004 system;
:mod:`xiangqi.study.review` reviews a game move by move (win chance, accuracy, mistakes)::

    >>> from xiangqi.study import ecco
    >>> ecco.classify(["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "c3c4", "g6g5", "h0h6"])
    Ecco(code='C30', name='中炮过河车互进七兵对屏风马')
"""
