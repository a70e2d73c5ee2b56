"""The leaderboard: one row per model and campaign, read from campaign folders.

    agentic-leaderboard agentic-results/                 # every campaign below
    agentic-leaderboard RUN_A RUN_B --format csv         # given campaigns, as CSV
    python -m pytest_agentic.verdicts.leaderboard agentic-results/ --latest

Columns: model, campaign, benchmark revision, score (passes out of judged runs), pass
rate with its 95% interval clustered by task (``pytest_agentic.campaign.clustered``:
the runs of one task are not independent draws), infra errors, total cost and cost per
pass; the token economy (tokens and dollars per task, i.e. per run, and tokens per pass) and whether
the row is on the accuracy / cost and accuracy / tokens Pareto frontier of the rows shown
(``pytest_agentic.campaign.frontier``), with the dominated rows named under the table. Sorted by
pass rate (best first), then by cost per pass (cheapest first); ``--sort`` picks another axis
(``usd``, ``tokens``: cheapest first). When the
campaigns are of several benchmark revisions, the lines under the table name, per task,
which campaigns ran it in another version (``pytest_agentic.verdicts.revisions``).

Like with like: rows are ranked, and placed on a frontier, only among the rows over the same task set
and benchmark revision (a *group*); each group is its own table (the widest task set first) with
its coverage (tasks, runs), and no rank, frontier or sentence compares rows of different groups.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from typing import Any

from ..campaign import economy, frontier, stored, tables
from . import revisions
from ..campaign.stats import percent


def rows(campaigns: Sequence[stored.StoredCampaign], latest: bool = False, sort: str = "pass_rate") -> list[dict[str, Any]]:
    out = []
    for c in campaigns:
        rates = {r["model"]: r for r in tables.pass_rate_by_task(c.records, 1) if r["task"] == "ALL"}
        costs = {r["model"]: r for r in tables.cost_breakdown(c.records)}
        spent = economy.overall(c.records)
        for model, rate in rates.items():
            cost, e = costs[model], spent[model]
            task_set = tuple(sorted({r["task"] for r in c.records if r["model"] == model}))
            out.append({
                "model": model, "campaign": c.id, "finished_at": c.manifest.get("finished_at") or "",
                "benchmark_revision": revisions.of(c.manifest),
                "task_set": task_set, "runs": sum(1 for r in c.records if r["model"] == model),
                "passed": rate["passed"], "judged": rate["judged"], "pass_rate": rate["pass_rate"],
                "ci95": (rate["ci95_low"], rate["ci95_high"]), "ci95_method": rate["ci95_method"],
                "tasks": rate["tasks"], "infra_errors": rate["infra_errors"],
                "total_cost_usd": cost["total_cost_usd"], "cost_per_pass_usd": cost["cost_per_pass_usd"],
                "rescore_of": c.manifest.get("rescore_of") or "",
                "usd_per_task": e["usd_per_run"], "tokens_per_task": e["tokens_per_run"],
                "tokens_per_pass": e["tokens_per_pass"], "reasoning_tokens": e["reasoning_tokens"],
                "cached_prompt_tokens": e["cached_prompt_tokens"],
            })
    if latest:
        # Each model's newest campaign of each group: a newer campaign over other tasks does not hide it.
        newest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in out:
            key, slot = (row["finished_at"], row["campaign"]), (row["model"], *group_of(row))
            if slot not in newest or key > (newest[slot]["finished_at"], newest[slot]["campaign"]):
                newest[slot] = row
        out = list(newest.values())
    ranked = []
    for number, members in enumerate(groups(out), start=1):
        _place(members)
        members.sort(key=SORTS[sort])
        for rank, row in enumerate(members, start=1):
            row["group"], row["rank"] = number, rank
        ranked += members
    return ranked


def group_of(row: dict[str, Any]) -> tuple[int | None, tuple[str, ...]]:
    """What makes two rows comparable: the benchmark revision and the task set they ran."""
    return row["benchmark_revision"], row["task_set"]


def groups(data: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The rows by group: the widest task set first, then the newest revision, then the most rows."""
    by: dict[tuple[int | None, tuple[str, ...]], list[dict[str, Any]]] = {}
    for row in data:
        by.setdefault(group_of(row), []).append(row)
    return sorted(by.values(), key=lambda g: (-len(g[0]["task_set"]), -(g[0]["benchmark_revision"] or -1), -len(g),
                                               g[0]["task_set"]))


def coverage(row: dict[str, Any]) -> str:
    """A row's coverage in words: its tasks and runs."""
    tasks = len(row["task_set"])
    return f"{tasks} task{'s' if tasks != 1 else ''}, {row['runs']} run{'s' if row['runs'] != 1 else ''}"


def group_title(members: Sequence[dict[str, Any]]) -> str:
    row = members[0]
    revision = "an unrecorded benchmark revision" if row["benchmark_revision"] is None else \
        f"benchmark revision {row['benchmark_revision']}"
    tasks = len(row["task_set"])
    return f"Over {', '.join(row['task_set'])} ({tasks} task{'s' if tasks != 1 else ''}), {revision}:"


def _inf(x: float | None) -> float:
    return float("inf") if x is None else x


#: The axes the table may be sorted by: pass rate (best first, then cheapest per pass), or a spend per
#: task (cheapest first, unknown last, then the better pass rate).
SORTS: dict[str, Any] = {
    "pass_rate": lambda r: (-(r["pass_rate"] if r["pass_rate"] is not None else -1.0), _inf(r["cost_per_pass_usd"]),
                            r["model"], r["campaign"]),
    "usd": lambda r: (_inf(r["usd_per_task"]), -(r["pass_rate"] or 0.0), r["model"], r["campaign"]),
    "tokens": lambda r: (_inf(r["tokens_per_task"]), -(r["pass_rate"] or 0.0), r["model"], r["campaign"]),
}


def _label(row: dict[str, Any], repeated: set[str]) -> str:
    """A row's name in the frontier's sentences: the model, and its campaign when several rows share the model."""
    return f"{row['model']} ({row['campaign']})" if row["model"] in repeated else row["model"]


def _place(out: list[dict[str, Any]]) -> None:
    """Mark each row on or off the two frontiers of the rows shown (``frontier_usd``, ``frontier_tokens``)."""
    names = [r["model"] for r in out]
    repeated = {m for m in names if names.count(m) > 1}
    pts = [frontier.Point(model=_label(r, repeated), rate=r["pass_rate"], low=r["ci95"][0], high=r["ci95"][1],
                          usd=r["usd_per_task"], tokens=r["tokens_per_task"]) for r in out]
    for axis in frontier.AXES:
        frontier.place(pts, axis)
    for r, p in zip(out, pts):
        r["frontier_usd"], r["frontier_tokens"] = p.on["usd"], p.on["tokens"]
        r["_point"] = p
    for axis in frontier.AXES:
        if sum(p.spend(axis) is not None for p in pts) < 2:  # alone with a known spend: no frontier to be on
            for r in out:
                r[f"frontier_{axis}"] = None


def frontier_lines(data: Sequence[dict[str, Any]]) -> list[str]:
    """The frontier of the rows shown, in words (who is on it, who is dominated and by whom)."""
    pts = [r["_point"] for r in data if "_point" in r]
    return [line for axis in frontier.AXES for line in frontier.sentences(pts, axis)]


_pct = percent


def _usd(x: float | None) -> str:
    return "-" if x is None else f"${x:.6f}"


def display_rows(data: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{
        "rank": r.get("rank", i), "model": r["model"],
        "campaign": r["campaign"] + (" (rescore)" if r["rescore_of"] else ""),
        "revision": "-" if r["benchmark_revision"] is None else r["benchmark_revision"],
        "coverage": coverage(r),
        "score": f"{r['passed']}/{r['judged']}", "pass rate": _pct(r["pass_rate"]),
        "95% CI (task-clustered)": "-" if r["pass_rate"] is None else f"{_pct(r['ci95'][0])}-{_pct(r['ci95'][1])}",
        "infra": r["infra_errors"], "total cost": "unknown" if r["total_cost_usd"] is None else _usd(r["total_cost_usd"]),
        "$/pass": _usd(r["cost_per_pass_usd"]),
        "$/task": "unknown" if r["usd_per_task"] is None else _usd(r["usd_per_task"]),
        "tokens/task": "unknown" if r["tokens_per_task"] is None else f"{r['tokens_per_task']:.0f}",
        "frontier ($, tokens)": f"{_mark(r['frontier_usd'], r['usd_per_task'])}, "
                                f"{_mark(r['frontier_tokens'], r['tokens_per_task'])}",
    } for i, r in enumerate(data, start=1)]


def _mark(on: bool | None, spend: float | None) -> str:
    """A row's place on a frontier: on it, dominated, its spend unknown, or none drawn ("-": no other row of its
    group has a known spend)."""
    if on is None:
        return "unknown" if spend is None else "-"
    return "on" if on else "dominated"


def render(data: Sequence[dict[str, Any]], fmt: str) -> str:
    if fmt == "csv":
        buf = io.StringIO()
        columns = ["group", "rank", "model", "campaign", "benchmark_revision", "task_set", "runs", "passed", "judged",
                   "pass_rate", "ci95_low", "ci95_high", "ci95_method", "tasks", "infra_errors", "total_cost_usd", "cost_per_pass_usd", "rescore_of",
                   "usd_per_task", "tokens_per_task", "tokens_per_pass", "reasoning_tokens", "cached_prompt_tokens",
                   "frontier_usd", "frontier_tokens"]
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in data:
            low, high = row["ci95"]
            flat = {**row, "ci95_low": low, "ci95_high": high, "task_set": " ".join(row["task_set"])}
            writer.writerow({k: "" if flat[k] is None else flat[k] for k in columns})
        return buf.getvalue()
    from ..campaign.summary import markdown_table

    parts = []
    several = len(groups(data)) > 1
    if several:
        parts.append("Campaigns over different task sets or benchmark revisions are ranked apart, each group with "
                     "its own frontier; no rank or frontier compares rows of different groups.\n\n")
    for members in groups(data):
        if several:
            parts.append(group_title(members) + "\n\n")
        parts.append(markdown_table(display_rows(members)))
        lines = frontier_lines(members)
        parts.append("\n" + "".join(f"- {line}\n" for line in lines) + ("\n" if several else ""))
    return "".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agentic-leaderboard",
        description="Rank models across pytest-agentic campaign folders: score, pass rate with its 95%% "
                    "interval clustered by task, total cost and cost per pass.")
    stored.add_paths_argument(parser)
    parser.add_argument("--format", choices=("md", "csv"), default="md", help="output format (default md)")
    parser.add_argument("--latest", action="store_true", help="keep only each model's newest campaign")
    parser.add_argument("--sort", choices=tuple(SORTS), default="pass_rate",
                        help="order of the rows: pass_rate (best first; default), usd or tokens (per task, "
                             "cheapest first)")
    args = parser.parse_args(argv)
    try:
        campaigns = list(stored.find(args.paths))
    except stored.CampaignFolderError as exc:
        print(f"agentic-leaderboard: {exc}", file=sys.stderr)
        return 2
    data = rows(campaigns, latest=args.latest, sort=args.sort)
    sys.stdout.write(render(data, args.format))
    if args.format == "md":
        shown = {r["campaign"] for r in data}
        sys.stdout.write("".join(line + "\n" for line in revisions.across([c for c in campaigns if c.id in shown])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
