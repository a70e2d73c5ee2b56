"""Synthetic run records for the pure-function tests (no session needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def record(task: str, run: int, passed: bool, *, model: str = "m", mode: str | None = None,
           cost: float | None = 0.001, name: str = "") -> dict[str, Any]:
    if not passed and mode is None:
        mode = "wrong_answer"
    return {"task": task, "task_name": name or f"name_{task}", "model": model, "run": run, "seed": 0,
            "nodeid": f"tasks/test_{task}.py::test[{model}-run{run}]", "passed": passed,
            "failure_mode": None if passed else mode, "tags": {}, "tool_calls": 1, "turns": 2,
            "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": cost, "latency_s": 0.1,
            "stop_reason": "final_answer", "infra_cause": None, "reason": None,
            "transcript": f"transcripts/{model}/{task}-run{run}.json", "task_hash": None, "sandbox": None}


def scores(per_task: dict[str, int], runs: int = 3, model: str = "m", cost: float | None = 0.001) -> list[dict[str, Any]]:
    """Records where task t passed its first per_task[t] runs out of ``runs``."""
    return [record(t, n, n <= k, model=model, cost=cost) for t, k in per_task.items() for n in range(1, runs + 1)]


def write_campaign(folder: Path, records: list[dict[str, Any]], **manifest: Any) -> Path:
    folder.mkdir(parents=True)
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "campaign.json").write_text(json.dumps({"campaign_id": folder.name, **manifest}))
    return folder


#: The published Nemotron Nano 3 30B campaigns (2026-05-21 then 2026-05-25), task by task.
NANO_THEN = {"task_01": 1, "task_02": 0, "task_03": 1, "task_04": 1, "task_05": 0, "task_06": 1, "task_07": 3,
             "task_08": 3, "task_09": 0, "task_10": 0}
NANO_NOW = {"task_01": 3, "task_02": 1, "task_03": 2, "task_04": 0, "task_05": 1, "task_06": 2, "task_07": 3,
            "task_08": 3, "task_09": 0, "task_10": 0}
