"""The agent loop: call the model, run the tools it asks for, stop at an answer or a limit."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator

from . import textcalls
from .limits import Limits
from .llm import InfraError, call_model
from .models import ModelEntry
from .records import RunResult, ToolCallLog
from .tools import Tool, ToolError, Workspace

SYSTEM_PROMPT = (
    "You are a software agent working in a project workspace. Use the tools offered to "
    "inspect and change files; paths are relative to the workspace. Work step by step. "
    "When you are done, reply with your final answer as plain text and no tool call."
)


def _message_dict(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": getattr(message, "content", None)}
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments or ""}}
            for c in calls
        ]
    return out


class ToolRunner:
    """Executes one run's tool calls and judges each: hallucinated, redundant, or fine."""

    def __init__(self, workspace: Workspace, tools: list[Tool], faults: Mapping[str, list[str]]) -> None:
        self.workspace = workspace
        self.tools = {t.name: t for t in tools}
        self.validators = {t.name: Draft202012Validator(dict(t.parameters)) for t in tools}
        self.faults = {name: list(msgs) for name, msgs in faults.items()}
        self.previous: tuple[str, str, str] | None = None
        self.seconds = 0.0

    def execute(self, turn: int, call_id: str, name: str, raw: str) -> ToolCallLog:
        start = time.monotonic()
        args: dict[str, Any] | None = None
        hallucinated: str | None = None
        if name not in self.tools:
            hallucinated = f"unknown tool {name!r}"
        else:
            try:
                parsed = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                hallucinated = f"arguments are not valid JSON: {exc.msg}"
            else:
                if not isinstance(parsed, dict):
                    hallucinated = "arguments are not a JSON object"
                else:
                    args = parsed
                    errors = sorted(self.validators[name].iter_errors(parsed), key=str)
                    if errors:
                        hallucinated = f"arguments do not fit the schema: {errors[0].message}"
        if hallucinated:
            ok, result = False, f"ERROR: {hallucinated}. Offered tools: {', '.join(self.tools)}."
        elif self.faults.get(name):
            ok, result = False, f"ERROR: {self.faults[name].pop(0)}"
        else:
            try:
                ok, result = True, self.tools[name].call(self.workspace, args or {})
            except ToolError as exc:
                ok, result = False, f"ERROR: {exc}"
        key = (name, _canonical(args, raw), result)
        redundant = key == self.previous
        self.previous = key
        duration = time.monotonic() - start
        self.seconds += duration
        return ToolCallLog(turn=turn, id=call_id, name=name, raw_arguments=raw, arguments=args, result=result,
                           ok=ok, hallucinated=hallucinated, redundant=redundant, duration_s=round(duration, 4))


def _canonical(args: dict[str, Any] | None, raw: str) -> str:
    return json.dumps(args, sort_keys=True) if args is not None else raw


def run_agent(
    *,
    entry: ModelEntry,
    api_base: str | None,
    prompt: str,
    system: str,
    workspace: Workspace,
    tools: list[Tool],
    limits: Limits,
    metadata: Mapping[str, Any],
    faults: Mapping[str, list[str]] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RunResult:
    """Drive the model on ``prompt`` until it answers or a limit stops it.

    ``should_stop`` is asked before each model call; when it says yes (the session is
    stopping: ``-x``, Ctrl-C) the run ends as ``cancelled``, a run that is never judged.
    """
    result = RunResult(workspace=workspace.root, cost_usd=0.0)
    system_text = SYSTEM_PROMPT + ("\n\n" + system if system else "")
    result.messages = [{"role": "system", "content": system_text}, {"role": "user", "content": prompt}]
    runner = ToolRunner(workspace, tools, faults or {})
    schemas = [t.schema() for t in tools]
    started = time.monotonic()
    retry_budget = [limits.max_retry_wait_s]
    result.stop_reason = "max_turns"
    for turn in range(1, limits.max_turns + 1):
        if time.monotonic() - started > limits.max_seconds:
            result.stop_reason = "max_seconds"
            break
        if should_stop is not None and should_stop():
            result.stop_reason = "cancelled"
            break
        try:
            outcome = call_model(entry, api_base=api_base, messages=result.messages, tools=schemas,
                                 metadata=metadata, limits=limits, retry_budget=retry_budget)
        except InfraError as exc:
            result.infra_error = str(exc)
            result.retries += exc.retries
            result.stop_reason = "infra_error"
            break
        result.turns = turn
        result.retries += outcome.retries
        usage = getattr(outcome.response, "usage", None)
        result.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
        result.completion_tokens += getattr(usage, "completion_tokens", 0) or 0
        if outcome.cost_usd is None or result.cost_usd is None:
            result.cost_usd = None
        else:
            result.cost_usd += outcome.cost_usd
        choice = outcome.response.choices[0]
        message = _message_dict(choice.message)
        result.messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            text = (message.get("content") or "").strip()
            if getattr(choice, "finish_reason", None) == "length":
                result.stop_reason = "truncated"
            elif not text:
                result.stop_reason = "empty_final"
            elif (written := textcalls.find(text, runner.tools)) is not None:
                # A tool call the endpoint did not parse: no answer, and not the model's answer to judge.
                result.tool_call_as_text = written
                result.stop_reason = "tool_call_as_text"
            else:
                result.final_answer = text
                result.stop_reason = "final_answer"
            break
        for call in calls:
            log = runner.execute(turn, call["id"], call["function"]["name"], call["function"]["arguments"])
            result.tool_calls.append(log)
            result.messages.append({"role": "tool", "tool_call_id": call["id"], "content": log["result"]})
        if result.prompt_tokens + result.completion_tokens > limits.max_tokens:
            result.stop_reason = "max_tokens"
            break
        if runner.seconds > limits.max_tool_seconds:
            result.stop_reason = "max_tool_seconds"
            break
    result.latency_s = round(time.monotonic() - started, 4)
    return result


__all__ = ["InfraError", "ToolRunner", "run_agent"]
