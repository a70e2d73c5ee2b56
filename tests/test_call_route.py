"""litellm's own HTTP handler (``run/calls/route.py``) behaves as the OpenAI SDK's path does, for what the harness sends and keeps.

The route is taken only where this file proves it the same: the JSON of every request body the
harness sends (its real tools and a history with tool calls and results, under the parameters
models.yaml entries set), what a run keeps of a reply (content, reasoning, usage and its details,
cost), and, for every behaviour of the hostile endpoint, the run's verdict, failure mode, tags,
messages, tool calls, tokens, cost, retries, refusal and whether it is infra. The only differences
allowed are in an infra error's wording, where the two clients word the same fault differently
(``WORDING``); the verdict and every count stay equal.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace

import pytest

from pytest_agentic.run.agent import run_agent
from pytest_agentic.run.calls import connections, limiter, llm, route
from pytest_agentic.run.calls.llm import ProtocolFault, unreadable_reply
from pytest_agentic.run.calls.refusals import server_words
from pytest_agentic.run.failures import classify, tags
from pytest_agentic.run.limits import Limits
from pytest_agentic.run.models import ModelEntry
from pytest_agentic.run.records import RunResult
from pytest_agentic.run.tools import Workspace, get_tools

from .hostile_server import BEHAVIOURS, HostileServer, Reply, completion

ENTRY = ModelEntry(name="hostile", model="openai/hostile",
                   price={"input_per_token": 0.000001, "output_per_token": 0.000002})
UNPRICED = ModelEntry(name="unpriced", model="openai/gpt-4o-mini")
LIMITS = Limits(max_retries=2, retry_backoff_s=0.01, retry_backoff_cap_s=0.05, request_timeout_s=8,
                max_retry_wait_s=10, max_turns=4, max_seconds=60)
STUCK = replace(LIMITS, request_timeout_s=0.5)
SLOW = {"drip", "silent"}
TOOLS = ["fs_list", "fs_read", "fs_write", "fs_edit", "run_tests"]
#: Infra errors the two clients word differently for the same fault (behaviour: the SDK's words, the handler's).
WORDING = {
    "reset": ("Connection error.", "Connection reset by peer"),
    "message_null": ("InternalServerError", "APIConnectionError"),
    "content_list": ("InternalServerError", "APIConnectionError"),
    "content_number": ("InternalServerError", "APIConnectionError"),
    "usage_text": ("InternalServerError", "APIConnectionError"),
    "error_200": ("OpenAIException -", "OpenAIException - upstream failed"),  # the SDK drops the server's message
}


@pytest.fixture
def on_route(monkeypatch):
    """Put this process on a route, as a session does (the switch, and a pool the calls go through).

    The pool is this test's: litellm's and ``connections``' globals are put back after it.
    """
    litellm = llm.litellm_module()
    monkeypatch.setattr(litellm, "client_session", None)
    monkeypatch.setattr(connections, "_ours", None)
    connections.size_pool(8)

    def take(name: str) -> None:
        if name == route.HTTP:
            monkeypatch.setenv(route.SWITCH, "true")
        else:
            monkeypatch.delenv(route.SWITCH, raising=False)
        assert route.current() == name

    return take


def run(tmp_path, script, limits=LIMITS, entry=ENTRY, prompt="Say ok.") -> tuple[RunResult, HostileServer]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    if not (tmp_path / "link").exists():
        os.symlink("/etc", tmp_path / "link")
    with HostileServer(script) as server:
        result = run_agent(entry=entry, api_base=server.api_base, prompt=prompt, system="You are careful.",
                           workspace=Workspace(tmp_path), tools=get_tools(TOOLS), limits=limits, metadata={})
        return result, server


def kept(result: RunResult) -> dict:
    """What a campaign keeps of a run, with the ids litellm makes up for a call that had none left out."""
    ids = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

    def scrub(value):
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k != "duration_s"}  # a clock's, not the run's
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return "<uuid>" if isinstance(value, str) and ids.match(value) else value

    return scrub({
        "final_answer": result.final_answer, "stop_reason": result.stop_reason,
        "mode": str(classify(result, result.final_answer == "ok")), "tags": tags(result),
        "messages": result.messages, "tool_calls": [dict(c) for c in result.tool_calls], "turns": result.turns,
        "tokens": (result.prompt_tokens, result.completion_tokens, result.reasoning_tokens,
                   result.cached_prompt_tokens, result.usage_invalid, result.turn_tokens),
        "cost": result.cost_usd, "retries": result.retries, "rate_limited": result.rate_limited,
        "refusal": result.server_refusal, "infra": result.infra_error is not None,
        "dropped": (result.dropped_tool_calls, result.truncated_tool_calls, result.tool_call_as_text),
    })


@pytest.mark.parametrize("behaviour", sorted(set(BEHAVIOURS) - {"content_huge", "args_huge"}))
def test_every_hostile_behaviour_is_judged_the_same_through_both_routes(tmp_path, on_route, behaviour):
    limits = STUCK if behaviour in SLOW else LIMITS
    results = {}
    for name in (route.SDK, route.HTTP):
        on_route(name)
        results[name] = run(tmp_path / name, [behaviour], limits=limits)[0]
    sdk, http = results[route.SDK], results[route.HTTP]
    assert kept(http) == kept(sdk)
    if behaviour in WORDING and sdk.infra_error is not None:  # a fault that persisted: its wording
        theirs, ours = WORDING[behaviour]
        assert theirs in (sdk.infra_error or "") and ours in (http.infra_error or ""), (sdk.infra_error, http.infra_error)
    else:
        assert http.infra_error == sdk.infra_error


@pytest.mark.parametrize("behaviour", ["content_huge", "args_huge"])
def test_huge_replies_are_judged_the_same_through_both_routes(tmp_path, on_route, behaviour):
    results = {}
    for name in (route.SDK, route.HTTP):
        on_route(name)
        results[name] = kept(run(tmp_path / name, [behaviour])[0])
    assert results[route.HTTP] == results[route.SDK]


def conversation(body: dict) -> Reply:
    """A server that asks for a tool call, then answers with reasoning, cached and reasoning tokens."""
    if len(body.get("messages", [])) <= 2:
        return Reply(body=completion({"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "fs_list", "arguments": '{"path": "."}'}},
            {"id": "c2", "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "a.txt"}'}}]},
            finish="tool_calls"))
    return Reply(body=completion({"role": "assistant", "content": "ok", "reasoning_content": "looked \u2028 é"},
                                 usage={"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129,
                                        "prompt_tokens_details": {"cached_tokens": 64},
                                        "completion_tokens_details": {"reasoning_tokens": 5}}))


PARAMS = [{}, {"temperature": 0, "max_tokens": 64, "seed": 7, "top_p": 0.9, "stop": ["XX"]},
          {"reasoning_effort": "low"}, {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}},
          {"tool_choice": "auto", "parallel_tool_calls": False}]


#: gpt-4o-mini takes no ``reasoning_effort``: litellm refuses the call before sending it, on both routes.
CASES = [(e, p) for e in (ENTRY, UNPRICED) for p in PARAMS if not (e is UNPRICED and "reasoning_effort" in p)]


@pytest.mark.parametrize("entry, params", CASES,
                         ids=[f"{e.name}-{','.join(p) or 'none'}" for e, p in CASES])
def test_the_requests_carry_the_same_json_and_the_run_keeps_the_same(tmp_path, on_route, params, entry):
    sent, results = {}, {}
    for name in (route.SDK, route.HTTP):
        on_route(name)
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.txt").write_text("alpha\n")
        result, server = run(tmp_path / name, [conversation, conversation], entry=replace(entry, params=params),
                             prompt="List the files, read a.txt, then say ok.")
        sent[name], results[name] = server.bodies, result
    assert len(sent[route.SDK]) == 2
    assert json.dumps(sent[route.HTTP], sort_keys=True) == json.dumps(sent[route.SDK], sort_keys=True)
    assert sent[route.HTTP][0]["tools"][0]["function"]["parameters"]["additionalProperties"] is False
    assert kept(results[route.HTTP]) == kept(results[route.SDK])
    assert results[route.HTTP].final_answer == "ok" and results[route.HTTP].cached_prompt_tokens == 64
    if entry is UNPRICED:  # litellm's own price map, through both routes
        assert results[route.HTTP].cost_usd is not None and results[route.HTTP].cost_usd > 0


@pytest.mark.parametrize("headers, wait", [({"Retry-After": "2"}, 2.0), ({"retry-after-ms": "1500"}, 1.5),
                                           ({"x-ratelimit-remaining-requests": "0",
                                             "x-ratelimit-reset-requests": "3s"}, 3.0), ({}, None)])
def test_a_rate_limit_refusal_says_the_same_wait_through_both_routes(on_route, headers, wait):
    seen = {}
    for name in (route.SDK, route.HTTP):
        on_route(name)
        script = [lambda body: Reply(status=429, body={"error": {"message": "slow down"}}, headers=headers)]
        with HostileServer(script) as server:
            try:
                llm.litellm_module().completion(model="openai/x", api_base=server.api_base, api_key="k",
                                                messages=[{"role": "user", "content": "hi"}], max_retries=0,
                                                client=route.client_for("openai/x", llm.litellm_module()))
            except Exception as exc:  # noqa: BLE001 - the refusal is what is looked at
                seen[name] = limiter.rate_limit_signal(exc)
    assert seen[route.HTTP] == seen[route.SDK]
    assert seen[route.HTTP][0] is True and seen[route.HTTP][1] == wait


def test_the_switch_goes_through_the_harness_pool(tmp_path, on_route):
    on_route(route.HTTP)
    litellm = llm.litellm_module()
    handler = route.client_for("openai/x", litellm)
    assert handler is not None and handler.client is litellm.client_session
    assert route.client_for("openai/x", litellm) is handler  # one handler per pool
    assert route.client_for("anthropic/claude", litellm) is None  # other providers pick their own
    on_route(route.SDK)
    assert route.client_for("openai/x", litellm) is None


def entry(model: str, **kw) -> ModelEntry:
    return ModelEntry(name=model, model=model, **kw)


@pytest.mark.parametrize("entries, chosen", [
    ([(entry("openai/q"), "http://127.0.0.1:8000/v1")], route.HTTP),
    ([(entry("openai/q", server={"kind": "llama.cpp"}), None)], route.HTTP),
    ([(entry("openai/q"), "https://vllm.internal.example/v1"), (entry("openai/r"), "http://10.0.0.2/v1")], route.HTTP),
    ([(entry("openai/gpt-4o"), None)], route.SDK),  # OpenAI's API
    ([(entry("openai/gpt-4o"), "https://API.openai.com/v1")], route.SDK),
    ([(entry("openai/q"), "http://127.0.0.1:8000/v1"), (entry("openai/gpt-4o"), None)], route.SDK),
    ([(entry("openai/q"), "http://127.0.0.1:8000/v1"), (entry("anthropic/claude-x"), None)], route.SDK),
    ([(entry("hosted_vllm/q"), "http://127.0.0.1:8000/v1")], route.SDK),  # litellm's own route, left alone
    ([], route.SDK),
])
def test_the_route_is_taken_only_where_every_model_is_on_a_server_of_its_own(entries, chosen):
    assert route.choose(entries) == chosen


def test_a_switch_the_user_set_is_left_as_set(monkeypatch):
    monkeypatch.setenv(route.SWITCH, "false")
    assert route.take(route.HTTP) == route.SDK and os.environ[route.SWITCH] == "false"
    route.release()
    assert os.environ[route.SWITCH] == "false"  # not the harness's to take back
    monkeypatch.delenv(route.SWITCH)
    assert route.take(route.SDK) == route.SDK and route.SWITCH not in os.environ
    assert route.take(route.HTTP) == route.HTTP and os.environ[route.SWITCH] == "true"
    route.release()
    assert route.SWITCH not in os.environ and route.current() == route.SDK
    for value, read in ((" True ", route.HTTP), ("1", route.SDK), ("yes", route.SDK), ("false", route.SDK)):
        monkeypatch.setenv(route.SWITCH, value)  # read as litellm reads it: a client of the wrong kind breaks a call
        assert route.current() == read, value


def test_a_session_records_its_route_and_takes_the_switch_back_at_its_end(pytester, monkeypatch):
    """A campaign against a server of its own takes the handler, records it, and leaves the process as it found it."""
    from pytest_agentic import Final

    from .fault_server import FaultServer
    from .test_concurrency import say_ok_project

    monkeypatch.delenv(route.SWITCH, raising=False)
    # In a process of its own (an in-process session would leave litellm's pool and scipy's import behind);
    # the last unconfigure hook says what the environment holds once the plugin's has run.
    pytester.makeconftest(f"""
        import os, pytest

        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(config):
            with open("switch-at-the-end.txt", "w") as f:
                f.write(repr((os.environ.get({route.SWITCH!r}), config.stash.get(SEEN, None))))

        SEEN = pytest.StashKey()

        def pytest_runtestloop(session):
            session.config.stash[SEEN] = os.environ.get({route.SWITCH!r})
    """)
    with FaultServer({"Say ok.": [Final("ok")]}) as server:
        say_ok_project(pytester, server)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--agentic-out=out",
                                               "--runs", "2")
    result.assert_outcomes(passed=2)
    manifest = json.loads(next((pytester.path / "out").glob("*/campaign.json")).read_text())
    assert manifest["call_route"] == route.HTTP
    assert (pytester.path / "switch-at-the-end.txt").read_text() == repr((None, "true"))


def test_the_servers_message_is_read_out_of_a_json_body():
    assert server_words('litellm.InternalServerError: OpenAIException - {"error": {"message": "internal", '
                        '"type": "x"}}') == "litellm.InternalServerError: OpenAIException - internal"
    assert server_words('X: E - {"error": "plain"} (tail)') == "X: E - plain (tail)"
    assert server_words('X: E - {"detail": "not found"}') == "X: E - not found"
    for unchanged in ('X: E - {"error": {"code": 1}}', "X: E - {not json", "X: E - internal", 'X: E - ["a"]'):
        assert server_words(unchanged) == unchanged


def test_an_unreadable_reply_is_a_protocol_fault_and_nothing_else_is():
    litellm = llm.litellm_module()

    def api_error(status):
        return litellm.APIError(status_code=status, message="m", llm_provider="openai", model="x")

    assert unreadable_reply(litellm, api_error(200)) and unreadable_reply(litellm, api_error(520))
    assert not unreadable_reply(litellm, api_error(403)) and not unreadable_reply(litellm, api_error(307))
    assert not unreadable_reply(litellm, litellm.InternalServerError(message="m", llm_provider="openai", model="x"))
    assert issubclass(ProtocolFault, Exception)
