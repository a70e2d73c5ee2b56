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
        # Bounded by the runs' limits (two runs of max_seconds each, one after the other at worst):
        # past it pytester kills the session and the test fails, as it did before the fix (a hang).
        # benchmarks/hostile_workspace.py measures the wall time.
        result = project.runpytest_subprocess("tasks", "-m", "task_01 or task_02", "--runs", "1", "--agentic-out", "out",
                                              "-p", "no:cacheprovider", "-p", "no:randomly", *mode,
                                              timeout=LIMITS["max_seconds"] * 2)
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


# -- the corpus: each kind of hostile entry, on every tool and on the checkers that snapshot -------------

import os  # noqa: E402
import socket  # noqa: E402
import stat  # noqa: E402
from pathlib import Path  # noqa: E402

from pytest_agentic.run import safefs  # noqa: E402
from pytest_agentic.run.limits import Deadline  # noqa: E402
from pytest_agentic.run.records import RunResult  # noqa: E402
from pytest_agentic.run.tools import TOOLS, ToolError, Workspace  # noqa: E402

NON_UTF8 = os.fsdecode(b"bad\xff.txt")


def _socket(path: Path) -> None:
    here = os.getcwd()
    os.chdir(path.parent)  # a relative bind: the tmp path may be longer than a socket address allows
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(path.name)
        sock.close()
    finally:
        os.chdir(here)


def _device(path: Path) -> None:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)


def _million(path: Path) -> None:
    path.mkdir()
    for i in range(safefs.MAX_WALK_ENTRIES + 50):
        (path / f"f{i}").touch()


#: kind -> (entry name, how to make it, what the file tools say of it: a fragment of the error or cut)
KINDS = {
    "fifo": ("pipe", lambda p: os.mkfifo(p), "is a named pipe (FIFO)"),
    "socket": ("sock", _socket, "is a socket"),
    "device": ("null", _device, "is a character device"),
    "link-to-host": ("host_link", lambda p: os.symlink("/etc/hostname", p), "outside the workspace"),
    "link-loop": ("loop", lambda p: (os.symlink("loop2", p), os.symlink("loop", p.parent / "loop2")),
                  "symbolic link"),
    "dangling-link": ("dangling", lambda p: os.symlink("nowhere", p), "no such file"),
    "terabyte": ("huge.bin", lambda p: _sparse(p, 1 << 40), "1099511627776 bytes"),
}
CHECKED_TASKS = ("test_task_01_fix_failing_test.py", "test_task_02_refactor_duplicated_code.py",
                 "test_task_05_minimal_fix.py", "test_task_06_handle_ambiguous_requirement.py")


def bounded(fn, seconds=20.0):
    """``fn()``'s value or ToolError text; the test fails (not hangs) when it does not return in time."""
    def guarded():
        try:
            return fn()
        except ToolError as exc:
            return f"ToolError: {exc}"
    returned, value = Deadline(guarded, "corpus").wait(seconds)
    assert returned, f"did not return within {seconds}s"
    return value


@pytest.fixture
def ws(tmp_path):
    workspace = Workspace(tmp_path / "ws", tool_timeout=10)
    workspace.root.mkdir()
    workspace.populate({"a.txt": "a\n", "data.db": b""})
    return workspace


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_file_tool_answers_each_hostile_kind_with_its_name_and_kind(ws, kind):
    name, make, said = KINDS[kind]
    make(ws.root / name)
    read = bounded(lambda: TOOLS["fs_read"].call(ws, {"path": name}))
    assert said in read and (name in read or kind == "terabyte"), read
    if kind == "terabyte":
        assert "cut" in read and len(read) < 70_000, "a bounded, marked cut"
        ranged = bounded(lambda: TOOLS["fs_read"].call(ws, {"path": name, "start_line": 2}))
        assert "first 16777216 bytes" in ranged, ranged
    listing = bounded(lambda: TOOLS["fs_list"].call(ws, {}))
    assert "a.txt" in listing and name in listing
    edit = bounded(lambda: TOOLS["fs_edit"].call(ws, {"path": name, "old_text": "x", "new_text": "y"}))
    assert edit.startswith("ToolError"), edit
    sql = bounded(lambda: TOOLS["sql_query"].call(ws, {"database": name, "query": "select * from sqlite_master"}))
    assert sql.startswith("ToolError"), sql
    write = bounded(lambda: TOOLS["fs_write"].call(ws, {"path": name, "content": "x"}))
    if kind == "dangling-link":
        assert write.startswith("ToolError") and "symbolic link" in write, write
    elif kind != "terabyte":  # a regular file, however large, may be overwritten
        assert write.startswith("ToolError") and name in write, write
    assert (ws.root / "a.txt").read_text() == "a\n"


def test_run_tests_in_a_workspace_holding_every_kind_returns(ws):
    for kind, (name, make, _) in KINDS.items():
        if kind not in ("device", "terabyte"):
            make(ws.root / name)
    out = bounded(lambda: TOOLS["run_tests"].call(ws, {}), 60)
    assert "exit code" in out or "timed out" in out, out
    out = bounded(lambda: TOOLS["run_tests"].call(ws, {"path": "pipe"}), 60)
    assert "exit code" in out or "timed out" in out, out


def test_a_file_that_changes_type_between_check_and_open_is_refused(ws, monkeypatch):
    real_open = os.open

    def swapped(path, flags, *args):  # the model's code swaps the file for a pipe after the type check
        if str(path).endswith("a.txt"):
            os.remove(path)
            os.mkfifo(path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(safefs.os, "open", swapped)
    out = bounded(lambda: TOOLS["fs_read"].call(ws, {"path": "a.txt"}))
    assert "'a.txt' is a named pipe (FIFO)" in out and "changed type" in out, out


def test_an_unreadable_file_is_named(ws, monkeypatch):
    def denied(path, flags, *args):
        raise PermissionError(13, "Permission denied")  # what a mode-000 file gives a user who is not root

    monkeypatch.setattr(safefs.os, "open", denied)
    assert "'a.txt' is unreadable (permission denied)" in bounded(lambda: TOOLS["fs_read"].call(ws, {"path": "a.txt"}))
    with pytest.raises(safefs.HostileWorkspace, match="'a.txt' is unreadable"):
        ws.snapshot()


def test_a_name_that_is_not_utf8_is_listed_printably_and_judged_by_a_snapshot(ws):
    (ws.root / NON_UTF8).write_text("x")
    listing = TOOLS["fs_list"].call(ws, {})
    listing.encode("utf-8")  # no lone surrogate reaches the model, the transcript or the report
    assert "bad\ufffd.txt  [name is not UTF-8" in listing
    with pytest.raises(safefs.HostileWorkspace, match="not UTF-8"):
        ws.snapshot()


def test_a_tree_of_too_many_entries_is_cut_and_judged(ws):
    _million(ws.root / "many")
    listing = bounded(lambda: TOOLS["fs_list"].call(ws, {"path": "many"}))
    assert listing.count("\n") <= 501 and "cut" in listing.splitlines()[-1]
    with pytest.raises(safefs.HostileWorkspace, match=f"more than {safefs.MAX_WALK_ENTRIES} entries"):
        bounded(ws.snapshot)


@pytest.mark.parametrize("task", CHECKED_TASKS)
@pytest.mark.parametrize("kind", ["fifo", "socket", "device", "terabyte", "non-utf8", "link-to-host"])
def test_checkers_judge_a_workspace_holding_a_hostile_entry(tmp_path, task, kind):
    module = load(ROOT / "tasks" / task)
    instance = task_of(module).build(CANONICAL_SEED)
    workspace = Workspace(tmp_path / "ws")
    workspace.root.mkdir()
    workspace.populate(instance.files)
    if kind == "non-utf8":
        name = NON_UTF8
        (workspace.root / name).write_text("x")
    else:
        name, make, _ = KINDS[kind]
        make(workspace.root / name)
    run = RunResult(final_answer="Done.", stop_reason="final_answer", workspace=workspace.root)

    def judged():
        try:
            module.check(instance, run)
        except AssertionError as exc:
            return str(exc)
        return None

    verdict = bounded(judged, 120)
    if kind == "link-to-host":  # never followed: the checker judges the rest (the code is unchanged: rejected)
        assert verdict is not None and "hostname" not in verdict
        return
    assert verdict is not None and "the workspace holds" in verdict, verdict
    assert {"fifo": "named pipe", "socket": "socket", "device": "character device", "terabyte": "bytes",
            "non-utf8": "not UTF-8"}[kind] in verdict, verdict


# -- limits enforced from outside: a tool that never returns --------------------------------------------

BLOCKING_CONFTEST = '''
import time
from pytest_agentic.run import tools

def _blocks(ws, args):  # a stand-in for a read that never returns (what a pipe did before)
    time.sleep(3600)
    return ""

tools.TOOLS["fs_read"] = tools.Tool("fs_read", tools.TOOLS["fs_read"].description,
                                    tools.TOOLS["fs_read"].parameters, _blocks)
'''
BLOCKING_TASKS = '''
from pytest_agentic import Final, TaskInstance, ToolCall, task

def build(seed):
    return TaskInstance(prompt="Read a.txt, then say ok.", files={"a.txt": "a"}, tools=("fs_read",),
                        reference=[ToolCall("fs_read", {"path": "a.txt"}), Final("ok")])

@task("block_tool", "tool_blocks", build=build, limits={"tool_timeout_s": 1, "max_seconds": 60})
def test_tool_blocks(agent):
    assert agent.run().final_answer == "ok"

@task("block_run", "run_blocks", build=build, limits={"tool_timeout_s": 120, "max_seconds": 2})
def test_run_blocks(agent):
    assert agent.run().final_answer == "ok"
'''


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_tool_that_never_returns_is_abandoned_and_the_session_writes_its_campaign(pytester, mode):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makeconftest(BLOCKING_CONFTEST)
    pytester.makepyfile(test_blocking=BLOCKING_TASKS)
    # Each run ends by its limit; the whole session within their sum (else pytester kills it: a hang).
    result = pytester.runpytest_subprocess("--agentic-out", "out", "--runs", "1", "-p", "no:cacheprovider", *mode,
                                           timeout=120)
    records = {r["task"]: r for r in runs(campaign_dir(pytester.path / "out"))}
    # The tool's limit (1 s + 5 s grace): the call is answered with an error, and the run goes on to its answer.
    tool = records["block_tool"]
    assert tool["passed"], tool
    transcript = json.loads((campaign_dir(pytester.path / "out") / tool["transcript"]).read_text())
    assert "did not return within 6s and was abandoned" in transcript["tool_calls"][0]["result"]
    # The run's limit (2 s + 10 s grace) binds first: the run ends as max_seconds, the model's failure.
    run = records["block_run"]
    assert (run["stop_reason"], run["failure_mode"]) == ("max_seconds", "gave_up_mid_plan"), run
    assert json.loads((campaign_dir(pytester.path / "out") / "campaign.json").read_text())["complete"] is True
    assert (campaign_dir(pytester.path / "out") / "report.html").is_file()
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# -- SIGTERM: like Ctrl-C ----------------------------------------------------------------------------------

STALLING_TASK = '''
import os, time
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={}, tools=("fs_list",), reference=[Final("ok")])

@task("stall_1", "stall", build=build)
def test_stall(agent):
    run = agent.run()
    if agent.run_index >= 3 and os.environ.get("AGENTIC_TEST_STALL"):
        time.sleep(300)  # the session is stopped here
    assert run.final_answer == "ok"
'''


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "2"]], ids=["plain", "xdist"])
def test_sigterm_leaves_a_readable_folder_marked_incomplete_that_resumes(pytester, mode):
    import signal
    import subprocess
    import sys

    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_stall=STALLING_TASK)
    env = {**os.environ, "AGENTIC_TEST_STALL": "1"}
    # Its own process group: a CI or Slurm time limit signals every process of the job.
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--runs", "6", "--agentic-out", "out", *mode],
                            cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            found = list((pytester.path / "out").glob("*/runs.jsonl")) if (pytester.path / "out").exists() else []
            if found and len(found[0].read_text().splitlines()) >= 2:
                break
            time.sleep(0.2)
        time.sleep(1.0)  # the next runs are now stalled in their tests
        os.killpg(proc.pid, signal.SIGTERM)
        output = proc.communicate(timeout=60)[0].decode()  # the stalled tests would hold it 300 s
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    folder = campaign_dir(pytester.path / "out")
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["complete"] is False, output
    finished = sorted(r["run"] for r in runs(folder))
    assert finished and 3 not in finished, (finished, output)
    summary = (folder / "summary.md").read_text()
    assert "INCOMPLETE" in summary and "--agentic-resume" in summary, summary
    page = (folder / "report.html").read_text()
    assert "INCOMPLETE" in page and "--agentic-resume" in page
    assert (folder / "pass_rate_by_task.csv").is_file()

    result = pytester.runpytest_subprocess("--runs", "6", "--agentic-out", "out", "--agentic-resume", str(folder),
                                           *mode, timeout=120)
    result.assert_outcomes(passed=6 - len(finished))
    assert sorted(r["run"] for r in runs(folder)) == [1, 2, 3, 4, 5, 6]
    assert json.loads((folder / "campaign.json").read_text())["complete"] is True


# -- sql_query: the schema look-ups an engineer types, and still no write --------------------------------

def test_sql_query_answers_schema_pragmas_on_task_10_and_still_refuses_writes(tmp_path):
    instance = task_of(load(ROOT / "tasks" / "test_task_10_sql_investigation.py")).build(CANONICAL_SEED)
    workspace = Workspace(tmp_path / "ws")
    workspace.root.mkdir()
    workspace.populate(instance.files)
    db = next(p for p in instance.files if p.endswith(".db"))
    before = (workspace.root / db).read_bytes()

    def sql(query):
        try:
            return TOOLS["sql_query"].call(workspace, {"database": db, "query": query})
        except ToolError as exc:
            return f"ToolError: {exc}"

    table = sql("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").splitlines()[1]
    columns = sql(f"PRAGMA table_info({table})")
    assert columns.splitlines()[0] == "cid | name | type | notnull | dflt_value | pk" and len(columns.splitlines()) > 2
    names = [line.split(" | ")[1] for line in columns.splitlines()[1:]]
    assert sql(f"SELECT name FROM pragma_table_info('{table}')").splitlines()[1:] == names
    assert sql(f"PRAGMA table_xinfo({table})").splitlines()[0].endswith("| hidden")
    for query in (f"PRAGMA index_list({table})", f"PRAGMA foreign_key_list({table})",
                  f"SELECT * FROM pragma_index_list('{table}')", f"SELECT * FROM pragma_foreign_key_list('{table}')"):
        assert not sql(query).startswith("ToolError"), query
    for query in (f"DELETE FROM {table}", f"UPDATE {table} SET rowid = rowid", "CREATE TABLE t(x)",
                  f"DROP TABLE {table}", "ATTACH DATABASE 'other.db' AS other", "PRAGMA user_version = 7",
                  "PRAGMA writable_schema = 1", "PRAGMA journal_mode = wal", "SELECT * FROM pragma_user_version",
                  "UPDATE sqlite_master SET sql = ''", "VACUUM", "PRAGMA query_only = 0"):
        assert sql(query).startswith("ToolError: SQL error"), query
    assert (workspace.root / db).read_bytes() == before
    assert not (workspace.root / "other.db").exists()
