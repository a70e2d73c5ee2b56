"""Stand-in endpoints that report the token economy and reasoning, as providers do (tests only).

``ReasoningServer``: an OpenAI-compatible endpoint (``FaultServer``) that plays each task's
reference, or its near-miss when the request turns thinking off (vLLM's
``chat_template_kwargs: {enable_thinking: false}``, sent by litellm from ``extra_body``). With
thinking on, every reply carries ``reasoning_content`` (holding the near-miss's final answer, answer
line included: what a checker must never read) and usage details: ``completion_tokens_details.
reasoning_tokens`` and ``prompt_tokens_details.cached_tokens`` (the earlier turns' prompt, as a prefix
cache serves it). ``details=False``: usage without any details, as a provider that reports none.

``anthropic_reply``: a reply of Anthropic's Messages API (thinking block with its signature, then
text or a tool use; usage with ``cache_read_input_tokens``), for litellm's ``anthropic/`` provider.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pytest_agentic.run.scripted import _step_message
from pytest_agentic.run.task import Final, Solution

from .fault_server import FaultServer

REASONING_TOKENS = 40
CACHED_TOKENS = 64


def thinking_off(body: dict[str, Any]) -> bool:
    kwargs = body.get("chat_template_kwargs") or {}
    return kwargs.get("enable_thinking") is False


class ReasoningServer(FaultServer):
    """Plays ``on`` (prompt -> solution) with thinking on, ``off`` with it off; see the module's text."""

    def __init__(self, on: dict[str, Solution], off: dict[str, Solution], *, leak: dict[str, str],
                 details: bool = True) -> None:
        super().__init__(on)
        self.off = off
        #: Per prompt: the text the reasoning carries (a wrong answer, answer line included).
        self.leak = leak
        self.details = details
        self.bodies: list[dict[str, Any]] = []

    def reply(self, body: dict[str, Any], auth: str) -> dict[str, Any]:
        with self.lock:
            self.bodies.append(body)
        messages = body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        off = thinking_off(body)
        script = (self.off if off else self.solutions).get(prompt, [])
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn < len(script):
            message, finish = _step_message(script[turn], turn)
        else:
            message, finish = {"role": "assistant", "content": ""}, "stop"
        usage: dict[str, Any] = {"prompt_tokens": 100 + 50 * turn, "completion_tokens": 10}
        if not off:
            message["reasoning_content"] = f"Thinking about turn {turn}. Tempting reply:\n{self.leak.get(prompt, '')}"
            usage["completion_tokens"] += REASONING_TOKENS
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.details:
            usage["completion_tokens_details"] = {"reasoning_tokens": 0 if off else REASONING_TOKENS}
            usage["prompt_tokens_details"] = {"cached_tokens": CACHED_TOKENS if turn else 0}
        return {"id": f"cmpl-{turn}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "x"), "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage}


def leaks(instances: list[Any]) -> dict[str, str]:
    """Per prompt: the final answer of the task's first near-miss (what the reasoning will hold)."""
    out = {}
    for instance in instances:
        name = sorted(instance.near_misses)[0]
        final = next((s for s in instance.near_misses[name] if isinstance(s, Final)), None)
        out[instance.prompt] = final.content if final else ""
    return out


def anthropic_reply(*, thinking: str, signature: str, text: str | None = None,
                    tool: tuple[str, dict[str, Any]] | None = None, cached: int | None = 80) -> dict[str, Any]:
    """One Anthropic Messages API reply: a thinking block, then a tool use or text."""
    content: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking, "signature": signature}]
    if tool is not None:
        content.append({"type": "tool_use", "id": f"toolu_{signature}", "name": tool[0], "input": tool[1]})
    if text is not None:
        content.append({"type": "text", "text": text})
    usage: dict[str, Any] = {"input_tokens": 120, "output_tokens": 30}
    if cached is not None:
        usage.update(cache_read_input_tokens=cached, cache_creation_input_tokens=0)
    return {"id": f"msg_{signature}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None,
            "usage": usage}


def dumps(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()
