"""The plugin's xdist hooks, registered only when xdist is there (as pytest-randomly does).

On the controller: ``pytest_xdist_make_scheduler`` answers for ``--dist load`` (what ``-n``
picks) and ``--dist worksteal`` in a campaign project with the plugin's own scheduler
(``stealing.RunStealing``). On a worker: the steal command xdist sends is answered by
``internals.guard_worker_steal``, which hands back only the items this worker has not
started ahead (``claimed``). Both sides hold together: a run that is moved to another
worker is one that no model call was spent on.
"""

from __future__ import annotations

from typing import Any

import pytest

from .. import internals
from ..session import SESSION_KEY

#: The worker's items (xdist indexes) that its prefetcher has taken to start ahead; read and
#: written under the worker queue's lock only (``scheduler.Prefetcher.upcoming``, the guard).
CLAIMED_KEY = pytest.StashKey[set[int]]()


def claimed(config: pytest.Config) -> set[int]:
    """This process's items started ahead (or about to be): a steal never takes one of them."""
    found = config.stash.get(CLAIMED_KEY, None)
    if found is None:
        found = config.stash[CLAIMED_KEY] = set()
    return found


class ControllerHooks:
    """Registered on the xdist controller: the plugin's scheduler for a campaign."""

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") not in ("load", "worksteal") or not is_campaign(config):
            return None  # loadscope, loadfile, loadgroup, each, or a project with no models: xdist's own
        from .stealing import RunStealing

        return RunStealing(config, log)


def is_campaign(config: pytest.Config) -> bool:
    """Whether this project runs agent tests: it names models (a models file, ``--model``, a rescore)."""
    session = config.stash[SESSION_KEY]
    return bool(session.model_names) or session.models_path.is_file() or session.replay is not None


def register(config: pytest.Config) -> None:
    """Hook into xdist where it is installed and enabled; nothing otherwise."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    if internals.is_worker(config):
        taken = claimed(config)
        internals.guard_worker_steal(config, taken.__contains__)
    elif not config.pluginmanager.has_plugin("agentic-xdist"):
        config.pluginmanager.register(ControllerHooks(), "agentic-xdist")
