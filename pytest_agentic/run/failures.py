"""The failure classifier: one primary mode per failed run, tags for every run."""

from __future__ import annotations

from typing import Any

from .calls import refusals
from .answers import final_claim
from .records import FailureMode, RunResult
from .calls.textcalls import TAG

#: Modes in precedence order; the first that applies is the run's mode.
PRECEDENCE = tuple(FailureMode)


def classify(result: RunResult, passed: bool) -> FailureMode | None:
    """The primary failure mode of a run, or None when it passed.

    Precedence: the endpoint's faults first (never the model's), then calls to
    tools that do not exist or do not fit (or a final message that is a tool call
    written as text, or one the server refused to read), then repeated calls that made no
    progress, then runs that ended without a final answer (or with a final message that
    holds only reasoning); a run that gave an
    answer the checker rejected is ``wrong_answer``.

    A server's refusal that the model's output provoked (``run/calls/refusals.py``) is never the
    endpoint's fault: a tool call the server could not read counts as a malformed call; a
    conversation that outgrew the context window ended without an answer, so it is
    ``gave_up_mid_plan`` unless an earlier mode applies.
    """
    if passed:
        return None
    if result.infra_error is not None or result.stop_reason == "not_started":
        return FailureMode.INFRA_ERROR
    if (result.hallucinated_calls or result.tool_call_as_text is not None
            or refusals.is_malformed_call(result.server_refusal)):
        return FailureMode.TOOL_CALL_HALLUCINATED
    if result.redundant_calls:
        return FailureMode.TOOL_CALL_REDUNDANCY
    # No final message, or one that holds no answer: empty, or only the model's reasoning (a
    # ``<think>`` block it never closed: it stopped while still reasoning).
    if result.final_answer is None or not final_claim(result.final_answer):
        return FailureMode.GAVE_UP_MID_PLAN
    return FailureMode.WRONG_ANSWER


def tags(result: RunResult) -> dict[str, Any]:
    """Secondary tags, kept for every run whether it passed or not (the endpoint's oddities only when seen)."""
    oddities = {"usage_invalid": result.usage_invalid, "dropped_tool_calls": result.dropped_tool_calls,
                "truncated_tool_calls": result.truncated_tool_calls, "rate_limited": result.rate_limited,
                "rate_limit_wait_s": round(result.rate_limit_wait_s, 3)}
    return {
        **{k: v for k, v in oddities.items() if v},
        "hallucinated_calls": result.hallucinated_calls,
        "redundant_calls": result.redundant_calls,
        "tool_errors": sum(1 for c in result.tool_calls if not c["ok"]),
        "quick_fail": result.final_answer is not None and not result.tool_calls,
        "retries": result.retries,
        "stop_reason": result.stop_reason,
        TAG: result.tool_call_as_text is not None,
        **refusals.tags(result.server_refusal),
    }
