"""The campaign folder's format: its version, the manifest's shape, and how older folders are brought up.

A campaign folder holds ``campaign.json`` (the manifest, :class:`Manifest`), ``runs.jsonl`` (one
``run.records.RunRecord`` a line) and ``transcripts/`` (one ``run.records.Transcript`` a run).
``campaign.json`` says which version of this format wrote it (``format_version``).

Versions:

- **0**: folders written before ``format_version`` existed (no such key). They come in the shapes
  of the harness's earlier releases, all read: the first writer's (no ``benchmark_revision``,
  ``overall``, ``sandbox`` or ``pacing`` in the manifest, no ``sandbox`` in records, no
  ``server_refusal`` in transcripts), and benchmark revision 2's and 3's (``benchmark_revision``),
  each with and without the records' ``sandbox`` and the transcripts' ``server_refusal`` (those
  came on branches merged alongside revision 3). ``tests/legacy.py`` writes each shape.
- **1**: the current format: the typed records of ``run/records.py`` and ``format_version: 1``.

Adding a key needs no new version: a reader of this version ignores keys it does not know, and
an older folder lacks the key, so give it a default below (None: unknown, never a made-up 0).
Renaming or removing a key, or changing what one means, is a new version: bump
:data:`FORMAT_VERSION` and bring the older shape up in :func:`upgrade_record`,
:func:`upgrade_transcript` or :func:`upgrade_manifest`. A folder of a newer version than this
harness knows is refused by the reader (``campaign/stored.py``), naming the file and the version.

These functions are pure (dict in, typed dict out, the input untouched) and idempotent; the one
reader, ``campaign/stored.py``, applies them to every record, transcript and manifest it reads.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from ..run.records import RunRecord, Transcript

#: The version of the campaign format this harness writes (``campaign.json``'s ``format_version``).
FORMAT_VERSION = 1

#: The version of a folder whose ``campaign.json`` has no ``format_version`` (or that has no ``campaign.json``).
UNVERSIONED = 0

#: Run-record keys an older writer did not write, and what they are read as (None: unknown).
RECORD_DEFAULTS: dict[str, Any] = {
    "task_hash": None,  # every writer wrote it (None for a run lost before its instance was built)
    "sandbox": None,  # records written before the sandbox (the first writer, revision 2, early revision 3)
    "task_name": "",
    "seed": 0,
    "nodeid": "",
    "tags": {},
    "tool_calls": 0,
    "turns": 0,
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "cost_usd": None,
    "latency_s": 0.0,
    "stop_reason": "",
    "infra_cause": None,
    "reason": None,
    "transcript": "",
}

#: Transcript keys an older writer did not write, and what they are read as.
TRANSCRIPT_DEFAULTS: dict[str, Any] = {
    "messages": [],
    "tool_calls": [],
    "final_answer": None,
    "stop_reason": "",
    "server_refusal": None,  # transcripts written before server refusals were judged
    "passed": False,
    "failure_mode": None,
    "reason": None,
}

#: Manifest keys an older writer did not write, and what they are read as.
MANIFEST_DEFAULTS: dict[str, Any] = {
    "benchmark_revision": None,  # the first writer: before revision 2
    "models": [],
    "tasks": {},
    "resumed_at": [],
    "notes": [],
    "budget_skipped": 0,
    "selected_tasks": None,  # campaigns written before it was recorded: unknown (a resume takes the tasks run)
    "sandbox": None,  # campaigns written before the sandbox (the first writer, revision 2, early revision 3)
    "callbacks": [],  # campaigns written before litellm callbacks could be named: none was
    "call_route": None,  # campaigns written before it was recorded: unknown (the OpenAI SDK was then the only route)
    "sessions": [],  # campaigns written before it was kept: one session is read from the top-level keys (campaign/sessions.py)
}


class SessionInfo(TypedDict):
    """One session that wrote a campaign (``campaign.json``'s ``sessions``, oldest first: ``campaign/sessions.py``)."""

    #: When it began (the campaign's ``started_at``, or the ``resumed_at`` entry of a resume).
    started_at: str
    #: False for the session that began the campaign, True for a resume.
    resumed: bool
    harness_version: str
    litellm_version: str | None
    #: As the manifest's ``call_route``.
    call_route: str | None
    xdist_workers: int | str | None
    #: The run records it added; None when unknown (a folder written before ``sessions`` was kept).
    runs_added: int | None


class Manifest(TypedDict, total=False):
    """``campaign.json``: what is needed to reproduce and audit a campaign.

    Read through ``campaign/stored.py``, the keys of :data:`MANIFEST_DEFAULTS` and
    ``format_version`` are always present; the others are as the writer wrote them.
    """

    #: The version of this format the folder was written in (:data:`FORMAT_VERSION`).
    format_version: int
    campaign_id: str
    benchmark: str
    #: The benchmark revision (``run.task.BENCHMARK_REVISION``); None before revision 2.
    benchmark_revision: int | None
    harness_version: str
    litellm_version: str | None
    models_file: str
    #: Each model's ``models.yaml`` entry as recorded (``ModelEntry.public``).
    models: list[dict[str, Any]]
    runs: int
    seed: int
    concurrency: int | None
    #: How model-written code was contained (``session.sandbox_info``), or None before the sandbox.
    sandbox: dict[str, Any] | None
    #: The litellm callbacks that heard every model call (models.yaml's ``callbacks:`` or ``--agentic-callback``):
    #: their names only, never a credential.
    callbacks: list[str]
    #: The transport of the ``openai/`` model calls (``run.calls.route``): "openai-sdk" or "litellm-http";
    #: None when no model answered over HTTP, or in a campaign written before it was recorded.
    call_route: str | None
    #: Every session that wrote the campaign, oldest first. ``harness_version``, ``litellm_version`` and
    #: ``call_route`` above are the first session's: a resume adds an entry and rewrites none.
    sessions: list[SessionInfo]
    #: Per task run: its name, seed and ``content_hash``.
    tasks: dict[str, dict[str, Any]]
    #: The tasks the session selected (run or not yet), sorted; None when unknown (written before it was kept).
    #: A resume takes them as the campaign's tasks.
    selected_tasks: list[str] | None
    command_line: list[str]
    invocation_params: list[str]
    started_at: str
    resumed_at: list[str]
    finished_at: str | None
    complete: bool
    runs_recorded: int
    overall: dict[str, Any]
    notes: list[str]
    budget_usd: float | None
    budget_skipped: int
    servers: dict[str, Any]
    pacing: dict[str, Any]
    machine: dict[str, Any]
    packages: dict[str, Any]
    pytest_version: str
    xdist_workers: int | str | None
    #: A shard campaign's place (``--agentic-shard K/N``), None in a merged one.
    shard: dict[str, int] | None
    #: A merged campaign's shards (``agentic-merge``).
    shards: list[dict[str, Any]]
    merged_at: str
    #: A rescore's source (``--agentic-rescore``).
    rescore_of: str
    rescore_source: str
    replayed_through: str
    #: The verdicts (``verdicts/wiring.py``).
    compared_with: dict[str, Any]
    predictions: dict[str, Any]
    gates: dict[str, Any]


def version_of(raw: dict[str, Any]) -> int | None:
    """The ``format_version`` a manifest declares: :data:`UNVERSIONED` when absent, None when not an int."""
    value = raw.get("format_version", UNVERSIONED)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def upgrade_record(raw: dict[str, Any]) -> RunRecord:
    """A run record of any known version, as the current :class:`RunRecord` (a new dict)."""
    record = {**{k: (v.copy() if isinstance(v, dict) else v) for k, v in RECORD_DEFAULTS.items()}, **raw}
    return cast(RunRecord, record)


def upgrade_transcript(raw: dict[str, Any]) -> Transcript:
    """A transcript of any known version, as the current :class:`Transcript` (a new dict)."""
    transcript = {**{k: (list(v) if isinstance(v, list) else v) for k, v in TRANSCRIPT_DEFAULTS.items()}, **raw}
    return cast(Transcript, transcript)


def upgrade_manifest(raw: dict[str, Any]) -> Manifest:
    """A manifest of any known version, as the current :class:`Manifest` (a new dict)."""
    fresh = {k: (v.copy() if isinstance(v, (dict, list)) else v) for k, v in MANIFEST_DEFAULTS.items()}
    return cast(Manifest, {**fresh, **raw, "format_version": FORMAT_VERSION})


__all__ = ["FORMAT_VERSION", "Manifest", "SessionInfo", "UNVERSIONED", "upgrade_manifest", "upgrade_record",
           "upgrade_transcript", "version_of"]
