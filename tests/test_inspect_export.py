"""agentic-export inspect: campaigns as Inspect AI eval logs, read back by Inspect AI's own reader.

Inspect AI is not a dependency of pytest-agentic, nor of its tests' environment (it pins much of
what litellm uses: pydantic, httpx, anyio): the logs are read in a separate virtual environment
holding the pinned release (``report.inspect_log.INSPECT_VERSION``), at ``$AGENTIC_INSPECT_VENV`` or
``.inspect-venv/`` in the checkout. ``.ci/run`` makes it before the tests; a test session makes it
itself (once, under a lock) when it is missing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pytest_agentic.report.cli import export_main
from pytest_agentic.report.inspect_log import INSPECT_VERSION

from . import browser
from .helpers import ROOT, campaign_dir, runs
from .records import record, write_campaign

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.body.dataset.pwned=1">'

#: Runs in the Inspect AI environment: every log of a folder as Inspect's reader and its listing see it.
READER = r"""
import json, sys
import inspect_ai
from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries

logs = []
for info in list_eval_logs(sys.argv[1]):
    log = read_eval_log(info)
    samples = []
    for s in log.samples:
        calls = [c for m in s.messages if m.role == "assistant" for c in (m.tool_calls or [])]
        samples.append({
            "id": s.id, "epoch": s.epoch, "input": s.input, "metadata": s.metadata,
            "verdict": s.scores["verdict"].value, "explanation": s.scores["verdict"].explanation,
            "answer": s.scores["verdict"].answer, "failure_mode": s.scores["failure_mode"].value,
            "roles": [m.role for m in s.messages], "text": [m.text for m in s.messages],
            "calls": [[c.function, c.arguments, c.parse_error] for c in calls],
            "tool_errors": [m.error.message for m in s.messages if m.role == "tool" and m.error],
            "reasoning": [c.reasoning for m in s.messages if m.role == "assistant" and not isinstance(m.content, str)
                          for c in m.content if c.type == "reasoning"],
            "usage": {k: u.model_dump() for k, u in s.model_usage.items()},
        })
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    logs.append({"task": info.task, "task_id": info.task_id, "status": log.status, "model": log.eval.model,
                 "epochs": log.eval.config.epochs, "sample_ids": log.eval.dataset.sample_ids, "metrics": metrics,
                 "usage": {k: u.model_dump() for k, u in log.stats.model_usage.items()},
                 "summaries": len(read_eval_log_sample_summaries(info)), "samples": samples})
print(json.dumps({"version": inspect_ai.__version__, "logs": logs}))
"""


@pytest.fixture(scope="session")
def inspect_python() -> Path:
    """The Python of a virtual environment holding Inspect AI at the pinned release (made when missing)."""
    venv = Path(os.environ.get("AGENTIC_INSPECT_VENV") or ROOT / ".inspect-venv")
    python = venv / "bin" / "python"
    wanted = f"inspect_ai=={INSPECT_VERSION}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:  # xdist workers make it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        have = subprocess.run([str(python), "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                              capture_output=True, text=True) if python.exists() else None
        if have is None or have.stdout.strip() != INSPECT_VERSION:
            made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
            if made.returncode == 0:
                made = subprocess.run([str(python), "-m", "pip", "install", "-q", wanted], capture_output=True,
                                      text=True)
            if made.returncode != 0:
                why = f"cannot install {wanted} into {venv}: {made.stderr[-1500:]}"
                if os.environ.get("CI"):
                    pytest.fail(f"{why} (.ci/run makes this environment: CI must run these tests)")
                pytest.skip(why)
    return python


def read_back(python: Path, folder: Path) -> dict[str, Any]:
    done = subprocess.run([str(python), "-c", READER, str(folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def export(campaign: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert export_main(["inspect", str(campaign), "-o", str(out)]) == 0
    return capsys.readouterr().out


def test_an_oracle_campaign_reads_back_with_a_sample_per_run(pytester, inspect_python, capsys):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    result = pytester.runpytest_subprocess("tasks", "-p", "no:randomly", "--model", "oracle", "--agentic-out", "out")
    assert result.ret == 0, result.stdout.str()[-2000:]
    folder = campaign_dir(pytester.path / "out")
    records = runs(folder)
    assert len(records) == 30
    printed = export(folder, pytester.path / "logs", capsys)
    assert "30 run(s) of 1 model(s)" in printed and "inspect view --log-dir" in printed

    read = read_back(inspect_python, pytester.path / "logs")
    assert read["version"] == INSPECT_VERSION
    [log] = read["logs"]
    assert (log["task"], log["model"], log["status"], log["epochs"]) == (
        "agentic-core-v1", "agentic-scripted/oracle", "success", 3)
    assert log["summaries"] == len(log["samples"]) == 30
    by_run = {(s["id"], s["epoch"]): s for s in log["samples"]}
    manifest = json.loads((folder / "campaign.json").read_text())
    for r in records:
        sample = by_run[(r["task"], r["run"])]
        assert sample["verdict"] == ("C" if r["passed"] else "I") == "C"
        assert sample["failure_mode"] == "passed"
        meta = sample["metadata"]
        assert (meta["task"], meta["run"], meta["seed"], meta["task_name"]) == (r["task"], r["run"], r["seed"],
                                                                                r["task_name"])
        assert meta["instance"] == manifest["tasks"][r["task"]]
        transcript = json.loads((folder / r["transcript"]).read_text())
        assert sample["roles"] == [m["role"] for m in transcript["messages"]]
        assert [c[0] for c in sample["calls"]] == [c["name"] for c in transcript["tool_calls"]]
        assert [c[1] for c in sample["calls"]] == [c["arguments"] for c in transcript["tool_calls"]]
        assert sample["input"] == transcript["messages"][1]["content"]
        usage = sample["usage"]["agentic-scripted/oracle"]
        assert (usage["input_tokens"], usage["output_tokens"], usage["total_cost"]) == (
            r["prompt_tokens"], r["completion_tokens"], r["cost_usd"])
    # task_08's first read fails (an injected tool error): the viewer shows it as the tool's error.
    assert by_run[("task_08", 1)]["tool_errors"][0].startswith("ERROR: config/profile.yaml is no longer read")
    assert log["metrics"] == {"accuracy": 1.0, "stderr": 0.0}
    assert log["usage"]["agentic-scripted/oracle"]["input_tokens"] == sum(r["prompt_tokens"] for r in records)


def transcript(rec: dict[str, Any], messages: list[dict[str, Any]], calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"task": rec["task"], "model": rec["model"], "run": rec["run"], "seed": 0, "nodeid": rec["nodeid"],
            "messages": messages, "tool_calls": calls, "final_answer": messages[-1]["content"] if messages else None,
            "stop_reason": rec["stop_reason"], "passed": rec["passed"], "failure_mode": rec["failure_mode"],
            "reason": rec["reason"], "server_refusal": None}


def call(i: int, name: str, raw: str, result: str, ok: bool = True, hallucinated: str | None = None):
    message = {"role": "assistant", "content": None,
               "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": raw}}]}
    log = {"turn": i, "id": f"c{i}", "name": name, "raw_arguments": raw, "arguments": None, "result": result,
           "ok": ok, "hallucinated": hallucinated, "redundant": False, "duration_s": 0.01}
    return [message, {"role": "tool", "tool_call_id": f"c{i}", "content": result}], log


@pytest.fixture
def mixed(tmp_path):
    """Two models; every verdict, a hostile answer and reason, reasoning, a hallucinated call, an unknown cost."""
    a = [record("task_01", 1, True, model="coder"),
         {**record("task_01", 2, False, model="coder", mode="tool_call_hallucinated"),
          "reason": "fs_raed is not a tool", "cost_usd": None},
         {**record("task_02", 1, False, model="coder"), "reason": HOSTILE},
         {**record("task_02", 2, False, model="coder", mode="infra_error"), "stop_reason": "not_started"}]
    b = [record("task_01", 1, False, model="other/model", mode="gave_up_mid_plan"),
         {**record("task_01", 1, True, model="other/model"), "cached_prompt_tokens": 40, "reasoning_tokens": 7}]
    folder = write_campaign(tmp_path / "c-mixed", a + b, complete=True, runs=2, benchmark="agentic-core-v1",
                            benchmark_revision=4, models=[{"name": "coder", "model": "openai/coder-7b"}],
                            tasks={"task_01": {"name": "n1", "seed": 0, "content_hash": "h1"}})
    system_user = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Do the task."}]
    bodies = {
        ("coder", 1, "task_01"): call(0, "fs_read", '{"path": "a.txt"}', "41"),
        ("coder", 2, "task_01"): call(0, "fs_raed", "{not json", "ERROR: no tool fs_raed", False, "unknown tool"),
        ("coder", 1, "task_02"): call(0, "fs_read", '{"path": "b.txt"}', HOSTILE),
    }
    for r in a + b:
        path = folder / r["transcript"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if r["stop_reason"] == "not_started":  # a lost run: its identity, no conversation
            messages, logs = [], []
        else:
            pair, log = bodies.get((r["model"], r["run"], r["task"]), ([], None))
            final = {"role": "assistant", "content": HOSTILE if r["reason"] == HOSTILE else "ANSWER: 41"}
            if r["model"] == "other/model" and r["passed"]:
                final["reasoning_content"] = "Think: 40 + 1."
            messages, logs = [*system_user, *pair, final], [log] if log else []
        path.write_text(json.dumps(transcript(r, messages, logs)))
    return folder


def test_every_verdict_and_failure_mode_is_a_score(mixed, tmp_path, inspect_python, capsys):
    export(mixed, tmp_path / "logs", capsys)
    read = read_back(inspect_python, tmp_path / "logs")
    logs = {log["model"]: log for log in read["logs"]}
    assert sorted(logs) == ["openai/coder-7b", "other/model"]  # the models.yaml entry's model, else its name
    coder = {(s["id"], s["epoch"]): s for s in logs["openai/coder-7b"]["samples"]}
    assert {k: (s["verdict"], s["failure_mode"]) for k, s in coder.items()} == {
        ("task_01", 1): ("C", "passed"), ("task_01", 2): ("I", "tool_call_hallucinated"),
        ("task_02", 1): ("I", "wrong_answer"), ("task_02", 2): ("I", "infra_error")}
    assert coder[("task_01", 2)]["explanation"] == "fs_raed is not a tool"
    # Model-written text is carried as data, unchanged: the answer, the reason, a tool's result.
    assert coder[("task_02", 1)]["explanation"] == coder[("task_02", 1)]["answer"] == HOSTILE
    assert HOSTILE in coder[("task_02", 1)]["text"]
    # A call whose arguments are not JSON keeps them as its parse error; its failure is the tool's error.
    assert coder[("task_01", 2)]["calls"] == [["fs_raed", {}, "arguments are not a JSON object: {not json"]]
    assert coder[("task_01", 2)]["tool_errors"] == ["unknown tool"]
    assert coder[("task_02", 2)]["roles"] == [] and coder[("task_02", 2)]["input"] == ""
    assert coder[("task_01", 1)]["metadata"]["instance"] == {"name": "n1", "seed": 0, "content_hash": "h1"}
    # An unknown cost stays unknown, for the run and for the model's total.
    assert "total_cost" in coder[("task_01", 1)]["usage"]["openai/coder-7b"]
    assert coder[("task_01", 2)]["usage"]["openai/coder-7b"]["total_cost"] is None
    assert logs["openai/coder-7b"]["usage"]["openai/coder-7b"]["total_cost"] is None
    assert logs["openai/coder-7b"]["metrics"]["accuracy"] == 0.25
    assert logs["openai/coder-7b"]["metrics"]["stderr"] == pytest.approx(0.25)  # sd 0.5 (ddof 1) / sqrt(4)
    # The run recorded twice (a resumed session) is one sample, the last record; cached tokens apart.
    [other] = logs["other/model"]["samples"]
    assert (other["verdict"], other["reasoning"]) == ("C", ["Think: 40 + 1."])
    usage = other["usage"]["other/model"]
    assert (usage["input_tokens"], usage["input_tokens_cache_read"], usage["reasoning_tokens"]) == (60, 40, 7)


def test_the_export_needs_no_inspect_ai(mixed, tmp_path):
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in dependencies if "inspect" in d.lower()]
    script = ("import sys; sys.modules['inspect_ai'] = None  # any import of it fails\n"
              "from pytest_agentic.report.cli import export_main\n"
              f"raise SystemExit(export_main(['inspect', {str(mixed)!r}]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(list((mixed / "inspect-logs").glob("*.eval"))) == 2


def test_exports_are_reproducible(mixed, tmp_path, capsys):
    export(mixed, tmp_path / "one", capsys)
    export(mixed, tmp_path / "two", capsys)
    one, two = sorted((tmp_path / "one").iterdir()), sorted((tmp_path / "two").iterdir())
    assert [p.name for p in one] == [p.name for p in two]
    import zipfile
    for a, b in zip(one, two):
        with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
            assert za.namelist() == zb.namelist()
            assert all(za.read(n) == zb.read(n) for n in za.namelist())


def test_bad_input_names_the_file(mixed, tmp_path, capsys):
    assert export_main(["inspect", str(tmp_path / "missing")]) == 2
    assert f"{tmp_path / 'missing'}: no such campaign folder" in capsys.readouterr().err
    lost = mixed / "transcripts" / "coder" / "task_02-run1.json"
    lost.unlink()
    assert export_main(["inspect", str(mixed), "-o", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert f"{lost}: cannot read the transcript of coder task_02 run 1" in err
    assert not list((tmp_path / "logs").glob("*.partial"))


def test_inspect_view_shows_the_runs_and_model_text_stays_text(mixed, tmp_path, inspect_python, chromium, capsys):
    """What a person sees: ``inspect view`` serving the logs, in Chromium; the hostile answer is shown, never run."""
    export(mixed, tmp_path / "logs", capsys)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    errors = tmp_path / "inspect-view.err"
    with open(errors, "w") as err:
        server = subprocess.Popen([str(inspect_python.parent / "inspect"), "view", "--log-dir", str(tmp_path / "logs"),
                                   "--host", "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = f"http://127.0.0.1:{port}/"
        for _ in range(240):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, errors.read_text()
                time.sleep(0.25)
        [log] = [p.name for p in (tmp_path / "logs").glob("*coder-7b*.eval")]
        with browser.Session(tmp_path / "profile") as page:
            page.go(f"{url}#/logs/{log}")
            shown = page.wait_for("tool_call_hallucinated")
            for text in ("agentic-core-v1", "openai/coder-7b", "task_01", "task_02", "wrong_answer", "infra_error",
                         "ACCURACY", "0.25"):
                assert text in shown
            page.go(f"{url}#/logs/{log}/samples/sample/task_02/1/")
            shown = page.wait_for("fs_read")
            assert "<script>document.title" in shown  # the answer and the tool's result, as text
            assert page.js("document.title") != "pwned" and page.js("document.body.dataset.pwned") is None
            assert page.js("document.querySelectorAll('img[src=x]').length") == 0
    finally:
        server.terminate()
        server.wait(30)
