"""Measure the default campaign (``pytest`` with no option): wall time and peak memory.

Runs the README's main job in a subprocess and samples, every 0.2 s, the resident
memory of the whole process tree (pytest, xdist workers if any, the model server).
Prints the figures; exits non-zero if the campaign did not record every run.

    python benchmarks/default_campaign.py [extra pytest args, e.g. -n 2]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, in MB (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ppid, pages = int(fields[1]), int(fields[21])
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = pages
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> int:
    out = Path(tempfile.mkdtemp(prefix="agentic-bench-"))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--agentic-out={out}", *sys.argv[1:]]
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.2)
    wall = time.monotonic() - start
    tail = proc.stdout.read().decode(errors="replace").strip().splitlines()[-1:] if proc.stdout else []
    folders = list(out.iterdir())
    runs = [json.loads(line) for f in folders for line in (f / "runs.jsonl").read_text().splitlines()]
    manifest = json.loads((folders[0] / "campaign.json").read_text()) if folders else {}
    modes: dict[str, int] = {}
    for r in runs:
        modes[r["failure_mode"] or "passed"] = modes.get(r["failure_mode"] or "passed", 0) + 1
    print(f"command: {' '.join(cmd[2:])}")
    print(f"models: {[m['name'] for m in manifest.get('models', [])]}")
    print(f"cpus: {os.cpu_count()}, 1-minute load average before the run: {load_before:.2f}")
    print(f"wall time: {wall:.1f} s ({wall / max(len(runs), 1):.1f} s per run)")
    print(f"peak resident memory of the process tree: {peak:.0f} MB")
    print(f"runs recorded: {len(runs)}; outcomes: {modes}")
    print(f"pytest: {tail[0] if tail else '(no output)'}")
    print(f"campaign: {folders[0] if folders else '(none)'}")
    return 0 if len(runs) == 30 else 1


if __name__ == "__main__":
    raise SystemExit(main())
