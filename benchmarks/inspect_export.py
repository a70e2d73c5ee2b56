"""Measure ``agentic-export inspect`` on a 3000-run campaign: time to write its Inspect AI logs, and their size.

Runs a real session (oracle and near-miss on the ten tasks, 3 runs each: 60 runs with real
transcripts), widens it to 150 runs per task and model (3000 runs, transcripts copied from the
real ones, as ``benchmarks/report.py`` does) and exports it:

- cold: ``agentic-export inspect DIR -o OUT`` in a fresh process, imports included: wall seconds,
  and CPU seconds (user + sys of the child), the steadier figure on a loaded machine;
- warm: ``report.inspect_log.export`` in this process, best and median of 3.

With ``--inspect-python PY`` (a Python with Inspect AI installed, e.g. ``.inspect-venv/bin/python``)
it also reads the logs back with ``inspect_ai.log.read_eval_log`` and checks every run is a sample.
Prints the figures (the target: seconds, not minutes); exits non-zero if a run is missing.

    python benchmarks/inspect_export.py [--runs-per-task 150] [--inspect-python .inspect-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import real_campaign, widen  # noqa: E402  (benchmarks/report.py: the same widened campaign)

READ_BACK = ("import sys, time; from inspect_ai.log import list_eval_logs, read_eval_log\n"
             "t = time.perf_counter(); logs = [read_eval_log(i) for i in list_eval_logs(sys.argv[1])]\n"
             "print(sum(len(l.samples) for l in logs), time.perf_counter() - t)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-per-task", type=int, default=150)
    parser.add_argument("--inspect-python", type=Path, help="a Python with inspect_ai, to read the logs back")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pytest_agentic.campaign import stored
    from pytest_agentic.report.inspect_log import export

    with tempfile.TemporaryDirectory(prefix="agentic-inspect-bench-") as tmp:
        real = real_campaign(Path(tmp) / "out")
        wide = Path(tmp) / "wide"
        n = widen(real, wide, args.runs_per_task)
        transcripts = sum(p.stat().st_size for p in (wide / "transcripts").rglob("*.json"))
        print(f"campaign: {n} runs ({transcripts / 1e6:.2f} MB of transcript JSON)")

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from pytest_agentic.report.cli import export_main; "
                        f"raise SystemExit(export_main(['inspect', {str(wide)!r}, '-o', {str(Path(tmp) / 'cold')!r}]))"],
                       check=True, capture_output=True, cwd=ROOT)
        cold = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        times, cpus = [], []
        for i in range(3):
            started, cpu_started = time.perf_counter(), time.process_time()
            written = export(stored.load(wide), Path(tmp) / f"warm{i}")
            times.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu_started)
        size = sum(p.stat().st_size for p in written)
        print(f"logs: {len(written)} .eval files, {size / 1e6:.2f} MB")
        print(f"export, cold (agentic-export in a fresh process, imports included): {cold:.2f} s wall, "
              f"{cpu:.2f} s CPU (user+sys)")
        print(f"export, warm (in process): best {min(times):.2f} s, median {statistics.median(times):.2f} s wall; "
              f"best {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s CPU")
        samples = n
        if args.inspect_python:
            done = subprocess.run([str(args.inspect_python), "-c", READ_BACK, str(Path(tmp) / "cold")],
                                  check=True, capture_output=True, text=True)
            samples, seconds = done.stdout.split()
            samples = int(samples)
            print(f"inspect_ai.log.read_eval_log: {samples} samples read back in {float(seconds):.2f} s")
        return 0 if samples == n and len(stored.load(wide).records) == n else 1


if __name__ == "__main__":
    raise SystemExit(main())
