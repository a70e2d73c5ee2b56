"""Every access to a private or untyped attribute of pytest and pytest-xdist, in one place.

Each accessor says why no public API does; ``tests/test_internals.py`` fails when one of them
disappears from the pytest or xdist installed, so an upgrade that removes one is seen in this
project's tests, not in a user's campaign. Outside this module, the plugin reads none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest


# -- pytest -------------------------------------------------------------------------------------
def tmp_path_factory(config: pytest.Config) -> pytest.TempPathFactory | None:
    """pytest's session temporary directory factory, or None when the tmp_path plugin is off.

    Runs started ahead of their test (``scheduler.Prefetcher``) make their workspaces under the
    session's numbered temporary directory, as ``tmp_path`` does; the public ``tmp_path_factory``
    is a fixture, which a hook cannot request. pytest keeps it on the config as ``_tmp_path_factory``.
    """
    return getattr(config, "_tmp_path_factory", None)


def older_temp_dirs_cleanup(config: pytest.Config) -> Callable[[], None] | None:
    """pytest's own removal of the older numbered temporary directories, as a call to make early; or None.

    pytest removes them (``pytest-N`` beyond ``tmp_path_retention_count``) when the session ends
    (``cleanup_numbered_dir``, registered on the factory's private exit stack as the session's own
    ``pytest-N`` is made). A campaign leaves ten files a run there, so the session three campaigns
    later spends seconds at its end removing 30,000 of them (0.29 s for 300 runs on this machine).
    The call returned runs that same function with the arguments pytest registered: the root, the
    prefix, the count kept, and the date before which a lock is dead (the session's lock, made with
    its directory, less ``LOCK_TIMEOUT``). Run early, while the calls are in flight, it leaves pytest's
    call at the end nothing to do; pytest's cleanup is made to run in several sessions at once (each
    directory is renamed under a lock first).
    None when the directory was given (``--basetemp``, an xdist worker) or is not made yet (pytest
    removes nothing then either), and under the retention policy "none" (pytest removes the session's
    own directory then, which its runs still use).
    """
    factory = tmp_path_factory(config)
    basetemp = getattr(factory, "_basetemp", None)
    if factory is None or basetemp is None or getattr(factory, "_given_basetemp", None) is not None:
        return None
    from _pytest.pathlib import LOCK_TIMEOUT, cleanup_numbered_dir

    keep = 0 if factory._retention_policy == "none" else factory._retention_count
    if keep < 1:  # pytest removes the session's own directory too then: only at the end
        return None
    lock = basetemp / ".lock"
    try:
        made = (lock if lock.exists() else basetemp).stat().st_mtime
    except OSError:
        return None
    return lambda: cleanup_numbered_dir(basetemp.parent, "pytest-", keep, made - LOCK_TIMEOUT)


def terminal_file(writer: Any) -> Any:
    """The file a pytest ``TerminalWriter`` writes to (its private ``_file``), or None.

    The live status line (``terminal.TerminalView``) sits under everything pytest prints: it puts
    a sink in place of the writer's file, which erases the line before each write and redraws it
    after. pytest has no public way to wrap or replace that file.
    """
    return getattr(writer, "_file", None)


def set_terminal_file(writer: Any, file: Any) -> None:
    """Put ``file`` in place of a ``TerminalWriter``'s file (see :func:`terminal_file`)."""
    writer._file = file


def callspec_params(item: pytest.Item) -> dict[str, Any]:
    """The parameters an item was parametrized with (``Function.callspec.params``), or {}.

    ``callspec`` exists on a parametrized ``pytest.Function`` only and is not on ``pytest.Item``'s
    type; the (model, run) case of an agent test rides there (``plugin.pytest_generate_tests``).
    """
    return dict(getattr(getattr(item, "callspec", None), "params", {}))


def failure_repr(lines: Sequence[str], path: str, lineno: int, message: str) -> Any:
    """A failure representation with ``lines`` as its traceback and ``message`` as its crash line.

    A failed run's block (``outcome.make_concise``) replaces the checker's traceback; built from
    pytest's own representation classes (``_pytest._code.code``, private), pytest's short summary,
    ``--tb=line`` and JUnit's failure message keep showing its one-line headline. pytest offers no
    public constructor for a report's ``longrepr`` of this shape.
    """
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative

    return ReprExceptionInfo(reprtraceback=ReprTracebackNative([line + "\n" for line in lines]),
                             reprcrash=ReprFileLocation(path, lineno, message))


def is_pytest_object(value: Any) -> bool:
    """Whether ``value`` is one of pytest's own objects with attributes (a report's representation parts).

    Escaping a report's text (``outcome.make_printable``) walks the representation pytest built,
    whose classes live in pytest's private ``_pytest`` package and are not exported.
    """
    return type(value).__module__.startswith("_pytest.") and hasattr(value, "__dict__")


# -- pytest-xdist -------------------------------------------------------------------------------
def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (xdist sets ``workerinput`` on a worker's config only)."""
    return hasattr(config, "workerinput")


def worker_input(config: pytest.Config) -> dict[str, Any]:
    """What the controller handed this worker (``config.workerinput``, set by xdist, untyped); {} elsewhere."""
    return dict(getattr(config, "workerinput", {}))


def node_worker_input(node: Any) -> dict[str, Any]:
    """A starting worker's ``workerinput`` (``pytest_configure_node``), filled in by the controller."""
    workerinput: dict[str, Any] = node.workerinput
    return workerinput


def set_worker_output(config: pytest.Config, key: str, value: Any) -> None:
    """Hand ``value`` from this worker to the controller (``config.workeroutput``, set by xdist, untyped)."""
    output: dict[str, Any] = getattr(config, "workeroutput")
    output[key] = value


def node_worker_output(node: Any) -> dict[str, Any]:
    """What a finished worker handed back (``node.workeroutput``, ``pytest_testnodedown``); {} when none."""
    return dict(getattr(node, "workeroutput", {}) or {})


def node_worker_pid(node: Any) -> int | None:
    """A local worker's process id (``node.gateway._io.popen.pid``, execnet's private), or None.

    SIGTERM sent to the controller alone (``kill PID``, a time limit) is passed on to the workers
    (``Controller.pytest_keyboard_interrupt``) so they stop at once rather than after xdist's wait;
    neither xdist nor execnet exposes a worker's process id publicly.
    """
    pid = getattr(getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None), "pid", None)
    return pid if isinstance(pid, int) else None


def report_process(report: pytest.TestReport) -> str:
    """The process a report came from: the xdist worker's gateway id (``gw0``), or ``main`` without xdist.

    xdist sets ``report.node`` (its ``WorkerController``) on reports it replays on the controller.
    """
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    return str(getattr(gateway, "id", "main"))


def _worker_interactor(config: pytest.Config) -> Any:
    return next((p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "WorkerInteractor"), None)


def worker_queue(config: pytest.Config) -> Any:
    """This xdist worker's queue of items still to run (``WorkerInteractor.torun``), or None.

    Runs are started ahead in the order the worker will run them (``scheduler.Prefetcher``);
    xdist keeps that order in its private ``WorkerInteractor`` plugin's ``torun`` queue (item
    indexes, read under its ``lock()``). None outside a worker.
    """
    worker = _worker_interactor(config)
    return getattr(worker, "torun", None) if worker is not None else None


def guard_worker_steal(config: pytest.Config, started: Callable[[int], bool]) -> bool:
    """Answer the controller's steal requests on this worker with its queued items not ``started``.

    xdist's worker answers a steal (``WorkerInteractor.steal``, called by its ``handle_command``)
    with every requested item still in its queue, or none; a run the worker has started ahead
    is still in that queue, so it would be run a second time elsewhere and its first calls
    thrown away. This answer, under the queue's lock (the prefetcher marks what it starts under
    the same lock), hands back the requested items still queued and not started, and sends
    xdist's ``unscheduled`` event as xdist does. xdist has no public hook for it. False outside a worker.
    """
    worker = _worker_interactor(config)
    if worker is None:
        return False
    queue = worker.torun

    def steal(indices: Sequence[int]) -> None:
        requested = set(indices)
        with queue.lock() as items:
            stolen = [i for i in items if i in requested and not started(i)]
            gone = set(stolen)
            queue.replace(i for i in items if i not in gone)
        worker.sendevent("unscheduled", indices=stolen)

    worker.steal = steal
    return True


__all__ = ["callspec_params", "failure_repr", "guard_worker_steal", "is_pytest_object", "is_worker", "node_worker_input", "node_worker_output",
           "node_worker_pid", "older_temp_dirs_cleanup",
           "report_process", "set_terminal_file", "set_worker_output", "terminal_file", "tmp_path_factory",
           "worker_input", "worker_queue"]
