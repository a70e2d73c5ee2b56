"""A rescore changes verdicts and what follows from them, never what the runs spent."""

from __future__ import annotations

import csv
import json
import re
import shutil

import pytest

from .helpers import ROOT, campaign_dir, runs

#: Columns that follow from verdicts (passes, rates and their intervals, anything per pass); every other column of
#: every table is what the runs spent or did, and must come through a rescore unchanged.
VERDICT_COLUMN = re.compile(r"^(passed|pass_rate|ci95_.*|pass[@^]\d+|se_clustered|design_effect|wilson95_.*|mdc80|"
                            r"runs_for_10pts|.*_per_pass.*)$")
#: Tables whose every column is a verdict (the failure modes and their counts).
VERDICT_TABLES = {"failure_mode_histogram.csv"}
KEYS = ("model", "task", "failure_mode")
#: What a run record says it spent (``run.records.SPEND_FIELDS``, named here so the test stands apart from it).
SPEND_FIELDS = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "turns", "reasoning_tokens",
                "cached_prompt_tokens", "tokens_per_turn_mean", "tokens_per_turn_max", "turns_to_answer",
                "seconds_to_answer")


@pytest.fixture
def project(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    return pytester


def table(path):
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return {tuple(row.get(k) for k in KEYS): row for row in rows}


def test_a_rescore_carries_every_spend_field_and_changes_only_verdicts(project):
    args = ("tasks", "-p", "no:randomly", "--model", "oracle", "--model", "near-miss", "-m", "task_07 or task_09",
            "--runs", "2")
    project.runpytest_subprocess(*args, "--agentic-out=old").assert_outcomes(passed=4, failed=4)
    old = campaign_dir(project.path / "old")
    # One run's recorded final answer made wrong: the rescore must change its verdict (and only that); the
    # replayed reply is shorter than the recorded one, so a replay's own count of tokens would differ too.
    path = old / "transcripts/oracle/task_09-run2.json"
    transcript = json.loads(path.read_text())
    [m for m in transcript["messages"] if m["role"] == "assistant"][-1]["content"] = "AVERAGE: 1"
    path.write_text(json.dumps(transcript))

    project.runpytest_subprocess("tasks", "-p", "no:randomly", f"--agentic-rescore={old}",
                                 "--agentic-out=new").assert_outcomes(passed=3, failed=5)
    new = campaign_dir(project.path / "new")

    before = {(r["model"], r["task"], r["run"]): r for r in runs(old)}
    after = {(r["model"], r["task"], r["run"]): r for r in runs(new)}
    assert sorted(before) == sorted(after) and len(after) == 8
    assert after[("oracle", "task_09", 2)]["passed"] is False and before[("oracle", "task_09", 2)]["passed"] is True
    for key, record in after.items():
        for field in SPEND_FIELDS:
            assert (field in record, record.get(field)) == (field in before[key], before[key].get(field)), (key, field)

    compared: set[str] = set()
    for name in sorted(p.name for p in old.glob("*.csv")):
        then, now = table(old / name), table(new / name)
        if name in VERDICT_TABLES:
            continue
        assert sorted(then) == sorted(now), name
        for key, row in then.items():
            for column, value in row.items():
                if VERDICT_COLUMN.match(column):
                    continue
                assert now[key][column] == value, f"{name}: {key} {column}: {value} then, {now[key][column]} now"
                compared.add(f"{name}:{column}")
    # Every table but the histogram of verdicts was compared, and the spend columns among them.
    assert {n.split(":")[0] for n in compared} == {p.name for p in old.glob("*.csv")} - VERDICT_TABLES
    for column in ("token_economy.csv:tokens_per_turn_mean", "token_economy.csv:tokens_per_turn_max",
                   "token_economy.csv:seconds_to_answer_mean", "token_economy.csv:cached_prompt_tokens",
                   "token_economy.csv:reasoning_tokens", "token_economy.csv:completion_tokens",
                   "token_economy.csv:turns_to_answer_mean", "cost_breakdown.csv:total_cost_usd",
                   "tool_calls_by_task.csv:turns_mean", "tool_calls_by_task.csv:latency_s_mean"):
        assert column in compared, column
