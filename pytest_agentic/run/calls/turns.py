"""Runs in flight take turns at the interpreter, first come first served, and give the turn up to wait.

A process holds hundreds of runs in flight on threads, and one interpreter lock. When a burst of
answers comes back at once, every run's thread has the same work to do (read the reply, run the
tool, build the next request): left to the interpreter, they share it, each one a few
milliseconds at a time, so they all finish at about the same moment, at the end of the burst. No
next call is sent until then: the endpoint sees the calls in flight fall to a handful, then
jump back, wave after wave (measured in docs/design.md, "Where a run's CPU goes").

Here a run does its CPU work under a turn (``run_turn``) and gives the turn up while it waits on
something that is not the interpreter (``waiting``: the network, a slot of its model's limiter,
a rate-limit pause, a tool's subprocess). Turns go in the order asked for, ``WIDTH`` at a time,
so the first answer back is the first whose next call is sent, a few milliseconds later, while
the others wait their turn without contending for the lock: the pipeline stays full.

The turn belongs to the run, not to a thread: the run's own threads (its deadline thread, its
tool and call threads, ``run.limits.Deadline`` and ``llm._complete_within``) carry it in a
context variable, copied when they start. A thread of the run that was abandoned (a call past its
deadline) may still give the turn up and take it again; the turn is held once at most, and a
run that ended (``run_turn`` exited) takes none. Code outside a pooled run (a sequential run in
its test, the main thread judging) has no turn and never waits for one.

Whatever blocks under a turn without saying so (a slow disk, a call this module does not wrap)
can only slow the others: a turn held longer than ``STUCK_S`` lets the next one in beside it.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

#: Runs at their CPU work at once. One interpreter lock runs one at a time; a second turn lets a
#: run's system calls (a socket write, a file) overlap another's Python.
WIDTH = 2
#: A turn held this long is taken to be blocked on something unseen: the next run goes in beside it.
STUCK_S = 0.5


class Gate:
    """``width`` turns at once, granted in the order asked for (a ``threading.Lock`` is not fair)."""

    def __init__(self, width: int = WIDTH, stuck_s: float = STUCK_S) -> None:
        self.width = width
        self.stuck_s = stuck_s
        self._lock = threading.Lock()
        self._waiters: deque[tuple[int, threading.Event]] = deque()
        #: The turns held now: when each was granted (``time.monotonic``), by ticket.
        self._held: dict[int, float] = {}
        self._tickets = 0
        self._watchdog: threading.Thread | None = None
        #: Turns granted beside turns held past ``stuck_s`` (for tests and benchmarks).
        self.overflowed = 0

    def acquire(self) -> int:
        """Wait for a turn; returns its ticket, for ``release``."""
        with self._lock:
            self._tickets += 1
            ticket = self._tickets
            if len(self._held) < self.width and not self._waiters:
                self._held[ticket] = time.monotonic()
                return ticket
            event = threading.Event()
            self._waiters.append((ticket, event))
            if self._watchdog is None:
                self._watchdog = threading.Thread(target=self._watch, name="agentic-turns-watchdog", daemon=True)
                self._watchdog.start()
        event.wait()  # no timeout: thousands of waiters cost nothing until their turn (the watchdog sees stuck turns)
        return ticket

    def _watch(self) -> None:
        """Every ``stuck_s`` while runs wait: when every turn held is older than that, let the next run in."""
        while True:
            time.sleep(self.stuck_s)
            with self._lock:
                if not self._waiters:
                    self._watchdog = None
                    return
                now = time.monotonic()
                if all(now - t >= self.stuck_s for t in self._held.values()):
                    waiter, event = self._waiters.popleft()
                    self._held[waiter] = now
                    self.overflowed += 1
                    event.set()

    def release(self, ticket: int) -> None:
        """Give a turn back; the turn goes straight to the longest waiter."""
        with self._lock:
            self._held.pop(ticket, None)
            while self._waiters and len(self._held) < self.width:
                waiter, event = self._waiters.popleft()
                self._held[waiter] = time.monotonic()
                event.set()

    @property
    def held(self) -> int:
        with self._lock:
            return len(self._held)


GATE = Gate()


class Turn:
    """One run's place at the gate: held or not, and never again once the run ended."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self._lock = threading.Lock()
        self._ticket: int | None = None
        self._closed = False

    def take(self) -> None:
        with self._lock:
            if self._ticket is not None or self._closed:
                return
        ticket = self.gate.acquire()
        with self._lock:
            if self._ticket is None and not self._closed:
                self._ticket = ticket
                return
        self.gate.release(ticket)  # another thread of the run took it meanwhile, or the run ended

    def give(self) -> bool:
        """Give the turn up; True when this call did (so the caller takes it again)."""
        with self._lock:
            ticket, self._ticket = self._ticket, None
        if ticket is None:
            return False
        self.gate.release(ticket)
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.give()


_CURRENT: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("agentic_turn", default=None)


@contextmanager
def run_turn(gate: Gate | None = None) -> Iterator[Turn]:
    """Run the block (a pooled run) under a turn, its own threads included (they copy the context)."""
    turn = Turn(gate or GATE)
    token = _CURRENT.set(turn)
    turn.take()
    try:
        yield turn
    finally:
        turn.close()
        _CURRENT.reset(token)


@contextmanager
def waiting() -> Iterator[None]:
    """The block waits on something outside the interpreter: the run's turn goes to the next run meanwhile."""
    turn = _CURRENT.get()
    gave = turn.give() if turn is not None else False
    try:
        yield
    finally:
        if gave:
            assert turn is not None
            turn.take()


def current() -> Turn | None:
    return _CURRENT.get()


__all__ = ["GATE", "STUCK_S", "WIDTH", "Gate", "Turn", "current", "run_turn", "waiting"]
