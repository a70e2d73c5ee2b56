"""Render report.html: one self-contained page (inline CSS, JS and SVG; no request leaves it).

Jinja2 with autoescape on for the whole page: everything a model or a tool wrote reaches the
template as plain strings and is escaped there; control characters are then written as visible
escapes (``campaign.untrusted.printable``). The page's own stylesheet and script are package
data, inlined, and allowed by their SHA-256 in the page's Content-Security-Policy (nothing else
runs, nothing is fetched).
"""

from __future__ import annotations

import functools
import base64
import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .._version import __version__
from ..campaign import frontier, stored
from ..campaign.untrusted import printable
from ..run.records import Transcript
from . import charts, views
from .verdictview import VerdictView, from_session, from_stored
from ..campaign.stats import percent

#: The report's file name in a campaign folder.
REPORT_NAME = "report.html"

#: Outcome colours' legend order: passed, then the failure modes by precedence.
OUTCOMES = ["passed", *views.MODES]


@dataclass
class Source:
    """One campaign to show: its folder read back, and the live session's verdicts when there are."""

    campaign: stored.StoredCampaign
    verdicts: Any = None


def _asset(name: str) -> str:
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    """The page's Jinja2 environment, made once a process: it keeps the compiled template (``warm``)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_agentic.report", "templates"),
        autoescape=True,  # every template, whatever its name: all text is escaped unless marked safe here
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = percent
    env.filters["usd"] = lambda x: "-" if x is None else f"${x:.6f}" if x < 1 else f"${x:,.2f}"
    env.filters["num"] = lambda x: f"{x:.2f}"
    env.filters["k"] = lambda values: " ".join("-" if v is None else f"{v:.2f}" for v in values)
    env.filters["human"] = lambda s: str(s).replace("_", " ")
    env.filters["known"] = lambda x: "unknown" if x is None else x
    return env


def warm() -> None:
    """Compile the page's templates now, the ones it imports too (the controller calls it on a thread while
    the runs are in flight)."""
    env = _environment()
    for name in env.list_templates(extensions=["j2"]):
        env.get_template(name)


def _transcripts(campaign: stored.StoredCampaign) -> dict[tuple[str, str, int], Transcript]:
    out: dict[tuple[str, str, int], Transcript] = {}
    for r in campaign.records:
        try:
            out[(r["model"], r["task"], r["run"])] = campaign.transcript(r)
        except (stored.CampaignFolderError, KeyError):
            continue  # shown as missing, and listed in the page's errors
    return out


def campaign_view(source: Source, *, index: int, several: bool) -> views.CampaignView:
    c = source.campaign
    verdicts: VerdictView
    if source.verdicts is not None:
        verdicts = from_session(source.verdicts, c.records, c.manifest)
    else:
        verdicts = from_stored(c.path, c.manifest, c.records)
    return views.build(c.id, c.manifest, c.records, _transcripts(c),
                       prefix=f"c{index + 1}-" if several else "", label_with_campaign=several, verdicts=verdicts)


def _leaderboard(campaigns: Sequence[views.CampaignView]) -> list[dict[str, Any]]:
    """Every (campaign, model) of the page, best pass rate first, then cheapest per pass."""
    rows = []
    for c in campaigns:
        for h, s in zip(c.headline, c.series):
            rows.append({**h, "campaign": c.id, "label": s.label, "series": s.index, "anchor": c.anchor,
                         "finished_at": c.manifest.get("finished_at") or ""})
    rows.sort(key=lambda r: (-(r["pass_rate"] if r["pass_rate"] is not None else -1.0),
                             r["cost_per_pass"] if r["cost_per_pass"] is not None else float("inf"),
                             r["model"], r["campaign"]))
    return rows


def _frontiers(points: list[dict[str, Any]]) -> list[charts.Scatter]:
    """The page's frontier charts: pass rate against $ per task and against tokens per task, every model
    of the page placed on the Pareto frontier (``campaign/frontier.py``); a chart that would say nothing
    (fewer than two placed points, all free) is left out."""
    if len(points) < 2:
        return []
    out = []
    for axis, title in frontier.AXES.items():
        pts = [frontier.Point(model=str(i), rate=p["rate"], low=p["low"], high=p["high"], usd=p["usd"],
                              tokens=p["tokens"]) for i, p in enumerate(points)]
        frontier.place(pts, axis)
        chart = charts.scatter([{**p, "cost": p[axis], "on": q.on[axis]} for p, q in zip(points, pts)], axis, title)
        if chart is not None:
            out.append(chart)
    return out


def page(sources: Sequence[Source], title: str | None = None) -> str:
    """The HTML of one page showing ``sources`` (one campaign, or several side by side)."""
    several = len(sources) > 1
    campaigns = [campaign_view(s, index=i, several=several) for i, s in enumerate(sources)]
    series = [s for c in campaigns for s in c.series]
    for i, s in enumerate(series):
        s.index = i
    by_key = {s.key: s for s in series}
    rows, runs, modes, points = [], [], [], []
    tasks: dict[str, dict[str, Any]] = {}
    for c in campaigns:
        keys = {s.model: s.key for s in c.series}
        for r in c.task_rows:
            rows.append({**r, "series": keys[r["model"]]})
        for run in c.runs:
            run.series = keys[run.model]
            runs.append(run)
        for m in c.modes:
            modes.append({**m, "series": keys[m["model"]]})
        for h in c.headline:
            s = by_key[keys[h["model"]]]
            first = next((r for r in c.runs if r.model == h["model"]), None)
            e = h["economy"]
            points.append({"label": s.label, "series": s.index, "usd": e["usd_per_run"], "tokens": e["tokens_per_run"],
                           "rate": h["pass_rate"], "low": h["ci95_low"], "high": h["ci95_high"],
                           "href": f"#{c.anchor}" if several else (f"#{first.id}" if first else "")})
        for t in c.tasks:
            tasks.setdefault(t["id"], t)
    task_list = [tasks[t] for t in sorted(tasks)]
    css, js = _asset("report.css"), _asset("report.js")
    csp = (f"default-src 'none'; style-src {_sha256(css)}; script-src {_sha256(js)}; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    from markupsafe import Markup

    context = {
        "title": title or (campaigns[0].id if not several else f"{len(campaigns)} campaigns"),
        "several": several, "campaigns": campaigns, "series": series, "outcomes": OUTCOMES,
        "task_chart": charts.task_chart(series, rows, runs, task_list),
        "mode_chart": charts.mode_chart(series, modes),
        "frontiers": _frontiers(points),
        "one_point": len(points) < 2,  # one model on the page: its spend, but no frontier to draw
        "pacing": [(c, chart) for c in campaigns
                   if (chart := charts.pacing_chart(c.manifest.get("pacing") or {})) is not None],
        "leaderboard": _leaderboard(campaigns) if several else [],
        "csp": csp,
        # The page's own assets (package data, not model text): inlined as they are.
        "css": Markup(css), "js": Markup(js),
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "version": __version__,
    }
    # Autoescape leaves control characters and lone surrogates (stored transcripts may hold
    # them): written as visible escapes, they cannot act on a viewer and the page encodes.
    return printable(_environment().get_template("report.html.j2").render(**context))


def write(sources: Sequence[Source], path: Path, title: str | None = None) -> Path:
    """Write the page for ``sources`` at ``path`` (atomically: a reader never sees half a page)."""
    html = page(sources, title)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)
    return path


def write_campaign(folder: Path, verdicts: Any = None) -> Path:
    """``report.html`` in the campaign folder, from what the folder holds (and the live verdicts)."""
    return write([Source(stored.load(folder), verdicts)], Path(folder) / REPORT_NAME)
