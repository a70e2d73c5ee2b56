"""Turn a finished agent test into its run record and transcript (plain primitives)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict, cast

import pytest

from . import internals
from .campaign.failureblock import block_lines, headline
from .campaign.untrusted import printable
from .run import answerlines, sandbox
from .run.failures import classify, tags
from .fixture import CONTEXT_KEY, RESULT_KEY
from .run.records import ECONOMY_FIELDS, FailureMode, RunRecord, RunResult, ToolCallLog, Transcript, economy_of
from .run.sandbox import SandboxInfo

#: Attribute names under which the record and transcript ride on the call report.
RECORD_ATTR = "agentic_record"
TRANSCRIPT_ATTR = "agentic_transcript"
#: Attribute under which the setup report announces a run (so a lost worker's run is not lost).
STARTED_ATTR = "agentic_started"
#: Attribute under which a process's first agent setup report carries the tasks its collection selected.
TASKS_ATTR = "agentic_selected_tasks"
#: Attribute under which an agent test's setup and call reports say how many runs their process has in flight.
IN_FLIGHT_ATTR = "agentic_in_flight"


def record_of(report: pytest.TestReport) -> RunRecord | None:
    """The run record a call report carries (a plain dict, as xdist copied it), or None."""
    return cast("RunRecord | None", getattr(report, RECORD_ATTR, None))


def transcript_of(report: pytest.TestReport) -> Transcript:
    """The transcript a call report carries (a plain dict, as xdist copied it); empty when it has none."""
    return cast(Transcript, getattr(report, TRANSCRIPT_ATTR, None) or {})


def started_of(report: pytest.TestReport) -> StartedRun | None:
    """The run a setup report announces (:func:`started`), or None."""
    return cast("StartedRun | None", getattr(report, STARTED_ATTR, None))


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def transcript_path(model: str, task: str, run: int) -> str:
    return f"transcripts/{safe_name(model)}/{safe_name(task)}-run{run}.json"


def _reason(report: pytest.TestReport) -> str | None:
    if report.passed:
        return None
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return text.strip().splitlines()[0][:500] if text and text.strip() else None


class StartedRun(TypedDict):
    """What identifies a run, fixed before it starts (rides on its setup report as a plain dict)."""

    task: str
    task_name: str
    model: str
    run: int
    seed: int
    nodeid: str
    task_hash: str | None
    transcript: str
    sandbox: SandboxInfo | None


_IDENTITY_KEY = pytest.StashKey[StartedRun]()


def started(item: pytest.Item) -> StartedRun | None:
    """What identifies an agent test's run (sent with its setup report, reused by its record)."""
    agent = item.stash.get(CONTEXT_KEY, None)
    if agent is None:
        return None
    if _IDENTITY_KEY not in item.stash:
        item.stash[_IDENTITY_KEY] = StartedRun(
            task=agent.spec.id, task_name=agent.spec.name, model=agent.case.model,
            run=agent.case.run, seed=agent.session.seed, nodeid=item.nodeid,
            task_hash=agent.instance.content_hash(),
            transcript=transcript_path(agent.case.model, agent.spec.id, agent.case.run),
            sandbox=sandbox.current().info() if agent.spec.runs_model_code else None,
        )
    return item.stash[_IDENTITY_KEY]


def lost(started_run: StartedRun, cause: str) -> tuple[RunRecord, Transcript]:
    """The record of a run whose process died before it could report: an infra error, kept."""
    record = RunRecord(
        task=started_run["task"], task_name=started_run["task_name"], model=started_run["model"],
        run=started_run["run"], seed=started_run["seed"], nodeid=started_run["nodeid"],
        transcript=started_run["transcript"], task_hash=started_run["task_hash"],
        sandbox=started_run["sandbox"],
        passed=False, failure_mode=FailureMode.INFRA_ERROR.value, tags={"lost": True}, tool_calls=0, turns=0,
        prompt_tokens=0, completion_tokens=0, cost_usd=None, latency_s=0.0, stop_reason="infra_error",
        infra_cause=cause, reason=cause,
    )
    transcript = Transcript(
        **started_run, messages=[], tool_calls=[], final_answer=None, stop_reason="infra_error", passed=False,
        failure_mode=record["failure_mode"], reason=cause, server_refusal=None,
    )
    return record, transcript


def build(item: pytest.Item, report: pytest.TestReport) -> tuple[RunRecord, Transcript] | None:
    """The record and transcript of an agent test's report, or None for other tests."""
    agent = item.stash.get(CONTEXT_KEY, None)
    if agent is None:
        return None
    result = item.stash.get(RESULT_KEY, None)
    passed = report.passed
    if result is None:
        # The test failed before the agent ran: nothing the model did, recorded all the same.
        result = RunResult(stop_reason="not_started", workspace=agent.workspace.root)
        result.infra_error = f"the run did not start: {_reason(report)}"
        passed = False
    mode = classify(result, passed)
    run_tags = tags(result)
    reason = _reason(report)
    if mode is FailureMode.WRONG_ANSWER and report.longrepr is not None:
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None and not crash.message.startswith(("AssertionError", "assert", "Failed")):
            # The checker raised something else than a rejection: flag it, it may be a harness bug.
            run_tags["checker_error"] = crash.message.splitlines()[0][:200]
        elif answerlines.is_format_failure(reason):
            run_tags[answerlines.TAG] = True  # no readable answer line: apart from a wrong value
    identity = started(item)
    assert identity is not None
    record = RunRecord(
        task=identity["task"], task_name=identity["task_name"], model=identity["model"], run=identity["run"],
        seed=identity["seed"], nodeid=identity["nodeid"], transcript=identity["transcript"],
        task_hash=identity["task_hash"], sandbox=identity["sandbox"],
        passed=passed,
        failure_mode=mode.value if mode else None,
        tags=run_tags,
        tool_calls=len(result.tool_calls),
        turns=result.turns,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        cost_usd=result.cost_usd,
        latency_s=round(result.latency_s, 4),
        stop_reason=result.stop_reason,
        infra_cause=result.infra_error,
        reason=reason,
        **economy_of(result),
    )
    transcript = Transcript(
        task=agent.spec.id,
        model=agent.case.model,
        litellm_model=agent.entry.model,
        run=agent.case.run,
        seed=agent.session.seed,
        nodeid=item.nodeid,
        messages=result.messages,
        tool_calls=[ToolCallLog(**c) for c in result.tool_calls],
        final_answer=result.final_answer,
        stop_reason=result.stop_reason,
        server_refusal=result.server_refusal,
        passed=passed,
        failure_mode=record["failure_mode"],
        reason=reason,
    )
    return record, transcript


def junit_properties(record: RunRecord) -> list[tuple[str, Any]]:
    return [
        ("agentic_task", record["task"]),
        ("agentic_model", record["model"]),
        ("agentic_run", record["run"]),
        ("agentic_passed", record["passed"]),
        ("agentic_failure_mode", record["failure_mode"] or ""),
        ("agentic_tags", ",".join(f"{k}={v}" for k, v in sorted(record["tags"].items()))),
        ("agentic_prompt_tokens", record["prompt_tokens"]),
        ("agentic_completion_tokens", record["completion_tokens"]),
        ("agentic_cost_usd", "" if record["cost_usd"] is None else f"{record['cost_usd']:.8f}"),
        ("agentic_tool_calls", record["tool_calls"]),
        # The token economy: "unknown" where the provider reported nothing (or the run gave no answer).
        *((f"agentic_{name}", _known(record.get(name))) for name in ECONOMY_FIELDS),
    ]


def _known(value: Any) -> Any:
    return "unknown" if value is None else value


def make_printable(report: pytest.TestReport) -> None:
    """Escape what an agent test's report quotes of the model before pytest prints it.

    A checker's assertion quotes the answer, and pytest's diff and captured output print it as
    it is: an ANSI sequence in an answer would recolour or clear the terminal. Every string of
    the failure's representation and of the captured sections is made :func:`printable` (lines
    kept, control characters written as escapes); the report keeps its structure.
    """
    report.longrepr = _scrub(report.longrepr, 0)
    report.sections = [(title, printable(text)) for title, text in report.sections]


def _scrub(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return printable(value)
    if depth > 8 or value is None or isinstance(value, (int, float, bool)):
        return value
    if isinstance(value, list):
        return [_scrub(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(_scrub(v, depth + 1) for v in value)
    if internals.is_pytest_object(value):
        for name, attr in list(vars(value).items()):
            setattr(value, name, _scrub(attr, depth + 1))
    return value


def make_concise(report: pytest.TestReport, record: RunRecord, transcript: Mapping[str, Any], transcript_file: str,
                 report_link: str) -> None:
    """Put a failed run's block (``campaign.failureblock``) in place of pytest's traceback of the checker.

    It stays a traceback-shaped representation with a crash line, so pytest's short summary,
    ``--tb=line`` and JUnit's failure message show the run's one-line headline.
    """
    crash = getattr(report.longrepr, "reprcrash", None)
    path, lineno = (crash.path, crash.lineno) if crash is not None else (report.location[0], (report.location[1] or 0) + 1)
    lines = block_lines(record, transcript, transcript_file, report_link)
    report.longrepr = internals.failure_repr(lines, path, lineno, headline(record))
