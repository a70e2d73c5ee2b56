"""A failed run told in a few lines a person can read: what failed, why, what the model said, where to look.

This is what the terminal and JUnit show of a failed agent run by default, in place of pytest's
traceback of the checker (its source and assertion rewriting). Everything quoted from the run
(the checker's reason, which may quote the answer; the final answer; the last tool call) is
made one safe line by :func:`campaign.untrusted.one_line`: no escape sequence, control
character or line break of the model's reaches the terminal, and long text is cut.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .untrusted import one_line

#: How much of the final answer or the last step a block quotes.
EXCERPT_CHARS = 240
#: What the user types to get pytest's full report instead.
FULL_HINT = "the checker's traceback: --agentic-tb=full (or --tb=long, -vv)"

_REJECTION_PREFIXES = ("AssertionError: ", "Failed: ")


def reason_of(record: Mapping[str, Any]) -> str:
    """The checker's (or the harness's) one-line reason, without pytest's exception name."""
    reason = str(record.get("reason") or record.get("infra_cause") or "no reason recorded")
    for prefix in _REJECTION_PREFIXES:
        if reason.startswith(prefix):
            reason = reason[len(prefix):]
            break
    return one_line(reason, 300)


def headline(record: Mapping[str, Any]) -> str:
    """``wrong_answer: <reason>``: the one line that stands for the run (pytest's short summary, JUnit)."""
    return f"{record.get('failure_mode') or 'failed'}: {reason_of(record)}"


def excerpt(text: object, limit: int = EXCERPT_CHARS) -> str:
    """``text`` as one safe line of at most ``limit`` characters: its start and its end, where the
    answer lines a prompt asks for stand, joined by an ellipsis when the middle is left out."""
    s = one_line(text, 1 << 20)
    if len(s) <= limit:
        return s
    head = limit // 3
    return f"{s[:head]} … {s[-(limit - head - 3):]}"


def _last_step(transcript: Mapping[str, Any]) -> str | None:
    calls = transcript.get("tool_calls") or []
    if calls:
        call = calls[-1]
        return (f"last tool call: {one_line(call.get('name'), 60)}"
                f"({one_line(call.get('raw_arguments'), 100)}) -> {one_line(call.get('result'), 100)}")
    for message in reversed(transcript.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str) and content.strip():
            return f"last message ({one_line(message.get('role'), 20)}): {one_line(content, EXCERPT_CHARS)}"
    return None


def block_lines(record: Mapping[str, Any], transcript: Mapping[str, Any], transcript_file: str,
                report_link: str | None) -> list[str]:
    """The lines of a failed run's block (no trailing newlines)."""
    lines = [f"{one_line(record.get('failure_mode') or 'failed', 40)}: model {one_line(record.get('model'), 80)}, "
             f"task {one_line(record.get('task'), 40)} ({one_line(record.get('task_name'), 60)}), "
             f"run {record.get('run')}"]
    # The tags that say something (a count above 0, a flag set); the stop reason when it is not the usual one.
    tags = {k: v for k, v in (record.get("tags") or {}).items()
            if v not in (0, False, None, "") and not (k == "stop_reason" and v == "final_answer")}
    if tags:
        lines.append("tags: " + ", ".join(f"{one_line(k, 40)}={one_line(v, 80)}" for k, v in sorted(tags.items())))
    lines.append(f"reason: {reason_of(record)}")
    answer = transcript.get("final_answer")
    if isinstance(answer, str) and answer.strip():
        lines.append(f"final answer: {excerpt(answer)}")
    else:
        step = _last_step(transcript)
        lines.append(f"no final answer; {step}" if step else f"no final answer (stop reason: "
                                                             f"{one_line(record.get('stop_reason'), 40)})")
    lines.append(f"transcript: {transcript_file}")
    if report_link:
        lines.append(f"report: {report_link}")
    lines.append(FULL_HINT)
    return lines
