"""The harness's HTTP pool keeps a connection a request holds (encode/httpcore#1110, open in httpcore 1.0.9).

httpcore's pass over its pool can close, as expired, surplus or to make room, an idle connection it
has just handed to a request whose thread has not started on it: the call then fails (EBADF) or,
if it had started, waits for its read timeout. ``connections.keep_assigned_connections`` runs the
pass without the held connections. The first tests drive the pass itself, httpcore's own and ours,
on the same state (the race cannot be timed through the public API); the last sends calls through
litellm with the harness's pool at a keep-alive short enough to make the race common.
"""

from __future__ import annotations

import threading

import httpcore
import httpx
import pytest

from pytest_agentic.run.calls import connections

from .async_server import AsyncEndpoint

ORIGIN = httpcore.URL("http://127.0.0.1:9/").origin


class Idle:
    """A connection as httpcore's pool sees it: idle, its keep-alive expired, free for the origin."""

    def __init__(self, name: str) -> None:
        self.name, self.closed = name, False

    def can_handle_request(self, origin: object) -> bool:
        return True

    def is_available(self) -> bool:
        return not self.closed

    def has_expired(self) -> bool:
        return True

    def is_idle(self) -> bool:
        return True

    def is_closed(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return self.name


def pool(*, ours: bool, max_connections: int = 10) -> httpcore.ConnectionPool:
    transport = httpx.HTTPTransport(limits=httpx.Limits(max_connections=max_connections,
                                                        max_keepalive_connections=max_connections))
    if ours:
        assert connections.keep_assigned_connections(transport)
    return transport._pool


def request() -> httpcore._sync.connection_pool.PoolRequest:
    return httpcore._sync.connection_pool.PoolRequest(httpcore.Request("POST", "http://127.0.0.1:9/v1/x"))


@pytest.mark.parametrize("ours", [False, True], ids=["httpcore's pass", "the harness's pass"])
def test_a_pass_closes_a_held_expired_connection_only_without_the_fix(ours):
    the_pool = pool(ours=ours)
    held, spare = Idle("held"), Idle("spare")
    holder = request()
    holder.assign_to_connection(held)  # handed over; its thread has not started on it yet
    the_pool._connections[:] = [held, spare]
    the_pool._requests[:] = [holder]
    closing = the_pool._assign_requests_to_connections()
    if ours:
        assert closing == [spare] and the_pool._connections == [held]
    else:  # httpcore's own pass closes the connection a request holds: the bug this module works around
        assert held in closing and held not in the_pool._connections


def test_a_held_connection_is_not_handed_to_a_second_request_and_the_pool_keeps_its_size():
    the_pool = pool(ours=True, max_connections=2)
    held = Idle("held")
    the_pool._connections[:] = [held]
    holder, waiting = request(), request()
    holder.assign_to_connection(held)
    the_pool._requests[:] = [holder, waiting]
    the_pool._assign_requests_to_connections()
    assert waiting.connection is not None and waiting.connection is not held  # a new connection, not the held one
    assert the_pool._connections[0] is held and len(the_pool._connections) == 2
    assert the_pool._max_connections == 2
    third = request()
    the_pool._requests.append(third)
    the_pool._assign_requests_to_connections()
    assert third.is_queued(), "a third request waits: the pool is at its size, held connections counted"


def test_only_httpx_s_own_pool_class_is_changed():
    transport = httpx.HTTPTransport(proxy="http://127.0.0.1:9")  # an httpcore.HTTPProxy: left as it is
    assert not connections.keep_assigned_connections(transport)
    assert type(transport._pool) is httpcore.HTTPProxy


def test_hundreds_of_calls_through_the_harness_pool_with_a_short_keep_alive_all_arrive(monkeypatch):
    """The race made common: connections expire after 20 ms idle while 120 threads share the pool."""
    from pytest_agentic.run.calls import llm

    litellm = llm.litellm_module()
    real = httpx.Limits

    def short(**kwargs):
        return real(**{**kwargs, "keepalive_expiry": 0.02})

    monkeypatch.setattr(httpx, "Limits", short)
    errors: list[BaseException] = []
    with AsyncEndpoint({}, latency_s=0.05) as server:
        client = connections._client(litellm, 200)
        monkeypatch.setattr(litellm, "client_session", client)
        gate = threading.Semaphore(120)

        def call() -> None:
            try:
                litellm.completion(model="openai/ok", api_base=server.api_base, api_key="x", max_retries=0,
                                   timeout=60, messages=[{"role": "user", "content": "Say ok."}])
            except Exception as exc:  # noqa: BLE001 - counted below
                errors.append(exc)
            finally:
                gate.release()

        threads = []
        for _ in range(1200):
            gate.acquire()
            threads.append(threading.Thread(target=call, daemon=True))
            threads[-1].start()
        for thread in threads:
            thread.join()
        client.close()
    assert errors == [], f"{len(errors)} calls failed, the first: {errors[0]!r}"


class Fake:
    """A connection with every state httpcore's pass reads, counting how often the pass asks it."""

    asked = 0

    def __init__(self, name: str, rng) -> None:
        self.name = name
        self.closed = rng.random() < 0.15
        self.expired = rng.random() < 0.2
        self.idle = rng.random() < 0.5
        self.available = rng.random() < 0.3
        self.origin_ok = rng.random() < 0.8

    def _ask(self) -> None:
        Fake.asked += 1

    def can_handle_request(self, origin: object) -> bool:
        self._ask()
        return self.origin_ok

    def is_available(self) -> bool:
        self._ask()
        return self.available

    def has_expired(self) -> bool:
        self._ask()
        return self.expired

    def is_idle(self) -> bool:
        self._ask()
        return self.idle

    def is_closed(self) -> bool:
        self._ask()
        return self.closed

    def __repr__(self) -> str:
        return self.name


def _state(seed: int) -> tuple[list[Fake], int, int, int]:
    """Connections, how many requests wait, the pool's size and its keep-alive bound."""
    import random

    rng = random.Random(seed)
    fakes = [Fake(f"c{i}", rng) for i in range(rng.randint(0, 12))]
    queued = rng.randint(0, 6)
    most = rng.randint(1, 14)
    return fakes, queued, most, rng.randint(0, most)


def _after(the_pool: httpcore.ConnectionPool, closing: list, requests: list) -> tuple:
    """What a pass decided, with the connections it made named by their place."""
    def name(c: object) -> str:
        return repr(c) if isinstance(c, Fake) else f"new:{the_pool._connections.index(c)}"

    return ([repr(c) for c in closing], [name(c) for c in the_pool._connections],
            [None if r.connection is None else name(r.connection) for r in requests])


@pytest.mark.skipif(httpcore.__version__ != connections.PASS_OF, reason="the pass repeats httpcore 1.0.9's")
def test_the_linear_pass_decides_what_httpcore_s_pass_decides():
    """On 1000 pools of random states: the same connections closed, kept and made, and the same assignments."""
    for seed in range(1000):
        results = []
        for run in (httpcore.ConnectionPool._assign_requests_to_connections, connections.linear_pass):
            fakes, queued, most, keepalive = _state(seed)
            the_pool = httpcore.ConnectionPool(max_connections=most, max_keepalive_connections=keepalive)
            the_pool._connections[:] = fakes
            requests = [request() for _ in range(queued)]
            the_pool._requests[:] = requests
            closing = run(the_pool)
            results.append(_after(the_pool, closing, requests))
        assert results[0] == results[1], f"seed {seed}: httpcore {results[0]}, ours {results[1]}"


@pytest.mark.skipif(httpcore.__version__ != connections.PASS_OF, reason="the pass repeats httpcore 1.0.9's")
def test_a_pass_asks_each_connection_a_few_times_not_once_per_connection():
    """httpcore's pass counts the whole pool again for every idle connection: n * n questions."""
    import random

    def questions(run, n: int) -> int:
        the_pool = httpcore.ConnectionPool(max_connections=2 * n, max_keepalive_connections=2 * n)
        rng = random.Random(0)
        fakes = [Fake(f"c{i}", rng) for i in range(n)]
        for fake in fakes:
            fake.closed = fake.expired = fake.available = False
            fake.idle = True
        the_pool._connections[:] = fakes
        the_pool._requests[:] = [request()]
        Fake.asked = 0
        run(the_pool)
        return Fake.asked

    ours = questions(connections.linear_pass, 300)
    assert ours <= 5 * 300
    assert questions(httpcore.ConnectionPool._assign_requests_to_connections, 300) > 300 * 300


class KeepAliveServer:
    """A raw HTTP/1.1 server that answers each request and keeps the connection; ``drop(i)`` closes the i-th."""

    def __init__(self) -> None:
        import socket

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.sockets: list = []
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    @staticmethod
    def _serve(sock) -> None:
        buffered = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buffered += chunk
            while b"\r\n\r\n" in buffered:
                _, buffered = buffered.split(b"\r\n\r\n", 1)
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")

    def close(self) -> None:
        self.listener.close()
        for sock in self.sockets:
            sock.close()


def test_one_poll_for_every_idle_socket_says_what_has_expired_says():
    """``expired_of`` against httpcore's own ``has_expired`` on real connections: idle, closed by the
    server, past their keep-alive, busy, and one whose connect failed."""
    import random
    import socket
    import time

    from httpcore._sync.http11 import HTTPConnectionState

    server = KeepAliveServer()
    pool = httpcore.ConnectionPool(max_connections=80, max_keepalive_connections=80)
    url = f"http://127.0.0.1:{server.port}/"
    gate = threading.Barrier(60)

    def request() -> None:
        gate.wait(10)  # all at once, so that each needs a connection of its own
        pool.request("GET", url)

    threads = [threading.Thread(target=request) for _ in range(60)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    conns = list(pool._connections)
    assert len(conns) >= 30 and all(c.is_idle() for c in conns), [c.info() for c in conns]
    rng = random.Random(11)
    by_port = {c._connection._network_stream._sock.getsockname()[1]: c for c in conns}
    dropped = rng.sample(sorted(by_port), 10)
    for sock in list(server.sockets):
        if sock.getpeername()[1] in dropped:
            sock.shutdown(socket.SHUT_RDWR)  # the FIN now, though the server's thread is in recv on it
    for connection in rng.sample(conns, 8):
        connection._connection._expire_at = time.monotonic() - 1
    busy = rng.choice(conns)
    busy._connection._state = HTTPConnectionState.ACTIVE
    failed = httpcore.HTTPConnection(origin=ORIGIN)
    failed._connect_failed = True
    conns.append(failed)
    deadline = time.monotonic() + 5  # the server's FIN reaches the client sockets
    while time.monotonic() < deadline and not all(by_port[p].has_expired() for p in dropped if by_port[p] is not busy):
        time.sleep(0.01)
    try:
        theirs = [bool(c.has_expired()) for c in conns]
        expired = connections.expired_of(conns)
        ours = [expired(c) for c in conns]
        assert ours == theirs
        # Some of each kind: closed by the server (found by the poll alone), past their keep-alive, alive.
        assert all(expired(by_port[p]) for p in dropped if by_port[p] is not busy)
        assert 5 <= sum(theirs) < len(conns) - 10, theirs
    finally:
        busy._connection._state = HTTPConnectionState.IDLE
        pool.close()
        server.close()
