"""Where a run's CPU goes: py-spy samples a session and each sample is put in the harness's phase that holds it.

Starts the asyncio endpoint (tests/async_server.py) with ``--latency``, writes the one-call (or
five-call) project of benchmarks/scaling.py, and runs ``pytest --runs N`` under
``py-spy record --gil --subprocesses --format raw``: ``--gil`` keeps only the samples of the thread
that holds the interpreter lock, so the samples add up to the Python work of the process (its
system calls and lock waits are not in them; ``benchmarks/scaling.py`` reports user + system CPU).
Each sample goes to the first phase in ``PHASES`` whose marker is one of its frames. Prints
seconds and milliseconds a run per phase, and keeps the raw samples (``--raw``) for a flame graph.

With hundreds of threads waiting (an endpoint with latency), the samples need not be where the
CPU is: at 300 x 5 and 1 s this put 12.3 s in the session's end, which takes 0.6 s. There,
``benchmarks/thread_cpu.py`` (each thread's own CPU clock, counted) is the one to read.

py-spy is not a dependency: ``pip install py-spy`` in the environment that runs this.

    python benchmarks/cpu_profile.py [--runs 1000] [--calls 1] [--latency 0] [--raw profile.txt]
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from adaptive import SOLUTIONS, five_call_project  # noqa: E402
from concurrency import project  # noqa: E402

from tests.async_server import AsyncEndpoint  # noqa: E402

#: (phase, a frame's text that puts a sample in it), checked in order: the first that matches names the sample.
PHASES = [  # (category, substring in the stack), checked in order; the first match names the sample
 ("session end", "pytest_sessionfinish"), ("session end", "pytest_terminal_summary"), ("session end", "pytest_unconfigure"),
 ("session end", "_shutdown"), ("session end", "wait_for_thread_shutdown"),
 ("start-up (import, collect)", "pytest_collection"), ("start-up (import, collect)", "_preparse"),
 ("start-up (import, collect)", "_import_quietly"), ("start-up (import, collect)", "pytest_configure"),
 ("start-up (import, collect)", "pytest_sessionstart"), ("start-up (import, collect)", "wait_for_preload"),
 ("start-up (import, collect)", "install_limiters"), ("start-up (import, collect)", "import_plugin"),
 ("model call (litellm)", "completion ("), ("model call (litellm)", "_complete_within"),
 ("model call (litellm logging thread)", "concurrent/futures/thread.py"),
 ("tools", "tools.py"), ("workspace", "populate"), ("workspace", "workspace_root"), ("workspace", "Agent.__init__"),
 ("agent loop", "agent.py"), ("pool", "pool.py"),
 ("record and transcript", "outcome.py"), ("record and transcript", "writer.py"), ("record and transcript", "campaign/"),
 ("terminal", "terminal.py"),
 ("checker", "test_say_ok"), ("checker", "test_five_calls"),
 ("fixture", "fixture.py"), ("prefetch top-up", "scheduler.py"),
 ("pytest item protocol", "pytest_runtestloop"),
 ("start-up (import, collect)", "<module> ("),
]


def phase_of(stack: str) -> str:
    return next((phase for phase, marker in PHASES if marker in stack), "other")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=1, choices=(1, 5))
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--rate", type=int, default=100, help="samples a second")
    ap.add_argument("--raw", type=Path, default=None)
    args = ap.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    raw = args.raw or Path(tempfile.mkdtemp(prefix="agentic-spy-")) / "profile.txt"
    load = os.getloadavg()[0]
    with AsyncEndpoint(SOLUTIONS, latency_s=args.latency) as server:
        folder = project(server.api_base) if args.calls == 1 else five_call_project(server.api_base)
        out = tempfile.mkdtemp(dir=folder)
        start = time.monotonic()
        done = subprocess.run([spy, "record", "--gil", "--subprocesses", "-r", str(args.rate), "--format", "raw",
                               "-o", str(raw), "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-p", "no:randomly", "--runs", str(args.runs), f"--agentic-out={out}"],
                              cwd=folder, capture_output=True, text=True)
        wall = time.monotonic() - start
    shutil.rmtree(folder, ignore_errors=True)
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:])
        return 1
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        counts[phase_of(stack)] += int(n)
    total = sum(counts.values())
    print(f"{args.runs} runs x {args.calls} calls, latency {args.latency:g} s: wall {wall:.1f} s under py-spy, "
          f"load {load:.1f}; {total} samples at {args.rate}/s holding the GIL; raw samples: {raw}")
    print("| phase | seconds | ms a run | share |")
    print("|---|---|---|---|")
    for phase, n in counts.most_common():
        print(f"| {phase} | {n / args.rate:.2f} | {1000 * n / args.rate / args.runs:.2f} | {100 * n / total:.1f}% |")
    print(f"| all | {total / args.rate:.2f} | {1000 * total / args.rate / args.runs:.2f} | 100% |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
