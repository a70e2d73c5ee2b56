"""Measure the embedded llama.cpp server: load time, prompt and generation speed, memory.

    python benchmarks/embedded_speed.py [--gguf smollm2-135m-q4_1] [--threads N]
                                        [--ctx-size 4096] [--runs 3] [--max-tokens 128]

Starts the server exactly as the plugin does (servers.start), sends a typical
agent request (a coding-agent system prompt, six tool definitions, a task and
one earlier tool exchange) several times, and prints:

- start-up: wall time of servers.start() until healthy, and the model-load
  time the server itself reports;
- prompt processing and generation in tokens/s, from llama.cpp's own timings
  (prompt cache off, so every run processes the whole prompt), median of runs;
- one end-to-end litellm.completion() call, as the harness makes it;
- resident memory (RSS and peak RSS) of the server process, in MB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_agentic.servers import lifecycle as servers  # noqa: E402


def _tool(name, description, props, required):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props, "required": required}}}


S = {"type": "string"}
TOOLS = [
    _tool("fs_read", "Read a UTF-8 text file in the workspace.", {"path": S}, ["path"]),
    _tool("fs_write", "Write (create or overwrite) a text file in the workspace.",
          {"path": S, "content": S}, ["path", "content"]),
    _tool("fs_list", "List the files under a directory of the workspace.", {"path": S}, ["path"]),
    _tool("fs_search", "Search the workspace's files for a regular expression.",
          {"pattern": S, "path": S}, ["pattern"]),
    _tool("run_command", "Run a shell command in the workspace, with a timeout; "
          "returns exit status, stdout and stderr.", {"command": S}, ["command"]),
    _tool("final_answer", "Give the final answer and end the task.", {"answer": S}, ["answer"]),
]
MESSAGES = [
    {"role": "system", "content": (
        "You are a software engineering agent working in a sandboxed workspace. "
        "Use the tools to inspect and change files and to run commands. Work step by step, "
        "check your changes by running the tests, and finish with final_answer.")},
    {"role": "user", "content": (
        "The test suite of the package in this workspace fails: tests/test_stats.py::"
        "test_moving_average. Find the bug in the code (not in the test) and fix it.")},
    {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "run_command", "arguments": json.dumps({"command": "python -m pytest -q"})}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": (
        "F.                                                                       [100%]\n"
        "___________________________ test_moving_average ____________________________\n"
        "    def test_moving_average():\n"
        ">       assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]\n"
        "E       assert [1.5, 2.5] == [1.5, 2.5, 3.5]\n"
        "stats/core.py:12: AssertionError\n"
        "1 failed, 1 passed in 0.03s")},
]


def _rss_mb(pid: int) -> tuple[float, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    kb = lambda k: float(fields.get(k, "0 kB").split()[0])  # noqa: E731
    return kb("VmRSS") / 1024, kb("VmHWM") / 1024


def _server_pid(supervisor_pid: int) -> int:
    kids = Path(f"/proc/{supervisor_pid}/task/{supervisor_pid}/children").read_text().split()
    return int(kids[0])


def _post(root: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(root + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.loads(resp.read())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", default="smollm2-135m-q4_1")
    ap.add_argument("--threads", type=int, default=None,
                    help="llama.cpp threads (default: the server's default, all CPUs but one)")
    ap.add_argument("--ctx-size", type=int, default=4096)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--param", action="append", default=[], metavar="NAME=JSON",
                    help="extra xllamacpp.CommonParams attribute (server key 'params'), "
                         "e.g. cpuparams.poll=0; repeatable")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args()

    params = {}
    for item in args.param:
        name, _, value = item.partition("=")
        params[name] = json.loads(value)
    cfg = {"kind": "llama.cpp", "gguf": args.gguf, "ctx_size": args.ctx_size,
           "health_timeout_s": 300, "params": params}
    if args.threads is not None:
        cfg["threads"] = args.threads
    from pytest_agentic.servers.config import default_threads

    threads = args.threads if args.threads is not None else default_threads()
    servers.preflight("bench", cfg)
    from pytest_agentic.servers import gguf

    t0 = time.monotonic()
    model_path = gguf.resolve(args.gguf)  # fetch (if needed) and verify, outside the timing
    verify_s = time.monotonic() - t0

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        t0 = time.monotonic()
        srv = servers.start("bench", cfg, log)
        start_s = time.monotonic() - t0
        try:
            text = log.read_text()
            loaded = text.split("model loaded in ")[1].split("s")[0] if "model loaded in " in text else "?"
            pid = _server_pid(srv.pid)
            rss_idle, _ = _rss_mb(pid)
            root = srv.api_base.removesuffix("/v1")

            body = {"messages": MESSAGES, "tools": TOOLS, "temperature": 0.0,
                    "max_tokens": args.max_tokens, "cache_prompt": False}
            _post(root, "/v1/chat/completions", {**body, "max_tokens": 8})  # warm-up
            runs = []
            for _ in range(args.runs):
                r = _post(root, "/v1/chat/completions", body)
                t = r["timings"]
                runs.append(t)
            prompt_n = runs[-1]["prompt_n"]
            pp = statistics.median(t["prompt_per_second"] for t in runs)
            pp_best = max(t["prompt_per_second"] for t in runs)
            gen_n = statistics.median(t["predicted_n"] for t in runs)
            tg = statistics.median(t["predicted_per_second"] for t in runs)
            tg_best = max(t["predicted_per_second"] for t in runs)
            last_msg = r["choices"][0]["message"]

            import litellm

            t0 = time.monotonic()
            lr = litellm.completion(model="openai/bench", api_base=srv.api_base, api_key="none",
                                    messages=MESSAGES, tools=TOOLS, temperature=0.0,
                                    max_tokens=args.max_tokens, num_retries=0)
            e2e_s = time.monotonic() - t0
            rss, peak = _rss_mb(pid)
        finally:
            srv.stop()

    figures = {
        "model": str(model_path.name),
        "model_size_mb": round(model_path.stat().st_size / 2**20, 1),
        "threads": threads, "ctx_size": args.ctx_size, "runs": args.runs, "params": params,
        "verify_s": round(verify_s, 2),
        "start_until_healthy_s": round(start_s, 2),
        "model_load_s_reported": float(loaded) if loaded != "?" else None,
        "prompt_tokens": prompt_n,
        "prompt_tokens_per_s": round(pp, 1),
        "prompt_tokens_per_s_best": round(pp_best, 1),
        "generated_tokens_median": gen_n,
        "generation_tokens_per_s": round(tg, 1),
        "generation_tokens_per_s_best": round(tg_best, 1),
        "litellm_call_s": round(e2e_s, 2),
        "litellm_completion_tokens": lr.usage.completion_tokens,
        "rss_mb_idle": round(rss_idle, 1),
        "rss_mb_after": round(rss, 1),
        "peak_rss_mb": round(peak, 1),
        "loadavg_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
    }
    print(f"embedded llama.cpp server: {figures['model']} ({figures['model_size_mb']} MB), "
          f"{threads} thread{'s' if threads != 1 else ''}, ctx {args.ctx_size}" + (f", params {params}" if params else ""))
    print(f"  sha256 check of model file     {figures['verify_s']:.2f} s")
    print(f"  start until healthy            {figures['start_until_healthy_s']:.2f} s "
          f"(model load reported by server: {loaded} s)")
    print(f"  prompt processing              {figures['prompt_tokens_per_s']:.1f} tokens/s median, "
          f"{pp_best:.1f} best ({prompt_n} prompt tokens, {args.runs} runs)")
    print(f"  generation                     {figures['generation_tokens_per_s']:.1f} tokens/s median, "
          f"{tg_best:.1f} best (median {gen_n} tokens generated)")
    print(f"  one litellm.completion call    {figures['litellm_call_s']:.2f} s "
          f"({figures['litellm_completion_tokens']} completion tokens)")
    print(f"  server RSS                     {figures['rss_mb_idle']:.1f} MB idle, "
          f"{figures['rss_mb_after']:.1f} MB after the runs, peak {figures['peak_rss_mb']:.1f} MB")
    lb, la = figures["loadavg_1min_before_after"]
    print(f"  machine                        {os.cpu_count()} CPUs, 1-min load average {lb} before, {la} after"
          f"{'  (other work was running: figures may be low)' if lb > 0.8 else ''}")
    kind = "tool call" if last_msg.get("tool_calls") else "text"
    print(f"  last answer ({kind}): {json.dumps(last_msg.get('tool_calls') or last_msg.get('content'))[:160]}")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
