"""The campaign: the controller gathers run records and writes the campaign folder."""

from __future__ import annotations

import csv
import datetime as dt
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Protocol

import pytest

from .._version import __version__
from . import economy, provenance, sessions, tables
from .durable import GroupSync
from .format import FORMAT_VERSION, SessionInfo
from .pacing import PacingLog
from ..run.records import RunRecord, Transcript
from ..run.redact import redact
from .summary import consistency_markdown, summary_markdown
from ..run.task import BENCHMARK_REVISION


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _sort_key(record: RunRecord) -> tuple[Any, ...]:
    return (record["model"], record["task"], record["run"])


class CampaignSettings(Protocol):
    """What the writer needs to know of the session (the integration's ``AgenticSession`` is one)."""

    config: pytest.Config
    runs: int
    seed: int
    budget: float | None
    out_dir: Path
    resume_dir: Path | None
    replay: Any

    @property
    def secrets(self) -> list[str]: ...
    shard: tuple[int, int] | None

    def selected_models(self) -> list[Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def call_route(self) -> str | None: ...


class Campaign:
    """Written by the controller only; created on the first run record."""

    def __init__(self, session: CampaignSettings) -> None:
        self.session = session
        self.started_at = _now()
        self.finished_at: str | None = None
        self.records: list[RunRecord] = []
        #: Records this session added (a resumed campaign's earlier ones are not counted).
        self.added = 0
        self._seen: set[tuple[str, str, int]] = set()
        #: runs.jsonl's fsyncs, off the thread that appends (``durable``); folders made for transcripts.
        self._sync: GroupSync | None = None
        self._folders: set[Path] = set()
        self.path: Path | None = None
        self.complete = False
        self.resumed_at: list[str] = []
        #: Sentences for the summary (budget spent, endpoint down, ...), set by the controller.
        self.notes: list[str] = []
        #: Local model servers of this session, by model entry (set by the controller).
        self.servers: dict[str, dict[str, Any]] = {}
        #: Runs skipped because the campaign budget was spent (set by the controller).
        self.budget_skipped = 0
        #: How each model's concurrency limit moved (fed by the controller from the reports).
        self.pacing = PacingLog()
        #: The tasks the session selected (reported by the processes that collected), or None when unknown.
        self.selected_tasks: set[str] | None = None
        #: The sessions that wrote the campaign before this one (a resume's; ``campaign.sessions``).
        self.earlier_sessions: list[SessionInfo] = []
        if session.resume_dir is not None:
            from .resume import load_manifest, load_runs

            manifest = load_manifest(session.resume_dir)
            self.path = session.resume_dir
            self.started_at = manifest.get("started_at", self.started_at)
            self.resumed_at = [*manifest["resumed_at"], _now()]
            self.earlier_sessions = sessions.earlier(manifest)
            self.records = load_runs(session.resume_dir)
            selected = manifest["selected_tasks"]
            self.selected_tasks = set(selected) if selected is not None else None
        #: Comparison, predictions, rescore and gates (set by the controller); None in plain use.
        self.verdicts: Any = None

    # -- gathering ------------------------------------------------------------
    def add(self, record: RunRecord, transcript: Transcript) -> None:
        path = self.ensure_folder()
        # A second net under the fixture's: nothing written carries a credential.
        record = redact(record, self.session.secrets)
        transcript = redact(transcript, self.session.secrets)
        # One record per run: a re-run (after an infra error, on resume) replaces the earlier one.
        key = (record["model"], record["task"], record["run"])
        if key in self._keys():  # rare: a scan; the common case costs O(1), not O(runs) (a quadratic campaign)
            self.records = [r for r in self.records if (r["model"], r["task"], r["run"]) != key]
        self.records.append(record)
        self.added += 1
        self._seen.add(key)
        target = path / record["transcript"]
        if target.parent not in self._folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(target.parent)
        target.write_text(json.dumps(transcript, indent=1, default=str), encoding="utf-8")
        # Written as soon as the run ends, so an interrupted session keeps it: once the file is closed the
        # line is the kernel's; the fsync that keeps it through a crash of the machine runs on a thread.
        jsonl = path / "runs.jsonl"
        with jsonl.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
        if self._sync is None:
            self._sync = GroupSync(jsonl)
        self._sync.written()

    def sync(self) -> None:
        """Wait until every record appended is on disk (``finish`` does; so may a caller that ends early)."""
        if self._sync is not None:
            sync, self._sync = self._sync, None
            sync.close()

    def select_tasks(self, tasks: list[str]) -> None:
        """Tasks a process's collection selected (each process that runs items says so once)."""
        self.selected_tasks = {*(self.selected_tasks or ()), *tasks}

    def _keys(self) -> set[tuple[str, str, int]]:
        """The (model, task, run) of every record, kept beside ``records`` (rebuilt if it was replaced)."""
        if len(self._seen) != len(self.records):
            self._seen = {(r["model"], r["task"], r["run"]) for r in self.records}
        return self._seen

    def ensure_folder(self) -> Path:
        """The campaign folder, created (with its manifest) on first need."""
        if self.path is None:
            self.path = self._new_folder()
            self.write_manifest()
        return self.path

    def _new_folder(self) -> Path:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        # A variant's id (NAME[LABEL]) is written without the brackets a shell would glob.
        models = re.sub(r"[^A-Za-z0-9._+-]+", "_", "+".join(e.name for e in self.session.selected_models()))[:80]
        if self.session.replay is not None:
            models = f"rescore-{models}"
        base = f"{stamp}-{models}"
        if self.session.shard is not None:
            base += f"-shard{self.session.shard[0]}of{self.session.shard[1]}"
        self.session.out_dir.mkdir(parents=True, exist_ok=True)
        for n in range(1, 1000):
            candidate = self.session.out_dir / (base if n == 1 else f"{base}-{n}")
            try:
                candidate.mkdir()
                return candidate
            except FileExistsError:
                continue
        raise RuntimeError(f"cannot create a campaign folder under {self.session.out_dir}")

    # -- writing --------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        tasks: dict[str, Any] = {}
        for r in sorted(self.records, key=_sort_key):
            tasks.setdefault(r["task"], {"name": r["task_name"], "seed": r["seed"],
                                         "content_hash": r["task_hash"]})
        assert self.path is not None
        written_by = self.written_by()
        return {
            "format_version": FORMAT_VERSION,
            "campaign_id": self.path.name,
            "benchmark": "agentic-core-v1",
            "benchmark_revision": BENCHMARK_REVISION,
            **self.session.describe(),
            "tasks": tasks,
            "selected_tasks": sorted(self.selected_tasks) if self.selected_tasks is not None else None,
            "command_line": [Path(sys.argv[0]).name, *sys.argv[1:]],
            "invocation_params": list(self.session.config.invocation_params.args),
            "started_at": self.started_at,
            "resumed_at": self.resumed_at,
            "finished_at": self.finished_at,
            "complete": self.complete,
            "runs_recorded": len(self.records),
            # Per model: the overall pass rate, its task-clustered 95% interval and the design's power.
            "overall": {model: {**est.as_dict(), "power": power.as_dict()}
                        for model, (est, power) in tables.overall_by_model(self.records).items()},
            "notes": self.notes,
            "budget_usd": self.session.budget,
            "budget_skipped": self.budget_skipped,
            "servers": self.servers,
            "pacing": self.pacing.as_dict(),
            "machine": provenance.machine(),
            "packages": provenance.packages(),
            "pytest_version": pytest.__version__,
            "xdist_workers": getattr(self.session.config.option, "numprocesses", None),
            **(self.verdicts.manifest() if self.verdicts is not None else {}),
            # Last: what the campaign was measured with is the first session's; every session is listed.
            "sessions": written_by,
            **sessions.measured_with(written_by),
        }

    def written_by(self) -> list[SessionInfo]:
        """The sessions that wrote the campaign, this one last."""
        this = SessionInfo(started_at=self.resumed_at[-1] if self.resumed_at else self.started_at,
                           resumed=bool(self.resumed_at), harness_version=__version__,
                           litellm_version=_litellm_version(), call_route=self.session.call_route(),
                           xdist_workers=getattr(self.session.config.option, "numprocesses", None),
                           runs_added=self.added)
        return [*self.earlier_sessions, this]

    def session_notes(self) -> list[str]:
        """Where the sessions that wrote the campaign ran under different releases or call routes."""
        return sessions.differences(self.written_by()) if self.earlier_sessions else []

    def write_manifest(self) -> None:
        assert self.path is not None
        tmp = self.path / "campaign.json.tmp"
        manifest = redact(self.manifest(), self.session.secrets)
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str), encoding="utf-8")
        tmp.replace(self.path / "campaign.json")

    def finish(self, complete: bool) -> None:
        if self.path is None:
            return
        self.sync()
        self.finished_at = _now()
        self.complete = complete
        sections = self.verdicts.sections(sorted(self.records, key=_sort_key)) if self.verdicts is not None else []
        sections = [*sections, *filter(None, [self.pacing.section()])]
        write_artefacts(self.path, self.records, runs=self.session.runs, seed=self.session.seed,
                        complete=self.complete, started_at=self.started_at, finished_at=self.finished_at,
                        notes=self.notes, sections=sections)
        self.write_manifest()


@functools.cache
def _litellm_version() -> str | None:
    """The installed litellm's release (read once: the package metadata is looked up on disk)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("litellm")
    except PackageNotFoundError:
        return None


def write_artefacts(path: Path, records: list[RunRecord], *, runs: int, seed: int, complete: bool,
                    started_at: str, finished_at: str | None, notes: list[str],
                    sections: list[tuple[str, str]]) -> None:
    """runs.jsonl in a stable order, the tables and summary.md (all but the manifest)."""
    records = sorted(records, key=_sort_key)
    # Rewritten in a stable order, so plain, xdist and merged shard sessions give the same file: beside it,
    # on disk, then renamed over it, so a session killed meanwhile leaves the old file or the new, whole.
    fresh = path / "runs.jsonl.tmp"
    with fresh.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(fresh, path / "runs.jsonl")
    max_k = max((runs, 1))
    _csv(path / "pass_rate_by_task.csv", tables.pass_rate_by_task(records, max_k))
    _csv(path / "failure_mode_histogram.csv", tables.failure_mode_histogram(records))
    _csv(path / "tool_calls_by_task.csv", tables.tool_calls_by_task(records))
    _csv(path / "cost_breakdown.csv", tables.cost_breakdown(records))
    _csv(path / "token_economy.csv", economy.token_economy(records))
    (path / "cross_task_consistency.md").write_text(consistency_markdown(records), encoding="utf-8")
    summary = summary_markdown(records, campaign_id=path.name, seed=seed, runs=runs, complete=complete,
                               started_at=started_at, finished_at=finished_at, notes=notes, sections=sections)
    (path / "summary.md").write_text(summary, encoding="utf-8")


#: The most bytes appended to ``GITHUB_STEP_SUMMARY`` (GitHub refuses a step summary over 1 MiB).
STEP_SUMMARY_MAX = 900_000


def append_step_summary(folder: Path, target: str | None = None) -> Path | None:
    """Append the campaign's summary.md to GitHub Actions' job summary, when ``GITHUB_STEP_SUMMARY`` names
    a file (or ``target`` does): the pull request's check page then shows the verdict, the tables and the
    frontier without opening an artefact. Returns the file appended to, or None."""
    target = target if target is not None else os.environ.get("GITHUB_STEP_SUMMARY")
    summary = folder / "summary.md"
    if not target or not summary.is_file():
        return None
    text = summary.read_text(encoding="utf-8")
    if len(text.encode("utf-8")) > STEP_SUMMARY_MAX:
        text = text.encode("utf-8")[:STEP_SUMMARY_MAX].decode("utf-8", "ignore")
        text += f"\n\n_(cut at {STEP_SUMMARY_MAX} bytes; the whole summary is summary.md in the campaign folder)_\n"
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(("\n" if fh.tell() else "") + text + "\n")
    return Path(target)


def _csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        if not rows:
            return
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})


__all__ = ["Campaign", "append_step_summary", "markdown_table", "write_artefacts"]
