"""One run's transcript as steps a person reads: prompts, assistant turns, tool calls, the answer.

The values are the model's and the tools' text, untouched except for a length cap: the template
escapes all of it (autoescape), so nothing here may produce markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..run.records import RunRecord

#: Characters of one text block shown on the page; the rest stays in the transcript file.
MAX_TEXT = 12_000


@dataclass
class Text:
    """A block of text, cut at ``MAX_TEXT`` characters (``cut`` says how many were left out)."""

    text: str
    cut: int = 0


def text(value: Any) -> Text:
    if value is None:
        return Text("")
    if not isinstance(value, str):
        value = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    if len(value) > MAX_TEXT:
        return Text(value[:MAX_TEXT], len(value) - MAX_TEXT)
    return Text(value)


@dataclass
class Call:
    name: str
    arguments: Text
    result: Text | None
    ok: bool
    hallucinated: str | None
    redundant: bool
    duration_s: float | None


@dataclass
class Step:
    """``kind``: system, user, assistant (text and/or calls), tool (a tool message with no call logged)."""

    kind: str
    turn: int | None = None
    content: Text | None = None
    calls: list[Call] = field(default_factory=list)
    #: The model's reasoning of that turn (``reasoning_content``, else its thinking blocks' text):
    #: shown folded, apart from the content; never the answer.
    reasoning: Text | None = None


@dataclass
class RunView:
    id: str
    task: str
    task_name: str
    model: str
    run: int
    passed: bool
    mode: str | None
    record: RunRecord
    tags: list[tuple[str, Any]]
    steps: list[Step]
    final_answer: Text | None
    reason: Text | None
    transcript_file: str
    available: bool
    #: The key of the series (campaign and model) the run belongs to on a page of several (``render.page``).
    series: str = ""

    @property
    def outcome(self) -> str:
        """``passed``, or the failure mode (CSS class and legend key)."""
        return "passed" if self.passed else (self.mode or "failed")


def _arguments(call: dict[str, Any], log: dict[str, Any] | None) -> Text:
    if log is not None and log.get("arguments") is not None:
        return text(json.dumps(log["arguments"], indent=1, ensure_ascii=False))
    raw = (log or {}).get("raw_arguments")
    if raw is None:
        raw = (call.get("function") or {}).get("arguments", "")
    try:
        return text(json.dumps(json.loads(raw), indent=1, ensure_ascii=False)) if raw.strip() else text("")
    except (ValueError, AttributeError):
        return text(raw)


def reasoning_text(message: Mapping[str, Any]) -> Text | None:
    """An assistant message's reasoning as kept in its transcript (``run.agent.reasoning_of``), or None."""
    reasoning = message.get("reasoning_content")
    if not isinstance(reasoning, str) or not reasoning:
        blocks = message.get("thinking_blocks") or []
        reasoning = "\n\n".join(b.get("thinking") or "" for b in blocks if isinstance(b, dict)
                                 and isinstance(b.get("thinking"), str))
        if not reasoning and any(isinstance(b, dict) and b.get("type") == "redacted_thinking" for b in blocks):
            reasoning = "[redacted thinking: the provider sent it encrypted]"
    return text(reasoning) if reasoning else None


def steps_of(transcript: Mapping[str, Any]) -> list[Step]:
    """The conversation in order; each tool call is paired with its logged result (in call order)."""
    logs = list(transcript.get("tool_calls") or [])
    used = 0
    answered: set[str] = set()
    steps: list[Step] = []
    turn = 0
    for message in transcript.get("messages") or []:
        role = message.get("role")
        if role in ("system", "user"):
            steps.append(Step(kind=role, content=text(message.get("content"))))
        elif role == "assistant":
            turn += 1
            calls = []
            for call in message.get("tool_calls") or []:
                log = logs[used] if used < len(logs) else None
                used += 1
                if log is not None:
                    answered.add(str(log.get("id")))
                name = (log or {}).get("name") or (call.get("function") or {}).get("name", "?")
                calls.append(Call(
                    name=str(name), arguments=_arguments(call, log),
                    result=text(log.get("result")) if log is not None else None,
                    ok=bool(log.get("ok", True)) if log is not None else True,
                    hallucinated=log.get("hallucinated") if log is not None else None,
                    redundant=bool(log.get("redundant")) if log is not None else False,
                    duration_s=log.get("duration_s") if log is not None else None))
            content = message.get("content")
            steps.append(Step(kind="assistant", turn=turn, content=text(content) if content else None, calls=calls,
                              reasoning=reasoning_text(message)))
        elif role == "tool" and str(message.get("tool_call_id")) not in answered:
            steps.append(Step(kind="tool", content=text(message.get("content"))))
    return steps


def run_view(record: RunRecord, transcript: Mapping[str, Any] | None, run_id: str) -> RunView:
    available = transcript is not None
    transcript = transcript or {}
    final = transcript.get("final_answer")
    # The stop reason has its own line; the other tags are shown when set.
    shown_tags = [(k, v) for k, v in sorted(record["tags"].items())
                  if v not in (0, False, None, "") and k != "stop_reason"]
    steps = steps_of(transcript)
    last = steps[-1] if steps else None
    if (final is not None and last is not None and last.kind == "assistant" and not last.calls
            and last.content is not None and last.content.text.strip() == str(final).strip()):
        steps.pop()  # the answering turn: shown once, as the final answer
    return RunView(
        id=run_id, task=record["task"], task_name=record["task_name"], model=record["model"],
        run=record["run"], passed=bool(record["passed"]), mode=record["failure_mode"], record=record,
        tags=shown_tags, steps=steps, final_answer=text(final) if final is not None else None,
        reason=text(why) if (why := record["reason"] or record["infra_cause"]) else None,
        transcript_file=record["transcript"], available=available,
    )
