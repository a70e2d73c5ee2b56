"""pytest-agentic: evaluate an LLM as a software agent, one pytest test per task run."""

from __future__ import annotations

from .run.records import FailureMode, RunResult, ToolCallLog
from ._version import __version__
from .run.task import CANONICAL_SEED, Final, TaskInstance, TaskSpec, ToolCall, ToolFault, task


__all__ = [
    "CANONICAL_SEED",
    "FailureMode",
    "Final",
    "RunResult",
    "TaskInstance",
    "TaskSpec",
    "ToolCall",
    "ToolCallLog",
    "ToolFault",
    "__version__",
    "task",
]
