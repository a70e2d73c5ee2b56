"""Runs take turns at their CPU work in the order they asked (run/calls/turns.py)."""

from __future__ import annotations

import threading
import time

import pytest

from pytest_agentic.run.calls import turns
from pytest_agentic.run.limits import Deadline


def test_turns_are_granted_in_the_order_asked_and_handed_straight_on() -> None:
    gate = turns.Gate(width=1, stuck_s=30)
    first = gate.acquire()
    order: list[int] = []
    threads = []
    for i in range(5):
        def take(i: int = i) -> None:
            ticket = gate.acquire()
            order.append(i)
            gate.release(ticket)
        threads.append(threading.Thread(target=take))
        threads[-1].start()
        while len(gate._waiters) < i + 1:  # each one queued before the next asks
            time.sleep(0.001)
    gate.release(first)
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]
    assert gate.overflowed == 0


def test_a_turn_held_past_stuck_s_lets_the_next_in_beside_it() -> None:
    gate = turns.Gate(width=1, stuck_s=0.05)
    held = gate.acquire()
    start = time.monotonic()
    other = gate.acquire()  # would wait for ever behind a turn blocked on something unseen
    assert time.monotonic() - start >= 0.05
    assert gate.overflowed == 1
    gate.release(other)
    gate.release(held)


def test_waiting_gives_the_run_s_turn_to_the_next_run_and_takes_it_back() -> None:
    gate = turns.Gate(width=1, stuck_s=30)
    inside = threading.Event()
    went_on = threading.Event()
    with turns.run_turn(gate) as turn:
        def other_run() -> None:
            with turns.run_turn(gate):
                went_on.set()
        t = threading.Thread(target=other_run)
        t.start()
        assert not went_on.wait(0.1)  # the turn is ours
        with turns.waiting():
            assert went_on.wait(10)  # given up while we wait: the other run went on
            inside.set()
        t.join(10)
        assert turn._ticket is not None  # taken back
    assert turn._ticket is None and gate._held == {}
    assert turns.current() is None


def test_a_run_s_threads_carry_its_turn_and_an_ended_run_takes_none() -> None:
    gate = turns.Gate(width=1, stuck_s=30)
    with turns.run_turn(gate) as turn:
        returned, seen = Deadline(turns.current, "child").wait(10)
        assert returned and seen is turn
    turn.take()  # an abandoned thread of the ended run, after its wait
    assert gate._held == {}
    with turns.waiting():  # no run: nothing to give up, nothing waited for
        pass


def test_a_priced_model_registered_with_litellm_costs_the_same_there_as_here() -> None:
    """Registered once per process, an entry's price is litellm's too: the two costs agree on every call."""
    from pytest_agentic.run.calls import llm
    from pytest_agentic.run.limits import Limits
    from pytest_agentic.run.models import ModelEntry
    from pytest_agentic.run.task import Final

    from .fault_server import FaultServer

    llm.quiet_import_noise()  # as a session does at its start (the first completion warns too)
    price = {"input_per_token": 3e-6, "output_per_token": 7e-6}
    entry = ModelEntry(name="priced", model="openai/priced-turns-test", price=price)
    llm.register_prices([(entry.model, price)])
    llm.register_prices([(entry.model, price)])  # again: nothing new to tell litellm
    with FaultServer({"Say ok.": [Final("ok")]}) as server:
        outcome = llm.call_model(entry, api_base=server.api_base, messages=[{"role": "user", "content": "Say ok."}],
                                 tools=[], metadata={}, limits=Limits(max_retries=0), retry_budget=[5.0])
    ours = outcome.prompt_tokens * 3e-6 + outcome.completion_tokens * 7e-6
    assert outcome.prompt_tokens > 0 and outcome.cost_usd == ours
    assert outcome.response._hidden_params["response_cost"] == pytest.approx(ours, rel=1e-12)
