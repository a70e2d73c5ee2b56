"""The overall pass rate with an interval that respects how a campaign is built: runs clustered by task.

The runs of one task share the task: a model that solves it tends to solve it every time, and
one that fails it tends to fail it every time. Treating a campaign's 30 runs as 30 independent
draws (a Wilson interval over all runs) then understates the uncertainty of the overall pass
rate. Following Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model
Evaluations" (arXiv 2411.00640, 2024), whose first recommendation is to cluster standard errors
on the unit of randomisation, the overall figure here is clustered on the task:

- **estimate**: the pass rate over the judged runs, sum(c_g) / sum(n_g) (task g has c_g passes
  in n_g judged runs); with the same number of judged runs per task it is the mean of the
  per-task pass rates, the quantity Miller's section on resampling averages;
- **standard error**: the cluster-robust (Liang-Zeger) standard error of that mean with the
  usual small-sample factor G / (G - 1) over G tasks (CR1, what Stata's ``vce(cluster task)``
  reports for an intercept-only regression):
  ``SE^2 = G / (G - 1) * sum_g (c_g - n_g * p)^2 / n^2``; with equal runs per task this is the
  sample variance of the per-task pass rates divided by G;
- **interval**: ``p -/+ t(0.975, G - 1) * SE``, Student's t with G - 1 degrees of freedom.

Why t with G - 1 degrees of freedom rather than a cluster bootstrap: a benchmark has ten
clusters. With so few, the normal approximation and the percentile cluster bootstrap are both
known to be too narrow (Cameron, Gelbach & Miller 2008; Cameron & Miller 2015, "A Practitioner's
Guide to Cluster-Robust Inference", which recommends t(G - 1) critical values with few clusters).
A bootstrap over ten tasks has its standard error without the G / (G - 1) factor and a
discrete distribution: for five tasks at 3/3 and five at 0/3 its percentile interval is
20%-80%, where the t interval is 12.3%-87.7%.

**Never narrower than Wilson.** Under the model the clustering stands for (each task has its
own pass probability, drawn from the tasks the benchmark stands for), the variance of the mean
is the independent-runs variance times the design effect 1 + (runs - 1) * rho, with rho >= 0:
clustering can only widen the interval. The sample variance over ten tasks is itself noisy and
is zero when every task agrees (30/30 would get a zero-width interval), so the interval
reported is the hull of the clustered t interval and the Wilson interval over the runs, within
[0, 1]. ``method`` says which bound where.

With one task there is nothing to cluster over: the interval is that task's Wilson interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from math import sqrt

from .stats import RATE_PLACES, wilson_interval

#: Per-task counts: (passed, judged) for each task.
Counts = Sequence[tuple[int, int]]


def cluster_robust_se(counts: Counts) -> float:
    """The CR1 cluster-robust standard error of the pooled pass rate over tasks with judged runs.

    ``counts`` holds (passed, judged) per task; tasks with no judged run are left out. Needs
    two such tasks at least.
    """
    tasks = [(c, n) for c, n in counts if n > 0]
    g = len(tasks)
    if g < 2:
        raise ValueError(f"a cluster-robust standard error needs two tasks with judged runs, got {g}")
    n = sum(n for _, n in tasks)
    p = sum(c for c, _ in tasks) / n
    return sqrt(g / (g - 1) * sum((c - m * p) ** 2 for c, m in tasks) / n ** 2)


def t_interval(estimate: float, se: float, df: int, confidence: float = 0.95) -> tuple[float, float]:
    """``estimate -/+ t * se`` with Student's t quantile for ``df`` degrees of freedom (scipy's)."""
    from scipy.stats import t

    half = float(t.ppf(0.5 + confidence / 2, df)) * se
    return (estimate - half, estimate + half)


@dataclass(frozen=True)
class Overall:
    """A model's overall pass rate with its task-clustered 95% interval (fractions, not percent)."""

    #: Passing judged runs, and judged runs (infra errors are not judged).
    passed: int
    judged: int
    #: Tasks with at least one judged run: the clusters.
    tasks: int
    #: passed / judged; None without a judged run.
    rate: float | None
    #: The interval reported for the overall figure (see ``method``).
    low: float | None
    high: float | None
    #: "clustered" (t interval), "clustered+wilson" (the Wilson interval was wider at an end),
    #: "wilson-one-task" (a single task: its Wilson interval), "none" (no judged run).
    method: str
    #: Cluster-robust standard error and its degrees of freedom (tasks - 1); None under two tasks.
    se: float | None
    df: int | None
    #: Wilson interval over the runs as if they were independent, for reference.
    wilson_low: float | None
    wilson_high: float | None
    #: (se / binomial se over the runs)^2: how much the clustering inflates the variance.
    design_effect: float | None

    @property
    def label(self) -> str:
        """Which interval this is, for the tables: 'task-clustered t, 9 df', 'Wilson (one task)'."""
        if self.method == "clustered":
            return f"task-clustered t, {self.df} df"
        if self.method == "clustered+wilson":
            return f"task-clustered t, {self.df} df, Wilson floor"
        if self.method == "wilson-one-task":
            return "Wilson (one task)"
        return "no judged run"

    def as_dict(self) -> dict[str, object]:
        """Plain values for campaign.json and the report (rates as fractions, rounded to 4 places)."""
        out: dict[str, object] = {k: (round(v, RATE_PLACES) if isinstance(v, float) else v) for k, v in asdict(self).items()}
        out["label"] = self.label
        return out


def overall(counts: Counts, confidence: float = 0.95) -> Overall:
    """The overall pass rate of one model from its per-task (passed, judged) counts."""
    tasks = [(c, n) for c, n in counts if n > 0]
    passed, judged = sum(c for c, _ in tasks), sum(n for _, n in tasks)
    if not judged:
        return Overall(0, 0, 0, None, None, None, "none", None, None, None, None, None)
    rate = passed / judged
    w_low, w_high = wilson_interval(passed, judged, confidence)
    if len(tasks) < 2:
        return Overall(passed, judged, 1, rate, w_low, w_high, "wilson-one-task", None, None, w_low, w_high, None)
    se = cluster_robust_se(tasks)
    df = len(tasks) - 1
    t_low, t_high = t_interval(rate, se, df, confidence)
    low, high = max(0.0, min(t_low, w_low)), min(1.0, max(t_high, w_high))
    method = "clustered" if (t_low <= w_low and t_high >= w_high) else "clustered+wilson"
    naive_var = rate * (1 - rate) / judged
    design_effect = se ** 2 / naive_var if naive_var > 0 else None
    return Overall(passed, judged, len(tasks), rate, low, high, method, se, df, w_low, w_high, design_effect)
