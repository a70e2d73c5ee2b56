"""Benchmark revisions across campaigns: which tasks two campaigns ran in different versions.

A campaign records its ``benchmark_revision`` (campaign.json) and each task's content hash
(its runs' ``task_hash``, the manifest's ``tasks``). When campaigns of different revisions
are compared or ranked side by side, the tasks whose content differs between them are
named per task with the revisions, so that a score moved by a revised task (revision 3's
answer lines, say) is not read as a model getting better or worse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..campaign.stored import StoredCampaign


def of(manifest: Mapping[str, Any]) -> int | None:
    """A stored campaign's benchmark revision, or None when it does not say (before revision 2)."""
    value = manifest.get("benchmark_revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def name(revision: int | None) -> str:
    return "an unrecorded revision" if revision is None else f"revision {revision}"


def across(campaigns: Sequence[StoredCampaign]) -> list[str]:
    """Per task, the campaigns that ran it in another version, when they record several revisions.

    One line per task whose content hash differs among the campaigns, grouping them by revision;
    a line for the whole set when the campaigns do not record task hashes.
    """
    revisions = {c.id: of(c.manifest) for c in campaigns}
    if len({r for r in revisions.values() if r is not None}) < 2:  # a campaign that records none says nothing
        return []
    lines = []
    tasks = sorted({t for c in campaigns for t in c.manifest["tasks"]})
    for task in tasks:
        hashes = {c.id: (c.manifest["tasks"].get(task) or {}).get("content_hash") for c in campaigns}
        if len({h for h in hashes.values() if h}) < 2:
            continue
        groups: dict[int | None, list[str]] = {}
        for c in campaigns:
            if hashes[c.id]:
                groups.setdefault(revisions[c.id], []).append(c.id)
        parts = "; ".join(f"{name(rev)}: {', '.join(ids)}" for rev, ids in sorted(groups.items(), key=_order))
        lines.append(f"- {task} differs between the campaigns ({parts}): its scores are not the same test")
    if not lines:
        parts = "; ".join(f"{cid}: {name(rev)}" for cid, rev in revisions.items())
        lines.append(f"- the campaigns are of different benchmark revisions ({parts}); they record no task "
                     "content hashes to say which tasks changed")
    return lines


def _order(item: tuple[int | None, list[str]]) -> tuple[int, int]:
    return (0, 0) if item[0] is None else (1, item[0])


__all__ = ["across", "name", "of"]
