"""--agentic-shard K/N and agentic-merge: shards on several machines make one campaign."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from pytest_agentic.report.cli import merge_main

from .helpers import ROOT, runs
from pytest_agentic.run.records import TIMING_FIELDS

CORE = "task_07 or task_08 or task_09"
ARGS = ("tasks", "-p", "no:randomly", "--model", "oracle", "--model", "near-miss", "-m", CORE, "--runs", "2")


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    """One campaign run whole, and the same campaign as three shards (one under concurrency, one under -n 2)."""
    pytester_root = tmp_path_factory.mktemp("shards")
    shutil.copytree(ROOT / "tasks", pytester_root / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester_root / "models.yaml")
    import subprocess
    import sys

    def session(*extra):
        return subprocess.run([sys.executable, "-m", "pytest", *ARGS, *extra], cwd=pytester_root,
                              capture_output=True, text=True)

    whole = session("--agentic-out=whole")
    shards = [session("--agentic-out=shards", "--agentic-shard", "1/3"),
              session("--agentic-out=shards", "--agentic-shard", "2/3", "--agentic-concurrency", "3"),
              session("--agentic-out=shards", "--agentic-shard", "3/3", "-n", "2")]
    assert whole.returncode == 1, whole.stdout[-2000:]
    folders = sorted((pytester_root / "shards").iterdir())
    assert [f.name[-9:] for f in folders] == ["shard1of3", "shard2of3", "shard3of3"]
    return pytester_root, next((pytester_root / "whole").iterdir()), folders, [s.stdout for s in shards]


def comparable(records):
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in records]


def without_timing(text):
    """A table or summary less what changes from one session to the next (ids, clock times, durations)."""
    lines = [line for line in text.splitlines() if not line.startswith(("# Campaign", "- started"))]
    if "## Token economy" in lines:  # seconds per pass and to the answer: measured, so they differ
        start = lines.index("## Token economy")
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
        lines = lines[:start] + [line.rsplit("|", 3)[0] if line.startswith("|") else line for line in lines[start:end]] \
            + lines[end:]
    return [",".join(line.split(",")[:-1]) if line.count(",") > 3 else line for line in lines]


def test_shards_are_balanced_and_disjoint(campaigns):
    _, whole, shards, _ = campaigns
    sizes = [len(runs(s)) for s in shards]
    assert sum(sizes) == len(runs(whole)) == 12
    assert max(sizes) - min(sizes) <= 1
    keys = [{(r["model"], r["task"], r["run"]) for r in runs(s)} for s in shards]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])


def test_three_shards_merged_equal_one_run(campaigns, tmp_path, capsys):
    _, whole, shards, _ = campaigns
    assert merge_main([*map(str, shards), "--out", str(tmp_path)]) == 0
    merged = next(tmp_path.iterdir())
    out = capsys.readouterr().out
    assert f"merged 3 shards into {merged}" in out and f"wrote {merged / 'report.html'}" in out
    assert comparable(runs(merged)) == comparable(runs(whole))
    for name in ("pass_rate_by_task.csv", "failure_mode_histogram.csv", "cost_breakdown.csv",
                 "cross_task_consistency.md", "summary.md", "tool_calls_by_task.csv"):
        assert without_timing((merged / name).read_text()) == without_timing((whole / name).read_text()), name
    assert sorted(p.relative_to(merged) for p in (merged / "transcripts").rglob("*.json")) == \
        sorted(p.relative_to(whole) for p in (whole / "transcripts").rglob("*.json"))
    manifest, single = (json.loads((f / "campaign.json").read_text()) for f in (merged, whole))
    assert manifest["complete"] is True and manifest["runs_recorded"] == 12
    assert [s["index"] for s in manifest["shards"]] == [1, 2, 3]
    assert [s["campaign_id"] for s in manifest["shards"]] == [s.name for s in shards]
    for key in ("seed", "runs", "models", "tasks", "harness_version", "benchmark"):
        assert manifest[key] == single[key], key
    # The merged folder has its page too, with every run's transcript, as the single session's has.
    page, single_page = ((f / "report.html").read_text() for f in (merged, whole))
    anchors = sorted(set(re.findall(r'<details[^>]* id="(task_0[789]-run\d-[\w-]+)"', single_page)))
    assert len(anchors) == 12
    assert anchors == sorted(set(re.findall(r'<details[^>]* id="(task_0[789]-run\d-[\w-]+)"', page)))


def test_a_missing_shard_makes_an_incomplete_campaign(campaigns, tmp_path):
    _, _, shards, _ = campaigns
    assert merge_main([str(shards[0]), str(shards[2]), "--out", str(tmp_path)]) == 0
    merged = next(tmp_path.iterdir())
    assert json.loads((merged / "campaign.json").read_text())["complete"] is False
    assert "shards 2 of 3 are missing" in (merged / "summary.md").read_text()


@pytest.mark.parametrize(("key", "change", "needle"), [
    ("seed", lambda m: m.update(seed=7), "its seed"),
    ("harness_version", lambda m: m.update(harness_version="0.0.1"), "its harness version"),
    ("models", lambda m: m["models"][0]["params"].update(temperature=0.9), "its models (their models.yaml entries)"),
    ("tasks", lambda m: next(iter(m["tasks"].values())).update(content_hash="0" * 64), "the shards ran different task code"),
    ("shard", lambda m: m["shard"].update(count=4), "split the campaign differently"),
    ("shard", lambda m: m["shard"].update(index=1), "shard 1 is given twice"),
])
def test_mismatched_shards_are_refused(campaigns, tmp_path, capsys, key, change, needle):
    _, _, shards, _ = campaigns
    altered = tmp_path / "altered"
    shutil.copytree(shards[1], altered)
    manifest = json.loads((altered / "campaign.json").read_text())
    change(manifest)
    (altered / "campaign.json").write_text(json.dumps(manifest))
    assert merge_main([str(shards[0]), str(altered), str(shards[2]), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert needle in err, err
    assert str(altered) in err or "split" in err
    assert not (tmp_path / "out").exists(), "nothing is written for refused shards"


def test_a_campaign_that_is_not_a_shard_is_refused(campaigns, tmp_path, capsys):
    _, whole, shards, _ = campaigns
    assert merge_main([str(shards[0]), str(whole), "--out", str(tmp_path)]) == 2
    assert "not a shard campaign" in capsys.readouterr().err


def test_bad_shard_values_are_named(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    for value, needle in (("4/3", "expected K/N with 1 <= K <= N, got '4/3'"), ("half", "expected K/N such as 2/3")):
        result = pytester.runpytest_subprocess("--agentic-shard", value)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*--agentic-shard: {needle}*"])
