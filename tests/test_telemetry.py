"""OpenTelemetry traces of a campaign, as a collector on 127.0.0.1 receives them; litellm callbacks."""

from __future__ import annotations

import json
import os

import pytest

from pytest_agentic.run.task import Final, ToolCall
from pytest_agentic.telemetry.settings import TelemetryError, trace_settings

from .fault_server import FaultServer
from .helpers import ROOT, campaign_dir, runs
from .otlp_receiver import OtlpReceiver

#: The API key of the model under test: no span, campaign file or report may hold it.
SECRET = "sk-otel-test-7f3a9c2e51d84b06"

LOOK_AND_SAY = '''
from pytest_agentic import Final, TaskInstance, ToolCall, task

def build(seed):
    return TaskInstance(prompt="Look, then say ok.", files={"a.txt": "a"}, tools=("fs_list", "fs_read"),
                        reference=[ToolCall("fs_list", {}), ToolCall("fs_read", {"path": "a.txt"}), Final("ok")])

@task("look_1", "look_and_say", build=build)
def test_look(agent):
    assert agent.run().final_answer == "ok"
'''


def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


@pytest.fixture
def receiver():
    with OtlpReceiver() as server:
        yield server


@pytest.fixture
def endpoint():
    """The model's endpoint over HTTP (litellm's real OpenAI path): one run is two tool calls and an answer."""
    with FaultServer({"Look, then say ok.": [ToolCall("fs_list", {}), ToolCall("fs_read", {"path": "a.txt"}),
                                             Final("ok")]}) as server:
        yield server


def look_project(pytester, server, monkeypatch):
    monkeypatch.setenv("AGENTIC_TEST_OTEL_KEY", SECRET)
    entry = {"model": "openai/look", "api_base": server.api_base, "api_key_env": "AGENTIC_TEST_OTEL_KEY",
             "price": {"input_per_token": 0.001, "output_per_token": 0.002}, "limits": {"max_retries": 0}}
    (pytester.path / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": entry}}))
    pytester.makepyfile(test_look=LOOK_AND_SAY)


def by_id(spans):
    return {s["span_id"]: s for s in spans}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_spans_reach_an_otlp_receiver_parented_with_gen_ai_attributes_and_no_secret(
        pytester, receiver, endpoint, monkeypatch, xdist):
    _clean_environment(monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "agentic-test-campaign")
    look_project(pytester, endpoint, monkeypatch)
    result = pytester.runpytest_subprocess("--runs", "3", "--agentic-out", "out", *xdist)
    result.assert_outcomes(passed=3)
    folder = campaign_dir(pytester.path / "out")
    records = runs(folder)
    spans = receiver.spans
    # One trace per session, every span in it, every span sent once.
    assert len({s["trace_id"] for s in spans}) == 1
    assert len(by_id(spans)) == len(spans)
    assert {s["resource"]["service.name"] for s in spans} == {"agentic-test-campaign"}

    sessions = [s for s in spans if s["name"] == "agentic campaign"]
    assert len(sessions) == 1 and sessions[0]["parent_span_id"] is None
    session = sessions[0]
    assert session["attributes"]["agentic.campaign.id"] == folder.name
    assert session["attributes"]["agentic.runs_recorded"] == 3
    assert session["attributes"]["agentic.models"] == ["local"]

    run_spans = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    assert len(run_spans) == len(records) == 3
    assert all(s["parent_span_id"] == session["span_id"] for s in run_spans)
    by_run = {s["attributes"]["agentic.run"]: s for s in run_spans}
    for record in records:
        attrs = by_run[record["run"]]["attributes"]
        assert attrs["agentic.task"] == record["task"] == "look_1"
        assert attrs["agentic.model"] == "local" and attrs["agentic.seed"] == record["seed"]
        assert attrs["agentic.verdict"] == "pass" and "agentic.failure_mode" not in attrs
        assert attrs["agentic.benchmark.revision"] >= 1
        assert attrs["gen_ai.usage.input_tokens"] == record["prompt_tokens"]
        assert attrs["gen_ai.usage.output_tokens"] == record["completion_tokens"]
        assert attrs["agentic.cost_usd"] == pytest.approx(record["cost_usd"])
        assert attrs["gen_ai.request.model"] == "openai/look"

    # Every model call (litellm's own integration) and every tool call is a child of its run.
    model_calls = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    tool_calls = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "execute_tool"]
    assert len(model_calls) == sum(r["turns"] for r in records) == 9
    assert len(tool_calls) == sum(r["tool_calls"] for r in records) == 6
    assert len(spans) == 1 + 3 + 9 + 6
    runs_by_id = {s["span_id"]: s for s in run_spans}
    for span in model_calls + tool_calls:
        assert span["parent_span_id"] in runs_by_id, span["name"]
    for run in run_spans:
        children = [s for s in model_calls if s["parent_span_id"] == run["span_id"]]
        assert len(children) == 3
        assert all(run["start"] <= c["start"] <= c["end"] <= run["end"] for c in children)
    for span in model_calls:
        attrs = span["attributes"]
        assert span["scope"] == "litellm" and span["name"] == "chat look"
        assert attrs["gen_ai.provider.name"] == "openai" and attrs["gen_ai.request.model"] == "look"
        assert attrs["gen_ai.usage.input_tokens"] >= 1 and "gen_ai.usage.output_tokens" in attrs
        assert "gen_ai.input.messages" not in attrs  # prompts only where the user opts in
    assert sorted(s["attributes"]["gen_ai.tool.name"] for s in tool_calls) == ["fs_list"] * 3 + ["fs_read"] * 3

    # No secret in any attribute, and no prompt or tool output (content was not opted in).
    everything = json.dumps(spans)
    assert SECRET not in everything
    assert "Look, then say ok." not in everything and "a.txt" not in everything
    # Nor in the campaign folder.
    assert not [p for p in folder.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]


def test_scripted_models_are_traced_under_xdist(pytester, receiver, monkeypatch):
    """The oracle and the near-miss (litellm's custom provider) under -n 2: one trace, each call in its run."""
    import shutil

    _clean_environment(monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("AGENTIC_PRELOAD", "0")  # no preload: the tracer is installed all the same
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    result = pytester.runpytest_subprocess("tasks", "-p", "no:randomly", "--model", "oracle", "--model", "near-miss",
                                           "-m", "task_07 or task_08", "--runs", "2", "--agentic-out", "out",
                                           "-n", "2")
    result.assert_outcomes(passed=4, failed=4)
    records = runs(campaign_dir(pytester.path / "out"))
    spans = receiver.spans
    assert len({s["trace_id"] for s in spans}) == 1
    session, = [s for s in spans if s["name"] == "agentic campaign"]
    run_spans = {s["span_id"]: s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"}
    assert len(run_spans) == len(records) == 8
    assert {s["parent_span_id"] for s in run_spans.values()} == {session["span_id"]}
    verdicts = {(s["attributes"]["agentic.model"], s["attributes"]["agentic.task"], s["attributes"]["agentic.run"]):
                (s["attributes"]["agentic.verdict"], s["attributes"].get("agentic.failure_mode"))
                for s in run_spans.values()}
    assert verdicts == {(r["model"], r["task"], r["run"]): ("pass" if r["passed"] else "fail", r["failure_mode"])
                        for r in records}
    model_calls = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert len(model_calls) == sum(r["turns"] for r in records)
    assert {s["attributes"]["gen_ai.provider.name"] for s in model_calls} == {"agentic-scripted"}
    for run in run_spans.values():
        mine = [s for s in model_calls if s["parent_span_id"] == run["span_id"]]
        record, = [r for r in records if (r["model"], r["task"], r["run"]) == (
            run["attributes"]["agentic.model"], run["attributes"]["agentic.task"], run["attributes"]["agentic.run"])]
        assert len(mine) == record["turns"]
        assert len([s for s in spans if s["parent_span_id"] == run["span_id"]
                    and s["attributes"].get("gen_ai.operation.name") == "execute_tool"]) == record["tool_calls"]


def test_content_only_when_opted_in(pytester, receiver, endpoint, monkeypatch):
    _clean_environment(monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    look_project(pytester, endpoint, monkeypatch)
    pytester.runpytest_subprocess("--runs", "1", "--agentic-out", "out", "--agentic-otel-content").assert_outcomes(
        passed=1)
    spans = receiver.spans
    assert {s["resource"]["service.name"] for s in spans} == {"pytest-agentic"}
    model_calls = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert any("Look, then say ok." in s["attributes"].get("gen_ai.input.messages", "") for s in model_calls)
    reads = [s for s in spans if s["attributes"].get("gen_ai.tool.name") == "fs_read"]
    assert reads and reads[0]["attributes"]["gen_ai.tool.call.arguments"] == '{"path": "a.txt"}'
    assert SECRET not in json.dumps(spans)


SYS_MODULES_PROBE = '''
import json, os, sys

def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open(os.environ["AGENTIC_TEST_MODULES"], "w") as fh:
            json.dump(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"
                             or m.startswith("pytest_agentic.telemetry")), fh)
'''


#: What of OpenTelemetry tracing imports: the SDK, its exporters and the protocol's messages. Its API alone
#: (``opentelemetry.trace``, ``opentelemetry.context``) comes with litellm's first call that offers tools:
#: litellm imports mcp there, and mcp imports the API, traced or not.
SDK = ("opentelemetry.sdk", "opentelemetry.exporter", "opentelemetry.proto", "opentelemetry.semconv",
       "pytest_agentic.telemetry.traces", "pytest_agentic.telemetry.callbacks")


def test_without_the_variables_no_opentelemetry_sdk_is_imported(pytester, endpoint, monkeypatch):
    _clean_environment(monkeypatch)
    look_project(pytester, endpoint, monkeypatch)
    pytester.makeconftest(SYS_MODULES_PROBE)
    monkeypatch.setenv("AGENTIC_TEST_MODULES", str(pytester.path / "modules.json"))
    pytester.runpytest_subprocess("--runs", "2", "--agentic-out", "out").assert_outcomes(passed=2)
    imported = json.loads((pytester.path / "modules.json").read_text())
    assert [m for m in imported if m.startswith(SDK)] == []
    assert "pytest_agentic.telemetry.settings" in imported  # the probe saw the session's modules
    # The probe sees them when they are imported: with tracing on, the same session has them.
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        pytester.runpytest_subprocess("--runs", "1", "--agentic-out", "out").assert_outcomes(passed=1)
        imported = json.loads((pytester.path / "modules.json").read_text())
        assert "opentelemetry.sdk.trace" in imported and "pytest_agentic.telemetry.traces" in imported
        assert receiver.spans


@pytest.mark.parametrize(("environ", "option", "expected"), [
    ({}, False, None),
    ({"OTEL_SERVICE_NAME": "x"}, False, None),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, False, ("http/protobuf", False)),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, False,
     ("grpc", False)),
    ({}, True, ("http/protobuf", False)),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_SDK_DISABLED": "true"}, True, None),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_TRACES_EXPORTER": "none"}, False, None),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
     False, ("http/protobuf", True)),
])
def test_settings_follow_the_standard_variables(environ, option, expected):
    found = trace_settings(option, False, environ)
    assert (found.protocol, found.content) == expected if expected else found is None


def test_an_unknown_protocol_is_named():
    with pytest.raises(TelemetryError, match="OTEL_EXPORTER_OTLP_PROTOCOL='http/json'"):
        trace_settings(False, False, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


# -- litellm callbacks ---------------------------------------------------------------------------------

RECORDER = '''
import json, os
from litellm.integrations.custom_logger import CustomLogger

class Recorder(CustomLogger):
    """Writes one line per model call it hears; its 'credential' comes from the environment."""

    def __init__(self):
        super().__init__()
        self.token = os.environ["RECORDER_SECRET_TOKEN"]

    def _write(self, kind, kwargs):
        metadata = (kwargs.get("litellm_params") or {}).get("metadata") or {}
        with open(os.environ["RECORDER_FILE"], "a") as fh:
            fh.write(json.dumps({"kind": kind, "pid": os.getpid(), "model": kwargs.get("model"),
                                 "task": metadata.get("agentic_task"), "run": metadata.get("agentic_run"),
                                 "token_seen": self.token == os.environ["RECORDER_SECRET_TOKEN"]}) + "\\n")

    def log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._write("success", kwargs)

    def log_failure_event(self, kwargs, response_obj, start_time, end_time):
        self._write("failure", kwargs)
'''
RECORDER_TOKEN = "rec-token-5b0e7d21c9f34a88"


@pytest.fixture
def scripted_project(pytester, monkeypatch):
    import shutil

    _clean_environment(monkeypatch)
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    models = (ROOT / "models.yaml").read_text()
    (pytester.path / "models.yaml").write_text(models + "\ncallbacks: [recorder:Recorder]\n")
    (pytester.path / "recorder.py").write_text(RECORDER)
    monkeypatch.setenv("RECORDER_FILE", str(pytester.path / "calls.jsonl"))
    monkeypatch.setenv("RECORDER_SECRET_TOKEN", RECORDER_TOKEN)
    return pytester


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_callback_named_in_models_yaml_hears_every_call(scripted_project, xdist):
    result = scripted_project.runpytest_subprocess(
        "tasks", "-p", "no:randomly", "--model", "oracle", "--model", "near-miss", "-m", "task_07 or task_08",
        "--runs", "2", "--agentic-out", "out", *xdist)
    result.assert_outcomes(passed=4, failed=4, deselected=0 if xdist else 32)
    folder = campaign_dir(scripted_project.path / "out")
    records = runs(folder)
    heard = [json.loads(line) for line in (scripted_project.path / "calls.jsonl").read_text().splitlines()]
    # Every call, once, attributed to its run; litellm's warm-up call (before the runs) is not one.
    calls: dict[tuple[str, str, int], int] = {}
    for line in heard:
        assert line["kind"] == "success" and line["token_seen"]
        key = (line["model"], line["task"], line["run"])
        calls[key] = calls.get(key, 0) + 1
    expected = {(("oracle" if r["model"] == "oracle" else "near-miss"), r["task"], r["run"]): r["turns"]
                for r in records}
    assert {(m.split("/")[-1], t, r): n for (m, t, r), n in calls.items()} == expected
    assert sum(expected.values()) == len(heard) > 8
    if xdist:
        assert len({line["pid"] for line in heard}) == 2
    # The campaign records the callback's name, never its credential.
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["callbacks"] == ["recorder:Recorder"]
    assert not [p for p in folder.rglob("*") if p.is_file() and RECORDER_TOKEN in p.read_text(errors="replace")]


def test_the_option_names_a_callback_too(scripted_project):
    (scripted_project.path / "models.yaml").write_text((ROOT / "models.yaml").read_text())
    scripted_project.runpytest_subprocess("tasks", "--model", "oracle", "-m", "task_07", "--runs", "1",
                                          "--agentic-out", "out", "--agentic-callback",
                                          "recorder:Recorder").assert_outcomes(passed=1, deselected=9)
    records = runs(campaign_dir(scripted_project.path / "out"))
    assert len((scripted_project.path / "calls.jsonl").read_text().splitlines()) == records[0]["turns"]


@pytest.mark.parametrize(("callbacks", "message"), [
    ("[langfuze]", "key 'callbacks': 'langfuze' is not a litellm callback; litellm 1.106.2 knows"),
    ("[recorder:Missing]", "key 'callbacks': 'recorder:Missing': recorder has no class Missing"),
    ("[nowhere:Logger]", "key 'callbacks': 'nowhere:Logger': cannot import nowhere"),
])
def test_a_bad_callback_is_named_before_any_run(scripted_project, callbacks, message):
    models = (ROOT / "models.yaml").read_text()
    (scripted_project.path / "models.yaml").write_text(models + f"\ncallbacks: {callbacks}\n")
    result = scripted_project.runpytest_subprocess("tasks", "--model", "oracle", "-m", "task_07", "--runs", "1",
                                                   "--agentic-out", "out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*models.yaml: {message}*"])
    assert not (scripted_project.path / "out").exists()
