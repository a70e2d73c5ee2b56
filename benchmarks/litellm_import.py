"""CPU of litellm's import and first call, as the harness's preload makes them, with the collector on and paused.

Every process that calls a model imports litellm (seconds) and warms its first call before the first
run starts (``run.calls.llm.preload_in_background``): under ``-n W`` each worker does it at once, on
the same cores. Each variant runs in ``--repeats`` fresh interpreters and prints the median CPU
(user + system) and wall of:

- ``import``: ``import litellm`` alone, collector on (the dependency by itself);
- ``import, paused``: the same under ``run.gcpause.paused``;
- ``preload``: the harness's preload (``run.calls.llm._import_quietly``: import, settings, the scripted
  provider, the warm-up call on litellm's mock transport), as the plugin runs it;
- ``preload, collector on``: the same with ``gcpause.paused`` made a no-op (as before the pause).

    python benchmarks/litellm_import.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, os, sys, time
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
sys.path.insert(0, {root!r})
variant = {variant!r}
from pytest_agentic.run import gcpause
if variant.startswith("preload"):
    from pytest_agentic.run.calls import llm
if variant == "preload, collector on":
    import contextlib
    gcpause.paused = contextlib.nullcontext
c0, t0 = time.process_time(), time.perf_counter()
if variant == "import":
    import litellm
elif variant == "import, paused":
    with gcpause.paused():
        import litellm
else:
    llm._import_quietly(warm_up=True)
    assert "litellm" in sys.modules
print(json.dumps({{"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0}}))
"""


def measure(variant: str, repeats: int) -> tuple[float, float]:
    cpus, walls = [], []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", PROBE.format(root=str(ROOT), variant=variant)],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        cpus.append(figures["cpu"])
        walls.append(figures["wall"])
    return statistics.median(cpus), statistics.median(walls)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}; 1-minute load average: {os.getloadavg()[0]:.1f}; "
          f"median of {args.repeats} fresh interpreters")
    print("| what | CPU | wall |\n|---|---|---|")
    for variant in ("import", "import, paused", "preload, collector on", "preload"):
        cpu, wall = measure(variant, args.repeats)
        print(f"| {variant} | {cpu:.2f} s | {wall:.2f} s |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
