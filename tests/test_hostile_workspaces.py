"""Hostile workspaces: what model code leaves behind (a pipe, a link to a host file, a huge sparse file,
...) never stalls or crashes the harness's own readers, and a run's limits bind from outside it.

The first test is the scenario of issue 25, through the real litellm path: a model served by a local
OpenAI-compatible endpoint writes a test module whose import plants a named pipe, a link to a host
file and a 4 GiB sparse file, runs the tests (in the box), then asks ``fs_read`` for each. Before the
fix the read of the pipe blocked the pytest process for ever; the session's wall time is bounded here
by ``runpytest_subprocess(timeout=...)`` and checked against the runs' limits.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

from .fault_server import FaultServer
from .helpers import ROOT, campaign_dir, runs
from .test_tasks_proven import load, task_of
from pytest_agentic.run.task import CANONICAL_SEED, Final, ToolCall

#: What the model's test module does when pytest imports it, in the box: plant three hostile files.
PLANTER = '''\
import os

def _plant(make):
    try:
        make()
    except OSError:
        pass  # the box may refuse (the 4 GiB file is over its file-size limit): the rest still happens

_plant(lambda: os.mkfifo("pipe"))
_plant(lambda: os.symlink("/etc/hostname", "host_link"))
_plant(lambda: open("sparse.bin", "wb").truncate(4 << 30))


def test_planted():
    assert os.path.exists("pipe")
'''

HOSTILE_SCRIPT = [
    ToolCall("fs_write", {"path": "test_plant.py", "content": PLANTER}),
    ToolCall("run_tests", {"path": "test_plant.py"}),
    ToolCall("fs_read", {"path": "pipe"}),
    ToolCall("fs_read", {"path": "host_link"}),
    ToolCall("fs_read", {"path": "sparse.bin"}),
    ToolCall("fs_list", {}),
    Final("Done."),
]
#: The runs' limits: the session must end well within them, whatever the workspace holds.
LIMITS = {"max_seconds": 90, "tool_timeout_s": 30, "max_retries": 1, "retry_backoff_s": 0.01,
          "request_timeout_s": 30}
#: The tasks of the scenario: they offer fs_read and run_tests.
TASKS = ("test_task_01_fix_failing_test.py", "test_task_02_refactor_duplicated_code.py")


@pytest.fixture
def project(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    return pytester


def serve_hostile_model(pytester, server, limits=LIMITS):
    entry = {"model": "openai/hostile-workspace", "api_base": server.api_base, "limits": limits,
             "price": {"input_per_token": 0, "output_per_token": 0}}
    (pytester.path / "models.yaml").write_text(json.dumps({"default": "hostile", "models": {"hostile": entry}}))


def hostile_solutions() -> dict[str, list]:
    return {task_of(load(ROOT / "tasks" / name)).build(CANONICAL_SEED).prompt: HOSTILE_SCRIPT for name in TASKS}


@pytest.mark.parametrize("mode", [["--agentic-concurrency", "1"], [], ["-n", "2"]],
                         ids=["sequential", "adaptive-default", "xdist"])
def test_planted_pipe_link_and_sparse_file_end_in_bounded_time_every_run_judged(project, mode):
    with FaultServer(hostile_solutions()) as server:
        serve_hostile_model(project, server)
        started = time.monotonic()
        result = project.runpytest_subprocess("tasks", "-m", "task_01 or task_02", "--agentic-out", "out",
                                              "-p", "no:cacheprovider", "-p", "no:randomly", *mode,
                                              timeout=LIMITS["max_seconds"] * 2)
        seconds = time.monotonic() - started
    # Within one run's max_seconds: nothing waited on the pipe (two runs, in order or side by side).
    assert seconds < LIMITS["max_seconds"], f"the session took {seconds:.1f}s"
    records = {r["task"]: r for r in runs(campaign_dir(project.path / "out"))}
    assert sorted(records) == ["task_01", "task_02"], result.stdout.str()[-3000:]
    for task, record in records.items():
        assert record["failure_mode"] == "wrong_answer", (task, record["failure_mode"], record["reason"])
        # The checker judged the run, and said why: the model left a pipe in the workspace.
        assert "'pipe'" in record["reason"] and "named pipe" in record["reason"], record["reason"]
        transcript = json.loads((campaign_dir(project.path / "out") / record["transcript"]).read_text())
        results = [c["result"] for c in transcript["tool_calls"]]
        assert "exit code 0" in results[1], results[1]  # the planting test ran, in the box
        assert results[2].startswith("ERROR: fs_read: 'pipe' is a named pipe (FIFO)"), results[2]
        assert "outside the workspace" in results[3], results[3]
        assert results[4] == "", "the box's file-size limit kept the sparse file empty"
        assert "pipe  [a named pipe (FIFO)]" in results[5] and "host_link  [a symbolic link" in results[5]
