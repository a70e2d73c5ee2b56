"""The agent loop through litellm's real call path, with scripted models."""

from __future__ import annotations

import socket

from pytest_agentic.run.limits import Limits
from pytest_agentic.run.models import ModelEntry
from pytest_agentic.run.agent import run_agent
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode
from pytest_agentic.run.task import Final, TaskInstance, ToolCall
from pytest_agentic.run.tools import Workspace, get_tools

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


def test_a_tool_fault_with_a_path_answers_only_the_call_that_names_it(tmp_path):
    from pytest_agentic import ToolFault

    instance = TaskInstance(prompt="p", files={"old.txt": "o", "new/b.txt": "n"}, tools=("fs_read",),
                            tool_faults={"fs_read": [ToolFault("old.txt moved to new/b.txt", path="old.txt")]})
    other, old = ToolCall("fs_read", {"path": "new/b.txt"}), ToolCall("fs_read", {"path": "./old.txt"})
    run = play(instance, [other, old, old, Final("x")], tmp_path)
    results = [c["result"] for c in run.tool_calls]
    # the read of another file is run as usual; the fault waits for the call it answers, and fires once
    assert results == ["n", "ERROR: old.txt moved to new/b.txt", "o"]
    assert instance.content_hash() != TaskInstance(prompt="p", files=instance.files, tools=("fs_read",)).content_hash()


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
    assert f"(endpoint http://127.0.0.1:{port}/v1)" in run.infra_error  # which endpoint, named
    assert run.retries == 1
    assert classify(run, passed=False) is FailureMode.INFRA_ERROR


def _local(server, **limits):
    entry = ModelEntry(name="local", model="openai/oracle", price={"input_per_token": 0, "output_per_token": 0})
    return entry, Limits(retry_backoff_s=0.01, retry_backoff_cap_s=0.02, request_timeout_s=2).merged(limits, "test")


def _run_local(server, tmp_path, **limits):
    entry, lim = _local(server, **limits)
    return run_agent(entry=entry, api_base=server.api_base, prompt=INSTANCE.prompt, system="",
                     workspace=Workspace(tmp_path), tools=get_tools(["fs_read", "fs_list"]), limits=lim, metadata={})


def test_deterministic_errors_are_not_retried(tmp_path):
    from .fault_server import FaultServer

    with FaultServer({}, fault_rate=1.0, kinds=("401",)) as server:
        run = _run_local(server, tmp_path, max_retries=5)
    assert server.calls == 1
    assert run.retries == 0
    assert "AuthenticationError" in run.infra_error


def test_retries_stop_at_the_cap(tmp_path):
    from .fault_server import FaultServer

    with FaultServer({}, fault_rate=1.0, kinds=("429",)) as server:
        run = _run_local(server, tmp_path, max_retries=3)
    assert server.calls == 4
    assert run.retries == 3
    assert "RateLimitError" in run.infra_error and "gave up after 3 retries" in run.infra_error


def test_retry_wait_budget_caps_the_time_spent_waiting(tmp_path):
    from .fault_server import FaultServer

    with FaultServer({}, fault_rate=1.0, kinds=("503",)) as server:
        entry, limits = _local(server, max_retries=100, retry_backoff_s=0.2, retry_backoff_cap_s=0.2,
                               max_retry_wait_s=0.5)
        run = run_agent(entry=entry, api_base=server.api_base, prompt="p", system="", workspace=Workspace(tmp_path),
                        tools=[], limits=limits, metadata={})
    assert "retry wait budget" in run.infra_error
    assert run.retries < 100


def test_token_wall_clock_and_tool_time_limits(tmp_path):
    from .fault_server import FaultServer

    loop = [ToolCall("fs_list", {}), ToolCall("fs_read", {"path": "a.txt"})] * 20
    with FaultServer({INSTANCE.prompt: loop}) as server:  # each call reports 110 tokens
        (tmp_path / "a").mkdir()
        Workspace(tmp_path / "a").populate(INSTANCE.files)
        assert _run_local(server, tmp_path / "a", max_tokens=300).stop_reason == "max_tokens"
        assert _run_local(server, tmp_path / "a", max_seconds=0).stop_reason == "max_seconds"
        assert _run_local(server, tmp_path / "a", max_tool_seconds=0).stop_reason == "max_tool_seconds"
        run = _run_local(server, tmp_path / "a", max_tokens=300)
    assert run.final_answer is None and run.turns == 3
