"""A resume continues the same campaign (its models, tasks, runs, seed, revision) or refuses at start, naming what
differs and what to run instead; the command an incomplete campaign prints runs as pasted, from any folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ROOT, campaign_dir, runs

#: The scripted models, the default one plays wrong answers: a resume that took it instead of the campaign's
#: model would show at once.
MODELS = """default: near-miss
models:
  oracle: {model: agentic-scripted/oracle, price: {input_per_token: 0.0, output_per_token: 0.0}}
  near-miss: {model: agentic-scripted/near-miss, price: {input_per_token: 0.0, output_per_token: 0.0}}
"""


@pytest.fixture
def project(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    (pytester.path / "models.yaml").write_text(MODELS)
    return pytester


def session(pytester, *args):
    return pytester.runpytest_subprocess("tasks", "-p", "no:randomly", *args)


def keys(folder):
    return sorted((r["model"], r["task"], r["run"]) for r in runs(folder))


def snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def cut(folder, keep):
    """The folder as a session stopped after its first ``keep`` runs would have left it."""
    lines = (folder / "runs.jsonl").read_text().splitlines()
    (folder / "runs.jsonl").write_text("".join(line + "\n" for line in lines[:keep]))
    manifest = json.loads((folder / "campaign.json").read_text())
    (folder / "campaign.json").write_text(json.dumps({**manifest, "complete": False}))


def test_a_resume_with_another_model_is_refused_and_a_finished_campaign_has_nothing_to_resume(project):
    session(project, "--model", "oracle", "-m", "task_09", "--runs", "2", "--agentic-out=out").assert_outcomes(passed=2)
    folder = campaign_dir(project.path / "out")
    before = snapshot(folder)

    other = session(project, "--model", "near-miss", "-m", "task_09", f"--agentic-resume={folder}")
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines([f"ERROR: --agentic-resume={folder}: this session is not the campaign it resumes "
                                "(models oracle; tasks task_09; 2 run(s) each; seed 0):",
                                "  - models: the campaign ran oracle; this session asks for near-miss",
                                f"*finish it with pytest --agentic-resume={folder} *drop --agentic-resume to start a "
                                "new campaign*"])
    assert snapshot(folder) == before, "a refused resume leaves the campaign as it was"

    again = session(project, f"--agentic-resume={folder}")
    assert again.ret == pytest.ExitCode.USAGE_ERROR
    again.stderr.fnmatch_lines([f"*the campaign is complete (2 runs recorded: models oracle; tasks task_09*nothing to "
                                f"resume. To re-judge it*--agentic-rescore={folder}*"])
    assert "INCOMPLETE" not in again.stdout.str() + again.stderr.str()
    assert snapshot(folder) == before
    manifest = json.loads((folder / "campaign.json").read_text())
    assert [m["name"] for m in manifest["models"]] == ["oracle"] and manifest["complete"] is True
    assert manifest["selected_tasks"] == ["task_09"]


def test_a_resume_takes_the_campaigns_models_tasks_runs_and_seed_and_refuses_others(project):
    session(project, "--model", "oracle", "-m", "task_09", "--runs", "2", "--agentic-seed", "3",
            "--agentic-out=out").assert_outcomes(passed=2)
    folder = campaign_dir(project.path / "out")
    cut(folder, 1)
    before = snapshot(folder)

    for args, difference in [
            (["-m", "task_08 or task_09"], "  - tasks: the campaign ran task_09; this session selects task_08, which it "
                                           "has not"),
            (["--runs", "3"], "  - runs: the campaign runs 2 per task and model; this session asks for 3"),
            (["--agentic-seed", "0"], "  - seed: the campaign used seed 3; this session seed 0"),
            (["--model", "oracle", "--model", "near-miss"], "  - models: the campaign ran oracle; this session asks "
                                                            "for oracle, near-miss")]:
        refused = session(project, *args, f"--agentic-resume={folder}")
        assert refused.ret == pytest.ExitCode.USAGE_ERROR, args
        refused.stderr.fnmatch_lines(["*this session is not the campaign it resumes*", difference])
        assert snapshot(folder) == before, args
    # Under xdist the worker that collected says it, and the controller stops the session the same way.
    refused = session(project, "-m", "task_08", "-n", "2", f"--agentic-resume={folder}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stdout.fnmatch_lines(["*- tasks: the campaign ran task_09; this session selects task_08, which it has not"])
    assert snapshot(folder) == before

    # No -m, --model, --runs or --agentic-seed: the campaign's own (not the file's default model, not all ten tasks).
    resumed = session(project, f"--agentic-resume={folder}")
    resumed.assert_outcomes(passed=1)
    assert keys(folder) == [("oracle", "task_09", 1), ("oracle", "task_09", 2)]
    assert {r["seed"] for r in runs(folder)} == {3}
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is True and [m["name"] for m in manifest["models"]] == ["oracle"]
    assert manifest["runs"] == 2 and manifest["seed"] == 3 and len(manifest["resumed_at"]) == 1
    # Both sessions listed, the first as it began the campaign; the same releases: nothing to note.
    assert [(s["resumed"], s["runs_added"]) for s in manifest["sessions"]] == [(False, 2), (True, 1)]
    assert manifest["sessions"][1]["started_at"] == manifest["resumed_at"][0]
    assert not [n for n in manifest["notes"] if "sessions that wrote" in n]


def test_a_resume_under_another_litellm_rewrites_nothing_the_campaign_was_measured_with_and_says_so(project):
    session(project, "--model", "oracle", "-m", "task_09", "--runs", "2", "--agentic-out=out").assert_outcomes(passed=2)
    folder = campaign_dir(project.path / "out")
    cut(folder, 1)
    # As an older writer left it, under an older litellm: no ``sessions``.
    manifest = json.loads((folder / "campaign.json").read_text())
    installed = manifest["litellm_version"]
    del manifest["sessions"]
    (folder / "campaign.json").write_text(json.dumps({**manifest, "litellm_version": "1.0.0"}))

    session(project, f"--agentic-resume={folder}").assert_outcomes(passed=1)
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is True and manifest["litellm_version"] == "1.0.0"
    first, resumed = manifest["sessions"]
    assert (first["resumed"], first["litellm_version"], first["runs_added"]) == (False, "1.0.0", None)
    assert first["started_at"] == manifest["started_at"]
    assert (resumed["resumed"], resumed["litellm_version"], resumed["runs_added"]) == (True, installed, 1)
    note = next(n for n in manifest["notes"] if "different litellm values" in n)
    assert f"session 1 (began `{manifest['started_at']}`, runs unknown): `1.0.0`" in note
    assert f"session 2 (resumed `{manifest['resumed_at'][0]}`, 1 run): `{installed}`" in note
    assert note in (folder / "summary.md").read_text()


def test_the_printed_resume_command_finishes_the_campaign_pasted_from_another_folder(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("results")  # outside the rootdir: `--agentic-resume PATH` fails there
    session(project, "--model", "oracle", "-m", "task_07 or task_09", "--runs", "2",
            f"--agentic-out={elsewhere}").assert_outcomes(passed=4)
    folder = campaign_dir(elsewhere)
    cut(folder, 1)  # task_07 run 1 kept

    # A resume narrowed to task_09 finishes that task; the campaign still lacks task_07's run 2, and says so.
    part = session(project, "-m", "task_09", f"--agentic-resume={folder}")
    part.assert_outcomes(passed=2)
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is False
    note = next(n for n in manifest["notes"] if "INCOMPLETE" in n)
    assert "1 of its runs are not recorded yet" in note, note
    command = note.split("Resume it (only the missing runs run): ", 1)[1]
    assert command in (folder / "summary.md").read_text()
    assert re.search(r"--agentic-resume=\S", command) and " -m " not in command, command

    # Pasted into a shell started in another folder, with this interpreter's pytest first on PATH.
    cwd = tmp_path_factory.mktemp("somewhere")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert keys(folder) == [("oracle", task, run) for task in ("task_07", "task_09") for run in (1, 2)]
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is True and not [n for n in manifest["notes"] if "INCOMPLETE" in n]
