"""Hostile endpoints, one behaviour at a time, through the real litellm path and agent loop.

Each test points a run at ``tests/hostile_server.py`` (``openai/<name>`` + ``api_base``) and
checks the run's failure mode and what it kept: the endpoint's protocol faults are
``infra_error`` (retried where transient, within bounded time), a well-formed reply whose content
is the model's fault gets a model-level mode, and nothing the endpoint sends crashes or hangs the
run or leaves unbounded or unencodable text in it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace

import pytest

from pytest_agentic.campaign.budget import Ledger
from pytest_agentic.campaign.untrusted import printable
from pytest_agentic.run.agent import MAX_CALLS_PER_MESSAGE, MAX_TEXT_CHARS, run_agent
from pytest_agentic.run.failures import classify, tags
from pytest_agentic.run.limits import Limits
from pytest_agentic.run.models import ModelEntry
from pytest_agentic.run.records import FailureMode, RunResult
from pytest_agentic.run.tools import Workspace, get_tools

from .hostile_server import HostileServer

ENTRY = ModelEntry(name="hostile", model="openai/hostile",
                   price={"input_per_token": 0.000001, "output_per_token": 0.000001})
#: Short retries; a call's timeout long enough for a loaded machine to parse a 40 MB reply.
LIMITS = Limits(max_retries=2, retry_backoff_s=0.01, retry_backoff_cap_s=0.05, request_timeout_s=8,
                max_retry_wait_s=10, max_turns=4, max_seconds=60)
#: For the endpoints that never finish a reply: given up after 0.5 s + the harness's grace of 1 s.
STUCK = replace(LIMITS, request_timeout_s=0.5)
SLOW = {"drip", "silent"}


@pytest.fixture(scope="module", autouse=True)
def warm(tmp_path_factory):
    """One clean call first: litellm's first call in a process sets up its client (seconds under load)."""
    run(tmp_path_factory.mktemp("warm"), [])


def run(tmp_path, script, then="ok", limits=LIMITS) -> tuple[RunResult, HostileServer, float]:
    """One run of "Say ok." against an endpoint playing ``script``, then ``then``."""
    os.symlink("/etc", tmp_path / "link")
    with HostileServer(script, then=then) as server:
        started = time.monotonic()
        result = run_agent(entry=ENTRY, api_base=server.api_base, prompt="Say ok.", system="",
                           workspace=Workspace(tmp_path), tools=get_tools(["fs_list", "fs_read", "fs_write"]),
                           limits=limits, metadata={})
        return result, server, time.monotonic() - started


def mode(result: RunResult) -> FailureMode | None:
    return classify(result, result.final_answer == "ok")


def storable(result: RunResult) -> None:
    """What the run keeps encodes as UTF-8 JSON (a transcript) and as text."""
    text = json.dumps({"messages": result.messages, "calls": [dict(c) for c in result.tool_calls]},
                      ensure_ascii=False)
    text.encode("utf-8")


PROTOCOL_FAULTS = ["not_json", "truncated_json", "html", "empty_body", "no_choices", "empty_choices",
                   "message_null", "content_list", "content_number", "usage_text", "content_bad_utf8",
                   "reset", "silent", "drip", "500", "429_absurd"]


@pytest.mark.parametrize("behaviour", PROTOCOL_FAULTS)
def test_a_protocol_fault_once_is_retried_and_changes_no_outcome(tmp_path, behaviour):
    result, server, _ = run(tmp_path, [behaviour], limits=STUCK if behaviour in SLOW else LIMITS)
    assert result.final_answer == "ok", result.infra_error
    assert mode(result) is None
    assert result.retries == 1 and server.calls == 2


@pytest.mark.parametrize("behaviour", ["empty_choices", "drip", "silent", "not_json", "429_absurd"])
def test_a_protocol_fault_that_persists_is_infra_error_in_bounded_time(tmp_path, behaviour):
    limits = STUCK if behaviour in SLOW else LIMITS
    result, server, seconds = run(tmp_path, [], then=behaviour, limits=limits)
    assert mode(result) is FailureMode.INFRA_ERROR
    assert "gave up after 2 retries" in result.infra_error
    assert server.calls == 3
    assert seconds < 3 * (limits.request_timeout_s + 1.0) + 2  # three calls, each given up in time


@pytest.mark.parametrize("behaviour", ["401", "403", "error_200", "redirect_away"])
def test_a_refusal_is_infra_error_at_once(tmp_path, behaviour):
    result, server, _ = run(tmp_path, [], then=behaviour)
    assert mode(result) is FailureMode.INFRA_ERROR
    assert server.calls == 1 and result.retries == 0


@pytest.mark.parametrize("behaviour", ["args_not_json", "args_array", "args_number", "args_huge", "name_unknown",
                                       "name_empty", "name_ansi", "type_not_function"])
def test_a_bad_tool_call_is_the_models_fault(tmp_path, behaviour):
    result, _, _ = run(tmp_path, [behaviour])
    assert result.final_answer == "ok" and result.hallucinated_calls == 1
    assert classify(result, passed=False) is FailureMode.TOOL_CALL_HALLUCINATED
    call = result.tool_calls[0]
    assert not call["ok"] and len(call["raw_arguments"]) <= MAX_TEXT_CHARS + 100
    assert len(call["result"]) < 2000  # the error quotes the call, bounded
    storable(result)


@pytest.mark.parametrize("behaviour", ["duplicate_ids", "missing_id"])
def test_tool_call_ids_are_made_unique_and_each_answered_once(tmp_path, behaviour):
    result, server, _ = run(tmp_path, [behaviour])
    assert result.final_answer == "ok"
    ids = [c["id"] for c in result.messages[2]["tool_calls"]]
    assert all(ids) and len(set(ids)) == len(ids)
    answered = [m["tool_call_id"] for m in server.bodies[1]["messages"] if m["role"] == "tool"]
    assert answered == ids


def test_hundreds_of_calls_in_one_message_are_capped(tmp_path):
    result, server, _ = run(tmp_path, ["many_calls"])
    assert result.final_answer == "ok"
    assert len(result.tool_calls) == MAX_CALLS_PER_MESSAGE
    assert result.dropped_tool_calls == 400 - MAX_CALLS_PER_MESSAGE
    assert tags(result)["dropped_tool_calls"] == 400 - MAX_CALLS_PER_MESSAGE
    sent = server.bodies[1]["messages"]
    assert len(sent[2]["tool_calls"]) == sum(1 for m in sent if m["role"] == "tool") == MAX_CALLS_PER_MESSAGE


def test_path_traversal_is_refused_inside_the_workspace(tmp_path):
    result, _, _ = run(tmp_path, ["path_traversal"])
    assert result.final_answer == "ok"
    assert [c["ok"] for c in result.tool_calls] == [False] * 4
    assert not any(c["hallucinated"] for c in result.tool_calls)  # well-formed calls the tools refuse
    assert all("root:" not in c["result"] for c in result.tool_calls)
    assert not (tmp_path.parent / "escape.txt").exists()


def test_enormous_content_is_cut_and_judged(tmp_path):
    result, _, _ = run(tmp_path, ["content_huge"])
    assert result.final_answer is not None and len(result.final_answer) < MAX_TEXT_CHARS + 100
    assert result.final_answer.endswith("more characters]")
    assert mode(result) is FailureMode.WRONG_ANSWER


@pytest.mark.parametrize("behaviour", ["content_nul", "content_surrogate", "content_ansi", "content_markup",
                                       "content_fake_pass"])
def test_hostile_content_is_an_answer_to_judge_and_stays_encodable(tmp_path, behaviour):
    result, _, _ = run(tmp_path, [behaviour])
    assert result.stop_reason == "final_answer"
    assert mode(result) is FailureMode.WRONG_ANSWER  # "PASSED" in the text passes nothing
    storable(result)
    shown = printable(result.final_answer)
    assert "\x1b" not in shown and "\x00" not in shown
    shown.encode("utf-8")


@pytest.mark.parametrize("behaviour", ["usage_negative", "usage_absurd"])
def test_unbelievable_usage_is_not_counted(tmp_path, behaviour):
    result, _, _ = run(tmp_path, [behaviour])
    assert result.final_answer == "ok"
    assert result.prompt_tokens == result.completion_tokens == 0
    assert result.cost_usd is None  # unknown, neither negative nor trillions
    assert tags(result)["usage_invalid"] == 1


def test_missing_usage_counts_nothing(tmp_path):
    result, _, _ = run(tmp_path, ["usage_missing"])
    assert (result.final_answer, result.prompt_tokens, result.cost_usd) == ("ok", 0, 0.0)
    assert "usage_invalid" not in tags(result)


def test_an_unknown_finish_reason_is_a_plain_answer(tmp_path):
    result, _, _ = run(tmp_path, ["unknown_finish"])
    assert result.final_answer == "ok"


def test_finish_reason_length_without_text_gave_up(tmp_path):
    result, _, _ = run(tmp_path, ["length_empty"])
    assert result.stop_reason == "truncated" and mode(result) is FailureMode.GAVE_UP_MID_PLAN


def test_a_redirect_within_the_endpoint_is_followed(tmp_path):
    result, _, _ = run(tmp_path, ["redirect"])
    assert result.final_answer == "ok"


def test_the_budget_ledger_takes_no_refund(tmp_path):
    budget = Ledger(tmp_path / "ledger.txt")
    budget.add(0.5)
    budget.add(-1000.0)
    budget.add(float("nan"))
    budget.add(None)
    assert budget.spent() == pytest.approx(0.5)


def test_printable_escapes_controls_and_keeps_lines():
    text = printable("a\x1b[31mb\tc\nd\x00\r\ud800\u202e")
    assert text == "a\\x1b[31mb\tc\nd\\x00\\x0d\\ud800\\u202e"
    text.encode("utf-8")
