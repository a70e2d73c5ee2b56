"""A scripted model's code tries to get out of the box on every code-running task, and gets nothing done.

The model writes a test module and runs it with ``run_tests`` (task 01 also imports it from the
package's ``__init__``, so the checker's probe runs it too). The module tries to write outside the
workspace and to the host's ``/tmp``, read a file planted in ``$HOME``, reach a port this test
listens on, leave a detached process behind and print the environment. Every attempt must fail
while the run still ends with its final answer and is judged; plain, under ``-n 2`` and under
``--agentic-concurrency 4``.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from pathlib import Path

import pytest

from .helpers import ROOT, campaign_dir, runs

TASKS = {
    "task_01": ("fix_failing_test", "test_task_01_fix_failing_test"),
    "task_02": ("refactor_duplicated_code", "test_task_02_refactor_duplicated_code"),
    "task_05": ("minimal_fix", "test_task_05_minimal_fix"),
    "task_06": ("handle_ambiguous_requirement", "test_task_06_handle_ambiguous_requirement"),
}

ESCAPE = '''import os, socket, subprocess, sys

OUTSIDE, HOMEFILE, PORT, TOKEN = {outside!r}, {homefile!r}, {port!r}, {token!r}


def attempt():
    try:
        with open(OUTSIDE, "w") as fh:
            fh.write("escaped")
        print("ESCAPED: wrote", OUTSIDE)
    except OSError as exc:
        print("blocked write:", type(exc).__name__)
    with open("/tmp/agentic-escape-" + TOKEN, "w") as fh:  # the box's own /tmp: allowed, never the host's
        fh.write("private")
    for path in (HOMEFILE, os.path.expanduser("~/.netrc")):
        try:
            with open(path) as fh:
                print("ESCAPED: read", fh.read())
        except OSError as exc:
            print("blocked read:", type(exc).__name__)
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as conn:
            conn.sendall(TOKEN.encode())
        print("ESCAPED: connected")
    except OSError as exc:
        print("blocked connect:", type(exc).__name__)
    subprocess.Popen([sys.executable, "-c", "import time\\nwhile True:\\n    time.sleep(0.2)", TOKEN],
                     start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    print("ENV", sorted(os.environ.items()))


def test_escape():
    attempt()
    raise AssertionError("shown, so that pytest prints what the attempts printed")
'''

WRAPPER = '''import dataclasses, importlib.util, sys
from pytest_agentic import ToolCall, task

_spec = importlib.util.spec_from_file_location("_real_{stem}", {path!r})
real = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = real
_spec.loader.exec_module(real)


def build(seed):
    inst = real.build(seed)
    pkg = inst.expected.get("package")
    where = pkg + "/" if pkg else ""
    steps = [ToolCall("fs_write", {{"path": where + "test_escape.py", "content": {escape!r}}}),
             ToolCall("run_tests", {{"path": where + "test_escape.py"}})]
    if pkg:  # the package imports it, so the checker's probe runs the attempt too
        init = inst.files[pkg + "/__init__.py"] + "\\nfrom . import test_escape as _escape\\n_escape.attempt()\\n"
        steps.append(ToolCall("fs_write", {{"path": pkg + "/__init__.py", "content": init}}))
    return dataclasses.replace(inst, reference=[*steps, *inst.reference])


@task({id!r}, {name!r}, build=build, runs_model_code=True)
def test_escape(agent):
    run = agent.run()
    real.check(agent.instance, run)
'''


class Listener:
    """A TCP port on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def _alive_with(token: str) -> list[int]:
    """Host processes whose command line holds ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _session(pytester, monkeypatch, tmp_path, extra: list[str]) -> dict:
    """Run the four escaping tasks once each; what got out (the detached processes are killed after)."""
    token = uuid.uuid4().hex
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text(f"machine example.com password netrc-canary-{token}\n")
    outside = tmp_path / f"outside-{token}.txt"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENTIC_ESCAPE_API_KEY", f"key-canary-{token}")
    monkeypatch.setenv("AGENTIC_ESCAPE_PLAIN", f"plain-canary-{token}")
    monkeypatch.setenv("PATH", f"/opt/host-only-{token}:{os.environ['PATH']}")
    listener = Listener()
    try:
        escape = ESCAPE.format(outside=str(outside), homefile=str(home / ".netrc"), port=listener.port, token=token)
        pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
        for task_id, (name, stem) in TASKS.items():
            pytester.makepyfile(**{f"test_{task_id}_escape": WRAPPER.format(
                stem=stem, path=str(ROOT / "tasks" / f"{stem}.py"), escape=escape, id=task_id, name=name)})
        result = pytester.runpytest_subprocess("-p", "no:randomly", "--runs", "1", "--agentic-out", "out", *extra)
    finally:
        listener.close()
    left = _alive_with(token)
    for pid in left:  # never leave one behind, even when the box failed
        os.kill(pid, 9)
    folder = campaign_dir(pytester.path / "out")
    records = runs(folder)
    assert sorted(r["task"] for r in records) == sorted(TASKS), result.stdout.str()[-2000:]
    transcripts = "".join(p.read_text() for p in (folder / "transcripts").rglob("*.json"))
    results = "\n".join(c["result"] for p in (folder / "transcripts").rglob("*.json")
                        for c in json.loads(p.read_text())["tool_calls"] if c["name"] == "run_tests")
    host_tmp = Path(f"/tmp/agentic-escape-{token}")
    wrote_host_tmp = host_tmp.exists()
    host_tmp.unlink(missing_ok=True)  # left by the unconfined control only
    return {"records": records, "left": left, "wrote_outside": outside.exists(),
            "wrote_host_tmp": wrote_host_tmp, "connections": listener.accepted,
            "transcripts": transcripts, "results": results,
            "leaked": [c for c in (f"netrc-canary-{token}", f"key-canary-{token}", f"plain-canary-{token}",
                                   f"/opt/host-only-{token}") if c in transcripts]}


@pytest.mark.parametrize("extra", [[], ["-n", "2"], ["--agentic-concurrency", "4"]],
                         ids=["plain", "xdist", "concurrency4"])
def test_escape_attempts_all_fail_and_runs_are_judged(pytester, monkeypatch, tmp_path, extra):
    got = _session(pytester, monkeypatch, tmp_path, extra)
    for r in got["records"]:  # ended normally and judged: passed, or rejected by its checker
        assert r["stop_reason"] == "final_answer" and r["failure_mode"] in (None, "wrong_answer"), r
        assert "checker_error" not in r["tags"], r
        assert r["sandbox"]["kind"] == "bubblewrap", r
    assert not got["left"], "a process started by the model's code outlived its tool call"
    assert not got["wrote_outside"] and not got["wrote_host_tmp"]
    assert got["connections"] == 0
    results = got["results"]
    assert results.count("blocked write: ") >= len(TASKS) and "blocked connect: " in results, results[:3000]
    assert "ESCAPED" not in results, results[:3000]
    assert not got["leaked"]
    assert "('PATH', '/usr/local/bin:/usr/bin:/bin')" in got["transcripts"]


def test_unconfined_the_same_attempts_succeed(pytester, monkeypatch, tmp_path):
    """The control: with --agentic-sandbox=none the module does get out, so the checks above can fail."""
    got = _session(pytester, monkeypatch, tmp_path, ["--agentic-sandbox=none"])
    assert all(r["sandbox"] == {"kind": "none", "version": None} for r in got["records"])
    assert got["wrote_outside"] and got["wrote_host_tmp"] and got["connections"] > 0
    assert got["left"] and "ESCAPED: read machine example.com" in got["results"]
