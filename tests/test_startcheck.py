"""Start-up checks from litellm's own knowledge and the endpoint's: a bad entry stops the session before
the first run, naming file, entry and key; what only shows during a campaign is named as what it is."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from pytest_agentic import Final
from pytest_agentic.run.calls import startcheck
from pytest_agentic.run.models import ModelEntry

from .fault_server import FaultServer
from .helpers import campaign_dir, runs

PROMPT = "Say ok."
TASK = f'''
from pytest_agentic import Final, TaskInstance, task

@task("ok_1", "ok", build=lambda seed: TaskInstance(prompt={PROMPT!r}, files={{}}, tools=("fs_list",),
                                                     reference=[Final("ok")]))
def test_ok(agent):
    assert agent.run().final_answer == "ok"
'''
FAST = {"max_retries": 1, "retry_backoff_s": 0.01, "retry_backoff_cap_s": 0.02, "request_timeout_s": 5}


class ListingServer(FaultServer):
    """The fault server, serving the models in ``serves`` only: it lists them at ``GET /v1/models`` (unless
    ``lists`` is False: then 404) and answers a call for another one 404 ``model_not_found``, as OpenAI does."""

    def __init__(self, serves: list[str], lists: bool = True) -> None:
        self.serves, self.lists, self.gets = serves, lists, 0
        super().__init__({PROMPT: [Final("ok")]})

    def _handler(self) -> Any:
        server = self
        base = super()._handler()

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                server.gets += 1
                if self.path != "/v1/models" or not server.lists:
                    return self._send(404, {"error": {"message": "not found"}})
                return self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "me"}
                                                                   for m in server.serves]})

            def _answer(self, body: dict[str, Any]) -> None:
                if body.get("model") not in server.serves:
                    return self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                                      "type": "invalid_request_error", "code": "model_not_found"}})
                return super()._answer(body)

        return Handler


def project(pytester: pytest.Pytester, entry: dict[str, Any]) -> Path:
    entry = {"price": {"input_per_token": 0, "output_per_token": 0}, "limits": FAST, **entry}
    path = pytester.path / "models.yaml"
    path.write_text(json.dumps({"default": "mine", "models": {"mine": entry}}))
    pytester.makepyfile(test_ok=TASK)
    return path


def start(pytester: pytest.Pytester, *args: str, runs: int = 1) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--agentic-out", "out", "-p", "no:cacheprovider", "--runs", str(runs), *args)


def assert_stopped_at_start(pytester: pytest.Pytester, result: pytest.RunResult, *needles: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    err = result.stderr.str()
    for needle in ("models.yaml: entry 'mine'", *needles):
        assert needle in err, err
    assert not (pytester.path / "out").exists() or not any((pytester.path / "out").iterdir()), "no campaign written"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_provider_litellm_does_not_know_stops_at_start(pytester, xdist):
    project(pytester, {"model": "opena/x", "api_base": "http://127.0.0.1:9/v1"})
    result = start(pytester, *xdist)
    assert_stopped_at_start(pytester, result, "key 'model'", "'opena/x' names provider 'opena'",
                            "did you mean 'openai'?")
    assert "Traceback" not in result.stderr.str()


def test_an_unknown_parameter_is_an_error_or_with_drop_params_a_warning(pytester):
    with ListingServer(["x"]) as server:
        project(pytester, {"model": "openai/x", "api_base": server.api_base, "params": {"temprature": 0.0}})
        stopped = start(pytester)
        assert_stopped_at_start(pytester, stopped, "key 'params.temprature'", "did you mean 'temperature'?",
                                "litellm knows for provider 'openai'")
        assert server.calls == 0
        project(pytester, {"model": "openai/x", "api_base": server.api_base,
                           "params": {"temprature": 0.0, "drop_params": True}})
        warned = start(pytester)
    warned.assert_outcomes(passed=1)
    warned.stdout.fnmatch_lines(["agentic: warning: *entry 'mine': key 'params.temprature'*drop_params*"])


def test_under_xdist_a_warning_is_said_once_and_the_campaign_runs(pytester):
    with ListingServer(["x"]) as server:
        project(pytester, {"model": "openai/x", "api_base": server.api_base,
                           "params": {"temprature": 0.0, "drop_params": True}})
        result = start(pytester, "-n", "2", runs=4)
        assert server.calls == 4 and server.gets == 1
    result.assert_outcomes(passed=4)
    assert result.stdout.str().count("key 'params.temprature'") == 1, result.stdout.str()


def test_a_parameter_the_provider_does_not_support_is_named():
    entry = ModelEntry(name="b", model="bedrock/qwen.qwen3-coder-30b-a3b-v1:0",
                       params={"aws_region_name": "us-east-1", "temperature": 0.7, "seed": 1, "extra_body": {}})
    found = startcheck.check_entry(Path("models.yaml"), entry)
    assert [f.error for f in found] == [True]
    assert "key 'params.seed'" in found[0].message and "provider 'bedrock'" in found[0].message


def test_every_shipped_entry_passes_litellm_s_checks():
    from pytest_agentic.run.models import load_registry

    from .helpers import ROOT

    registry = load_registry(ROOT / "models.yaml")
    assert {name: startcheck.check_entry(registry.path, e) for name, e in registry.entries.items()} == \
        {name: [] for name in registry.entries}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_served_model_name_the_endpoint_lacks_stops_at_start_naming_what_it_serves(pytester, xdist):
    # Under xdist the controller asks while its workers start (``controller.EntryCheck``): the answer still
    # stops the session before any item is dealt, so the endpoint sees no call.
    with ListingServer(["org/model-7b", "org/model-70b"]) as server:
        project(pytester, {"model": "openai/org/model-7", "api_base": server.api_base})
        result = start(pytester, *xdist, runs=4)
        assert server.calls == 0 and server.gets == 1
    assert_stopped_at_start(pytester, result, f"the endpoint {server.api_base} does not serve 'org/model-7'",
                            "it serves 'org/model-7b', 'org/model-70b'")


def test_an_unreachable_endpoint_is_named_with_its_url(pytester):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        project(pytester, {"model": "openai/x", "api_base": url})
        result = start(pytester)
    assert_stopped_at_start(pytester, result, f"key 'api_base': the endpoint {url} cannot be reached")


def test_model_not_found_during_a_campaign_is_named_so_never_looks_down(pytester):
    # The endpoint does not list its models, so only the calls find out.
    with ListingServer(["y"], lists=False) as server:
        project(pytester, {"model": "openai/x", "api_base": server.api_base})
        result = start(pytester, runs=2)
    assert server.gets == 1
    result.assert_outcomes(failed=2)
    assert [r["failure_mode"] for r in runs(campaign_dir(pytester.path / "out"))] == ["infra_error"] * 2
    output = result.stdout.str()
    assert "looks down" not in output
    result.stdout.fnmatch_lines(["*the endpoint of model 'mine' does not serve the model it was asked for "
                                 "(model not found): all 2 runs failed*NotFoundError*"])


def test_scripted_models_need_no_endpoint_and_pass(pytester):
    (pytester.path / "models.yaml").write_text(json.dumps(
        {"models": {"oracle": {"model": "agentic-scripted/oracle", "params": {"temperature": 0}}}}))
    pytester.makepyfile(test_ok=TASK)
    start(pytester, "--model", "oracle").assert_outcomes(passed=1)


def test_ctrl_c_while_pytest_starts_is_one_line(pytester):
    # A conftest loads after the plugins and before pytest handles an interrupt: Ctrl-C arrives there.
    pytester.makeconftest("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret != 0
    assert result.stderr.lines == ["Interrupted (Ctrl-C) while pytest was starting: nothing ran, nothing was written."]
    assert "Traceback" not in result.stdout.str()


def test_a_model_s_caveat_is_said_before_the_first_run(pytester):
    caveat = "a smoke test: expected to score near 0; its runs take about a minute"
    (pytester.path / "models.yaml").write_text(json.dumps(
        {"models": {"oracle": {"model": "agentic-scripted/oracle", "caveat": caveat}}}))
    pytester.makepyfile(test_ok=TASK)
    result = start(pytester, "--model", "oracle", "-v")
    result.assert_outcomes(passed=1)
    lines = result.stdout.lines
    said = lines.index(f"agentic: model 'oracle': {caveat}")
    assert said < next(i for i, line in enumerate(lines) if "test_ok" in line and "PASSED" in line)


def test_the_shipped_default_says_it_is_a_smoke_test_and_how_long_it_takes():
    from pytest_agentic.run.models import load_registry

    from .helpers import ROOT

    registry = load_registry(ROOT / "models.yaml")
    default, = registry.select([])
    assert "score near 0" in default.caveat and "minutes" in default.caveat
    # Context and reply sized together: every slot's context holds a first prompt and a whole reply.
    assert default.server is not None
    # SmolLM2's first reply to task_09 ended by itself after 697 tokens (measured at max_tokens 2048; 512 cut
    # it), and the reply may take at most half the slot's context (run/models.py).
    assert 697 <= default.params["max_tokens"] <= default.server["ctx_size"] // 2


def test_readme_sets_up_a_virtual_environment_before_installing():
    import re

    from .helpers import ROOT

    readme = (ROOT / "README.md").read_text()
    setup = readme[readme.index("## The two commands"):readme.index("## Your own model")]
    venv, activate, install = (setup.index(s) for s in ("python3 -m venv .venv", ". .venv/bin/activate",
                                                          "pip install -e ."))
    assert venv < activate < install, "Debian's and Ubuntu's own Python refuse pip install outside a venv"
    assert "python3-venv" in setup  # Debian's Python has no venv module without it
    least = re.search(r'requires-python = ">=(\d+\.\d+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert f"Python {least} or newer" in setup


def test_ctrl_c_once_the_session_started_is_pytest_s_to_report(pytester):
    # From pytest_configure on pytest handles Ctrl-C; the start-up line must not claim that nothing ran.
    pytester.makeconftest("import os, signal\n"
                          "def pytest_sessionfinish(session):\n    os.kill(os.getpid(), signal.SIGINT)\n")
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert "while pytest was starting" not in result.stdout.str() + result.stderr.str()
    assert "KeyboardInterrupt" in result.stdout.str() + result.stderr.str()


def test_the_start_up_line_is_pytest_s_alone():
    import subprocess
    import sys

    # A console script of ours (agentic-report, ...) imports the package too: its Ctrl-C is not pytest starting.
    out = subprocess.run([sys.executable, "-c", "import sys, pytest_agentic.report.cli; "
                          "print(sys.excepthook is sys.__excepthook__)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


CONTROLLER_PROBE = '''
import sys

def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        print("controller imported litellm:", "litellm" in sys.modules)
'''


def test_a_clean_entry_is_remembered_and_xdist_s_controller_then_never_imports_litellm(pytester):
    with ListingServer(["x"]) as server:
        project(pytester, {"model": "openai/x", "api_base": server.api_base, "params": {"temperature": 0.0}})
        pytester.makeconftest(CONTROLLER_PROBE)
        first = pytester.runpytest_subprocess("-s", "--agentic-out", "out", "-n", "2", "--runs", "2")
        again = pytester.runpytest_subprocess("-s", "--agentic-out", "out", "-n", "2", "--runs", "2")
        assert server.gets == 2, "the endpoint is asked every session: only litellm's answer is remembered"
    first.assert_outcomes(passed=2)
    again.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["*controller imported litellm: True*"])
    again.stdout.fnmatch_lines(["*controller imported litellm: False*"])
    remembered = list((pytester.path / ".pytest_cache" / "v" / "agentic" / "startcheck").iterdir())
    assert [p.name for p in remembered] == [startcheck.entry_key(ModelEntry(name="mine", model="openai/x",
                                                                            params={"temperature": 0.0}))]


def test_a_finding_is_never_remembered_and_a_changed_entry_is_asked_again(pytester):
    project(pytester, {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1", "params": {"temprature": 0.0}})
    for _ in range(2):  # said both times: only a clean answer is kept
        result = pytester.runpytest_subprocess("--agentic-out", "out", "-n", "2")
        assert_stopped_at_start(pytester, result, "key 'params.temprature'")
    assert not (pytester.path / ".pytest_cache" / "v" / "agentic" / "startcheck").exists()
    entry = ModelEntry(name="m", model="openai/x", params={"temperature": 0.0})
    keys = {startcheck.entry_key(e) for e in (entry, ModelEntry(name="other name", model="openai/x",
                                                                 params={"temperature": 0.0}))}
    assert len(keys) == 1, "the entry's name is not part of litellm's answer"
    assert startcheck.entry_key(ModelEntry(name="m", model="openai/y", params={"temperature": 0.0})) not in keys
    assert startcheck.entry_key(ModelEntry(name="m", model="openai/x", params={"top_p": 0.5})) not in keys
