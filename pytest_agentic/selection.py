"""Which collected agent tests run: deselection shared by resume and rescore."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .session import Case


def case_of(item: pytest.Item) -> Case | None:
    """The (model, run) an agent test was parametrized with, or None."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = params.get("agentic_case")
    return case if isinstance(case, Case) else None


def deselect(config: pytest.Config, items: list[Any], drop: Callable[[Any], bool]) -> None:
    """Remove the items ``drop`` selects, reporting them as deselected."""
    dropped = [item for item in items if drop(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not drop(item)]
