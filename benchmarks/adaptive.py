"""The default (adaptive concurrency) against Inspect AI's default, and against a provider's quota.

Starts local OpenAI-compatible endpoints on 127.0.0.1 (tests/fault_server.py) that answer every
call after ``--latency`` seconds, and runs, each with no concurrency flag:

(a) ``pytest`` and ``inspect eval`` on 30 and 300 runs (samples) of one call each;
(b) the same with five calls per run (four tool calls and the answer; Inspect: five generates);
(c) ``pytest`` against an endpoint that holds at most ``--quota`` calls in flight and answers
    any other with ``429`` and ``Retry-After: 1``, on 60 and 300 runs of one call: runs lost to
    ``infra_error``, 429s sent, wall time against the quota's ideal (runs / quota x latency,
    plus the session's start-up: a one-run session's wall on an endpoint without latency), and
    whether the verdicts are those of a sequential campaign (run on an endpoint without latency).

Wall time is the whole command's, process start to exit; each cell is the median of
``--repeats`` runs for (a) and (b). Inspect AI is not a dependency: pass the ``inspect``
executable of a throwaway virtual environment (``python -m venv /tmp/iv && /tmp/iv/bin/pip
install inspect-ai openai``) with ``--inspect /tmp/iv/bin/inspect``; without it (a) and (b)
print pytest's figures alone.

    python benchmarks/adaptive.py --inspect /tmp/iv/bin/inspect [--latency 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from concurrency import project, session  # noqa: E402

from pytest_agentic.run.task import Final, ToolCall  # noqa: E402
from tests.fault_server import FaultServer  # noqa: E402

FIVE_CALLS = '''
from pytest_agentic import Final, TaskInstance, ToolCall, task

def build(seed):
    files = {f"{d}/x.txt": "x" for d in "abcd"}
    reference = [*(ToolCall("fs_list", {"path": d}) for d in "abcd"), Final("ok")]
    return TaskInstance(prompt="List four folders.", files=files, tools=("fs_list",), reference=reference)

@task("five_calls_1", "five_calls", build=build)
def test_five_calls(agent):
    run = agent.run()
    assert run.final_answer == "ok" and len(run.tool_calls) == 4
'''
INSPECT_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import match
from inspect_ai.solver import generate, solver

N = int(__import__("os").environ["BENCH_SAMPLES"])
CALLS = int(__import__("os").environ["BENCH_CALLS"])

@solver
def calls():
    async def solve(state, generate):
        for i in range(CALLS):
            state = await generate(state)
            if i < CALLS - 1:
                state.messages.append(ChatMessageUser(content="go on"))
        return state
    return solve

@task
def say_ok():
    return Task(dataset=[Sample(input="Say ok.", target="ok", id=i) for i in range(N)], solver=calls(), scorer=match())
'''
SOLUTIONS = {"Say ok.": [Final("ok")] * 5,
             "List four folders.": [*(ToolCall("fs_list", {"path": d}) for d in "abcd"), Final("ok")]}


def five_call_project(api_base: str) -> Path:
    folder = project(api_base)
    (folder / "test_say_ok.py").unlink()
    (folder / "test_five_calls.py").write_text(FIVE_CALLS)
    return folder


def inspect_wall(inspect: str, api_base: str, samples: int, calls: int) -> tuple[float, int]:
    folder = Path(tempfile.mkdtemp(prefix="agentic-inspect-bench-"))
    (folder / "task.py").write_text(INSPECT_TASK)
    env = {**os.environ, "OPENAI_BASE_URL": api_base, "OPENAI_API_KEY": "local-no-key",
           "BENCH_SAMPLES": str(samples), "BENCH_CALLS": str(calls), "INSPECT_LOG_DIR": str(folder / "logs")}
    start = time.monotonic()
    # -M responses_api=false: the chat completions API, which the endpoint serves (not a concurrency flag).
    proc = subprocess.run([inspect, "eval", "task.py", "--model", "openai/ok", "-M", "responses_api=false"],
                          cwd=folder, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start, proc.returncode


def compare(args: argparse.Namespace, calls: int) -> None:
    with FaultServer(SOLUTIONS, latency_s=args.latency) as server:
        folder = project(server.api_base) if calls == 1 else five_call_project(server.api_base)
        print(f"\n({'a' if calls == 1 else 'b'}) {calls} call(s) per run, no concurrency flag:")
        print("| runs | `pytest --model X` | in flight (most) | `inspect eval` | pytest / inspect |")
        print("|---|---|---|---|---|")
        for runs in [int(n) for n in args.runs.split(",")]:
            ours, theirs, peaks = [], [], []
            for _ in range(args.repeats if runs <= 30 else 1):
                result = session(folder, runs, [], server)
                assert result["rc"] == 0 and len(result["verdicts"]) == runs, result
                ours.append(result["wall"])
                peaks.append(result["in_flight"])
                if args.inspect:
                    wall, rc = inspect_wall(args.inspect, server.api_base, runs, calls)
                    assert rc == 0, f"inspect eval exited {rc}"
                    theirs.append(wall)
            a = statistics.median(ours)
            b = statistics.median(theirs) if theirs else None
            print(f"| {runs} | {a:.1f} s | {max(peaks)} | {f'{b:.1f} s' if b else '-'} | "
                  f"{f'{a / b:.2f}' if b else '-'} |", flush=True)


def quota(args: argparse.Namespace) -> bool:
    with FaultServer(SOLUTIONS) as fast:
        reference = project(fast.api_base)
        startup = statistics.median(session(reference, 1, [], fast)["wall"] for _ in range(3))
    ok = True
    print(f"\n(c) a provider that holds {args.quota} calls in flight, 429 + Retry-After: 1 beyond, "
          f"no concurrency flag (start-up: a one-run session, median of 3, {startup:.1f} s):")
    print("| runs | wall | ideal + start-up | wall / (ideal + start-up) | runs lost | 429s sent | "
          "most in flight | same verdicts as sequential |")
    print("|---|---|---|---|---|---|---|---|")
    for runs in [int(n) for n in args.quota_runs.split(",")]:
        with FaultServer(SOLUTIONS) as fast:
            sequential = session(project(fast.api_base), runs, ["--agentic-concurrency", "1"], fast)
        with FaultServer(SOLUTIONS, latency_s=args.latency, quota=args.quota, retry_after="1") as server:
            folder = project(server.api_base)
            result = session(folder, runs, [], server)
            lost = sum(1 for v in result["verdicts"] if v[4] == "infra_error")
            ideal = runs / args.quota * args.latency + startup
            same = result["verdicts"] == sequential["verdicts"] and len(result["verdicts"]) == runs
            ok &= same and lost == 0
            print(f"| {runs} | {result['wall']:.1f} s | {ideal:.1f} s | {result['wall'] / ideal:.2f} | {lost} | "
                  f"{server.rate_refused} | {server.peak} | {'yes' if same else 'NO'} |", flush=True)
            pacing = _pacing(folder)
            print(f"  limit moves: {pacing}")
    return ok


def _pacing(folder: Path) -> str:
    outs = sorted(folder.glob("out-*/*/campaign.json"), key=lambda p: p.stat().st_mtime)
    if not outs:
        return "-"
    model = json.loads(outs[-1].read_text()).get("pacing", {}).get("local", {})
    moves = [f"{e['old']}->{e['new']}" for e in model.get("events", []) if e["why"] != "start"]
    return f"{', '.join(moves[:20])}{' ...' if len(moves) > 20 else ''} (rate-limited calls: {model.get('rate_limited')})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--runs", default="30,300")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of each 30-run cell (median)")
    ap.add_argument("--inspect", default=None, help="the inspect executable of a throwaway venv")
    ap.add_argument("--quota", type=int, default=6)
    ap.add_argument("--quota-runs", default="60,300")
    ap.add_argument("--parts", default="a,b,c")
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}; 1-minute load average at start: {os.getloadavg()[0]:.2f}; "
          f"endpoint latency {args.latency:g} s")
    parts = args.parts.split(",")
    ok = True
    if "a" in parts:
        compare(args, 1)
    if "b" in parts:
        compare(args, 5)
    if "c" in parts:
        ok = quota(args)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
