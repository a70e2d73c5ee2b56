"""Uncertainty that respects how a campaign is built: the estimators against worked examples.

Every figure here is computed a second way inside the test (by hand from the definition, by
enumeration, by simulation, or with a different scipy routine), never by calling the code
under test twice.
"""

from __future__ import annotations

import itertools
import statistics
from math import sqrt

import pytest

from pytest_agentic.campaign import clustered, paired, power, tables

from .records import NANO_NOW, NANO_THEN, record, scores

T_975_9 = 2.2621571627409915  # Student's t, 0.975 quantile, 9 degrees of freedom (printed tables: 2.262)
BIMODAL = {f"task_{i:02d}": (3 if i <= 5 else 0) for i in range(1, 11)}  # five tasks at 3/3, five at 0/3


def counts(per_task: dict[str, int], runs: int = 3) -> list[tuple[int, int]]:
    return [(c, runs) for c in per_task.values()]


# -- the overall pass rate, clustered by task -----------------------------------------------


def test_five_tasks_at_three_of_three_and_five_at_none_the_issues_worked_example():
    # By hand: per-task rates 1 x5, 0 x5; mean 0.5; sample variance 10 * 0.25 / 9; SE = sqrt(var / 10) = 1/6.
    se = sqrt(10 * 0.25 / 9 / 10)
    assert se == pytest.approx(1 / 6)
    o = clustered.overall(counts(BIMODAL))
    assert (o.passed, o.judged, o.tasks, o.rate, o.df) == (15, 30, 10, 0.5, 9)
    assert o.se == pytest.approx(se)
    assert (o.low, o.high) == pytest.approx((0.5 - T_975_9 * se, 0.5 + T_975_9 * se))
    assert (round(o.low, 4), round(o.high, 4)) == (0.123, 0.877)  # "roughly 12%-88%"
    # The runs-as-independent Wilson interval (about 33%-67%) is kept for reference only.
    assert (round(o.wilson_low, 4), round(o.wilson_high, 4)) == (0.3315, 0.6685)
    # The clustered SE is 1.8 times the naive sqrt(p(1-p)/(n-1)); the design effect is (1/6)^2 / (0.25/30).
    assert o.se / sqrt(0.25 / 29) == pytest.approx(1.795, abs=1e-3)
    assert o.design_effect == pytest.approx(30 / 9)
    assert o.method == "clustered" and o.label == "task-clustered t, 9 df"


def test_the_cluster_robust_se_is_the_sandwich_over_runs_for_unequal_tasks():
    # Unequal judged runs (infra errors): the CR1 sandwich of an intercept-only regression,
    # G/(G-1) * (1/n^2) * sum over tasks of sum_i sum_j e_i e_j, with residuals e = y - mean.
    per_task = [(2, 3), (1, 2), (3, 3), (0, 3), (4, 5)]
    runs = [[1] * c + [0] * (n - c) for c, n in per_task]
    y = [v for task in runs for v in task]
    mean = sum(y) / len(y)
    meat = sum((a - mean) * (b - mean) for task in runs for a in task for b in task)
    g = len(runs)
    assert clustered.cluster_robust_se(per_task) == pytest.approx(sqrt(g / (g - 1) * meat / len(y) ** 2))
    # With equal runs per task it is the sample sd of the per-task rates over sqrt(tasks).
    rates = [c / 3 for c in NANO_NOW.values()]
    assert clustered.cluster_robust_se(counts(NANO_NOW)) == pytest.approx(statistics.stdev(rates) / sqrt(10))
    with pytest.raises(ValueError, match="two tasks"):
        clustered.cluster_robust_se([(1, 3), (0, 0)])


def test_the_nano_overall_interval_is_the_one_sample_t_interval_of_its_task_rates():
    from scipy.stats import ttest_1samp

    rates = [c / 3 for c in NANO_NOW.values()]
    ci = ttest_1samp(rates, 0.5).confidence_interval(0.95)
    o = clustered.overall(counts(NANO_NOW))
    assert (o.low, o.high) == pytest.approx((ci.low, ci.high))
    assert (round(o.low, 4), round(o.high, 4)) == (0.1973, 0.8027)


def test_never_narrower_than_wilson_and_one_task_is_wilson():
    solid = clustered.overall([(3, 3)] * 10)  # every task 3/3: no spread between tasks, SE 0
    assert solid.se == 0 and solid.method == "clustered+wilson" and solid.high == 1.0
    assert solid.low == pytest.approx(30 / (30 + 1.959964 ** 2), abs=1e-6)  # Wilson's lower end for 30/30
    one = clustered.overall([(2, 3), (0, 0)])  # the second task lost every run to infra errors
    assert (one.tasks, one.method, one.label, one.se) == (1, "wilson-one-task", "Wilson (one task)", None)
    assert (one.low, one.high) == (one.wilson_low, one.wilson_high)
    assert clustered.overall([(0, 0)]).method == "none"
    wide = clustered.overall([(3, 3), (0, 3)])  # t with 1 df: clipped to [0, 1]
    assert (wide.low, wide.high) == (0.0, 1.0)


# -- the paired comparison --------------------------------------------------------------------


def test_the_published_nano_comparison_paired_over_tasks():
    """10/30 then, 15/30 now: what the paired analysis says, computed independently."""
    from scipy.stats import ttest_rel

    then = [c / 3 for c in NANO_THEN.values()]
    now = [c / 3 for c in NANO_NOW.values()]
    d = paired.paired_difference(then, now)
    diffs = [b - a for a, b in zip(then, now)]
    assert d.mean == pytest.approx(sum(diffs) / 10) == pytest.approx(1 / 6)
    assert d.se == pytest.approx(statistics.stdev(diffs) / sqrt(10))
    ci = ttest_rel(now, then).confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((ci.low, ci.high))
    assert (round(d.low, 4), round(d.high, 4)) == (-0.036, 0.3693)
    # Every one of the 2^10 sign flips, enumerated: those whose |sum| reaches the observed |sum|.
    observed = abs(sum(diffs))
    extreme = sum(1 for signs in itertools.product((1, -1), repeat=10)
                  if abs(sum(s * x for s, x in zip(signs, diffs))) >= observed - 1e-9)
    assert extreme == 192
    assert d.p_value == pytest.approx(extreme / 1024) == pytest.approx(0.1875)
    assert (d.exact, d.flips, d.up, d.down, d.flat) == (True, 1024, 5, 1, 4)
    assert d.can_reach(0.05) and d.min_p == 2 / 1024


def test_many_tasks_use_random_sign_flips_with_a_fixed_seed():
    then = [0.0] * 20
    now = [1 / 3] * 12 + [0.0] * 8  # 12 tasks up, 8 flat: exactly, 2 of 2^12 flips are as extreme
    d = paired.paired_difference(then, now)
    assert not d.exact and d.flips == paired.RESAMPLES
    assert d.p_value == pytest.approx(2 / 2 ** 12, abs=3e-4)
    assert paired.paired_difference(then, now).p_value == d.p_value  # the same seed, the same p
    unchanged = paired.paired_difference([0.5] * 4, [0.5] * 4)
    assert (unchanged.p_value, unchanged.mean, unchanged.low, unchanged.high) == (1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="two tasks"):
        paired.paired_difference([0.1], [0.2])


# -- power ------------------------------------------------------------------------------------


def test_task_variance_is_the_sample_variance_of_the_runs():
    assert power.task_variance(2, 3) == pytest.approx(statistics.variance([1, 1, 0]))
    assert power.task_variance(4, 7) == pytest.approx(statistics.variance([1] * 4 + [0] * 3))
    assert power.task_variance(3, 3) == 0


def test_noncentrality_matches_the_textbook_and_a_simulation():
    import numpy as np
    from scipy.stats import t

    # Paired t test, two-sided alpha 0.05, 10 pairs: effect size d = 1 gives power 0.803 (Cohen 1988,
    # G*Power), so 80% power needs an effect just under 1.
    lam = power.noncentrality(10)
    assert 0.99 < lam / sqrt(10) < 1.0
    # Simulated: 200000 paired t tests on 10 normal differences with mean lam / sqrt(10) and sd 1.
    rng = np.random.default_rng(0)
    x = rng.normal(lam / sqrt(10), 1.0, size=(200_000, 10))
    tstat = x.mean(axis=1) / (x.std(axis=1, ddof=1) / sqrt(10))
    rejected = np.mean(np.abs(tstat) > t.ppf(0.975, 9))
    assert rejected == pytest.approx(0.80, abs=0.005)


def test_minimum_detectable_change_of_the_nano_design():
    from scipy.stats import nct, t

    p = power.design_power(counts(NANO_NOW))
    # Four tasks at 1/3 or 2/3 (run variance 1/3 each), six at 0/3 or 3/3: mean run variance 4/30.
    assert p.run_variance == pytest.approx(4 / 30)
    sd_diff = sqrt(2 * (4 / 30) / 3)
    # At the MDC a paired t test over 10 tasks rejects 80% of the time: checked with scipy's nct directly.
    nc = p.mdc * sqrt(10) / sd_diff
    crit = t.ppf(0.975, 9)
    assert nct.sf(crit, 9, nc) + nct.cdf(-crit, 9, nc) == pytest.approx(0.80, abs=1e-6)
    assert round(p.mdc, 3) == 0.297
    # Runs per task for a 10-point change: the smallest K whose MDC is at most 0.10.
    mdc_at = [p.mdc * sqrt(3 / k) for k in range(1, 60)]
    assert p.runs_for_target == next(k for k, m in enumerate(mdc_at, start=1) if m <= 0.10) == 27
    assert "29.7 points of overall pass rate; a 10-point change needs 27 runs per task" in p.sentence()


def test_no_power_figure_without_noise_or_enough_tasks():
    assert power.design_power(counts(BIMODAL)).mdc is None
    assert "no run-to-run noise" in power.design_power(counts(BIMODAL)).sentence()
    few = power.design_power([(1, 3), (2, 3), (1, 3)])
    assert few.mdc is None and "cannot reach p < 0.05" in few.reason
    single = power.design_power([(1, 1)] * 10)
    assert single.mdc is None and "two judged runs" in single.reason
    assert not power.reachable(5) and power.reachable(6)


# -- the tables carry it ----------------------------------------------------------------------


def test_the_all_row_carries_the_clustered_interval_and_the_power():
    records = scores(NANO_NOW) + [record("task_01", 4, False, mode="infra_error")]
    rows = tables.pass_rate_by_task(records, 3)
    task, overall = rows[0], rows[-1]
    assert task["ci95_method"] == "Wilson" and task["tasks"] is None and task["mdc80"] is None
    assert overall["task"] == "ALL" and overall["infra_errors"] == 1
    assert (overall["ci95_low"], overall["ci95_high"]) == (0.1973, 0.8027)
    assert overall["ci95_method"] == "task-clustered t, 9 df" and overall["tasks"] == 10
    assert (overall["wilson95_low"], overall["wilson95_high"]) == (0.3315, 0.6685)
    assert (overall["mdc80"], overall["runs_for_10pts"]) == (0.297, 27)
    assert list(task) == list(overall)  # one header for the CSV


def test_one_rounding_for_every_share_shown():
    """Every writer shows a rate through one function, rounded from the value itself."""
    from pytest_agentic.campaign.stats import percent, points, wilson_interval

    assert percent(wilson_interval(15, 30)[0]) == "33.2%" and percent(wilson_interval(0, 3)[1]) == "56.1%"
    assert percent(None) == "-" and percent(1.0) == "100.0%" and percent(0.0) == "0.0%"
    from pytest_agentic.campaign.stats import stored

    low = 0.11351  # a clustered bound; the table stores 0.1135, and the summary's line shows that figure too
    assert percent(low) == "11.4%" and percent(stored(low)) == "11.3%" == percent(round(low, 4))
    assert points(0.125) == "+12.5" and points(-0.025) == "-2.5" and points(0.0) == "+0.0"


def test_no_writer_rounds_a_share_after_multiplying_it():
    import ast
    from pathlib import Path

    import pytest_agentic

    found = []
    for path in Path(pytest_agentic.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.FormattedValue) and isinstance(node.value, ast.BinOp)
                    and isinstance(node.value.op, ast.Mult)
                    and any(isinstance(side, ast.Constant) and side.value == 100
                            for side in (node.value.left, node.value.right))):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, f"format the share through campaign.stats.percent / points: {found}"
