"""The cyclic garbage collector paused while a thread does work that allocates much and frees little.

Importing litellm builds some 300,000 objects (pydantic models, the OpenAI SDK's types) and frees
almost none, yet the collector runs its generations over them as they grow: with it paused the import
takes a quarter less CPU (``benchmarks/litellm_import.py``). A checker's ``ast.parse`` pauses it too,
for another reason (``pysource.py``). Reference counting still frees what it can while paused.

The collector's switch is one for the whole interpreter, and pauses on several threads overlap (the
preload's import and warm-up beside a checker's parse): they are
counted, the first to start turns the collector off, the last to end turns it back on, and only if it
was on when the first started (a user who turned it off keeps it off).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def paused() -> Iterator[None]:
    """The collector off while the block runs, whatever other threads pause and resume meanwhile."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


__all__ = ["paused"]
