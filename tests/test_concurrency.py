"""--agentic-concurrency: runs in flight ahead of the item loop, judged in order, every guarantee kept."""

from __future__ import annotations

import json

import pytest

from pytest_agentic.run.models import ModelsFileError, load_registry
from pytest_agentic.run.records import TIMING_FIELDS
from pytest_agentic.run.task import Final

from .fault_server import FaultServer
from .helpers import ROOT, campaign_dir, runs
from .test_reliability import KILLER_TASK

CORE = "task_07 or task_08 or task_09"

SAY_OK = '''
import os
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={}, tools=("fs_list",), reference=[Final("ok")])

@task("say_ok_1", "say_ok", build=build)
def test_say_ok(agent):
    run = agent.run()
    if agent.run_index == 3 and os.environ.get("AGENTIC_TEST_INTERRUPT"):
        raise KeyboardInterrupt  # what Ctrl-C raises in the main thread, here while run 3 is judged
    assert agent.run_index != int(os.environ.get("AGENTIC_TEST_FAIL_RUN", "0"))
    assert run.final_answer == "ok"
'''


def comparable(records):
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in records]


@pytest.fixture
def project(pytester):
    import shutil

    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    return pytester


@pytest.fixture
def endpoint():
    """A local OpenAI-compatible endpoint that answers 'ok' after 0.3 s and counts calls in flight."""
    with FaultServer({"Say ok.": [Final("ok")]}, latency_s=0.3) as server:
        yield server


def say_ok_project(pytester, server, **entry):
    fields = {"model": "openai/ok", "api_base": server.api_base, "price": {"input_per_token": 0.001,
                                                                          "output_per_token": 0.0},
              "limits": {"max_retries": 0}, **entry}
    (pytester.path / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": fields}}))
    pytester.makepyfile(test_say_ok=SAY_OK)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_concurrent_campaign_equals_sequential(project, xdist):
    args = ["tasks", "-p", "no:randomly", "--model", "oracle", "--model", "near-miss", "-m", CORE, "--runs", "2"]
    sequential = project.runpytest_subprocess(*args, "--agentic-out", "seq", "--junitxml", "seq.xml")
    concurrent = project.runpytest_subprocess(*args, "--agentic-out", "conc", "--agentic-concurrency", "5",
                                              "--junitxml", "conc.xml", *xdist)
    sequential.assert_outcomes(passed=6, failed=6, deselected=28)
    concurrent.assert_outcomes(passed=6, failed=6, deselected=0 if xdist else 28)
    a, b = campaign_dir(project.path / "seq"), campaign_dir(project.path / "conc")
    assert comparable(runs(a)) == comparable(runs(b))
    assert len(runs(b)) == 12
    for name in ("pass_rate_by_task.csv", "failure_mode_histogram.csv", "cost_breakdown.csv",
                 "cross_task_consistency.md"):
        assert (a / name).read_text() == (b / name).read_text(), name
    assert sorted(p.relative_to(a) for p in a.rglob("*.json")) == sorted(p.relative_to(b) for p in b.rglob("*.json"))
    assert json.loads((b / "campaign.json").read_text())["concurrency"] == 5
    # The reports carry the same JUnit properties.
    assert junit_properties(project.path / "seq.xml") == junit_properties(project.path / "conc.xml")


def junit_properties(path):
    import xml.etree.ElementTree as ET

    cases = ET.parse(path).getroot().iter("testcase")
    timing = {f"agentic_{name}" for name in TIMING_FIELDS}  # measured times differ from one session to the next
    return {case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")
                               if p.get("name") not in timing] for case in cases}


@pytest.mark.parametrize(("args", "entry", "most"), [
    (["--agentic-concurrency", "4"], {}, 4),
    (["--agentic-concurrency", "6"], {"max_concurrency": 2}, 2),
    (["--agentic-concurrency", "2", "-n", "2"], {}, 4),
], ids=["n4", "model-cap-2", "n2-per-worker"])
def test_never_more_than_n_calls_in_flight(pytester, endpoint, args, entry, most):
    say_ok_project(pytester, endpoint, **entry)
    result = pytester.runpytest_subprocess("--runs", "12", "--agentic-out", "out", *args)
    result.assert_outcomes(passed=12)
    assert endpoint.calls == 12
    assert endpoint.peak <= most
    if "-n" not in args:  # with one process the cap is reached (12 runs of 0.3 s each)
        assert endpoint.peak == most
    assert len(runs(campaign_dir(pytester.path / "out"))) == 12


@pytest.mark.parametrize("how", [["--agentic-concurrency", "1"], ["-o", "agentic_concurrency=1"]],
                         ids=["flag", "ini"])
def test_concurrency_1_sends_one_call_at_a_time(pytester, endpoint, how):
    say_ok_project(pytester, endpoint)
    pytester.runpytest_subprocess("--runs", "4", "--agentic-out", "out", *how).assert_outcomes(passed=4)
    assert endpoint.peak == 1


def test_a_model_capped_at_1_is_sequential(pytester, endpoint):
    say_ok_project(pytester, endpoint, max_concurrency=1)
    pytester.runpytest_subprocess("--runs", "4", "--agentic-out", "out").assert_outcomes(passed=4)
    assert endpoint.peak == 1


def test_budget_no_run_starts_once_spent(pytester, endpoint):
    # Every call costs $0.10 (100 prompt tokens at $0.001). Sequentially a $0.35 budget lets 4 runs
    # start (spent 0, 0.1, 0.2, 0.3); three in flight may add at most the two others that were running.
    say_ok_project(pytester, endpoint)
    result = pytester.runpytest_subprocess("--runs", "12", "--agentic-out", "out", "--agentic-budget", "0.35",
                                           "--agentic-concurrency", "3", "-p", "no:xdist")
    outcomes = result.parseoutcomes()
    records = runs(campaign_dir(pytester.path / "out"))
    assert 4 <= len(records) <= 6, outcomes
    assert outcomes["passed"] == len(records) and outcomes["skipped"] == 12 - len(records)
    # Every run that called the endpoint was judged and recorded: none started and was then dropped.
    assert endpoint.calls == len(records)
    result.stdout.fnmatch_lines([f"*{12 - len(records)} runs skipped: the campaign budget of $0.35 was spent*"])


def test_exitfirst_stops_the_runs_ahead(pytester, endpoint, monkeypatch):
    monkeypatch.setenv("AGENTIC_TEST_FAIL_RUN", "2")
    say_ok_project(pytester, endpoint)
    result = pytester.runpytest_subprocess("--runs", "10", "--agentic-out", "out", "--agentic-concurrency", "2",
                                           "-x", "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    folder = campaign_dir(pytester.path / "out")
    assert [(r["run"], r["passed"]) for r in runs(folder)] == [(1, True), (2, False)]
    assert endpoint.calls < 10, "runs not yet started were cancelled"
    assert json.loads((folder / "campaign.json").read_text())["complete"] is False
    result.stdout.fnmatch_lines(["*runs started ahead and not judged*none is recorded*"])


def test_x_after_the_last_run_leaves_the_campaign_complete(pytester, endpoint, monkeypatch):
    # -x stops at the first failure; when that failure is the last run, nothing was cut.
    monkeypatch.setenv("AGENTIC_TEST_FAIL_RUN", "4")
    say_ok_project(pytester, endpoint)
    result = pytester.runpytest_subprocess("--runs", "4", "--agentic-out", "out", "--agentic-concurrency", "2",
                                           "-x", "-p", "no:randomly", "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    folder = campaign_dir(pytester.path / "out")
    assert sorted((r["run"], r["passed"]) for r in runs(folder)) == [(1, True), (2, True), (3, True), (4, False)]
    assert json.loads((folder / "campaign.json").read_text())["complete"] is True


def test_interrupt_keeps_judged_runs_and_resume_finishes(pytester, endpoint, monkeypatch):
    monkeypatch.setenv("AGENTIC_TEST_INTERRUPT", "1")
    say_ok_project(pytester, endpoint)
    result = pytester.runpytest_subprocess("--runs", "10", "--agentic-out", "out", "--agentic-concurrency", "2",
                                           "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    folder = campaign_dir(pytester.path / "out")
    # Runs 1 and 2 were judged; run 3 (interrupted while judged) and the runs ahead are not recorded.
    assert sorted(r["run"] for r in runs(folder)) == [1, 2]
    assert endpoint.calls < 10
    assert json.loads((folder / "campaign.json").read_text())["complete"] is False

    monkeypatch.delenv("AGENTIC_TEST_INTERRUPT")
    resumed = pytester.runpytest_subprocess("--runs", "10", "--agentic-out", "out", "--agentic-concurrency", "4",
                                            "--agentic-resume", str(folder))
    resumed.assert_outcomes(passed=8)
    assert sorted(r["run"] for r in runs(folder)) == list(range(1, 11))
    assert json.loads((folder / "campaign.json").read_text())["complete"] is True


def test_killed_worker_loses_no_finished_run_under_concurrency(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_crash=KILLER_TASK)
    result = pytester.runpytest_subprocess("-n", "2", "--runs", "5", "--agentic-out", "out",
                                           "--agentic-concurrency", "3")
    by_run = {r["run"]: r for r in runs(campaign_dir(pytester.path / "out"))}
    assert sorted(by_run) == [1, 2, 3, 4, 5]
    assert all(by_run[n]["passed"] for n in (1, 3, 4, 5))
    assert by_run[2]["failure_mode"] == "infra_error" and "crashed" in by_run[2]["infra_cause"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_rescore_under_concurrency_gives_the_same_verdicts(project):
    args = ["tasks", "-p", "no:randomly", "--model", "near-miss", "-m", CORE]
    project.runpytest_subprocess(*args, "--agentic-out", "first")
    first = campaign_dir(project.path / "first")
    project.runpytest_subprocess("tasks", "-p", "no:randomly", "-m", CORE, "--agentic-out=again",
                                 f"--agentic-rescore={first}", "--agentic-concurrency", "4")
    again = campaign_dir(project.path / "again")
    assert [(r["task"], r["run"], r["passed"], r["failure_mode"]) for r in runs(again)] == \
        [(r["task"], r["run"], r["passed"], r["failure_mode"]) for r in runs(first)]


@pytest.mark.parametrize("value", [0, True, "4", 1.5])
def test_max_concurrency_must_be_a_positive_whole_number(tmp_path, value):
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": {"capped": {"model": "openai/x", "max_concurrency": value}}}))
    with pytest.raises(ModelsFileError, match=r"models.yaml: entry 'capped': key 'max_concurrency' must be a whole "
                                              r"number of 1 or more"):
        load_registry(path)


def test_bad_concurrency_values_are_named(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess("--agentic-concurrency", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentic-concurrency: expected 1 or more, got 0*"])
    pytester.makeini("[pytest]\nagentic_concurrency = many\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option agentic_concurrency: expected a whole number, got 'many'*"])


def test_campaign_output_carries_no_raw_import_warnings(pytester, endpoint):
    # litellm's import (on the preload thread, during and after collection) makes pydantic warn about
    # litellm's own TypedDicts; the session must not print that to the user's terminal.
    say_ok_project(pytester, endpoint)
    result = pytester.runpytest_subprocess("--runs", "3", "--agentic-out", "out", "--agentic-concurrency", "3")
    result.assert_outcomes(passed=3)
    output = "\n".join(result.outlines + result.errlines)
    assert "ReadOnly" not in output and "UserWarning" not in output


def test_litellm_heap_is_frozen_once_imported():
    import gc

    from pytest_agentic.run.calls import llm

    litellm = llm.litellm_module()
    assert llm.litellm_module() is litellm
    # Hundreds of thousands of objects live in the permanent generation: full collections skip them.
    assert gc.get_freeze_count() > 100_000


def test_warm_up_call_sends_nothing_and_leaves_the_mock_off(monkeypatch):
    # The preload's warm-up call goes through litellm's OpenAI path, answered by its mock transport.
    import socket

    from pytest_agentic.run.calls import llm

    llm.quiet_import_noise()  # as a session does at its start (the first completion warns too)
    litellm = llm.litellm_module()
    connects = []
    real_connect = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: connects.append(address) or
                        real_connect(self, address))
    llm._warm_up(litellm)
    assert connects == []
    assert litellm.network_mock is False
