"""Adaptive concurrency per model: how many calls of one model may be in flight in this process.

A model reached over HTTP gets one ``ModelLimiter``, shared by every run of that model in the
process (the runs of a pool, and a run in its test). Each model call takes a slot before it is
sent and gives it back with what came of it. The limit moves by AIMD, the rule TCP uses for the
same problem (a sender that cannot see the other side's capacity and must find it by probing):

- **slow start**: from ``START``, the limit doubles after each round (``limit`` calls that
  succeeded while the limit was in use and at steady latency), and also every ``RAMP_S``
  while it is in use and nothing was refused, until the first rate-limit signal or the cap;
- **additive increase** after that: +1 per round, and one round in three when the next step is
  the level that was refused last (so a quota's edge is probed rarely, not every other round);
- **decrease** on a rate-limit signal: the limit falls to the calls the endpoint still holds
  (those in flight once the refused call is given back), but never below half the limit that
  held when this episode began: one episode (a burst of refusals of calls sent under the same
  limit) halves the limit at most once, as a loss window does in TCP.

A call refused for rate limit gives its slot back, waits what the endpoint asked
(``Retry-After``, ``retry-after-ms``, ``x-ratelimit-reset-*``; else a backoff), then queues for a
slot again; ``run.calls.llm`` bounds the whole wait per call (``Limits.max_rate_limit_wait_s``).

The numbers, and why:

- ``START = 8``: against a quota of a handful of calls in flight the first burst costs at most
  8 - quota refusals, and a hosted provider's lowest tiers (some hundreds of requests a
  minute) take 8 calls of a few seconds each. Inspect AI starts at 20.
- ``RAMP_S = 0.25``: a refusal comes back within a network round trip or two (tens to a few
  hundred milliseconds), an answer takes seconds; calls that have been in flight that long
  with none refused were taken. So the limit need not wait a whole answer to double: 8 calls
  become 256 in 1.25 s, where doubling per round would take five answers' time.
- ``CAP = 1024`` (when neither ``--agentic-concurrency`` nor ``max_concurrency`` caps it): a
  vLLM server takes hundreds of requests at once (``--max-num-seqs``, 256 by default, queues the
  rest, which ``LATENCY_RISE`` notices), a hosted quota refuses what it does not take (429), and
  slow start reaches 1024 in 1.75 s when nothing refuses. A call in flight costs two small
  thread stacks and a connection here (``run.calls.connections`` sizes litellm's pool to the caps).
- ``BUSY = 0.75``: a round counts toward growth only when at least three quarters of the
  limit were in flight at once during it; a limit that is not in use proves nothing about the
  endpoint (Inspect AI's ``SATURATION_THRESHOLD`` is 0.8; ours sits lower because a run spends
  a little time in its tools between calls).
- ``LATENCY_RISE = 2.0``: a round whose mean latency is over twice the best round's does not
  grow the limit: the endpoint is queueing (a GPU server's batch is full), not keeping up.
"""

from __future__ import annotations

import email.utils
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

START = 8
RAMP_S = 0.25
CAP = 1024
BUSY = 0.75
LATENCY_RISE = 2.0
#: Rounds a step to the level refused last must wait (the others take one); each time the same level is
#: refused again the wait doubles, up to ``MAX_PROBE_ROUNDS``: a fixed quota is probed ever more rarely
#: (at a quota of 6, 300 runs cost 18 refusals with a fixed wait of 3, 5.7% of calls), a raised one is
#: still found within some tens of rounds.
PROBE_ROUNDS = 3
MAX_PROBE_ROUNDS = 24
#: The longest single wait a Retry-After (or reset) header is honoured for; the per-call bound
#: (``Limits.max_rate_limit_wait_s``) applies to all of a call's waits together.
RETRY_AFTER_CAP_S = 60.0

#: What moved the limit.
Why = Literal["start", "slow start", "steady", "rate limited"]


@dataclass
class Slot:
    """A call's place under the limit: taken by ``acquire``, given back by ``succeeded``/``refused``/``failed``."""

    episode: int
    started: float
    #: Seconds the call waited for this slot.
    waited: float


class Aimd:
    """The limit's arithmetic alone, on a given clock: no threads, no waiting (unit-tested as is)."""

    def __init__(self, start: int, cap: int, adaptive: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        if cap < 1:
            raise ValueError(f"a limit needs a cap of 1 or more, got {cap}")
        self.cap = cap
        self.adaptive = adaptive
        self.limit = max(1, min(start, cap)) if adaptive else cap
        self.clock = clock
        self.slow_start = True
        #: Bumped at each cut: a refusal of a call sent in an earlier episode does not halve again.
        self.episode = 0
        self._floor = 1
        #: The level the endpoint refused last, and the rounds a step to it waits (``PROBE_ROUNDS``, doubled
        #: each time that level is refused again).
        self.refused_at: int | None = None
        self.probe_rounds = PROBE_ROUNDS
        self._ok = 0
        self._rounds = 0
        self._peak = 0
        self._latency = 0.0
        self._best: float | None = None
        self.changed_at = clock()
        #: How the limit moved: plain dicts (t: wall-clock seconds, old, new, why, detail).
        self.events: list[dict[str, Any]] = [self._event(0, self.limit, "start", "adaptive" if adaptive else "fixed")]

    def _event(self, old: int, new: int, why: Why, detail: str) -> dict[str, Any]:
        return {"t": round(self.clock(), 3), "old": old, "new": new, "why": why, "detail": detail}

    def _set(self, new: int, why: Why, detail: str) -> None:
        if new != self.limit:
            self.events.append(self._event(self.limit, new, why, detail))
            self.limit = new
            self.changed_at = self.clock()
        self._ok = self._rounds = self._peak = 0
        self._latency = 0.0

    def in_flight(self, count: int) -> None:
        """Note the calls in flight once one more was sent (the round's high-water mark)."""
        self._peak = max(self._peak, count)

    def tick(self) -> None:
        """Slow start between rounds: double once the limit was in use for ``RAMP_S`` and nothing was refused."""
        if (self.adaptive and self.slow_start and self.limit < self.cap and self._peak >= BUSY * self.limit
                and self.clock() - self.changed_at >= RAMP_S):
            self._set(min(self.cap, 2 * self.limit), "slow start", f"{self.limit} calls in flight {RAMP_S:g}s, "
                      "none refused")

    def success(self, latency_s: float) -> None:
        if not self.adaptive or self.limit >= self.cap:
            return
        self._ok += 1
        self._latency += latency_s
        if self._ok < self.limit:
            return
        mean = self._latency / self._ok
        busy = self._peak >= BUSY * self.limit
        self._ok, self._peak, self._latency = 0, 0, 0.0
        if not busy:
            return  # the limit was not in use: nothing learnt about the endpoint
        if self._best is not None and mean > LATENCY_RISE * self._best:
            return  # the endpoint slows down as the load grows: hold
        self._best = mean if self._best is None else min(self._best, mean)
        if self.slow_start:
            self._set(min(self.cap, 2 * self.limit), "slow start", f"{self.limit} calls kept up (mean {mean:.2f}s)")
            return
        self._rounds += 1
        if self.refused_at is not None and self.limit + 1 >= self.refused_at and self._rounds < self.probe_rounds:
            return
        self._set(min(self.cap, self.limit + 1), "steady", f"{self._rounds} rounds kept up (mean {mean:.2f}s)")

    def refusal(self, episode: int, still_in_flight: int, detail: str) -> None:
        """A rate-limit signal for a call sent in ``episode``; ``still_in_flight`` excludes that call."""
        if not self.adaptive:
            return
        self.slow_start = False
        if episode == self.episode:  # the first refusal under this limit: a new episode
            self.episode += 1
            self._floor = max(1, self.limit // 2)
            same = self.refused_at == self.limit
            self.probe_rounds = min(MAX_PROBE_ROUNDS, 2 * self.probe_rounds) if same else PROBE_ROUNDS
            self.refused_at = self.limit
        self._set(max(self._floor, min(self.limit, still_in_flight)), "rate limited", detail)


class ModelLimiter:
    """The calls of one model in flight in this process, under an ``Aimd`` limit (thread-safe)."""

    def __init__(self, name: str, start: int, cap: int, adaptive: bool = True,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        self.name = name
        self.start = start
        self.aimd = Aimd(start, cap, adaptive, clock=wall)
        self.clock = clock
        self.in_flight = 0
        #: The most calls that were ever in flight at once (for tests and benchmarks).
        self.peak = 0
        self.calls = 0
        self.rate_limited = 0
        self.slot_wait_s = 0.0
        self._cond = threading.Condition()
        #: Calls waiting for a slot, and whether one of them keeps slow start's clock (``acquire``).
        self._waiting = 0
        self._timer = False
        self._listeners: list[Callable[[], None]] = []
        self._drained = 0
        self._reported = {"calls": 0, "rate_limited": 0, "slot_wait_s": 0.0}

    @property
    def limit(self) -> int:
        return self.aimd.limit

    @property
    def adaptive(self) -> bool:
        return self.aimd.adaptive

    @property
    def runs(self) -> int:
        """How many runs of the model a pool may have going: twice the limit (up to the cap) when adaptive.

        The runs beyond the limit wait for a slot: a limit that grows is filled at once, and their
        waiting is what ramps slow start (``Aimd.tick``). Calls in flight stay under the limit.
        """
        return min(self.aimd.cap, 2 * self.aimd.limit) if self.adaptive else self.aimd.limit

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (outside the lock) whenever the limit moved: a pool starts more runs."""
        self._listeners.append(listener)

    def acquire(self) -> Slot:
        """Wait for room under the limit and take a slot.

        Waiters queue on one condition and are woken as room opens, as many as there is room
        (``_wake``), never all at once: a release costs the same whether ten or three thousand
        calls wait. In slow start one waiter, the timer, also wakes every ``RAMP_S`` to let the
        limit ramp (``Aimd.tick``); the others sleep until a release or a ramp.
        """
        begun = self.clock()
        moved = False
        timer = False
        with self._cond:
            self._waiting += 1
            while self.in_flight >= self.aimd.limit:
                before = self.aimd.limit
                self.aimd.tick()
                if self.aimd.limit != before:
                    moved = True
                    self._wake()
                    continue
                if self.aimd.slow_start and not self._timer:
                    self._timer = timer = True
                self._cond.wait(RAMP_S if timer else None)
            self._waiting -= 1
            if timer:  # hand the timer to the next waiter, if any
                self._timer = False
                if self._waiting:
                    self._cond.notify()
            self.in_flight += 1
            self.calls += 1
            self.peak = max(self.peak, self.in_flight)
            self.aimd.in_flight(self.in_flight)
            now = self.clock()
            self.slot_wait_s += now - begun
            slot = Slot(self.aimd.episode, now, now - begun)
        if moved:
            self._notify()
        return slot

    def _wake(self) -> None:
        """Wake as many waiters as there is room under the limit (called with the lock held)."""
        room = self.aimd.limit - self.in_flight
        if room > 0 and self._waiting:
            self._cond.notify(min(room, self._waiting))

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()

    def _release(self, change: Callable[[], None]) -> None:
        with self._cond:
            self.in_flight -= 1
            before = self.aimd.limit
            change()
            moved = self.aimd.limit != before
            self._wake()
        if moved:
            self._notify()

    def succeeded(self, slot: Slot) -> None:
        latency = self.clock() - slot.started
        self._release(lambda: self.aimd.success(latency))

    def failed(self, slot: Slot) -> None:
        """A fault that is not a rate-limit signal: the slot is given back, the limit stays."""
        self._release(lambda: None)

    def refused(self, slot: Slot, detail: str) -> None:
        def change() -> None:
            self.rate_limited += 1
            self.aimd.refusal(slot.episode, self.in_flight, detail)

        self._release(change)

    def drain(self) -> dict[str, Any]:
        """What happened since the last drain, as plain primitives (it rides on a test report)."""
        with self._cond:
            events = self.aimd.events[self._drained:]
            self._drained = len(self.aimd.events)
            now = {"calls": self.calls, "rate_limited": self.rate_limited, "slot_wait_s": self.slot_wait_s}
            delta = {k: now[k] - self._reported[k] for k in now}
            self._reported = now
        return {"mode": "adaptive" if self.adaptive else "fixed", "start": self.start, "cap": self.aimd.cap,
                "limit": self.aimd.limit, "peak": self.peak, "events": [dict(e) for e in events],
                "calls": delta["calls"], "rate_limited": delta["rate_limited"],
                "slot_wait_s": round(delta["slot_wait_s"], 3)}


# -- the process's limiters ---------------------------------------------------------
_limiters: dict[str, ModelLimiter] = {}
_lock = threading.Lock()


def install(name: str, start: int, cap: int, adaptive: bool = True) -> ModelLimiter:
    """The limiter of model entry ``name`` in this process (made once; later calls return it)."""
    with _lock:
        if name not in _limiters:
            _limiters[name] = ModelLimiter(name, start, cap, adaptive)
        return _limiters[name]


def get(name: str) -> ModelLimiter | None:
    return _limiters.get(name)


def drain_all() -> dict[str, dict[str, Any]]:
    """Each limiter's news since the last drain, by model (only those with something new)."""
    out = {}
    for name, limiter in list(_limiters.items()):
        news = limiter.drain()
        if news["events"] or news["calls"] or news["rate_limited"]:
            out[name] = news
    return out


def reset() -> None:
    """Forget the limiters (a new session in the same process starts afresh)."""
    with _lock:
        _limiters.clear()


# -- rate-limit signals --------------------------------------------------------------
_RATE_LIMIT_STATUS = {429, 529}
_OVERLOADED = re.compile(r"overloaded|throttlingexception|too many requests|rate.?limit", re.IGNORECASE)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def rate_limit_signal(exc: BaseException) -> tuple[bool, float | None, str]:
    """(whether ``exc`` says "slow down", the wait it asks for in seconds or None, a short description).

    Signals: HTTP 429 (litellm's ``RateLimitError``, which Bedrock's ``ThrottlingException`` also
    becomes), 529 or an "overloaded" error (Anthropic), and a 503 that carries a wait header.
    The wait: ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date), else the
    ``x-ratelimit-reset-requests``/``-tokens`` of an exhausted ``x-ratelimit-remaining-*``.
    """
    status = getattr(exc, "status_code", None)
    headers = _headers(exc)
    wait = retry_after(headers)
    text = str(exc)[:2000]
    name = type(exc).__name__
    limited = (name == "RateLimitError" or status in _RATE_LIMIT_STATUS or bool(_OVERLOADED.search(text))
               or (status == 503 and wait is not None))
    described = f"{name} {status}" if isinstance(status, int) else name
    if wait is not None:
        described += f", wait {wait:g}s asked"
    return limited, wait, described


def _headers(exc: BaseException) -> Mapping[str, str]:
    """The response headers an exception of litellm or the OpenAI SDK carries, lower-cased."""
    for source in (getattr(exc, "litellm_response_headers", None), getattr(getattr(exc, "response", None),
                                                                           "headers", None),
                   getattr(exc, "headers", None)):
        try:
            items = list(source.items()) if source is not None else []
        except Exception:  # noqa: BLE001 - a header object that does not list: none
            items = []
        if items:
            return {str(k).lower(): str(v) for k, v in items}
    return {}


def retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the endpoint asked to wait, within 0..``RETRY_AFTER_CAP_S``, or None when it asked nothing."""
    wait: float | None = None
    if "retry-after-ms" in headers:
        wait = _number(headers["retry-after-ms"], 1e-3)
    if wait is None and "retry-after" in headers:
        raw = headers["retry-after"].strip()
        wait = _number(raw, 1.0)
        if wait is None:
            try:
                wait = email.utils.parsedate_to_datetime(raw).timestamp() - now()
            except (TypeError, ValueError, OverflowError):
                wait = None
    if wait is None:
        resets = [_duration(headers.get(f"x-ratelimit-reset-{kind}", ""))
                  for kind in ("requests", "tokens") if headers.get(f"x-ratelimit-remaining-{kind}", "").strip() == "0"]
        known = [r for r in resets if r is not None]
        wait = max(known) if known else None
    if wait is None or not math.isfinite(wait):
        return None
    return min(RETRY_AFTER_CAP_S, max(0.0, wait))


def _number(text: str, unit: float) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value * unit if math.isfinite(value) else None


def _duration(text: str) -> float | None:
    """OpenAI's reset durations: ``1s``, ``6m0s``, ``20ms``, ``1h2m``; or plain seconds."""
    text = text.strip()
    plain = _number(text, 1.0) if text else None
    if plain is not None:
        return plain
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


__all__ = ["CAP", "START", "Aimd", "ModelLimiter", "Slot", "drain_all", "get", "install", "rate_limit_signal",
           "reset", "retry_after"]
