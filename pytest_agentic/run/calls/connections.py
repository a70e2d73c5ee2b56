"""litellm's HTTP connection pool, sized from the models' limits instead of a library default.

litellm 1.106.2 sends a synchronous OpenAI-compatible call (``openai/...``, vLLM, llama.cpp,
any ``api_base``) through ``litellm.client_session`` when one is set, else through an
``httpx.Client`` it makes with httpx's default limits (``OpenAIChatCompletion._get_sync_http_client``
in ``litellm/llms/openai/common_utils.py``): at most 100 connections, of which 20 are kept alive.
So whatever the limiter allows, no more than 100 calls are ever in flight, and beyond 20 every
call opens a new connection. litellm never closes a ``client_session`` it was given
(``owns_wrapped_http_client``), and hands it to every OpenAI client it builds, so the harness
sets one: an ``httpx.Client`` built as litellm builds its own (its SSL configuration, redirects,
HTTP/2 setting) with room for every call the session's limiters may have in flight, plus
``SPARE`` for calls given up on that still hold a connection until their reply or timeout.

Providers that litellm reaches through its own ``HTTPHandler`` (Bedrock, Anthropic) are not
affected: their pool is made inside litellm with no setting to size it.

A connection is a file descriptor: the process's soft ``RLIMIT_NOFILE`` is raised (up to the
hard limit) to hold the pool and ``SPARE_FILES`` more for workspaces, transcripts and tools.
"""

from __future__ import annotations

import resource
import threading
import time
from typing import Any

from . import turns
from .llm import litellm_module

#: Connections beyond the limiters' total: calls given up on (``llm.CallTimeout``) still hold theirs.
SPARE = 64
#: File descriptors kept free beyond the pool.
SPARE_FILES = 1024

_lock = threading.Lock()
_ours: Any = None


def pool_size(calls: int) -> int:
    """Connections for ``calls`` in flight at once."""
    return max(1, calls) + SPARE


def raise_file_limit(needed: int) -> int:
    """Raise the soft limit on open files to ``needed`` (at most the hard limit); returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft


def size_pool(calls: int) -> int | None:
    """Give litellm a client with room for ``calls`` in flight; returns its size (None: the user set one).

    A ``litellm.client_session`` set by the user is left alone. Made again only when the size changes.
    """
    global _ours
    litellm = litellm_module()
    size = pool_size(calls)
    with _lock:
        current = litellm.client_session
        if current is not None and current is not _ours:
            return None
        if _ours is not None and getattr(_ours, "_agentic_size", None) == size:
            return size
        raise_file_limit(size + SPARE_FILES)
        _ours = _client(litellm, size)
        litellm.client_session = _ours
        # Calls already made cached OpenAI clients around the old pool: forget them (litellm closes
        # those it owns after a grace period; ours, the shared session, it never closes).
        cache = getattr(litellm, "in_memory_llm_clients_cache", None)
        if cache is not None and hasattr(cache, "flush_cache"):
            cache.flush_cache()
    return size


def _client(litellm: Any, size: int) -> Any:
    import httpx
    from litellm.llms.custom_httpx.http_handler import get_ssl_configuration, http2_enabled

    verify, http2 = get_ssl_configuration(), http2_enabled()
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    inner = httpx.HTTPTransport(verify=verify, http2=http2, limits=limits)
    if not http2:  # an HTTP/2 connection serves many requests at once: a held one must stay open to others
        keep_assigned_connections(inner)
    transport = _waiting(inner)
    client = httpx.Client(verify=verify, follow_redirects=True, http2=http2, limits=limits, transport=transport)
    client._agentic_size = size  # type: ignore[attr-defined]
    return client


def keep_assigned_connections(transport: Any) -> bool:
    """Make ``transport``'s httpcore pool leave alone the connections its requests hold; True when it did.

    httpcore 1.0.9's pool (encode/httpcore#1110, open) hands an idle connection to a waiting request
    and, before that request's thread starts on it, another thread's pass over the pool can still
    see it idle and close it: as expired (idle past ``keepalive_expiry``), surplus, or to make room.
    Closed before the request starts, the call fails ("Connection error": EBADF); closed after, the
    request waits for a reply on a socket no one reads until its read timeout (300 s by default).
    With hundreds of calls in flight it cost 1 to 7 lost runs in 3000 (``benchmarks/scaling.py``).

    The pass (``_assign_requests_to_connections``) runs here without the connections that a request
    of the pool already holds, and with ``max_connections`` lowered by as many, so a held connection
    is neither closed nor handed to a second request and the pool's size stays its size. Only an
    ``httpcore.ConnectionPool`` of exactly that class (httpx's own, no proxy) is changed, and only over
    HTTP/1.1 (litellm's default): an HTTP/2 connection held by one request serves others too.
    """
    import httpcore

    pool = getattr(transport, "_pool", None)
    if type(pool) is not httpcore.ConnectionPool:
        return False
    pool.__class__ = _held_pool_class()
    return True


def _held_pool_class() -> Any:
    global _HeldPool
    if _HeldPool is None:
        import httpcore

        linear = httpcore.__version__ == PASS_OF

        class HeldPool(httpcore.ConnectionPool):
            """httpcore's pool whose passes skip the connections its requests hold (``keep_assigned_connections``),
            each pass one sweep of the pool (``linear_pass``)."""

            def _pass(self) -> list[Any]:
                return linear_pass(self) if linear else super()._assign_requests_to_connections()

            def _assign_requests_to_connections(self) -> list[Any]:
                held = {id(r.connection) for r in self._requests if r.connection is not None}
                everything = list(self._connections)
                free = [c for c in everything if id(c) not in held]
                if len(free) == len(everything):
                    return self._pass()
                taken = len(everything) - len(free)
                self._connections = free  # the pass changes this list in place
                self._max_connections -= taken
                try:
                    closing: list[Any] = self._pass()
                finally:
                    self._max_connections += taken
                    # In their order: the held ones, the free ones the pass kept, then those it made.
                    kept, before = {id(c) for c in self._connections}, {id(c) for c in everything}
                    self._connections = ([c for c in everything if id(c) in held or id(c) in kept]
                                         + [c for c in self._connections if id(c) not in before])
                return closing

        _HeldPool = HeldPool
    return _HeldPool


#: The httpcore release whose pass ``linear_pass`` repeats; under another, httpcore's own pass runs.
PASS_OF = "1.0.9"


def linear_pass(pool: Any) -> list[Any]:
    """httpcore 1.0.9's ``ConnectionPool._assign_requests_to_connections``, the same decisions in one
    sweep of the pool: the connections it closes, in its order, and each queued request's connection.

    httpcore's pass runs on every request and every reply. For each idle connection it counts the
    whole pool again (``len([connection.is_idle() for connection in self._connections])``, which is
    the number of connections), and for each queued request it lists every available and every idle
    connection before taking the first: with hundreds of calls in flight, a pass over some 300
    connections cost 2.3 ms of CPU, 14 s of a 3000-run session's 52 (``benchmarks/scaling.py`` at
    1 s latency). Here the count is carried down as connections leave, and the first available
    (else the first idle) connection is found without listing the rest.
    """
    closing: list[Any] = []
    kept: list[Any] = []
    expired = expired_of(pool._connections)
    count = len(pool._connections)  # httpcore's "idle" count is the pool's length at that point of its pass
    for connection in pool._connections:
        if connection.is_closed():
            count -= 1
        elif expired(connection):
            count -= 1
            closing.append(connection)
        elif connection.is_idle() and count > pool._max_keepalive_connections:
            count -= 1
            closing.append(connection)
        else:
            kept.append(connection)
    pool._connections[:] = kept
    for pool_request in [request for request in pool._requests if request.is_queued()]:
        origin = pool_request.request.url.origin
        connection = next((c for c in pool._connections if c.can_handle_request(origin) and c.is_available()), None)
        if connection is None:
            if len(pool._connections) >= pool._max_connections:
                idle = next((c for c in pool._connections if c.is_idle()), None)
                if idle is None:
                    continue  # the request waits for a connection to come back
                pool._connections.remove(idle)
                closing.append(idle)
            connection = pool.create_connection(origin)
            pool._connections.append(connection)
        pool_request.assign_to_connection(connection)
    return closing


def expired_of(connections: list[Any]) -> Any:
    """``connection.has_expired()`` for each of ``connections``, the kernel asked once for all of them.

    httpcore's ``has_expired`` of an idle HTTP/1.1 connection polls its socket, one ``poll`` each: a
    readable idle socket is a server's close. That was 0.39 of a pass's 0.51 ms over 300 idle
    connections (``benchmarks/connection_pass.py``). Here the sockets of every idle HTTP/1.1 connection
    on httpcore's own socket stream (plain or TLS) go into one ``poll``, and its answer is read as
    httpcore reads its own (any event counts; a closed socket is readable); the keep-alive clock is read
    as httpcore reads it. Any other connection (connecting, HTTP/2, a stream of another kind) is asked
    its own ``has_expired``.
    """
    import select

    from httpcore._backends.sync import SyncStream
    from httpcore._sync.connection import HTTPConnection
    from httpcore._sync.http11 import HTTP11Connection, HTTPConnectionState

    idle = HTTPConnectionState.IDLE
    read_here: dict[int, int] = {}  # id(connection) -> its socket's descriptor (-1: closed, so readable)
    for connection in connections:
        inner = getattr(connection, "_connection", None) if type(connection) is HTTPConnection else None
        if type(inner) is HTTP11Connection and type(inner._network_stream) is SyncStream:
            if inner._state is not idle:
                read_here[id(connection)] = -2  # not idle: httpcore reads no socket
            else:
                sock = inner._network_stream._sock
                read_here[id(connection)] = -1 if sock is None else sock.fileno()
    ready: set[int] = set()
    asked = [fd for fd in read_here.values() if fd >= 0]
    if asked:
        poller = select.poll()
        for fd in asked:
            poller.register(fd, select.POLLIN)
        ready = {fd for fd, _ in poller.poll(0)}

    def expired(connection: Any) -> bool:
        fd = read_here.get(id(connection))
        if fd is None:
            return bool(connection.has_expired())
        inner = connection._connection
        if inner._expire_at is not None and time.monotonic() > inner._expire_at:
            return True
        return fd == -1 or fd in ready

    return expired


_HeldPool: Any = None


def _waiting(inner: Any) -> Any:
    """httpx's transport, whose wait for the endpoint gives the run's turn up (``run.calls.turns``)."""
    import httpx

    class Waiting(httpx.BaseTransport):
        #: httpx's own transport, which holds the pool.
        wrapped = inner

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            with turns.waiting():
                response = inner.handle_request(request)
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    return response  # a stream is read as it comes, by its reader
                # The whole body, while waiting: the connection goes back to the pool now, not once
                # the run has its turn again. Raw bytes, so the headers still describe them.
                try:
                    raw = b"".join(response.iter_raw())
                finally:
                    response.close()
            return httpx.Response(response.status_code, headers=response.headers, stream=httpx.ByteStream(raw),
                                  request=request, extensions=response.extensions)

        def close(self) -> None:
            inner.close()

    return Waiting()


def current_size() -> int | None:
    """The size of the pool the harness gave litellm, or None."""
    return getattr(_ours, "_agentic_size", None) if _ours is not None and _ours is litellm_module().client_session \
        else None


__all__ = ["PASS_OF", "SPARE", "current_size", "expired_of", "keep_assigned_connections", "linear_pass", "pool_size",
           "raise_file_limit", "size_pool"]
