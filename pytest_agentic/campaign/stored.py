"""The one reader of campaign folders: manifest, run records and transcripts, of any known version.

Every consumer of a folder reads it here: the summary and report (``report/``), resume
(``campaign/resume.py``), merge (``campaign/merge.py``), comparison, rescoring and the
leaderboard (``verdicts/``). What is read is brought up to the current typed records
(``campaign/format.py``: a key an older writer did not write is filled in, None when unknown);
a folder of a newer ``format_version`` than this harness knows is refused, naming the file and
the version.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..run.records import RunRecord, Transcript
from .format import FORMAT_VERSION, UNVERSIONED, Manifest, upgrade_manifest, upgrade_record, upgrade_transcript, \
    version_of

#: What a run record must carry to be read at all (every writer wrote these).
REQUIRED = ("task", "model", "run", "passed", "failure_mode")


class CampaignFolderError(ValueError):
    """A path that is not a readable campaign folder; the message names the path and the problem."""


@dataclass(frozen=True)
class StoredCampaign:
    path: Path
    manifest: Manifest
    records: list[RunRecord]
    #: The format version the folder was written in (``format.UNVERSIONED`` before versions).
    format_version: int = FORMAT_VERSION

    @property
    def id(self) -> str:
        return str(self.manifest.get("campaign_id") or self.path.name)

    @property
    def models(self) -> list[str]:
        return sorted({r["model"] for r in self.records})

    def transcript(self, record: RunRecord) -> Transcript:
        return read_transcript(self.path, record)


def read_transcript(folder: Path, record: RunRecord) -> Transcript:
    """The transcript of ``record`` in the campaign ``folder``, brought up to the current shape."""
    path = folder / record["transcript"]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CampaignFolderError(f"{path}: cannot read the transcript of {record['model']} "
                                  f"{record['task']} run {record['run']}: {exc}") from None
    if not isinstance(data, dict):
        raise CampaignFolderError(f"{path}: a transcript must be a JSON object")
    return upgrade_transcript(data)


def read_manifest(folder: Path, *, required: bool = False) -> tuple[Manifest, int]:
    """``folder``'s campaign.json, brought up to the current shape, and the version it was written in.

    Without a campaign.json: an error when ``required``, else an empty manifest (an unversioned folder).
    """
    path = folder / "campaign.json"
    if not path.is_file():
        if required:
            raise CampaignFolderError(f"{folder}: not a campaign folder (no campaign.json)")
        return upgrade_manifest({}), UNVERSIONED
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CampaignFolderError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise CampaignFolderError(f"{path}: campaign.json must be a JSON object")
    version = version_of(raw)
    if version is None:
        raise CampaignFolderError(f"{path}: format_version {raw.get('format_version')!r} is not a whole number")
    if version > FORMAT_VERSION:
        raise CampaignFolderError(
            f"{path}: format_version {version} is newer than this pytest-agentic reads (up to {FORMAT_VERSION}); "
            "read it with the release that wrote it, or upgrade pytest-agentic")
    _check_sessions(path, raw.get("sessions", []))
    return upgrade_manifest(raw), version


def _check_sessions(path: Path, listed: Any) -> None:
    """``sessions`` as the writer writes it (``format.SessionInfo``), or an error naming the entry and key."""
    if not isinstance(listed, list):
        raise CampaignFolderError(f"{path}: 'sessions' must be a list, got {type(listed).__name__}")
    for number, entry in enumerate(listed):
        if not isinstance(entry, dict):
            raise CampaignFolderError(f"{path}: sessions[{number}] must be an object, got {type(entry).__name__}")
        for key, kinds in (("started_at", (str,)), ("harness_version", (str,)), ("resumed", (bool,)),
                           ("runs_added", (int, type(None)))):
            if not isinstance(entry.get(key), kinds) or (key == "runs_added" and isinstance(entry.get(key), bool)):
                raise CampaignFolderError(f"{path}: sessions[{number}] key {key!r} must be "
                                          f"{' or '.join('null' if k is type(None) else k.__name__ for k in kinds)}, "
                                          f"got {entry.get(key)!r}")


def read_records(folder: Path, *, resumable: bool = False) -> list[RunRecord]:
    """``folder``'s run records in file order, brought up to the current shape.

    ``resumable`` reads a folder a session was writing: a line cut short by an interruption is
    skipped (that run is run again), the last record of each run wins, and no runs.jsonl yet is no run.
    """
    runs = folder / "runs.jsonl"
    if resumable and not runs.is_file():
        return []
    records: list[RunRecord] = []
    for n, line in enumerate(runs.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as exc:
            if resumable:
                continue
            raise CampaignFolderError(f"{runs}:{n}: not valid JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise CampaignFolderError(f"{runs}:{n}: a run record must be a JSON object")
        missing = [k for k in REQUIRED if k not in raw]
        if missing:
            raise CampaignFolderError(f"{runs}:{n}: a run record lacks {', '.join(missing)}")
        records.append(upgrade_record(raw))
    if resumable:
        latest = {(r["model"], r["task"], r["run"]): r for r in records}
        records = list(latest.values())
    return records


def load(path: str | Path, *, resumable: bool = False) -> StoredCampaign:
    """Read the campaign folder at ``path`` (the folder, or its ``runs.jsonl``)."""
    path = Path(path)
    if path.is_file() and path.name == "runs.jsonl":
        path = path.parent
    runs = path / "runs.jsonl"
    if not path.is_dir():
        raise CampaignFolderError(f"{path}: no such campaign folder")
    if not runs.is_file():
        raise CampaignFolderError(f"{path}: not a campaign folder (it has no runs.jsonl)")
    manifest, version = read_manifest(path)
    records = read_records(path, resumable=resumable)
    return StoredCampaign(path=path, manifest=manifest, records=records, format_version=version)


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
        elif root.exists():
            raise CampaignFolderError(f"{root}: not a campaign folder (a file; give the folder that holds "
                                      "runs.jsonl, or a folder of such folders)")
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
