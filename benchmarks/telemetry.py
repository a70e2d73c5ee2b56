"""What OpenTelemetry traces and a litellm callback cost a campaign.

Runs the oracle on the ten tasks (``--runs`` each, 30 runs by default) as a subprocess, the same
campaign in each of these ways, ``--repeats`` times in turn:

(off)       no OTEL_* variable and no callback (the default);
(traces)    OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver on 127.0.0.1
            (tests/otlp_receiver.py, decoding every span);
(callback)  a litellm ``CustomLogger`` that counts calls, named in models.yaml's ``callbacks:``.

and prints, per way, the median wall seconds and CPU seconds (user+sys of the pytest process and its
children), and the spans or callback calls received. The machine may be shared: CPU seconds are the
figure to compare, wall is noisy.

    python benchmarks/telemetry.py [--runs 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.otlp_receiver import OtlpReceiver  # noqa: E402

COUNTER = '''
import os
from litellm.integrations.custom_logger import CustomLogger

class Counter(CustomLogger):
    def log_success_event(self, kwargs, response_obj, start_time, end_time):
        with open(os.environ["COUNTER_FILE"], "a") as fh:
            fh.write("x\\n")
'''


def campaign(folder: Path, runs: int, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one campaign."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "tasks", "-q", "-p", "no:randomly", "--model", "oracle",
                           "--runs", str(runs), "--agentic-out", "out"], cwd=folder, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"campaign failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    figures: dict[str, list[tuple[float, float]]] = {"off": [], "traces": [], "callback": []}
    received: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="agentic-telemetry-") as tmp, OtlpReceiver() as receiver:
        folder = Path(tmp)
        shutil.copytree(ROOT / "tasks", folder / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
        models = (ROOT / "models.yaml").read_text()
        (folder / "counter.py").write_text(COUNTER)
        counter = folder / "calls.txt"
        for _ in range(args.repeats):
            for way in figures:
                (folder / "models.yaml").write_text(models + ("\ncallbacks: [counter:Counter]\n"
                                                              if way == "callback" else ""))
                env = dict(base, COUNTER_FILE=str(counter))
                if way == "traces":
                    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
                spans, calls = len(receiver.spans), counter.read_text().count("x") if counter.exists() else 0
                figures[way].append(campaign(folder, args.runs, env))
                received[way] = (len(receiver.spans) - spans) if way == "traces" else (
                    counter.read_text().count("x") - calls if way == "callback" else 0)
    runs = 10 * args.runs
    print(f"oracle, {runs} runs, median of {args.repeats} (CPU: user+sys of pytest and its children)")
    off_cpu = statistics.median(c for _, c in figures["off"])
    for way, values in figures.items():
        wall, cpu = statistics.median(w for w, _ in values), statistics.median(c for _, c in values)
        what = {"off": "", "traces": f"; {received[way]} spans received",
                "callback": f"; {received[way]} calls heard"}[way]
        print(f"  {way:9s} wall {wall:6.2f}s  CPU {cpu:6.2f}s  ({cpu / off_cpu:4.2f}x off){what}")


if __name__ == "__main__":
    main()
