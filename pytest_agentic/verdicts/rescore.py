"""Rescoring: re-judge a stored campaign's transcripts with the current checkers, calling no model.

Under ``--agentic-rescore PATH`` the plugin parametrizes each task over the
(model, run) items of the stored campaign, and every model entry becomes the
scripted model ``agentic-scripted/replay``: it plays back the recorded
assistant messages, so the recorded tool calls rebuild the workspace through
the same agent loop and tools, and the task's current checker judges the
result. The new campaign's records keep every spend field of the original (``run.records.SPEND_FIELDS``:
tokens, tokens per turn, cost, turns, seconds: what producing the transcript spent), say what the original verdict was, and
count the tool calls whose replayed result differs from the recorded one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from ..campaign import stored
from ..run.models import ModelEntry
from ..run.records import SPEND_FIELDS, OriginalVerdict, RunRecord, Transcript
from ..run.scripted import PROVIDER, Fault
from ..run.task import BENCHMARK_REVISION, Final, Solution, ToolCall
from .revisions import name as revision_name, of as revision_of

REPLAY_MODEL = f"{PROVIDER}/replay"


class RescoreError(ValueError):
    """A stored campaign that cannot be rescored."""


def solution_of(transcript: Transcript) -> Solution:
    """The recorded assistant turns of a run, as a script the replay model plays."""
    steps: list[Any] = []
    for message in transcript["messages"]:
        if message["role"] != "assistant":
            continue
        calls = message.get("tool_calls") or []
        if calls:
            steps.append([ToolCall(c["function"]["name"], {}, raw_arguments=c["function"].get("arguments") or "")
                          for c in calls])
        else:
            steps.append(Final(message.get("content") or ""))
    stop = transcript["stop_reason"]
    refusal = transcript["server_refusal"]
    if stop in ("infra_error", "not_started"):
        # The run was lost to the endpoint: replay it up to there, then lose it again (never judged).
        steps.append(Fault(f"replayed infra error ({stop})"))
    elif stop == "server_refusal" and isinstance(refusal, dict):
        # The server refused what the model wrote: refused again in its words, judged the same way.
        steps.append(Fault(str(refusal.get("message") or "")))
    elif stop == "truncated" and steps:
        # The cut final message was no answer; without it the replay ends without one too.
        steps.pop()
    return steps


class Replay:
    """A stored campaign, ready to be replayed."""

    def __init__(self, path: str | Path) -> None:
        try:
            self.campaign = stored.load(path)
        except stored.CampaignFolderError as exc:
            raise RescoreError(f"--agentic-rescore: {exc}") from None
        if not self.campaign.records:
            raise RescoreError(f"--agentic-rescore: {self.campaign.path}: the campaign has no runs")
        self._records = {(r["task"], r["model"], r["run"]): r for r in self.campaign.records}
        seeds = {r["seed"] for r in self.campaign.records}
        if len(seeds) != 1:
            raise RescoreError(f"--agentic-rescore: {self.campaign.path}: runs of several seeds {sorted(seeds)}")
        self.seed: int = seeds.pop()
        self.runs = max(r["run"] for r in self.campaign.records)
        recorded = {m.get("name"): m for m in self.campaign.manifest["models"] if isinstance(m, dict)}
        self.recorded_models = [recorded.get(name, {"name": name}) for name in self.campaign.models]
        self.entries = {
            m["name"]: ModelEntry(name=m["name"], model=REPLAY_MODEL,
                                  price={"input_per_token": 0.0, "output_per_token": 0.0},
                                  limits=dict(m.get("limits") or {}),
                                  description=f"replay of {m.get('model', m['name'])} from {self.campaign.id}")
            for m in self.recorded_models
        }

    @property
    def id(self) -> str:
        return self.campaign.id

    def restrict(self, names: list[str]) -> None:
        """Replay only these models' runs (``--model``); ``all`` keeps every one."""
        if not names or "all" in names:
            return
        unknown = [n for n in names if n not in self.entries]
        if unknown:
            raise RescoreError(f"--model {', '.join(unknown)}: not in the rescored campaign {self.id} "
                               f"(its models: {', '.join(self.entries)})")
        self.entries = {n: e for n, e in self.entries.items() if n in names}
        self.recorded_models = [m for m in self.recorded_models if m["name"] in names]
        self._records = {k: r for k, r in self._records.items() if k[1] in names}

    def cases(self, task: str) -> list[tuple[str, int]]:
        """The (model, run) items of ``task`` in the stored campaign."""
        return sorted((m, r) for (t, m, r) in self._records if t == task)

    def original(self, task: str, model: str, run: int) -> RunRecord:
        return self._records[(task, model, run)]

    def solution(self, task: str, model: str, run: int) -> Solution:
        return solution_of(self.campaign.transcript(self.original(task, model, run)))

    def annotate(self, record: RunRecord, transcript: Transcript) -> None:
        """Make a replayed run's record say where it came from (in place)."""
        old = self.original(record["task"], record["model"], record["run"])
        # What producing the transcript spent, not what replaying it did: every spend field, as stored (a field
        # the stored record lacks, written before it existed, stays unknown rather than the replay's figure).
        spent, stored_spend = cast(dict[str, Any], record), cast(dict[str, Any], old)
        for field in SPEND_FIELDS:
            if field in stored_spend:
                spent[field] = stored_spend[field]
            else:
                spent.pop(field, None)
        recorded = self.campaign.transcript(old)
        recorded_calls, replayed = recorded["tool_calls"], transcript["tool_calls"]
        divergent = sum(1 for a, b in zip(recorded_calls, replayed, strict=False)
                        if (a.get("name"), a.get("result")) != (b.get("name"), b.get("result")))
        divergent += abs(len(recorded_calls) - len(replayed))
        record["tags"] = {**record["tags"], "replay_divergent_calls": divergent}
        if old["task_hash"] and record["task_hash"] and old["task_hash"] != record["task_hash"]:
            # The task's prompt, files or expected values changed since: the replay acts on today's instance.
            record["tags"]["task_changed"] = True
        if _prompt(recorded) not in (None, _prompt(transcript)):
            # The recorded replies answer another prompt than today's (another form of answer, say).
            record["tags"]["prompt_changed"] = True
        if record["infra_cause"] and old["infra_cause"]:
            record["infra_cause"] = f"(replayed) {old['infra_cause']}"
        record["rescore_of"] = self.id
        record["original"] = OriginalVerdict(passed=old["passed"], failure_mode=old["failure_mode"])
        transcript["rescore_of"] = self.id
        transcript["litellm_model"] = REPLAY_MODEL

    def describe(self) -> dict[str, Any]:
        return {"rescore_of": self.id, "rescore_source": str(self.campaign.path),
                "replayed_through": REPLAY_MODEL, "models": self.recorded_models}


def _prompt(transcript: Transcript) -> str | None:
    """The task prompt a transcript's model was given (its first user message), or None."""
    return next((m["content"] for m in transcript["messages"] if m["role"] == "user"), None)


def prompt_note(replay: Replay, records: list[RunRecord]) -> str | None:
    """The note, once per rescore, that the rescored runs answered other prompts than today's; or None."""
    tasks = sorted({r["task"] for r in records if r["tags"].get("prompt_changed")})
    if not tasks:
        return None
    then = revision_name(revision_of(replay.campaign.manifest))
    return (f"the rescored campaign {replay.id!r} ({then}) gave its models other prompts than today's (revision "
            f"{BENCHMARK_REVISION}) for {', '.join(tasks)}: its replies answer those prompts and are judged by "
            "today's contract, so a reply without today's answer lines fails as wrong_answer (tag answer_format)")


def changed_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in records:
        old = r.get("original")
        if old is None:
            continue
        if old["passed"] != r["passed"] or old["failure_mode"] != r["failure_mode"]:
            rows.append({"model": r["model"], "task": r["task"], "run": r["run"],
                         "then": old["failure_mode"] or "passed", "now": r["failure_mode"] or "passed",
                         "divergent calls": r["tags"].get("replay_divergent_calls", 0)})
    return rows


def markdown(replay: Replay, records: list[RunRecord]) -> str:
    from ..campaign.summary import markdown_table

    rescored: list[dict[str, Any]] = [dict(r) for r in records if r.get("rescore_of")]
    old_passes = sum(1 for r in rescored if r["original"]["passed"])
    new_passes = sum(1 for r in rescored if r["passed"])
    divergent = sum(1 for r in rescored if r["tags"].get("replay_divergent_calls"))
    changed_tasks = sorted({r["task"] for r in rescored if r["tags"].get("task_changed")})
    parts = [f"Rescore of `{replay.id}` ({len(rescored)} of its {len(replay.campaign.records)} runs replayed, "
             f"no model called): {old_passes} passes then, {new_passes} now with the current checkers. "
             f"{divergent} run(s) whose replayed tool results differ from the recorded ones.\n\n"]
    if changed_tasks:
        parts.append(f"Changed since the campaign (content hash differs; the recorded calls were replayed on "
                     f"today's instance): {', '.join(changed_tasks)}.\n\n")
    rows = changed_rows(rescored)
    parts.append(markdown_table(rows) if rows else "No run changed its verdict.\n")
    return "".join(parts)

