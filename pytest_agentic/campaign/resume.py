"""Continue an interrupted campaign: read what it has, run only what it lacks, or refuse at start.

A resume continues the same campaign: its models, tasks, runs, seed and benchmark revision. What the
command line leaves out is taken from the campaign (``pytest --agentic-resume=DIR`` alone finishes it);
what it names must agree with the campaign, or the session stops before any run, naming each difference
and what to run instead. A ``-m``/``-k`` may narrow the tasks (the campaign stays incomplete until its
other runs are recorded); a task outside the campaign, or one whose content changed since, is refused.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..run.records import FailureMode, RunRecord
from . import stored
from .format import Manifest

Key = tuple[str, str, int]


def key_of(record: RunRecord) -> Key:
    return (record["model"], record["task"], record["run"])


def load_runs(folder: Path) -> list[RunRecord]:
    """The campaign's records, the last one of each run winning; a torn last line is skipped."""
    try:
        return stored.read_records(folder, resumable=True)
    except stored.CampaignFolderError as exc:
        raise pytest.UsageError(f"--agentic-resume: {exc}") from None


def load_manifest(folder: Path) -> Manifest:
    try:
        return stored.read_manifest(folder, required=True)[0]
    except stored.CampaignFolderError as exc:
        raise pytest.UsageError(f"--agentic-resume: {exc}") from None


def finished(records: list[RunRecord]) -> set[Key]:
    """Runs that need no re-run: every recorded run except those lost to infra errors."""
    return {key_of(r) for r in records if r["failure_mode"] != FailureMode.INFRA_ERROR.value}


def option_text(folder: Path | str) -> str:
    """``--agentic-resume=FOLDER`` as a shell reads it: one word, with ``=`` (pytest takes a separate existing
    path outside the rootdir for a test path, and refuses it)."""
    return shlex.quote(f"--agentic-resume={folder}")


@dataclass(frozen=True)
class Asked:
    """What this session's command line names that a resume must agree with (None: not given)."""

    #: The model entries ``--model`` selects, by name.
    models: list[str] | None
    runs: int | None
    seed: int | None
    shard: tuple[int, int] | None
    #: The harness's benchmark revision.
    revision: int
    #: Today's models.yaml entries of the campaign's models (``ModelEntry.public``), by name; absent: gone.
    entries: dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Resumed:
    """The campaign a session resumes, as its folder says."""

    folder: Path
    manifest: Manifest
    records: list[RunRecord]

    @classmethod
    def read(cls, folder: Path) -> Resumed:
        return cls(folder, load_manifest(folder), load_runs(folder))

    @property
    def option(self) -> str:
        return option_text(self.folder)

    @property
    def models(self) -> list[str]:
        named = [str(m["name"]) for m in self.manifest["models"] if isinstance(m, dict) and m.get("name")]
        return named or sorted({r["model"] for r in self.records})

    @property
    def runs(self) -> int | None:
        runs = self.manifest.get("runs")
        if isinstance(runs, int):
            return runs
        return max((r["run"] for r in self.records), default=None)

    @property
    def seed(self) -> int | None:
        seed = self.manifest.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def shard(self) -> tuple[int, int] | None:
        shard = self.manifest.get("shard")
        return (shard["index"], shard["count"]) if isinstance(shard, dict) else None

    @property
    def tasks(self) -> list[str]:
        """The campaign's tasks: those its session selected, or (written before that was recorded) those it ran."""
        selected = self.manifest["selected_tasks"]
        if selected is not None:
            return sorted(selected)
        return sorted({*self.manifest["tasks"], *(r["task"] for r in self.records)})

    def content_hash(self, task: str) -> str | None:
        """The content hash the campaign recorded for ``task``, or None."""
        described = self.manifest["tasks"].get(task)
        if isinstance(described, dict) and described.get("content_hash"):
            return str(described["content_hash"])
        return next((r["task_hash"] for r in self.records if r["task"] == task and r["task_hash"]), None)

    def plan(self) -> set[Key] | None:
        """Every run the campaign means to have, or None when that cannot be told (a shard: its runs are dealt
        over the whole collection)."""
        if self.shard is not None or self.runs is None:
            return None
        return {(m, t, n) for m in self.models for t in self.tasks for n in range(1, self.runs + 1)}

    def done(self) -> set[Key]:
        return finished(self.records)

    def describe(self) -> str:
        runs = "?" if self.runs is None else self.runs
        return (f"models {', '.join(self.models) or '?'}; tasks {', '.join(self.tasks) or '?'}; {runs} run(s) each; "
                f"seed {'?' if self.seed is None else self.seed}")

    # -- the checks ---------------------------------------------------------------------
    def check(self, asked: Asked) -> None:
        """Stop (a ``UsageError``) when the session asks for another campaign than this one, or it has nothing left."""
        differences = self.differences(asked)
        if differences:
            raise pytest.UsageError(self.refusal(differences))
        plan = self.plan()
        if plan and self.manifest.get("complete") and plan <= self.done():
            raise pytest.UsageError(
                f"{self.option}: the campaign is complete ({len(plan)} runs recorded: {self.describe()}), and "
                f"none was lost to an infra error: nothing to resume. To re-judge it with today's checkers: "
                f"pytest {shlex.quote(f'--agentic-rescore={self.folder}')}; for a new campaign, drop --agentic-resume")

    def differences(self, asked: Asked) -> list[str]:
        out = []
        if asked.models is not None and self.models and sorted(asked.models) != sorted(self.models):
            out.append(f"models: the campaign ran {', '.join(self.models)}; this session asks for "
                       f"{', '.join(asked.models)}")
        for name in self.models:
            recorded = next((m for m in self.manifest["models"] if isinstance(m, dict) and m.get("name") == name), None)
            now = asked.entries.get(name)
            if now is None:
                out.append(f"models: {name} is no longer an entry of the models file")
            elif recorded is not None:
                changed = [k for k in ("model", "params") if k in recorded and recorded[k] != now.get(k)]
                if changed:
                    out.append(f"models: the entry {name} changed since ({', '.join(changed)}: "
                               f"{', '.join(f'{recorded[k]!r} then, {now.get(k)!r} now' for k in changed)})")
        if asked.runs is not None and self.runs is not None and asked.runs != self.runs:
            out.append(f"runs: the campaign runs {self.runs} per task and model; this session asks for {asked.runs}")
        if asked.seed is not None and self.seed is not None and asked.seed != self.seed:
            out.append(f"seed: the campaign used seed {self.seed}; this session seed {asked.seed}")
        if asked.shard != self.shard and (asked.shard is not None or self.shard is not None):
            def shard(s: tuple[int, int] | None) -> str:
                return "no shard" if s is None else f"shard {s[0]}/{s[1]}"
            out.append(f"shard: the campaign is {shard(self.shard)}; this session {shard(asked.shard)}")
        revision = self.manifest["benchmark_revision"]
        if revision is not None and revision != asked.revision:
            out.append(f"revision: the campaign ran benchmark revision {revision}; this harness has revision "
                       f"{asked.revision}, whose tasks differ")
        return out

    def check_tasks(self, selected: dict[str, str | None], narrowed: bool) -> list[str]:
        """The differences of the tasks a session selected (task id: its content hash today) from the campaign's:
        a task outside it (only when ``-m``/``-k`` named it: else the caller drops it), or one changed since."""
        out = []
        outside = sorted(set(selected) - set(self.tasks))
        if outside and narrowed:
            out.append(f"tasks: the campaign ran {', '.join(self.tasks)}; this session selects "
                       f"{', '.join(outside)}, which it has not")
        for task in sorted(set(selected) & set(self.tasks)):
            then, now = self.content_hash(task), selected[task]
            if then and now and then != now:
                out.append(f"tasks: {task} changed since the campaign (its content hash was {then[:12]}, "
                           f"is {now[:12]}): its remaining runs would run another task")
        return out

    def refusal(self, differences: list[str]) -> str:
        lines = "".join(f"\n  - {d}" for d in differences)
        return (f"{self.option}: this session is not the campaign it resumes ({self.describe()}):{lines}\n"
                f"A resume takes the campaign's models, tasks, runs and seed: finish it with "
                f"pytest {self.option} (from the project folder, with no --model, --runs, -m or --agentic-seed "
                f"that differ), or drop --agentic-resume to start a new campaign with these settings.")
