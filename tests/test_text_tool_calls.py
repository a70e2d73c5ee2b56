"""A tool call written as text is a malformed tool call (tool_call_hallucinated, tag tool_call_as_text), not an answer."""

from __future__ import annotations

import json
import shutil

import pytest

from pytest_agentic import Final
from pytest_agentic.run.failures import classify, tags
from pytest_agentic.run.records import FailureMode
from pytest_agentic.run.calls.textcalls import TAG, find

from .fault_server import FaultServer
from .helpers import ROOT, campaign_dir, play, runs
from .test_tasks_proven import MODULES, load, task_of

OFFERED = ("fs_read", "fs_list", "fs_write", "fs_edit", "run_tests", "sql_query")


def _json_form(tool: str, args: dict) -> str:
    return json.dumps({"name": tool, "arguments": args})


def _tagged_form(tool: str, args: dict) -> str:
    return f"<tool_call>\n{json.dumps({'name': tool, 'arguments': args})}\n</tool_call>"


FORMS = {"json": _json_form, "tool_call_tags": _tagged_form}


@pytest.mark.parametrize("text", [
    '{"name": "fs_read", "arguments": {"path": "README.md"}}',
    '  {"name": "fs_read", "parameters": {"path": "a.py"}}\n',
    '```json\n{"name": "run_tests", "arguments": {}}\n```',
    'I will read the log first.\n```json\n{"tool": "fs_read", "args": {"path": "logs/x.log"}}\n```',
    'Let me look.\n{"name": "fs_list", "arguments": {"path": "."}}',
    '[{"name": "fs_read", "arguments": {"path": "a"}}, {"name": "fs_read", "arguments": {"path": "b"}}]',
    '{"type": "function", "function": {"name": "fs_read", "arguments": "{\\"path\\": \\"a\\"}"}}',
    '{"fs_read": {"path": "config/x.yaml"}}',
    '<tool_call>\n{"name": "fs_read", "arguments": {"path": "data/prices.csv"}}\n</tool_call>',
    'Reading it now. <tool_call>{"name": "fs_list", "arguments": {}}',
    '<|tool_call|>{"name": "fs_edit", "arguments": {"path": "a", "old_text": "x", "new_text": "y"}}<|/tool_call|>',
    '[TOOL_CALLS][{"name": "fs_read", "arguments": {"path": "a"}}]',
    '<|python_tag|>{"name": "sql_query", "parameters": {"database": "a.db", "query": "SELECT 1"}}',
    '<tool_call>\n<function=fs_read>\n<parameter=path>\nschema.sql\n</parameter>\n</function>\n</tool_call>',
    '<function=run_tests>\n<parameter=path>\n.\n</parameter>\n</function>',
    '<function_calls>{"name": "functions.fs_read", "arguments": {"path": "x"}}</function_calls>',
])
def test_tool_calls_written_as_text_are_found(text):
    assert find(text, OFFERED) is not None


@pytest.mark.parametrize("text", [
    "The profile service listens on port 9763.",
    "I can't compute a 10-day SMA: the file has only 6 closes.",
    "Fixed `to_cents` in ledger/money.py:\n```python\nreturn round(float(amount) * 100)\n```",
    'The failing query is q-1a2b: `SELECT {"a": 1}` is not valid.',
    '{"name": "delete_everything", "arguments": {}}',  # not an offered tool: a wrong answer, not a text call
    '{"port": 9763}',
    "## Summary\n- **name**: fs_read\n- arguments: path",
    "I used fs_read with the path config/v2/profile.yaml and found port 9763.",
    "",
])
def test_answers_are_not_tool_calls(text):
    assert find(text, OFFERED) is None


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem.replace("test_", ""))
def test_every_task_classifies_a_text_tool_call_as_hallucinated(module, form, tmp_path):
    instance = task_of(load(module)).build(0)
    tool = instance.tools[0]
    args = {"path": "."} if tool in ("fs_list", "run_tests") else {"path": "README.md", "content": "x"}
    run = play(instance, [Final(FORMS[form](tool, args))], tmp_path / "ws")
    assert run.stop_reason == "tool_call_as_text" and run.final_answer is None
    assert run.tool_call_as_text and tool in run.tool_call_as_text
    assert classify(run, passed=False) is FailureMode.TOOL_CALL_HALLUCINATED
    assert tags(run)[TAG] is True


def test_a_real_answer_is_not_tagged(tmp_path):
    instance = task_of(load(MODULES[0])).build(0)
    run = play(instance, instance.reference, tmp_path / "ws")
    assert run.stop_reason == "final_answer" and tags(run)[TAG] is False


@pytest.fixture
def project(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    return pytester


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_campaign_says_the_server_is_the_likely_cause(project, form):
    """Through the real HTTP path: an endpoint whose parser leaves tool calls in the text, on every task."""
    solutions = {}
    for module in MODULES:
        instance = task_of(load(module)).build(0)
        solutions[instance.prompt] = [Final(FORMS[form](instance.tools[0], {"path": "."}))]
    with FaultServer(solutions) as server:
        entry = {"model": "openai/wrong-parser", "api_base": server.api_base, "price": {
            "input_per_token": 0, "output_per_token": 0}}
        (project.path / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": entry}}))
        result = project.runpytest_subprocess("tasks", "--runs", "1", "--agentic-out", "out")
    result.assert_outcomes(failed=len(MODULES))
    folder = campaign_dir(project.path / "out")
    records = runs(folder)
    assert {r["task"] for r in records} == {f"task_{n:02d}" for n in range(1, 11)}
    assert all(r["failure_mode"] == "tool_call_hallucinated" and r["tags"][TAG] for r in records)
    summary = (folder / "summary.md").read_text()
    assert "tool call written as text" in summary and "--tool-call-parser" in summary
    result.stdout.fnmatch_lines(["*10 of 10 runs ended with a tool call written as text*--tool-call-parser*"])
