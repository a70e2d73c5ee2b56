"""What the report shows of one campaign, as plain values for the template (no HTML here).

Every number comes from the campaign's own tables (``campaign.tables``), so the page says
what ``pass_rate_by_task.csv``, ``cost_breakdown.csv`` and ``summary.md`` say; the overall
interval is the ``ci95_low``/``ci95_high`` of each model's ``ALL`` row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..campaign import economy, frontier, tables
from ..verdicts import sweep
from ..campaign.summary import ks_label, shown_ks
from ..run.records import FailureMode, RunRecord
from .transcript import RunView, run_view

#: Failure modes in precedence order, then the two outcomes that are not failures of the model.
MODES = [m.value for m in FailureMode]


def anchor(text: str) -> str:
    """``text`` made safe for an HTML id and a URL fragment: letters, digits, ``_`` and ``-``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def run_id(task: str, run: int, model: str, prefix: str = "") -> str:
    """The id of a run's transcript on the page: ``task_09-run2-<model>`` (``prefix`` on a page of several)."""
    return f"{prefix}{anchor(task)}-run{run}-{anchor(model)}"


@dataclass
class Series:
    """One line of the page's charts and tables: a model, or a model of one campaign of several."""

    key: str
    model: str
    label: str
    index: int
    campaign: str


@dataclass
class CampaignView:
    id: str
    anchor: str
    prefix: str
    manifest: Mapping[str, Any]
    records: list[RunRecord]
    series: list[Series]
    max_k: int
    #: The k the page shows pass@k and pass^k for ('1..3', or a ladder such as '1,2,3,5,10,20,30').
    ks: str
    headline: list[dict[str, Any]]
    task_rows: list[dict[str, Any]]
    tasks: list[dict[str, str]]
    modes: list[dict[str, Any]]
    consistency: list[dict[str, Any]]
    runs: list[RunView]
    notes: list[str]
    status: str
    verdicts: Any = None
    errors: list[str] = field(default_factory=list)
    #: The frontier in words (per axis) and the variants compared pairwise (``verdicts/sweep.py``).
    frontier_words: list[str] = field(default_factory=list)
    #: The token economy per model (``campaign.economy.economy_rows``, ALL rows).
    economy: list[dict[str, Any]] = field(default_factory=list)
    variant_words: list[str] = field(default_factory=list)


def _max_k(records: Sequence[RunRecord], manifest: Mapping[str, Any]) -> int:
    runs = manifest.get("runs")
    if isinstance(runs, int) and runs > 0:
        return runs
    per: dict[tuple[str, str], int] = {}
    for r in records:
        per[(r["model"], r["task"])] = per.get((r["model"], r["task"]), 0) + 1
    return max(per.values(), default=1)


def headline(records: Sequence[RunRecord], max_k: int) -> list[dict[str, Any]]:
    """Per model: score, pass rate and its 95% interval, pass@k, pass^k, infra errors, cost."""
    overall = {r["model"]: r for r in tables.pass_rate_by_task(records, max_k) if r["task"] == "ALL"}
    costs = {r["model"]: r for r in tables.cost_breakdown(records)}
    spent = economy.overall(records)
    quick = {m: sum(1 for r in records if r["model"] == m and r["tags"].get("quick_fail")) for m in overall}
    rows = []
    for model, row in overall.items():
        cost = costs[model]
        rows.append({
            "model": model, "passed": row["passed"], "judged": row["judged"], "runs": row["runs"],
            "pass_rate": row["pass_rate"], "ci95_low": row["ci95_low"], "ci95_high": row["ci95_high"],
            "pass_at": [row.get(f"pass@{k}") for k in shown_ks(max_k)],
            "pass_hat": [row.get(f"pass^{k}") for k in shown_ks(max_k)],
            "infra_errors": row["infra_errors"], "quick_fails": quick[model],
            "total_cost": cost["total_cost_usd"], "cost_per_pass": cost["cost_per_pass_usd"],
            "unpriced": cost["runs_without_price"],
            "tokens_in": cost["prompt_tokens"], "tokens_out": cost["completion_tokens"],
            # The token economy (campaign/economy.py): per pass with intervals, per run, reported details.
            "economy": spent[model],
        })
    return rows


def mode_counts(records: Sequence[RunRecord]) -> list[dict[str, Any]]:
    """Per model: passed runs, then failed runs by mode (the failure-mode histogram, with passes)."""
    out = []
    for row in tables.cost_breakdown(records):
        model = row["model"]
        histogram = [m for m in tables.failure_mode_histogram(records) if m["model"] == model]
        counts = {m["failure_mode"]: m["count"] for m in histogram}
        out.append({"model": model, "passed": row["passed"], "total": row["runs"],
                    "counts": [(mode, counts.get(mode, 0)) for mode in MODES],
                    "answer_format": sum(m["answer_format"] for m in histogram)})
    return out


def _consistency(records: Sequence[RunRecord], runs: Sequence[RunView]) -> list[dict[str, Any]]:
    """Solid, flaky and dead tasks per model, each failed run with the id of its transcript."""
    failed: dict[tuple[str, str], list[RunView]] = {}
    for run in runs:
        if not run.passed and run.mode != FailureMode.INFRA_ERROR.value:
            failed.setdefault((run.model, run.task), []).append(run)
    return [{**row, "failed": failed.get((row["model"], row["task"]), [])} for row in tables.consistency(records)]


def build(campaign_id: str, manifest: Mapping[str, Any], records: Sequence[RunRecord],
          transcripts: Mapping[tuple[str, str, int], Mapping[str, Any]], *, prefix: str = "",
          label_with_campaign: bool = False, verdicts: Any = None) -> CampaignView:
    """The view of one campaign; ``transcripts`` by (model, task, run), missing ones shown as missing."""
    records = sorted(records, key=lambda r: (r["model"], r["task"], r["run"]))
    max_k = _max_k(records, manifest)
    models = sorted({r["model"] for r in records})
    series = [Series(key=f"{prefix}{anchor(m)}", model=m, index=0, campaign=campaign_id,
                     label=f"{m} ({campaign_id})" if label_with_campaign else m) for m in models]
    task_rows = [r for r in tables.pass_rate_by_task(records, max_k) if r["task"] != "ALL"]
    names: dict[str, str] = {}
    for r in records:
        names.setdefault(r["task"], r["task_name"])
    runs = []
    errors = []
    for r in records:
        key = (r["model"], r["task"], r["run"])
        transcript = transcripts.get(key)
        if transcript is None:
            errors.append(f"{r['transcript']}: transcript missing or unreadable")
        runs.append(run_view(r, transcript, run_id(r["task"], r["run"], r["model"], prefix)))
    complete = manifest.get("complete")
    status = ("complete" if complete else "INCOMPLETE: the session stopped early; the finished runs are kept"
              if complete is False else "status not recorded")
    return CampaignView(
        id=campaign_id, anchor=f"{prefix}campaign", prefix=prefix, manifest=manifest, records=list(records),
        series=series, max_k=max_k, ks=ks_label(max_k), headline=headline(records, max_k), task_rows=task_rows,
        tasks=[{"id": t, "name": names[t]} for t in sorted(names)], modes=mode_counts(records),
        consistency=_consistency(records, runs), runs=runs, notes=list(manifest.get("notes") or []),
        status=status, verdicts=verdicts, errors=errors,
        frontier_words=[line for axis in frontier.AXES for line in frontier.sentences(frontier.points(records), axis)],
        variant_words=[sweep.sentence(c) for c in sweep.comparisons(records)],
        economy=economy.economy_rows(records, overall_only=True),
    )
