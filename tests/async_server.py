"""A local OpenAI-compatible endpoint on asyncio (aiohttp) that holds thousands of calls at once.

``tests/fault_server.py`` is a threading server: a thread per connection, and a burst of
hundreds of connections can outrun its accept queue (connections reset). Benchmarks that
measure the harness at hundreds or thousands of calls in flight need an endpoint that is not
the bottleneck: this one waits its latency with ``asyncio.sleep`` (no thread per call), listens
with a backlog of ``BACKLOG``, and keeps connections alive. It plays the same solutions as
``FaultServer`` (``FaultServer.reply``) and the same quota (``quota`` calls in flight; any other
answered at once with 429 and ``Retry-After``). aiohttp comes with litellm.

It runs its event loop on a daemon thread inside ``with``; ``peak``, ``arrived``, ``calls`` and
``rate_refused`` are read from the loop's thread only, so they need no lock.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from typing import Any, Self

from aiohttp import web

from pytest_agentic.run.task import Solution
from tests.fault_server import FaultServer

#: The listen backlog: a burst of this many connections at once is queued, not reset.
BACKLOG = 4096


class AsyncEndpoint:
    """Serves ``/v1/chat/completions`` on 127.0.0.1 from an asyncio loop; every answer after ``latency_s``."""

    def __init__(self, solutions: dict[str, Solution], latency_s: float = 0.0, quota: int | None = None,
                 retry_after: str = "1", hold_until: int | None = None) -> None:
        self.solutions = solutions
        #: When set, a call is answered once this many calls are in flight at once (or after
        #: ``latency_s``, whichever comes first): a test of how many a client holds, whatever its speed.
        self.hold_until = hold_until
        self._full: asyncio.Event | None = None
        self.echo_auth = False
        self.latency_s = latency_s
        self.quota = quota
        self.retry_after = retry_after
        self.in_flight = 0
        #: The most calls in flight at once (refused calls are not counted).
        self.peak = 0
        #: Calls received, counted on arrival; ``calls``: answered with 200.
        self.arrived = 0
        self.calls = 0
        #: Calls refused with 429 because ``quota`` calls were in flight.
        self.rate_refused = 0
        #: ``time.monotonic()`` when the last answer was made (None before the first).
        self.last_answer: float | None = None
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(BACKLOG)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._serve, name="async-endpoint", daemon=True)

    reply = FaultServer.reply

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    async def _completion(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read() or b"{}")
        self.arrived += 1
        if self.quota is not None and self.in_flight >= self.quota:
            self.rate_refused += 1
            return web.json_response({"error": {"message": "too many calls in flight", "type": "rate_limit"}},
                                     status=429, headers={"Retry-After": self.retry_after})
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.hold_until is None:
                await asyncio.sleep(self.latency_s)
            else:
                assert self._full is not None
                if self.in_flight >= self.hold_until:
                    self._full.set()
                try:
                    await asyncio.wait_for(self._full.wait(), self.latency_s)
                except asyncio.TimeoutError:
                    pass
            answer = self.reply(body, request.headers.get("Authorization", ""))
            self.calls += 1
            self.last_answer = time.monotonic()
            return web.json_response(answer)
        finally:
            self.in_flight -= 1

    async def _main(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completion)
        # Calls still held at exit (a latency of minutes) are dropped within a second, not waited on for 60 s.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        await web.SockSite(runner, self._sock, backlog=BACKLOG).start()
        self._stop = asyncio.Event()
        self._full = asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    def __enter__(self) -> Self:
        self.thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the asyncio endpoint did not start within 30 s")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(60)
        self._sock.close()
        if self.thread.is_alive():
            raise RuntimeError("the asyncio endpoint did not stop within 60 s")
        self._loop.close()  # closed by its thread already, unless it never started
