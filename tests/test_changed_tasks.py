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


def test_campaigns_of_two_revisions_say_per_task_which_tasks_were_revised():
    then, now = scores({"task_01": 3, "task_08": 3}), scores({"task_01": 3, "task_08": 2})
    for r in [*then, *now]:
        r["task_hash"] = ("b" if r in now and r["task"] == "task_08" else "a") * 64
    result = compare.compare(then, now, then_id="old", now_id="new", revisions=(2, 3))
    rows = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert rows["task_01"] == "flat" and rows["task_08"] == "down; revision 2 -> 3"
    assert "revision 2 then, revision 3 now; content hash differs: task_08" in result.models[0].sentence()
    text = compare.markdown(result)
    assert "- benchmark revision 2 then, revision 3 now: task_08 differ between them" in text
    same = compare.compare(then, now, revisions=(3, 3))
    assert "revision" not in compare.markdown(same) and "task changed" in compare.markdown(same)


def test_the_leaderboard_names_the_tasks_that_differ_between_revisions(tmp_path, capsys):
    from pytest_agentic.verdicts import leaderboard

    root = tmp_path / "results"
    for name, revision, hashes in (("c2", 2, {"task_01": "a", "task_08": "b"}),
                                   ("c3", 3, {"task_01": "a", "task_08": "c"}),
                                   ("c3b", 3, {"task_01": "a", "task_08": "c"})):
        write_campaign(root / name, scores({"task_01": 3, "task_08": 2}), benchmark_revision=revision,
                       tasks={t: {"content_hash": h * 64} for t, h in hashes.items()})
    assert leaderboard.main([str(root)]) == 0
    out = capsys.readouterr().out
    assert "- task_08 differs between the campaigns (revision 2: c2; revision 3: c3, c3b)" in out
    assert "task_01 differs" not in out
    header = next(line for line in out.splitlines() if line.startswith("|"))
    assert [c.strip() for c in header.strip("|").split("|")][3] == "revision"
    write_campaign(tmp_path / "same" / "a", scores({"task_01": 3}), benchmark_revision=3)
    assert leaderboard.main([str(tmp_path / "same")]) == 0
    assert "differs" not in capsys.readouterr().out
