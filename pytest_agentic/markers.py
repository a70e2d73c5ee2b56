"""The markers the plugin registers: one per task id, one per failure mode."""

from __future__ import annotations

import pytest

from .records import FailureMode

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
