"""The agent loop: call the model, run the tools it asks for, stop at an answer or a limit."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import replace
from collections.abc import Callable, Mapping
from typing import Any

from .calls import history, textcalls
from .limits import RUN_GRACE_S, TOOL_GRACE_S, Deadline, Limits
from .calls.llm import InfraError, call_model
from .models import ModelEntry
from .records import Message, MessageToolCall, Reasoning, RunResult, ToolCallLog
from .calls.refusals import ModelRefusal
from .tools import Tool, ToolError, Workspace

SYSTEM_PROMPT = (
    "You are a software agent working in a project workspace. Use the tools offered to "
    "inspect and change files; paths are relative to the workspace. Work step by step. "
    "When you are done, reply with your final answer as plain text and no tool call."
)


#: Characters of one message's text (or of one tool call's arguments) the run keeps; the rest is
#: cut, and the cut is said. An endpoint may send tens of megabytes; a run's history, transcript
#: and report must not hold them all.
MAX_TEXT_CHARS = 1 << 20
#: Tool calls of one assistant message that are run; the rest are dropped from the history
#: (and counted), so one message cannot make a run do thousands of calls.
MAX_CALLS_PER_MESSAGE = 64
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def _text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """Endpoint-given text as the run keeps it: lone surrogates replaced (so it encodes), bounded."""
    text = _SURROGATES.sub("\ufffd", value if isinstance(value, str) else "")
    if len(text) > limit:
        text = text[:limit] + f"\n[... cut by the harness: {len(text) - limit} more characters]"
    return text


def _message_dict(message: Any, turn: int) -> tuple[Message, list[str], int]:
    """The assistant message as the run keeps it, each call's type, and how many calls were dropped.

    Tool call ids are made unique and non-empty (an endpoint may repeat or omit them; each
    tool result must answer exactly one call). The history says ``function`` for every call (what
    the next request may carry); the type the endpoint gave is returned apart, to be judged.
    """
    content = getattr(message, "content", None)
    out: Message = {"role": "assistant", "content": _text(content) if isinstance(content, str) else None}
    out.update(reasoning_of(message))
    calls = list(getattr(message, "tool_calls", None) or [])
    kept: list[MessageToolCall] = []
    kinds: list[str] = []
    seen: set[str] = set()
    for index, c in enumerate(calls[:MAX_CALLS_PER_MESSAGE], start=1):
        function = getattr(c, "function", None)
        call_id = _text(getattr(c, "id", None), 200)
        if not call_id or call_id in seen:
            call_id = f"call_{turn}_{index}"
        seen.add(call_id)
        raw = getattr(function, "arguments", None)
        entry: MessageToolCall = {"id": call_id, "type": "function",
                                  "function": {"name": _text(getattr(function, "name", None), 200),
                                               "arguments": _text(raw if isinstance(raw, str) else "", MAX_TEXT_CHARS)}}
        kind = getattr(c, "type", None) or "function"
        kinds.append(_text(kind, 200) if isinstance(kind, str) else type(kind).__name__)
        kept.append(entry)
    if kept:
        out["tool_calls"] = kept
    return out, kinds, len(calls) - len(kept)


def reasoning_of(message: Any) -> Reasoning:
    """The model's reasoning as the run keeps it, apart from its content (never read as the answer).

    ``reasoning_content``: the text litellm gives for an OpenAI-style ``reasoning_content`` (vLLM,
    DeepSeek, llama.cpp) and for Anthropic and Bedrock thinking blocks. ``thinking_blocks``: those
    blocks as the provider sent them, signatures included; the next request carries them back
    (``run.calls.history``), as Anthropic requires of a conversation with tool calls while thinking.
    """
    out: Reasoning = {}
    reasoning = getattr(message, "reasoning_content", None)
    if isinstance(reasoning, str) and reasoning:
        out["reasoning_content"] = _text(reasoning)
    blocks = getattr(message, "thinking_blocks", None)
    if isinstance(blocks, list) and blocks:
        kept = []
        for block in blocks[:MAX_CALLS_PER_MESSAGE]:
            block = dict(block) if isinstance(block, dict) else getattr(block, "model_dump", lambda: None)()
            if isinstance(block, dict):
                kept.append({k: _text(v) if isinstance(v, str) else v for k, v in block.items()
                             if isinstance(v, (str, int, float, bool)) or v is None})
        if kept:
            out["thinking_blocks"] = kept
    return out


class ToolRunner:
    """Executes one run's tool calls and judges each: hallucinated, redundant, or fine."""

    def __init__(self, workspace: Workspace, tools: list[Tool], faults: Mapping[str, list[Any]]) -> None:
        self.workspace = workspace
        self.tools = {t.name: t for t in tools}
        from jsonschema import Draft202012Validator  # here, not at plugin import (a tenth of a second)

        self.validators = {t.name: Draft202012Validator(dict(t.parameters)) for t in tools}
        self.faults = {name: list(msgs) for name, msgs in faults.items()}
        self.previous: tuple[str, str, str] | None = None
        self.seconds = 0.0

    def _fault(self, name: str, args: Mapping[str, Any]) -> str | None:
        """The injected error that answers this call, taken off the tool's list; None when there is none."""
        pending = self.faults.get(name)
        if not pending:
            return None
        answers = getattr(pending[0], "answers", None)  # a ToolFault answers only the call it names
        if answers is not None and not answers(args):
            return None
        fault = pending.pop(0)
        return str(getattr(fault, "message", fault))

    def execute(self, turn: int, call_id: str, name: str, raw: str, kind: str = "function") -> ToolCallLog:
        start = time.monotonic()
        args: dict[str, Any] | None = None
        hallucinated: str | None = None
        if name not in self.tools:
            hallucinated = f"unknown tool {name[:80]!r}"
        elif kind != "function":
            hallucinated = f"tool call type {kind[:40]!r} is not 'function'"
        elif len(raw) >= MAX_TEXT_CHARS:
            hallucinated = f"arguments are longer than {MAX_TEXT_CHARS} characters"
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
        elif (fault := self._fault(name, args or {})) is not None:
            ok, result = False, f"ERROR: {fault}"
        else:
            ok, result = self._call(name, args or {})
        key = (name, _canonical(args, raw), result)
        redundant = key == self.previous
        self.previous = key
        duration = time.monotonic() - start
        self.seconds += duration
        return ToolCallLog(turn=turn, id=call_id, name=name, raw_arguments=raw, arguments=args, result=result,
                           ok=ok, hallucinated=hallucinated, redundant=redundant, duration_s=round(duration, 4))


    def _call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        """The tool's answer, or an error when it did not return by its timeout (plus a grace): the
        call is abandoned, from outside, whatever it is blocked on (``limits.Deadline``)."""
        tool, timeout = self.tools[name], self.workspace.tool_timeout + TOOL_GRACE_S
        try:
            returned, value = Deadline(lambda: tool.call(self.workspace, args), f"agentic-tool-{name}").wait(timeout)
        except ToolError as exc:
            return False, f"ERROR: {exc}"
        if not returned:
            return False, (f"ERROR: {name} did not return within {timeout:g}s and was abandoned by the harness "
                           "(the tool's time limit)")
        return True, str(value)


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
    faults: Mapping[str, list[Any]] | None = None,
    should_stop: Callable[[], bool] | None = None,
    into: RunResult | None = None,
    on_tool_call: Callable[[ToolCallLog, int, int], None] | None = None,
) -> RunResult:
    """Drive the model on ``prompt`` until it answers or a limit stops it.

    ``should_stop`` is asked before each model call; when it says yes (the session is
    stopping: ``-x``, Ctrl-C) the run ends as ``cancelled``, a run that is never judged.
    The result is filled in ``into`` as the run goes (``run_bounded`` reads it when it abandons the run).
    ``on_tool_call`` hears each tool call once it is done, with its start and end (``time.time_ns()``):
    how a trace shows it (``telemetry.traces``).
    """
    result = into if into is not None else RunResult(workspace=workspace.root, cost_usd=0.0)
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
            outcome = call_model(entry, api_base=api_base, messages=history.sendable(result.messages),
                                 tools=schemas, metadata=metadata, limits=limits, retry_budget=retry_budget)
        except ModelRefusal as exc:  # judged as the model's failure (run/failures.py)
            result.server_refusal = exc.as_dict()
            result.retries += exc.retries
            result.stop_reason = "server_refusal"
            break
        except InfraError as exc:
            result.infra_error = str(exc)
            result.retries += exc.retries
            result.rate_limited += exc.rate_limited
            result.stop_reason = "infra_error"
            break
        result.turns = turn
        result.retries += outcome.retries
        result.rate_limited += outcome.rate_limited
        result.rate_limit_wait_s += outcome.rate_limit_wait_s
        result.prompt_tokens += outcome.prompt_tokens
        result.completion_tokens += outcome.completion_tokens
        result.usage_invalid += outcome.usage_invalid
        result.turn_tokens.append(outcome.prompt_tokens + outcome.completion_tokens)
        if outcome.reasoning_tokens is not None:
            result.reasoning_tokens = (result.reasoning_tokens or 0) + outcome.reasoning_tokens
        if outcome.cached_prompt_tokens is not None:
            result.cached_prompt_tokens = (result.cached_prompt_tokens or 0) + outcome.cached_prompt_tokens
        if outcome.cost_usd is None or result.cost_usd is None:
            result.cost_usd = None
        else:
            result.cost_usd += outcome.cost_usd
        choice = outcome.response.choices[0]
        message, kinds, dropped = _message_dict(choice.message, turn)
        result.dropped_tool_calls += dropped
        result.messages.append(message)
        calls = message.get("tool_calls") or []
        if calls and getattr(choice, "finish_reason", None) == "length":
            result.truncated_tool_calls += len(calls)
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
                result.seconds_to_answer = time.monotonic() - started
            break
        for call, kind in zip(calls, kinds):
            if runner.seconds > limits.max_tool_seconds:
                # Every call of the message is answered; the ones after the limit are not run.
                result.messages.append({"role": "tool", "tool_call_id": call["id"],
                                        "content": "ERROR: not run: the run's tool time is spent"})
                continue
            began = time.time_ns()
            log = runner.execute(turn, call["id"], call["function"]["name"], call["function"]["arguments"], kind)
            if on_tool_call is not None:
                on_tool_call(log, began, time.time_ns())
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


def run_bounded(*, limits: Limits, workspace: Workspace, should_stop: Callable[[], bool] | None = None,
                poll: Callable[[], None] | None = None, **kwargs: Any) -> RunResult:
    """``run_agent``, ended from outside when it outlives ``max_seconds`` plus ``RUN_GRACE_S``.

    The loop checks its clock only between calls; a call that never returns would hold the run
    for ever. Here the run goes on a thread of its own and is waited on with a deadline: past it,
    what the run did so far comes back with stop reason ``max_seconds`` (judged as the model's,
    ``gave_up_mid_plan``), and the stuck thread is told to stop at its next turn and left behind.
    """
    live = RunResult(workspace=workspace.root, cost_usd=0.0)
    abandoned = threading.Event()

    def stop() -> bool:
        return abandoned.is_set() or (should_stop is not None and should_stop())

    started = time.monotonic()
    seconds = limits.max_seconds + RUN_GRACE_S
    try:
        returned, value = Deadline(lambda: run_agent(limits=limits, workspace=workspace, should_stop=stop,
                                                     into=live, **kwargs), "agentic-run").wait(seconds, poll)
    except BaseException:  # Ctrl-C or SIGTERM while waiting: the run stops at its next turn
        abandoned.set()
        raise
    if returned:
        assert value is not None
        return value
    abandoned.set()
    cut = replace(live, messages=list(live.messages), tool_calls=list(live.tool_calls), final_answer=None,
                  stop_reason="max_seconds", latency_s=round(time.monotonic() - started, 4))
    return cut


__all__ = ["InfraError", "ToolRunner", "run_agent", "run_bounded"]
