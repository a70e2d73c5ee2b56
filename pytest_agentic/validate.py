"""Check a task's instance at collection, so a broken task fails before any model call."""

from __future__ import annotations

from typing import TYPE_CHECKING


from .run.task import TaskInstance, TaskSpec
from .run.tools import TOOLS

if TYPE_CHECKING:
    from .session import AgenticSession


class TaskDefinitionError(Exception):
    """A task whose build() fails or whose instance cannot be run."""


def validate_instance(spec: TaskSpec | None, session: AgenticSession) -> TaskInstance:
    assert spec is not None
    where = f"task {spec.id} ({spec.name}), seed {session.seed}"
    try:
        instance = session.instance(spec)
    except Exception as exc:
        raise TaskDefinitionError(f"{where}: build() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(instance, TaskInstance):
        raise TaskDefinitionError(f"{where}: build() must return a TaskInstance, got {type(instance).__name__}")
    if not instance.prompt.strip():
        raise TaskDefinitionError(f"{where}: the prompt is empty")
    unknown = [t for t in instance.tools if t not in TOOLS]
    if unknown:
        raise TaskDefinitionError(f"{where}: unknown tool(s) {unknown}; known: {', '.join(TOOLS)}")
    if "run_tests" in instance.tools and not spec.runs_model_code:
        raise TaskDefinitionError(f"{where}: offers run_tests, which runs the model's code; declare it with "
                                  "@task(..., runs_model_code=True) so that the session makes sure of the sandbox")
    faults = [t for t in instance.tool_faults if t not in instance.tools]
    if faults:
        raise TaskDefinitionError(f"{where}: tool_faults name tools that are not offered: {faults}")
    try:
        from .run.limits import Limits

        Limits().merged(spec.limits, f"{where}: limits")
    except ValueError as exc:
        raise TaskDefinitionError(str(exc)) from None
    return instance


__all__ = ["TaskDefinitionError", "validate_instance"]
