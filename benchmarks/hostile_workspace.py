"""Hostile workspaces and outer limits, measured: issue 25's scenario and SIGTERM-to-exit.

(a) The scenario: a model served by a local OpenAI-compatible endpoint (tests/fault_server.py)
    writes, on task_01 and task_02, a test module whose import plants a named pipe, a link to a host
    file and a 4 GiB sparse file, runs the tests in the box, then reads each with ``fs_read``. The
    whole session's wall time (process start to exit) is printed against the runs' limits
    (``max_seconds`` of each run), sequential, adaptive default and ``-n 2``, with every run's mode.
(b) SIGTERM mid-campaign: a scripted campaign of six runs whose third and later tests stall; once two
    runs are recorded, SIGTERM goes to the process group (a CI or Slurm time limit) or to the pytest
    process alone (``kill PID``); printed: seconds from the signal to the exit, the exit status,
    runs kept, and whether summary.md and report.html say INCOMPLETE and how to resume.

    python benchmarks/hostile_workspace.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.fault_server import FaultServer  # noqa: E402
from tests.test_hostile_workspaces import LIMITS, STALLING_TASK, hostile_solutions  # noqa: E402


def scenario(mode: list[str]) -> tuple[float, list[str]]:
    with tempfile.TemporaryDirectory() as tmp, FaultServer(hostile_solutions()) as server:
        folder = Path(tmp)
        shutil.copytree(ROOT / "tasks", folder / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
        entry = {"model": "openai/hostile-workspace", "api_base": server.api_base, "limits": LIMITS,
                 "price": {"input_per_token": 0, "output_per_token": 0}}
        (folder / "models.yaml").write_text(json.dumps({"default": "hostile", "models": {"hostile": entry}}))
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "pytest", "tasks", "-m", "task_01 or task_02", "--runs", "1",
                        "--agentic-out", "out", "-p", "no:cacheprovider", "-p", "no:randomly", *mode], cwd=folder, capture_output=True,
                       timeout=LIMITS["max_seconds"] * 4)
        seconds = time.monotonic() - started
        (campaign,) = (folder / "out").iterdir()
        modes = [f"{r['task']}:{r['failure_mode']}" for r in map(json.loads, (campaign / "runs.jsonl").open())]
    return seconds, sorted(modes)


def sigterm(mode: list[str], group: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "models.yaml").write_text("default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
        (folder / "test_stall.py").write_text(STALLING_TASK)
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "--runs", "6", "--agentic-out", "out", *mode],
                                cwd=folder, env={**os.environ, "AGENTIC_TEST_STALL": "1"},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = list(folder.glob("out/*/runs.jsonl"))
            if found and len(found[0].read_text().splitlines()) >= 2:
                break
            time.sleep(0.1)
        time.sleep(1.0)
        sent = time.monotonic()
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=120)
        seconds = time.monotonic() - sent
        (campaign,) = (folder / "out").iterdir()
        summary = (campaign / "summary.md").read_text()
        page = (campaign / "report.html").read_text()
        return {"seconds": round(seconds, 2), "exit": status,
                "runs_kept": len((campaign / "runs.jsonl").read_text().splitlines()),
                "summary_incomplete": "INCOMPLETE" in summary and "--agentic-resume" in summary,
                "page_incomplete": "INCOMPLETE" in page and "--agentic-resume" in page}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(f"(a) the scenario, tasks 01 and 02, one run each; each run's max_seconds is {LIMITS['max_seconds']} s, "
          f"tool_timeout_s {LIMITS['tool_timeout_s']} s")
    for name, mode in (("sequential", ["--agentic-concurrency", "1"]), ("adaptive default", []),
                       ("-n 2", ["-n", "2"])):
        walls, modes = [], []
        for _ in range(args.repeats):
            seconds, modes = scenario(mode)
            walls.append(seconds)
        print(f"  {name:17} wall {statistics.median(walls):6.1f} s (median of {len(walls)}; "
              f"{min(walls):.1f}-{max(walls):.1f}); runs: {', '.join(modes)}")
    print("(b) SIGTERM once two of six runs are recorded (the rest stall in their tests)")
    for name, mode in (("plain", ["-p", "no:xdist"]), ("-n 2", ["-n", "2"])):
        for group in (True, False):
            results = [sigterm(mode, group) for _ in range(args.repeats)]
            seconds = [float(r["seconds"]) for r in results]  # type: ignore[arg-type]
            print(f"  {name:6} to the {'process group' if group else 'pytest process'}: SIGTERM to exit "
                  f"{statistics.median(seconds):.1f} s (median of {len(seconds)}; {min(seconds):.1f}-"
                  f"{max(seconds):.1f}); {results[-1]}")


if __name__ == "__main__":
    main()
