"""Measure report.html for a 300-run campaign: page size and time to write it.

Runs a real session (oracle and near-miss on the ten tasks, 3 runs each: 60 runs with real
transcripts), then widens it to 15 runs per task and model (300 runs, transcripts copied from
the real ones) and writes its report:

- warm: ``report.write_campaign`` in this process, as the controller does at session end
  (the campaign's own libraries, scipy among them, already imported); best and median of 5;
- cold: ``agentic-report DIR`` in a fresh process, imports included.

Prints the figures (the targets: under 5 MB, under 2 s); exits non-zero if a run is missing.

    python benchmarks/report.py [--runs-per-task 15]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def real_campaign(out: Path) -> Path:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "tasks", "-q", "-p", "no:randomly", "--model", "oracle",
                    "--model", "near-miss", "--runs", "3", "-n", "2", f"--agentic-out={out}"],
                   cwd=ROOT, capture_output=True, text=True)
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1, f"expected one campaign folder in {out}"
    print(f"session: 60 runs in {time.perf_counter() - started:.1f} s -> {folders[0].name}")
    return folders[0]


def widen(source: Path, target: Path, runs_per_task: int) -> int:
    """A campaign with ``runs_per_task`` runs per (model, task), each a copy of a real run's record and transcript."""
    records = [json.loads(line) for line in (source / "runs.jsonl").read_text().splitlines()]
    target.mkdir()
    manifest = json.loads((source / "campaign.json").read_text())
    manifest.update(campaign_id=target.name, runs=runs_per_task)
    (target / "campaign.json").write_text(json.dumps(manifest))
    out = []
    for r in records:
        if r["run"] != 1:
            continue
        siblings = [s for s in records if (s["model"], s["task"]) == (r["model"], r["task"])]
        for n in range(1, runs_per_task + 1):
            original = siblings[(n - 1) % len(siblings)]
            new = {**original, "run": n, "transcript": original["transcript"].replace(
                f"-run{original['run']}.json", f"-run{n}.json")}
            dest = target / new["transcript"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / original["transcript"], dest)
            out.append(new)
    (target / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
    return len(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-per-task", type=int, default=15)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pytest_agentic.campaign import stored, tables
    from pytest_agentic.report import write_campaign

    with tempfile.TemporaryDirectory(prefix="agentic-report-bench-") as tmp:
        real = real_campaign(Path(tmp) / "out")
        wide = Path(tmp) / "wide"
        n = widen(real, wide, args.runs_per_task)
        tables.pass_rate_by_task(stored.load(wide).records, 1)  # what the session has imported by its end
        times = []
        for _ in range(5):
            started = time.perf_counter()
            page = write_campaign(wide)
            times.append(time.perf_counter() - started)
        html = page.read_text(encoding="utf-8")
        shown = html.count('<details class="run ')
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest_agentic.report", str(wide)], check=True, capture_output=True)
        cold = time.perf_counter() - started
        transcripts = sum(p.stat().st_size for p in (wide / "transcripts").rglob("*.json"))
        print(f"campaign: {n} runs ({transcripts / 1e6:.2f} MB of transcript JSON)")
        print(f"report.html: {page.stat().st_size / 1e6:.2f} MB, {shown} runs shown (target < 5 MB)")
        print(f"write, warm (as at session end): best {min(times):.3f} s, median {statistics.median(times):.3f} s "
              "(target < 2 s)")
        print(f"write, cold (agentic-report in a fresh process, imports included): {cold:.2f} s")
        return 0 if shown == n else 1


if __name__ == "__main__":
    raise SystemExit(main())
