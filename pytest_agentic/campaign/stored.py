"""A campaign folder written earlier, read back: its manifest, run records and transcripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..run.records import RunRecord


class CampaignFolderError(ValueError):
    """A path that is not a readable campaign folder; the message names the path and the problem."""


@dataclass(frozen=True)
class StoredCampaign:
    path: Path
    manifest: dict[str, Any]
    records: list[RunRecord]

    @property
    def id(self) -> str:
        return str(self.manifest.get("campaign_id") or self.path.name)

    @property
    def models(self) -> list[str]:
        return sorted({r["model"] for r in self.records})

    def transcript(self, record: RunRecord) -> dict[str, Any]:
        path = self.path / record["transcript"]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CampaignFolderError(f"{path}: cannot read the transcript of {record['model']} "
                                      f"{record['task']} run {record['run']}: {exc}") from None
        if not isinstance(data, dict):
            raise CampaignFolderError(f"{path}: a transcript must be a JSON object")
        return data


def load(path: str | Path) -> StoredCampaign:
    """Read the campaign folder at ``path`` (the folder, or its ``runs.jsonl``)."""
    path = Path(path)
    if path.is_file() and path.name == "runs.jsonl":
        path = path.parent
    runs = path / "runs.jsonl"
    if not path.is_dir():
        raise CampaignFolderError(f"{path}: no such campaign folder")
    if not runs.is_file():
        raise CampaignFolderError(f"{path}: not a campaign folder (it has no runs.jsonl)")
    records: list[RunRecord] = []
    for n, line in enumerate(runs.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise CampaignFolderError(f"{runs}:{n}: not valid JSON: {exc}") from None
        missing = [k for k in ("task", "model", "run", "passed", "failure_mode") if k not in record]
        if missing:
            raise CampaignFolderError(f"{runs}:{n}: a run record lacks {', '.join(missing)}")
        records.append(record)
    manifest: dict[str, Any] = {}
    if (path / "campaign.json").is_file():
        try:
            manifest = json.loads((path / "campaign.json").read_text(encoding="utf-8"))
        except ValueError as exc:
            raise CampaignFolderError(f"{path / 'campaign.json'}: not valid JSON: {exc}") from None
    return StoredCampaign(path=path, manifest=manifest, records=records)


def find(paths: list[str | Path]) -> Iterator[StoredCampaign]:
    """Every campaign folder among ``paths``: a campaign folder itself, or any folder below holding one."""
    seen: set[Path] = set()
    for given in paths:
        root = Path(given)
        if (root / "runs.jsonl").is_file() or (root.is_file() and root.name == "runs.jsonl"):
            found = [root if root.is_dir() else root.parent]
        elif root.is_dir():
            found = sorted({p.parent for p in root.rglob("runs.jsonl")})
            if not found:
                raise CampaignFolderError(f"{root}: no campaign folder in it (no runs.jsonl below)")
        else:
            raise CampaignFolderError(f"{root}: no such folder")
        for folder in found:
            real = folder.resolve()
            if real not in seen:
                seen.add(real)
                yield load(folder)


def add_paths_argument(parser: Any) -> None:
    """The campaign folders an ``agentic-*`` command reads (an argparse positional)."""
    parser.add_argument("paths", nargs="+", metavar="DIR",
                        help="a campaign folder, or a folder holding campaign folders (e.g. agentic-results/)")
