"""How each model's concurrency limit moved during the session, gathered from every process.

Each process that runs items has its own limiter per model (``run.calls.limiter``); its news (limit
changes, rate-limited calls, seconds waited for a slot) rides to the controller on call
reports as plain dicts (``scheduler.pacing_news``). Here the controller merges them: per model,
the events of every process in time order (tagged with the xdist worker, None without xdist),
and the counts summed. Under xdist each worker adapts on its own: the endpoint sees the sum of
the workers' limits, so a quota is found per worker (each backs off when the endpoint refuses
any of them) and is shared between them by the refusals each meets.

What a worker's limiter does after its last call report is not seen (the plain process's is: the
controller drains it at the end). A resumed campaign records the resuming session's pacing.
"""

from __future__ import annotations

import time
from typing import Any

from .untrusted import code_span

#: The most events summary.md lists per model (campaign.json keeps them all).
SHOWN_EVENTS = 12


class PacingLog:
    def __init__(self, started: float | None = None) -> None:
        #: Wall-clock seconds at the session's start: event times are counted from here.
        self.started = time.time() if started is None else started
        self.models: dict[str, dict[str, Any]] = {}

    def add(self, news: dict[str, Any] | None) -> None:
        """Merge one report's news (``{"worker": id, "models": {name: {...}}}``); ill-formed news is ignored."""
        if not isinstance(news, dict) or not isinstance(news.get("models"), dict):
            return
        worker = news.get("worker") if isinstance(news.get("worker"), str) else None
        for name, item in news["models"].items():
            if not isinstance(item, dict):
                continue
            model = self.models.setdefault(str(name), {
                "mode": item.get("mode"), "start": item.get("start"), "cap": item.get("cap"),
                "events": [], "rate_limited": 0, "slot_wait_s": 0.0, "calls": 0, "limit": {}, "peak": {}})
            key = worker or "main"
            model["limit"][key] = _int(item.get("limit"))
            model["peak"][key] = max(model["peak"].get(key, 0), _int(item.get("peak")))
            for field in ("rate_limited", "calls"):
                model[field] += _int(item.get(field))
            model["slot_wait_s"] = round(model["slot_wait_s"] + _float(item.get("slot_wait_s")), 3)
            for event in item.get("events") or []:
                if isinstance(event, dict):
                    model["events"].append({"t": round(max(0.0, _float(event.get("t")) - self.started), 3),
                                            "worker": worker, "old": _int(event.get("old")),
                                            "new": _int(event.get("new")), "why": str(event.get("why", "")),
                                            "detail": str(event.get("detail", ""))})
            model["events"].sort(key=lambda e: (e["t"], e["worker"] or ""))

    def as_dict(self) -> dict[str, Any]:
        """What campaign.json records under ``pacing``; ``until_s``: the seconds from the session's start
        to this record (written at its end), so a chart of the limits spans the whole session."""
        until = round(max(0.0, time.time() - self.started), 3)
        return {name: {**model, "until_s": until} for name, model in sorted(self.models.items())}

    def section(self) -> tuple[str, str] | None:
        """summary.md's section: per model, the limit, its moves and the rate-limited calls."""
        if not self.models:
            return None
        from .summary import markdown_table

        rows, moves = [], []
        for name, m in sorted(self.models.items()):
            limits = sorted(m["limit"].values())
            rows.append({"model": code_span(name), "mode": m["mode"], "start": m["start"], "cap": m["cap"],
                         "limit at the end": ", ".join(map(str, limits)), "most in flight": max(m["peak"].values()),
                         "changes": sum(1 for e in m["events"] if e["why"] != "start"), "calls": m["calls"],
                         "rate-limited calls": m["rate_limited"], "waited for a slot": f"{m['slot_wait_s']:.1f} s"})
            changes = [e for e in m["events"] if e["why"] != "start"]
            for e in changes[:SHOWN_EVENTS]:
                moves.append({"model": code_span(name), "t": f"{e['t']:.1f} s", "worker": e["worker"] or "",
                              "from": e["old"], "to": e["new"], "why": e["why"], "detail": code_span(e["detail"])})
            if len(changes) > SHOWN_EVENTS:
                moves.append({"model": code_span(name), "t": "", "worker": "", "from": "", "to": "",
                              "why": f"... {len(changes) - SHOWN_EVENTS} more in campaign.json", "detail": ""})
        body = ("Calls in flight per model and process: adaptive for models reached over HTTP (slow start, then "
                "AIMD on rate-limit signals), fixed otherwise; under xdist each worker adapts on its own (one "
                "limit per worker). Rate-limited calls waited and were sent again; they are not retries.\n\n"
                + markdown_table(rows))
        if moves:
            body += "\n" + markdown_table(moves)
        return "Concurrency", body


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
