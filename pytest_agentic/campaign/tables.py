"""The campaign's tables, computed from run records (pure functions, no I/O)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ..run.answerlines import TAG as ANSWER_FORMAT
from ..run.records import FailureMode, RunRecord
from .clustered import Overall, overall
from .power import Power, design_power
from .stats import RATE_PLACES, pass_curves, wilson_interval

Row = dict[str, Any]


def _group(records: Iterable[RunRecord], *keys: Literal["model", "task"]) -> dict[tuple[Any, ...], list[RunRecord]]:
    groups: dict[tuple[Any, ...], list[RunRecord]] = defaultdict(list)
    for r in records:
        groups[tuple(r[k] for k in keys)].append(r)
    return dict(sorted(groups.items()))


def _judged(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """Runs that say something about the model: infra errors are kept apart."""
    return [r for r in runs if r["failure_mode"] != FailureMode.INFRA_ERROR.value]


def _per_task_means(counts: Sequence[tuple[int, int]], max_k: int) -> tuple[list[float | None], list[float | None]]:
    """The mean over tasks of pass@k and of pass^k, k = 1..max_k, as benchmarks report them overall.

    ``counts``: (passed, judged) per task (``task_counts``, computed once for every k: a campaign of
    3000 runs per task has 3000 k). Tasks with fewer than k judged runs have no estimate and are left
    out; None when no task has one.
    """
    sums_at, sums_hat, tasks = [0.0] * max_k, [0.0] * max_k, [0] * max_k
    for passed, judged in counts:
        at, hat = pass_curves(judged, passed, max_k)
        for i, (a, h) in enumerate(zip(at, hat)):
            sums_at[i] += a
            sums_hat[i] += h
            tasks[i] += 1
    return ([s / t if t else None for s, t in zip(sums_at, tasks)],
            [s / t if t else None for s, t in zip(sums_hat, tasks)])


def task_counts(runs: Sequence[RunRecord]) -> list[tuple[int, int]]:
    """(passed, judged) per task of these runs, in task order: the clusters of the overall figure."""
    out = []
    for task_runs in _group(runs, "task").values():
        judged = _judged(task_runs)
        out.append((sum(1 for r in judged if r["passed"]), len(judged)))
    return out


def overall_by_model(records: Sequence[RunRecord]) -> dict[str, tuple[Overall, Power]]:
    """Per model: the overall pass rate with its task-clustered interval, and the design's power."""
    out = {}
    for (model,), runs in _group(records, "model").items():
        counts = task_counts(runs)
        out[model] = (overall(counts), design_power(counts))
    return out


def _r4(x: float | None) -> float | None:
    return None if x is None else round(x, RATE_PLACES)


def _rate_columns(runs: Sequence[RunRecord], max_k: int, overall_row: bool = False) -> Row:
    judged = _judged(runs)
    n, c = len(judged), sum(r["passed"] for r in judged)
    counts = task_counts(runs) if overall_row else []
    if overall_row:
        est, power = overall(counts), design_power(counts)
        low, high, method = est.low, est.high, est.label
    else:
        low, high = wilson_interval(c, n)
        method = "Wilson"
    row: Row = {
        "runs": len(runs),
        "judged": n,
        "passed": c,
        "infra_errors": len(runs) - n,
        "pass_rate": round(c / n, RATE_PLACES) if n else None,
        # Per task: Wilson over its runs. ALL: clustered by task (campaign/clustered.py).
        "ci95_low": _r4(low) if n else None,
        "ci95_high": _r4(high) if n else None,
        "ci95_method": method if n else None,
    }
    curves: tuple[Sequence[float | None], Sequence[float | None]] = (
        _per_task_means(counts, max_k) if overall_row else pass_curves(n, c, max_k))
    for prefix, values in zip(("pass@", "pass^"), curves):
        for k in range(1, max_k + 1):
            value = values[k - 1] if k <= len(values) else None
            row[f"{prefix}{k}"] = round(value, 4) if value is not None else None
    # Overall only (blank on task rows): clusters, standard error, the runs-as-independent
    # Wilson interval for reference, and the minimum detectable change (campaign/power.py).
    row.update({"tasks": None, "se_clustered": None, "design_effect": None, "wilson95_low": None,
                "wilson95_high": None, "mdc80": None, "runs_for_10pts": None})
    if overall_row and n:
        row.update({"tasks": est.tasks, "se_clustered": _r4(est.se), "design_effect": _r4(est.design_effect),
                    "wilson95_low": _r4(est.wilson_low), "wilson95_high": _r4(est.wilson_high),
                    "mdc80": _r4(power.mdc), "runs_for_10pts": power.runs_for_target})
    return row


def pass_rate_by_task(records: Sequence[RunRecord], max_k: int) -> list[Row]:
    rows = []
    for (model, task), runs in _group(records, "model", "task").items():
        rows.append({"model": model, "task": task, "name": runs[0]["task_name"], **_rate_columns(runs, max_k)})
    for (model,), runs in _group(records, "model").items():
        rows.append({"model": model, "task": "ALL", "name": "overall", **_rate_columns(runs, max_k, overall_row=True)})
    return rows


def failure_mode_histogram(records: Sequence[RunRecord]) -> list[Row]:
    """Per model and mode: failed runs and their share; ``answer_format``: of them, those that gave no readable
    answer line (run/answerlines.py), kept apart from wrong values."""
    rows = []
    for (model,), runs in _group(records, "model").items():
        failed = [r for r in runs if not r["passed"]]
        for mode in FailureMode:
            of_mode = [r for r in failed if r["failure_mode"] == mode.value]
            rows.append({"model": model, "failure_mode": mode.value, "count": len(of_mode),
                         "share_of_failures": round(len(of_mode) / len(failed), 4) if failed else 0.0,
                         ANSWER_FORMAT: sum(1 for r in of_mode if r["tags"].get(ANSWER_FORMAT))})
    return rows


def tool_calls_by_task(records: Sequence[RunRecord]) -> list[Row]:
    rows = []
    for (model, task), runs in _group(records, "model", "task").items():
        calls = [r["tool_calls"] for r in runs]
        rows.append({
            "model": model, "task": task, "runs": len(runs),
            "tool_calls_total": sum(calls),
            "tool_calls_mean": round(sum(calls) / len(runs), 2),
            "tool_calls_min": min(calls), "tool_calls_max": max(calls),
            "hallucinated_calls": sum(r["tags"].get("hallucinated_calls", 0) for r in runs),
            "redundant_calls": sum(r["tags"].get("redundant_calls", 0) for r in runs),
            "tool_errors": sum(r["tags"].get("tool_errors", 0) for r in runs),
            "quick_fails": sum(1 for r in runs if r["tags"].get("quick_fail")),
            "turns_mean": round(sum(r["turns"] for r in runs) / len(runs), 2),
            "latency_s_mean": round(sum(r["latency_s"] for r in runs) / len(runs), 3),
        })
    return rows


def cost_breakdown(records: Sequence[RunRecord]) -> list[Row]:
    rows = []
    for (model,), runs in _group(records, "model").items():
        known = [r["cost_usd"] for r in runs if r["cost_usd"] is not None]
        unknown = len(runs) - len(known)
        # With some runs unpriced (no price known, or lost with their worker) the total is a lower bound.
        total = sum(known) if known else None
        passes = sum(r["passed"] for r in runs)
        rows.append({
            "model": model, "runs": len(runs), "judged": len(_judged(runs)), "passed": passes,
            "prompt_tokens": sum(r["prompt_tokens"] for r in runs),
            "completion_tokens": sum(r["completion_tokens"] for r in runs),
            "total_cost_usd": round(total, 8) if total is not None else None,
            "cost_per_pass_usd": round(total / passes, 8) if total is not None and passes else None,
            "runs_without_price": unknown,
        })
    return rows


def consistency(records: Sequence[RunRecord]) -> list[Row]:
    """Per model and task: solid (all judged runs pass), dead (all fail), flaky (mixed)."""
    rows = []
    for (model, task), runs in _group(records, "model", "task").items():
        judged = sorted(_judged(runs), key=lambda r: r["run"])
        passes = sum(r["passed"] for r in judged)
        if not judged:
            verdict = "no data"
        elif passes == len(judged):
            verdict = "solid"
        elif passes == 0:
            verdict = "dead"
        else:
            verdict = "flaky"
        failed = [f"run{r['run']}: {r['failure_mode']}" for r in judged if not r["passed"]]
        rows.append({"model": model, "task": task, "verdict": verdict, "score": f"{passes}/{len(judged)}",
                     "failed_runs": "; ".join(failed) or "-"})
    return rows
