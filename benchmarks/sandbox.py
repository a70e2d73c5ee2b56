"""What the sandbox costs: per tool call, per probe, and on the oracle campaign (same run, both ways).

Times, interleaved so that machine load hits both alike:
- one ``run_tests`` call (pytest on a small suite) in the bubblewrap box and unconfined;
- one checker probe (``run.probe.call_all``: ``python -I -S`` calling a function) both ways;
- ``pytest --model oracle`` (the default campaign's 30 runs) with ``--agentic-sandbox=bubblewrap``
  and ``--agentic-sandbox=none``.
Prints medians and the ratios.

    python benchmarks/sandbox.py [--calls 20] [--campaigns 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_agentic.run import probe, sandbox  # noqa: E402
from pytest_agentic.run.tools import TOOLS, Workspace  # noqa: E402

SUITE = {
    "pytest.ini": "[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def per_call(calls: int, ws: Workspace) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {"run_tests": {}, "probe": {}}
    for _ in range(calls):
        for choice in ("bubblewrap", "none"):
            sandbox.configure(choice)  # type: ignore[arg-type]
            out["run_tests"].setdefault(choice, []).append(timed(lambda: TOOLS["run_tests"].call(ws, {})))
            out["probe"].setdefault(choice, []).append(
                timed(lambda: probe.call_all(ws.root, [("calc", "add", [2, 3])])))
    sandbox.configure("auto")
    return out


def campaign(choice: str, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "--model", "oracle", "-q", "-p", "no:cacheprovider",
                           f"--agentic-sandbox={choice}", f"--agentic-out={out}"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"the oracle campaign failed with --agentic-sandbox={choice}:\n{proc.stdout[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--campaigns", type=int, default=2)
    args = parser.parse_args()
    box = sandbox.available()
    if isinstance(box, str):
        raise SystemExit(box)
    print(f"bubblewrap {box.version}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="agentic-sandbox-bench-") as tmp:
        ws = Workspace(Path(tmp) / "ws")
        ws.populate(SUITE)
        for name, times in per_call(args.calls, ws).items():
            boxed, bare = statistics.median(times["bubblewrap"]), statistics.median(times["none"])
            print(f"{name:10s} per call: bubblewrap {1000 * boxed:7.1f} ms, unconfined {1000 * bare:7.1f} ms, "
                  f"+{1000 * (boxed - bare):.1f} ms ({boxed / bare:.2f}x), median of {args.calls}")
        walls: dict[str, list[float]] = {"bubblewrap": [], "none": []}
        for i in range(args.campaigns):
            for choice in ("bubblewrap", "none"):
                walls[choice].append(campaign(choice, Path(tmp) / f"out-{choice}-{i}"))
    boxed, bare = statistics.median(walls["bubblewrap"]), statistics.median(walls["none"])
    print(f"oracle campaign (30 runs) wall time: bubblewrap {boxed:.1f} s, unconfined {bare:.1f} s "
          f"({boxed / bare:.2f}x), median of {args.campaigns}")


if __name__ == "__main__":
    main()
