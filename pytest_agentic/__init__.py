"""pytest-agentic: evaluate an LLM as a software agent, one pytest test per task run."""

from __future__ import annotations

import sys
from types import TracebackType


def _interrupt_in_one_line(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    """Ctrl-C that stops pytest while it starts (plugins, conftests and their imports load before pytest
    handles an interrupt) says so in one line, not with the traceback of whichever import it stopped."""
    if issubclass(kind, KeyboardInterrupt):
        sys.stderr.write("Interrupted (Ctrl-C) while pytest was starting: nothing ran, nothing was written.\n")
    else:
        sys.__excepthook__(kind, value, tb)


# The plugin's package is imported first of its modules: from here to pytest_configure, the interrupt is one
# line (pytest handles it from there on, and ``plugin.pytest_configure`` puts Python's own hook back).
def _pytest_is_starting() -> bool:
    """Whether this process is the ``pytest`` command (or ``python -m pytest``), not a console script of ours."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None:
        return spec.name in ("pytest", "pytest.__main__")
    return sys.argv[0].rsplit("/", 1)[-1].startswith(("pytest", "py.test")) if sys.argv else False


if sys.excepthook is sys.__excepthook__ and _pytest_is_starting():
    sys.excepthook = _interrupt_in_one_line

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
