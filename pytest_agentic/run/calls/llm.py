"""The one place that calls litellm: lazy import, retries on transient faults, cost."""

from __future__ import annotations

import contextvars
import gc
import logging
import os
import random
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import limiter, refusals, route, turns
from .. import gcpause
from ..limits import Limits
from ..models import ModelEntry


class InfraError(Exception):
    """The model call failed for a reason that is the endpoint's, not the model's."""

    def __init__(self, message: str, retries: int = 0, rate_limited: int = 0) -> None:
        super().__init__(message)
        self.retries = retries
        self.rate_limited = rate_limited


#: The one warning litellm raises, at its import and at its first completion (when pydantic builds
#: its response models): pydantic on litellm's TypedDicts with ``ReadOnly`` items.
#: The pydantic warning litellm's import raises (message and module, as regular expressions).
_IMPORT_NOISE = (r".*using the `ReadOnly` qualifier", r"pydantic\.")
_import_lock = threading.Lock()
_imported = False


def quiet_import_noise() -> None:
    """Ignore the pydantic warning litellm raises: noise to a user, printed raw otherwise.

    The plugin calls this in ``pytest_sessionstart``, in the main thread and outside pytest's
    warning contexts, so the filter lands in the process-wide list that every later context
    (collection, each test) starts from, whichever thread imports litellm and whenever. A filter
    added inside a context, such as from the preload thread during collection, leaves with it.
    """
    warnings.filterwarnings("ignore", message=_IMPORT_NOISE[0], category=UserWarning, module=_IMPORT_NOISE[1])


def litellm_module() -> Any:
    """Import litellm the way the harness needs it: no network at import, quiet, its heap settled."""
    global _imported
    if _imported:
        return sys.modules["litellm"]
    with _import_lock:  # the preload thread and a first model call may both get here
        if not _imported:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            quiet_import_noise()
            with gcpause.paused():  # a quarter of the import's CPU: see gcpause
                import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            from .. import scripted

            scripted.ensure_installed()
            _settle_heap()
            _imported = True
    return sys.modules["litellm"]


def _settle_heap() -> None:
    """Move what exists now (litellm's modules: some 300,000 objects) out of the cyclic GC's sight.

    These objects live as long as the process, yet every full collection walks them again: the
    collections pytest forces at exit and the interpreter's own at shutdown add up to a second or
    more, and each one during the runs stalls every run in flight. ``gc.freeze`` keeps them out
    of later collections; reference counting still frees them. No collection runs first (a
    fifth of a second): litellm's import leaves no cyclic garbage to freeze by mistake
    (``gc.collect()`` right after it finds none). ``benchmarks/concurrency.py`` measures a session.
    """
    gc.freeze()


_preload: threading.Thread | None = None


def preload_in_background(warm_up: bool = True) -> None:
    """Import litellm on a daemon thread, and warm its first call when a model answers over HTTP.

    The import (seconds) and the warm-up overlap collection and a local server's start.

    Started once, when collection meets the first agent test; ``wait_for_preload`` is called
    before the first test runs, so the import never runs under a test's warning filters. A
    failed import is left to the first model call, which imports litellm again and reports it.
    """
    global _preload
    if _preload is None:
        _preload = threading.Thread(target=_import_quietly, args=(warm_up,), name="agentic-litellm-import",
                                    daemon=True)
        _preload.start()


def _import_quietly(warm_up: bool) -> None:
    try:
        litellm = litellm_module()
        if warm_up:  # scripted models alone never take the OpenAI path
            with gcpause.paused():  # its imports, as litellm's own
                _warm_up(litellm)
            _settle_heap()  # the warm-up's imports too (it leaves a dozen garbage objects, frozen with them)
    except BaseException:  # noqa: BLE001 - reported by the first model call's own import
        pass


def _warm_up(litellm: Any) -> None:
    """One call through litellm's OpenAI-compatible path, answered by litellm's own mock transport.

    litellm imports much of itself at its first call (the OpenAI SDK's resources, its proxy's
    types: most of a second of CPU). Made here, that work overlaps collection and a local
    server's start; left to the runs, the first N runs in flight all wait on the same imports.
    ``network_mock`` answers at the transport, so no byte leaves the process (were it ignored,
    the discard port of 127.0.0.1 refuses at once); it is set only here, before any run starts
    (``wait_for_preload``).
    """
    kwargs: dict[str, Any] = {}
    if route.current() == route.HTTP:  # litellm's own handler: its mock transport, given as the client
        kwargs["client"] = route.warm_up_client()
    litellm.network_mock = True
    try:
        litellm.completion(model="openai/agentic-warm-up", api_base="http://127.0.0.1:9/v1", api_key="none",
                           messages=[{"role": "user", "content": "warm up"}], max_retries=0, **kwargs,
                           tools=[{"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}}])
    finally:
        litellm.network_mock = False


def wait_for_preload() -> None:
    if _preload is not None:
        _preload.join()


_registered: set[tuple[str, float, float]] = set()


def register_prices(priced: Sequence[tuple[str, Mapping[str, float]]]) -> None:
    """Tell litellm the price of each model the entries price themselves (``price:`` in models.yaml), once.

    litellm then finds the model in its cost map: the cost it reports equals the harness's own
    (``_cost``), and its per-call cost look-up stops searching its map for a model it does not know
    (eleven model-info look-ups a call, about 0.4 ms; ``benchmarks/litellm_call.py``).
    """
    litellm = litellm_module()
    fresh = {}
    for model, price in priced:
        key = (model, float(price["input_per_token"]), float(price["output_per_token"]))
        if key in _registered:
            continue
        _registered.add(key)
        provider = model.split("/", 1)[0] if "/" in model else None
        fresh[model] = {"input_cost_per_token": key[1], "output_cost_per_token": key[2], "mode": "chat",
                        **({"litellm_provider": provider} if provider else {})}
    if fresh:
        # litellm warns that a model outside its map has no cache prices: the harness counts cached
        # tokens itself (``usage_details``), so the warning is noise here.
        logger = logging.getLogger("LiteLLM")
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            litellm.register_model(fresh)
        finally:
            logger.setLevel(level)


def _transient(litellm: Any) -> tuple[type[BaseException], ...]:
    return (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
        litellm.APIConnectionError,
        litellm.Timeout,
    )


def _deterministic(litellm: Any) -> tuple[type[BaseException], ...]:
    # Subclasses of the transient ones that retrying cannot fix.
    return (litellm.ContextWindowExceededError, litellm.AuthenticationError, litellm.BadRequestError,
            litellm.NotFoundError, litellm.PermissionDeniedError, litellm.UnprocessableEntityError)


#: Seconds a call may run past its ``request_timeout_s`` before the harness gives up on it.
#: The client's own timeout applies to each read, so an endpoint that drips a byte now and then
#: never trips it; this deadline bounds the whole call.
CALL_GRACE_S = 1.0
#: Tokens one call may report for its prompt or completion; a larger (or negative, or
#: non-numeric) count is the endpoint's nonsense, not counted.
MAX_TOKENS_PER_CALL = 100_000_000
#: Dollars one call may cost; a larger (or negative, or not finite) reported cost is not counted.
MAX_COST_PER_CALL = 1_000.0


class ProtocolFault(Exception):
    """The endpoint answered, but not with a chat completion the harness can read."""


class CallTimeout(ProtocolFault):
    """The call did not complete within its deadline (the client's own timeout did not fire)."""


@dataclass
class CallOutcome:
    response: Any
    retries: int
    cost_usd: float | None
    #: The call's token counts as far as they are believable (0 where the endpoint's are not).
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: The endpoint reported usage that is not counted (negative, absurd, not a number).
    usage_invalid: bool = False
    #: Times the call was refused for rate limit and sent again (not retries: no fault budget spent).
    rate_limited: int = 0
    #: Seconds it waited on those refusals (what the endpoint asked, or a backoff).
    rate_limit_wait_s: float = 0.0
    #: Reasoning tokens of the completion (``completion_tokens_details.reasoning_tokens``), or None
    #: when the endpoint did not report them (unknown, not 0).
    reasoning_tokens: int | None = None
    #: Prompt tokens served from the provider's prefix cache (``prompt_tokens_details.cached_tokens``,
    #: where litellm also maps Anthropic's ``cache_read_input_tokens``), or None when not reported.
    cached_prompt_tokens: int | None = None


def backoff_delay(attempt: int, *, base: float = 1.0, cap: float = 30.0, rng: random.Random | None = None) -> float:
    """Capped exponential backoff with full jitter, for retry ``attempt`` (0-based)."""
    uniform = rng.uniform if rng is not None else random.uniform
    return uniform(0, min(cap, base * (2**attempt)))


def call_model(
    entry: ModelEntry,
    *,
    api_base: str | None,
    messages: Sequence[Mapping[str, Any]],
    tools: list[dict[str, Any]],
    metadata: Mapping[str, Any],
    limits: Limits,
    retry_budget: list[float],
    sleep: Callable[[float], None] = time.sleep,
) -> CallOutcome:
    """One completion, retried on transient faults within the run's retry budget.

    ``retry_budget`` is ``[seconds_left]`` shared by the run's calls, so one
    run cannot wait longer than ``limits.max_retry_wait_s`` in all. Transient: rate limits,
    5xx, timeouts, dropped connections, and replies that are not a readable chat completion
    (not JSON, cut short, no choices, a call that never completes). Not retried: auth, bad
    request, redirects away, other errors of the client. A refusal that the
    model's own output provoked (``run/calls/refusals.py``: an outgrown context window, a tool call the
    server cannot read) raises ``ModelRefusal`` at once, whatever its status: it is the model's.

    Under the model's limiter (``run.calls.limiter``, installed for a session's HTTP models) the call
    takes a slot first, and a rate-limit refusal is not a fault: it waits what the endpoint
    asked and is sent again, spending no retry budget, for at most ``max_rate_limit_wait_s``.
    """
    litellm = litellm_module()
    kwargs: dict[str, Any] = dict(entry.params)
    # The harness owns retries (capped, budgeted); the provider SDK's own are off.
    kwargs.update(model=entry.model, messages=messages, metadata=dict(metadata), timeout=limits.request_timeout_s,
                  max_retries=0)
    if tools:
        kwargs["tools"] = tools
    if api_base:
        kwargs["api_base"] = api_base
    if entry.api_key_env:
        kwargs["api_key"] = os.environ.get(entry.api_key_env, "")
    elif api_base and entry.model.startswith("openai/"):
        kwargs["api_key"] = "local-no-key"
    client = route.client_for(entry.model, litellm)
    if client is not None:
        kwargs["client"] = client
    transient = _transient(litellm) + (ProtocolFault,)
    never = _deterministic(litellm)
    # pydantic's serializer warnings quote the endpoint's malformed reply; the reply is judged here.
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    retries, limited, limited_s = 0, 0, 0.0
    gate = limiter.get(entry.name)
    while True:
        try:
            response = _gated(gate, never + (refusals.ModelRefusal,), litellm, kwargs,
                              limits.request_timeout_s + CALL_GRACE_S)
            _check_shape(response)
        except RateLimited as refused:
            # Not a fault: the call waits what the endpoint asked and queues for its slot again,
            # within its own bound (a dead quota must not hang the campaign).
            wait = refused.wait if refused.wait is not None else backoff_delay(
                limited, base=limits.retry_backoff_s, cap=limits.retry_backoff_cap_s)
            wait = max(wait, MIN_RATE_LIMIT_WAIT_S)
            if limited_s + wait > limits.max_rate_limit_wait_s:
                raise InfraError(f"{_describe(refused.cause)} (rate limited {limited + 1} times; waiting more "
                                 f"would pass max_rate_limit_wait_s = {limits.max_rate_limit_wait_s:g}s)",
                                 retries, limited + 1) from refused.cause
            limited += 1
            limited_s += wait
            with turns.waiting():
                sleep(wait)
            continue
        except refusals.ModelRefusal as exc:  # the model's, not the endpoint's: no retry can fix it
            exc.retries = retries
            raise
        except never as exc:
            raise InfraError(_describe(exc), retries) from exc
        except litellm.APIError as exc:
            raise InfraError(_describe(exc), retries) from exc
        except Exception as exc:  # noqa: BLE001 - transient, or the client choking on a malformed reply
            if not isinstance(exc, transient) and isinstance(exc, (ImportError, NameError)):
                raise  # the harness's or litellm's own bug, before any request: not the endpoint's
            said = _describe(exc) + (f" (endpoint {api_base})" if api_base else "")  # which one is unreachable
            if retries >= limits.max_retries:
                raise InfraError(f"{said} (gave up after {retries} retries)", retries) from exc
            delay = backoff_delay(retries, base=limits.retry_backoff_s, cap=limits.retry_backoff_cap_s)
            if delay > retry_budget[0]:
                raise InfraError(f"{said} (retry wait budget of {limits.max_retry_wait_s:g}s spent)", retries) from exc
            retry_budget[0] -= delay
            retries += 1
            with turns.waiting():
                sleep(delay)
            continue
        prompt, completion, invalid = _usage(response)
        cost = None if invalid else _cost(entry, response, prompt, completion)
        reasoning, cached = (None, None) if invalid else usage_details(response)
        return CallOutcome(response=response, retries=retries, cost_usd=cost, prompt_tokens=prompt,
                           completion_tokens=completion, usage_invalid=invalid, rate_limited=limited,
                           rate_limit_wait_s=limited_s, reasoning_tokens=reasoning, cached_prompt_tokens=cached)


#: The shortest wait after a refusal (a ``Retry-After: 0`` would otherwise spin).
MIN_RATE_LIMIT_WAIT_S = 0.05


class RateLimited(Exception):
    """The endpoint refused the call for rate limit (``run.calls.limiter.rate_limit_signal``)."""

    def __init__(self, cause: BaseException, wait: float | None) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.wait = wait


def _gated(gate: limiter.ModelLimiter | None, never: tuple[type[BaseException], ...], litellm: Any,
           kwargs: dict[str, Any], deadline_s: float) -> Any:
    """The completion under the model's limiter, which hears how it went; a rate-limit refusal is ``RateLimited``."""
    if gate is None:
        return _complete_within(litellm, kwargs, deadline_s)
    with turns.waiting():  # a slot may take a while: the run's turn goes to a run with work to do
        slot = gate.acquire()
    try:
        response = _complete_within(litellm, kwargs, deadline_s)
    except Exception as exc:
        limited, wait, why = (False, None, "") if isinstance(exc, never) else limiter.rate_limit_signal(exc)
        if limited:
            gate.refused(slot, why)
            raise RateLimited(exc, wait) from exc
        gate.failed(slot)
        raise
    except BaseException:
        gate.failed(slot)
        raise
    gate.succeeded(slot)
    return response


def _complete_within(litellm: Any, kwargs: dict[str, Any], deadline_s: float) -> Any:
    """``litellm.completion(**kwargs)``, given up after ``deadline_s`` seconds (``CallTimeout``).

    An error that is the server's refusal of what the model wrote is raised as ``ModelRefusal``.

    The call runs on a daemon thread so that the wait is bounded whatever the endpoint does; a
    call given up on is left to end on its own (its reply, if any, is dropped).
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["response"] = litellm.completion(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            done.set()

    # In a copy of the run's context: the run's turn (``turns``) goes with the call, and the network wait gives it up.
    threading.Thread(target=contextvars.copy_context().run, args=(target,), name="agentic-model-call",
                     daemon=True).start()
    if not done.wait(deadline_s):
        raise CallTimeout(f"no complete reply within {deadline_s:g}s")
    if "error" in box:
        error = box["error"]
        refusal = refusals.of(error)
        if refusal is not None:
            raise refusal from error
        if unreadable_reply(litellm, error):
            raise ProtocolFault(_describe(error)) from error
        raise error
    return box["response"]


def unreadable_reply(litellm: Any, exc: BaseException) -> bool:
    """Whether ``exc`` is litellm's plain ``APIError`` for a reply it could not read (status 200) or a 5xx it
    could not name: the endpoint's fault, retried as every unreadable reply and every 5xx is.

    litellm's own HTTP handler (``route``) raises this where the OpenAI SDK's path raises
    ``InternalServerError``: for a body that is not JSON, cut short or not UTF-8 at 200, and for a reply
    with no ``choices``.
    """
    status = getattr(exc, "status_code", None)
    return (type(exc) is litellm.APIError and isinstance(status, int) and not isinstance(status, bool)
            and (status == 200 or status >= 500))


def _check_shape(response: Any) -> None:
    """Raise ``ProtocolFault`` unless ``response`` has a first choice with a message."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ProtocolFault("the reply has no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise ProtocolFault("the reply's first choice has no message")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise ProtocolFault(f"the reply's content is a {type(content).__name__}, not text")


def _count(value: Any) -> int | None:
    """A token count as the endpoint gave it, or None when it is not a believable count."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or not 0 <= value <= MAX_TOKENS_PER_CALL or value != int(value):
        return None
    return int(value)


def _usage(response: Any) -> tuple[int, int, bool]:
    """(prompt tokens, completion tokens, usage invalid); no usage at all counts as 0 and 0."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0, False
    raw = (getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0))
    counted = [0 if v is None else _count(v) for v in raw]
    if None in counted:
        return 0, 0, True
    return counted[0] or 0, counted[1] or 0, False


def _detail(usage: Any, group: str, key: str) -> int | None:
    """``usage.<group>.<key>`` as a believable count, or None (not reported, or not believable)."""
    details = getattr(usage, group, None)
    if details is None:
        return None
    value = details.get(key) if isinstance(details, dict) else getattr(details, key, None)
    return None if value is None else _count(value)


def usage_details(response: Any) -> tuple[int | None, int | None]:
    """(reasoning tokens, cached prompt tokens) of a reply as litellm maps them; None for each one the
    endpoint did not report (unknown is not 0).

    Reasoning: ``completion_tokens_details.reasoning_tokens`` (OpenAI, vLLM, litellm's count of an
    Anthropic or Bedrock thinking block). Cached: ``prompt_tokens_details.cached_tokens``, where litellm
    puts Anthropic's ``cache_read_input_tokens`` and DeepSeek's ``prompt_cache_hit_tokens``; the private
    ``_cache_read_input_tokens`` is read when only it is set.
    """
    usage = getattr(response, "usage", None)
    if usage is None:
        return None, None
    reasoning = _detail(usage, "completion_tokens_details", "reasoning_tokens")
    cached = _detail(usage, "prompt_tokens_details", "cached_tokens")
    if cached is None:
        raw = getattr(usage, "_cache_read_input_tokens", None)
        cached = _count(raw) if raw else None
    return reasoning, cached


def _describe(exc: BaseException) -> str:
    said = refusals.server_words(str(exc)).strip()
    text = said.splitlines()[0] if said else ""
    return f"{type(exc).__name__}: {text[:300]}"


def _cost(entry: ModelEntry, response: Any, prompt: int, completion: int) -> float | None:
    if entry.price is not None:
        return prompt * entry.price["input_per_token"] + completion * entry.price["output_per_token"]
    hidden = getattr(response, "_hidden_params", {}) or {}
    cost = hidden.get("response_cost")
    try:
        value = float(cost) if cost is not None else None
    except (TypeError, ValueError):
        return None
    return value if value is not None and 0 <= value <= MAX_COST_PER_CALL else None
