"""A stored campaign as Inspect AI eval logs: one ``.eval`` file per model, for ``inspect view``.

Inspect AI (https://inspect.aisi.org.uk) is not a dependency: this module writes its log format
itself, as Inspect AI :data:`INSPECT_VERSION` reads it (``inspect_ai/log/_log.py`` for the records,
``inspect_ai/log/_recorders/eval.py`` for the file). An ``.eval`` file is a zip archive holding
``header.json`` (an ``EvalLog`` without its samples: the eval's spec, plan, results and stats),
``summaries.json`` (an ``EvalSampleSummary`` per sample, what the viewer lists) and one
``samples/<id>_epoch_<epoch>.json`` per sample (an ``EvalSample``). ``tests/test_inspect_export.py``
reads what this writes with that release's own reader (``inspect_ai.log.read_eval_log``).

The mapping, per model of the campaign (``agentic-export inspect`` writes it):

- the eval's task is the benchmark (``agentic-core-v1``, its revision as the task version), its
  model the litellm model string of the ``models.yaml`` entry, its epochs the runs per task;
- a sample per run: its id the task (``task_01``), its epoch the run, its input the task's prompt,
  its messages the transcript's conversation with every tool call and result (a failed tool call
  carries its error), its metadata the task, run, seed and instance (name, seed, content hash);
- two scores per sample: ``verdict`` (``C`` passed, ``I`` failed; the checker's reason as the
  explanation, the failure mode in its metadata) and ``failure_mode`` (the mode, or ``passed``),
  and the eval's results the accuracy of ``verdict`` and its standard error, as Inspect computes them;
- model usage per sample and per eval: tokens (cached prompt tokens apart, as Inspect counts them),
  reasoning tokens and cost in dollars (absent when unknown).

What a model or a tool wrote stays data in the JSON; the campaign is read through
``campaign/stored.py`` only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zipfile
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..campaign.stored import StoredCampaign
from ..run.records import Message, RunRecord, ToolCallLog, Transcript

#: The Inspect AI release whose reader the written logs are tested with (``tests/test_inspect_export.py``).
INSPECT_VERSION = "0.3.285"
#: Inspect's log schema version (``inspect_ai._util.constants.LOG_SCHEMA_VERSION``).
LOG_SCHEMA_VERSION = 2

#: The scorers each sample carries.
VERDICT = "verdict"
FAILURE_MODE = "failure_mode"

#: Our stop reasons as Inspect's ``ModelOutput`` stop reasons (the rest are ``unknown``).
STOP_REASONS = {"final_answer": "stop", "empty_final": "stop", "tool_call_as_text": "stop",
                "truncated": "max_tokens", "server_refusal": "content_filter"}


def export(campaign: StoredCampaign, out: Path) -> list[Path]:
    """Write one ``.eval`` log per model of ``campaign`` into ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for model, records in _by_model(campaign.records).items():
        header, samples = eval_log(campaign, model, records)
        path = out / _file_name(header)
        write_eval(path, header, samples)
        written.append(path)
    return written


def _by_model(records: Iterable[RunRecord]) -> dict[str, list[RunRecord]]:
    """Each model's runs in (task, run) order; a run recorded twice (a resumed session) counts once, the last."""
    latest: dict[tuple[str, str, int], RunRecord] = {}
    for r in records:
        latest[(r["model"], r["task"], r["run"])] = r
    grouped: dict[str, list[RunRecord]] = {}
    for key in sorted(latest):
        grouped.setdefault(key[0], []).append(latest[key])
    return grouped


def eval_log(campaign: StoredCampaign, model: str, records: list[RunRecord]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Inspect's ``EvalLog`` header (no samples) and the ``EvalSample`` of each of ``model``'s runs."""
    manifest = campaign.manifest
    entry = next((m for m in manifest["models"] if m.get("name") == model), {})
    model_id = str(entry.get("model") or model)
    samples = [sample_of(campaign, r, campaign.transcript(r), model_id) for r in records]
    created = manifest.get("started_at") or _mtime(campaign.path / "runs.jsonl")
    task_ids = sorted({r["task"] for r in records})
    benchmark = str(manifest.get("benchmark") or "agentic")
    passes = [1.0 if r["passed"] else 0.0 for r in records]
    usage = _sum_usage(s["model_usage"][model_id] for s in samples)
    spec = {
        "eval_id": _short_id("eval", campaign.id, model),
        "run_id": _short_id("run", campaign.id),
        "created": created,
        "task": benchmark,
        "task_id": _short_id("task", campaign.id, model),
        "task_version": manifest["benchmark_revision"] or 0,
        "task_display_name": f"{benchmark} · {model}",
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "solver": "pytest-agentic",
        "tags": ["pytest-agentic"],
        "dataset": {"name": benchmark, "samples": len(task_ids), "sample_ids": task_ids, "shuffled": False},
        "model": model_id,
        "model_generate_config": {},
        "model_base_url": entry.get("api_base"),
        "model_args": {},
        "config": {"epochs": max((r["run"] for r in records), default=1), "log_samples": True},
        "packages": {k: v for k, v in (("pytest-agentic", manifest.get("harness_version")),
                                       ("litellm", manifest.get("litellm_version"))) if v},
        "metadata": {"campaign_id": campaign.id, "models_yaml_entry": entry or {"name": model},
                     "seed": manifest.get("seed"), "sandbox": manifest["sandbox"]},
        "scorers": [
            {"name": VERDICT, "options": {}, "metadata": {},
             "metrics": [{"name": "inspect_ai/accuracy", "options": {}}, {"name": "inspect_ai/stderr", "options": {}}]},
            {"name": FAILURE_MODE, "options": {}, "metadata": {}, "metrics": []},
        ],
    }
    results = {
        "total_samples": len(records),
        "completed_samples": len(records),
        "scores": [
            {"name": VERDICT, "scorer": VERDICT, "scored_samples": len(records), "unscored_samples": 0, "params": {},
             "metrics": {"accuracy": {"name": "accuracy", "value": _mean(passes), "params": {}},
                         "stderr": {"name": "stderr", "value": _stderr(passes), "params": {}}}},
        ],
    }
    header: dict[str, Any] = {
        "version": LOG_SCHEMA_VERSION,
        "status": "success" if manifest.get("complete", True) else "cancelled",
        "eval": spec,
        "plan": {"name": "plan", "steps": [{"solver": "pytest-agentic", "params": {}, "params_passed": {}}],
                 "config": {}},
        "results": results,
        "stats": {"started_at": created, "completed_at": manifest.get("finished_at") or created,
                  "model_usage": {model_id: usage}, "role_usage": {}},
        "invalidated": False,
        "tags": [],
        "metadata": {"campaign_id": campaign.id, "campaign_folder": str(campaign.path)},
    }
    return header, samples


def sample_of(campaign: StoredCampaign, record: RunRecord, transcript: Transcript, model_id: str) -> dict[str, Any]:
    """One run as Inspect's ``EvalSample``."""
    messages = messages_of(transcript, model_id)
    prompt = next((m["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], str)), "")
    usage = _usage(record)
    mode = record["failure_mode"]
    explanation = record["reason"] or ("the checker accepted the run" if record["passed"] else mode or "failed")
    answer = transcript["final_answer"]
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    instance = dict(campaign.manifest["tasks"].get(record["task"]) or {})
    instance.setdefault("name", record["task_name"])
    instance.setdefault("seed", record["seed"])
    instance["content_hash"] = record["task_hash"] or instance.get("content_hash")
    metadata = {
        "task": record["task"], "task_name": record["task_name"], "run": record["run"], "seed": record["seed"],
        "instance": instance, "model": record["model"], "nodeid": record["nodeid"],
        "stop_reason": record["stop_reason"], "infra_cause": record["infra_cause"], "turns": record["turns"],
        "tool_calls": record["tool_calls"], "latency_s": record["latency_s"], "cost_usd": record["cost_usd"],
        "tags": record["tags"], "sandbox": record["sandbox"], "server_refusal": transcript["server_refusal"],
        "transcript": record["transcript"],
        **({"rescore_of": record["rescore_of"]} if "rescore_of" in record else {}),
    }
    scores = {
        VERDICT: {"value": "C" if record["passed"] else "I", "answer": answer, "explanation": explanation,
                  "metadata": {"failure_mode": mode, "stop_reason": record["stop_reason"]}, "history": []},
        FAILURE_MODE: {"value": mode or "passed", "explanation": explanation, "history": []},
    }
    return {
        "id": record["task"],
        "epoch": record["run"],
        "input": prompt,
        "target": "",
        "messages": messages,
        "output": {"model": model_id, "choices": [] if last is None else [
            {"message": last, "stop_reason": STOP_REASONS.get(record["stop_reason"], "unknown")}],
            "completion": answer or "", "usage": usage},
        "scores": scores,
        "metadata": metadata,
        "store": {},
        "events": [],
        "model_usage": {model_id: usage},
        "role_usage": {},
        "total_time": record["latency_s"],
        "working_time": record["latency_s"],
        "uuid": _short_id("sample", campaign.id, record["model"], record["task"], str(record["run"])),
        "attachments": {},
        "turn_count": record["turns"],
    }


def messages_of(transcript: Transcript, model_id: str) -> list[dict[str, Any]]:
    """The transcript's conversation as Inspect's ``ChatMessage`` list (tool calls, results and their errors)."""
    logs: dict[str, ToolCallLog] = {c["id"]: c for c in transcript["tool_calls"]}
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for n, m in enumerate(transcript["messages"]):
        converted: dict[str, Any] = {"id": f"m{n}", "role": m["role"], "content": _content(m)}
        if m["role"] == "assistant":
            converted["source"] = "generate"
            converted["model"] = model_id
            calls = [_tool_call(c["id"], c["function"]["name"], c["function"]["arguments"])
                     for c in m.get("tool_calls", [])]
            if calls:
                converted["tool_calls"] = calls
                names.update((c["id"], c["function"]) for c in calls)
        elif m["role"] == "tool":
            call_id = m.get("tool_call_id", "")
            converted["tool_call_id"] = call_id
            converted["function"] = names.get(call_id) or (logs[call_id]["name"] if call_id in logs else None)
            log = logs.get(call_id)
            if log is not None and not log["ok"]:
                converted["error"] = {"type": "parsing" if log["hallucinated"] else "unknown",
                                      "message": log["hallucinated"] or log["result"]}
        elif m["role"] == "user":
            converted["source"] = "input"
        out.append(converted)
    return out


def _content(m: Message) -> str | list[dict[str, Any]]:
    text = m["content"] or ""
    reasoning = m.get("reasoning_content")
    if m["role"] != "assistant" or not reasoning:
        return text
    return [{"type": "reasoning", "reasoning": reasoning, "redacted": False}, {"type": "text", "text": text}]


def _tool_call(call_id: str, name: str, raw: str) -> dict[str, Any]:
    """An Inspect ``ToolCall``: arguments as an object; arguments that are not one keep their text as the parse error."""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except ValueError:
        arguments = None
    call: dict[str, Any] = {"id": call_id, "function": name, "type": "function",
                            "arguments": arguments if isinstance(arguments, dict) else {}}
    if not isinstance(arguments, dict):
        call["parse_error"] = f"arguments are not a JSON object: {raw}"
    return call


def _usage(record: RunRecord) -> dict[str, Any]:
    """A run's ``ModelUsage``: Inspect's ``input_tokens`` excludes the tokens read from the prefix cache."""
    cached = record.get("cached_prompt_tokens")
    usage: dict[str, Any] = {
        "input_tokens": record["prompt_tokens"] - (cached or 0),
        "output_tokens": record["completion_tokens"],
        "total_tokens": record["prompt_tokens"] + record["completion_tokens"],
    }
    if cached is not None:
        usage["input_tokens_cache_read"] = cached
    if record.get("reasoning_tokens") is not None:
        usage["reasoning_tokens"] = record.get("reasoning_tokens")
    if record["cost_usd"] is not None:
        usage["total_cost"] = record["cost_usd"]
    return usage


def _sum_usage(usages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The sum of ``ModelUsage`` records; an optional count is summed over the runs that have it, cost
    only when every run's is known (a partial sum would understate it)."""
    total: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    cost_known = True
    for u in usages:
        for key, value in u.items():
            total[key] = total.get(key, 0) + value
        cost_known = cost_known and "total_cost" in u
    if not cost_known:
        total.pop("total_cost", None)
    return total


def write_eval(path: Path, header: dict[str, Any], samples: list[dict[str, Any]]) -> None:
    """The ``.eval`` zip: each sample, their summaries, then the header (Inspect's order), written to a
    temporary name and moved in place, so a reader never meets half a file."""
    summaries = [_summary(s) for s in samples]
    partial = path.with_name(path.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=5) as zf:
        for s in samples:
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", _json(s))
        zf.writestr("summaries.json", _json(summaries))
        zf.writestr("header.json", _json(header))
    partial.replace(path)


def _summary(sample: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "epoch", "input", "target", "metadata", "scores", "model_usage", "role_usage", "total_time",
            "working_time", "uuid", "turn_count")
    summary = {k: sample[k] for k in keys}
    # The list shows the input, scores and a few metadata values; the rest is in the sample.
    summary["metadata"] = {k: sample["metadata"][k] for k in ("task", "task_name", "run", "seed")}
    summary["completed"] = True
    summary["retries"] = 0
    summary["message_count"] = len(sample["messages"])
    return summary


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _file_name(header: dict[str, Any]) -> str:
    """Inspect's own pattern, ``<created>_<task>_<model>_<task id>.eval`` (the viewer reads the task from it)."""
    created = re.sub(r"[:+]", "-", str(header["eval"]["created"]))
    return "_".join([_slug(created), _slug(header["eval"]["task"]), _slug(header["eval"]["model"]),
                     header["eval"]["task_id"]]) + ".eval"


def _slug(text: str) -> str:
    """``text`` without the characters Inspect's file-name parser splits on, or a path would hold."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-.") or "x"


def _short_id(*parts: str) -> str:
    """A 22-character id like Inspect's, derived from ``parts``: the same campaign exports the same ids."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:22]


def _mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _stderr(values: list[float]) -> float:
    """Inspect's ``stderr`` metric: the sample standard deviation (ddof 1) over the square root of n."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = _mean(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) / math.sqrt(n)
