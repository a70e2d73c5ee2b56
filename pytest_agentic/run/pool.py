"""A bounded pool of threads for agent runs: N at a time, fewer per model where a model says so.

Threads, not an event loop: the agent loop and its tools are synchronous (subprocesses,
files), and litellm's synchronous ``completion`` is safe to call from several threads, so a
run is the same code whether it runs alone or beside others. The work of a run is waiting
on the endpoint, during which a thread holds no CPU and only a small stack.

``concurrent.futures.ThreadPoolExecutor`` has no per-key cap, hence this small scheduler:
runs start in the order they were submitted, skipping over a run whose model is at its cap
(``max_concurrency`` in models.yaml) so that another model's runs need not wait behind it.
A model with an adaptive limit (``run.limiter``) is capped as that limit moves
(``ModelLimiter.runs``: twice its calls in flight), and a limit that grows starts more.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from .limiter import ModelLimiter


@dataclass
class _Pending:
    key: str
    fn: Callable[[], Any]
    future: Future


class RunPool:
    """Runs submitted callables on up to ``limit`` threads, at most ``caps[key]`` per key."""

    def __init__(self, limit: int, caps: Mapping[str, int] | None = None,
                 limiters: Mapping[str, ModelLimiter] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"a pool needs at least one thread, got {limit}")
        self.limit = limit
        self.caps = dict(caps or {})
        self.limiters = dict(limiters or {})
        for gate in self.limiters.values():
            gate.on_change(self.wake)
        #: Set when the session stops: runs in flight end at their next turn, pending ones never start.
        self.stopping = threading.Event()
        self._cond = threading.Condition()
        self._pending: list[_Pending] = []
        self._running: dict[str, int] = {}
        self._threads: list[threading.Thread] = []
        self._idle = 0
        #: The most runs that were ever in flight at once (for tests and benchmarks).
        self.peak = 0

    def submit(self, key: str, fn: Callable[[], Any]) -> Future:
        future: Future = Future()
        with self._cond:
            if self.stopping.is_set():
                future.cancel()
                return future
            self._pending.append(_Pending(key, fn, future))
            self._spawn()
            self._cond.notify()
        return future

    def _spawn(self) -> None:
        """Start threads for the pending runs that may start now (called with the lock held)."""
        free = len(self._threads) - sum(self._running.values())  # idle, or starting and about to look
        while free < self._startable() and len(self._threads) < self.limit:
            thread = threading.Thread(target=self._work, name=f"agentic-run-{len(self._threads) + 1}",
                                      daemon=True)
            self._threads.append(thread)
            thread.start()
            free += 1

    def _startable(self) -> int:
        """How many pending runs could start at once under the caps (called with the lock held)."""
        room = self.limit - sum(self._running.values())
        taken: dict[str, int] = {}
        for job in self._pending:
            if sum(taken.values()) >= room:
                break
            cap = self.cap(job.key)
            if cap is None or self._running.get(job.key, 0) + taken.get(job.key, 0) < cap:
                taken[job.key] = taken.get(job.key, 0) + 1
        return sum(taken.values())

    def wake(self) -> None:
        """A model's limit moved: idle threads look again, and a thread starts if none is idle."""
        with self._cond:
            self._spawn()
            self._cond.notify_all()

    def cap(self, key: str) -> int | None:
        gate = self.limiters.get(key)
        return gate.runs if gate is not None else self.caps.get(key)

    def in_flight(self) -> int:
        with self._cond:
            return sum(self._running.values())

    def _next(self) -> _Pending | None:
        """The first pending run whose key has room (called with the lock held)."""
        if sum(self._running.values()) >= self.limit:
            return None
        for i, job in enumerate(self._pending):
            cap = self.cap(job.key)
            if cap is None or self._running.get(job.key, 0) < cap:
                return self._pending.pop(i)
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._next()
                while job is None:
                    if self.stopping.is_set():
                        return
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                    job = self._next()
                if not job.future.set_running_or_notify_cancel():
                    continue
                self._running[job.key] = self._running.get(job.key, 0) + 1
                self.peak = max(self.peak, sum(self._running.values()))
            try:
                value = job.fn()
            except BaseException as exc:  # handed to whoever waits on the run
                job.future.set_exception(exc)
            else:
                job.future.set_result(value)
            finally:
                with self._cond:
                    self._running[job.key] -= 1
                    self._cond.notify_all()

    def stop(self, wait_s: float = 0.0) -> int:
        """Cancel the runs not yet started and ask the others to end; returns how many were cancelled.

        Threads are daemons: a run blocked in a model call does not hold the process past
        ``wait_s`` (it stops at its next turn if the process lives on).
        """
        with self._cond:
            self.stopping.set()
            cancelled = 0
            for job in self._pending:
                cancelled += job.future.cancel()
            self._pending.clear()
            self._cond.notify_all()
        if wait_s > 0:
            for thread in list(self._threads):
                thread.join(wait_s)
        return cancelled


__all__ = ["RunPool"]
