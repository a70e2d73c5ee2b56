"""The token economy of a campaign: what its runs spent, per pass, per task and model (pure functions).

A run's record carries what its provider reported (``run/records.py``): prompt, completion,
reasoning and cached prompt tokens, tokens per turn, turns and seconds to the final answer, dollars.
Here they are gathered per model and task (and per model over every task, ``ALL``):

- sums over the runs; a count that no run of the group reported (reasoning, cached) is None,
  shown as "unknown", never 0; when only some runs reported it, the sum is over those and the
  count of runs without it says so;
- **per pass**: the spend of every run (passed or not, infra errors apart) divided by the passes:
  what one passing run costs when failures are paid for too. Its 95% interval comes from the pass
  rate's (per task: Wilson; ALL: clustered by task, ``campaign/clustered.py``): per pass = per run
  / pass rate, so the interval is per run / high .. per run / low (the spend per run taken as
  measured; the pass rate is the noisy part). None when nothing passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..run.records import RunRecord
from . import tables

Row = dict[str, Any]


def _sum_known(runs: Sequence[RunRecord], key: str) -> tuple[int | None, int]:
    """(sum over the runs that reported ``key``, or None when none did; runs that did not)."""
    known = [v for r in runs if isinstance(v := r.get(key), int)]
    return (sum(known) if known else None), len(runs) - len(known)


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _r(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def _per_pass(per_run: float | None, rate: float | None, low: float | None, high: float | None,
              digits: int) -> tuple[float | None, float | None, float | None]:
    """(per pass, 95% low, 95% high) from a per-run spend and the pass rate with its interval."""
    if per_run is None or not rate:
        return None, None, None
    lo = per_run / high if high else None
    hi = per_run / low if low else None  # a lower bound of 0 passes: no upper bound
    return _r(per_run / rate, digits), _r(lo, digits), _r(hi, digits)


def _row(runs: Sequence[RunRecord], rate_row: Row) -> Row:
    judged = tables._judged(runs)
    n = len(judged)
    tokens = [r["prompt_tokens"] + r["completion_tokens"] for r in judged]
    priced = [r["cost_usd"] for r in judged if r["cost_usd"] is not None]
    reasoning, reasoning_missing = _sum_known(judged, "reasoning_tokens")
    cached, cached_missing = _sum_known(judged, "cached_prompt_tokens")
    prompt = sum(r["prompt_tokens"] for r in judged)
    per_turn_max = [int(v) for r in judged if (v := r.get("tokens_per_turn_max")) is not None]
    rate, low, high = rate_row["pass_rate"], rate_row["ci95_low"], rate_row["ci95_high"]
    tokens_run = sum(tokens) / n if n else None
    cost_run = sum(priced) / n if n and len(priced) == n else None  # any unpriced run: unknown
    seconds_run = sum(r["latency_s"] for r in judged) / n if n else None
    tok_pass, tok_low, tok_high = _per_pass(tokens_run, rate, low, high, 1)
    usd_pass, usd_low, usd_high = _per_pass(cost_run, rate, low, high, 8)
    s_pass, s_low, s_high = _per_pass(seconds_run, rate, low, high, 2)
    return {
        "judged": n, "passed": rate_row["passed"], "pass_rate": rate, "ci95_low": low, "ci95_high": high,
        "prompt_tokens": prompt, "completion_tokens": sum(r["completion_tokens"] for r in judged),
        "reasoning_tokens": reasoning, "runs_without_reasoning_count": reasoning_missing,
        "cached_prompt_tokens": cached, "runs_without_cache_count": cached_missing,
        "cached_share": _r(cached / prompt, 4) if cached is not None and prompt else None,
        "tokens_per_turn_mean": _r(_mean([r.get("tokens_per_turn_mean") for r in judged]), 1),
        "tokens_per_turn_max": max(per_turn_max) if per_turn_max else None,
        "turns_to_answer_mean": _r(_mean([r.get("turns_to_answer") for r in judged]), 2),
        "seconds_to_answer_mean": _r(_mean([r.get("seconds_to_answer") for r in judged]), 3),
        "tokens_per_run": _r(tokens_run, 1), "usd_per_run": _r(cost_run, 8), "seconds_per_run": _r(seconds_run, 3),
        "tokens_per_pass": tok_pass, "tokens_per_pass_ci95_low": tok_low, "tokens_per_pass_ci95_high": tok_high,
        "usd_per_pass": usd_pass, "usd_per_pass_ci95_low": usd_low, "usd_per_pass_ci95_high": usd_high,
        "seconds_per_pass": s_pass, "seconds_per_pass_ci95_low": s_low, "seconds_per_pass_ci95_high": s_high,
    }


def token_economy(records: Sequence[RunRecord]) -> list[Row]:
    """token_economy.csv: per model and task, then per model over every task (``ALL``). Infra errors apart."""
    rates = {(r["model"], r["task"]): r for r in tables.pass_rate_by_task(records, 1)}
    rows = []
    for (model, task), runs in tables._group(records, "model", "task").items():
        rows.append({"model": model, "task": task, **_row(runs, rates[(model, task)])})
    for (model,), runs in tables._group(records, "model").items():
        rows.append({"model": model, "task": "ALL", **_row(runs, rates[(model, "ALL")])})
    return rows


def overall(records: Sequence[RunRecord]) -> dict[str, Row]:
    """Each model's ``ALL`` row."""
    return {r["model"]: r for r in token_economy(records) if r["task"] == "ALL"}


# -- for people ------------------------------------------------------------------------------------

def count(value: int | None, missing: int = 0) -> str:
    """A token count as shown: "unknown" when no run reported it; '>=' when some runs did not."""
    if value is None:
        return "unknown"
    return f">= {value} ({missing} runs unreported)" if missing else str(value)


def _interval(value: float | None, low: float | None, high: float | None, fmt: str) -> str:
    if value is None:
        return "-"
    text = fmt.format(value)
    if low is not None:
        text += f" ({fmt.format(low)}-{fmt.format(high) if high is not None else 'inf'})"
    return text


def economy_rows(records: Sequence[RunRecord], overall_only: bool = False) -> list[Row]:
    """The token economy for summary.md and the terminal: per pass with 95% intervals."""
    out = []
    for r in token_economy(records):
        if overall_only and r["task"] != "ALL":
            continue
        cost_known = r["usd_per_run"] is not None
        out.append({
            "model": r["model"], "task": r["task"], "score": f"{r['passed']}/{r['judged']}",
            "tokens/pass (95% CI)": _interval(r["tokens_per_pass"], r["tokens_per_pass_ci95_low"],
                                              r["tokens_per_pass_ci95_high"], "{:.0f}"),
            "$/pass (95% CI)": (_interval(r["usd_per_pass"], r["usd_per_pass_ci95_low"], r["usd_per_pass_ci95_high"],
                                          "${:.6f}") if cost_known else "unknown"),
            "reasoning tok": count(r["reasoning_tokens"], r["runs_without_reasoning_count"]),
            "cached prompt tok": count(r["cached_prompt_tokens"], r["runs_without_cache_count"]),
            "tok/turn mean/max": ("-" if r["tokens_per_turn_mean"] is None
                                  else f"{r['tokens_per_turn_mean']:.0f}/{r['tokens_per_turn_max']}"),
            # The measured times last (they differ from one session to the next).
            "s/pass (95% CI)": _interval(r["seconds_per_pass"], r["seconds_per_pass_ci95_low"],
                                         r["seconds_per_pass_ci95_high"], "{:.1f}"),
            "turns/s to answer": ("-" if r["turns_to_answer_mean"] is None
                                  else f"{r['turns_to_answer_mean']:.1f}/{r['seconds_to_answer_mean']:.1f}"),
        })
    return out


__all__ = ["count", "economy_rows", "overall", "token_economy"]
