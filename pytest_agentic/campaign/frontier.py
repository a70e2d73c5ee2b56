"""The accuracy / cost and accuracy / tokens frontier of a campaign's models and variants.

Each model is a point: its pass rate over every task (with the task-clustered 95% interval) against
what one run costs on average, in dollars and in tokens (one run is one attempt at one task, so
"per run" is "per task"). A point is **on the frontier** when no other point passes at least as
often for no more spend, better in one of the two; otherwise it is **dominated**, by the points
that do. A point whose spend is unknown (unpriced runs, no usage reported) is not placed.

The frontier reads point estimates. Whether a dominating model's higher pass rate is beyond noise
is a separate question: the sentences say so when the two intervals overlap, and the paired
comparison of variants (``campaign/sweep.py``) answers it on the shared task instances.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..run.records import RunRecord
from . import economy
from .stats import percent

#: The spend axes a frontier is drawn against.
Axis = Literal["usd", "tokens"]
AXES: dict[str, str] = {"usd": "$ per task", "tokens": "tokens per task"}


@dataclass
class Point:
    """One model (or variant) on the plane."""

    model: str
    rate: float | None
    low: float | None
    high: float | None
    #: Mean spend per run (None: unknown).
    usd: float | None
    tokens: float | None
    #: Per axis: whether the point is on that frontier (None: not placed), and who dominates it.
    on: dict[str, bool | None] = field(default_factory=dict)
    dominated_by: dict[str, list[str]] = field(default_factory=dict)

    def spend(self, axis: str) -> float | None:
        return self.usd if axis == "usd" else self.tokens


def points(records: Sequence[RunRecord]) -> list[Point]:
    """Every model of the campaign, placed on both frontiers."""
    out = [Point(model=m, rate=r["pass_rate"], low=r["ci95_low"], high=r["ci95_high"], usd=r["usd_per_run"],
                 tokens=r["tokens_per_run"]) for m, r in economy.overall(records).items()]
    for axis in AXES:
        place(out, axis)
    return out


def _dominates(a: Point, b: Point, axis: str) -> bool:
    sa, sb = a.spend(axis), b.spend(axis)
    assert a.rate is not None and b.rate is not None and sa is not None and sb is not None
    return a.rate >= b.rate and sa <= sb and (a.rate > b.rate or sa < sb)


def place(pts: Sequence[Point], axis: str) -> None:
    """Mark each point on or off the ``axis`` frontier (Pareto: higher pass rate, lower spend)."""
    placed = [p for p in pts if p.rate is not None and p.spend(axis) is not None]
    for p in pts:
        if p not in placed:
            p.on[axis], p.dominated_by[axis] = None, []
            continue
        by = [q.model for q in placed if q is not p and _dominates(q, p, axis)]
        p.on[axis], p.dominated_by[axis] = not by, by


pct = percent


def spend_text(p: Point, axis: str) -> str:
    value = p.spend(axis)
    if value is None:
        return "unknown"
    return f"${value:.6f}" if axis == "usd" else f"{value:.0f} tokens"


def sentences(pts: Sequence[Point], axis: str) -> list[str]:
    """The frontier of ``axis`` in words: who is on it, who is dominated and by whom, who is not placed;
    nothing for a single model or variant (a frontier compares two or more)."""
    if len(pts) < 2:
        return []  # one model or variant: there is nothing to compare it with, so nothing to say
    placed = [p for p in pts if p.on.get(axis) is not None]
    if len(placed) < 2:
        return [f"Against {AXES[axis]}: fewer than two models with a known spend; no frontier to draw."]
    by_name = {p.model: p for p in pts}
    on = sorted((p for p in placed if p.on[axis]), key=lambda p: p.spend(axis) or 0.0)
    lines = [f"Against {AXES[axis]}, on the frontier (cheapest first): "
             + "; ".join(f"{p.model} ({pct(p.rate)} at {spend_text(p, axis)})" for p in on) + "."]
    for p in sorted(placed, key=lambda p: p.model):
        if p.on[axis]:
            continue
        best = max((by_name[m] for m in p.dominated_by[axis]), key=lambda q: (q.rate or 0.0, -(q.spend(axis) or 0.0)))
        text = (f"{p.model} is dominated by {', '.join(p.dominated_by[axis])}: {best.model} passes "
                f"{pct(best.rate)} (vs {pct(p.rate)}) at {spend_text(best, axis)} (vs {spend_text(p, axis)})")
        if best.rate == p.rate:
            text += "; the same pass rate for less"
        elif best.low is not None and p.high is not None and best.low <= p.high:
            text += "; the pass rates' 95% intervals overlap, so its edge in passes may be noise"
        lines.append(text + ".")
    unplaced = [p.model for p in pts if p.on.get(axis) is None]
    if unplaced:
        lines.append(f"Not placed (spend unknown): {', '.join(unplaced)}.")
    return lines


def mark(on: bool | None) -> str:
    """A point's place on one frontier, in a word."""
    return "unknown" if on is None else "on" if on else "dominated"


def as_dicts(pts: Sequence[Point]) -> list[dict[str, Any]]:
    return [{"model": p.model, "pass_rate": p.rate, "ci95_low": p.low, "ci95_high": p.high, "usd_per_task": p.usd,
             "tokens_per_task": p.tokens, "on_frontier": dict(p.on), "dominated_by": dict(p.dominated_by)}
            for p in pts]


__all__ = ["AXES", "Point", "as_dicts", "mark", "place", "points", "sentences", "spend_text"]
