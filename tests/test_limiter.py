"""The adaptive limit's arithmetic on a fake clock, the rate-limit signals, and the limiter's threads."""

from __future__ import annotations

import threading

import pytest

from pytest_agentic.run.calls import limiter
from pytest_agentic.run.calls.limiter import Aimd, ModelLimiter, rate_limit_signal, retry_after


@pytest.fixture(autouse=True)
def fresh_limiters():
    """The process's limiters are module state: each test starts and ends without any."""
    limiter.reset()
    yield
    limiter.reset()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def busy_round(aimd: Aimd, latency: float = 1.0, clock: Clock | None = None) -> None:
    """One round: the limit's worth of calls in flight at once, each succeeding after ``latency``."""
    aimd.in_flight(aimd.limit)
    if clock is not None:
        clock.now += latency
    for _ in range(aimd.limit):
        aimd.success(latency)


def test_slow_start_doubles_each_busy_round_up_to_the_cap():
    clock = Clock()
    aimd = Aimd(16, 100, clock=clock)
    limits = []
    for _ in range(5):
        busy_round(aimd, clock=clock)
        limits.append(aimd.limit)
    assert limits == [32, 64, 100, 100, 100]
    assert [(e["old"], e["new"], e["why"]) for e in aimd.events] == [
        (0, 16, "start"), (16, 32, "slow start"), (32, 64, "slow start"), (64, 100, "slow start")]
    assert [e["t"] for e in aimd.events] == [1000.0, 1001.0, 1002.0, 1003.0]


def test_slow_start_also_doubles_while_calls_wait_and_none_is_refused():
    clock = Clock()
    aimd = Aimd(8, 256, clock=clock)
    aimd.in_flight(8)
    clock.now += limiter.RAMP_S / 2
    aimd.tick()
    assert aimd.limit == 8  # not yet: a refusal may still be on its way
    clock.now += limiter.RAMP_S / 2
    aimd.tick()
    assert aimd.limit == 16 and aimd.events[-1]["why"] == "slow start"
    clock.now += limiter.RAMP_S
    aimd.tick()
    assert aimd.limit == 16  # the new limit is not in use yet
    aimd.in_flight(12)
    aimd.tick()
    assert aimd.limit == 32
    aimd.refusal(aimd.episode, 20, "RateLimitError 429")
    aimd.in_flight(20)
    clock.now += 10 * limiter.RAMP_S
    aimd.tick()
    assert aimd.limit == 20  # a refusal ended slow start: no more ramping


def test_a_limit_not_in_use_does_not_grow():
    aimd = Aimd(16, 256, clock=Clock())
    aimd.in_flight(int(16 * limiter.BUSY) - 1)  # under three quarters of the limit in flight
    for _ in range(16):
        aimd.success(1.0)
    assert aimd.limit == 16
    busy_round(aimd)  # the next round uses it
    assert aimd.limit == 32


def test_a_round_whose_latency_rose_does_not_grow():
    aimd = Aimd(8, 256, clock=Clock())
    busy_round(aimd, latency=1.0)
    assert aimd.limit == 16
    busy_round(aimd, latency=2.5)  # over LATENCY_RISE times the best round: the endpoint queues
    assert aimd.limit == 16
    busy_round(aimd, latency=1.5)
    assert aimd.limit == 32


def test_a_refusal_cuts_to_what_the_endpoint_holds_but_at_most_by_half_per_episode():
    aimd = Aimd(16, 256, clock=Clock())
    episode = aimd.episode
    # 16 calls sent, the endpoint holds 6 and refuses 10 at once: each refusal sees one call fewer in flight.
    for in_flight in range(15, 5, -1):
        aimd.refusal(episode, in_flight, "RateLimitError 429")
    assert aimd.limit == 8  # half of 16: one episode halves at most once
    assert not aimd.slow_start
    # Calls sent under the new limit that are refused open a new episode, which may cut again.
    aimd.refusal(aimd.episode, 7, "RateLimitError 429")
    aimd.refusal(aimd.episode - 1, 6, "RateLimitError 429")
    assert aimd.limit == 6
    assert [e["new"] for e in aimd.events if e["why"] == "rate limited"] == [15, 14, 13, 12, 11, 10, 9, 8, 7, 6]


def test_after_a_refusal_the_limit_grows_by_one_a_round_and_probes_the_refused_level_rarely():
    aimd = Aimd(8, 256, clock=Clock())
    aimd.refusal(aimd.episode, 5, "RateLimitError 429")  # refused at 8: cut to 5 (floor 4)
    assert aimd.limit == 5
    busy_round(aimd)
    busy_round(aimd)
    assert aimd.limit == 7  # +1 a round, not doubled any more
    # 8 was refused: the step to it waits PROBE_ROUNDS rounds.
    for _ in range(limiter.PROBE_ROUNDS - 1):
        busy_round(aimd)
        assert aimd.limit == 7
    busy_round(aimd)
    assert aimd.limit == 8
    assert aimd.events[-1]["why"] == "steady"


def test_a_level_refused_again_and_again_is_probed_ever_more_rarely():
    """A fixed quota of 6: each refused probe of 7 doubles the rounds the next probe waits (3, 6, 12, 24, 24)."""
    aimd = Aimd(8, 256, clock=Clock())
    aimd.refusal(aimd.episode, 6, "RateLimitError 429")  # the first burst: cut to the 6 still held
    waits = []
    for _ in range(6):
        rounds = 0
        while aimd.limit < 7:
            busy_round(aimd)
            rounds += 1
            assert rounds <= limiter.MAX_PROBE_ROUNDS
        waits.append(rounds)
        aimd.refusal(aimd.episode, 6, "RateLimitError 429")  # 7 refused: back to 6
        assert aimd.limit == 6
    assert waits == [1, 3, 6, 12, 24, 24]
    # Another level refused resets the wait: the quota moved.
    aimd.refusal(aimd.episode, 3, "RateLimitError 429")
    assert aimd.limit == 3 and aimd.probe_rounds == limiter.PROBE_ROUNDS


def test_the_limit_never_passes_its_cap_nor_falls_under_one():
    aimd = Aimd(16, 4, clock=Clock())
    assert aimd.limit == 4
    busy_round(aimd)
    assert aimd.limit == 4
    for _ in range(10):
        aimd.refusal(aimd.episode, 0, "RateLimitError 429")
    assert aimd.limit == 1


def test_a_fixed_limit_never_moves():
    aimd = Aimd(3, 3, adaptive=False, clock=Clock())
    busy_round(aimd)
    aimd.refusal(aimd.episode, 0, "RateLimitError 429")
    assert aimd.limit == 3
    assert [e["why"] for e in aimd.events] == ["start"]


@pytest.mark.parametrize(("headers", "wait"), [
    ({"retry-after": "1"}, 1.0),
    ({"retry-after": "2.5"}, 2.5),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),  # an HTTP date, 10 s after "now"
    ({"retry-after": "999999999"}, limiter.RETRY_AFTER_CAP_S),
    ({"retry-after": "-5"}, 0.0),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "nan"}, None),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "0m2.5s"}, 2.5),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1h2m"}, limiter.RETRY_AFTER_CAP_S),
    ({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20ms",
      "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"}, 2.0),
    ({"x-ratelimit-remaining-requests": "12", "x-ratelimit-reset-requests": "1s"}, None),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1x"}, None),
    ({}, None),
])
def test_the_wait_an_endpoint_asks_for(headers, wait):
    assert retry_after(headers, now=lambda: 1445412480.0) == wait


def _litellm():
    from pytest_agentic.run.calls import llm

    llm.quiet_import_noise()  # as a session does at its start (the first completion warns too)
    return llm.litellm_module()


def test_rate_limit_signals_of_litellm_errors():
    import httpx

    litellm = _litellm()
    response = httpx.Response(429, headers={"Retry-After": "3"}, request=httpx.Request("POST", "http://x"))
    cases = [
        (litellm.RateLimitError("slow down", "openai", "m", response=response), (True, 3.0)),
        (litellm.RateLimitError("BedrockException: Rate Limit Error - ThrottlingException", "bedrock", "m"),
         (True, None)),
        (litellm.InternalServerError("AnthropicException - Overloaded", "anthropic", "m"), (True, None)),
        (litellm.InternalServerError("AnthropicException - boom", "anthropic", "m"), (False, None)),
        (litellm.APIConnectionError("connection reset", "openai", "m"), (False, None)),
    ]
    for exc, (limited, wait) in cases:
        assert rate_limit_signal(exc)[:2] == (limited, wait), exc
    assert rate_limit_signal(cases[0][0])[2] == "RateLimitError 429, wait 3s asked"


def test_a_limiter_blocks_at_its_limit_and_reports_what_changed():
    gate = ModelLimiter("m", 2, 8, adaptive=True)
    gate.aimd.slow_start = False  # no ramp while the third call waits: the limit moves on refusals alone here
    first, second = gate.acquire(), gate.acquire()
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (gate.acquire(), got.set()))
    waiter.start()
    assert not got.wait(0.2), "a third call waits while two are in flight under a limit of 2"
    gate.refused(first, "RateLimitError 429")  # one in flight is left: the limit falls to 1
    assert gate.limit == 1 and not got.is_set()
    gate.succeeded(second)
    waiter.join(5)
    assert got.is_set() and gate.in_flight == 1
    news = gate.drain()
    assert news["rate_limited"] == 1 and news["calls"] == 3 and news["limit"] == 1 and news["mode"] == "adaptive"
    assert [(e["old"], e["new"], e["why"]) for e in news["events"]] == [(0, 2, "start"), (2, 1, "rate limited")]
    assert news["slot_wait_s"] > 0
    again = gate.drain()
    assert again["events"] == [] and again["calls"] == 0 and again["rate_limited"] == 0


def test_a_pool_starts_more_runs_when_the_limit_grows():
    from pytest_agentic.run.pool import RunPool

    gate = ModelLimiter("m", 1, 6)
    pool = RunPool(6, {"m": 6}, {"m": gate})
    release = threading.Event()
    started = []
    lock = threading.Lock()

    def job():
        with lock:
            started.append(1)
        release.wait(10)

    futures = [pool.submit("m", job) for _ in range(6)]
    for _ in range(50):
        if started:
            break
        threading.Event().wait(0.02)
    threading.Event().wait(0.2)
    assert len(started) == 2, "the pool starts twice a model's limit of runs (the second waits for a slot)"
    gate.aimd.limit = 2  # what a grown limit looks like to the pool
    pool.wake()
    for _ in range(100):
        if len(started) == 4:
            break
        threading.Event().wait(0.02)
    assert len(started) == 4
    release.set()
    for f in futures:
        f.result(10)
    pool.stop()


def test_call_model_waits_out_a_refusal_without_spending_the_retry_budget(monkeypatch):
    """A refused call sleeps what Retry-After asked, then is sent again; the retries and their budget stay."""
    from pytest_agentic.run.calls import llm
    from pytest_agentic.run.limits import Limits
    from pytest_agentic.run.models import ModelEntry
    from pytest_agentic.run.task import Final

    from .fault_server import FaultServer

    _litellm()
    entry = ModelEntry(name="q", model="openai/ok")
    with FaultServer({"Say ok.": [Final("ok")]}, quota=0, retry_after="0.75") as server:
        gate = limiter.install("q", 4, 4)
        sleeps = []

        def sleep(seconds):
            sleeps.append(seconds)
            if len(sleeps) == 2:
                server.quota = None  # the quota frees up after two refusals

        budget = [5.0]
        outcome = llm.call_model(entry, api_base=server.api_base, messages=[{"role": "user", "content": "Say ok."}],
                                 tools=[], metadata={}, limits=Limits(max_retries=0), retry_budget=budget,
                                 sleep=sleep)
    assert outcome.response.choices[0].message.content == "ok"
    assert sleeps == [0.75, 0.75]
    assert outcome.rate_limited == 2 and outcome.rate_limit_wait_s == 1.5
    assert outcome.retries == 0 and budget == [5.0]
    assert gate.rate_limited == 2 and gate.in_flight == 0


def test_a_dead_quota_is_infra_error_once_the_wait_bound_is_spent():
    from pytest_agentic.run.calls import llm
    from pytest_agentic.run.limits import Limits
    from pytest_agentic.run.models import ModelEntry
    from pytest_agentic.run.task import Final

    from .fault_server import FaultServer

    _litellm()
    entry = ModelEntry(name="q", model="openai/ok")
    with FaultServer({"Say ok.": [Final("ok")]}, quota=0, retry_after="2") as server:
        limiter.install("q", 4, 4)
        sleeps = []
        with pytest.raises(llm.InfraError, match="max_rate_limit_wait_s = 7s") as info:
            llm.call_model(entry, api_base=server.api_base, messages=[{"role": "user", "content": "Say ok."}],
                           tools=[], metadata={}, limits=Limits(max_retries=0, max_rate_limit_wait_s=7),
                           retry_budget=[5.0], sleep=sleeps.append)
    assert sleeps == [2.0, 2.0, 2.0]  # a fourth wait would pass 7 s
    assert info.value.rate_limited == 4 and server.rate_refused == 4
