"""Local model servers inside real sessions: one per session, gone at the end, faults kept apart."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from .helpers import ROOT, campaign_dir, runs

STANDIN = ROOT / "tests" / "standin_vllm.py"
ECHO_TASK = '''
from pytest_agentic import TaskInstance, task

@task("echo_1", "echo", build=lambda seed: TaskInstance(prompt="Say hello.", files={}, tools=()))
def test_echo(agent):
    run = agent.run()
    assert run.final_answer == "echo: Say hello."
'''


@pytest.fixture
def local_project(pytester):
    """A project whose model is served by a stand-in for `vllm serve`; every start is counted."""
    starts = pytester.path / "starts.txt"
    launcher = pytester.path / "fake-vllm"
    launcher.write_text(f'#!/bin/sh\necho start >> "{starts}"\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IEXEC)
    server = {"kind": "vllm", "model": "standin", "tool_call_parser": "hermes", "executable": str(launcher),
              "require_gpu": False, "health_timeout_s": 60}
    models = {"default": "local", "models": {"local": {
        "model": "openai/standin", "server": server, "price": {"input_per_token": 0, "output_per_token": 0},
        "limits": {"max_retries": 1, "retry_backoff_s": 0.01, "retry_backoff_cap_s": 0.02}}}}
    (pytester.path / "models.yaml").write_text(json.dumps(models))
    pytester.makepyfile(test_echo=ECHO_TASK)
    pytester.starts = starts
    return pytester


def manifest(folder):
    return json.loads((folder / "campaign.json").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_one_server_per_session_under_xdist_and_none_left(local_project):
    result = local_project.runpytest_subprocess("-n", "2", "--runs", "4", "--agentic-out=out")
    result.assert_outcomes(passed=4)
    assert local_project.starts.read_text().splitlines() == ["start"]
    folder = campaign_dir(local_project.path / "out")
    server = manifest(folder)["servers"]["local"]
    assert server["api_base"].startswith("http://127.0.0.1:")
    assert (folder / server["log"]).is_file(), "the server log is kept in the campaign folder"
    assert "standin-vllm: serve standin" in (folder / server["log"]).read_text()
    assert not alive(server["pid"]), "the server outlived its session"


def test_server_dying_mid_campaign_gives_infra_errors(local_project, monkeypatch):
    monkeypatch.setenv("STANDIN_EXIT_AFTER", "2")
    # One run at a time, so that "mid campaign" is the third run (an HTTP model adapts by default).
    result = local_project.runpytest_subprocess("--runs", "4", "--agentic-out=out", "-p", "no:xdist",
                                                "--agentic-concurrency", "1")
    result.assert_outcomes(passed=2, failed=2)
    records = runs(campaign_dir(local_project.path / "out"))
    assert [(r["run"], r["failure_mode"]) for r in records] == [
        (1, None), (2, None), (3, "infra_error"), (4, "infra_error")]
    assert all("Connection" in r["infra_cause"] for r in records[2:])
    result.stdout.fnmatch_lines(["*model 'local': 2 of 4 runs lost to infra_error*"])


def test_server_that_cannot_start_fails_once_before_any_run(local_project, monkeypatch):
    monkeypatch.setenv("STANDIN_CRASH", "1")
    result = local_project.runpytest_subprocess("-n", "2", "--agentic-out=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("CUDA out of memory (simulated)") >= 1
    assert "'local'" in result.stderr.str()
    assert local_project.starts.read_text().splitlines() == ["start"]
    assert not (local_project.path / "out").exists()


def test_vllm_entry_without_vllm_fails_at_start(pytester):
    models = {"models": {"big": {"model": "openai/x", "server": {
        "kind": "vllm", "model": "x", "tool_call_parser": "hermes", "executable": "vllm-not-installed-here"}}}}
    (pytester.path / "models.yaml").write_text(json.dumps(models))
    pytester.makepyfile(test_echo=ECHO_TASK)
    result = pytester.runpytest_subprocess("--model", "big", "--agentic-out=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "vllm-not-installed-here" in result.stderr.str()
    assert not (pytester.path / "out").exists()


def test_the_default_campaign_is_the_embedded_model(pytester):
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--rootdir", str(ROOT), str(ROOT / "tasks"))
    items = [line for line in result.outlines if "::" in line]
    assert len(items) == 30
    assert all(line.endswith(("[smollm2-135m-run1]", "[smollm2-135m-run2]", "[smollm2-135m-run3]"))
               for line in items)


def test_path_option_that_would_move_the_rootdir_is_refused(pytester, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    pytester.makefile(".toml", pyproject="[tool.pytest.ini_options]\naddopts = '-p no:xdist'\n")
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    result = pytester.runpytest_subprocess("--agentic-out", str(elsewhere))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*write it as --agentic-out={elsewhere}*"])
