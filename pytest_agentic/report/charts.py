"""The charts' geometry: where each bar, whisker, run mark and label goes (drawn by ``charts.html.j2``).

Hand-built rather than drawn with matplotlib: the charts are bars with interval whiskers, a
stacked bar and a scatter, a few shapes each; as SVG written by the template they are a few
kilobytes, take their colours from the page's stylesheet (light and dark), keep their text as
text, and link every bar and run mark to its transcript. matplotlib measured 0.45-0.6 s to
import (a quarter of the page's 2 s budget) and writes ~17 kB and inline ``style`` attributes
per chart, which a strict Content-Security-Policy refuses. See benchmarks/report.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .transcript import RunView

LABEL_W = 280  # the task labels, left of the plot
PLOT_W = 360  # 0..100 %
GAP = 14
MARK = 11  # one run mark (square side)
BAR_H = 14


@dataclass
class Bar:
    series: int
    label: str
    y: float
    width: float
    low: float | None
    high: float | None
    text: str
    title: str
    href: str


@dataclass
class Mark:
    x: float
    y: float
    outcome: str
    href: str
    title: str


@dataclass
class TaskChart:
    width: float
    height: float
    plot_x: float
    plot_w: float
    ticks: list[tuple[float, str]]
    groups: list[dict[str, Any]]
    bars: list[Bar]
    marks: list[Mark]


def _x(rate: float | None) -> float:
    return LABEL_W + PLOT_W * (rate or 0.0)


def task_chart(series: Sequence[Any], rows: Sequence[dict[str, Any]], runs: Sequence[RunView],
               tasks: Sequence[dict[str, str]]) -> TaskChart:
    """Per task, one bar per series: pass rate over judged runs with its 95% interval; then each run as a mark.

    ``series`` have ``key``, ``model``, ``campaign`` and ``index``; ``rows`` are pass_rate_by_task rows
    with a ``series`` key added; ``runs`` the run views with their ``series`` key.
    """
    by_row = {(r["series"], r["task"]): r for r in rows}
    by_runs: dict[tuple[str, str], list[RunView]] = {}
    for run in runs:
        by_runs.setdefault((run.series, run.task), []).append(run)
    max_runs = max((len(v) for v in by_runs.values()), default=1)
    marks_x = LABEL_W + PLOT_W + 28
    width = marks_x + max_runs * (MARK + 3) + 10
    bars, marks, groups = [], [], []
    y = 24.0
    for task in tasks:
        top = y
        for s in series:
            row = by_row.get((s.key, task["id"]))
            task_runs = sorted(by_runs.get((s.key, task["id"]), []), key=lambda r: r.run)
            if row is None:
                continue
            rate = row["pass_rate"]
            first = next((r for r in task_runs if not r.passed), task_runs[0] if task_runs else None)
            score = f"{row['passed']}/{row['judged']}"
            interval = ("" if rate is None else
                        f", 95% interval {row['ci95_low']:.0%}-{row['ci95_high']:.0%}")
            bars.append(Bar(series=s.index, label=s.label, y=y, width=PLOT_W * (rate or 0.0),
                            low=None if rate is None else _x(row["ci95_low"]),
                            high=None if rate is None else _x(row["ci95_high"]), text=score,
                            title=f"{task['id']} {s.label}: {score} passed{interval}"
                                  + (f", {row['infra_errors']} infra errors" if row["infra_errors"] else ""),
                            href=f"#{first.id}" if first else ""))
            for i, run in enumerate(task_runs):
                marks.append(Mark(x=marks_x + i * (MARK + 3), y=y + (BAR_H - MARK) / 2, outcome=run.outcome,
                                  href=f"#{run.id}",
                                  title=f"{task['id']} run {run.run} {s.label}: {run.outcome}"))
            y += BAR_H + 3
        groups.append({"id": task["id"], "name": task["name"], "y": top, "mid": (top + y - 3) / 2,
                       "bottom": y - 3})
        y += GAP
    ticks = [(_x(t / 100), f"{t}%") for t in (0, 25, 50, 75, 100)]
    return TaskChart(width=width, height=y + 4, plot_x=LABEL_W, plot_w=PLOT_W, ticks=ticks, groups=groups,
                     bars=bars, marks=marks)


@dataclass
class ModeChart:
    width: float
    height: float
    rows: list[dict[str, Any]]


def mode_chart(series: Sequence[Any], modes: Sequence[dict[str, Any]]) -> ModeChart:
    """Per series a bar of its runs: passed, then each failure mode, widths in proportion to the counts."""
    label_w, plot_w = 250, 420
    by_key = {m["series"]: m for m in modes}
    rows, y = [], 8.0
    for s in series:
        m = by_key.get(s.key)
        if m is None:
            continue
        total = m["total"] or 1
        x = float(label_w)
        segments = []
        for outcome, count in [("passed", m["passed"]), *m["counts"]]:
            if not count:
                continue
            w = plot_w * count / total
            segments.append({"x": x, "w": w, "outcome": outcome, "count": count,
                             "title": f"{s.label}: {count} of {m['total']} runs {outcome.replace('_', ' ')}"})
            x += w
        rows.append({"label": s.label, "series": s.index, "y": y, "segments": segments,
                     "total": m["total"], "end": x})
        y += 26
    return ModeChart(width=label_w + plot_w + 70, height=y + 4, rows=rows)


@dataclass
class Plot:
    """A chart with axes: its size, the plot area and the ticks."""

    width: float
    height: float
    plot: tuple[float, float, float, float]  # x, y, w, h
    xticks: list[tuple[float, str]]
    yticks: list[tuple[float, str]]


@dataclass
class Scatter(Plot):
    points: list[dict[str, Any]] = field(default_factory=list)
    log: bool = False
    unpriced: list[str] = field(default_factory=list)
    #: What the x axis counts ("$ per task", "tokens per task"), and the frontier as a polyline.
    x_title: str = "cost per run"
    frontier: str = ""
    axis: str = "usd"


def _nice(value: float, money: bool = True) -> str:
    if not money:
        return f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:.2g}"
    if value == 0:
        return "$0"
    digits = max(0, -int(math.floor(math.log10(abs(value)))) + 1)
    return f"${value:.{min(digits, 8)}f}"


def scatter(points: Sequence[dict[str, Any]], axis: str = "usd", x_title: str = "cost per run") -> Scatter | None:
    """Spend per run (one attempt at one task) against pass rate (with its interval), one point per series,
    the Pareto frontier joined by a line; None when it would say nothing.

    ``points``: label, series (index), cost (spend per run on this axis, None when unknown), rate, low,
    high, href, and ``on`` (on the frontier of this axis: ``campaign/frontier.py``).
    """
    money = axis == "usd"
    priced = [p for p in points if p["cost"] is not None and p["rate"] is not None]
    unpriced = [p["label"] for p in points if p["cost"] is None]
    if len(priced) < 2 or max(p["cost"] for p in priced) <= 0:
        return None  # fewer than two placed points, or all free: the chart would say nothing
    px, py, pw, ph = 70.0, 14.0, 520.0, 240.0
    costs = [p["cost"] for p in priced]
    lo, hi = min(costs), max(costs)
    log = lo > 0 and hi / lo > 30
    if log:
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        b = b if b > a else a + 1

        def fx(c: float) -> float:
            return px + pw * (math.log10(c) - a) / (b - a)

        xticks = [(fx(10.0 ** e), _nice(10.0 ** e, money)) for e in range(a, b + 1)]
    else:
        top = hi * 1.1 if hi > 0 else 1.0

        def fx(c: float) -> float:
            return px + pw * c / top

        xticks = [(fx(top * i / 4), _nice(top * i / 4, money)) for i in range(5)]

    def fy(rate: float) -> float:
        return py + ph * (1 - rate)

    out = []
    for p in priced:
        out.append({**p, "x": fx(p["cost"]), "y": fy(p["rate"]), "y_low": fy(p["low"]), "y_high": fy(p["high"]),
                    "shown": _nice(p["cost"], money) if money else f"{p['cost']:,.0f} tokens"})
    _dodge(out)
    on = sorted((p for p in out if p.get("on")), key=lambda p: (p["x"], -p["y"]))
    frontier = " ".join(f"{p['x']:.1f},{p['y']:.1f}" for p in on) if len(on) > 1 else ""
    yticks = [(fy(t / 100), f"{t}%") for t in (0, 25, 50, 75, 100)]
    return Scatter(width=px + pw + 200, height=py + ph + 44, plot=(px, py, pw, ph), points=out, xticks=xticks,
                   yticks=yticks, log=log, unpriced=unpriced, x_title=x_title, frontier=frontier, axis=axis)


def _dodge(points: list[dict[str, Any]]) -> None:
    """Each point's ``label_y``: beside its dot, moved down a line at a time while it would overwrite a
    label already placed (points close in spend and pass rate, such as the variants of one entry)."""
    placed: list[tuple[float, float, float]] = []
    for p in sorted(points, key=lambda p: (p["y"], p["x"])):
        x0 = p["x"] + 12
        x1 = x0 + 6.6 * min(len(p["label"]) + (0 if p.get("on") else 12), 42)
        y = p["y"] + 4
        for _ in range(12):
            if not any(abs(y - py) < 13 and x0 < px1 and px0 < x1 for px0, px1, py in placed):
                break
            y += 14
        placed.append((x0, x1, y))
        p["label_y"] = y


@dataclass
class PacingChart(Plot):
    lines: list[dict[str, Any]] = field(default_factory=list)


def pacing_chart(pacing: dict[str, Any]) -> PacingChart | None:
    """Each model's concurrency limit over the session (one step line per model and xdist worker),
    a dot at each rate-limit cut, from the start to the session's end (``until_s``; older folders:
    a little past the last change); None when no limit was recorded (``campaign.json``'s ``pacing``)."""
    steps: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for model, m in sorted(pacing.items()):
        for e in m.get("events") or []:
            steps.setdefault((model, e.get("worker") or ""), []).append(e)
    if not steps:
        return None
    px, py, pw, ph = 50.0, 12.0, 560.0, 180.0
    # The whole session, not just up to the last change: a limit that settled early held until the end.
    last = max(e["t"] for events in steps.values() for e in events)
    until = max([float(m["until_s"]) for m in pacing.values() if isinstance(m.get("until_s"), (int, float))],
                default=0.0)
    end = max(until, last * 1.05, last + 1.0)
    top = max(max(e["new"] for e in events) for events in steps.values())
    top = max(top * 1.1, top + 1)

    def fx(t: float) -> float:
        return px + pw * t / end

    def fy(limit: float) -> float:
        return py + ph * (1 - limit / top)

    lines = []
    for i, ((model, worker), events) in enumerate(sorted(steps.items())):
        points, cuts, level = [], [], None
        for e in events:
            if level is not None:
                points.append((fx(e["t"]), fy(level)))
            points.append((fx(e["t"]), fy(e["new"])))
            level = e["new"]
            if e["why"] == "rate limited":
                cuts.append({"x": fx(e["t"]), "y": fy(e["new"]),
                             "title": f"{e['t']:.1f} s: rate limited, {e['old']} to {e['new']} ({e['detail']})"})
        points.append((fx(end), fy(level or 0)))
        label = model + (f" ({worker})" if worker else "")
        lines.append({"label": label, "series": i, "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in points),
                      "cuts": cuts, "end": fy(level or 0)})
    yticks = [(fy(v), str(v)) for v in sorted({0, *(round(top * k / 4) for k in range(1, 4))})]
    xticks = [(fx(end * k / 4), f"{end * k / 4:.0f} s") for k in range(5)]
    return PacingChart(width=px + pw + 200, height=py + ph + 40, plot=(px, py, pw, ph), lines=lines,
                       xticks=xticks, yticks=yticks)
