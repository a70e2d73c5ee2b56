"""End to end: real pytest sessions on the shipped tasks, plain and under xdist."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from .helpers import ROOT, campaign_dir, runs
from pytest_agentic.run.records import TIMING_FIELDS

CORE_MARKERS = "task_07 or task_08 or task_09"


@pytest.fixture
def project(pytester):
    """A copy of the benchmark (tasks and models file) in a fresh folder."""
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    return pytester


def session(pytester, *args: str):
    return pytester.runpytest_subprocess("tasks", "--strict-markers", "-p", "no:randomly", *args)


def comparable(records):
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in records]


def test_oracle_passes_the_three_core_tasks(project):
    result = session(project, "--model", "oracle", "-m", CORE_MARKERS, "--agentic-out", "out")
    result.assert_outcomes(passed=9)
    records = runs(campaign_dir(project.path / "out"))
    assert len(records) == 9
    assert all(r["passed"] and r["failure_mode"] is None for r in records)
    assert {(r["task"], r["run"]) for r in records} == {(t, n) for t in ("task_07", "task_08", "task_09")
                                                        for n in (1, 2, 3)}
    result.stdout.fnmatch_lines(["*agentic campaign*", "*oracle*ALL*9/9*", "campaign written to *"])


def test_near_miss_fails_every_run_as_wrong_answer(project):
    result = session(project, "--model", "near-miss", "-m", CORE_MARKERS, "--agentic-out", "out")
    result.assert_outcomes(failed=9)
    records = runs(campaign_dir(project.path / "out"))
    assert len(records) == 9
    assert [r["failure_mode"] for r in records] == ["wrong_answer"] * 9
    assert all(r["reason"] for r in records)


@pytest.mark.parametrize("model", ["oracle", "near-miss"])
def test_xdist_gives_the_same_campaign(project, model):
    plain = session(project, "--model", model, "-m", CORE_MARKERS, "--agentic-out", "plain")
    dist = session(project, "--model", model, "-m", CORE_MARKERS, "--agentic-out", "dist", "-n", "2")
    assert plain.ret == dist.ret
    a, b = campaign_dir(project.path / "plain"), campaign_dir(project.path / "dist")
    assert comparable(runs(a)) == comparable(runs(b))
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    assert len(list((b / "transcripts").rglob("*.json"))) == 9
    assert (a / "pass_rate_by_task.csv").read_text() == (b / "pass_rate_by_task.csv").read_text()


def test_failure_modes_select_items_next_session(project):
    session(project, "--model", "near-miss", "-m", CORE_MARKERS, "--agentic-out", "out")
    result = project.runpytest_subprocess("tasks", "--strict-markers", "--model", "near-miss",
                                          "-m", "wrong_answer", "--collect-only", "-q")
    selected = [line for line in result.outlines if "::" in line]
    assert len(selected) == 9
    assert all("near-miss-run" in line for line in selected)
    none = project.runpytest_subprocess("tasks", "--strict-markers", "--model", "near-miss",
                                        "-m", "gave_up_mid_plan", "--collect-only", "-q")
    assert not [line for line in none.outlines if "::" in line]
    # A later session that runs other items keeps what was remembered of these.
    session(project, "--model", "oracle", "-m", "task_07", "--agentic-out", "out2")
    still = project.runpytest_subprocess("tasks", "--model", "near-miss", "-m", "wrong_answer", "--collect-only", "-q")
    assert len([line for line in still.outlines if "::" in line]) == 9


def test_task_marker_selects_one_task_with_readable_ids(project):
    result = project.runpytest_subprocess("tasks", "--strict-markers", "--model", "oracle", "--model", "near-miss",
                                          "--runs", "2", "-m", "task_09", "--collect-only", "-q")
    ids = [line.split("[", 1)[1].rstrip("]") for line in result.outlines if "::" in line]
    assert ids == ["oracle-run1", "oracle-run2", "near-miss-run1", "near-miss-run2"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_junit_xml_carries_mode_tags_tokens_and_cost(project, xdist):
    session(project, "--model", "near-miss", "-m", "task_09", "--agentic-out", "out", "--junitxml", "junit.xml",
            *xdist)
    cases = list(ET.parse(project.path / "junit.xml").getroot().iter("testcase"))
    assert len(cases) == 3
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert props["agentic_failure_mode"] == "wrong_answer"
        assert props["agentic_task"] == "task_09"
        assert int(props["agentic_prompt_tokens"]) > 0
        assert "quick_fail=" in props["agentic_tags"]
        assert float(props["agentic_cost_usd"]) == 0.0


def test_campaign_folder_has_every_artefact(project):
    session(project, "--model", "oracle", "-m", "task_08", "--agentic-out", "out")
    folder = campaign_dir(project.path / "out")
    for name in ("campaign.json", "runs.jsonl", "pass_rate_by_task.csv", "failure_mode_histogram.csv",
                 "tool_calls_by_task.csv", "cost_breakdown.csv", "cross_task_consistency.md", "summary.md"):
        assert (folder / name).is_file(), name
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is True
    assert manifest["runs"] == 3 and manifest["seed"] == 0
    assert manifest["models"][0]["name"] == "oracle"
    assert len(manifest["tasks"]["task_08"]["content_hash"]) == 64
    record = runs(folder)[0]
    for key in ("task", "model", "run", "passed", "failure_mode", "tags", "tool_calls", "turns",
                "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "transcript"):
        assert key in record, key
    transcript = json.loads((folder / record["transcript"]).read_text())
    assert transcript["messages"][1]["role"] == "user"
    assert transcript["tool_calls"][0]["result"].startswith("ERROR:")  # task_08's injected fault
    cost = (folder / "cost_breakdown.csv").read_text().splitlines()
    assert cost[0].startswith("model,runs,judged,passed,prompt_tokens,completion_tokens,total_cost_usd,cost_per_pass_usd")


def test_a_users_own_task_in_their_own_repo(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle:\n    model: agentic-scripted/oracle\n")
    pytester.makepyfile(test_mine='''
        from pytest_agentic import Final, TaskInstance, ToolCall, task

        def build(seed):
            return TaskInstance(prompt="What is in answer.txt?", files={"answer.txt": f"{seed + 41}"},
                                tools=("fs_read",), reference=[ToolCall("fs_read", {"path": "answer.txt"}), Final("41")])

        @task("my_task_1", "read_answer", build=build, limits={"max_turns": 4})
        def test_read_answer(agent):
            run = agent.run()
            assert run.final_answer == "41"
            assert run.tool_calls[0]["result"] == "41"
    ''')
    result = pytester.runpytest_subprocess("--strict-markers", "-m", "my_task_1", "--runs", "2", "--agentic-out", "out")
    result.assert_outcomes(passed=2)
    assert [r["task"] for r in runs(campaign_dir(pytester.path / "out"))] == ["my_task_1", "my_task_1"]


def test_plain_tests_write_no_campaign(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess("--agentic-out", "out")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "out").exists()
