"""A failure the model caused is the model's: refusals its output provoked are never ``infra_error``.

Through the real litellm path and agent loop, against endpoints that refuse as llama.cpp, vLLM,
OpenAI and Groq do (``tests/hostile_server.py``): a context window outgrown ends the run as the
model's (``gave_up_mid_plan`` by precedence, tag ``server_refusal=context_overflow``), a tool call
the server cannot read is the model's malformed call, neither is retried; the history the harness
sends is always readable, while the run keeps what the model sent. The endpoint's own faults
(connection refused, 503 with no body) stay ``infra_error``.
"""

from __future__ import annotations

import json
import socket

import pytest
from markupsafe import escape

from pytest_agentic.run.calls import history, refusals
from pytest_agentic.run.agent import SYSTEM_PROMPT, run_agent
from pytest_agentic.run.failures import classify, tags
from pytest_agentic.run.records import FailureMode
from pytest_agentic.run.task import ToolCall
from pytest_agentic.run.tools import Workspace, get_tools

from .fault_server import FaultServer, prompt_tokens
from .helpers import campaign_dir, runs
from .hostile_server import calls, call, like_llama_cpp
from .test_hostile_endpoints import ENTRY, LIMITS, run, storable
from .test_reliability import FAST_RETRIES, project  # noqa: F401 - the fixture: a project holding the tasks
from .test_tasks_proven import MODULES, load, task_of


def judged(result) -> FailureMode | None:
    return classify(result, passed=False)


@pytest.mark.parametrize(("behaviour", "window", "requested"), [
    ("context_llama", 8192, 9000), ("context_vllm", 8192, 9016), ("context_openai", None, None)])
def test_an_outgrown_context_window_is_the_models_and_not_retried(tmp_path, behaviour, window, requested):
    result, server, _ = run(tmp_path, ["args_not_json", behaviour])
    assert server.calls == 2 and result.retries == 0
    assert result.stop_reason == "server_refusal" and result.infra_error is None
    assert judged(result) is FailureMode.TOOL_CALL_HALLUCINATED  # the earlier malformed call comes first
    run_tags = tags(result)
    assert run_tags[refusals.TAG] == "context_overflow"
    assert run_tags.get("context_window") == window and run_tags.get("requested_tokens") == requested
    assert "context" in run_tags[refusals.MESSAGE_TAG] and "Exception" not in run_tags[refusals.MESSAGE_TAG]
    storable(result)


def test_a_context_overflow_after_good_calls_gave_up_mid_plan(tmp_path):
    good = calls(call("fs_list", "{}"))
    result, server, _ = run(tmp_path, [lambda body: good, "context_vllm"])
    assert server.calls == 2
    assert judged(result) is FailureMode.GAVE_UP_MID_PLAN
    assert tags(result)[refusals.TAG] == "context_overflow"


@pytest.mark.parametrize("behaviour", ["arguments_llama", "tool_use_failed"])
def test_a_tool_call_the_server_cannot_read_is_the_models_malformed_call(tmp_path, behaviour):
    result, server, _ = run(tmp_path, [], then=behaviour)
    assert server.calls == 1 and result.retries == 0
    assert result.tool_calls == [] and result.infra_error is None
    assert judged(result) is FailureMode.TOOL_CALL_HALLUCINATED
    assert tags(result)[refusals.TAG] == "malformed_tool_call"


def test_a_refusal_after_a_transient_fault_keeps_the_retry(tmp_path):
    result, server, _ = run(tmp_path, ["500", "context_llama"])
    assert server.calls == 2 and result.retries == 1
    assert tags(result)["retries"] == 1 and tags(result)[refusals.TAG] == "context_overflow"


def test_a_503_without_a_body_is_still_infra_error(tmp_path):
    result, server, _ = run(tmp_path, [], then="503_empty")
    assert judged(result) is FailureMode.INFRA_ERROR
    assert server.calls == LIMITS.max_retries + 1 and result.server_refusal is None
    assert refusals.TAG not in tags(result)


def test_a_refused_connection_is_still_infra_error(tmp_path):
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_agent(entry=ENTRY, api_base=f"http://127.0.0.1:{port}/v1", prompt="Say ok.", system="",
                       workspace=Workspace(tmp_path), tools=get_tools(["fs_list"]), limits=LIMITS, metadata={})
    assert judged(result) is FailureMode.INFRA_ERROR and result.server_refusal is None
    assert "Connection" in result.infra_error


#: Tool calls a server could refuse to read back, and what the run must keep of each.
UNREADABLE = ["args_not_json", "args_empty", "args_array", "args_number", "args_null", "name_ansi", "name_empty",
              "missing_id", "id_odd"]


@pytest.mark.parametrize("behaviour", UNREADABLE)
def test_the_history_sent_back_is_readable_and_the_run_keeps_what_the_model_sent(tmp_path, behaviour):
    """The endpoint answers as llama.cpp does: a history holding unparsable arguments gets a 500."""
    result, server, _ = run(tmp_path, [behaviour, like_llama_cpp("ok")])
    assert result.final_answer == "ok" and server.calls == 2, result.infra_error
    kept = result.messages[2]["tool_calls"][0]
    sent = [m for m in server.bodies[1]["messages"] if m["role"] == "assistant"][0]["tool_calls"][0]
    answer = [m for m in server.bodies[1]["messages"] if m["role"] == "tool"][0]
    model_sent = _first_call(behaviour)
    assert kept["function"]["arguments"] == (model_sent["function"]["arguments"] or "")
    assert json.loads(sent["function"]["arguments"]).__class__ is dict
    assert history.NAME.fullmatch(sent["function"]["name"]) and history.CALL_ID.fullmatch(sent["id"])
    assert answer["tool_call_id"] == sent["id"]
    if result.tool_calls[0]["hallucinated"]:
        assert answer["content"].startswith("ERROR: ") and result.tool_calls[0]["raw_arguments"] == kept["function"]["arguments"]
    storable(result)


def _first_call(behaviour: str) -> dict:
    from .hostile_server import BEHAVIOURS

    body = BEHAVIOURS[behaviour]().body
    first = body["choices"][0]["message"]["tool_calls"][0]
    return {**first, "function": {**first["function"], "arguments": first["function"]["arguments"]
                                  if isinstance(first["function"]["arguments"], str) else ""}}


def test_a_well_formed_history_is_sent_as_it_is():
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "functions.fs_read:0", "type": "function",
                     "function": {"name": "fs_read", "arguments": '{"path": "a"}'}}]},
                {"role": "tool", "tool_call_id": "functions.fs_read:0", "content": "x"}]
    sent = history.sendable(messages)
    assert all(a is b for a, b in zip(sent, messages))


@pytest.mark.parametrize(("raw", "sent"), [
    ('{"path": "a"}', '{"path": "a"}'), ('{"path": "no', "{}"), ("", "{}"), ("[1]", "{}"), ("7", "{}"),
    ('{"x": NaN}', "{}"), (None, "{}"), ("[" * 100_000, "{}")])
def test_readable_arguments(raw, sent):
    assert history.readable_arguments(raw) == sent


@pytest.mark.parametrize(("status", "text", "cause"), [
    (400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", "context_overflow"),
    (400, "The decoder prompt (length 9000) is longer than the maximum model length of 8192.", "context_overflow"),
    (500, "Failed to parse tool call arguments as JSON: parse error", "malformed_tool_call"),
    (400, "Invalid 'messages[2].tool_calls[0].function.name': string does not match pattern.", "malformed_tool_call"),
    (429, "Request too large: maximum context length is 8192", None),  # a rate limit is never the model's
    (503, "Failed to parse tool call arguments as JSON", None),
    (None, "maximum context length is 10 tokens", None),  # no HTTP answer: the connection's fault
    (500, "internal server error", None),
    (400, "invalid api key", None),
    (400, "\x1b[2Jmaximum context length is 5 tokens\u202e\nsecond line", "context_overflow"),
])
def test_a_refusal_is_classified_by_its_cause(status, text, cause):
    error = Exception(text)
    error.status_code = status  # type: ignore[attr-defined]
    refusal = refusals.of(error)
    assert (refusal.cause.value if refusal else None) == cause
    if refusal and "decoder prompt" in text:
        assert (refusal.context_window, refusal.requested_tokens) == (8192, 9000)
    if refusal:  # the server's first line, without a control character
        assert refusal.message.isprintable() and "second line" not in refusal.message


def test_the_note_counts_failed_runs_by_cause():
    runs = [{"passed": False, "tags": {refusals.TAG: "context_overflow"}},
            {"passed": False, "tags": {refusals.TAG: "context_overflow"}},
            {"passed": False, "tags": {refusals.TAG: "malformed_tool_call"}},
            {"passed": False, "tags": {refusals.TAG: "<script>"}},
            {"passed": False, "tags": {}}, {"passed": True, "tags": {}}]
    note = refusals.note("m", runs)
    assert note is not None and note.startswith("model 'm': 3 of 5 failed runs were judged from the server's refusal")
    assert "(2 context_overflow, 1 malformed_tool_call)" in note and "<script>" not in note
    assert refusals.note("m", runs[4:]) is None


# ---------------------------------------------------------------- whole campaigns, every task


def _cut(step) -> ToolCall:
    """The first call of a reference step, its arguments cut halfway (as a token limit cuts them)."""
    first = step if isinstance(step, ToolCall) else list(step)[0]
    text = first.arguments_json()
    return ToolCall(first.name, raw_arguments=text[: len(text) // 2])


def _filler(tools, turn: int) -> ToolCall:
    """A new call each turn (never redundant) that grows the conversation."""
    if "fs_read" in tools:
        return ToolCall("fs_read", {"path": f"notes-{turn}.txt"})
    return ToolCall("fs_write", {"path": f"notes-{turn}.txt", "content": "x" * 200})


def _campaign(project, server, *args):
    entry = {"model": "openai/small", "api_base": server.api_base, "limits": {**FAST_RETRIES, "max_turns": 80},
             "price": {"input_per_token": 0, "output_per_token": 0}}
    (project.path / "models.yaml").write_text(json.dumps({"default": "local", "models": {"local": entry}}))
    result = project.runpytest_subprocess("tasks", "--runs", "1", "--agentic-out", "out", *args)
    folder = campaign_dir(project.path / "out")
    records = runs(folder)
    assert {r["task"] for r in records} == {f"task_{n:02d}" for n in range(1, 11)}
    return result, folder, records


MODES = {"plain": ("-p", "no:xdist"), "xdist": ("-n", "2"), "concurrency": ("-p", "no:xdist", "--agentic-concurrency", "4")}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_truncated_first_call_on_a_llama_cpp_endpoint_is_never_infra_error(project, mode):
    """The first call is cut by the token limit; the endpoint refuses unparsable history as llama.cpp does."""
    instances = [task_of(load(m)).build(0) for m in MODULES]
    solutions = {i.prompt: [_cut(i.reference[0]), *i.reference] for i in instances}
    with FaultServer(solutions, like="llama.cpp") as server:
        result, folder, records = _campaign(project, server, *MODES[mode])
    assert server.refused == {}, "the harness sent back arguments the server cannot parse"
    assert all(r["failure_mode"] in (None, "tool_call_hallucinated") for r in records), records
    assert all(r["tags"]["truncated_tool_calls"] == 1 and r["tags"]["hallucinated_calls"] == 1 for r in records)
    for record, instance in zip(sorted(records, key=lambda r: r["task"]), instances):
        transcript = json.loads((folder / record["transcript"]).read_text())
        cut = solutions[instance.prompt][0].raw_arguments
        assert transcript["messages"][2]["tool_calls"][0]["function"]["arguments"] == cut
        assert transcript["tool_calls"][0]["raw_arguments"] == cut
        assert "not valid JSON" in transcript["tool_calls"][0]["result"]


@pytest.mark.parametrize(("mode", "like"), [("plain", "vllm"), ("xdist", "openai"), ("concurrency", "llama.cpp")])
def test_a_run_that_outgrows_the_context_window_is_the_models_on_every_task(project, mode, like):
    instances = [task_of(load(m)).build(0) for m in MODULES]
    window = max(prompt_tokens([{"role": "system", "content": SYSTEM_PROMPT + ("\n\n" + i.system if i.system else "")},
                                {"role": "user", "content": i.prompt}]) for i in instances) + 600
    solutions = {i.prompt: [_filler(i.tools, n) for n in range(80)] for i in instances}
    with FaultServer(solutions, like=like, context_window=window) as server:
        result, folder, records = _campaign(project, server, *MODES[mode])
    assert server.refused == {"context": 10}, "each run ends at its first refusal: no retry"
    assert [r["failure_mode"] for r in records] == ["gave_up_mid_plan"] * 10
    for r in records:
        assert r["stop_reason"] == "server_refusal" and r["infra_cause"] is None and r["tags"]["retries"] == 0
        assert r["tags"][refusals.TAG] == "context_overflow"
        if like != "openai":
            assert r["tags"]["context_window"] == window and r["tags"]["requested_tokens"] > window
    summary = (folder / "summary.md").read_text()
    note = "10 of 10 failed runs were judged from the server's refusal of what the model wrote (10 context_overflow)"
    assert note in summary
    assert note in json.loads((folder / "campaign.json").read_text())["notes"][-1]
    assert str(escape(note)) in (folder / "report.html").read_text()  # as Jinja escapes it
    result.stdout.fnmatch_lines([f"*{note}*"])


# ---------------------------------------------------------------- the real embedded llama.cpp server


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """The embedded llama.cpp server with a small window (1024 tokens), as a campaign starts it."""
    from pytest_agentic.servers import gguf, lifecycle

    try:
        gguf.ensure_builtin("smollm2-135m-q4_1")
    except gguf.GGUFError as exc:
        pytest.skip(f"built-in SmolLM2 model file unavailable: {exc}")
    srv = lifecycle.start("smollm2-135m", {"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "ctx_size": 1024,
                                           "health_timeout_s": 60}, tmp_path_factory.mktemp("llama") / "s.log")
    yield srv
    srv.stop()


FS_READ = get_tools(["fs_read"])[0].schema()
#: A run whose first tool call was cut by the token limit: its arguments end mid-string.
CUT_HISTORY = [{"role": "system", "content": "You are a software agent."},
               {"role": "user", "content": "Read notes.txt and tell me what it says."},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1_1", "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "no'}}]},
               {"role": "tool", "tool_call_id": "call_1_1", "content": "ERROR: arguments are not valid JSON"}]


def _call(llama, messages):
    from pytest_agentic.run.limits import Limits
    from pytest_agentic.run.calls.llm import call_model
    from pytest_agentic.run.models import ModelEntry

    entry = ModelEntry(name="smollm2-135m", model="openai/smollm2-135m", params={"max_tokens": 8, "temperature": 0.0})
    return call_model(entry, api_base=llama.api_base, messages=messages, tools=[FS_READ], metadata={},
                      limits=Limits(max_retries=2, retry_backoff_s=0.01, request_timeout_s=120), retry_budget=[10.0])


def test_real_llama_cpp_refuses_a_cut_tool_call_in_history_and_reads_the_sanitised_one(llama):
    import litellm

    # What the server does with the history as the model left it: HTTP 500, whatever the retry.
    with pytest.raises(litellm.InternalServerError, match="Failed to parse tool call arguments as JSON") as raw:
        litellm.completion(model="openai/smollm2-135m", api_base=llama.api_base, api_key="none", max_retries=0,
                           messages=CUT_HISTORY, tools=[FS_READ], max_tokens=8)
    assert raw.value.status_code == 500
    refusal = refusals.of(raw.value)
    assert refusal is not None and refusal.cause is refusals.Cause.MALFORMED_TOOL_CALL
    # The harness's call: the refusal is the model's, raised at once (no retry).
    with pytest.raises(refusals.ModelRefusal) as judged_refusal:
        _call(llama, CUT_HISTORY)
    assert judged_refusal.value.cause is refusals.Cause.MALFORMED_TOOL_CALL and judged_refusal.value.retries == 0
    # The history the harness sends is read.
    sent = history.sendable(CUT_HISTORY)
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == "{}"
    outcome = _call(llama, sent)
    assert outcome.retries == 0 and outcome.prompt_tokens > 50


def test_real_llama_cpp_context_overflow_is_the_models_with_its_token_counts(llama):
    long = [{"role": "user", "content": "word " * 3000}]
    with pytest.raises(refusals.ModelRefusal) as refusal:
        _call(llama, long)
    assert refusal.value.cause is refusals.Cause.CONTEXT_OVERFLOW and refusal.value.retries == 0
    assert refusal.value.context_window == 1024 and refusal.value.requested_tokens > 1024
    assert "exceeds the available context size" in refusal.value.message
