"""Tool calls written as text: a final message whose content is a tool call is not an answer.

A model served with the wrong tool-call parser or chat template (a vLLM
``--tool-call-parser`` that does not match the model, a llama.cpp chat
template without tool support) emits its calls as plain text: a JSON object
naming the tool, or the same inside ``<tool_call>`` tags or another wrapper.
The endpoint then returns that text as the message content, with no
structured tool call. Judging it as an answer would count the server's
misconfiguration against the model, so the agent loop ends such a run as a
malformed tool call (``tool_call_hallucinated``, tag ``tool_call_as_text``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

#: Tag on a run whose final message was a tool call written as text.
TAG = "tool_call_as_text"

#: Wrappers that chat templates and parsers use around a tool call, opening part -> name of the form.
_WRAPPERS = re.compile(
    r"<\|?tool_calls?\|?>|<\|?tool_call_begin\|?>|<｜tool▁calls?▁begin｜>|<function_?calls?>|<functioncall>"
    r"|\[TOOL_CALLS\]|<\|python_tag\|>|<\|action_start\|>|<tools>",
    re.IGNORECASE,
)
_CLOSERS = re.compile(r"</?\|?(?:tool_calls?|function_?calls?|functioncall|tools)(?:_end)?\|?>|<\|action_end\|>"
                      r"|<｜tool▁calls?▁end｜>|\[/TOOL_CALLS\]", re.IGNORECASE)
#: Qwen3-Coder's XML form: <function=NAME> <parameter=KEY>VALUE</parameter> </function>.
_XML_FUNCTION = re.compile(r"<function\s*=\s*([A-Za-z_][\w.-]*)\s*>", re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "tool", "tool_name", "function", "recipient_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "params", "kwargs")


def _named(obj: Any, offered: Collection[str], wrapped: bool) -> str | None:
    """The offered tool a parsed JSON value calls, or None."""
    if isinstance(obj, list):
        names = [_named(x, offered, wrapped) for x in obj]
        return names[0] if names and all(names) else None
    if not isinstance(obj, dict):
        return None
    inner = obj.get("function")
    if isinstance(inner, dict):  # {"type": "function", "function": {"name": ..., "arguments": ...}}
        return _named(inner, offered, True)
    for key in _NAME_KEYS:
        name = obj.get(key)
        if isinstance(name, str):
            name = name.split(".")[-1]  # "functions.fs_read"
            if name in offered and (wrapped or any(k in obj for k in _ARG_KEYS)):
                return name
    if len(obj) == 1:  # {"fs_read": {"path": "x"}}
        (key, value), = obj.items()
        if key in offered and isinstance(value, dict):
            return key
    return None


def _parse_json(text: str) -> Any:
    text = text.strip()
    for candidate in (text, text[text.find("{"):text.rfind("}") + 1] if "{" in text else "",
                      text[text.find("["):text.rfind("]") + 1] if "[" in text else ""):
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    return None


def _last_block(text: str) -> str:
    """The last code block of a message, or the JSON value it ends with, or the whole text."""
    fences = _FENCE.findall(text)
    if fences and text.rstrip().endswith("```"):
        return fences[-1]
    stripped = text.rstrip()
    if stripped.endswith(("}", "]")):
        opener = "{" if stripped.endswith("}") else "["
        # the outermost value the message ends with: try each opening bracket from the left
        for at in (m.start() for m in re.finditer(re.escape(opener), stripped)):
            try:
                json.loads(stripped[at:])
            except (json.JSONDecodeError, ValueError):
                continue
            return stripped[at:]
    return text


def find(text: str, offered: Collection[str]) -> str | None:
    """How ``text`` writes a call of an offered tool (a short description), or None when it does not."""
    if not text or not offered:
        return None
    opener = _WRAPPERS.search(text)
    if opener is not None:
        payload = _CLOSERS.sub("", text[opener.end():])
        xml = _XML_FUNCTION.search(payload)
        if xml and xml.group(1) in offered:
            return f"{xml.group(1)} inside {opener.group(0)}"
        name = _named(_parse_json(payload), offered, True)
        if name:
            return f"{name} as JSON inside {opener.group(0)}"
    xml = _XML_FUNCTION.search(text)
    if xml and xml.group(1) in offered and re.search(r"</function>|<parameter\s*=", text[xml.end():]):
        return f"{xml.group(1)} as <function=...> text"
    name = _named(_parse_json(_last_block(text)), offered, False)
    if name:
        return f"{name} as a JSON object"
    return None


def note(model: str, runs: Sequence[Mapping[str, Any]]) -> str | None:
    """The campaign note for a model whose runs ended with tool calls written as text, or None."""
    hit = [r for r in runs if (r.get("tags") or {}).get(TAG)]
    if not hit:
        return None
    return (f"model {model!r}: {len(hit)} of {len(runs)} runs ended with a tool call written as text instead of "
            "a structured tool call (tool_call_hallucinated, tag tool_call_as_text). The likely cause is the "
            "server, not the model: a tool-call parser or chat template that does not match the model "
            "(vLLM --tool-call-parser, --enable-auto-tool-choice; llama.cpp --jinja and the model's chat template)")


__all__ = ["TAG", "find", "note"]
