"""Big campaigns: litellm's pool sized from the limits, waiters woken by the room there is, an endpoint that holds thousands."""

from __future__ import annotations

import asyncio
import json
import threading

import aiohttp
import pytest

from pytest_agentic.run.calls import connections, limiter
from pytest_agentic.run.calls.limiter import ModelLimiter
from pytest_agentic.run.pool import RunPool
from pytest_agentic.run.task import Final

from .async_server import AsyncEndpoint
from .helpers import campaign_dir, runs
from .test_concurrency import say_ok_project


@pytest.fixture(autouse=True)
def fresh_limiters():
    limiter.reset()
    yield
    limiter.reset()


def test_the_asyncio_endpoint_holds_a_thousand_calls_at_once():
    body = {"model": "x", "messages": [{"role": "user", "content": "Say ok."}]}

    async def burst(url: str) -> list[int]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as client:
            async def one() -> int:
                async with client.post(url, json=body) as response:
                    assert (await response.json())["choices"][0]["message"]["content"] == "ok"
                    return response.status
            return await asyncio.gather(*(one() for _ in range(1000)))

    # Answers are held until all 1000 have arrived (or two minutes): the peak does not depend on how fast a
    # loaded machine opens the connections.
    with AsyncEndpoint({"Say ok.": [Final("ok")]}, latency_s=120.0, hold_until=1000) as server:
        statuses = asyncio.run(burst(f"{server.api_base}/chat/completions"))
    assert statuses == [200] * 1000
    assert server.peak == 1000 and server.calls == 1000


def test_the_asyncio_endpoint_refuses_beyond_its_quota_with_retry_after():
    async def burst(url: str) -> list[tuple[int, str | None]]:
        async with aiohttp.ClientSession() as client:
            async def one() -> tuple[int, str | None]:
                async with client.post(url, json={"messages": [{"role": "user", "content": "Say ok."}]}) as r:
                    return r.status, r.headers.get("Retry-After")
            return await asyncio.gather(*(one() for _ in range(10)))

    with AsyncEndpoint({"Say ok.": [Final("ok")]}, latency_s=1.0, quota=4, retry_after="0.5") as server:
        answers = asyncio.run(burst(f"{server.api_base}/chat/completions"))
    assert sorted(answers) == [(200, None)] * 4 + [(429, "0.5")] * 6
    assert server.rate_refused == 6 and server.peak == 4


def test_litellm_gets_a_pool_sized_from_the_limits_and_a_users_own_is_kept():
    litellm = connections.litellm_module()
    saved = litellm.client_session, connections._ours  # this process's other sessions keep their pool
    try:
        litellm.client_session = connections._ours = None
        assert connections.size_pool(1000) == 1000 + connections.SPARE == connections.current_size()
        pool = litellm.client_session._transport.wrapped._pool  # httpx's, inside the transport that gives turns up
        assert pool._max_connections == pool._max_keepalive_connections == 1000 + connections.SPARE
        own = litellm.client_session = object()
        assert connections.size_pool(10) is None and litellm.client_session is own
    finally:
        litellm.client_session, connections._ours = saved


def test_a_release_wakes_waiters_for_the_room_it_opened_and_none_is_lost():
    gate = ModelLimiter("m", start=3, cap=3, adaptive=False)
    order, done = [], threading.Barrier(61)

    def call(i: int) -> None:
        slot = gate.acquire()
        order.append(i)
        gate.succeeded(slot)
        done.wait(30)

    threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(60)]
    for t in threads:
        t.start()
    done.wait(30)  # a lost wake-up leaves a waiter asleep: the barrier breaks
    assert sorted(order) == list(range(60)) and gate.peak <= 3 and gate.in_flight == 0


def test_slow_start_ramps_with_hundreds_waiting_and_no_release():
    """Only the timer waiter wakes each RAMP_S; when the limit doubles, the room goes to the others."""
    gate = ModelLimiter("m", start=8, cap=256, adaptive=True)
    held = threading.Barrier(257)

    def call() -> None:
        gate.acquire()
        held.wait(30)

    threads = [threading.Thread(target=call, daemon=True) for _ in range(256)]
    for t in threads:
        t.start()
    held.wait(30)
    assert gate.in_flight == gate.peak == gate.limit == 256
    assert [e["new"] for e in gate.aimd.events] == [8, 16, 32, 64, 128, 256]


def test_the_pool_starts_runs_in_submission_order_across_models_with_thousands_pending():
    pool = RunPool(2, caps={"a": 1, "b": 1})  # one at a time per model: what a run appends is in start order
    started: list[tuple[str, int]] = []
    gate = threading.Event()

    def job(key: str, i: int):
        def run() -> None:
            started.append((key, i))
            gate.wait(30)
        return run

    futures = [pool.submit(key, job(key, i)) for i in range(1500) for key in ("a", "b")]
    gate.set()
    for f in futures:
        f.result(30)
    assert len(started) == 3000 and pool.peak == 2
    assert [i for k, i in started if k == "a"] == list(range(1500)) == [i for k, i in started if k == "b"]
    pool.stop()


def test_a_campaign_has_more_than_a_hundred_calls_in_flight_through_litellm(pytester):
    """litellm's own client would hold 100 connections; the harness's pool holds what the limit allows.

    The endpoint answers once 150 calls are in flight at once (else after 120 s): however slow
    the machine, the campaign passes only if 150 calls got through the client together.
    """
    with AsyncEndpoint({"Say ok.": [Final("ok")]}, latency_s=120.0, hold_until=150) as server:
        say_ok_project(pytester, server, limits={"max_retries": 0, "request_timeout_s": 300})
        result = pytester.runpytest_subprocess("--runs", "240", "--agentic-out", "out", "-p", "no:randomly")
    result.assert_outcomes(passed=240)
    assert server.calls == 240 and server.peak >= 150
    records = runs(campaign_dir(pytester.path / "out"))
    assert len(records) == 240 and all(r["passed"] for r in records)
    pacing = json.loads((campaign_dir(pytester.path / "out") / "campaign.json").read_text())["pacing"]["local"]
    assert pacing["cap"] == limiter.CAP and pacing["peak"]["main"] >= 150
