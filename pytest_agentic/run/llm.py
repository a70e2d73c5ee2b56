"""The one place that calls litellm: lazy import, retries on transient faults, cost."""

from __future__ import annotations

import os
import warnings
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .limits import Limits
from .models import ModelEntry


class InfraError(Exception):
    """The model call failed for a reason that is the endpoint's, not the model's."""

    def __init__(self, message: str, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries


def litellm_module() -> Any:
    """Import litellm the way the harness needs it: no network at import, quiet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm's import makes pydantic warn about its own TypedDicts (ReadOnly items): noise to a
    # user, printed raw when the import runs on the preload thread. Only that message is ignored.
    warnings.filterwarnings("ignore", message=r".*using the `ReadOnly` qualifier", category=UserWarning,
                            module=r"pydantic\.")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    from . import scripted

    scripted.ensure_installed()
    return litellm


_preload: threading.Thread | None = None


def preload_in_background() -> None:
    """Import litellm on a daemon thread, so that its import (seconds) overlaps pytest's collection.

    Started once, when collection meets the first agent test; ``wait_for_preload`` is called
    before the first test runs, so the import never runs under a test's warning filters. A
    failed import is left to the first model call, which imports litellm again and reports it.
    """
    global _preload
    if _preload is None:
        _preload = threading.Thread(target=_import_quietly, name="agentic-litellm-import", daemon=True)
        _preload.start()


def _import_quietly() -> None:
    try:
        litellm_module()
    except BaseException:  # noqa: BLE001 - reported by the first model call's own import
        pass


def wait_for_preload() -> None:
    if _preload is not None:
        _preload.join()


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


def backoff_delay(attempt: int, *, base: float = 1.0, cap: float = 30.0, rng: random.Random | None = None) -> float:
    """Capped exponential backoff with full jitter, for retry ``attempt`` (0-based)."""
    rng = rng or random
    return rng.uniform(0, min(cap, base * (2**attempt)))


def call_model(
    entry: ModelEntry,
    *,
    api_base: str | None,
    messages: list[dict[str, Any]],
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
    request, context window, redirects away, other errors of the client.
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
    transient = _transient(litellm) + (ProtocolFault,)
    never = _deterministic(litellm)
    # pydantic's serializer warnings quote the endpoint's malformed reply; the reply is judged here.
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    retries = 0
    while True:
        try:
            response = _complete_within(litellm, kwargs, limits.request_timeout_s + CALL_GRACE_S)
            _check_shape(response)
        except never as exc:
            raise InfraError(_describe(exc), retries) from exc
        except litellm.APIError as exc:
            raise InfraError(_describe(exc), retries) from exc
        except Exception as exc:  # noqa: BLE001 - transient, or the client choking on a malformed reply
            if not isinstance(exc, transient) and isinstance(exc, (ImportError, NameError)):
                raise  # the harness's or litellm's own bug, before any request: not the endpoint's
            if retries >= limits.max_retries:
                raise InfraError(f"{_describe(exc)} (gave up after {retries} retries)", retries) from exc
            delay = backoff_delay(retries, base=limits.retry_backoff_s, cap=limits.retry_backoff_cap_s)
            if delay > retry_budget[0]:
                raise InfraError(f"{_describe(exc)} (retry wait budget of {limits.max_retry_wait_s:g}s spent)", retries) from exc
            retry_budget[0] -= delay
            retries += 1
            sleep(delay)
            continue
        prompt, completion, invalid = _usage(response)
        cost = None if invalid else _cost(entry, response, prompt, completion)
        return CallOutcome(response=response, retries=retries, cost_usd=cost, prompt_tokens=prompt,
                           completion_tokens=completion, usage_invalid=invalid)


def _complete_within(litellm: Any, kwargs: dict[str, Any], deadline_s: float) -> Any:
    """``litellm.completion(**kwargs)``, given up after ``deadline_s`` seconds (``CallTimeout``).

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

    threading.Thread(target=target, name="agentic-model-call", daemon=True).start()
    if not done.wait(deadline_s):
        raise CallTimeout(f"no complete reply within {deadline_s:g}s")
    if "error" in box:
        raise box["error"]
    return box["response"]


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


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
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
