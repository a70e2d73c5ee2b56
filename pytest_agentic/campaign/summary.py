"""Human-readable summaries: summary.md, cross_task_consistency.md, the terminal table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import economy, frontier, tables
from .untrusted import code_span
from ..run.records import RunRecord
from ..run.task import BENCHMARK_REVISION
from .stats import percent, stored


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    from tabulate import tabulate

    if not rows:
        return "_(no runs)_\n"
    columns = list(columns or rows[0])
    body = [["" if row.get(c) is None else row.get(c) for c in columns] for row in rows]
    return tabulate(body, headers=columns, tablefmt="github", disable_numparse=True) + "\n"


_pct = percent


#: The terminal tables fit this many columns; a wider one is folded (``folded_tables``).
TERMINAL_WIDTH = 120
#: Columns that name a row: every fold of a table repeats those it has.
ROW_KEYS = ("model", "task")


def folded_tables(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                  width: int = TERMINAL_WIDTH) -> list[str]:
    """``markdown_table`` for the terminal: one table when it fits ``width`` columns, else several, each with
    the row-naming columns and as many of the others, in order, as fit (a column wider alone is shown alone)."""
    if not rows:
        return [markdown_table(rows)]
    columns = list(columns or rows[0])
    keys = [c for c in columns if c in ROW_KEYS]

    def wide(c: str) -> int:  # tabulate's github cell: the widest text (a header gets 2 more), a space each side, a bar
        return max(len(c) + 2, *(len("" if r.get(c) is None else str(r.get(c))) for r in rows)) + 3

    folds: list[list[str]] = []
    used = 1 + sum(wide(c) for c in keys)
    for c in columns:
        if c in keys:
            continue
        if folds and used + wide(c) <= width:
            folds[-1].append(c)
            used += wide(c)
        else:
            folds.append([c])
            used = 1 + sum(wide(k) for k in keys) + wide(c)
    return [markdown_table(rows, [*keys, *fold]) for fold in folds or [[]]]



def shown_ks(max_k: int) -> list[int]:
    """The k of pass@k and pass^k shown to people: all up to 5, then a ladder (1, 2, 3, 5, 10, 20, 50, ...,
    max_k), so that 30 runs give seven columns' worth, not thirty. The CSV keeps every k."""
    if max_k <= 5:
        return list(range(1, max_k + 1))
    ladder = [k for k in (1, 2, 3, 5) if k < max_k]
    step = 10
    while step < max_k:
        ladder.append(step)
        step = step * 5 // 2 if str(step).startswith("2") else step * 2  # 10, 20, 50, 100, 200, 500, ...
    return [*ladder, max_k]


def _series(row: dict[str, Any], prefix: str, max_k: int) -> str:
    """pass@k (or pass^k) for the shown k, compactly: '0.33 0.67 1.00' ('-' past the judged runs)."""
    values = [row.get(f"{prefix}{k}") for k in shown_ks(max_k)]
    return " ".join("-" if v is None else f"{v:.2f}" for v in values)


def ks_label(max_k: int) -> str:
    """The shown k as a label: '1..3', or '1,2,3,5,10,20,30'."""
    ks = shown_ks(max_k)
    return f"1..{max_k}" if ks == list(range(1, max_k + 1)) else ",".join(map(str, ks))


#: The interval column names which interval each row carries.
CI_COLUMN = "95% CI (task: Wilson; ALL: task-clustered)"


def score_rows(records: Sequence[RunRecord], max_k: int) -> list[dict[str, Any]]:
    """One row per model and task (and an overall row per model), for people to read."""
    rows = []
    for r in tables.pass_rate_by_task(records, max_k):
        rows.append({
            "model": r["model"],
            "task": r["task"] if r["task"] == "ALL" else f"{r['task']} {r['name']}",
            "score": f"{r['passed']}/{r['judged']}",
            "pass rate": _pct(r["pass_rate"]),
            CI_COLUMN: "-" if r["pass_rate"] is None else f"{_pct(r['ci95_low'])}-{_pct(r['ci95_high'])}",
            f"pass@{ks_label(max_k)}": _series(r, "pass@", max_k),
            f"pass^{ks_label(max_k)}": _series(r, "pass^", max_k),
            "infra": r["infra_errors"],
        })
    return rows


def overall_lines(records: Sequence[RunRecord]) -> list[str]:
    """Per model: the overall pass rate, which interval it carries and why, and the design's power."""
    lines = []
    for model, (est, power) in tables.overall_by_model(records).items():
        if est.rate is None:
            lines.append(f"- {model}: no judged run")
            continue
        # The figures the ALL row of the table stores: the line and the table show one bound alike.
        rate, low, high = stored(est.rate), stored(est.low), stored(est.high)
        text = f"- {model}: {est.passed}/{est.judged} = {_pct(rate)}, 95% CI {_pct(low)}-{_pct(high)} ({est.label}"
        if est.se is not None:
            text += f", over {est.tasks} tasks; standard error {percent(est.se).removesuffix('%')} points"
            if est.design_effect is not None:
                text += f", design effect {est.design_effect:.2f}"
        text += ")"
        if est.se is not None:
            text += f"; as if the {est.judged} runs were independent (Wilson): {_pct(est.wilson_low)}-{_pct(est.wilson_high)}"
        lines.append(text)
        lines.append(f"- {model}: {power.sentence()}")
    return lines


def _dollars(value: float | None, unpriced: int) -> str:
    if value is None:
        return "unknown"
    return f">= ${value:.6f} ({unpriced} runs unpriced)" if unpriced else f"${value:.6f}"


def cost_rows(records: Sequence[RunRecord]) -> list[dict[str, Any]]:
    rows = []
    for r in tables.cost_breakdown(records):
        rows.append({
            "model": r["model"], "score": f"{r['passed']}/{r['judged']}",
            "tokens in/out": f"{r['prompt_tokens']}/{r['completion_tokens']}",
            "total cost": _dollars(r["total_cost_usd"], r["runs_without_price"]),
            "$/pass": "-" if r["cost_per_pass_usd"] is None else _dollars(r["cost_per_pass_usd"], r["runs_without_price"]),
        })
    return rows


def mode_rows(records: Sequence[RunRecord]) -> list[dict[str, Any]]:
    return [r for r in tables.failure_mode_histogram(records) if r["count"]]


def consistency_markdown(records: Sequence[RunRecord]) -> str:
    rows = tables.consistency(records)
    parts = ["# Cross-task consistency\n",
             "A task is *solid* when every judged run passed, *dead* when none did, *flaky* when the runs "
             "disagree. Runs lost to infra errors are not judged.\n"]
    for verdict in ("solid", "flaky", "dead", "no data"):
        chosen = [r for r in rows if r["verdict"] == verdict]
        if chosen:
            parts.append(f"\n## {verdict} ({len(chosen)})\n\n")
            parts.append(markdown_table(chosen, ["model", "task", "score", "failed_runs"]))
            if verdict == "flaky":
                parts.append(_flaky_details(records, chosen))
    return "".join(parts)


def _flaky_details(records: Sequence[RunRecord], flaky: Sequence[dict[str, Any]]) -> str:
    """How each failed run of a flaky task failed: mode, stop reason and the checker's message."""
    wanted = {(r["model"], r["task"]) for r in flaky}
    lines = ["\nHow the failed runs of flaky tasks failed:\n\n"]
    for r in sorted(records, key=lambda r: (r["model"], r["task"], r["run"])):
        if (r["model"], r["task"]) in wanted and not r["passed"] and r["failure_mode"] != "infra_error":
            why = code_span(r.get("reason") or "")
            lines.append(f"- {r['model']} {r['task']} run{r['run']}: {r['failure_mode']} "
                         f"(stop: {r.get('stop_reason', '?')}){': ' + why if why else ''}\n")
    return "".join(lines)


#: How to read the token economy table (summary.md; the README says more).
ECONOMY_NOTE = (
    "Per pass: what every judged run spent, divided by the passes (failures are paid for too); the 95% "
    "interval follows from the pass rate's (per task: Wilson; ALL: task-clustered). Reasoning and cached "
    "prompt tokens as the provider reported them: \"unknown\" when no run reported any. Tokens per turn: "
    "prompt plus completion of one model call, the mean over runs and the largest (context growth). Turns "
    "and seconds to the final answer: means over the runs that gave one. Every column in token_economy.csv.\n\n")
#: How to read the frontier.
FRONTIER_NOTE = (
    "Each model or variant is a point: its pass rate (95% CI, task-clustered) against its mean spend per "
    "task (one run). On the frontier: no other point passes as often for less. Dominated: another passes at "
    "least as often for no more. The report draws both planes.\n\n")


def frontier_markdown(records: Sequence[RunRecord]) -> str:
    """The frontier section of summary.md: a table of the points (``campaign/frontier.py``) and the sentences."""
    pts = frontier.points(records)
    rows = [{"model": p.model, "pass rate (95% CI)": f"{frontier.pct(p.rate)} ({frontier.pct(p.low)}-{frontier.pct(p.high)})",
             "$/task": frontier.spend_text(p, "usd"), "tokens/task": frontier.spend_text(p, "tokens"),
             "frontier ($)": frontier.mark(p.on["usd"]), "frontier (tokens)": frontier.mark(p.on["tokens"])}
            for p in pts]
    words = "".join(f"- {line}\n" for axis in frontier.AXES for line in frontier.sentences(pts, axis))
    return markdown_table(rows) + "\n" + words


def summary_markdown(records: Sequence[RunRecord], *, campaign_id: str, seed: int, runs: int, complete: bool,
                     started_at: str, finished_at: str | None, notes: Sequence[str],
                     sections: Sequence[tuple[str, str]] = ()) -> str:
    """summary.md; ``sections`` are the (title, markdown) the session's verdicts add."""
    max_k = max(runs, 1)
    modes = mode_rows(records)
    status = "complete" if complete else "INCOMPLETE (the session was interrupted or failed early)"
    parts = [
        f"# Campaign {campaign_id}\n\n",
        f"- benchmark: agentic-core-v1 revision {BENCHMARK_REVISION}, seed {seed}, {runs} runs per task\n",
        f"- status: {status}; {len(records)} runs recorded\n",
        f"- started {started_at}, finished {finished_at}\n",
        *(f"- note: {note}\n" for note in notes),
        "\n## Pass rate (infra errors not judged)\n\n",
        "95% intervals: per task, Wilson over its runs (the runs of one task are exchangeable); overall "
        "(ALL), clustered by task: Student's t with tasks - 1 degrees of freedom on the cluster-robust "
        "standard error, never narrower than Wilson (Miller, arXiv 2411.00640: the task, not the run, is "
        "the unit the benchmark samples).\n\n",
        f"pass@k: the chance that at least one of k runs passes; pass^k: that all k pass (k = {ks_label(max_k)}; "
        "every k in pass_rate_by_task.csv; unbiased estimates from the judged runs; overall: their mean over the "
        "tasks).\n\n",
        markdown_table(score_rows(records, max_k)),
        "\n## Overall uncertainty and power\n\n",
        "".join(line + "\n" for line in overall_lines(records)),
        "\nThe minimum detectable change is the smallest change of every task's pass rate that comparing "
        "this campaign with another of the same design (paired by task, two-sided, alpha 0.05) detects with "
        "80% power, sized by the run-to-run noise seen within tasks; tasks changing unevenly need more.\n",
        "\n## Failure modes\n\n",
        markdown_table(modes) if modes else "No failed runs.\n",
        "\n## Cost\n\n",
        markdown_table(cost_rows(records)),
        "\n## Token economy\n\n",
        ECONOMY_NOTE,
        markdown_table(economy.economy_rows(records)),
    ]
    if len(frontier.points(records)) >= 2:  # a frontier compares two or more models or variants
        parts += ["\n## Frontier: pass rate against spend\n\n", FRONTIER_NOTE, frontier_markdown(records)]
    for title, body in sections:
        parts.append(f"\n## {title}\n\n{body}")
    infra = [r for r in records if r["failure_mode"] == "infra_error"]
    if infra:
        parts.append(f"\n## Infra errors ({len(infra)}, not counted against the model)\n\n")
        parts.append(markdown_table([{"model": r["model"], "task": r["task"], "run": r["run"],
                                      "cause": code_span(r["infra_cause"] or "")} for r in infra]))
    return "".join(parts)
