"""CPU of one pass over httpcore's connection pool with hundreds of idle connections.

httpcore runs ``ConnectionPool._assign_requests_to_connections`` on every request and every reply.
This script opens ``--connections`` keep-alive connections to the asyncio endpoint
(tests/async_server.py, which holds every call ``--latency`` seconds so that each needs a connection
of its own), lets them all go idle, and times ``--passes`` passes of:

- ``httpcore``: httpcore 1.0.9's own pass;
- ``linear, a poll each``: ``run.calls.connections.linear_pass`` asking each connection its own
  ``has_expired`` (one ``poll`` of its socket each, as httpcore does);
- ``linear``: ``linear_pass`` as the harness runs it, every idle socket in one ``poll``
  (``connections.expired_of``);
- ``has_expired alone``: each connection's ``has_expired``, the part the single poll replaces.

Prints CPU milliseconds a pass (``time.process_time``), with the load average beside them.

    python benchmarks/connection_pass.py [--connections 300] [--passes 300]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from adaptive import SOLUTIONS  # noqa: E402

from pytest_agentic.run.calls import connections  # noqa: E402
from tests.async_server import AsyncEndpoint  # noqa: E402

BODY = b'{"model": "bench", "messages": [{"role": "user", "content": "hi"}]}'


def per_pass(work, passes: int) -> float:
    start = time.process_time()
    for _ in range(passes):
        work()
    return (time.process_time() - start) / passes * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=300)
    ap.add_argument("--passes", type=int, default=300)
    ap.add_argument("--latency", type=float, default=0.5)
    args = ap.parse_args()
    import httpcore

    with AsyncEndpoint(SOLUTIONS, latency_s=args.latency) as server:
        pool = httpcore.ConnectionPool(max_connections=args.connections + 10,
                                       max_keepalive_connections=args.connections + 10)
        url = server.api_base + "/chat/completions"
        headers = {"content-type": "application/json"}
        request = {"content": BODY, "headers": headers}
        threads = [threading.Thread(target=pool.request, args=("POST", url), kwargs=request)
                   for _ in range(args.connections)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        idle = sum(c.is_idle() for c in pool._connections)
        print(f"httpcore {httpcore.__version__}; {len(pool._connections)} connections, {idle} idle; "
              f"load {os.getloadavg()[0]:.1f}; CPU ms a pass, mean of {args.passes}")
        one_each = connections.expired_of

        def each(conns):
            return lambda connection: connection.has_expired()

        rows = [("httpcore", lambda: httpcore.ConnectionPool._assign_requests_to_connections(pool), None),
                ("linear, a poll each", lambda: connections.linear_pass(pool), each),
                ("linear", lambda: connections.linear_pass(pool), one_each),
                ("has_expired alone", lambda: [c.has_expired() for c in pool._connections], None)]
        print("| pass | ms |\n|---|---|")
        for label, work, expired in rows:
            if expired is not None:
                connections.expired_of = expired
            try:
                print(f"| {label} | {per_pass(work, args.passes):.3f} |", flush=True)
            finally:
                connections.expired_of = one_each
        assert len(pool._connections) == idle, "a pass closed connections: the figures are not of the same pool"
        pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
