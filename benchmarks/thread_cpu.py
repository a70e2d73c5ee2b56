"""Where a session's CPU goes, read from each thread's own CPU clock instead of sampled.

``benchmarks/cpu_profile.py`` samples the thread that holds the interpreter lock; with hundreds of
threads waiting, py-spy put 4.9 to 12.3 s of a 300 x 5 session in the session's end, which hooks
around ``pytest_sessionfinish`` measure at 0.6 s. This script counts instead: it runs the session of
``benchmarks/scaling.py`` (one-call or five-call runs against the asyncio endpoint, ``--latency``)
with a small plugin (``-p``, written to a temporary folder on ``PYTHONPATH``) that

- adds up ``time.thread_time()`` (CPU of the calling thread alone) inside a few functions on the call
  path: litellm's ``completion`` (on the run's call thread), its success handler (its logging thread),
  the pool's pass over its connections (``run.calls.connections.linear_pass``), the agent loop on the
  run's own thread (which excludes its calls' threads) and the tools;
- at the end, reads the CPU of every thread that ended (by name: ``agentic-model-call``, ``agentic-run``,
  ``litellm-logging`` ...) and of those still alive (``/proc/self/task``), and the process's total.

The clocks cost a little themselves (two reads per wrapped call), and the plugin imports litellm in
``pytest_configure`` to wrap it, so litellm's import counts in the main thread here instead of the
preload thread. Prints a table of seconds and milliseconds a run.

    python benchmarks/thread_cpu.py [--runs 3000] [--calls 1] [--latency 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from adaptive import SOLUTIONS, five_call_project  # noqa: E402
from concurrency import project  # noqa: E402

from tests.async_server import AsyncEndpoint  # noqa: E402

PLUGIN = r'''
import atexit, collections, json, os, re, threading, time

FUNCTIONS = collections.defaultdict(lambda: [0, 0.0])
THREADS = collections.Counter()
_lock = threading.Lock()


def _wrap(owner, name, label):
    inner = getattr(owner, name)

    def timed(*args, **kwargs):
        start = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent = time.thread_time() - start
            with _lock:
                FUNCTIONS[label][0] += 1
                FUNCTIONS[label][1] += spent

    setattr(owner, name, timed)


def _kind(name):
    return re.sub(r"[-_]?\d+$", "", name or "?")


_run = threading.Thread.run


def _counted_run(self):
    try:
        _run(self)
    finally:
        with _lock:
            THREADS[_kind(self.name)] += time.thread_time()


threading.Thread.run = _counted_run


def pytest_configure(config):
    from pytest_agentic.run import agent, tools
    from pytest_agentic.run.calls import connections, llm

    litellm = llm.litellm_module()
    from litellm.litellm_core_utils import litellm_logging

    _wrap(litellm, "completion", "litellm.completion (the call thread)")
    _wrap(litellm_logging.Logging, "success_handler", "litellm's success handler (its logging thread)")
    _wrap(connections, "linear_pass", "the connection pool's pass")
    _wrap(agent, "run_agent", "the agent loop (the run's thread, its calls' threads apart)")
    _wrap(agent.ToolRunner, "_call", "tool calls (the run's side)")


@atexit.register
def _report():
    names = {t.native_id: _kind(t.name) for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    alive = collections.Counter()
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        alive[names.get(int(tid), "(not a Python thread)")] += (int(fields[11]) + int(fields[12])) / tick
    with open(os.environ["AGENTIC_THREAD_CPU_OUT"], "w") as f:
        json.dump({"process": time.process_time(), "functions": dict(FUNCTIONS), "ended": dict(THREADS),
                   "alive": dict(alive)}, f)
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3000)
    ap.add_argument("--calls", type=int, default=1, choices=(1, 5))
    ap.add_argument("--latency", type=float, default=1.0)
    args = ap.parse_args()
    plugin_dir = Path(tempfile.mkdtemp(prefix="agentic-thread-cpu-"))
    (plugin_dir / "agentic_thread_cpu.py").write_text(PLUGIN)
    figures = plugin_dir / "figures.json"
    with AsyncEndpoint(SOLUTIONS, latency_s=args.latency) as server:
        folder = project(server.api_base) if args.calls == 1 else five_call_project(server.api_base)
        out = tempfile.mkdtemp(dir=folder)
        env = {**os.environ, "PYTHONPATH": str(plugin_dir), "AGENTIC_THREAD_CPU_OUT": str(figures)}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "agentic_thread_cpu",
                               "--runs", str(args.runs), f"--agentic-out={out}"],
                              cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not figures.exists():
        print(done.stdout[-2000:], done.stderr[-2000:])
        return 1
    data = json.loads(figures.read_text())
    runs = args.runs
    print(f"{runs} runs x {args.calls} calls, latency {args.latency:g} s: {data['process']:.2f} s of CPU, "
          f"{1000 * data['process'] / runs:.1f} ms a run")
    print("| where | calls | seconds | ms a run | ms a call |")
    print("|---|---|---|---|---|")
    for label, (count, seconds) in sorted(data["functions"].items(), key=lambda kv: -kv[1][1]):
        print(f"| {label} | {count} | {seconds:.2f} | {1000 * seconds / runs:.2f} | {1000 * seconds / max(count, 1):.2f} |")
    print("\n| thread | seconds | ms a run |")
    print("|---|---|---|")
    threads = {**{f"{k} (ended)": v for k, v in data["ended"].items()},
               **{f"{k} (alive at exit)": v for k, v in data["alive"].items()}}
    for name, seconds in sorted(threads.items(), key=lambda kv: -kv[1]):
        if seconds >= 0.01:
            print(f"| {name} | {seconds:.2f} | {1000 * seconds / runs:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
