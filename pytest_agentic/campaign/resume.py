"""Continue an interrupted campaign: read what it has, run only what it lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..run.records import FailureMode, RunRecord

Key = tuple[str, str, int]


def key_of(record: RunRecord) -> Key:
    return (record["model"], record["task"], record["run"])


def load_runs(folder: Path) -> list[RunRecord]:
    """The campaign's records, the last one of each run winning; a torn last line is skipped."""
    path = folder / "runs.jsonl"
    if not path.is_file():
        return []
    latest: dict[Key, RunRecord] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a write cut short by the interruption: that run is run again
        latest[key_of(record)] = record
    return list(latest.values())


def load_manifest(folder: Path) -> dict[str, Any]:
    path = folder / "campaign.json"
    if not path.is_file():
        raise pytest.UsageError(f"--agentic-resume {folder}: not a campaign folder (no campaign.json)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise pytest.UsageError(f"--agentic-resume {folder}: campaign.json is not valid JSON: {exc}") from None


def check_compatible(folder: Path, manifest: dict[str, Any], seed: int) -> None:
    if manifest.get("seed") != seed:
        raise pytest.UsageError(
            f"--agentic-resume {folder}: the campaign used seed {manifest.get('seed')}, this session seed {seed}; "
            "pass the same --agentic-seed"
        )


def finished(records: list[RunRecord]) -> set[Key]:
    """Runs that need no re-run: every recorded run except those lost to infra errors."""
    return {key_of(r) for r in records if r["failure_mode"] != FailureMode.INFRA_ERROR.value}

