"""A campaign's progress while it runs: runs judged and in flight, passes, spend, time left.

The controller feeds it from the runs' reports (each judged run's record, each budget skip,
how many runs each process has in flight) and reads one line of text from it; drawing that
line is the terminal's business (``pytest_agentic.terminal``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..run.records import FailureMode


def clock(seconds: float) -> str:
    """``seconds`` as ``M:SS`` or ``H:MM:SS``."""
    s = max(0, int(seconds))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def _tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


@dataclass
class Progress:
    """Counts of this session's agent runs; ``selected`` is what the session set out to run."""

    selected: int = 0
    judged: int = 0
    passed: int = 0
    infra_errors: int = 0
    #: Agent runs skipped (a spent budget, a skip marker): done, not judged.
    skipped: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    #: Judged runs whose cost no price list knows (the dollars shown are then a lower bound).
    unpriced: int = 0
    #: Runs in flight, by process ("main", or an xdist worker's id).
    in_flight_by: dict[str, int] = field(default_factory=dict)
    started_at: float = field(default_factory=time.monotonic)
    #: When the first run began (the pace, and so the estimate, is measured from there).
    first_run_at: float | None = None

    def begin(self, now: float | None = None) -> None:
        """A run began (its setup report arrived)."""
        if self.first_run_at is None:
            self.first_run_at = time.monotonic() if now is None else now

    def judge(self, record: Mapping[str, Any]) -> None:
        """Count one judged run from its record (a re-run after an infra error counts again)."""
        self.judged += 1
        self.passed += bool(record.get("passed"))
        self.infra_errors += record.get("failure_mode") == FailureMode.INFRA_ERROR.value
        self.tokens += int(record.get("prompt_tokens") or 0) + int(record.get("completion_tokens") or 0)
        cost = record.get("cost_usd")
        if cost is None:
            self.unpriced += 1
        else:
            self.cost_usd += float(cost)

    @property
    def in_flight(self) -> int:
        return sum(self.in_flight_by.values())

    @property
    def done(self) -> int:
        return self.judged + self.skipped

    def eta_s(self, now: float) -> float | None:
        """Seconds left at the pace so far, or None before the first run is judged."""
        if not self.done or not self.selected:
            return None
        left = max(0, self.selected - self.done)
        since = self.started_at if self.first_run_at is None else self.first_run_at
        return left * (now - since) / self.done

    def line(self, now: float | None = None) -> str:
        """The status as one line of plain ASCII text (no model-written text is in it)."""
        now = time.monotonic() if now is None else now
        total = f"/{self.selected}" if self.selected else ""
        counts = [f"agentic: {self.judged}{total} judged", f"{self.in_flight} in flight", f"{self.passed} passed"]
        if self.infra_errors:
            counts.append(f"{self.infra_errors} infra")
        if self.skipped:
            counts.append(f"{self.skipped} skipped")
        eta = self.eta_s(now)
        timing = f"{clock(now - self.started_at)}, " + ("? left" if eta is None else f"~{clock(eta)} left")
        spend = f"{_tokens(self.tokens)} tok, ${self.cost_usd:.4f}" + ("+?" if self.unpriced else "")
        return " | ".join([", ".join(counts), spend, timing])
