"""Typed records: what a run produced, and the record that crosses processes."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from .sandbox import SandboxInfo


class FailureMode(str, Enum):
    """The primary failure mode of a failed run, by precedence (first wins)."""

    INFRA_ERROR = "infra_error"
    TOOL_CALL_HALLUCINATED = "tool_call_hallucinated"
    TOOL_CALL_REDUNDANCY = "tool_call_redundancy"
    GAVE_UP_MID_PLAN = "gave_up_mid_plan"
    WRONG_ANSWER = "wrong_answer"


#: Why the agent loop stopped.
StopReason = Literal[
    "final_answer",  # an assistant message with text and no tool call
    "empty_final",  # an assistant message with neither text nor tool call
    "tool_call_as_text",  # the final message's content is a tool call written as text
    "truncated",  # the final message was cut by the token limit of the call
    "max_turns",
    "max_tokens",
    "max_seconds",
    "max_tool_seconds",
    "infra_error",  # the model call failed after retries
    "server_refusal",  # the server refused the request for what the model wrote (run/calls/refusals.py)
    "not_started",  # the test failed before the agent ran
    "cancelled",  # the session stopped (-x, Ctrl-C) while the run was in flight; never judged
]


class ToolCallLog(TypedDict):
    """One tool call the model made, and what came of it."""

    turn: int
    id: str
    name: str
    #: The argument text exactly as the model sent it.
    raw_arguments: str
    #: The parsed arguments (None when they did not parse).
    arguments: dict[str, Any] | None
    #: What the tool returned to the model (an error message when ``ok`` is false).
    result: str
    ok: bool
    #: Why the call counts as hallucinated (unknown tool, bad JSON, schema), or None.
    hallucinated: str | None
    #: The same call (name and arguments) as the one before it, with the same result.
    redundant: bool
    duration_s: float


@dataclass
class RunResult:
    """Everything one agent run produced; what checkers and the classifier read."""

    final_answer: str | None = None
    stop_reason: StopReason = "not_started"
    tool_calls: list[ToolCallLog] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Dollars; None when neither litellm nor models.yaml knows the price.
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    #: The cause when the model call failed (type and message), else None.
    infra_error: str | None = None
    #: Retries spent on transient endpoint faults.
    retries: int = 0
    #: Model calls refused for rate limit and sent again after a wait (not faults: no retry spent).
    rate_limited: int = 0
    #: Seconds the run's calls waited on those refusals.
    rate_limit_wait_s: float = 0.0
    workspace: Path | None = None
    #: How the final message wrote a tool call as text (e.g. "fs_read as JSON inside <tool_call>"), or None.
    tool_call_as_text: str | None = None
    #: Model calls whose reported usage was not believable (negative, absurd, not a number): not counted.
    usage_invalid: int = 0
    #: Tool calls beyond the per-message cap, dropped unrun.
    dropped_tool_calls: int = 0
    #: Tool calls of replies cut by the call's token limit (``finish_reason: length``).
    truncated_tool_calls: int = 0
    #: The server's refusal that ended the run, provoked by what the model wrote (cause, the
    #: server's message, token counts when given; ``run/calls/refusals.py``), or None.
    server_refusal: dict[str, Any] | None = None
    # -- the token economy (what the provider reported beyond prompt and completion) ---------------
    #: Reasoning tokens over the calls that reported them; None when no call did (unknown, not 0).
    reasoning_tokens: int | None = None
    #: Prompt tokens served from the provider's prefix cache, over the calls that reported them; None
    #: when no call did.
    cached_prompt_tokens: int | None = None
    #: Prompt plus completion tokens of each model call, in order (how the context grew).
    turn_tokens: list[int] = field(default_factory=list)
    #: Seconds from the run's start to its final answer; None without a final answer.
    seconds_to_answer: float | None = None

    @property
    def hallucinated_calls(self) -> int:
        return sum(1 for c in self.tool_calls if c["hallucinated"])

    @property
    def redundant_calls(self) -> int:
        return sum(1 for c in self.tool_calls if c["redundant"])

    def calls_to(self, name: str) -> list[ToolCallLog]:
        return [c for c in self.tool_calls if c["name"] == name]

    def paths_of(self, name: str) -> list[str]:
        """The paths that successful ``name`` calls named, in call order, each as the workspace file it is:
        ``./notes/a.txt``, ``notes//a.txt`` and ``x/../notes/a.txt`` are ``notes/a.txt``."""
        return [posixpath.normpath(c["arguments"]["path"]) for c in self.calls_to(name)
                if c["ok"] and c["arguments"] and isinstance(c["arguments"].get("path"), str)]


class FunctionCall(TypedDict):
    """The function part of a tool call as the conversation carries it."""

    name: str
    #: The argument text as the model sent it (cut to the harness's bound).
    arguments: str


class MessageToolCall(TypedDict):
    """One tool call of an assistant message, in OpenAI's chat format."""

    id: str
    type: str
    function: FunctionCall


#: Who wrote a message of the conversation.
Role = Literal["system", "user", "assistant", "tool"]


class Message(TypedDict):
    """One message of a run's conversation (``RunResult.messages``, a transcript's ``messages``).

    New keys are added as ``NotRequired``: a transcript written before them lacks them.
    """

    role: Role
    #: The text; None for an assistant message that only calls tools.
    content: str | None
    #: The calls of an assistant message (absent when it made none).
    tool_calls: NotRequired[list[MessageToolCall]]
    #: The call a ``tool`` message answers.
    tool_call_id: NotRequired[str]
    #: An assistant message's reasoning (``reasoning_content``, or its thinking blocks' text); kept and
    #: shown, never read as the answer. Absent when the provider sent none.
    reasoning_content: NotRequired[str]
    #: The provider's thinking blocks as sent (signatures included), carried back in the next request.
    thinking_blocks: NotRequired[list[dict[str, Any]]]


class Reasoning(TypedDict, total=False):
    """The reasoning part of an assistant ``Message`` (``run.agent.reasoning_of``)."""

    reasoning_content: str
    thinking_blocks: list[dict[str, Any]]


class OriginalVerdict(TypedDict):
    """What a rescored run's original campaign judged (``RunRecord.original``)."""

    passed: bool
    failure_mode: str | None


class RunRecord(TypedDict):
    """One line of ``runs.jsonl``; rides from worker to controller on the report (a plain dict).

    Every key below is written by the current writer. A folder written before a key existed is
    read through ``campaign.stored``, which fills it in (None: unknown), so consumers index it
    directly. A key added later: add it here as ``NotRequired`` (or required, with its default
    for older folders in ``campaign.format.RECORD_DEFAULTS``).
    """

    task: str
    task_name: str
    model: str
    run: int
    seed: int
    nodeid: str
    passed: bool
    failure_mode: str | None
    #: Secondary tags: counts and flags kept for every run, passed or not.
    tags: dict[str, Any]
    tool_calls: int
    turns: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float
    stop_reason: str
    infra_cause: str | None
    #: Why the checker rejected the run (first line of the assertion), or None.
    reason: str | None
    #: The transcript's path, relative to the campaign folder.
    transcript: str
    #: The task instance's content hash (``TaskInstance.content_hash``), or None when unknown.
    task_hash: str | None
    #: How the run's model-written code was contained (kind and version; kind ``none`` when unconfined),
    #: or None for a task that runs no model code (and in records written before the sandbox).
    sandbox: SandboxInfo | None
    #: The campaign a rescored run was replayed from (``--agentic-rescore``); absent otherwise.
    rescore_of: NotRequired[str]
    #: The original campaign's verdict of a rescored run; absent otherwise.
    original: NotRequired[OriginalVerdict]
    # -- the token economy. Absent in records written before it: a reader takes absent as unknown. --
    #: Reasoning tokens the provider reported (``completion_tokens_details.reasoning_tokens``), summed
    #: over the calls that reported them; None: no call reported any (unknown, never 0).
    reasoning_tokens: NotRequired[int | None]
    #: Prompt tokens served from the provider's prefix cache (``prompt_tokens_details.cached_tokens``,
    #: Anthropic's ``cache_read_input_tokens`` as litellm maps it); None: not reported.
    cached_prompt_tokens: NotRequired[int | None]
    #: Prompt plus completion tokens per model call: the mean and the largest (context growth shows in
    #: the largest); None for a run without a counted call.
    tokens_per_turn_mean: NotRequired[float | None]
    tokens_per_turn_max: NotRequired[int | None]
    #: Turns and seconds to the final answer; None when the run gave none.
    turns_to_answer: NotRequired[int | None]
    seconds_to_answer: NotRequired[float | None]



class Transcript(TypedDict):
    """A run's ``transcripts/<model>/<task>-run<N>.json``: every message and tool call.

    A lost run's transcript (its process died) carries the started run's identity and no
    conversation; keys absent from older folders are ``NotRequired`` or filled in on reading.
    """

    task: str
    model: str
    run: int
    seed: int
    nodeid: str
    messages: list[Message]
    tool_calls: list[ToolCallLog]
    final_answer: str | None
    stop_reason: str
    passed: bool
    failure_mode: str | None
    reason: str | None
    #: The refusal that ended the run (``RunResult.server_refusal``), or None.
    server_refusal: dict[str, Any] | None
    #: The litellm model string the run called (absent in a lost run's transcript).
    litellm_model: NotRequired[str]
    #: A lost run's transcript repeats the started run's identity.
    task_name: NotRequired[str]
    task_hash: NotRequired[str | None]
    transcript: NotRequired[str]
    sandbox: NotRequired[SandboxInfo | None]
    #: The campaign a rescored run was replayed from; absent otherwise.
    rescore_of: NotRequired[str]


#: The fields of a ``RunRecord`` that measure time: they differ from one session to the next.
TIMING_FIELDS = ("latency_s", "seconds_to_answer")
#: The token-economy fields of a ``RunRecord`` (all optional; absent means unknown).
ECONOMY_FIELDS = ("reasoning_tokens", "cached_prompt_tokens", "tokens_per_turn_mean", "tokens_per_turn_max",
                  "turns_to_answer", "seconds_to_answer")
#: What a run spent, as its record says: a rescore carries every one from the stored record, since replaying a
#: transcript costs nothing and re-judging it changes verdicts only (``verdicts/rescore.py``).
SPEND_FIELDS = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "turns", *ECONOMY_FIELDS)


class Economy(TypedDict):
    """The token-economy fields of a ``RunRecord`` (see there), as one run counted them."""

    reasoning_tokens: int | None
    cached_prompt_tokens: int | None
    tokens_per_turn_mean: float | None
    tokens_per_turn_max: int | None
    turns_to_answer: int | None
    seconds_to_answer: float | None


def economy_of(result: RunResult) -> Economy:
    """The token-economy fields of a run's record, from what the run counted."""
    turns = [t for t in result.turn_tokens if t > 0]
    answered = result.final_answer is not None
    return Economy(
        reasoning_tokens=result.reasoning_tokens,
        cached_prompt_tokens=result.cached_prompt_tokens,
        tokens_per_turn_mean=round(sum(turns) / len(turns), 1) if turns else None,
        tokens_per_turn_max=max(turns) if turns else None,
        turns_to_answer=result.turns if answered else None,
        seconds_to_answer=None if result.seconds_to_answer is None else round(result.seconds_to_answer, 4),
    )
