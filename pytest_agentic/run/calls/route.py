"""Which of litellm's two transports an ``openai/`` call takes: the OpenAI SDK, or litellm's own HTTP handler.

litellm 1.106.2 sends an ``openai/`` completion through the OpenAI Python SDK, unless
``EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER`` is true in the process's environment: then the same
call goes through litellm's own ``BaseLLMHTTPHandler`` (the one most of its providers use), with the
same provider configuration (``OpenAIGPTConfig``: the same request mapping, no change to the tool
schemas, unlike the ``hosted_vllm/`` route) and the same response parsing. What differs is the
transport: no SDK request and response models to build, about 1.3 ms less CPU a call on this
machine (``benchmarks/litellm_call.py``), a third of a call's cost in the harness.

The harness takes it only where it is proven to behave the same (``tests/test_call_route.py``: the
JSON of every request body, what the run keeps of every reply, and the verdict of every hostile
endpoint behaviour, through both routes): when every model of the session that answers over HTTP is
an ``openai/`` entry with an OpenAI-compatible server of its own (``api_base``, ``api_base_env`` or a
server the plugin starts) that is not OpenAI's API. A session with any other entry keeps the SDK for
all (the switch is the process's, not a call's): OpenAI's own API reads the SDK's organisation and
project headers, which litellm's handler does not send. A switch the user set is left as set.

Under the switch the call is given the harness's connection pool (``connections``) wrapped in
litellm's ``HTTPHandler``, as the SDK is given ``litellm.client_session``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from ..models import ModelEntry

#: litellm's own switch (``litellm/main.py``, ``_complete_custom_openai``), read at every call.
SWITCH = "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"
#: The two routes, as a campaign records them.
SDK = "openai-sdk"
HTTP = "litellm-http"
#: Hosts of OpenAI's own API: an entry that reaches one keeps the SDK.
OPENAI_HOSTS = frozenset({"api.openai.com"})

_lock = threading.Lock()
_handlers: dict[int, Any] = {}
#: Whether this process set the switch (``take``), so that ``release`` takes back only what it set.
_taken = False


def own_server(entry: ModelEntry, api_base: str | None) -> bool:
    """Whether ``entry`` is an ``openai/`` model on an OpenAI-compatible server that is not OpenAI's API."""
    if not entry.model.startswith("openai/"):
        return False
    if entry.server is not None:
        return True
    if not api_base:
        return False
    host = (urlsplit(api_base).hostname or "").lower()
    return bool(host) and host not in OPENAI_HOSTS


def choose(entries: Iterable[tuple[ModelEntry, str | None]]) -> str:
    """The route for a session whose HTTP models are ``entries`` (each with its ``api_base`` or None)."""
    listed = list(entries)
    return HTTP if listed and all(own_server(e, base) for e, base in listed) else SDK


def _truthy(value: str) -> bool:
    """As litellm reads the switch (``secret_managers.main.str_to_bool``): "true" alone is on ("1" is not)."""
    return value.strip().lower() == "true"


def take(route: str) -> str:
    """Set litellm's switch for ``route`` in this process, unless the user set it; returns the route in force."""
    global _taken
    with _lock:
        if SWITCH not in os.environ and route == HTTP:
            os.environ[SWITCH] = "true"
            _taken = True
    return current()


def release() -> None:
    """Take back the switch this process set, at the session's end (a second session in the process chooses again)."""
    global _taken
    with _lock:
        if _taken:
            os.environ.pop(SWITCH, None)
            _taken = False
            _handlers.clear()


def current() -> str:
    """The route ``openai/`` calls take in this process now."""
    return HTTP if _truthy(os.environ.get(SWITCH, "")) else SDK


def client_for(model: str, litellm: Any) -> Any:
    """The ``client`` argument of an ``openai/`` call under litellm's handler: the session's pool, or None.

    None leaves litellm to pick (its own cached handler), as under the SDK when no pool was sized.
    """
    if not model.startswith("openai/") or current() != HTTP:
        return None
    session = litellm.client_session
    if session is None:
        return None
    handler = _handlers.get(id(session))
    if handler is None or handler.client is not session:
        from litellm.llms.custom_httpx.http_handler import HTTPHandler

        with _lock:
            handler = HTTPHandler(client=session)
            _handlers.clear()  # a pool made again replaces the old one: its handler goes with it
            _handlers[id(session)] = handler
    return handler


def warm_up_client() -> Any:
    """A handler answered by litellm's own mock transport, for the warm-up call under the switch."""
    import httpx
    from litellm.llms.custom_httpx.http_handler import HTTPHandler
    from litellm.llms.custom_httpx.mock_transport import MockOpenAITransport

    return HTTPHandler(client=httpx.Client(transport=MockOpenAITransport()))


__all__ = ["HTTP", "OPENAI_HOSTS", "SDK", "SWITCH", "choose", "client_for", "current", "own_server", "release",
           "take", "warm_up_client"]
