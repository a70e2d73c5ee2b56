"""Scripted models, served through a litellm custom provider.

``agentic-scripted/oracle`` plays each task's reference solution and
``agentic-scripted/near-miss`` one of its near-miss solutions, so the harness
self-check and the self-tests go through the very ``litellm.completion`` path
that real models take. The agent loop names the script of a run in the call's
``metadata``; the provider picks the step by counting the assistant turns
already in the conversation.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .task import Final, Solution, TaskInstance, ToolCall

PROVIDER = "agentic-scripted"
#: The ``extra_body`` key with which a scripted model "thinks": that many words of reasoning before each
#: step, given as ``reasoning_content`` and counted as reasoning tokens (one a word), so a sweep of
#: reasoning settings (``variants:``) plays without a model.
THINKING_KEY = "agentic_scripted_thinking"
#: Key of the call metadata that names the script of a run.
METADATA_KEY = "agentic_script"

@dataclass(frozen=True)
class Fault:
    """A script step that makes the model call fail with ``message``: a replayed infra error (never
    judged), or a replayed server refusal, judged by its message as the first was (``run/calls/refusals.py``)."""

    message: str


_scripts: dict[str, Solution] = {}
_lock = threading.Lock()
_ids = itertools.count(1)


def script_for(model: str, instance: TaskInstance, run: int) -> Solution:
    """The solution a scripted model plays for this task instance and run index."""
    role = model.split("/", 1)[1]
    if role == "oracle":
        return instance.reference
    if role == "near-miss":
        names = sorted(instance.near_misses)
        if not names:
            raise ValueError("the task has no near-miss solution")
        return instance.near_misses[names[(run - 1) % len(names)]]
    raise ValueError(f"unknown scripted model {model!r}; known: {PROVIDER}/oracle, {PROVIDER}/near-miss")


def register(solution: Solution) -> str:
    """Make ``solution`` playable; returns the key to pass as call metadata."""
    key = f"script-{next(_ids)}"
    with _lock:
        _scripts[key] = solution
    return key


def unregister(key: str) -> None:
    with _lock:
        _scripts.pop(key, None)


def _tokens(text: str) -> int:
    # A stable stand-in for a tokenizer: about four characters a token.
    return max(1, len(text) // 4)


def _step_message(step: Any, turn: int) -> tuple[dict[str, Any], str]:
    if isinstance(step, Final):
        return {"role": "assistant", "content": step.content}, "stop"
    calls: Sequence[ToolCall] = [step] if isinstance(step, ToolCall) else list(step)
    tool_calls = [
        {
            "id": f"call_{turn}_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments_json()},
        }
        for i, c in enumerate(calls)
    ]
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls"


def _install() -> None:
    import litellm
    from litellm import CustomLLM, ModelResponse

    if any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        return

    class ScriptedProvider(CustomLLM):
        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
            litellm_params = kwargs.get("litellm_params") or {}
            key = (litellm_params.get("metadata") or {}).get(METADATA_KEY)
            with _lock:
                script = _scripts.get(key) if key else None
            if script is None:
                raise litellm.BadRequestError(
                    message=f"scripted model {model!r} called without a registered script",
                    model=model,
                    llm_provider=PROVIDER,
                )
            turn = sum(1 for m in messages if m.get("role") == "assistant")
            step: Any = script[turn] if turn < len(script) else None
            if isinstance(step, Fault):
                raise litellm.BadRequestError(message=step.message, model=model, llm_provider=PROVIDER)
            if turn < len(script):
                message, finish = _step_message(script[turn], turn)
            else:  # the script is over: an empty reply, as a model that stops mid-plan
                message, finish = {"role": "assistant", "content": ""}, "stop"
            prompt = _tokens(json.dumps(messages, default=str))
            completion = _tokens(json.dumps(message))
            usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                     "total_tokens": prompt + completion}
            thinking = ((kwargs.get("optional_params") or {}).get("extra_body") or {}).get(THINKING_KEY)
            if isinstance(thinking, int) and not isinstance(thinking, bool) and thinking > 0:
                message = {**message, "reasoning_content": " ".join(["hmm"] * thinking)}
                usage.update(completion_tokens=completion + thinking, total_tokens=prompt + completion + thinking,
                             completion_tokens_details={"reasoning_tokens": thinking})
            return ModelResponse(
                model=model,
                choices=[{"index": 0, "message": message, "finish_reason": finish}],
                usage=usage,
            )

    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": PROVIDER, "custom_handler": ScriptedProvider()},
    ]


_installing = threading.Lock()


def ensure_installed() -> None:
    """Register the provider with litellm (idempotent and thread-safe; imports litellm)."""
    with _installing:
        _install()
