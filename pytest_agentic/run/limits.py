"""Per-run limits: defaults, overridden by the task, then by the model entry."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Seconds past ``tool_timeout_s`` after which a tool call that has not returned is abandoned.
TOOL_GRACE_S = 5.0
#: Seconds past ``max_seconds`` after which a run that has not ended is abandoned (``max_seconds``).
RUN_GRACE_S = 10.0


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


class Deadline(Generic[T]):
    """``fn`` run on a daemon thread and waited on for ``seconds`` at most, from outside it.

    What does not return in time is abandoned: its thread is left to end on its own (a daemon, so it
    never holds the process at exit) and the caller goes on. This is how a limit binds code that may
    block where no check of the clock runs: a tool opening a pipe, a run stuck in a call.
    """

    def __init__(self, fn: Callable[[], T], name: str) -> None:
        self._fn = fn
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        # The thread runs in a copy of the caller's context: a pooled run's turn (``run.calls.turns``) goes with it.
        self._thread = threading.Thread(target=contextvars.copy_context().run, args=(self._run,), name=name,
                                        daemon=True)

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # handed to the waiter
            self._error = exc
        finally:
            self._done.set()

    def wait(self, seconds: float, poll: Callable[[], None] | None = None) -> tuple[bool, T | None]:
        """(True, value) when ``fn`` returned in time (its exception is raised here), else (False, None).

        ``poll`` is called about ten times a second while waiting (the scheduler tops up its runs).
        """
        if not self._thread.is_alive() and not self._done.is_set():
            self._thread.start()
        end = _now() + seconds
        while not self._done.wait(min(0.1, max(end - _now(), 0.0)) if poll else max(end - _now(), 0.0)):
            if _now() >= end:
                return False, None
            if poll is not None:
                poll()
        if self._error is not None:
            raise self._error
        return True, self._value


def _now() -> float:
    import time

    return time.monotonic()
