"""Per-run limits: defaults, overridden by the task, then by the model entry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Limits:
    #: Assistant turns (model calls) per run.
    max_turns: int = 20
    #: Prompt plus completion tokens per run, summed over its calls.
    max_tokens: int = 200_000
    #: Wall-clock seconds per run (model calls and tools together).
    max_seconds: float = 600.0
    #: Seconds one tool call (e.g. a test run) may take.
    tool_timeout_s: float = 60.0
    #: Seconds all tool calls of a run may take together.
    max_tool_seconds: float = 300.0
    #: Retries of one model call on transient endpoint faults.
    max_retries: int = 4
    #: Seconds a run may spend waiting between retries, in all.
    max_retry_wait_s: float = 120.0
    #: First backoff step in seconds; it doubles per retry (with full jitter) up to the cap.
    retry_backoff_s: float = 1.0
    #: Longest single wait between retries, in seconds.
    retry_backoff_cap_s: float = 30.0
    #: Seconds before one model call times out.
    request_timeout_s: float = 300.0
    #: Seconds one model call may wait on rate-limit refusals in all (``Retry-After`` honoured up
    #: to 60 s each) before the run is ``infra_error``: five minutes see a per-minute quota reset
    #: five times, and bound what a dead quota costs a campaign.
    max_rate_limit_wait_s: float = 300.0

    def merged(self, overrides: Mapping[str, Any], where: str) -> Limits:
        """A copy with ``overrides`` applied; unknown keys or bad values raise ValueError naming ``where``."""
        known = {f.name: f.type for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            if key not in known:
                raise ValueError(f"{where}: unknown limit {key!r}; known limits: {', '.join(sorted(known))}")
            kind = int if known[key] == "int" else float
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{where}: limit {key!r} must be a non-negative number, got {value!r}")
            changes[key] = kind(value)
        return replace(self, **changes)


LIMIT_NAMES = tuple(f.name for f in fields(Limits))
