"""pytest-agentic: evaluate an LLM as a software agent, one pytest test per task run."""

from __future__ import annotations

from .records import FailureMode, RunResult, ToolCallLog
from .task import CANONICAL_SEED, Final, TaskInstance, TaskSpec, ToolCall, task

__version__ = "0.1.0"

__all__ = [
    "CANONICAL_SEED",
    "FailureMode",
    "Final",
    "RunResult",
    "TaskInstance",
    "TaskSpec",
    "ToolCall",
    "ToolCallLog",
    "__version__",
    "task",
]
