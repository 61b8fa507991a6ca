"""Rule sets of the referee: CXA (the default) and AXF, and :func:`get_rules` to name one.

:mod:`xiangqi.core.classify` (which move is 将/杀/捉/闲) and :mod:`xiangqi.core.referee` (the
rulings) both read a :class:`RuleSet`; it lives here, below both, so the classifier does not
import the referee that calls it. :mod:`xiangqi.core.referee` re-exports every name.
"""

from __future__ import annotations

import dataclasses

from xiangqi.core.errors import XiangqiError

__all__ = ["AXF", "CXA", "RULE_SETS", "RuleSet", "get_rules"]


@dataclasses.dataclass(frozen=True)
class RuleSet:
    """A rule set for the rulings. Add a new one by making an instance.

    - ``name``: ``cxa`` (Chinese Xiangqi Association, the default) or ``axf``.
    - ``move_limit_plies``: natural move limit, plies without a capture
      (120 = 60 moves, RULES.md §4; a tournament may lower it).
    - ``kill_is_attack``: 杀 (mate threat) counts as an attack (CXA) or is
      allowed (AXF), RULES.md §5.1, §5.5.
    - ``mixed_attacks_forbidden``: a cycle mixing 将/杀/捉 on every move
      (一将一捉 …) is forbidden (CXA 24.13) or allowed (AXF).
    - ``chase_same_piece``: a perpetual chase must chase the same piece on every
      move (AXF rule 32) or may chase one or several pieces (CXA 24.11).
    - ``pawn_chases``: a pawn's winning attack, made by the pawn that moved,
      always counts as a chase. False in both rule sets: CXA 通则 3 "兵（卒）本身
      允许长捉" (the 2020 figure 图14 cites it: "按照兵（卒）本身允许长捉的规定，判闲"),
      AXF allows pawn chases.
    - ``pawn_mutual``: CXA 通则 3's exception "形成相互长打时兵卒的捉按捉处理": a pawn's
      own chase counts as 捉 when its side attacks with other pieces too and, the pawn's
      chases counted, both sides attack on every move of the cycle (相互长打). A side
      whose only attacks are its pawn's chases is 兵本身长捉: allowed (图14).
    - ``answer_check_idle``: a king move that answers a check is 闲 even if it
      creates an attack (通则 2 "走动帅应将后产生的捉、杀为闲", RULES.md §5.2.10);
      the article names the king's move, so other answers to a check (a block, a
      capture of the checker) are classified like any move.
    - ``responsibility``: the CXA 2020 responsibility comparison when both
      sides are forbidden (RULES_CXA §4.4).
    - ``chase_model``: how chases are found: ``cxa`` (material gain by a static
      exchange, :func:`~xiangqi.core.classify.classify_move`) or ``axf`` (new
      attacks on unrooted pieces, :func:`~xiangqi.core.classify.axf_chased`).
    """

    name: str = "cxa"
    move_limit_plies: int = 120
    kill_is_attack: bool = True
    mixed_attacks_forbidden: bool = True
    chase_same_piece: bool = False
    pawn_chases: bool = False
    pawn_mutual: bool = True
    answer_check_idle: bool = True
    responsibility: bool = True
    chase_model: str = "cxa"

    def with_move_limit(self, plies: int) -> RuleSet:
        """The same rule set with another natural move limit (plies, > 0).

        Raises :class:`~xiangqi.core.errors.XiangqiError` (a ``ValueError``) for ``plies`` <= 0.
        """
        if plies <= 0:
            raise XiangqiError(f"move limit must be a positive number of plies, got {plies}")
        return dataclasses.replace(self, move_limit_plies=plies)


CXA = RuleSet("cxa")
AXF = RuleSet(
    "axf",
    kill_is_attack=False,
    mixed_attacks_forbidden=False,
    chase_same_piece=True,
    pawn_chases=False,
    pawn_mutual=False,
    responsibility=False,
    chase_model="axf",
)
RULE_SETS = {"cxa": CXA, "axf": AXF}


def get_rules(rules: object | None) -> RuleSet:
    """A :class:`RuleSet` from None (CXA), a name (``cxa``/``axf``, any case) or a RuleSet.

    Raises :class:`~xiangqi.core.errors.XiangqiError` (a ``ValueError``) for anything else.
    """
    if rules is None:
        return CXA
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str) and rules.lower() in RULE_SETS:
        return RULE_SETS[rules.lower()]
    raise XiangqiError(f"unknown rule set {rules!r}; expected 'cxa' or 'axf'")
