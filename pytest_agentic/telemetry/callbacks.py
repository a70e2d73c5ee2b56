"""litellm's own integrations (Langfuse, MLflow, Datadog, ...) and a user's ``CustomLogger``, on every call.

A models file names them (top-level ``callbacks:``), or ``--agentic-callback``: a name litellm knows
(``langfuse``, ``mlflow``, ...) or ``module:Class``, a subclass of ``litellm.integrations.custom_logger.
CustomLogger`` made with no arguments. Each reads its credentials from its own environment variables;
nothing of them is written here, and the campaign records the names alone.

They are installed in every process that calls models, after litellm's warm-up call (which they never
see) and before the first run, and removed at its end. litellm calls a sync call's callbacks on its
logging threads: ``drain`` waits for them, so that every call has reached every callback (and its span
the exporter) before the session ends.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import wait
from pathlib import Path
from typing import Any

from .settings import TelemetryError

#: litellm's callback lists an installed callback may be promoted into (``litellm.utils.function_setup``).
LISTS = ("callbacks", "input_callback", "success_callback", "failure_callback", "_async_success_callback",
         "_async_failure_callback", "service_callback")


def known_names(litellm: Any) -> list[str]:
    """The integrations litellm makes from a name (its own list, ``_known_custom_logger_compatible_callbacks``)."""
    return sorted(getattr(litellm, "_known_custom_logger_compatible_callbacks", []))


def check(litellm: Any, names: Sequence[str], where: str, search: Path | None = None) -> None:
    """Refuse, naming ``where``, a name litellm does not know or a ``module:Class`` that is no CustomLogger
    (the controller checks once, before any run; nothing is made)."""
    for name in names:
        if ":" in name:
            _class_of(name, where, search)
        elif name not in known_names(litellm):
            raise TelemetryError(f"{where}: {name!r} is not a litellm callback; litellm {litellm_version()} "
                                 f"knows {', '.join(known_names(litellm))}, or name a CustomLogger as module:Class")


def resolve(litellm: Any, names: Sequence[str], where: str, search: Path | None = None) -> list[Any]:
    """The callbacks ``names`` stand for: litellm's names as they are (litellm makes each integration, which
    reads its credentials from its variables), ``module:Class`` made with no arguments. ``where`` (the
    models file's key, or the option) is named in every error. A module is imported from ``sys.path``,
    else from ``search`` (the models file's folder)."""
    check(litellm, names, where, search)
    out: list[Any] = []
    for name in names:
        if ":" not in name:
            out.append(name)
            continue
        cls = _class_of(name, where, search)
        try:
            out.append(cls())
        except Exception as exc:
            raise TelemetryError(f"{where}: {name!r}: {cls.__name__}() failed: {type(exc).__name__}: {exc}") from None
    return out


def _class_of(name: str, where: str, search: Path | None) -> type:
    from litellm.integrations.custom_logger import CustomLogger

    module_name, _, class_name = name.partition(":")
    module = _import(module_name, search, f"{where}: {name!r}")
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, CustomLogger)):
        raise TelemetryError(f"{where}: {name!r}: {module_name} has no class {class_name} that is a litellm "
                             "CustomLogger (litellm.integrations.custom_logger.CustomLogger)")
    return cls


def _import(module_name: str, search: Path | None, where: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if search is None or exc.name != module_name.split(".")[0]:
            raise TelemetryError(f"{where}: cannot import {module_name}: {exc}") from None
    sys.path.insert(0, str(search))
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise TelemetryError(f"{where}: cannot import {module_name} (from sys.path or {search}): {exc}") from None
    finally:
        sys.path.remove(str(search))


def litellm_version() -> str:
    from importlib.metadata import version

    return version("litellm")


class Installed:
    """Callbacks added to litellm for this process; ``remove`` leaves litellm's lists as they were."""

    def __init__(self, litellm: Any, callbacks: Sequence[Any]) -> None:
        self.litellm = litellm
        self.before = {name: {id(c) for c in getattr(litellm, name, [])} for name in LISTS}
        for callback in callbacks:
            litellm.logging_callback_manager.add_litellm_callback(callback)

    def remove(self) -> None:
        for name in LISTS:
            kept = getattr(self.litellm, name, None)
            if isinstance(kept, list):
                kept[:] = [c for c in kept if id(c) in self.before[name]]


def drain(timeout_s: float = 30.0) -> bool:
    """Wait until every logging task litellm queued so far has run (its callbacks heard every call).

    litellm's logging pool runs tasks in the order queued on at most ``MAX_THREADS`` threads: once that
    many tasks queued now are all running at once, each task queued before has finished. Returns
    whether that was seen within ``timeout_s`` (a pool whose backlog is full drops tasks: then not).
    """
    if "litellm" not in sys.modules:
        return True
    from litellm.litellm_core_utils import thread_pool_executor as pool

    threads = pool.MAX_THREADS
    barrier = threading.Barrier(threads)

    def meet() -> bool:
        try:
            barrier.wait(timeout_s)
        except threading.BrokenBarrierError:
            return False
        return True

    futures = [pool.executor.submit(meet) for _ in range(threads)]
    if any(f.cancelled() for f in futures):  # dropped: the barrier would never fill
        barrier.abort()
    done, _ = wait(futures, timeout_s + 1)
    return len(done) == threads and all(not f.cancelled() and f.result() for f in futures)
