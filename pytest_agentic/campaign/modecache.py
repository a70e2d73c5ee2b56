"""Remember each item's failure mode in pytest's cache, and mark items with it next time."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from ..run.records import FailureMode, RunRecord

CACHE_KEY = "agentic/failure_modes"


def remembered(config: pytest.Config) -> dict[str, str]:
    cache = getattr(config, "cache", None)
    if cache is None:
        return {}
    data = cache.get(CACHE_KEY, {})
    return data if isinstance(data, dict) else {}


def remember(config: pytest.Config, records: Iterable[RunRecord]) -> None:
    """Update the cache with this session's runs: a failed item keeps its mode, a passed one loses it."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return
    modes = remembered(config)
    for r in records:
        if r["failure_mode"]:
            modes[r["nodeid"]] = r["failure_mode"]
        else:
            modes.pop(r["nodeid"], None)
    cache.set(CACHE_KEY, dict(sorted(modes.items())))


def mark_items(config: pytest.Config, items: Iterable[pytest.Item]) -> None:
    modes = remembered(config)
    valid = {m.value for m in FailureMode}
    for item in items:
        mode = modes.get(item.nodeid)
        if mode in valid:
            item.add_marker(mode)
