"""Reliability: endpoint faults, lost workers, interrupts and resume, budgets, secrets, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .fault_server import FaultServer
from .helpers import ROOT, campaign_dir, runs
from .test_tasks_proven import MODULES, load, task_of

CORE = "task_07 or task_08 or task_09"
FAST_RETRIES = {"max_retries": 8, "retry_backoff_s": 0.01, "retry_backoff_cap_s": 0.05,
                "request_timeout_s": 1, "max_retry_wait_s": 30}


def oracle_solutions():
    """What the fault server plays: each shipped task's reference, keyed by its prompt."""
    solutions = {}
    for path in MODULES:
        instance = task_of(load(path)).build(0)
        solutions[instance.prompt] = instance.reference
    return solutions


@pytest.fixture
def project(pytester):
    import shutil

    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    return pytester


def models_file(pytester, server, *, limits=FAST_RETRIES, price=(0, 0), key_env=None):
    entry = {"model": "openai/oracle", "api_base": server.api_base, "limits": limits,
             "price": {"input_per_token": price[0], "output_per_token": price[1]}}
    if key_env:
        entry["api_key_env"] = key_env
    (pytester.path / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": entry}}))


def outcomes(folder):
    return [(r["task"], r["run"], r["passed"], r["failure_mode"]) for r in runs(folder)]


def test_transient_faults_change_no_outcome(project):
    with FaultServer(oracle_solutions(), fault_rate=0.0) as clean:
        models_file(project, clean)
        project.runpytest_subprocess("tasks", "-m", CORE, "--agentic-out", "clean")
    with FaultServer(oracle_solutions(), fault_rate=0.3, seed=3, stall_s=1.5) as faulty:
        models_file(project, faulty)
        result = project.runpytest_subprocess("tasks", "-m", CORE, "--agentic-out", "faulty")
    result.assert_outcomes(passed=9)
    assert sum(faulty.faults.values()) >= 3, faulty.faults
    assert len(faulty.faults) >= 3, f"want several kinds of fault, got {faulty.faults}"
    before, after = campaign_dir(project.path / "clean"), campaign_dir(project.path / "faulty")
    assert outcomes(after) == outcomes(before)
    assert len(outcomes(after)) == 9
    # A 429 is waited out and sent again (counted apart, not a retry); every other fault is a retry.
    assert sum(r["tags"]["retries"] + r["tags"].get("rate_limited", 0) for r in runs(after)) == \
        sum(faulty.faults.values())


def test_endpoint_down_is_infra_error_and_said_once(project):
    limits = {**FAST_RETRIES, "max_retries": 2}
    # Faults, not refusals: a 429 is waited out within its own bound (tests/test_adaptive.py, a dead quota).
    with FaultServer(oracle_solutions(), fault_rate=1.0, stall_s=1.2, kinds=("500", "503", "timeout", "drop")) as down:
        models_file(project, down, limits=limits)
        result = project.runpytest_subprocess("tasks", "-m", "task_09", "--agentic-out", "out")
    result.assert_outcomes(failed=3)
    records = runs(campaign_dir(project.path / "out"))
    assert [r["failure_mode"] for r in records] == ["infra_error"] * 3
    assert all(r["infra_cause"] and "retries" in r["infra_cause"] for r in records)
    result.stdout.fnmatch_lines(["*the endpoint of model 'local' looks down: all 3 runs failed with infra_error*"])
    assert down.calls == 3 * 3  # each run: one call and two retries, then it stops


KILLER_TASK = '''
import os, signal, time
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={}, tools=("fs_list",), reference=[Final("ok")])

@task("crash_1", "crash", build=build)
def test_crash(agent):
    run = agent.run()
    if agent.run_index == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-run
    if agent.run_index == 3 and os.environ.get("AGENTIC_TEST_STALL"):
        time.sleep(120)
    assert run.final_answer == "ok"
'''


def scripted_project(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_crash=KILLER_TASK)


def test_killed_worker_loses_no_finished_run(pytester):
    scripted_project(pytester)
    result = pytester.runpytest_subprocess("-n", "2", "--runs", "5", "--agentic-out", "out")
    records = runs(campaign_dir(pytester.path / "out"))
    by_run = {r["run"]: r for r in records}
    assert sorted(by_run) == [1, 2, 3, 4, 5]
    assert all(by_run[n]["passed"] for n in (1, 3, 4, 5))
    assert by_run[2]["failure_mode"] == "infra_error"
    assert "crashed" in by_run[2]["infra_cause"]
    assert json.loads((campaign_dir(pytester.path / "out") / "campaign.json").read_text())["runs_recorded"] == 5
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_interrupted_campaign_resumes_and_runs_each_run_once(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_crash=KILLER_TASK.replace("if agent.run_index == 2:", "if False:"))
    env = {**os.environ, "AGENTIC_TEST_STALL": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--runs", "4", "--agentic-out", "out", "-p", "no:xdist"],
                            cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            folders = list((pytester.path / "out").glob("*/runs.jsonl")) if (pytester.path / "out").exists() else []
            if folders and len(folders[0].read_text().splitlines()) >= 2:
                break
            time.sleep(0.2)
        time.sleep(0.5)  # run 3 is now stalled inside its test
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=60)[0].decode()
    finally:
        proc.kill()
    folder = campaign_dir(pytester.path / "out")
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is False, output
    assert sorted(r["run"] for r in runs(folder)) == [1, 2]
    assert "INCOMPLETE" in (folder / "summary.md").read_text()

    result = pytester.runpytest_subprocess("--runs", "4", "--agentic-out", "out", "--agentic-resume", str(folder))
    result.assert_outcomes(passed=2)
    records = runs(folder)
    assert sorted(r["run"] for r in records) == [1, 2, 3, 4]
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is True
    assert len(manifest["resumed_at"]) == 1
    assert len(list((pytester.path / "out").iterdir())) == 1, "resume writes into the same folder"


def test_resume_needs_the_same_seed(pytester):
    scripted_project(pytester)
    (pytester.path / "old").mkdir()
    (pytester.path / "old" / "campaign.json").write_text(json.dumps({"seed": 5}))
    result = pytester.runpytest_subprocess("--agentic-resume", "old", "--agentic-seed", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentic-resume=old: this session is not the campaign it resumes*",
                                 "*- seed: the campaign used seed 5; this session seed 0"])


def test_cost_budget_skips_the_remaining_runs(project):
    with FaultServer(oracle_solutions()) as server:
        models_file(project, server, price=(0.001, 0.0))  # 0.1 dollars a call, two calls a task_09 run
        # One run at a time: which runs start is then exact (runs in flight all finish, see test_concurrency).
        result = project.runpytest_subprocess("tasks", "-m", "task_09", "--runs", "5", "--agentic-out", "out",
                                              "--agentic-budget", "0.5", "-p", "no:xdist", "--agentic-concurrency", "1")
    result.assert_outcomes(passed=3, skipped=2)
    folder = campaign_dir(project.path / "out")
    assert len(runs(folder)) == 3
    assert "2 runs skipped: the campaign budget of $0.5 was spent" in (folder / "summary.md").read_text()
    result.stdout.fnmatch_lines(["*2 runs skipped: the campaign budget of $0.5 was spent*"])


def test_a_planted_key_appears_in_no_artefact(project, monkeypatch):
    key = "sk-planted-7f3a9c1e5b2d4086"
    monkeypatch.setenv("AGENTIC_PLANTED_API_KEY", key)
    with FaultServer(oracle_solutions(), echo_auth=True) as server:
        models_file(project, server, key_env="AGENTIC_PLANTED_API_KEY")
        result = project.runpytest_subprocess("tasks", "-m", CORE, "--agentic-out", "out", "--junitxml", "junit.xml",
                                              "-n", "2")
    folder = campaign_dir(project.path / "out")
    written = [p for p in folder.rglob("*") if p.is_file()] + [project.path / "junit.xml"]
    assert len(written) > 10
    for path in written:
        assert key not in path.read_text(errors="replace"), f"the key leaked into {path}"
    assert key not in result.stdout.str() and key not in result.stderr.str()
    transcripts = "".join(p.read_text() for p in (folder / "transcripts").rglob("*.json"))
    assert "Bearer [REDACTED]" in transcripts, "the endpoint did echo the key; it must arrive masked"


def test_broken_task_module_fails_before_any_model_call(pytester):
    scripted_project(pytester)
    pytester.makepyfile(test_broken="from pytest_agentic import task\ndef build(seed):\n    return (\n")
    result = pytester.runpytest_subprocess("--agentic-out", "out")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting test_broken.py*"])
    assert not (pytester.path / "out").exists()


def test_task_whose_build_fails_is_named_at_collection(pytester):
    scripted_project(pytester)
    pytester.makepyfile(test_bad='''
        from pytest_agentic import task
        def build(seed):
            raise KeyError("workspace template")
        @task("bad_1", "bad", build=build)
        def test_bad(agent):
            agent.run()
    ''')
    result = pytester.runpytest_subprocess("test_bad.py", "--agentic-out", "out")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*task bad_1 (bad), seed 0: build() failed: KeyError*workspace template*"])
    assert not (pytester.path / "out").exists()


@pytest.mark.parametrize(("args", "needle"), [
    (["--runs", "0"], "--runs: expected 1 or more, got 0"),
    (["--runs", "three"], "--runs: expected a whole number, got 'three'"),
    (["--agentic-seed", "-4"], "--agentic-seed: expected 0 or more"),
    (["--agentic-budget", "free"], "--agentic-budget: expected dollars as a number"),
])
def test_bad_option_values_are_named(pytester, args, needle):
    scripted_project(pytester)
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert needle in result.stderr.str()


@pytest.mark.parametrize(("value", "needle"), [
    ("0", "ini option agentic_runs: expected 1 or more, got 0"),
    ("-2", "ini option agentic_runs: expected 1 or more, got -2"),
    ("three", "ini option agentic_runs: expected a whole number, got 'three'"),
])
def test_bad_runs_ini_values_are_named(pytester, value, needle):
    # The ini value is held to what --runs accepts (0 and negative numbers used to be taken).
    scripted_project(pytester)
    pytester.makeini(f"[pytest]\nagentic_runs = {value}\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert needle in result.stderr.str()


def test_unknown_marker_in_selection_is_an_error(project):
    (project.path / "models.yaml").write_text((ROOT / "models.yaml").read_text())
    result = project.runpytest_subprocess("tasks", "--strict-markers", "--model", "oracle", "-m", "task_11 or task_09")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*-m 'task_11 or task_09': no marker named 'task_11'; task markers: task_0*"])
    ok = project.runpytest_subprocess("tasks", "--strict-markers", "--model", "oracle", "-m", "task_09 and not wrong_answer",
                                      "--collect-only", "-q")
    assert ok.ret == pytest.ExitCode.OK
