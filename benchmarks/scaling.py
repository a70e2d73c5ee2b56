"""Big campaigns against the endpoint's speed: 30, 300 and 3000 runs, no flag and ``-n 2``.

Starts a local OpenAI-compatible endpoint on asyncio (tests/async_server.py: it holds thousands
of calls at once, so the figures measure the harness) that answers every call after
``--latency`` seconds, and runs ``pytest --runs N`` with no concurrency flag on a one-task
project whose runs make one call, and one whose runs make five (four tool calls and the
answer). Each size runs with no flag and, beside it, with ``-n W`` for each of ``--workers``
(default 2: xdist, the plugin's own scheduler) on the same endpoint. For each it reports:

- the model calls the endpoint received: ``-n`` must send as many as one process (no run
  started twice), and its wall against the no-flag session's;

- wall time of the whole command, process start to exit, against the physical limit: every run
  in flight at once, so ``calls x latency`` plus the session's start-up (a one-run session's wall
  on an endpoint without latency, median of 3);
- Inspect AI's wall time for the same samples and calls (``inspect eval``, its default
  concurrency) where it finishes within ``--inspect-timeout``, measured in the same run;
- peak resident memory of the process tree, CPU seconds per run (user + system of the session's
  processes), the most calls the endpoint saw in flight, runs lost to ``infra_error``, and
  whether the verdicts are a sequential campaign's (``--agentic-concurrency 1`` on an endpoint
  without latency);
- the end of the session: seconds from the endpoint's last answer to the process's exit
  (summary, tables, campaign.json, report.html), and for the largest campaign report.html's size
  and the time headless Chromium takes to load it and list every run.

Then the quota case: an endpoint that holds ``--quota`` calls in flight and answers any other
with 429 and ``Retry-After: 1``, ``--quota-runs`` runs of one call: runs lost, 429s against
calls, wall against the quota's ideal.

Writes the figures as JSON (``--json``) and a chart of wall time against runs (``--chart``, a
PNG: an SVG drawn here, rendered by headless Chromium).

    python benchmarks/scaling.py --inspect /tmp/iv/bin/inspect [--sizes 30,300,3000] [--chart scaling.png]
    python benchmarks/scaling.py --calls 5 --sizes 30,300 --parts scaling --workers 2   # -n 2 beside no flag
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from adaptive import INSPECT_TASK, SOLUTIONS, five_call_project  # noqa: E402
from concurrency import project, session  # noqa: E402

from tests.async_server import AsyncEndpoint  # noqa: E402
from tests.browser import chromium  # noqa: E402


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def inspect_wall(inspect: str, api_base: str, samples: int, calls: int, timeout: float) -> float | None:
    """``inspect eval`` on ``samples`` samples of ``calls`` generates; None when it did not finish in ``timeout``."""
    folder = Path(tempfile.mkdtemp(prefix="agentic-inspect-bench-"))
    (folder / "task.py").write_text(INSPECT_TASK)
    env = {**os.environ, "OPENAI_BASE_URL": api_base, "OPENAI_API_KEY": "local-no-key",
           "BENCH_SAMPLES": str(samples), "BENCH_CALLS": str(calls), "INSPECT_LOG_DIR": str(folder / "logs")}
    start = time.monotonic()
    try:
        proc = subprocess.run([inspect, "eval", "task.py", "--model", "openai/ok", "-M", "responses_api=false"],
                              cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert proc.returncode == 0, f"inspect eval exited {proc.returncode}"
    return time.monotonic() - start


def page_check(out: Path) -> dict:
    """report.html of the session in ``out``: its size, and Chromium's time to load it and list the runs."""
    page = next(out.glob("*/report.html"))
    exe = chromium()
    result = {"page_mb": round(page.stat().st_size / 1e6, 2), "load_s": None, "runs_shown": None}
    if exe is None:
        return result
    with tempfile.TemporaryDirectory(prefix="agentic-chromium-") as profile:
        start = time.monotonic()
        done = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-extensions", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                              capture_output=True, text=True, timeout=300)
        result["load_s"] = round(time.monotonic() - start, 2)
    result["runs_shown"] = done.stdout.count('<details class="run ')
    return result


def scaling(args: argparse.Namespace, startup: float, calls: int, figures: list[dict]) -> bool:
    ok = True
    hows = [("no flag", [])] + [(f"-n {w}", ["-n", str(w)]) for w in args.workers]
    for runs in [int(n) for n in args.sizes.split(",")]:
        with AsyncEndpoint(SOLUTIONS) as fast:
            folder = project(fast.api_base) if calls == 1 else five_call_project(fast.api_base)
            sequential = session(folder, runs, ["--agentic-concurrency", "1"], fast)["verdicts"]
        with AsyncEndpoint(SOLUTIONS, latency_s=args.latency) as server:
            folder = project(server.api_base) if calls == 1 else five_call_project(server.api_base)
            walls: dict[str, float] = {}
            sent: dict[str, int] = {}
            for how, flags in hows:
                before, arrived = load(), server.arrived
                result = session(folder, runs, flags, server)
                sent[how] = server.arrived - arrived
                walls[how] = result["wall"]
                theirs = (inspect_wall(args.inspect, server.api_base, runs, calls, args.inspect_timeout)
                          if args.inspect and not flags else None)
                ok &= row(args, startup, calls, runs, how, result, theirs, sequential, sent, walls, before, figures)
        shutil.rmtree(folder, ignore_errors=True)
    return ok


def row(args: argparse.Namespace, startup: float, calls: int, runs: int, how: str, result: dict,
        theirs: float | None, sequential: list, sent: dict[str, int], walls: dict[str, float], before: str,
        figures: list[dict]) -> bool:
    """One session's figures: printed as a table row and kept for ``--json`` and the chart."""
    lost = sum(1 for v in result["verdicts"] if v[4] == "infra_error")
    same = result["verdicts"] == sequential and len(sequential) == runs
    same_calls = sent[how] == sent["no flag"]
    limit = calls * args.latency + startup
    row = {"runs": runs, "calls": calls, "how": how, "wall_s": round(result["wall"], 1), "limit_s": round(limit, 1),
           "vs_no_flag": round(result["wall"] / walls["no flag"], 2),
           "inspect_s": round(theirs, 1) if theirs is not None else None,
           "peak_mb": round(result["peak_mb"]), "cpu_ms_per_run": round(1000 * result["cpu_s"] / runs, 1),
           "model_calls": sent[how], "in_flight": result["in_flight"], "lost": lost, "same_verdicts": same,
           "end_s": round(result["end_s"], 1) if result["end_s"] is not None else None, "load": before,
           # Calls the endpoint held, the most in each second of the session (its pipeline, full or in waves).
           "first_call_s": round(result["first_call"], 1) if result["first_call"] is not None else None,
           "in_flight_by_second": result["curve"]}
    if runs == max(int(n) for n in args.sizes.split(",")) and calls == 1 and how == "no flag":
        row.update(page_check(result["out"]))
    figures.append(row)
    inspect = ("-" if not args.inspect or how != "no flag" else f"{theirs:.1f} s" if theirs is not None
               else f"not done in {args.inspect_timeout:g} s")
    ratio = f"{result['wall'] / theirs:.2f}" if theirs else "-"
    print(f"| {runs} x {calls} | {how} | {result['wall']:.1f} s | {row['vs_no_flag']:.2f}x | "
          f"{limit:.1f} s ({result['wall'] / limit:.2f}x) | {inspect} | {ratio} | {row['peak_mb']} MB | "
          f"{row['cpu_ms_per_run']} ms | {sent[how]}{'' if same_calls else ' (NOT as no flag)'} | "
          f"{result['in_flight']} | {lost} | {'same' if same else 'NO'} | {row['end_s']} s | {before} |", flush=True)
    return same and same_calls and lost == 0 and result["rc"] == 0


def quota(args: argparse.Namespace, startup: float, figures: list[dict]) -> bool:
    runs = args.quota_runs
    with AsyncEndpoint(SOLUTIONS) as fast:
        sequential = session(project(fast.api_base), runs, ["--agentic-concurrency", "1"], fast)["verdicts"]
    with AsyncEndpoint(SOLUTIONS, latency_s=args.latency, quota=args.quota, retry_after="1") as server:
        before = load()
        result = session(project(server.api_base), runs, [], server)
    lost = sum(1 for v in result["verdicts"] if v[4] == "infra_error")
    same = result["verdicts"] == sequential and len(sequential) == runs
    ideal = runs / args.quota * args.latency + startup
    share = server.rate_refused / max(1, server.arrived)
    figures.append({"quota": args.quota, "runs": runs, "wall_s": round(result["wall"], 1), "ideal_s": round(ideal, 1),
                    "lost": lost, "refused": server.rate_refused, "calls_sent": server.arrived,
                    "refused_share": round(share, 4), "in_flight": server.peak, "same_verdicts": same, "load": before})
    print(f"\nquota {args.quota} in flight, 429 + Retry-After: 1 beyond; {runs} runs of one call (load {before}):")
    print(f"wall {result['wall']:.1f} s, ideal + start-up {ideal:.1f} s ({result['wall'] / ideal:.2f}x), "
          f"runs lost {lost}, 429s {server.rate_refused} of {server.arrived} calls sent ({100 * share:.1f}%), "
          f"most in flight {server.peak}, verdicts {'same as sequential' if same else 'DIFFER'}", flush=True)
    return same and lost == 0 and share <= 0.05


def chart(figures: list[dict], target: Path, caption: str) -> None:
    """Wall time against runs (log scale), per calls per run: the harness, its physical limit, Inspect AI."""
    rows = [f for f in figures if "calls" in f and f.get("how", "no flag") == "no flag"]
    sizes = sorted({f["runs"] for f in rows})
    top = max(max(f["wall_s"], f["inspect_s"] or 0) for f in rows) * 1.1
    w, h, left, bottom, pad = 640, 380, 60, 50, 20
    pw, ph = w - left - pad - 150, h - bottom - pad

    def x(runs: int) -> float:
        return left + (sizes.index(runs) / max(1, len(sizes) - 1)) * pw

    def y(s: float) -> float:
        return pad + ph - s / top * ph

    series = []
    colours = {1: "#1f77b4", 5: "#d62728"}
    for calls in sorted({f["calls"] for f in rows}):
        mine = [f for f in rows if f["calls"] == calls]
        for key, dash, label in (("wall_s", "", "pytest-agentic"), ("limit_s", "4 3", "physical limit"),
                                 ("inspect_s", "1 3", "Inspect AI")):
            pts = [(x(f["runs"]), y(f[key])) for f in mine if f.get(key) is not None]
            if pts:
                series.append((colours.get(calls, "#444"), dash, f"{label}, {calls} call{'s' * (calls > 1)}", pts))
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<line x1="{left}" y1="{pad + ph}" x2="{left + pw}" y2="{pad + ph}" stroke="#333"/>',
           f'<line x1="{left}" y1="{pad}" x2="{left}" y2="{pad + ph}" stroke="#333"/>']
    step = 5 if top < 60 else 10 if top < 120 else 30
    for s in range(0, int(top) + 1, step):
        svg.append(f'<text x="{left - 6}" y="{y(s) + 4:.1f}" text-anchor="end">{s}</text>')
        svg.append(f'<line x1="{left}" y1="{y(s):.1f}" x2="{left + pw}" y2="{y(s):.1f}" stroke="#eee"/>')
    for runs in sizes:
        svg.append(f'<text x="{x(runs):.1f}" y="{pad + ph + 16}" text-anchor="middle">{runs}</text>')
    svg.append(f'<text x="{left + pw / 2}" y="{h - 12}" text-anchor="middle">runs (log scale)</text>')
    svg.append(f'<text x="14" y="{pad + ph / 2}" transform="rotate(-90 14 {pad + ph / 2})" '
               'text-anchor="middle">wall time (s)</text>')
    for i, (colour, dash, label, pts) in enumerate(series):
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2" '
                   f'stroke-dasharray="{dash}"/>')
        svg += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>' for px, py in pts]
        ly = pad + 10 + 18 * i
        svg.append(f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 36}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2" stroke-dasharray="{dash}"/>')
        svg.append(f'<text x="{left + pw + 40}" y="{ly + 4}" font-size="10">{label}</text>')
    svg.append(f'<text x="{left}" y="{pad - 6}" font-size="10" fill="#555">{caption}</text>')
    svg.append("</svg>")
    target = target.resolve()  # a file URI for Chromium, wherever the command was given it
    html = target.with_suffix(".html")
    html.write_text(f'<!doctype html><html><body style="margin:0">{"".join(svg)}</body></html>')
    exe = chromium()
    assert exe is not None, "the chart is rendered by headless Chromium"
    with tempfile.TemporaryDirectory(prefix="agentic-chromium-") as profile:
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                        f"--user-data-dir={profile}", f"--window-size={w},{h}", f"--screenshot={target}",
                        html.as_uri()], capture_output=True, timeout=120, check=True)
    html.unlink()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--sizes", default="30,300,3000")
    ap.add_argument("--calls", default="1,5")
    ap.add_argument("--inspect", default=None, help="the inspect executable of a throwaway venv")
    ap.add_argument("--inspect-timeout", type=float, default=300.0)
    ap.add_argument("--quota", type=int, default=6)
    ap.add_argument("--quota-runs", type=int, default=300)
    ap.add_argument("--workers", type=lambda text: [int(w) for w in text.split(",") if w], default=[2],
                    help="xdist worker counts measured beside the no-flag session (-n W), comma-separated; '' for none")
    ap.add_argument("--parts", default="scaling,quota")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--chart", type=Path, default=None)
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}; 1-minute load average at start: {load()}; endpoint latency {args.latency:g} s")
    with AsyncEndpoint(SOLUTIONS) as fast:
        reference = project(fast.api_base)
        startup = statistics.median(session(reference, 1, [], fast)["wall"] for _ in range(3))
    print(f"start-up (a one-run session, endpoint without latency, median of 3): {startup:.1f} s")
    figures: list[dict] = []
    ok = True
    if "scaling" in args.parts:
        print("\n| runs x calls | how | wall | against no flag | physical limit | `inspect eval` | pytest / inspect | "
              "peak memory | CPU per run | model calls | most in flight | runs lost | verdicts as sequential | "
              "end of session | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for calls in [int(c) for c in args.calls.split(",")]:
            ok &= scaling(args, startup, calls, figures)
        page = next((f for f in figures if "page_mb" in f), None)
        if page:
            print(f"\nreport.html of {page['runs']} runs: {page['page_mb']} MB; headless Chromium loaded it in "
                  f"{page['load_s']} s and listed {page['runs_shown']} runs")
    if "quota" in args.parts:
        ok &= quota(args, startup, figures)
    if args.json:
        args.json.write_text(json.dumps({"startup_s": round(startup, 2), "cpus": os.cpu_count(), "figures": figures},
                                        indent=1))
    if args.chart and any("calls" in f for f in figures):
        loads = sorted({float(f["load"]) for f in figures if "calls" in f})
        chart(figures, args.chart, f"{args.latency:g} s per call, {os.cpu_count()} CPUs, "
              f"load {loads[0]:.1f}-{loads[-1]:.1f}")
        print(f"chart: {args.chart}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
