"""The live status line of a campaign on a terminal, and the plain progress lines when piped.

Starts a local OpenAI-compatible endpoint on 127.0.0.1 (tests/fault_server.py) that answers
every call after ``--latency`` seconds, writes the one-task project of benchmarks/concurrency.py
(one call per run) and runs a ``--runs`` campaign under a pseudo-terminal (python's ``pty``),
sequentially, under ``-n 2`` and under ``--agentic-concurrency 8``; then once with its output
piped. For each it prints the wall time, how many status lines were drawn (distinct texts), the
redraws per second, the most runs shown in flight, whether every count from 1 to the last was
shown, and whether the terminal, replayed by tests/vt.py, ends with pytest's lines intact and no
status line left over; piped, the plain lines and whether each is a line of its own.

    python benchmarks/terminal.py [--latency 1.0] [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from concurrency import project  # noqa: E402

from pytest_agentic.run.task import Final  # noqa: E402
from tests.fault_server import FaultServer  # noqa: E402
from tests.vt import render, run_in_pty  # noqa: E402

STATUS = re.compile(r"agentic: (\d+)(?:/(\d+))? judged, (\d+) in flight, (\d+) passed")
MODES = {"sequential": [], "-n 2": ["-n", "2"], "--agentic-concurrency 8": ["--agentic-concurrency", "8"]}


def on_terminal(folder: Path, runs: int, args: list[str]) -> str:
    out = f"--agentic-out={folder / 'out'}"
    start = time.monotonic()
    raw = run_in_pty(["-p", "no:cacheprovider", "-p", "no:randomly", "--runs", str(runs), out, *args], folder)
    wall = time.monotonic() - start
    drawn = [m for m in re.finditer(r"[\r\n]" + STATUS.pattern, raw)]
    texts = {m.group() for m in drawn}
    judged = [int(m.group(1)) for m in drawn]
    flight = max((int(m.group(3)) for m in drawn), default=0)
    screen = render(raw)
    clean = not any("judged," in line for line in screen)
    dots = any(re.fullmatch(rf"(test_say_ok\.py )?\.{{{runs}}}\s+\[100%\]", line) for line in screen)
    return (f"| {wall:.1f} s | {len(texts)} | {len(drawn) / wall:.1f} | {flight} | "
            f"{'yes' if set(range(1, runs + 1)) <= set(judged) and judged == sorted(judged) else 'NO'} | "
            f"{'yes' if clean and dots else 'NO'} |")


def piped(folder: Path, runs: int) -> str:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "--runs", str(runs),
           f"--agentic-out={folder / 'out-piped'}"]
    start = time.monotonic()
    text = subprocess.run(cmd, cwd=folder, capture_output=True, text=True).stdout
    wall = time.monotonic() - start
    lines = [line for line in text.splitlines() if "judged," in line]
    own = all(STATUS.match(line) for line in lines) and "\x1b" not in text and "\r" not in text
    return f"piped: {wall:.1f} s, {len(lines)} plain lines, each a line of its own: {'yes' if own else 'NO'}; " + (
        f"first {lines[0]!r}, last {lines[-1]!r}" if lines else "none")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}; 1-minute load average at start: {os.getloadavg()[0]:.2f}; endpoint latency "
          f"{args.latency:g} s, one call per run; {args.runs} runs; a pseudo-terminal 120 columns wide")
    with FaultServer({"Say ok.": [Final("ok")]}, latency_s=args.latency) as server:
        folder = project(server.api_base)
        print("| how | wall | status lines drawn | redraws per second | most in flight shown | "
              "every count shown, in order | screen clean at the end |")
        print("|---|---|---|---|---|---|---|")
        for label, mode in MODES.items():
            print(f"| `pytest {label}` " + on_terminal(folder, args.runs, mode), flush=True)
        print(piped(folder, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
