"""``-n``: every run dealt at the start, only runs not started stolen, a lost worker's runs run again.

The plugin's scheduler (``pytest_agentic/workers/stealing.py``) deals the items round-robin and
steals at the end only what a worker has not started ahead (``internals.guard_worker_steal``).
These campaigns count the model calls at a real HTTP endpoint: one call per run, whichever
worker ran it, and the verdicts of a campaign with no xdist.
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_agentic.run.task import Final

from .async_server import AsyncEndpoint
from .helpers import campaign_dir, runs

#: Even runs are judged slowly: they fall to the second worker (items dealt round-robin), which
#: then lags with runs queued, and the first, idle, steals from it.
SLOW_EVEN = '''
import os, signal, time
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={}, tools=("fs_list",), reference=[Final("ok")])

@task("say_ok_1", "say_ok", build=build)
def test_say_ok(agent):
    run = agent.run()
    if agent.run_index == int(os.environ.get("AGENTIC_TEST_KILL_RUN", "0")) and os.environ.get("PYTEST_XDIST_WORKER"):
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies while it judges this run, others started ahead
    if agent.run_index % 2 == 0 and os.environ.get("PYTEST_XDIST_WORKER"):
        time.sleep(0.25)
    assert run.final_answer == "ok"
'''


def project(pytester, server):
    entry = {"model": "openai/ok", "api_base": server.api_base, "max_concurrency": 4,
             "price": {"input_per_token": 0.001, "output_per_token": 0.0}, "limits": {"max_retries": 0}}
    (pytester.path / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": entry}}))
    pytester.makepyfile(test_say_ok=SLOW_EVEN)


def verdicts(folder):
    return sorted((r["task"], r["model"], r["run"], r["passed"], r["failure_mode"]) for r in runs(folder))


def ran_on(output: str) -> dict[int, str]:
    """The worker that reported each run (``-v`` under xdist: ``[gw0] [ 5%] PASSED test_say_ok.py::...[local-run7]``)."""
    return {int(m[2]): m[1] for m in re.finditer(r"\[(gw\d+)\] \[ *\d+%\] \w+ \S+\[local-run(\d+)\]", output)}


def test_stolen_runs_are_runs_not_started_and_cost_no_extra_call(pytester, monkeypatch):
    n = 40
    monkeypatch.setenv("AGENTIC_TEST_KILL_RUN", "0")
    with AsyncEndpoint({"Say ok.": [Final("ok")]}, latency_s=0.2) as server:
        project(pytester, server)
        plain = pytester.runpytest_subprocess("--runs", str(n), "--agentic-out", "seq", "-p", "no:xdist",
                                              "-p", "no:randomly", "--agentic-concurrency", "1")
        one_process = server.arrived
        server.arrived = 0
        result = pytester.runpytest_subprocess("--runs", str(n), "--agentic-out", "xd", "-n", "2", "-v",
                                               "-p", "no:randomly")
    plain.assert_outcomes(passed=n)
    result.assert_outcomes(passed=n)
    assert one_process == n and server.arrived == n  # no run started twice: one call each
    assert verdicts(campaign_dir(pytester.path / "xd")) == verdicts(campaign_dir(pytester.path / "seq"))
    workers = ran_on(result.stdout.str())
    assert sorted(workers) == list(range(1, n + 1))
    # Dealt round-robin in the order the workers reported their collection (which comes first depends on the
    # machine): odd runs to one worker, even runs to the other, and a steal moves at most the back half of a
    # queue, so the dealing is the parity split most runs follow. Which worker lags depends on the load too;
    # a run that moved was stolen from the other's queue, and only from beyond its window (runs it started ahead).
    dealt = min(({1: "gw0", 0: "gw1"}, {1: "gw1", 0: "gw0"}),
                key=lambda split: sum(workers[r] != split[r % 2] for r in workers))
    moved = [r for r in workers if workers[r] != dealt[r % 2]]
    assert set(workers.values()) == {"gw0", "gw1"}, workers
    assert all(r > 2 * 4 for r in moved), (moved, workers)


def test_a_lost_workers_runs_are_run_again_and_each_recorded_once(pytester, monkeypatch):
    n = 24
    monkeypatch.setenv("AGENTIC_TEST_KILL_RUN", "4")
    with AsyncEndpoint({"Say ok.": [Final("ok")]}, latency_s=0.2) as server:
        project(pytester, server)
        result = pytester.runpytest_subprocess("--runs", str(n), "--agentic-out", "out", "-n", "2", "-v",
                                               "-p", "no:randomly")
    records = runs(campaign_dir(pytester.path / "out"))
    by_run = {r["run"]: r for r in records}
    assert sorted(by_run) == list(range(1, n + 1)) and len(records) == n
    assert by_run[4]["failure_mode"] == "infra_error" and "crashed" in by_run[4]["infra_cause"]
    assert all(by_run[r]["passed"] for r in by_run if r != 4)
    # The lost worker had started runs ahead of run 4; they were run again by a worker alive.
    assert server.arrived > n
    assert result.ret == pytest.ExitCode.TESTS_FAILED


class Node:
    """What the scheduler uses of xdist's ``WorkerController``: its commands, recorded."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.commands: list[tuple[str, list[int]]] = []

    def send_runtest_some(self, indices):
        self.commands.append(("runtests", list(indices)))

    def send_steal(self, indices):
        self.commands.append(("steal", list(indices)))

    def shutdown(self):
        self.shutting_down = True
        self.commands.append(("shutdown", []))


def test_the_scheduler_deals_round_robin_and_asks_a_worker_whose_queue_has_started_no_more(pytestconfig, monkeypatch):
    from pytest_agentic.workers.stealing import RunStealing

    monkeypatch.setattr(pytestconfig.option, "tx", ["popen"] * 2, raising=False)
    monkeypatch.setattr(pytestconfig.option, "numprocesses", 2, raising=False)
    sched = RunStealing(pytestconfig)
    a, b = Node("gw0"), Node("gw1")
    collection = [f"t[{i}]" for i in range(10)]
    for node in (a, b):
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    assert a.commands == [("runtests", [0, 2, 4, 6, 8])] and b.commands == [("runtests", [1, 3, 5, 7, 9])]
    for i in (0, 2, 4, 6):
        sched.mark_test_complete(a, i)
    # gw0 has one item left: it asks gw1 for the back half of its queue, keeping two there.
    assert a.commands[-1] == ("runtests", [0, 2, 4, 6, 8]) and b.commands[-1] == ("steal", [7, 9])
    sched.remove_pending_tests_from_node(b, [9])  # 7 had started ahead on gw1: only 9 comes back
    assert a.commands[-1] == ("runtests", [9])
    sched.mark_test_complete(a, 8)
    sched.mark_test_complete(a, 9)
    # gw1's queue has started to its end: no second request, gw0 is shut down (no ping-pong).
    assert a.commands[-1] == ("shutdown", []) and b.commands[-1] == ("steal", [7, 9])
    for i in (1, 3, 5):
        sched.mark_test_complete(b, i)
    assert b.commands[-1] == ("shutdown", [])
    sched.mark_test_complete(b, 7)
    assert sched.tests_finished


def test_a_lost_workers_items_go_to_a_worker_alive_but_the_one_it_was_running(pytestconfig, monkeypatch):
    from pytest_agentic.workers.stealing import RunStealing

    monkeypatch.setattr(pytestconfig.option, "tx", ["popen"] * 2, raising=False)
    monkeypatch.setattr(pytestconfig.option, "numprocesses", 2, raising=False)
    sched = RunStealing(pytestconfig)
    a, b = Node("gw0"), Node("gw1")
    for node in (a, b):
        sched.add_node(node)
        sched.add_node_collection(node, [f"t[{i}]" for i in range(8)])
    sched.schedule()
    for i in (0, 2, 4):
        sched.mark_test_complete(a, i)  # gw0 has one left and asks gw1
    assert b.commands[-1] == ("steal", [5, 7])
    assert sched.remove_node(b) == "t[1]"  # gw1 dies while judging item 1 (the request dies with it)
    assert a.commands[-1] == ("runtests", [3, 5, 7])


def test_a_worker_claims_a_prefix_and_no_more_fresh_runs_than_the_backlog_leaves():
    """``Prefetcher.claim_queued`` on xdist's own queue: what it claims is a prefix of the queue (the steal
    guard hands back only the rest), and runs claimed before do not count against the fresh allowance."""
    import execnet
    from xdist.remote import Marker, TestQueue

    from pytest_agentic.scheduler import Prefetcher

    queue = TestQueue(execnet.gateway_base.get_execmodel("thread"))
    for i in range(10):
        queue.put(i)
    queue.put(Marker.SHUTDOWN)
    prefetcher = Prefetcher.__new__(Prefetcher)  # only the queue and the claimed set are read
    prefetcher._queue, prefetcher._claimed = queue, set()
    assert prefetcher.claim_queued(6, fresh=3) == [0, 1, 2]
    assert prefetcher.claim_queued(6, fresh=2) == [0, 1, 2, 3, 4]  # 0-2 again, and two fresh ones
    assert prefetcher.claim_queued(6, fresh=0) == [0, 1, 2, 3, 4]  # a full backlog: nothing fresh
    assert prefetcher.claim_queued(20) == list(range(10))  # the shutdown marker is not an item
    assert prefetcher._claimed == set(range(10))
