"""Server refusals that the model's own output provoked: the model's failure, never ``infra_error``.

An OpenAI-compatible server refuses some requests because of what the model wrote, not because
it is down: the conversation has outgrown the model's context window (OpenAI's and vLLM's 400
``context_length_exceeded`` / "This model's maximum context length is N tokens", llama.cpp's 400
``exceed_context_size_error``, litellm's ``ContextWindowExceededError``), or the server could not
read a tool call the model wrote (llama.cpp's 500 "Failed to parse tool call arguments as JSON",
Groq's 400 ``tool_use_failed``, OpenAI's 400 on a ``messages[i].tool_calls[j].function`` field).
A retry sends the same request and gets the same answer, so such a refusal ends the run at once,
and the run is judged like the model's other failures: by the precedence of
``run/failures.py``, with the tag ``server_refusal`` naming the cause (and, for a context window,
the token counts the server gave). What stays the endpoint's: connection failures, timeouts,
401/403/404/429, and any 5xx whose message names no cause of the model's.

The harness itself sends a well-formed history (``run/calls/history.py``), so a malformed call the model
made once does not make every later request fail; what is classified here is what the server
still refuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

#: Tag on a run that a server's refusal ended: the cause's value.
TAG = "server_refusal"
#: Tag with the server's message (its first line, bounded).
MESSAGE_TAG = "server_refusal_message"


class Cause(str, Enum):
    """Why a server refused a request for what the model wrote."""

    #: The conversation outgrew the model's context window: a run that did not finish within it.
    CONTEXT_OVERFLOW = "context_overflow"
    #: The server could not read a tool call the model wrote: the model's malformed call.
    MALFORMED_TOOL_CALL = "malformed_tool_call"


#: HTTP statuses a refusal of the request's content comes with (llama.cpp answers 500 for a tool
#: call it cannot parse). Other statuses (401, 403, 404, 429, 502-504) are never the model's.
_STATUSES = frozenset({400, 413, 422, 500})
_CONTEXT = re.compile(
    r"context_length_exceeded|exceed_context_size_error|maximum context length|exceeds the available context size"
    r"|exceeds? the context window|longer than the maximum model length|longer than the model's context length"
    r"|context window (?:is )?exceeded|prompt is too long",
    re.IGNORECASE)
_MALFORMED = re.compile(
    r"failed to parse tool call arguments|tool_use_failed|failed to call a function"
    r"|messages\[\d+\]\.tool_calls\[\d+\]\.function",
    re.IGNORECASE)
#: Token counts as servers word them: the window, and what the request needed.
_WINDOW = (r"maximum context length is (\d+)", r"available context size \((\d+) tokens?\)",
           r"maximum model length of (\d+)", r'"n_ctx": ?(\d+)')
_REQUESTED = (r"you requested (\d+) tokens", r"resulted in (\d+) tokens", r"request \((\d+) tokens?\)",
              r"your request has (\d+) input tokens", r"prompt \(length (\d+)\)", r'"n_prompt_tokens": ?(\d+)')
MAX_MESSAGE_CHARS = 300
#: The client's prefixes before the server's own words ("litellm.BadRequestError: OpenAIException - ").
_PREFIXES = re.compile(r"^(?:(?:litellm\.)?\w*(?:Error|Exception)(?::| -) )+")
#: Characters of the server's text that a tag never holds (it is shown in the run's page and JUnit XML).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


class ModelRefusal(Exception):
    """A model call that the server refused for what the model wrote; not retried, not infra."""

    def __init__(self, cause: Cause, message: str, context_window: int | None = None,
                 requested_tokens: int | None = None, retries: int = 0) -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message
        self.context_window = context_window
        self.requested_tokens = requested_tokens
        #: Retries of transient faults the call spent before the refusal.
        self.retries = retries

    def as_dict(self) -> dict[str, Any]:
        """The refusal as plain primitives (what a run result keeps and a transcript carries)."""
        out: dict[str, Any] = {"cause": self.cause.value, "message": self.message}
        if self.context_window is not None:
            out["context_window"] = self.context_window
        if self.requested_tokens is not None:
            out["requested_tokens"] = self.requested_tokens
        return out


def _first(patterns: Sequence[str], text: str) -> int | None:
    for pattern in patterns:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return int(match.group(1))
    return None


def server_words(text: str) -> str:
    """``text`` with an error body the server sent as JSON (``{"error": {"message": ...}}``) replaced by its message.

    The OpenAI SDK puts the server's message in the error litellm raises; litellm's own HTTP handler
    (``route``) puts the whole body. Either way, what the harness records is the server's message.
    """
    start = text.find(" - {")
    if start < 0:
        return text
    try:
        body, end = json.JSONDecoder().raw_decode(text, start + 3)
    except ValueError:
        return text
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    if message is None and isinstance(body, dict):
        message = body.get("message") if isinstance(body.get("message"), str) else body.get("detail")
    if not isinstance(message, str):
        return text
    return text[:start + 3] + message + text[end:]


def _text_of(exc: BaseException) -> str:
    """What the error says: its message, and the body the server sent when the client kept it."""
    body = getattr(exc, "body", None)
    extra = json.dumps(body, default=str)[:4000] if isinstance(body, dict) else ""
    return f"{exc} {extra}"


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _is_context_window_error(exc: BaseException) -> bool:
    return any(k.__name__ == "ContextWindowExceededError" for k in type(exc).__mro__)


def of(exc: BaseException) -> ModelRefusal | None:
    """The model-caused refusal ``exc`` is, or None when it is the endpoint's (or the harness's) error."""
    status = _status(exc)
    if status not in _STATUSES:
        return None
    text = _text_of(exc)
    if _is_context_window_error(exc) or _CONTEXT.search(text):
        cause = Cause.CONTEXT_OVERFLOW
    elif _MALFORMED.search(text):
        cause = Cause.MALFORMED_TOOL_CALL
    else:
        return None
    lines = _PREFIXES.sub("", server_words(str(exc)).strip()).splitlines()
    message = _CONTROL.sub(" ", lines[0] if lines else type(exc).__name__)[:MAX_MESSAGE_CHARS]
    if cause is Cause.CONTEXT_OVERFLOW:
        return ModelRefusal(cause, message, _first(_WINDOW, text), _first(_REQUESTED, text))
    return ModelRefusal(cause, message)


def is_malformed_call(refusal: dict[str, Any] | None) -> bool:
    """Whether a run's refusal was the server's failing to read a tool call the model wrote."""
    return refusal is not None and refusal.get("cause") == Cause.MALFORMED_TOOL_CALL.value


def tags(refusal: dict[str, Any] | None) -> dict[str, Any]:
    """The tags of a run that a refusal ended (none otherwise): the cause, the message, the token counts."""
    if refusal is None:
        return {}
    out = {TAG: refusal["cause"], MESSAGE_TAG: refusal["message"]}
    out.update({k: refusal[k] for k in ("context_window", "requested_tokens") if k in refusal})
    return out


def note(model: str, runs: Sequence[Mapping[str, Any]]) -> str | None:
    """The campaign note for a model some of whose failed runs were judged from a server's refusal, or None."""
    failed = [r for r in runs if not r.get("passed")]
    known = {c.value for c in Cause}
    causes: dict[str, int] = {}
    for r in failed:
        cause = (r.get("tags") or {}).get(TAG)
        if cause in known:  # a stored campaign's tags are read back: only the causes named here are counted
            causes[cause] = causes.get(cause, 0) + 1
    if not causes:
        return None
    by_cause = ", ".join(f"{n} {cause}" for cause, n in sorted(causes.items()))
    return (f"model {model!r}: {sum(causes.values())} of {len(failed)} failed runs were judged from the server's "
            f"refusal of what the model wrote ({by_cause}), not as infra_error; each run's tags "
            f"{TAG} and {MESSAGE_TAG} say what the server answered")


__all__ = ["Cause", "MESSAGE_TAG", "ModelRefusal", "TAG", "is_malformed_call", "note", "of", "server_words", "tags"]
