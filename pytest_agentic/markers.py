"""The markers the plugin registers: one per task id, one per failure mode."""

from __future__ import annotations

import pytest

from . import internals
from .run.records import FailureMode

BUILTIN_TASKS = {
    "task_01": "fix_failing_test", "task_02": "refactor_duplicated_code", "task_03": "investigate_log",
    "task_04": "trace_through_codebase", "task_05": "minimal_fix", "task_06": "handle_ambiguous_requirement",
    "task_07": "multi_step_plan", "task_08": "recover_from_tool_error", "task_09": "know_when_to_stop",
    "task_10": "sql_investigation",
}


def register(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "agentic_task(spec): an agent task (set by pytest_agentic.task)")
    for task_id, name in BUILTIN_TASKS.items():
        config.addinivalue_line("markers", f"{task_id}: agentic-core-v1 task {name}")
    for mode in FailureMode:
        config.addinivalue_line("markers", f"{mode.value}: runs that failed as {mode.value} in the last campaign")


def ensure(config: pytest.Config, name: str, description: str) -> None:
    """Register a marker for a user's own task id, so --strict-markers accepts it."""
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    if name not in known:
        config.addinivalue_line("markers", f"{name}: {description}")


_WORDS = {"and", "or", "not", "True", "False", "None"}


def check_expression(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under --strict-markers, a -m expression may only name markers that exist.

    pytest itself treats an unknown name in ``-m`` as "no item matches"; for a
    benchmark that silently runs nothing (``-m task_11``), so it is an error here.
    """
    import re

    expr = config.option.markexpr
    if not expr or not config.option.strict_markers or internals.is_worker(config):
        # xdist workers collect but cannot stop the session cleanly; the plain session checks.
        return
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    for item in items:
        known.update(m.name for m in item.iter_markers())
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.-]*", re.sub(r"\(.*?\)", "", expr))) - _WORDS
    unknown = sorted(names - known)
    if unknown:
        tasks = sorted(n for n in known if n.startswith("task_"))
        raise pytest.UsageError(
            f"-m {expr!r}: no marker named {', '.join(map(repr, unknown))}; "
            f"task markers: {', '.join(tasks)}; failure modes: {', '.join(m.value for m in FailureMode)}"
        )
