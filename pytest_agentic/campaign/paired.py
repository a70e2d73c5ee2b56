"""The paired comparison of two campaigns over the tasks both ran.

Both campaigns ran the same tasks, so the comparison is made task by task (Miller, "Adding
Error Bars to Evals", arXiv 2411.00640, on paired differences): for each task t the change of
its pass rate, ``d_t = now_t - then_t``, and over the T tasks

- the mean change ``mean(d)``: with the same runs per task, the change of the overall pass rate;
- its paired 95% interval, ``mean(d) -/+ t(0.975, T - 1) * sd(d) / sqrt(T)`` (Student's t,
  the tasks being the units; the same estimator as the task-clustered interval of one
  campaign, applied to the differences);
- a two-sided permutation test of "no change": under it, each task's then and now are
  exchangeable, so each ``d_t`` is as likely to carry either sign. With up to
  :data:`EXACT_UP_TO` tasks all 2^T sign flips are enumerated (exact: 1024 for ten tasks);
  beyond, :data:`RESAMPLES` random flips with the fixed seed :data:`SEED`
  (``scipy.stats.permutation_test`` does both). It needs no normality; with T tasks its
  smallest p is 2 / 2^T.

The interval and the test can disagree near the threshold (the t interval assumes normal
per-task changes, the test does not); the verdict follows the test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from math import sqrt

from .clustered import t_interval

#: Enumerate every sign flip up to this many tasks (2^16 = 65536 flips).
EXACT_UP_TO = 16
#: Random sign flips beyond that, with this seed (the same data give the same p-value).
RESAMPLES = 99_999
SEED = 13


def paired_se(diffs: Sequence[float]) -> float:
    """The standard error of the mean of per-task differences: sample sd / sqrt(T)."""
    n = len(diffs)
    if n < 2:
        raise ValueError(f"a paired standard error needs two tasks, got {n}")
    mean = sum(diffs) / n
    return sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)


def sign_flip_test(diffs: Sequence[float]) -> tuple[float, bool, int]:
    """Two-sided sign-flip permutation test of mean(diffs) = 0: (p-value, exact, flips used)."""
    import numpy as np
    from scipy.stats import permutation_test

    data = np.asarray(diffs, dtype=float)
    if not np.any(data):
        return (1.0, True, 2 ** len(data) if len(data) <= EXACT_UP_TO else RESAMPLES)
    exact = len(data) <= EXACT_UP_TO
    result = permutation_test((data,), lambda x, axis: np.mean(x, axis=axis), vectorized=True,
                              permutation_type="samples", alternative="two-sided",
                              n_resamples=np.inf if exact else RESAMPLES, rng=np.random.default_rng(SEED))
    return (float(result.pvalue), exact, int(result.null_distribution.size))


@dataclass(frozen=True)
class PairedDifference:
    """The change of pass rate from one campaign to the next, task by task (fractions)."""

    #: Tasks both campaigns judged at least one run of.
    tasks: int
    #: Mean per-task change of pass rate (now - then) and its paired standard error.
    mean: float
    se: float
    #: Paired 95% interval (t, tasks - 1 df), within [-1, 1].
    low: float
    high: float
    #: Two-sided sign-flip permutation p-value; exact (every flip) or Monte Carlo, and flips used.
    p_value: float
    exact: bool
    flips: int
    #: Tasks whose pass rate went up, down, or stayed.
    up: int
    down: int
    flat: int

    @property
    def min_p(self) -> float:
        """The smallest p-value the exact test can give with this many tasks."""
        return 2.0 / 2 ** self.tasks

    def can_reach(self, alpha: float) -> bool:
        return self.min_p <= alpha

    @property
    def test_name(self) -> str:
        if self.exact:
            return f"exact sign-flip permutation test over {self.tasks} tasks ({self.flips} flips)"
        return f"sign-flip permutation test over {self.tasks} tasks ({self.flips} random flips, seed {SEED})"

    def as_dict(self) -> dict[str, object]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def paired_difference(then: Sequence[float], now: Sequence[float], confidence: float = 0.95) -> PairedDifference:
    """Compare per-task pass rates of the same tasks (same order) in two campaigns; two tasks at least."""
    if len(then) != len(now):
        raise ValueError(f"paired rates need the same tasks: {len(then)} then, {len(now)} now")
    diffs = [b - a for a, b in zip(then, now)]
    if len(diffs) < 2:
        raise ValueError(f"a paired comparison needs two tasks in common, got {len(diffs)}")
    mean = sum(diffs) / len(diffs)
    se = paired_se(diffs)
    low, high = t_interval(mean, se, len(diffs) - 1, confidence)
    p, exact, flips = sign_flip_test(diffs)
    eps = 1e-12
    return PairedDifference(
        tasks=len(diffs), mean=mean, se=se, low=max(-1.0, low), high=min(1.0, high), p_value=p, exact=exact,
        flips=flips, up=sum(d > eps for d in diffs), down=sum(d < -eps for d in diffs),
        flat=sum(abs(d) <= eps for d in diffs))
