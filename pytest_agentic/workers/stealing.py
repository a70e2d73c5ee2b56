"""The controller's scheduler for a campaign under xdist: every run dealt at the start, only
runs not yet started stolen at the end.

xdist's ``load`` scheduler sends each worker a few items at a time, so a worker can start
ahead (``scheduler.Prefetcher``) only those few and its limiter never fills; ``worksteal``
sends everything at the start but takes items back from a worker's queue whether or not the
worker has already started their runs, and a run started twice spends its first model calls
for nothing. Here:

- **Dealt at the start**, round-robin as ``--agentic-shard`` deals runs (item ``i`` to worker
  ``i mod W``): each worker holds its whole share, and its prefetcher starts as many of them
  as its own limits allow (the per-worker limits of docs/scale.md).
- **Stolen at the end, only if not started.** A worker with fewer than two items left asks
  the worker with the most for the back half of its queue (one request at a time, as
  ``worksteal``). The worker answers from its queue under the queue's lock and leaves out
  every item its prefetcher has taken (``hooks.claimed``, marked under the same lock): the
  answer is what was not started, and nothing that was can be moved. The prefetcher takes
  items from the front of the queue, so an answer short of the request means the rest of
  that worker's queue has started: it is not asked again (``exhausted``) until it is sent
  more, and an idle worker with nothing left to steal is shut down (it finishes its items).
- **A lost worker**: its items go back to be dealt again, except the one it was judging,
  which xdist reports as crashed (the campaign records it as an infra error); the runs it had
  started ahead are run again by another worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from xdist.scheduler import WorkStealingScheduling
from xdist.workermanage import WorkerController

#: A worker runs an item once it knows the next one (or is shut down): two in its queue.
MIN_PENDING = 2


class RunStealing(WorkStealingScheduling):
    """xdist's work stealing, dealt as shards, stealing only what a worker has not started."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        #: Workers whose queue has started to its end: a steal would get nothing.
        self.exhausted: set[WorkerController] = set()
        #: The items of the steal request in flight.
        self.requested: list[int] = []
        self.steal_requested_from_node: WorkerController | None = None
        self.collection: list[str] | None = None

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:  # a worker that joined later (one replaced a lost one)
            self.check_schedule()
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        collection: list[str] = next(iter(self.node2collection.values()))
        self.collection = collection
        nodes = [node for node in self.nodes if not node.shutting_down]
        for k, node in enumerate(nodes):
            share = list(range(k, len(collection), len(nodes)))
            if share:
                self.node2pending[node].extend(share)
                node.send_runtest_some(share)
        self.check_schedule()

    def check_schedule(self) -> None:
        up = [(node, pending) for node, pending in self.node2pending.items() if not node.shutting_down]
        idle = [node for node, pending in up if len(pending) < MIN_PENDING]
        if not idle:
            return
        if self.pending:  # given back by a lost worker or by a steal: to the idle workers, evenly
            for i, node in enumerate(idle):
                self._send_tests(node, len(self.pending) // (len(idle) - i))
            idle = [node for node, pending in up if len(pending) < MIN_PENDING]
            if not idle:
                return
        if self.steal_requested_from_node is not None:
            return  # one request at a time
        victims = [(node, pending) for node, pending in up
                   if node not in self.exhausted and len(pending) > MIN_PENDING]
        if victims:
            node, pending = max(victims, key=lambda victim: len(victim[1]))
            count = min(len(pending) // 2, len(pending) - MIN_PENDING)
            self.requested = pending[-count:]
            node.send_steal(self.requested)
            self.steal_requested_from_node = node
            return
        for node in idle:  # nothing left that has not started: it runs its last items and stops
            node.shutdown()

    def remove_pending_tests_from_node(self, node: WorkerController, indices: Sequence[int]) -> None:
        if set(indices) != set(self.requested):
            self.exhausted.add(node)  # the rest of its queue had started
        self.requested = []
        super().remove_pending_tests_from_node(node, indices)

    def _send_tests(self, node: WorkerController, num: int) -> None:
        if num > 0:
            self.exhausted.discard(node)  # what it is sent now has not started
        super()._send_tests(node, num)

    def remove_node(self, node: WorkerController) -> str | None:
        self.exhausted.discard(node)
        if self.steal_requested_from_node is node:
            self.requested = []
        return super().remove_node(node)
