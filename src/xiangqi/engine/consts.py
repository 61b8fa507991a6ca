"""Constants shared by the Numba kernels and the Python driver (importing this compiles nothing).

Scores are centipawns for the side to move; a mate is ``MATE - ply`` (mate-distance
scores), so ``|score| > MATE_BOUND`` means a forced mate. ``REP_WIN`` scores a
win by the opponent's forbidden perpetual check or chase (RULES.md §5.4.1), less the plies to
it, so ``RULE_BOUND < |score| <= MATE_BOUND`` means a win (or loss) by the repetition rules.
"""

from __future__ import annotations

MAX_MOVES = 256  # move-buffer size per ply; the most legal moves of a xiangqi position is well below
MAX_PLY = 128  # deepest ply of the search path (main search + quiescence)
INF = 32000
MATE = 30000
MATE_BOUND = MATE - 1000
REP_WIN = 25000
RULE_BOUND = REP_WIN - 1000
HISTORY = 2048  # positions of game history + search path kept for repetition detection

# fields of the kernel state array ``st``
S_SIDE, S_MG, S_EG, S_PH, S_KEY, S_HP = range(6)
# fields of the control array ``ctl`` (shared with other threads: the stop flag)
(C_STOP, C_NODES, C_NODE_LIMIT, C_SELDEPTH, C_GEN, C_BEST, C_BEST_SCORE, C_ROOT_DONE, C_QCHECK,
 C_RULES) = range(10)
# values of ctl[C_RULES]: how the search rules a repetition it finds (search.repetition_rules)
RULES_CXA, RULES_AXF, RULES_CHECKS = 0, 1, 2
