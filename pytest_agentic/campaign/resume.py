"""Continue an interrupted campaign: read what it has, run only what it lacks."""

from __future__ import annotations

from pathlib import Path

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


def check_compatible(folder: Path, manifest: Manifest, seed: int) -> None:
    if manifest.get("seed") != seed:
        raise pytest.UsageError(
            f"--agentic-resume {folder}: the campaign used seed {manifest.get('seed')}, this session seed {seed}; "
            "pass the same --agentic-seed"
        )


def finished(records: list[RunRecord]) -> set[Key]:
    """Runs that need no re-run: every recorded run except those lost to infra errors."""
    return {key_of(r) for r in records if r["failure_mode"] != FailureMode.INFRA_ERROR.value}

