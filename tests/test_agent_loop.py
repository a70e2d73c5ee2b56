"""The agent loop through litellm's real call path, with scripted models."""

from __future__ import annotations

import socket

from pytest_agentic.limits import Limits
from pytest_agentic.models import ModelEntry
from pytest_agentic.agent import run_agent
from pytest_agentic.failures import classify
from pytest_agentic.records import FailureMode
from pytest_agentic.task import Final, TaskInstance, ToolCall
from pytest_agentic.tools import Workspace, get_tools

from .helpers import play

INSTANCE = TaskInstance(prompt="Read a.txt and tell me what it says.", files={"a.txt": "hello\n"},
                        tools=("fs_read", "fs_list"))


def test_tool_result_goes_back_and_answer_ends_the_run(tmp_path):
    run = play(INSTANCE, [ToolCall("fs_read", {"path": "a.txt"}), Final("It says hello.")], tmp_path)
    assert run.stop_reason == "final_answer"
    assert run.final_answer == "It says hello."
    assert run.turns == 2
    assert [m["role"] for m in run.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert run.messages[3]["content"] == "hello\n"
    assert run.tool_calls[0]["ok"] and not run.tool_calls[0]["hallucinated"]
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    assert run.cost_usd == 0.0


def test_unknown_tool_is_hallucinated_and_the_model_is_told(tmp_path):
    run = play(INSTANCE, [ToolCall("shell", {"cmd": "cat a.txt"}), Final("hello")], tmp_path)
    log = run.tool_calls[0]
    assert log["hallucinated"] == "unknown tool 'shell'"
    assert run.messages[3]["content"].startswith("ERROR: unknown tool 'shell'")
    assert classify(run, passed=False) is FailureMode.TOOL_CALL_HALLUCINATED


def test_arguments_that_do_not_parse_or_fit_are_hallucinated(tmp_path):
    run = play(INSTANCE, [ToolCall("fs_read", raw_arguments="{path: a.txt"),
                          ToolCall("fs_read", {"file": "a.txt"}), Final("hello")], tmp_path)
    assert "not valid JSON" in run.tool_calls[0]["hallucinated"]
    assert "schema" in run.tool_calls[1]["hallucinated"]
    assert run.hallucinated_calls == 2


def test_identical_consecutive_calls_without_progress_are_redundant(tmp_path):
    read = ToolCall("fs_read", {"path": "a.txt"})
    run = play(INSTANCE, [read, read, ToolCall("fs_list", {}), read, Final("hello")], tmp_path)
    assert [c["redundant"] for c in run.tool_calls] == [False, True, False, False]
    assert classify(run, passed=False) is FailureMode.TOOL_CALL_REDUNDANCY


def test_turn_limit_ends_the_run_without_an_answer(tmp_path):
    script = [ToolCall("fs_list", {}), ToolCall("fs_read", {"path": "a.txt"})] * 5
    run = play(INSTANCE, script, tmp_path, limits=Limits(max_turns=3))
    assert run.stop_reason == "max_turns"
    assert run.turns == 3
    assert run.final_answer is None
    assert classify(run, passed=False) is FailureMode.GAVE_UP_MID_PLAN


def test_end_of_script_is_an_empty_final_message(tmp_path):
    run = play(INSTANCE, [ToolCall("fs_read", {"path": "a.txt"})], tmp_path)
    assert run.stop_reason == "empty_final"
    assert run.final_answer is None


def test_tool_fault_is_returned_as_an_observation(tmp_path):
    instance = TaskInstance(prompt="p", files={"a.txt": "x"}, tools=("fs_read",),
                            tool_faults={"fs_read": ["disk busy; try again"]})
    read = ToolCall("fs_read", {"path": "a.txt"})
    run = play(instance, [read, read, Final("x")], tmp_path)
    assert run.tool_calls[0]["result"] == "ERROR: disk busy; try again"
    assert run.tool_calls[1]["result"] == "x"
    assert not run.tool_calls[1]["redundant"], "a call whose result changed made progress"


def test_endpoint_that_refuses_connections_is_infra_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connections are refused
        entry = ModelEntry(name="down", model="openai/whatever", price={"input_per_token": 0, "output_per_token": 0})
        ws = Workspace(tmp_path)
        run = run_agent(entry=entry, api_base=f"http://127.0.0.1:{port}/v1", prompt="hi", system="",
                        workspace=ws, tools=get_tools(["fs_read"]), limits=Limits(max_retries=1, max_retry_wait_s=5),
                        metadata={})
    assert run.stop_reason == "infra_error"
    assert "Connection error" in run.infra_error
    assert run.retries == 1
    assert classify(run, passed=False) is FailureMode.INFRA_ERROR
