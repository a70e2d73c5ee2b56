"""The failure classifier: one case per mode, and each precedence tie."""

from __future__ import annotations

import pytest

from pytest_agentic.run.failures import PRECEDENCE, classify, tags
from pytest_agentic.run.records import FailureMode, RunResult, ToolCallLog


def call(name: str = "fs_read", *, hallucinated: str | None = None, redundant: bool = False,
         ok: bool = True) -> ToolCallLog:
    return ToolCallLog(turn=1, id="c", name=name, raw_arguments="{}", arguments={}, result="x", ok=ok,
                       hallucinated=hallucinated, redundant=redundant, duration_s=0.0)


def result(*, answer: str | None = "done", infra: str | None = None, calls: list[ToolCallLog] | None = None,
           stop: str = "final_answer") -> RunResult:
    return RunResult(final_answer=answer, infra_error=infra, tool_calls=calls or [], stop_reason=stop)  # type: ignore[arg-type]


HALLUCINATED = call("rm_rf", hallucinated="unknown tool 'rm_rf'", ok=False)
REDUNDANT = call(redundant=True)


def test_passed_run_has_no_mode_even_with_bad_calls():
    assert classify(result(calls=[HALLUCINATED, REDUNDANT]), passed=True) is None


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (result(answer=None, infra="RateLimitError: 429", stop="infra_error"), FailureMode.INFRA_ERROR),
        (result(calls=[HALLUCINATED]), FailureMode.TOOL_CALL_HALLUCINATED),
        (result(calls=[call(), REDUNDANT]), FailureMode.TOOL_CALL_REDUNDANCY),
        (result(answer=None, stop="max_turns"), FailureMode.GAVE_UP_MID_PLAN),
        (result(answer=None, stop="empty_final"), FailureMode.GAVE_UP_MID_PLAN),
        (result(answer="42"), FailureMode.WRONG_ANSWER),
        (result(answer=None, stop="not_started"), FailureMode.INFRA_ERROR),
        # a final message that is only reasoning, never closed: the model stopped while thinking
        (result(answer="<think>The port is in config/v2 or maybe the .bak; let me"), FailureMode.GAVE_UP_MID_PLAN),
        (result(answer="<think>weighing 8589 and 9763</think>\n\n"), FailureMode.GAVE_UP_MID_PLAN),
        (result(answer="<think>weighing 8589 and 9763</think> 8589"), FailureMode.WRONG_ANSWER),
    ],
    ids=["infra", "hallucinated", "redundancy", "gave_up_turns", "gave_up_empty", "wrong_answer", "not_started",
         "gave_up_inside_reasoning", "gave_up_reasoning_only", "wrong_after_reasoning"],
)
def test_each_mode(run, expected):
    assert classify(run, passed=False) is expected


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # infra beats everything the model did before the endpoint failed
        (result(answer=None, infra="APIConnectionError", calls=[HALLUCINATED, REDUNDANT], stop="infra_error"),
         FailureMode.INFRA_ERROR),
        # hallucinated beats redundancy
        (result(calls=[HALLUCINATED, REDUNDANT]), FailureMode.TOOL_CALL_HALLUCINATED),
        # hallucinated beats gave up
        (result(answer=None, calls=[HALLUCINATED], stop="max_turns"), FailureMode.TOOL_CALL_HALLUCINATED),
        # redundancy beats gave up (a loop that ran into the turn limit)
        (result(answer=None, calls=[call(), REDUNDANT], stop="max_turns"), FailureMode.TOOL_CALL_REDUNDANCY),
        # redundancy beats wrong answer
        (result(answer="7", calls=[call(), REDUNDANT]), FailureMode.TOOL_CALL_REDUNDANCY),
        # gave up beats wrong answer: no answer means nothing to judge
        (result(answer=None, stop="truncated"), FailureMode.GAVE_UP_MID_PLAN),
    ],
    ids=["infra>all", "hallucinated>redundancy", "hallucinated>gave_up", "redundancy>gave_up",
         "redundancy>wrong", "gave_up>wrong"],
)
def test_precedence_ties(run, expected):
    assert classify(run, passed=False) is expected


def test_precedence_order_is_the_designed_one():
    assert [m.value for m in PRECEDENCE] == [
        "infra_error", "tool_call_hallucinated", "tool_call_redundancy", "gave_up_mid_plan", "wrong_answer"]


def test_tags_counted_on_passed_runs_too():
    t = tags(result(calls=[call(), HALLUCINATED, REDUNDANT, call(ok=False)]))
    assert t["hallucinated_calls"] == 1
    assert t["redundant_calls"] == 1
    assert t["tool_errors"] == 2
    assert t["quick_fail"] is False


def test_quick_fail_tag_is_answer_without_tool_calls():
    assert tags(result(answer="x"))["quick_fail"] is True
    assert tags(result(answer=None, stop="empty_final"))["quick_fail"] is False
