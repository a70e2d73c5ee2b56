"""Power: the smallest change in the overall pass rate a campaign design can detect.

The question every comparison of two campaigns raises: could ten tasks at three runs each have
detected this change at all? The design here is the paired comparison this harness makes
(``pytest_agentic.campaign.paired``): two campaigns of the same tasks, the per-task change of
pass rate tested over the tasks. The noise in a task's change is the run-to-run noise of the
task in each campaign (a task's own difficulty cancels in the pairing), estimated from the
campaign itself:

- per task, the unbiased variance of its judged runs (each 0 or 1):
  ``s_t^2 = c_t * (n_t - c_t) / (n_t * (n_t - 1))``;
- the variance of one task's change when both campaigns run it ``K`` times:
  ``sd_diff^2 = 2 * mean_t(s_t^2) / K`` (between two given campaigns:
  ``mean_t(s_then,t^2 / n_then,t + s_now,t^2 / n_now,t)``).

The minimum detectable change (MDC) is the smallest uniform change of every task's pass rate
that a two-sided paired t test over T tasks (T - 1 degrees of freedom) detects with the given
power at ``alpha``: ``MDC = lambda * sd_diff / sqrt(T)``, where lambda is the noncentrality at
which the noncentral t (scipy) rejects with that power. The exact sign-flip test the comparison
uses approaches the t test as tasks grow; with T tasks it cannot give p below 2 / 2^T, so under
six tasks no change is detectable at alpha 0.05. Tasks whose true change differs would add a
spread that this MDC leaves out: it is a lower bound, the best the design can do.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import ceil, isnan, sqrt

from .clustered import Counts

ALPHA = 0.05
POWER = 0.8
#: The change the summary asks about: ten points of pass rate.
TARGET_CHANGE = 0.10


def task_variance(passed: int, judged: int) -> float:
    """The unbiased sample variance of one task's judged runs (each 1 for a pass, 0 for a fail)."""
    if judged < 2:
        raise ValueError(f"a variance needs two judged runs, got {judged}")
    return passed * (judged - passed) / (judged * (judged - 1))


def noncentrality(tasks: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The noncentrality at which a two-sided one-sample t test over ``tasks`` values has ``power``."""
    from scipy.optimize import brentq
    from scipy.stats import nct, t

    df = tasks - 1
    crit = float(t.ppf(1 - alpha / 2, df))

    def shortfall(nc: float) -> float:
        upper, lower = float(nct.sf(crit, df, nc)), float(nct.cdf(-crit, df, nc))
        # scipy's noncentral t can return nan far in a tail, where the probability is 0.
        return (0.0 if isnan(lower) else lower) + (1.0 if isnan(upper) else upper) - power

    # At 80% power and alpha 0.05 the noncentrality is below 4 from five degrees of freedom on.
    return float(brentq(shortfall, 0.0, 12.0))


def reachable(tasks: int, alpha: float = ALPHA) -> bool:
    """Whether the exact sign-flip test over ``tasks`` can give p < alpha at all (2 / 2^tasks)."""
    return tasks >= 2 and 2.0 / 2 ** tasks <= alpha


@dataclass(frozen=True)
class Power:
    """What a design (tasks x runs, observed run-to-run noise) can detect."""

    tasks: int
    #: Judged runs per task (a mean, when infra errors made them unequal).
    runs: float
    #: Mean over tasks of the per-task run variance; None when no task has two judged runs.
    run_variance: float | None
    alpha: float
    power: float
    #: Minimum detectable change in the overall pass rate (a fraction); None when not computable.
    mdc: float | None
    #: Runs per task needed to detect a change of ``target`` (a ten-point change by default).
    target: float
    runs_for_target: int | None
    #: Why ``mdc`` is None.
    reason: str | None = None

    def sentence(self) -> str:
        design = f"{self.tasks} task{'' if self.tasks == 1 else 's'} x {self.runs:.3g} runs"
        if self.mdc is None:
            return f"minimum detectable change ({design}): not computable: {self.reason}"
        text = (f"minimum detectable change ({design}, paired by task, {self.power:.0%} power, alpha {self.alpha:g}): "
                f"{format(self.mdc, '.1%').removesuffix('%')} points of overall pass rate")
        if self.runs_for_target is not None:
            text += f"; a {format(self.target, '.0%').removesuffix('%')}-point change needs {self.runs_for_target} runs per task"
        return text

    def as_dict(self) -> dict[str, object]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def _mean_variance(counts: Counts) -> float | None:
    values = [task_variance(c, n) for c, n in counts if n >= 2]
    return sum(values) / len(values) if values else None


def _none(tasks: int, runs: float, variance: float | None, alpha: float, power: float, target: float,
          reason: str) -> Power:
    return Power(tasks, runs, variance, alpha, power, None, target, None, reason)


def design_power(counts: Counts, *, alpha: float = ALPHA, power: float = POWER,
                 target: float = TARGET_CHANGE) -> Power:
    """The power of comparing this campaign with another of the same design (same tasks and runs)."""
    judged = [(c, n) for c, n in counts if n > 0]
    tasks = len(judged)
    runs = sum(n for _, n in judged) / tasks if tasks else 0.0
    variance = _mean_variance(judged)
    if not reachable(tasks, alpha):
        return _none(tasks, runs, variance, alpha, power, target,
                     f"a paired test over {tasks} task{'' if tasks == 1 else 's'} cannot reach p < {alpha:g} "
                     "(six tasks at least)")
    if variance is None:
        return _none(tasks, runs, None, alpha, power, target,
                     "no task has two judged runs, so run-to-run noise cannot be estimated")
    if variance == 0:
        return _none(tasks, runs, variance, alpha, power, target,
                     "every task passed all or none of its runs, so this campaign shows no run-to-run "
                     "noise to size a change against (more runs per task would)")
    lam = noncentrality(tasks, alpha, power)
    mdc = lam * sqrt(2 * variance / runs) / sqrt(tasks)
    needed = max(1, ceil(2 * variance * lam ** 2 / (tasks * target ** 2) - 1e-9))
    return Power(tasks, runs, variance, alpha, power, mdc, target, needed)


def comparison_power(then: Counts, now: Counts, *, alpha: float = ALPHA, power: float = POWER) -> Power | None:
    """The minimum detectable change of a comparison of two campaigns over the tasks both ran.

    ``then`` and ``now`` are the (passed, judged) counts of the same tasks, in the same order.
    """
    pairs = [(a, b) for a, b in zip(then, now, strict=True) if a[1] > 0 and b[1] > 0]
    tasks = len(pairs)
    if not tasks:
        return None
    runs = sum(a[1] + b[1] for a, b in pairs) / (2 * tasks)
    both = [(a, b) for a, b in pairs if a[1] >= 2 and b[1] >= 2]
    variance = _mean_variance([p for pair in both for p in pair])
    if not reachable(tasks, alpha):
        return _none(tasks, runs, variance, alpha, power, TARGET_CHANGE,
                     f"a paired test over {tasks} task{'' if tasks == 1 else 's'} cannot reach p < {alpha:g} "
                     "(six tasks at least)")
    if not both or variance is None:
        return _none(tasks, runs, None, alpha, power, TARGET_CHANGE,
                     "no task has two judged runs in both campaigns")
    var_diff = sum(task_variance(*a) / a[1] + task_variance(*b) / b[1] for a, b in both) / len(both)
    if var_diff == 0:
        return _none(tasks, runs, variance, alpha, power, TARGET_CHANGE,
                     "every task passed all or none of its runs in both campaigns: no run-to-run noise seen")
    lam = noncentrality(tasks, alpha, power)
    mdc = lam * sqrt(var_diff) / sqrt(tasks)
    needed = max(1, ceil(2 * variance * lam ** 2 / (tasks * TARGET_CHANGE ** 2) - 1e-9))
    return Power(tasks, runs, variance, alpha, power, mdc, TARGET_CHANGE, needed)


__all__ = ["Power", "design_power", "comparison_power", "noncentrality", "reachable", "task_variance"]
