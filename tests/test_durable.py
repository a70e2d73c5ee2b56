"""runs.jsonl made durable off the appending thread (``campaign.durable``), and what a killed session keeps."""

from __future__ import annotations

import errno
import json
import threading
import time

import pytest

from pytest_agentic.campaign import durable

from .helpers import campaign_dir, runs


class SlowDisk:
    """``os.fsync`` that takes ``seconds`` and notes how many writes were announced when each began."""

    def __init__(self, sync: list, seconds: float = 0.02, fail: bool = False) -> None:
        self.sync, self.seconds, self.fail = sync, seconds, fail
        self.started_at: list[int] = []

    def __call__(self, fd: int) -> None:
        self.started_at.append(self.sync[0].announced)
        time.sleep(self.seconds)
        if self.fail:
            raise OSError(errno.EIO, "Input/output error")


def test_every_write_is_covered_and_writes_share_fsyncs(tmp_path, monkeypatch):
    target = tmp_path / "runs.jsonl"
    target.write_text("")
    holder: list = []
    disk = SlowDisk(holder)
    monkeypatch.setattr(durable.os, "fsync", disk)
    sync = durable.GroupSync(target)
    holder.append(sync)

    def writer() -> None:
        for _ in range(200):
            sync.written()
            time.sleep(0.0005)

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    sync.close()
    assert sync.announced == sync.covered == 200
    # The last fsync began after the last write was announced: it covers it.
    assert disk.started_at[-1] == 200
    # A group commit: writes made while an fsync runs share the next one.
    assert 1 <= sync.fsyncs < 100, sync.fsyncs


def test_a_closed_sync_with_nothing_written_made_no_fsync(tmp_path, monkeypatch):
    target = tmp_path / "runs.jsonl"
    target.write_text("")
    calls: list[int] = []
    monkeypatch.setattr(durable.os, "fsync", calls.append)
    durable.GroupSync(target).close()
    assert calls == []


def test_a_failed_fsync_is_raised_at_close(tmp_path, monkeypatch):
    target = tmp_path / "runs.jsonl"
    target.write_text("")
    holder: list = []
    monkeypatch.setattr(durable.os, "fsync", SlowDisk(holder, seconds=0, fail=True))
    sync = durable.GroupSync(target)
    holder.append(sync)
    sync.written()
    with pytest.raises(OSError, match="Input/output error"):
        sync.close()


KILLED = '''
import os, signal
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={}, tools=("fs_list",), reference=[Final("ok")])

@task("killed_1", "killed", build=build)
def test_killed(agent):
    run = agent.run()
    if agent.run_index == 4:
        os.kill(os.getpid(), signal.SIGKILL)  # the whole session dies, before it can write anything else
    assert run.final_answer == "ok"
'''


def test_a_killed_session_keeps_every_run_it_judged(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_killed=KILLED)
    result = pytester.runpytest_subprocess("--runs", "6", "--agentic-out", "out", "-p", "no:xdist",
                                           "-p", "no:randomly")
    assert result.ret == -9
    folder = campaign_dir(pytester.path / "out")
    records = runs(folder)
    assert sorted(r["run"] for r in records) == [1, 2, 3]
    assert all(r["passed"] for r in records)
    for record in records:
        assert json.loads((folder / record["transcript"]).read_text())["messages"]


def test_a_finished_campaign_leaves_no_temporary_file(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_killed=KILLED.replace("agent.run_index == 4", "False"))
    result = pytester.runpytest_subprocess("--runs", "3", "--agentic-out", "out", "-p", "no:xdist")
    result.assert_outcomes(passed=3)
    folder = campaign_dir(pytester.path / "out")
    assert sorted(p.name for p in folder.glob("runs.jsonl*")) == ["runs.jsonl"]
    assert len(runs(folder)) == 3


def test_a_rewrite_that_fails_midway_leaves_the_old_runs_file_whole(tmp_path):
    """The end-of-session rewrite goes beside runs.jsonl and is renamed over it: never half written."""
    from pytest_agentic.campaign.writer import write_artefacts

    before = '{"model": "m", "run": 1, "task": "t"}\n{"model": "m", "run": 2, "task": "t"}\n'
    (tmp_path / "runs.jsonl").write_text(before)
    records = [{"model": "m", "task": "t", "run": 1}, {"model": "m", "task": "t", "run": 2, "oops": object()}]
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_artefacts(tmp_path, records, runs=2, seed=0, complete=True, started_at="s", finished_at="f",
                        notes=[], sections=[])
    assert (tmp_path / "runs.jsonl").read_text() == before
