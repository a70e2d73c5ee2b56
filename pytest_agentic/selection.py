"""Which collected agent tests run: the resume and rescore filters, and the deselection they share; the tasks a
session selected (kept as its campaign's), and a resume's check of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from . import internals
from .campaign.resume import Key
from .run.task import task_spec_of
from .session import AgenticSession, Case


def case_of(item: pytest.Item) -> Case | None:
    """The (model, run) an agent test was parametrized with, or None."""
    case = internals.callspec_params(item).get("agentic_case")
    return case if isinstance(case, Case) else None


def deselect(config: pytest.Config, items: list[Any], drop: Callable[[Any], bool]) -> None:
    """Remove the items ``drop`` selects, reporting them as deselected."""
    dropped = [item for item in items if drop(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not drop(item)]


def deselect_finished(config: pytest.Config, items: list[Any], done: set[Key]) -> None:
    """Under --agentic-resume, drop (as deselected) the agent tests whose run the campaign already has."""

    def finished_run(item: Any) -> bool:
        spec, case = task_spec_of(item), case_of(item)
        return spec is not None and case is not None and (case.model, spec.id, case.run) in done

    if done:
        deselect(config, items, finished_run)


def deselect_unrecorded(config: pytest.Config, items: list[Any]) -> None:
    """Under a rescore, drop (as deselected) the agent tests of tasks the stored campaign did not run."""
    deselect(config, items, lambda item: task_spec_of(item) is not None and case_of(item) is None)


def shard_of(items: list[Any], count: int) -> dict[str, int]:
    """Shard (1..count) of each agent test: its (task, model, run) dealt round-robin in sorted order.

    Deterministic (the same collection gives the same split on every machine) and balanced:
    shards differ by at most one run, and each task's runs spread over the shards.
    """
    keys = sorted({(spec.id, case.model, case.run) for item in items
                   if (spec := task_spec_of(item)) is not None and (case := case_of(item)) is not None})
    position = {key: i % count + 1 for i, key in enumerate(keys)}
    out: dict[str, int] = {}
    for item in items:
        spec, case = task_spec_of(item), case_of(item)
        # A test that is not an agent run (a plain test in the suite) runs in shard 1.
        out[item.nodeid] = position[(spec.id, case.model, case.run)] if spec and case else 1
    return out


def deselect_other_shards(config: pytest.Config, items: list[Any], shard: tuple[int, int] | None) -> None:
    """Under --agentic-shard K/N, drop (as deselected) the tests of the other shards."""
    if shard is None:
        return
    index, count = shard
    owner = shard_of(items, count)
    deselect(config, items, lambda item: owner[item.nodeid] != index)


def note_selection(agentic: AgenticSession, session: pytest.Session) -> None:
    """At collection's end (every deselection done): the tasks selected, kept as the campaign's. Under a resume,
    tasks outside the campaign are dropped when no ``-m``/``-k`` named them, and the session stops when one did,
    or when a task changed since the campaign (naming each difference)."""
    specs = {s.id: s for item in session.items if (s := task_spec_of(item)) and case_of(item)}
    resumed = agentic.resumed
    if resumed is None:
        agentic.selected_tasks = sorted(specs)
        return
    config = agentic.config
    narrowed = bool(config.option.markexpr or config.option.keyword)
    differences = resumed.check_tasks({t: agentic.instance(s).content_hash() for t, s in specs.items()}, narrowed)
    if differences:
        agentic.stop(session, resumed.refusal(differences))
        return
    campaign_tasks = set(resumed.tasks)
    deselect(config, session.items, lambda item: (s := task_spec_of(item)) is not None and s.id not in campaign_tasks)
    agentic.selected_tasks = sorted(campaign_tasks)
