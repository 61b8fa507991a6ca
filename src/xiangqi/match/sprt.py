"""Sequential probability ratio test (SPRT) of engine matches, as fishtest runs them.

``xiangqi match A B --sprt ELO0 ELO1`` tests H0: "A is ELO0 stronger than B" against H1: "A is
ELO1 stronger" (logistic Elo: an Elo difference ``d`` gives A the expected score
``1 / (1 + 10**(-d/400))``) and stops when the log-likelihood ratio crosses a bound.

Formulas (Michel Van den Bergh, "Generalized sequential probability ratio test for families of
distributions" and the notes behind fishtest's ``stat_util.py``/``LLRcalc.py``):

* **Bounds** (Wald): ``lower = log(beta / (1 - alpha))``, ``upper = log((1 - beta) / alpha)``;
  alpha = beta = 0.05 gives ±log(19) = ±2.944. LLR >= upper accepts H1, LLR <= lower accepts H0.
* **Model**: the outcomes are a multinomial with scores ``a_i``: per game (trinomial: loss,
  draw, win = 0, ½, 1) or per colour-swapped pair of games (pentanomial: pair scores 0, ½, 1,
  1½, 2 divided by 2). The pentanomial model is the right one when games are played in pairs
  with the same opening (our matches are): the two games of a pair are correlated through the
  opening, and the pair is the independent unit.
* **LLR** (the generalized SPRT): with the observed frequencies ``p_i`` (N samples), the
  distribution of largest likelihood whose expected score is ``s`` is
  ``p_i(s) = p_i / (1 + x (a_i - s))``, where ``x`` solves ``sum p_i (a_i - s) / (1 + x (a_i - s)) = 0``
  (a Lagrange multiplier; the sum falls monotonically in ``x`` on the interval where every
  ``1 + x (a_i - s) > 0``, so bisection finds it). Then
  ``LLR = N * sum p_i log(p_i(s1) / p_i(s0))`` with ``s0``, ``s1`` the expected scores of
  ELO0, ELO1. For small Elo differences it is close to the quadratic approximation
  ``N (s1 - s0) (2 mu - s0 - s1) / (2 var)`` (mu, var: the mean and variance of the observed
  scores), which :func:`llr_approx` gives for comparison.
* Empty outcome classes get a count of 1e-3 (fishtest's regularisation), so that a run of
  only wins or only draws has a finite LLR.

The Elo estimate printed with the result is ``elo_from_score(mu)`` with the 95 % interval
``mu ± 1.96 sqrt(var / N)`` mapped to Elo (for the pentanomial model ``var`` is the variance of
the pair score, so the interval accounts for the pairing).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence

EPSILON = 1e-3
TRINOMIAL_SCORES = (0.0, 0.5, 1.0)
PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def expected_score(elo: float) -> float:
    """Expected score of the side ``elo`` logistic Elo stronger: ``1 / (1 + 10**(-elo/400))``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's ``(lower, upper)`` LLR bounds: ``(log(beta/(1-alpha)), log((1-beta)/alpha))``.

    Raises ValueError unless 0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1.
    """
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"alpha and beta must lie in (0, 1) with alpha + beta < 1, got {alpha}, {beta}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _pdf(counts: Sequence[float], scores: Sequence[float]) -> tuple[float, list[tuple[float, float]]]:
    if len(counts) != len(scores):
        raise ValueError(f"{len(counts)} counts for {len(scores)} outcome scores")
    if any(c < 0 for c in counts):
        raise ValueError(f"negative count in {list(counts)}")
    reg = [max(float(c), EPSILON) for c in counts]
    n = sum(reg)
    return n, [(a, c / n) for a, c in zip(scores, reg, strict=True)]


def mean_var(counts: Sequence[float], scores: Sequence[float]) -> tuple[float, float, float]:
    """``(N, mean, variance)`` of the outcome scores, with the EPSILON regularisation."""
    n, pdf = _pdf(counts, scores)
    mu = sum(a * p for a, p in pdf)
    var = sum(p * (a - mu) ** 2 for a, p in pdf)
    return n, mu, var


def mle_pdf(pdf: Sequence[tuple[float, float]], s: float) -> list[float]:
    """Probabilities of largest likelihood under the observed ``pdf`` ((score, p) pairs) among the
    distributions on the same scores whose expected score is ``s`` (module docstring).

    Raises ValueError when ``s`` is not strictly between the smallest and largest score.
    """
    lo_a = min(a for a, _ in pdf)
    hi_a = max(a for a, _ in pdf)
    if not lo_a < s < hi_a:
        raise ValueError(f"expected score {s} outside ({lo_a}, {hi_a})")
    # 1 + x (a - s) > 0 for every a: x in (-1/(hi_a - s), 1/(s - lo_a))
    lo, hi = -1.0 / (hi_a - s), 1.0 / (s - lo_a)

    def g(x: float) -> float:
        return sum(p * (a - s) / (1.0 + x * (a - s)) for a, p in pdf)

    a_, b_ = lo + 1e-15 * (hi - lo), hi - 1e-15 * (hi - lo)
    for _ in range(200):  # g falls from +inf to -inf on (lo, hi)
        mid = 0.5 * (a_ + b_)
        if g(mid) > 0.0:
            a_ = mid
        else:
            b_ = mid
    x = 0.5 * (a_ + b_)
    return [p / (1.0 + x * (a - s)) for a, p in pdf]


def llr(counts: Sequence[float], scores: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized-SPRT log-likelihood ratio of H1 (Elo ``elo1``) against H0 (``elo0``) for the
    outcome ``counts`` of the ``scores`` (trinomial: L, D, W; pentanomial: pair scores 0 … 2)."""
    n, pdf = _pdf(counts, scores)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    p0 = mle_pdf(pdf, s0)
    p1 = mle_pdf(pdf, s1)
    return n * sum(p * math.log(q1 / q0) for (_, p), q0, q1 in zip(pdf, p0, p1, strict=True))


def llr_approx(counts: Sequence[float], scores: Sequence[float], elo0: float, elo1: float) -> float:
    """Van den Bergh's quadratic approximation ``N (s1 - s0) (2 mu - s0 - s1) / (2 var)``."""
    n, mu, var = mean_var(counts, scores)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)


def elo_interval(counts: Sequence[float], scores: Sequence[float], z: float = 1.959964
                 ) -> tuple[float, float, float]:
    """``(elo, lower, upper)``: the Elo of the mean score and its 95 % interval (module docstring)."""
    from xiangqi.match.runner import elo_from_score

    n, mu, var = mean_var(counts, scores)
    half = z * math.sqrt(var / n)
    return elo_from_score(mu), elo_from_score(mu - half), elo_from_score(mu + half)


@dataclasses.dataclass
class Sprt:
    """A running SPRT: feed game scores with :meth:`add` (in game order; games ``2k`` and ``2k+1``
    are a colour-swapped pair), read :meth:`status`.

    ``model``: ``pentanomial`` (pairs, the default) or ``trinomial`` (single games).
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "pentanomial"
    wdl: list[int] = dataclasses.field(default_factory=lambda: [0, 0, 0])  # losses, draws, wins
    pairs: list[int] = dataclasses.field(default_factory=lambda: [0, 0, 0, 0, 0])  # pair score 0 … 2
    _pending: float | None = None

    def __post_init__(self) -> None:
        if self.model not in ("pentanomial", "trinomial"):
            raise ValueError(f"model must be 'pentanomial' or 'trinomial', got {self.model!r}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"ELO0 must be below ELO1, got {self.elo0} and {self.elo1}")
        self.lower, self.upper = bounds(self.alpha, self.beta)

    def add(self, score: float) -> None:
        """Record one game's score for the tested engine: 1, 0.5 or 0."""
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game score is 0, 0.5 or 1, got {score}")
        self.wdl[int(score * 2)] += 1
        if self._pending is None:
            self._pending = score
        else:
            self.pairs[int(round((self._pending + score) * 2))] += 1
            self._pending = None

    @property
    def counts(self) -> tuple[list[int], tuple[float, ...]]:
        """The counts and outcome scores the model uses."""
        if self.model == "trinomial":
            return self.wdl, TRINOMIAL_SCORES
        return self.pairs, PENTANOMIAL_SCORES

    @property
    def samples(self) -> int:
        """Games (trinomial) or completed pairs (pentanomial) so far."""
        return sum(self.counts[0])

    def llr(self) -> float:
        """The LLR now (0 before the first sample)."""
        counts, scores = self.counts
        return llr(counts, scores, self.elo0, self.elo1) if sum(counts) else 0.0

    def status(self) -> str:
        """``H1`` (accepted), ``H0`` (accepted) or ``continue``."""
        v = self.llr()
        if v >= self.upper:
            return "H1"
        if v <= self.lower:
            return "H0"
        return "continue"

    def summary(self) -> str:
        """The lines ``xiangqi match --sprt`` prints: the verdict, the LLR with its bounds, and the Elo."""
        counts, scores = self.counts
        st = self.status()
        verdict = {"H1": f"H1 accepted (A is about {self.elo1:g} Elo or more stronger)",
                   "H0": f"H0 accepted (A is about {self.elo0:g} Elo or less stronger)",
                   "continue": "no decision yet (neither bound reached)"}[st]
        lines = [f"SPRT: elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g} "
                 f"({self.model}): {verdict}",
                 f"LLR {self.llr():.3f} (bounds {self.lower:.3f}, {self.upper:.3f})"]
        if sum(counts):
            elo, lo, hi = elo_interval(counts, scores)
            lines.append(f"Elo {elo:+.1f} +/- {(hi - lo) / 2:.1f} (95%, {self.model}) "
                         f"[{lo:+.1f}, {hi:+.1f}]")
        lines.append(("pairs (0, 0.5, 1, 1.5, 2 points): " + " ".join(map(str, self.pairs)))
                     if self.model == "pentanomial" else
                     f"games (L, D, W): {' '.join(map(str, self.wdl))}")
        return "\n".join(lines)


_PGN_TAG = re.compile(r'^\[(Red|Black|Result) "([^"]*)"\]', re.M)


def pgn_scores(text: str, player: str) -> list[float]:
    """``player``'s score (1, ½, 0) in each finished game of the PGN ``text`` in which it played, in
    file order (``xiangqi match --pgn`` writes games in game order, so games 2k and 2k+1 are a
    colour-swapped pair). Used by ``xiangqi match --sprt-prior`` and ``tools/sprt_pgn.py``."""
    out: list[float] = []
    tags: dict[str, str] = {}
    for key, value in _PGN_TAG.findall(text):
        tags[key] = value
        if key == "Result":
            res = tags.get("Result")
            if res in ("1-0", "0-1", "1/2-1/2") and player in (tags.get("Red"), tags.get("Black")):
                if res == "1/2-1/2":
                    out.append(0.5)
                else:
                    out.append(1.0 if (res == "1-0") == (tags.get("Red") == player) else 0.0)
            tags = {}
    return out


__all__ = ["PENTANOMIAL_SCORES", "TRINOMIAL_SCORES", "Sprt", "bounds", "elo_interval", "expected_score",
           "llr", "llr_approx", "mean_var", "mle_pdf", "pgn_scores"]
