"""A bounded pool of threads for agent runs: N at a time, fewer per model where a model says so.

Threads, not an event loop: the agent loop and its tools are synchronous (subprocesses,
files), and litellm's synchronous ``completion`` is safe to call from several threads, so a
run is the same code whether it runs alone or beside others. The work of a run is waiting
on the endpoint, during which a thread holds no CPU and only a small stack.

``concurrent.futures.ThreadPoolExecutor`` has no per-key cap, hence this small scheduler:
runs start in the order they were submitted, skipping over a run whose model is at its cap
(``max_concurrency`` in models.yaml) so that another model's runs need not wait behind it.
A model with an adaptive limit (``run.calls.limiter``) is capped as that limit moves
(``ModelLimiter.runs``: twice its calls in flight), and a limit that grows starts more.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from .calls import turns
from .calls.limiter import ModelLimiter


@dataclass
class _Pending:
    key: str
    fn: Callable[[], Any]
    future: Future
    #: Submission order: the first pending run of the keys with room starts first.
    order: int = 0


class RunPool:
    """Runs submitted callables on up to ``limit`` threads, at most ``caps[key]`` per key."""

    def __init__(self, limit: int, caps: Mapping[str, int] | None = None,
                 limiters: Mapping[str, ModelLimiter] | None = None, turn_gate: turns.Gate | None = None) -> None:
        if limit < 1:
            raise ValueError(f"a pool needs at least one thread, got {limit}")
        self.limit = limit
        self.caps = dict(caps or {})
        self.limiters = dict(limiters or {})
        #: When set, each run does its CPU work under a turn of this gate (``run.calls.turns``).
        self.turn_gate = turn_gate
        for gate in self.limiters.values():
            gate.on_change(self.wake)
        #: Set when the session stops: runs in flight end at their next turn, pending ones never start.
        self.stopping = threading.Event()
        self._cond = threading.Condition()
        #: Pending runs by key, each in submission order: every step looks at the heads alone, so a
        #: submit or a start costs the same with 10 or 3000 runs pending.
        self._pending: dict[str, deque[_Pending]] = {}
        self._order = itertools.count()
        self._running: dict[str, int] = {}
        self._busy = 0
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
            self._pending.setdefault(key, deque()).append(_Pending(key, fn, future, next(self._order)))
            self._spawn()
            self._cond.notify()
        return future

    def _spawn(self) -> None:
        """Start threads for the pending runs that may start now (called with the lock held)."""
        free = len(self._threads) - self._busy  # idle, or starting and about to look
        want = self._startable()
        while free < want and len(self._threads) < self.limit:
            thread = threading.Thread(target=self._work, name=f"agentic-run-{len(self._threads) + 1}",
                                      daemon=True)
            self._threads.append(thread)
            thread.start()
            free += 1

    def _room(self, key: str) -> int:
        """How many more runs of ``key`` may start under its cap (called with the lock held)."""
        cap = self.cap(key)
        return len(self._pending.get(key, ())) if cap is None else cap - self._running.get(key, 0)

    def _startable(self) -> int:
        """How many pending runs could start at once under the caps (called with the lock held)."""
        room = self.limit - self._busy
        by_key = sum(max(0, min(len(jobs), self._room(key))) for key, jobs in self._pending.items())
        return max(0, min(room, by_key))

    def wake(self) -> None:
        """A model's limit moved: as many idle threads look again as runs may start, and threads start if too few are idle."""
        with self._cond:
            self._spawn()
            self._cond.notify(self._startable())

    def cap(self, key: str) -> int | None:
        gate = self.limiters.get(key)
        return gate.runs if gate is not None else self.caps.get(key)

    def in_flight(self) -> int:
        with self._cond:
            return self._busy

    def _next(self) -> _Pending | None:
        """The first pending run, in submission order, whose key has room (called with the lock held)."""
        if self._busy >= self.limit:
            return None
        heads = [jobs[0] for key, jobs in self._pending.items() if jobs and self._room(key) > 0]
        if not heads:
            return None
        job = min(heads, key=lambda j: j.order)
        self._pending[job.key].popleft()
        return job

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
                self._busy += 1
                self.peak = max(self.peak, self._busy)
            try:
                if self.turn_gate is None:
                    value = job.fn()
                else:
                    with turns.run_turn(self.turn_gate):
                        value = job.fn()
            except BaseException as exc:  # handed to whoever waits on the run
                job.future.set_exception(exc)
            else:
                job.future.set_result(value)
            finally:
                with self._cond:
                    self._running[job.key] -= 1
                    self._busy -= 1
                    self._cond.notify()  # one run may start in its place

    def stop(self, wait_s: float = 0.0) -> int:
        """Cancel the runs not yet started and ask the others to end; returns how many were cancelled.

        Threads are daemons: a run blocked in a model call does not hold the process past
        ``wait_s`` (it stops at its next turn if the process lives on).
        """
        with self._cond:
            self.stopping.set()
            cancelled = 0
            for jobs in self._pending.values():
                for job in jobs:
                    cancelled += job.future.cancel()
            self._pending.clear()
            self._cond.notify_all()
        if wait_s > 0:
            for thread in list(self._threads):
                thread.join(wait_s)
        return cancelled


__all__ = ["RunPool"]
