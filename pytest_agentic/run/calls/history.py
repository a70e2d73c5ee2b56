"""The conversation as the harness sends it: what the model wrote, in a form every server reads back.

A run keeps every assistant message exactly as the model sent it (its record and transcript
show it). The request that carries the conversation to the endpoint must not: llama.cpp answers
HTTP 500 "Failed to parse tool call arguments as JSON" to a history holding a call whose
arguments were cut by the token limit (or are empty), and OpenAI rejects a tool name outside
``[A-Za-z0-9_-]{1,64}``. The model's earlier mistake would then fail every later turn of the run.
So the copy that is sent carries, for each tool call:

- its arguments when they are a JSON object, else ``{}`` (the tool's result already tells the
  model its arguments were not valid JSON, not an object, or too long);
- its name when a server accepts it, else the name with every other character replaced by ``_``
  (cut to 64; ``invalid_tool_name`` when nothing is left);
- its id when it is 1 to 64 characters of ``[A-Za-z0-9_.:-]``, else ``call_`` and a digest of it;
  the tool message that answers it carries the same replacement.

An assistant message's ``reasoning_content`` (the model's reasoning, kept for the transcript) is
not sent back: no server needs it, and some refuse a field they do not know. Its
``thinking_blocks`` are: Anthropic and Bedrock require a thinking turn's signed blocks in the
history that follows it (litellm writes them as thinking content blocks).

Messages that need no change are sent as they are (not copied).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
CALL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
EMPTY_ARGUMENTS = "{}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: Python reads them, servers do not


def readable_arguments(raw: Any) -> str:
    """``raw`` when it is the text of a JSON object, else ``{}``."""
    if not isinstance(raw, str):
        return EMPTY_ARGUMENTS
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return EMPTY_ARGUMENTS
    return raw if isinstance(value, dict) else EMPTY_ARGUMENTS


def readable_name(name: Any) -> str:
    text = name if isinstance(name, str) else ""
    if NAME.fullmatch(text):
        return text
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)[:64] or "invalid_tool_name"


def readable_id(call_id: Any) -> str:
    text = call_id if isinstance(call_id, str) else ""
    if CALL_ID.fullmatch(text):
        return text
    return "call_" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:24]


def _call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    sent = {"name": readable_name(function.get("name")), "arguments": readable_arguments(function.get("arguments"))}
    if sent == function and readable_id(call.get("id")) == call.get("id"):
        return call
    return {**call, "id": readable_id(call.get("id")), "function": sent}


def sendable(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The conversation to send: ``messages`` with every tool call in a form a server reads back."""
    out: list[Mapping[str, Any]] = []
    for message in messages:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if "reasoning_content" in message and message.get("role") == "assistant":
            message = {k: v for k, v in message.items() if k != "reasoning_content"}
        if calls:
            sent = [_call(c) for c in calls]
            if any(s is not c for s, c in zip(sent, calls)):
                message = {**message, "tool_calls": sent}
        elif message.get("role") == "tool" and "tool_call_id" in message:
            call_id = readable_id(message["tool_call_id"])
            if call_id != message["tool_call_id"]:
                message = {**message, "tool_call_id": call_id}
        out.append(message)
    return out


__all__ = ["readable_arguments", "readable_id", "readable_name", "sendable"]
