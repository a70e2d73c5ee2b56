"""Sessions that publish: comparison, predictions, gates, rescoring and the manifest, end to end."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import json
import shutil
import textwrap

import pytest

from pytest_agentic.verdicts.gates import GATE_FAILED_EXIT

from .helpers import ROOT, campaign_dir, runs
from .records import record, write_campaign

CORE = "task_07 or task_08 or task_09"
NAMES = {"task_07": "multi_step_plan", "task_08": "recover_from_tool_error", "task_09": "know_when_to_stop"}
MODELS = """\
default: [oracle]
models:
  oracle:
    model: agentic-scripted/oracle
    api_key_env: AGENTIC_TEST_KEY
    params: {temperature: 0.25, max_tokens: 512}
    price: {input_per_token: 0.0, output_per_token: 0.0}
  near-miss:
    model: agentic-scripted/near-miss
    price: {input_per_token: 0.0, output_per_token: 0.0}
  down:
    model: openai/gpt-4o-mini
    api_base: http://127.0.0.1:9/v1
    price: {input_per_token: 0.000001, output_per_token: 0.000002}
    limits: {max_retries: 0, request_timeout_s: 5}
"""
SECRET = "sk-agentic-test-3f9a1c"


@pytest.fixture
def project(pytester, monkeypatch):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    (pytester.path / "models.yaml").write_text(MODELS)
    monkeypatch.setenv("AGENTIC_TEST_KEY", SECRET)
    return pytester


def session(pytester, *args: str):
    return pytester.runpytest_subprocess("tasks", "-p", "no:randomly", "-p", "no:cacheprovider", *args)


def test_comparison_predictions_and_a_failed_regression_gate(project):
    baseline = [record(t, n, True, model="near-miss", name=NAMES[t]) for t in NAMES for n in (1, 2, 3)]
    write_campaign(project.path / "base", baseline, finished_at="2026-05-21")
    (project.path / "p.yaml").write_text(textwrap.dedent("""\
        predictions:
          - {id: P1, claim: the near-miss passes everything, score: "9/9"}
          - {id: P2, task: task_09, score: "0/3"}
          - {id: F1, score: "<= 1/9", falsifier: true}
    """))
    result = session(project, "--model", "near-miss", "-m", CORE, "--agentic-out", "out",
                     "--agentic-compare", "base", "--agentic-fail-on-regression", "--agentic-predictions", "p.yaml")
    assert result.ret == GATE_FAILED_EXIT
    # Top down: the verdict (the score, the gates), then the tables and the other verdicts.
    result.stdout.fnmatch_lines([
        "- near-miss: 0/9 = 0.0%*",
        "CI gates:",
        # Three tasks in common: a paired test cannot reach p < 0.05, so the verdict is Fisher's and says so.
        "- FAIL fail-on-regression: near-miss: 9/9 -> 0/9, down, beyond noise (Fisher's exact test, p = 4.11e-05)",
        f"gates FAILED (1 of 1): the session exits with status {GATE_FAILED_EXIT}",
        "*near-miss*ALL*0/9*",
        "Comparison with an earlier campaign:",
        "*near-miss*task_09 know_when_to_stop*3/3*0/3*down*",
        "*near-miss*Total*9/9*0/9*-9 (beyond noise)*4.11e-05*",
        "Predictions:",
        "*1/2 predictions held; falsifiers triggered: F1*",
        "*P1*the near-miss passes everything*overall score 9/9*0/9*failed*",
        "campaign written to *",
        "report: file://*",
        "failed runs: 9; *",
    ])
    folder = campaign_dir(project.path / "out")
    summary = (folder / "summary.md").read_text()
    for text in ("## Comparison with an earlier campaign", "| task_07 multi_step_plan", "beyond noise",
                 "## Predictions", "| F1 (falsifier)", "triggered", "## CI gates", "FAIL fail-on-regression"):
        assert text in summary, text
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["compared_with"]["campaign_id"] == "base"
    assert manifest["compared_with"]["models"][0]["verdict"] == "beyond noise"
    assert manifest["gates"] == {"passed": False, "exit_status": GATE_FAILED_EXIT, "results": [
        {"gate": "fail-on-regression", "passed": False,
         "detail": "near-miss: 9/9 -> 0/9, down, beyond noise (Fisher's exact test, p = 4.11e-05)"}]}
    compared = manifest["compared_with"]["models"][0]
    assert (compared["verdict_basis"], compared["verdict_p_value"]) == ("pooled", compared["p_value"])
    assert compared["paired"]["tasks"] == 3 and compared["paired"]["p_value"] == 0.25
    assert (folder / "predictions.yaml").read_text() == (project.path / "p.yaml").read_text()
    assert len(manifest["predictions"]["sha256"]) == 64


def test_gate_only_lets_the_gates_decide(project):
    # Under xdist too: the controller sets the exit status.
    passing = session(project, "--model", "near-miss", "-m", "task_09", "--agentic-out", "a", "-n", "2",
                      "--agentic-gate-only", "--agentic-min-pass-rate", "0%")
    passing.assert_outcomes(failed=3)
    assert passing.ret == 0
    passing.stdout.fnmatch_lines(["- PASS min-pass-rate: near-miss: pass rate 0/3 = 0.0% "
                                  "(95% CI 0.0%-56.1%, Wilson (one task)) >= 0.0%",
                                  "*--agentic-gate-only*exit status 0"])
    failing = session(project, "--model", "near-miss", "-m", "task_09", "--agentic-out", "b",
                      "--agentic-gate-only", "--agentic-min-lower-bound", "0.5")
    assert failing.ret == GATE_FAILED_EXIT
    failing.stdout.fnmatch_lines(["- FAIL min-lower-bound: near-miss: 95% lower bound 0.0% "
                                  "(0/3; 95% CI 0.0%-56.1%, Wilson (one task)) < 50.0%"])


class _FailingChat(BaseHTTPRequestHandler):
    """An endpoint that is up at start (it lists its model) and fails every call: 500."""

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, b'{"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]}')

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self._send(500, b'{"error": {"message": "internal error", "type": "server_error"}}')


def test_infra_errors_are_gated_apart_from_the_pass_rate(project):
    # Up at start (an unreachable endpoint stops the session there, naming its URL), failing every call after.
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FailingChat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (project.path / "models.yaml").write_text(
            MODELS.replace("http://127.0.0.1:9/v1", f"http://127.0.0.1:{server.server_address[1]}/v1"))
        result = session(project, "--model", "down", "-m", "task_09", "--agentic-out", "out",
                         "--agentic-gate-only", "--agentic-max-infra-errors", "2", "--agentic-min-pass-rate", "0.9")
    finally:
        server.shutdown()
        server.server_close()
    assert result.ret == GATE_FAILED_EXIT
    # Lost runs are not failed runs: the pass rate has nothing to judge, and that alone cannot pass a gate.
    result.stdout.fnmatch_lines(["- FAIL min-pass-rate: down: pass rate no judged run < 90.0%",
                                 "- FAIL max-infra-errors: 3 infra error(s) > 2 allowed",
                                 "*down*ALL*0/0*",  # the score; the table folds to 120 columns,
                                 "*down*ALL*- - -*3*"])  # its infra column in the second fold
    assert [r["failure_mode"] for r in runs(campaign_dir(project.path / "out"))] == ["infra_error"] * 3


@pytest.mark.parametrize("args, message", [
    (["--agentic-predictions", "bad.yaml"], "bad.yaml: entry 2 (P2): unknown key 'scor'"),
    (["--agentic-compare", "nowhere"], "--agentic-compare: nowhere: no such campaign folder"),
    (["--agentic-fail-on-regression"], "--agentic-fail-on-regression needs --agentic-compare"),
    (["--agentic-rescore", "nowhere"], "--agentic-rescore: nowhere: no such campaign folder"),
    (["--agentic-gate-only"], "--agentic-gate-only needs a gate"),
])
def test_bad_input_stops_the_session_at_start(project, args, message):
    (project.path / "bad.yaml").write_text("predictions:\n  - {id: P1, score: '1/3'}\n  - {id: P2, scor: '1/3'}\n")
    result = session(project, "--model", "oracle", "-m", "task_09", "--agentic-out", "out", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert not (project.path / "out").exists()


CALL_COUNTER = '''
import os
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm

_completion = litellm.completion

def counting_completion(*args, **kwargs):
    with open(os.environ["AGENTIC_CALLS_LOG"], "a") as fh:
        fh.write(kwargs["model"] + "\\n")
    return _completion(*args, **kwargs)

litellm.completion = counting_completion
'''


NEW_TASK = '''"""task_99 new_task: added after the campaign."""
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="p", files={}, tools=("fs_read",), reference=[Final("a")])

@task("task_99", "new_task", build=build)
def test_new_task(agent):
    """Added after the campaign."""
    agent.run()
'''


def test_rescore_replays_a_campaign_without_calling_a_model(project, monkeypatch):
    session(project, "--model", "oracle", "-m", CORE, "--agentic-out", "old").assert_outcomes(passed=9)
    old = campaign_dir(project.path / "old")
    (project.path / "conftest.py").write_text(CALL_COUNTER)
    calls_log = project.path / "calls.log"
    monkeypatch.setenv("AGENTIC_CALLS_LOG", str(calls_log))
    monkeypatch.delenv("AGENTIC_TEST_KEY")  # a rescore needs no key

    # A task added since is not in the stored campaign: deselected, not run.
    (project.path / "tasks" / "test_task_99_new.py").write_text(NEW_TASK)
    # As stored, the oracle's campaign rescores to 9/9, and only the replay model is called.
    same = session(project, "--agentic-rescore", str(old), "--agentic-out", "same")
    unrecorded = len(list((project.path / "tasks").glob("test_task_*.py"))) - 3  # task_99 and any beyond the core
    same.assert_outcomes(passed=9, deselected=unrecorded)
    same.stdout.fnmatch_lines(["*oracle*ALL*9/9*", "*no model called*9 passes then, 9 now*"])
    calls = calls_log.read_text().splitlines()
    assert len(calls) >= 9 and set(calls) == {"agentic-scripted/replay"}
    calls_log.unlink()

    # Point the recorded model at a refused port: were it called, its runs would be infra errors.
    manifest = json.loads((old / "campaign.json").read_text())
    manifest["models"][0].update(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    (old / "campaign.json").write_text(json.dumps(manifest))
    # Change one recorded final answer: the current checker must now reject that run.
    path = old / "transcripts/oracle/task_09-run2.json"
    transcript = json.loads(path.read_text())
    final = [m for m in transcript["messages"] if m["role"] == "assistant"][-1]
    final["content"] = "The 10-day moving average is 42.0."
    # ... asked, as in revision 2, without an answer line: the rescore must say, once, that prompts differ.
    asked = next(m for m in transcript["messages"] if m["role"] == "user")
    asked["content"] = asked["content"].split(" End your reply with the line")[0]
    path.write_text(json.dumps(transcript))
    manifest["benchmark_revision"] = 2
    (old / "campaign.json").write_text(json.dumps(manifest))
    # Pretend task_07 was different when the campaign ran: the rescore must say so.
    stored = runs(old)
    for r in stored:
        if r["task"] == "task_07":
            r["task_hash"] = "0" * 64
    (old / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in stored))

    result = session(project, "--agentic-rescore", str(old), "-m", CORE, "--agentic-out", "new", "-n", "2")
    result.assert_outcomes(passed=8, failed=1)
    calls = calls_log.read_text().splitlines()
    assert calls and set(calls) == {"agentic-scripted/replay"}, set(calls)
    folder = campaign_dir(project.path / "new")
    assert folder.name.endswith("-rescore-oracle")
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["rescore_of"] == old.name
    assert manifest["models"][0]["model"] == "openai/gpt-4o-mini"  # the model that made the transcripts
    records = {(r["task"], r["run"]): r for r in runs(folder)}
    assert len(records) == 9
    changed = records[("task_09", 2)]
    assert changed["failure_mode"] == "wrong_answer" and changed["original"] == {"passed": True, "failure_mode": None}
    assert all(r["rescore_of"] == old.name and r["tags"]["replay_divergent_calls"] == 0 for r in records.values())
    old_records = {(r["task"], r["run"]): r for r in runs(old)}
    assert all(records[k]["prompt_tokens"] == old_records[k]["prompt_tokens"] for k in records)
    summary = (folder / "summary.md").read_text()
    assert "## Rescore" in summary and "9 passes then, 8 now" in summary
    assert "| oracle  | task_09 | 2     | passed | wrong_answer" in summary
    assert "Changed since the campaign (content hash differs; the recorded calls were replayed on today's " \
           "instance): task_07." in summary
    assert [k for k, r in records.items() if r["tags"].get("task_changed")] == [("task_07", n) for n in (1, 2, 3)]
    assert changed["tags"].get("answer_format") and changed["tags"].get("prompt_changed")
    head = summary.split("## Pass rate")[0]
    assert head.count("other prompts than today's") == 1 and "(revision 2) gave its models" in head and \
        "for task_09:" in head
    result.stdout.fnmatch_lines(["*rescored campaign*(revision 2) gave its models other prompts*task_09*answer_format*"])
    assert result.stdout.str().count("other prompts than today's") == 1


def test_manifest_records_provenance_and_no_secret(project):
    session(project, "--model", "oracle", "-m", "task_08", "--agentic-out", "out").assert_outcomes(passed=3)
    folder = campaign_dir(project.path / "out")
    manifest = json.loads((folder / "campaign.json").read_text())
    for key in ("harness_version", "litellm_version", "packages", "tasks", "models", "runs", "seed",
                "command_line", "started_at", "finished_at", "machine", "pytest_version"):
        assert manifest.get(key) is not None, key
    assert manifest["packages"]["litellm"] == manifest["litellm_version"]
    assert manifest["tasks"]["task_08"]["seed"] == 0 and len(manifest["tasks"]["task_08"]["content_hash"]) == 64
    assert manifest["models"][0]["params"] == {"temperature": 0.25, "max_tokens": 512}
    assert manifest["models"][0]["api_key_env"] == "AGENTIC_TEST_KEY"
    assert {"os", "python", "processor"} <= set(manifest["machine"])
    assert "--agentic-out" in manifest["command_line"]
    assert manifest["started_at"] <= manifest["finished_at"]
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(), path
