"""Merge shard campaigns (``--agentic-shard K/N``) into one campaign folder.

    agentic-merge SHARD_DIR... [--out DIR]

(the command line is in ``report/cli.py``: it also writes the merged campaign's report.html).
The merged folder holds what one machine's session would have written: every run record and
transcript, the same tables and summary; its ``campaign.json`` lists the shards it came
from. Shards that did not measure the same thing are refused: a different seed, harness
version, benchmark, runs per task, models (as configured), or content of a task.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

from ..run.records import RunRecord
from . import sessions, stored
from .format import FORMAT_VERSION, Manifest
from .notes import campaign_notes
from .resume import key_of
from .writer import write_artefacts

#: Manifest keys every shard must share, and what each means in the error.
MUST_AGREE = {
    "benchmark": "benchmark",
    "harness_version": "harness version",
    "seed": "seed",
    "runs": "runs per task",
    "models": "models (their models.yaml entries)",
    "rescore": "rescored campaign",
}


class MergeError(Exception):
    """Shards that cannot be merged; the message names the folder and what differs."""


def _manifest(folder: Path) -> Manifest:
    try:
        manifest = stored.read_manifest(folder, required=True)[0]
    except stored.CampaignFolderError as exc:
        raise MergeError(str(exc)) from None
    if not isinstance(manifest.get("shard"), dict):
        raise MergeError(f"{folder}: not a shard campaign (its campaign.json has no 'shard'; "
                         "run it with --agentic-shard K/N)")
    return manifest


def _shard(manifest: Manifest) -> dict[str, int]:
    """A shard campaign's place (index and count); ``_manifest`` refused any folder without one."""
    shard = manifest.get("shard")
    assert isinstance(shard, dict)
    return shard


def _records(folder: Path) -> list[RunRecord]:
    try:
        return stored.read_records(folder, resumable=True)
    except stored.CampaignFolderError as exc:
        raise MergeError(str(exc)) from None


def check(shards: list[tuple[Path, Manifest]]) -> None:
    """Refuse shards that differ in what they measured, or that overlap."""
    first_path, first = shards[0]
    for path, manifest in shards[1:]:
        for key, what in MUST_AGREE.items():
            if manifest.get(key) != first.get(key):
                raise MergeError(f"{path}: its {what} differs from {first_path}'s "
                                 f"(key {key!r}: {manifest.get(key)!r} != {first.get(key)!r}); "
                                 "shards of one campaign run the same command line")
    for path, manifest in shards:  # a shard resumed under another release: its later sessions too
        for session in sessions.earlier(manifest):
            if session["harness_version"] != first["harness_version"]:
                raise MergeError(f"{path}: a session that wrote it ran pytest-agentic {session['harness_version']!r} "
                                 f"(began {session['started_at']!r}), {first_path} ran {first['harness_version']!r}; "
                                 "shards of one campaign run the same harness")
    hashes: dict[str, tuple[Path, Any]] = {}
    for path, manifest in shards:
        for task, facts in sorted(manifest["tasks"].items()):
            seen = hashes.setdefault(task, (path, facts.get("content_hash")))
            if seen[1] != facts.get("content_hash"):
                raise MergeError(f"{path}: task {task} has content hash {facts.get('content_hash')}, but "
                                 f"{seen[0]} ran it with {seen[1]}; the shards ran different task code")
    counts = {_shard(m)["count"] for _, m in shards}
    if len(counts) != 1:
        raise MergeError(f"the shards split the campaign differently: into {sorted(counts)} shards")
    seen_index: dict[int, Path] = {}
    for path, manifest in shards:
        index = _shard(manifest)["index"]
        if index in seen_index:
            raise MergeError(f"{path}: shard {index} is given twice (also {seen_index[index]})")
        seen_index[index] = path


def merge(folders: list[Path], out_dir: Path) -> Path:
    """Write the merged campaign folder under ``out_dir``; returns its path."""
    if not folders:
        raise MergeError("no shard folder given")
    shards = sorted(((Path(f), _manifest(Path(f))) for f in folders), key=lambda s: _shard(s[1])["index"])
    check(shards)
    records: dict[tuple[str, str, int], RunRecord] = {}
    owner: dict[tuple[str, str, int], Path] = {}
    for path, _ in shards:
        for record in _records(path):
            key = key_of(record)
            if key in records:
                raise MergeError(f"{path}: run {key} is also in {owner[key]}; shards do not overlap")
            records[key], owner[key] = record, path
    first = shards[0][1]
    count = _shard(first)["count"]
    missing = sorted(set(range(1, count + 1)) - {_shard(m)["index"] for _, m in shards})
    complete = not missing and all(m.get("complete") for _, m in shards)
    folder = _new_folder(out_dir, first)
    for path, _ in shards:
        if (path / "transcripts").is_dir():
            shutil.copytree(path / "transcripts", folder / "transcripts", dirs_exist_ok=True)
    merged = list(records.values())
    caveats = {m["name"]: m.get("caveat") or "" for m in first["models"]}
    budget_skipped = sum(m["budget_skipped"] for _, m in shards)
    notes = campaign_notes(merged, caveats, budget_skipped, first.get("budget_usd"),
                           unconfined=any((m["sandbox"] or {}).get("kind") == "none" for _, m in shards))
    written_by = sorted((session for _, m in shards for session in sessions.earlier(m)),
                        key=lambda session: session["started_at"])
    notes[:0] = sessions.differences(written_by)
    if missing:
        notes.append(f"shards {', '.join(map(str, missing))} of {count} are missing: the campaign is incomplete")
    started = min(m["started_at"] for _, m in shards)
    finished_each = [m.get("finished_at") for _, m in shards]
    ends = [f for f in finished_each if f is not None]
    finished = max(ends) if len(ends) == len(finished_each) else None
    write_artefacts(folder, merged, runs=first["runs"], seed=first["seed"], complete=complete, started_at=started,
                    finished_at=finished, notes=notes, sections=[])
    tasks: dict[str, Any] = {}
    for _, m in shards:
        tasks.update(m["tasks"])
    manifest: Manifest = {
        **first,
        "format_version": FORMAT_VERSION,
        "campaign_id": folder.name,
        "tasks": dict(sorted(tasks.items())),
        "started_at": started,
        "finished_at": finished,
        "resumed_at": [],
        "complete": complete,
        "runs_recorded": len(merged),
        "notes": notes,
        "budget_skipped": budget_skipped,
        "merged_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "shard": None,
        "sessions": written_by,
        **sessions.measured_with(written_by),  # type: ignore[typeddict-item]
        "shards": [{"index": _shard(m)["index"], "count": count, "campaign_id": m.get("campaign_id"),
                    "path": str(path.resolve()), "complete": m.get("complete"),
                    "runs_recorded": m.get("runs_recorded"), "started_at": m.get("started_at"),
                    "finished_at": m.get("finished_at"), "machine": m.get("machine"),
                    "command_line": m.get("command_line"), "servers": m.get("servers"),
                    "sandbox": m.get("sandbox")}
                   for path, m in shards],
    }
    (folder / "campaign.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str),
                                          encoding="utf-8")
    return folder


def _new_folder(out_dir: Path, manifest: Manifest) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    models = "+".join(m["name"] for m in manifest["models"])[:80]
    base = f"{stamp}-{models}-merged"
    out_dir.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        candidate = out_dir / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise MergeError(f"cannot create a campaign folder under {out_dir}")
