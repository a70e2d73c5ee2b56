"""Concurrency, -n and start-up cost against a local endpoint with a fixed latency.

Starts a local OpenAI-compatible endpoint on 127.0.0.1 (tests/fault_server.py) that answers
every call after ``--latency`` seconds, writes a one-task project whose runs make one call
each, and runs pytest on it in each mode: sequential, ``-n 8`` and ``--agentic-concurrency``
8, 30 and 100, for each campaign size. Prints wall time, speed-up over sequential, the most
calls the endpoint saw in flight, and the peak resident memory of the whole process tree
(pytest, its xdist workers), sampled every 0.1 s from /proc. Checks every mode gives the
same verdicts as the sequential one.

It also measures the fixed cost of a session, process start to the first model call, with
litellm's import overlapped with collection and without (``AGENTIC_PRELOAD=0``), and the
per-run overhead with a scripted model (no endpoint: harness cost alone).

    python benchmarks/concurrency.py [--latency 1.0] [--runs 30,300] [--modes seq,n8,c8,c30,c100]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from default_campaign import tree_rss_mb  # noqa: E402

from pytest_agentic.run.task import Final  # noqa: E402
from tests.fault_server import FaultServer  # noqa: E402

TASK = '''
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={}, tools=("fs_list",), reference=[Final("ok")])

@task("say_ok_1", "say_ok", build=build)
def test_say_ok(agent):
    assert agent.run().final_answer == "ok"
'''
MODES = {
    "seq": [],
    "n8": ["-n", "8"],
    "c8": ["--agentic-concurrency", "8"],
    "c30": ["--agentic-concurrency", "30"],
    "c100": ["--agentic-concurrency", "100"],
}


def project(api_base: str | None) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="agentic-conc-bench-"))
    if api_base is None:
        entry = {"model": "agentic-scripted/oracle"}
    else:
        entry = {"model": "openai/ok", "api_base": api_base, "price": {"input_per_token": 0, "output_per_token": 0},
                 "limits": {"max_retries": 0}}
    (folder / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": entry}}))
    (folder / "test_say_ok.py").write_text(TASK)
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


def session(folder: Path, runs: int, args: list[str], server: FaultServer | None = None,
            env: dict[str, str] | None = None) -> dict:
    out = Path(tempfile.mkdtemp(prefix="out-", dir=folder))
    # pytest's cache on, as in a user's project: a session remembers what litellm said of a clean entry, and
    # the next one's xdist controller is spared litellm's import (``run.calls.startcheck.check_entry_remembered``).
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--runs", str(runs),
           f"--agentic-out={out}", *args]
    calls_before = server.arrived if server else 0
    if server:
        server.peak = 0
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    # As a user's shell runs it: bytecode caches on (pytest's assertion-rewrite cache among them).
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    log = (out / "pytest.log").open("w")  # a file, not a pipe: a full pipe would stall pytest
    proc = subprocess.Popen(cmd, cwd=folder, stdout=log, stderr=subprocess.STDOUT, env={**base, **(env or {})})
    peak, first_call = 0.0, None
    #: Calls the endpoint holds, the most in each second of the session (the in-flight curve).
    curve: list[int] = []
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        if first_call is None and server and server.arrived > calls_before:
            first_call = time.monotonic() - start
        if server is not None and hasattr(server, "in_flight"):
            second = int(time.monotonic() - start)
            curve += [0] * (second + 1 - len(curve))
            curve[second] = max(curve[second], server.in_flight)
        time.sleep(0.01 if first_call is None and server else 0.05)
    wall = time.monotonic() - start
    ended = time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the session's process tree, once reaped
    cpu = (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)
    log.close()
    records = [json.loads(line) for f in out.iterdir() if f.is_dir()
               for line in (f / "runs.jsonl").read_text().splitlines()]
    verdicts = sorted((r["task"], r["model"], r["run"], r["passed"], r["failure_mode"]) for r in records)
    last = getattr(server, "last_answer", None)
    return {"wall": wall, "peak_mb": peak, "verdicts": verdicts, "first_call": first_call,
            "in_flight": server.peak if server else None, "rc": proc.returncode, "cpu_s": cpu, "out": out,
            "curve": curve,
            "end_s": ended - last if last is not None and last > start else None}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--runs", default="30,300")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--start-repeats", type=int, default=3)
    ap.add_argument("--scripted-runs", type=int, default=300)
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}; 1-minute load average at start: {os.getloadavg()[0]:.2f}; "
          f"endpoint latency {args.latency:g} s, one call per run")
    ok = True
    with FaultServer({"Say ok.": [Final("ok")]}, latency_s=args.latency) as server:
        folder = project(server.api_base)
        # -- the fixed cost of a session ------------------------------------------
        for preload in ("1", "0"):
            firsts = [session(folder, 1, [], server, {"AGENTIC_PRELOAD": preload})["first_call"]
                      for _ in range(args.start_repeats)]
            how = "overlapped with collection" if preload == "1" else "at the first call"
            print(f"process start to first model call, litellm imported {how}: median "
                  f"{statistics.median(firsts):.2f} s (of {', '.join(f'{f:.2f}' for f in firsts)})")
        # -- the modes ------------------------------------------------------------
        for runs in [int(n) for n in args.runs.split(",")]:
            print(f"\n{runs} runs:")
            print("| how | wall | speed-up | calls in flight (most) | peak memory, process tree | same verdicts |")
            print("|---|---|---|---|---|---|")
            baseline = None
            for mode in args.modes.split(","):
                result = session(folder, runs, MODES[mode], server)
                if baseline is None:
                    baseline = result
                same = result["verdicts"] == baseline["verdicts"] and len(result["verdicts"]) == runs
                ok &= same
                label = "pytest " + " ".join(MODES[mode]) if MODES[mode] else "pytest (sequential)"
                print(f"| `{label}` | {result['wall']:.1f} s | {baseline['wall'] / result['wall']:.1f}x | "
                      f"{result['in_flight']} | {result['peak_mb']:.0f} MB | {'yes' if same else 'NO'} |",
                      flush=True)
    # -- per-run overhead, scripted model (no endpoint) ------------------------------
    scripted = project(None)
    one = statistics.median(session(scripted, 1, [])["wall"] for _ in range(args.start_repeats))
    many = session(scripted, args.scripted_runs, [])
    per_run = (many["wall"] - one) / (args.scripted_runs - 1)
    print(f"\nscripted model, sequential: {args.scripted_runs} runs in {many['wall']:.1f} s, one run in {one:.1f} s: "
          f"{per_run * 1000:.0f} ms per run beyond the first")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
