"""The floor under a campaign's calls: the same calls through litellm alone, with no harness around them.

``benchmarks/scaling.py`` times whole sessions. This script times what no harness can go under on
one machine: ``--runs`` threads, each making ``--calls`` sequential ``litellm.completion`` calls
(the five-call run's growing conversation: tool calls and their results, one tool schema) against
the asyncio endpoint (tests/async_server.py, in a process of its own so that its CPU is not
counted) answering after ``--latency`` seconds. The calls go through the harness's own call
settings: litellm's HTTP handler (``run.calls.route``), the harness's connection pool
(``run.calls.connections``), and each thread's work under a turn (``run.calls.turns``). Two
placements:

- ``in this process``: litellm runs in the process that drives the runs, as the harness does now;
- ``own process``: litellm runs in a second process (``multiprocessing``, spawn) that takes each
  call's arguments over a pipe, pickled, and sends back the ``ModelResponse``, pickled. This asks
  how much of the interpreter lock a process of its own for the calls would take off the harness,
  and what it would cost.

For each it prints the wall time of the calls (the first call's start to the last answer) and the
CPU (user + system) of each process per call. Nothing here is on the harness's call path.

    python benchmarks/litellm_floor.py [--runs 300] [--calls 5] [--latency 1] [--repeats 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import pickle
import resource
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TOOL = {"type": "function", "function": {"name": "fs_list", "description": "List a folder.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
    "additionalProperties": False}}}
ENDPOINT = """
import sys, time
sys.path[:0] = [{root!r}, {benchmarks!r}]
from adaptive import SOLUTIONS
from tests.async_server import AsyncEndpoint
with AsyncEndpoint(SOLUTIONS, latency_s={latency}) as server:
    print(server.api_base, flush=True)
    sys.stdin.read()
"""


def arguments(api_base: str, turn: int) -> dict[str, Any]:
    """The ``turn``-th call of a run: the prompt, then a tool call and its result per earlier turn."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."},
                                      {"role": "user", "content": "List four folders."}]
    for i in range(turn):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "fs_list", "arguments": '{"path": "a"}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x.txt"})
    return {"model": "openai/ok", "api_base": api_base, "api_key": "local-no-key", "messages": messages,
            "tools": [TOOL], "max_retries": 0, "timeout": 300}


def harness_litellm(calls_at_once: int) -> tuple[Any, Any]:
    """litellm as the harness sets it up: the handler route, its pool sized for the calls; (litellm, client)."""
    from pytest_agentic.run.calls import connections, llm, route

    route.take(route.HTTP)
    litellm = llm.litellm_module()
    connections.size_pool(calls_at_once)
    return litellm, route.client_for("openai/ok", litellm)


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def call_process(conn: Connection, calls_at_once: int) -> None:
    """The second process: each request on a thread of its own, under a turn, its reply sent back pickled."""
    from pytest_agentic.run.calls import turns

    litellm, client = harness_litellm(calls_at_once)
    lock = threading.Lock()

    def handle(key: int, kwargs: dict[str, Any]) -> None:
        try:
            with turns.run_turn():
                out: tuple[str, Any] = ("ok", litellm.completion(client=client, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed back as text
            out = ("error", repr(exc))
        data = pickle.dumps((key, out))
        with lock:
            conn.send_bytes(data)

    while True:
        try:
            key, kwargs = pickle.loads(conn.recv_bytes())
        except EOFError:
            return
        if kwargs == "cpu":
            with lock:
                conn.send_bytes(pickle.dumps((key, ("ok", cpu()))))
            continue
        threading.Thread(target=handle, args=(key, kwargs), daemon=True).start()


class Remote:
    """Calls sent to ``call_process`` over a pipe; each caller waits for its own reply."""

    def __init__(self, calls_at_once: int) -> None:
        self.conn, child = mp.Pipe()
        self.process = mp.get_context("spawn").Process(target=call_process, args=(child, calls_at_once), daemon=True)
        self.process.start()
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                key, out = pickle.loads(self.conn.recv_bytes())
            except EOFError:
                return
            event, box = self._waiting.pop(key)
            box.append(out)
            event.set()

    def __call__(self, kwargs: Any) -> Any:
        event, box = threading.Event(), []
        with self._lock:
            self._next += 1
            self._waiting[self._next] = (event, box)
            self.conn.send_bytes(pickle.dumps((self._next, kwargs)))
        event.wait()
        kind, value = box[0]
        if kind != "ok":
            raise RuntimeError(value)
        return value

    def close(self) -> None:
        self.conn.close()
        self.process.join(5)


def measure(placement: str, api_base: str, runs: int, calls: int) -> dict[str, float]:
    from pytest_agentic.run.calls import turns

    remote: Remote | None = None
    if placement == "in this process":
        litellm, client = harness_litellm(runs)

        def call(kwargs: Any) -> Any:
            return litellm.completion(client=client, **kwargs)
    else:
        remote = Remote(runs)
        call = remote
    call(arguments(api_base, 0))  # the first call's imports, outside the figures
    before_remote = remote("cpu") if remote else 0.0
    errors: list[BaseException] = []

    def run() -> None:
        # In this process, a run's calls take turns as the harness's runs do; the other process takes them itself.
        with turns.run_turn() if remote is None else contextlib.nullcontext():
            for turn in range(calls):
                try:
                    call(arguments(api_base, turn))
                except Exception as exc:  # noqa: BLE001 - counted
                    errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(runs)]
    used, start = cpu(), time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall, here = time.monotonic() - start, cpu() - used
    there = remote("cpu") - before_remote if remote else 0.0
    if remote:
        remote.close()
    return {"wall": wall, "here": here, "there": there, "errors": len(errors)}


def one(placement: str, api_base: str, runs: int, calls: int) -> dict[str, float]:
    """``measure`` in a fresh interpreter: litellm's pool and switch belong to the process."""
    code = (f"import json, sys; sys.path[:0] = [{str(ROOT / 'benchmarks')!r}]; import litellm_floor; "
            f"print(json.dumps(litellm_floor.measure({placement!r}, {api_base!r}, {runs}, {calls})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    endpoint = subprocess.Popen([sys.executable, "-c", ENDPOINT.format(root=str(ROOT), benchmarks=str(ROOT / "benchmarks"),
                                                                      latency=args.latency)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert endpoint.stdout is not None
        api_base = endpoint.stdout.readline().strip()
        total = args.runs * args.calls
        print(f"cpus: {os.cpu_count()}; load {os.getloadavg()[0]:.1f}; {args.runs} runs x {args.calls} calls, "
              f"latency {args.latency:g} s (the calls alone cannot take less than {args.calls * args.latency:g} s)")
        print("| litellm runs | wall of the calls | CPU a call, the runs' process | CPU a call, the calls' process "
              "| errors |")
        print("|---|---|---|---|---|")
        for _ in range(args.repeats):
            for placement in ("in this process", "own process"):
                got = one(placement, api_base, args.runs, args.calls)
                there = f"{got['there'] / total * 1000:.2f} ms" if placement == "own process" else "-"
                print(f"| {placement} | {got['wall']:.1f} s | {got['here'] / total * 1000:.2f} ms | {there} | "
                      f"{got['errors']} |", flush=True)
    finally:
        if endpoint.stdin:
            endpoint.stdin.close()
        endpoint.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
