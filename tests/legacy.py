"""Campaign folders in the shapes earlier releases wrote, before campaign.json had a ``format_version``.

Each shape is the set of keys that release's writer put in campaign.json, in each runs.jsonl
record and in each transcript, read from the project's history:

- ``first``: the first campaign writer (commit e0748e7, ``pytest_agentic/campaign.py`` and
  ``outcome.py``): no benchmark revision, no sandbox, no server refusals;
- ``revision2``: benchmark revision 2 (commit 6e52515): the manifest names the revision, its notes,
  budget and packages; records and transcripts as in ``first``;
- ``revision2_sandbox``: revision 2 on the sandbox's branch (commit fcb8ec8): records and manifest
  say how model code was contained (``sandbox``), the manifest has its overall estimates;
- ``revision3_early``: benchmark revision 3 as first written (commit 3f9d80c, on a branch without
  the sandbox or server refusals): no ``sandbox`` anywhere, no ``server_refusal``;
- ``revision3``: revision 3 once the branches met, up to format version 1: records with
  ``sandbox``, transcripts with ``server_refusal``, the manifest with pacing; no ``format_version``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORD_KEYS = {
    "first": ("task", "task_name", "model", "run", "seed", "nodeid", "passed", "failure_mode", "tags", "tool_calls",
              "turns", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "stop_reason", "infra_cause",
              "reason", "transcript", "task_hash"),
}
RECORD_KEYS["revision2"] = RECORD_KEYS["revision3_early"] = RECORD_KEYS["first"]
RECORD_KEYS["revision2_sandbox"] = RECORD_KEYS["revision3"] = (*RECORD_KEYS["first"], "sandbox")

TRANSCRIPT_KEYS = {
    "first": ("task", "model", "litellm_model", "run", "seed", "nodeid", "messages", "tool_calls", "final_answer",
              "stop_reason", "passed", "failure_mode", "reason"),
}
TRANSCRIPT_KEYS["revision2"] = TRANSCRIPT_KEYS["revision2_sandbox"] = TRANSCRIPT_KEYS["first"]
TRANSCRIPT_KEYS["revision3_early"] = TRANSCRIPT_KEYS["first"]
TRANSCRIPT_KEYS["revision3"] = (*TRANSCRIPT_KEYS["first"], "server_refusal")

MANIFEST_KEYS = {
    "first": ("campaign_id", "benchmark", "harness_version", "litellm_version", "models_file", "models", "runs",
              "seed", "tasks", "command_line", "invocation_params", "started_at", "finished_at", "complete",
              "runs_recorded", "machine"),
    "revision2": ("campaign_id", "benchmark", "benchmark_revision", "harness_version", "litellm_version",
                  "models_file", "models", "runs", "seed", "tasks", "command_line", "invocation_params", "started_at",
                  "resumed_at", "finished_at", "complete", "runs_recorded", "notes", "budget_usd", "servers",
                  "machine", "packages", "pytest_version", "xdist_workers"),
    "revision2_sandbox": ("campaign_id", "benchmark", "benchmark_revision", "harness_version", "litellm_version",
                          "models_file", "models", "runs", "seed", "concurrency", "sandbox", "tasks", "command_line",
                          "invocation_params", "started_at", "resumed_at", "finished_at", "complete",
                          "runs_recorded", "overall", "notes", "budget_usd", "budget_skipped", "servers", "machine",
                          "packages", "pytest_version", "xdist_workers"),
    "revision3_early": ("campaign_id", "benchmark", "benchmark_revision", "harness_version", "litellm_version",
                        "models_file", "models", "runs", "seed", "concurrency", "tasks", "command_line",
                        "invocation_params", "started_at", "resumed_at", "finished_at", "complete", "runs_recorded",
                        "overall", "notes", "budget_usd", "budget_skipped", "servers", "machine", "packages",
                        "pytest_version", "xdist_workers"),
    "revision3": ("campaign_id", "benchmark", "benchmark_revision", "harness_version", "litellm_version",
                  "models_file", "models", "runs", "seed", "concurrency", "sandbox", "tasks", "command_line",
                  "invocation_params", "started_at", "resumed_at", "finished_at", "complete", "runs_recorded",
                  "overall", "notes", "budget_usd", "budget_skipped", "servers", "pacing", "machine", "packages",
                  "pytest_version", "xdist_workers"),
}
REVISION = {"first": None, "revision2": 2, "revision2_sandbox": 2, "revision3_early": 3, "revision3": 3}
SHAPES = tuple(MANIFEST_KEYS)


def shaped(shape: str, kind: str, full: dict[str, Any]) -> dict[str, Any]:
    """``full`` (as the current writer writes it, or richer) with only the keys ``shape``'s writer wrote.

    A key that writer wrote and ``full`` lacks is an error: the fixture would not be that shape.
    """
    keys = {"record": RECORD_KEYS, "transcript": TRANSCRIPT_KEYS, "manifest": MANIFEST_KEYS}[kind][shape]
    missing = [k for k in keys if k not in full]
    assert not missing, f"{kind} for shape {shape} lacks {missing}"
    out = {k: full[k] for k in keys}
    if kind == "manifest" and REVISION[shape] is not None:
        out["benchmark_revision"] = REVISION[shape]
    return out


def full_manifest(campaign_id: str, records: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A manifest with every key any earlier writer wrote, consistent with ``records``."""
    tasks = {}
    for r in records:
        tasks.setdefault(r["task"], {"name": r["task_name"], "seed": r["seed"], "content_hash": r["task_hash"]})
    models = sorted({r["model"] for r in records})
    return {
        "campaign_id": campaign_id, "benchmark": "agentic-core-v1", "benchmark_revision": 3,
        "harness_version": "0.1.0", "litellm_version": "1.106.2", "models_file": "models.yaml",
        "models": [{"name": m, "model": "agentic-scripted/oracle", "params": {}, "limits": {}} for m in models],
        "runs": max(r["run"] for r in records), "seed": 0, "concurrency": None,
        "sandbox": {"choice": "auto", "kind": None, "version": None}, "tasks": tasks,
        "command_line": ["pytest"], "invocation_params": [], "started_at": "2026-11-22T05:00:00+00:00",
        "resumed_at": [], "finished_at": "2026-11-22T05:10:00+00:00", "complete": True,
        "runs_recorded": len(records), "overall": {}, "notes": [], "budget_usd": None, "budget_skipped": 0,
        "servers": {}, "pacing": {}, "machine": {"os": "Linux", "python": "3.11", "processor": "x86_64"},
        "packages": {"litellm": "1.106.2"}, "pytest_version": "8.3.0", "xdist_workers": None, **extra,
    }


def full_transcript(record: dict[str, Any]) -> dict[str, Any]:
    """A transcript of ``record``'s run: the prompt, one tool call and its result, the final answer."""
    answer = "ANSWER: 42" if record["passed"] else "ANSWER: 41"
    return {
        "task": record["task"], "model": record["model"], "litellm_model": "agentic-scripted/oracle",
        "run": record["run"], "seed": record["seed"], "nodeid": record["nodeid"],
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": f"Solve {record['task']}. End your reply with the line `ANSWER: <value>`."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1_1", "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "a"}'}}]},
            {"role": "tool", "tool_call_id": "call_1_1", "content": "x"},
            {"role": "assistant", "content": answer},
        ],
        "tool_calls": [{"turn": 1, "id": "call_1_1", "name": "fs_read", "raw_arguments": '{"path": "a"}',
                        "arguments": {"path": "a"}, "result": "x", "ok": True, "hallucinated": None,
                        "redundant": False, "duration_s": 0.01}],
        "final_answer": answer, "stop_reason": record["stop_reason"], "server_refusal": None,
        "passed": record["passed"], "failure_mode": record["failure_mode"], "reason": record["reason"],
    }


def write(folder: Path, shape: str, records: list[dict[str, Any]], **manifest: Any) -> Path:
    """Write a campaign folder as ``shape``'s writer did: campaign.json, runs.jsonl and the transcripts."""
    folder.mkdir(parents=True)
    full = full_manifest(folder.name, records, **manifest)
    written = shaped(shape, "manifest", full)
    written.update({k: v for k, v in manifest.items() if k not in written})  # e.g. a shard's place
    (folder / "campaign.json").write_text(json.dumps(written, indent=2))
    with (folder / "runs.jsonl").open("w") as fh:
        for r in records:
            fh.write(json.dumps(shaped(shape, "record", r), sort_keys=True) + "\n")
    for r in records:
        path = folder / r["transcript"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(shaped(shape, "transcript", full_transcript(r)), indent=1))
    return folder


def reshape(folder: Path, shape: str) -> None:
    """Rewrite a folder the current writer wrote into ``shape`` (keys a later writer added are dropped)."""
    manifest = json.loads((folder / "campaign.json").read_text())
    kept = {k: v for k, v in manifest.items() if k in MANIFEST_KEYS[shape]}
    if REVISION[shape] is None:
        kept.pop("benchmark_revision", None)
    (folder / "campaign.json").write_text(json.dumps(kept, indent=2))
    records = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines() if line.strip()]
    (folder / "runs.jsonl").write_text("".join(
        json.dumps({k: v for k, v in r.items() if k in RECORD_KEYS[shape]}, sort_keys=True) + "\n" for r in records))
    for path in (folder / "transcripts").rglob("*.json"):
        transcript = json.loads(path.read_text())
        path.write_text(json.dumps({k: v for k, v in transcript.items() if k in TRANSCRIPT_KEYS[shape]}, indent=1))
