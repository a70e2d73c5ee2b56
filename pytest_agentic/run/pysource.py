"""Python source parsed for a checker: ``ast.parse``, safe beside other threads that build syntax trees.

CPython 3.11 keeps one count of the depth of the syntax tree being built for the whole interpreter
(``ast_state.recursion_depth``), not one per thread. When two threads build trees at once, one of
them can end with ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905;
the same source parses on the next try). In a campaign the checkers parse on the main thread while
other threads may build trees: pytest's assertion rewriting parses each module it rewrites as a thread
imports it, and in an installed (not editable) copy of the plugin, a ``pytest11`` entry point, that
is every module of the package (the session's end prepares its report's modules on a thread,
``controller.prepare_the_end``). Which thread it was in the CI run where task_02's checker failed
this way was not found. A verdict must not depend on that race.

A thread only lets another run in the middle of building a tree when Python code runs there, and
the Python code that runs there is, as far as this module knows, a finalizer of garbage the cycle
collector frees. So a parse here runs with the collector paused (for the milliseconds it takes),
under one lock for the harness's own parses, and is done again should it still meet another
thread's tree.
"""

from __future__ import annotations

import ast
import threading

from . import gcpause

#: Parses of one source tried at most (a retry costs one parse; the race is rare and brief).
TRIES = 5
_lock = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``; its ``SyntaxError`` (and any other error) is raised as it is."""
    for attempt in range(TRIES):
        try:
            with _lock, gcpause.paused():
                return ast.parse(source, filename=filename)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


__all__ = ["TRIES", "parse"]
