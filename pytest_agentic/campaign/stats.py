"""Uncertainty of pass rates within a task: Wilson intervals, pass@k and pass^k, Fisher's exact test.

The overall figure of a campaign, whose runs are clustered by task, is in ``clustered``; the
paired comparison of two campaigns in ``paired``; the power of a design in ``power``.
"""

from __future__ import annotations

from math import comb, sqrt
from statistics import NormalDist


#: Places a rate is stored with in the tables and campaign.json (``tables``, ``clustered.as_dict``).
RATE_PLACES = 4


def percent(x: float | None) -> str:
    """A rate as every artefact shows it, "11.3%" ("-" when unknown), rounded from the value itself: one
    function for every writer (the summary, the terminal, the gates, the leaderboard, the page)."""
    return "-" if x is None else format(x, ".1%")


def stored(x: float | None) -> float | None:
    """A rate as the tables store it (``RATE_PLACES``): a line that shows a bound the tables also hold shows
    this figure, so the two agree to the last digit (0.11351 is 11.4%, its stored 0.1135 is 11.3%)."""
    return None if x is None else round(x, RATE_PLACES)


def points(x: float) -> str:
    """A change of a rate in signed percentage points, "+2.5", rounded as :func:`percent` rounds."""
    return format(x, "+.1%").removesuffix("%")


def wilson_interval(passed: int, runs: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate (closed form; equal to scipy's ``method="wilson"``).

    No scipy here: every campaign's tables need this interval, and importing scipy costs about
    a second of each session.
    """
    if runs == 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = passed / runs
    denominator = 1 + z * z / runs
    center = (p + z * z / (2 * runs)) / denominator
    half = z * sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    return (max(0.0, center - half), min(1.0, center + half))


def pass_at_k(runs: int, passed: int, k: int) -> float:
    """Chance that at least one of k runs drawn from these passes (unbiased estimator)."""
    if k > runs:
        raise ValueError(f"k={k} is more than the {runs} runs")
    if runs - passed < k:
        return 1.0
    return 1.0 - comb(runs - passed, k) / comb(runs, k)


def pass_hat_k(runs: int, passed: int, k: int) -> float:
    """Chance that all k runs drawn from these pass (pass^k, consistency)."""
    if k > runs:
        raise ValueError(f"k={k} is more than the {runs} runs")
    return comb(passed, k) / comb(runs, k)


def pass_curves(runs: int, passed: int, max_k: int) -> tuple[list[float], list[float]]:
    """pass@k and pass^k for every k from 1 to ``min(max_k, runs)`` at once, each from the one before
    (a product of ratios): O(max_k) floats, where :func:`pass_at_k` for every k costs O(max_k^2)
    operations on integers of thousands of digits (minutes at 3000 runs per task)."""
    at, hat = [], []
    none_pass, all_pass = 1.0, 1.0  # chance that k draws are all failures / all passes
    for k in range(1, min(max_k, runs) + 1):
        none_pass *= max(0, runs - passed - (k - 1)) / (runs - (k - 1))
        all_pass *= max(0, passed - (k - 1)) / (runs - (k - 1))
        at.append(1.0 - none_pass)
        hat.append(all_pass)
    return at, hat


def fisher_exact_p(passed_a: int, runs_a: int, passed_b: int, runs_b: int) -> float:
    """Two-sided p-value of Fisher's exact test on two pass/fail counts (scipy's implementation)."""
    from scipy.stats import fisher_exact

    if runs_a == 0 or runs_b == 0:
        return 1.0
    table = [[passed_a, runs_a - passed_a], [passed_b, runs_b - passed_b]]
    return float(fisher_exact(table, alternative="two-sided").pvalue)
