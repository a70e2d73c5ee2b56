"""CPU of one ``litellm.completion`` on the harness's call path, alone: which litellm settings make it cheaper.

Starts the asyncio endpoint (tests/async_server.py) answering at once, and makes ``--calls``
sequential calls through litellm in this process for each variant, ``--repeats`` times, printing
the median CPU (user + system of this process) per call:

- ``openai``: ``openai/<name>`` with ``api_base``, the route a models.yaml entry for an
  OpenAI-compatible endpoint takes (the OpenAI SDK inside litellm);
- ``openai+price``: the same after ``litellm.register_model`` with the entry's price, as the
  session does once (``run.calls.llm.register_prices``): litellm's cost look-up finds the model;
- ``openai+httpx``: the same through litellm's own HTTP handler (``EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER``),
  the route a session takes when every model is on a server of its own (``run.calls.route``);
- ``hosted_vllm``: the ``hosted_vllm/`` route (litellm's own httpx handler), for comparison only.

Each call sends ``--messages`` messages and one tool schema. The machine is shared: the figures are
CPU seconds, with the load average beside them.

    python benchmarks/litellm_call.py [--calls 300] [--repeats 3] [--messages 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from adaptive import SOLUTIONS  # noqa: E402

from tests.async_server import AsyncEndpoint  # noqa: E402

TOOL = {"type": "function", "function": {"name": "fs_list", "description": "List a folder.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
    "additionalProperties": False}}}


def cpu_per_call(litellm, model: str, api_base: str, calls: int, messages: list[dict]) -> float:
    start = time.process_time()
    for _ in range(calls):
        litellm.completion(model=model, api_base=api_base, api_key="local-no-key", messages=messages,
                           tools=[TOOL], max_retries=0, timeout=30)
    return (time.process_time() - start) / calls


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--messages", type=int, default=4)
    args = ap.parse_args()
    from pytest_agentic.run.calls import llm

    litellm = llm.litellm_module()
    messages = [{"role": "user", "content": "Say ok."}] + [
        {"role": "assistant" if i % 2 == 0 else "user", "content": f"message {i}"} for i in range(args.messages - 1)]
    if messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": "Say ok."})
    print(f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {args.calls} calls x {args.repeats}, "
          f"{len(messages)} messages, one tool")
    results: dict[str, list[float]] = {}
    with AsyncEndpoint(SOLUTIONS) as server:
        for name in ("openai", "openai+price", "openai+httpx", "hosted_vllm"):
            if name == "openai+httpx":
                os.environ["EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"] = "true"
            if name == "openai+price":  # from here on litellm knows the price (it cannot be taken back)
                llm.register_prices([("openai/ok", {"input_per_token": 1e-6, "output_per_token": 2e-6})])
            model = "hosted_vllm/ok" if name == "hosted_vllm" else "openai/ok"
            cpu_per_call(litellm, model, server.api_base, 5, messages)  # warm
            for _ in range(args.repeats):
                results.setdefault(name, []).append(cpu_per_call(litellm, model, server.api_base, args.calls,
                                                                 messages))
    base = statistics.median(results["openai"])
    print("| route | CPU per call (median) | vs openai |")
    print("|---|---|---|")
    for name, values in results.items():
        ms = 1000 * statistics.median(values)
        print(f"| {name} | {ms:.2f} ms ({', '.join(f'{1000 * v:.2f}' for v in values)}) | {ms / 1000 / base:.2f}x |")
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
