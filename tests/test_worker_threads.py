"""A run's threads are taken from those that finished a job (run/limits.py ``start_thread``), never from a stuck one."""

from __future__ import annotations

import contextvars
import threading

from pytest_agentic.run import limits
from pytest_agentic.run.limits import Deadline, start_thread

LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("label", default="unset")


def _on_a_thread(fn):
    """``fn``'s value, the native id and the name of the thread that ran it (through ``Deadline``)."""
    def job():
        me = threading.current_thread()
        return fn(), me.native_id, me.name

    returned, value = Deadline(job, "agentic-test-job").wait(10)
    assert returned
    return value


def test_a_thread_that_finished_its_job_runs_the_next_one_in_the_new_caller_s_context():
    LABEL.set("first")
    seen, first_id, name = _on_a_thread(LABEL.get)
    assert seen == "first" and name == "agentic-test-job" and first_id != threading.get_native_id()
    LABEL.set("second")
    seen, second_id, _ = _on_a_thread(LABEL.get)
    assert seen == "second", "each job runs in a copy of its own caller's context"
    assert second_id == first_id, "the idle thread was handed the next job: no new thread"


def test_a_job_past_its_deadline_keeps_its_thread_and_the_next_job_gets_another():
    release = threading.Event()
    stuck = Deadline(lambda: (release.wait(30), threading.get_native_id())[1], "agentic-stuck")
    returned, _ = stuck.wait(0.05)
    assert not returned
    try:
        _, other, _ = _on_a_thread(lambda: None)
        blocked = [w for w in threading.enumerate() if w.name == "agentic-stuck"]
        assert len(blocked) == 1 and blocked[0].native_id != other
        assert all(w._job is None for w in limits._IDLE), "no idle thread holds a job"
    finally:
        release.set()


def test_an_error_reaches_the_waiter_and_the_thread_serves_again():
    def fail():
        raise ValueError("in the job")

    try:
        Deadline(fail, "agentic-failing").wait(10)
    except ValueError as exc:
        assert str(exc) == "in the job"
    else:
        raise AssertionError("the job's error was not raised to its waiter")
    done = threading.Event()
    start_thread(done.set, "agentic-after")
    assert done.wait(10)


def test_idle_threads_are_bounded():
    events = [threading.Event() for _ in range(limits.MAX_IDLE + 20)]
    gate = threading.Event()
    for event in events:
        start_thread(lambda event=event: (gate.wait(30), event.set()), "agentic-many")
    gate.set()
    assert all(event.wait(30) for event in events)
    deadline = threading.Event()
    deadline.wait(0.5)  # the threads file back into the idle list
    assert len(limits._IDLE) <= limits.MAX_IDLE
