"""Changed tasks are visible: the comparison names tasks whose content hash differs, and campaign.json
names the benchmark revision."""

from __future__ import annotations

import json
import shutil

from pytest_agentic.verdicts import compare
from pytest_agentic.run.task import BENCHMARK_REVISION

from .helpers import ROOT, campaign_dir, runs
from .records import scores, write_campaign


def test_tasks_whose_content_changed_are_named_per_task_and_in_the_verdict():
    then, now = scores({"task_08": 3, "task_09": 0, "task_01": 2}), scores({"task_08": 3, "task_09": 3, "task_01": 2})
    for r in then:
        r["task_hash"] = "a" * 64
    for r in now:
        r["task_hash"] = "b" * 64 if r["task"] in ("task_08", "task_09") else "a" * 64
    result = compare.compare(then, now, then_id="old", now_id="new")
    rows = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert {k: v for k, v in rows.items() if k.startswith("task_")} == {
        "task_01": "flat", "task_08": "flat; task changed", "task_09": "up; task changed"}
    sentence = result.models[0].sentence()
    assert "caveat: 2 task(s) changed" in sentence and "task_08, task_09" in sentence
    assert "changed tasks: task_08, task_09" in compare.markdown(result)


def test_campaigns_without_hashes_are_not_said_to_differ():
    plain = compare.compare(scores({"task_08": 3}), scores({"task_08": 3}))
    assert plain.models[0].changed_tasks == [] and "caveat" not in plain.models[0].sentence()


def test_a_campaign_names_its_revision_and_the_tasks_that_changed_since_the_baseline(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    old = scores({"task_07": 3, "task_08": 3}, model="oracle")
    for r in old:
        r["task_hash"] = "0" * 64 if r["task"] == "task_08" else None
    baseline = write_campaign(pytester.path / "baseline", old)
    result = pytester.runpytest_subprocess("tasks", "--model", "oracle", "-m", "task_07 or task_08",
                                           "--agentic-out", "out", f"--agentic-compare={baseline}")
    result.assert_outcomes(passed=6)
    folder = campaign_dir(pytester.path / "out")
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["benchmark_revision"] == BENCHMARK_REVISION
    assert manifest["compared_with"]["models"][0]["changed_tasks"] == ["task_08"]
    assert {r["task"] for r in runs(folder)} == {"task_07", "task_08"}
    summary = (folder / "summary.md").read_text()
    assert f"revision {BENCHMARK_REVISION}" in summary and "flat; task changed" in summary
    result.stdout.fnmatch_lines(["*caveat: 1 task(s) changed*task_08*"])
