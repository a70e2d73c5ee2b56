"""Agent runs started ahead of pytest's item loop, as many as each model's limit allows.

The process that runs the items (the only one, or each xdist worker) keeps the next runs
in flight on a ``run.pool.RunPool`` while pytest works through its items one by one: when
an item starts, the runs of the items after it, up to a window of ``2 * N``, are prepared
(a fresh workspace each, made here in the main thread before its run starts) and submitted
in pytest's order. The item's ``agent`` fixture claims its prepared run; its test body, the
checker, waits for the run and judges it in order, so reports, markers, JUnit properties
and records are those of a sequential session. An item with no prepared run (a skip
marker, concurrency 1, a run the window did not reach) runs in its test as before.

How many at once, per model (``pacing_of``): a model reached over HTTP has an adaptive limit
(``run.calls.limiter``) capped by ``--agentic-concurrency N`` / ``max_concurrency`` (cap 1:
sequential); a scripted model and a local llama.cpp server keep a fixed N (default 1). The
window is twice the runs the models may have going now (``RunPool.cap``), read at each item:
a limit that grows widens it at the next item; one that shrinks leaves prepared runs pending
in the pool, which starts no more of a model's runs than its limit allows
(``ModelLimiter.runs``).

Which items come next: in a plain session, ``session.items`` in order; in an xdist worker,
the items the controller has sent it and not yet run (xdist's ``WorkerInteractor.torun``),
so N is per worker. What a worker takes from its queue to start ahead is marked under the
queue's lock (``claimed``): the controller may take back ("steal") only the others
(``workers.stealing``, ``internals.guard_worker_steal``), so no run is started twice.
"""

from __future__ import annotations

import re
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from . import internals
from .fixture import Agent, spent_message
from .run.calls import connections, limiter, llm, turns
from .run.pool import RunPool
from .run.task import task_spec_of
from .session import SESSION_KEY, AgenticSession
from .workers import hooks as worker_hooks

#: Finished runs waiting to be judged beyond which no further run starts: when answers come back faster than
#: the test bodies judge them, starting more only lengthens the queue the session's end must still judge
#: (at 3000 one-call runs answered at once: some 2000 runs, 20 s after the last answer). A few seconds of judging.
BACKLOG = 256

#: Where a call report carries its process's limiter news (plain dicts) to the controller.
PACING_ATTR = "agentic_pacing"


def pacing_of(session: AgenticSession) -> dict[str, tuple[int, int, bool]]:
    """Per model: (start, cap, adaptive). Caps: ``--agentic-concurrency``, ``max_concurrency``,
    a local server's explicit ``parallel``; adaptive for a model reached over HTTP whose cap is over 1."""
    pacing: dict[str, tuple[int, int, bool]] = {}
    for entry in session.selected_models():
        caps = [n for n in (session.concurrency, entry.max_concurrency, (entry.server or {}).get("parallel")) if n]
        local_cpu = (entry.server or {}).get("kind") == "llama.cpp"
        if entry.scripted or session.replay is not None or local_cpu:
            fixed = min([session.concurrency or 1, *caps])  # today's rule: N, default 1
            pacing[entry.name] = (fixed, fixed, False)
        else:
            cap = min(caps) if caps else limiter.CAP
            pacing[entry.name] = (min(limiter.START, cap), cap, cap > 1)
    return pacing


def install_limiters(session: AgenticSession) -> dict[str, limiter.ModelLimiter]:
    """The limiters of this process's models that answer over HTTP (scripted ones are never rate-limited)."""
    limiter.reset()
    gates = {}
    for name, (start, cap, adaptive) in pacing_of(session).items():
        entry = session.entry(name)
        if not entry.scripted and session.replay is None:
            gates[name] = limiter.install(name, start, cap, adaptive)
    if gates:  # litellm's connection pool holds every call the limiters may allow at once
        connections.size_pool(sum(gate.aimd.cap for gate in gates.values()))
        llm.register_prices([(e.model, e.price) for e in map(session.entry, gates) if e.price is not None])
    return gates


def pacing_news(config: pytest.Config) -> dict[str, Any] | None:
    """This process's limiter news since the last report, for a call report (None when there is none)."""
    news = limiter.drain_all()
    if not news:
        return None
    return {"worker": internals.worker_input(config).get("workerid"), "models": news}


class Prefetcher:
    def __init__(self, session: AgenticSession, pytest_session: pytest.Session,
                 gates: dict[str, limiter.ModelLimiter]) -> None:
        self.session = session
        self.items = pytest_session.items
        self.config = pytest_session.config
        pacing = pacing_of(session)
        self.caps = {name: cap for name, (_, cap, _) in pacing.items()}
        # Runs over HTTP take turns at their CPU work, so a burst of answers is worked through in order and
        # each run's next call leaves as soon as its own answer is read (``run.calls.turns``).
        self.pool = RunPool(sum(self.caps.values()), self.caps, gates, turn_gate=turns.Gate() if gates else None)
        #: Prepared and not yet claimed, by node id; a claimed run leaves (memory stays bounded).
        self.agents: dict[str, Agent] = {}
        self._started: dict[str, threading.Event] = {}
        self._seen: set[str] = set()
        self._index = {item.nodeid: i for i, item in enumerate(self.items)}
        self._queue = internals.worker_queue(self.config)
        #: In a plain session, the index of the first item not yet looked at: each item costs O(1)
        #: however wide the window, not a scan of the window.
        self._cursor = 0
        self._runs_dir: Path | None = None
        self._made = 0
        #: Under xdist, the queue items taken to start ahead: never given back to a steal.
        self._claimed = worker_hooks.claimed(self.config)
        self._factory = internals.tmp_path_factory(self.config)
        self._current: tuple[pytest.Item, pytest.Item | None] | None = None
        #: Runs that finished and are not yet claimed by their test (``BACKLOG``), by node id.
        self._finished: set[str] = set()
        self._finished_lock = threading.Lock()
        _ = session.secrets  # read the environment once, here, not from the pool's threads

    @property
    def window(self) -> int:
        """How far ahead runs are prepared: twice the runs the models may have in flight now."""
        return 2 * sum(self.pool.cap(name) or cap for name, cap in self.caps.items())

    # -- which items come next --------------------------------------------------
    def upcoming(self, item: pytest.Item, nextitem: pytest.Item | None) -> list[pytest.Item]:
        if self._queue is None:
            start = self._index.get(item.nodeid, len(self.items))
            end = min(len(self.items), start + self.window + 1)
            first = max(start, self._cursor)
            # Past the backlog of finished runs the window waits for the judging to catch up (``BACKLOG``).
            end = min(end, first + max(0, BACKLOG - self.backlog))
            self._cursor = max(self._cursor, end)
            return self.items[first:end]
        ahead = [nextitem] if nextitem is not None else []
        # The backlog binds a worker as it binds a plain session: no more fresh claims while it is full.
        ahead += [self.items[i] for i in self.claim_queued(self.window - len(ahead), max(0, BACKLOG - self.backlog))]
        return [item, *ahead][: self.window + 1]

    def claim_queued(self, count: int, fresh: int | None = None) -> list[int]:
        """The first ``count`` items of this worker's queue, marked started under the queue's lock; of
        those not claimed before, ``fresh`` at most (what is claimed stays a prefix of the queue)."""
        with self._queue.lock() as queue:
            room = count if fresh is None else fresh
            taken: list[int] = []
            for i in list(queue)[:count]:
                if not isinstance(i, int):
                    continue
                if i not in self._claimed:
                    if room <= 0:
                        break
                    room -= 1
                taken.append(i)
            self._claimed.update(taken)
        return taken

    @property
    def backlog(self) -> int:
        """Runs finished and not yet claimed by their test."""
        return len(self._finished)

    def _done(self, nodeid: str) -> None:
        with self._finished_lock:
            if nodeid in self.agents:
                self._finished.add(nodeid)

    @staticmethod
    def eligible(item: pytest.Item) -> bool:
        if "agent" not in getattr(item, "fixturenames", ()) or task_spec_of(item) is None:
            return False
        # A run that pytest may not judge is not started ahead (it runs in its test, if at all).
        if any(item.iter_markers("skip")) or any(item.iter_markers("skipif")):
            return False
        return not any(m.kwargs.get("run", True) is False for m in item.iter_markers("xfail"))

    # -- starting runs ------------------------------------------------------------
    def top_up(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        self._current = (item, nextitem)
        if self.pool.stopping.is_set():
            return
        for upcoming in self.upcoming(item, nextitem):
            if upcoming.nodeid in self._seen:
                continue
            self._seen.add(upcoming.nodeid)
            if self.eligible(upcoming):
                self.submit(upcoming)

    def refill(self) -> None:
        """Top up again for the item being judged: called while its test waits for its run, so a
        limit that grew meanwhile is filled now, not when the next item starts."""
        if self._current is not None:
            self.top_up(*self._current)

    def workspace_root(self, item: pytest.Item) -> Path:
        """A fresh folder for the run's workspace, in one folder of the session's runs.

        Not ``mktemp(name, numbered=True)`` per run: pytest finds the next number by listing the
        base folder, so each run would cost a listing of every run before it.
        """
        name = re.sub(r"[\W]", "_", item.name)[:30]
        if self._runs_dir is None:
            self._runs_dir = (self._factory.mktemp("agentic-runs", numbered=True) if self._factory is not None
                              else Path(tempfile.mkdtemp(prefix="agentic-runs-")))
        self._made += 1
        folder = self._runs_dir / f"{self._made}-{name}"
        folder.mkdir()
        return folder / "workspace"

    def submit(self, item: pytest.Item) -> None:
        spec = task_spec_of(item)
        case = internals.callspec_params(item).get("agentic_case")
        if spec is None or case is None:
            return  # not an agent test (``eligible`` keeps those out)
        try:
            agent = Agent(self.session, item, spec, case, self.workspace_root(item))
            agent.script()
        except Exception:  # noqa: BLE001 - the item's own fixture meets the same error, in its test
            return
        started = threading.Event()
        self._started[item.nodeid] = started
        self.agents[item.nodeid] = agent
        agent.future = self.pool.submit(case.model, lambda: self._job(agent, started))
        agent.future.add_done_callback(lambda _: self._done(item.nodeid))

    def _job(self, agent: Agent, started: threading.Event) -> Any:
        # No run starts once the budget is spent: checked as each run starts, not when queued.
        agent.budget_skip = spent_message(self.session)
        started.set()
        if agent.budget_skip:
            return None
        return agent.execute(should_stop=self.pool.stopping.is_set)

    # -- the item's fixture ---------------------------------------------------------
    def claim(self, item: pytest.Item) -> Agent | None:
        """The run prepared for ``item``, once it has started (or was refused by the budget)."""
        with self._finished_lock:
            agent = self.agents.pop(item.nodeid, None)
            self._finished.discard(item.nodeid)
        if agent is None:
            return None
        started = self._started.pop(item.nodeid)
        assert agent.future is not None
        while not started.wait(0.2):
            if agent.future.done():
                break
        return agent

    # -- the end ------------------------------------------------------------------
    def stop(self) -> dict[str, int]:
        """Cancel what has not started, stop what runs; count the runs left unjudged."""
        unclaimed = list(self.agents.values())
        self.agents.clear()
        cancelled = self.pool.stop(wait_s=0.0)
        counts = {"cancelled": cancelled, "stopped": 0, "finished": 0}
        for agent in unclaimed:
            future = agent.future
            if future is None or future.cancelled():
                continue
            if not future.done():
                counts["stopped"] += 1
            elif not agent.budget_skip:
                counts["finished"] += 1
        return counts


def start(pytest_session: pytest.Session) -> Prefetcher | None:
    """A prefetcher for the process that runs the items, when concurrency is asked for."""
    config = pytest_session.config
    session = config.stash[SESSION_KEY]
    if (config.option.collectonly or not pytest_session.items
            or config.pluginmanager.has_plugin("dsession")):  # the xdist controller runs no item
        return None
    if not any(Prefetcher.eligible(item) for item in pytest_session.items):
        return None
    gates = install_limiters(session)  # also in a sequential session: rate limits are waited out
    if all(cap <= 1 for _, cap, _ in pacing_of(session).values()):
        return None
    prefetcher = Prefetcher(session, pytest_session, gates)
    session.scheduler = prefetcher
    return prefetcher


def in_flight(session: AgenticSession, starting: bool) -> int:
    """Runs this process has in flight: those running on its pool, and at least the item's own when ``starting``."""
    ahead = session.scheduler.pool.in_flight() if session.scheduler is not None else 0
    return max(ahead, 1) if starting else ahead


def finish(pytest_session: pytest.Session, prefetcher: Prefetcher | None) -> None:
    if prefetcher is None:
        return
    session = pytest_session.config.stash[SESSION_KEY]
    session.scheduler = None
    counts = prefetcher.stop()
    left = sum(counts.values())
    reporter = pytest_session.config.pluginmanager.get_plugin("terminalreporter")
    if left and reporter is not None and not session.is_worker:
        reporter.write_line(
            f"agentic: the session stopped with {left} runs started ahead and not judged "
            f"({counts['cancelled']} not started, {counts['stopped']} stopped in flight, "
            f"{counts['finished']} finished); none is recorded; --agentic-resume runs them",
            yellow=True)
